/* Embeds libdevice; PTXJIT_LIBDEVICE_PATH is the toolkit's libdevice.10.bc (set by CMake). */
    .section .rodata
    .balign 16
    .global ptxjit_libdevice_start
    .global ptxjit_libdevice_end
ptxjit_libdevice_start:
    .incbin PTXJIT_LIBDEVICE_PATH
ptxjit_libdevice_end:
    .byte 0
    .section .note.GNU-stack,"",@progbits
