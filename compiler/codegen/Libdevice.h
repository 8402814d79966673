#ifndef PTXJIT_CODEGEN_LIBDEVICE_H
#define PTXJIT_CODEGEN_LIBDEVICE_H

// The CUDA toolkit's libdevice.10.bc, embedded in the library at build time.

#include <string_view>

namespace ptxjit::codegen {

std::string_view libdevice_bitcode();

} // namespace ptxjit::codegen

#endif
