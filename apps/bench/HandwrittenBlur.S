/* Embeds the hand-written CUDA blur's PTX (nvcc at build time); PTXJIT_HANDWRITTEN_BLUR_PTX is its path. */
    .section .rodata
    .balign 16
    .global ptxjit_handwritten_blur_ptx
ptxjit_handwritten_blur_ptx:
    .incbin PTXJIT_HANDWRITTEN_BLUR_PTX
    .byte 0
    .section .note.GNU-stack,"",@progbits
