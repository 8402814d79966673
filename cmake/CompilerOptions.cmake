# Warnings and sanitizers for ptxjit's own targets, applied through one interface library.

add_library(ptxjit_options INTERFACE)
# -Wno-restrict: GCC 12 reports false positives inside std::string concatenation at -O2 (GCC PR105329).
target_compile_options(ptxjit_options INTERFACE -Wall -Wextra -Wno-unused-parameter
                                                $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
if(PTXJIT_ASSERTIONS)
  target_compile_definitions(ptxjit_options INTERFACE PTXJIT_ASSERTIONS=1)
  target_compile_options(ptxjit_options INTERFACE -UNDEBUG)
endif()
if(PTXJIT_SANITIZE)
  set(PTXJIT_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                             -fno-omit-frame-pointer)
  target_compile_options(ptxjit_options INTERFACE ${PTXJIT_SANITIZER_FLAGS})
  target_link_options(ptxjit_options INTERFACE ${PTXJIT_SANITIZER_FLAGS})
endif()
if(PTXJIT_THREAD_SANITIZER)
  target_compile_options(ptxjit_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(ptxjit_options INTERFACE -fsanitize=thread)
endif()

# LLVM is linked statically; --as-needed drops the shared libraries it names but never uses
# (libz3), so binaries run where LLVM is not installed.
target_link_options(ptxjit_options INTERFACE -Wl,--as-needed)
