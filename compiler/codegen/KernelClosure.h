#ifndef PTXJIT_CODEGEN_KERNELCLOSURE_H
#define PTXJIT_CODEGEN_KERNELCLOSURE_H

// What a GPU kernel needs from the host: the scalars and buffers its loop nest uses but does not
// define, and its launch shape (grid and block loops, innermost first).

#include "ir/IR.h"

#include <string>
#include <vector>

namespace ptxjit::codegen {

struct KernelArgument {
  std::string name;
  bool is_buffer = false;
  Type type; ///< a scalar's type, or a buffer's element type
  bool read = false, written = false;
};

struct KernelClosure {
  std::vector<KernelArgument> arguments; ///< buffers first, then scalars, each sorted by name
  std::vector<const ir::For *> block_loops;  ///< innermost first: blockIdx.x, .y, .z
  std::vector<const ir::For *> thread_loops; ///< innermost first: threadIdx.x, .y, .z
};

/// Analyses the loop nest of one kernel (`nest` is its outermost GPUBlock loop). Throws
/// CompileError for shapes a kernel cannot have (more than three grid or block dimensions,
/// thread loops outside block loops, storage inside the kernel).
KernelClosure kernel_closure(const ir::For *nest);

} // namespace ptxjit::codegen

#endif
