#include "Libdevice.h"

// Defined by Libdevice.S, which includes the toolkit's file with .incbin.
extern "C" const char ptxjit_libdevice_start[];
extern "C" const char ptxjit_libdevice_end[];

namespace ptxjit::codegen {

std::string_view libdevice_bitcode() {
  return std::string_view(ptxjit_libdevice_start, static_cast<size_t>(ptxjit_libdevice_end - ptxjit_libdevice_start));
}

} // namespace ptxjit::codegen
