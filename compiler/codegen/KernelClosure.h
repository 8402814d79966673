#ifndef PTXJIT_CODEGEN_KERNELCLOSURE_H
#define PTXJIT_CODEGEN_KERNELCLOSURE_H

// What a GPU kernel needs from the host: the scalars and buffers its loop nest uses but does not
// define, its launch shape (grid loops; block size), and its shared memory. Funcs stored at a
// gpu_blocks loop live in one block of shared memory whose size, like the block size, is a
// constant bound found by bounds inference. Funcs stored inside gpu_threads loops are arrays of
// each thread's own (registers, or local memory where indexing needs it).

#include "ir/IR.h"

#include <map>
#include <string>
#include <vector>

namespace ptxjit::codegen {

struct KernelArgument {
  std::string name;
  bool is_buffer = false;
  Type type; ///< a scalar's type, or a buffer's element type
  bool read = false, written = false;
};

struct SharedAllocation {
  std::string name;
  int64_t offset = 0, bytes = 0;
};

struct KernelClosure {
  std::vector<KernelArgument> arguments; ///< buffers first, then scalars, each sorted by name
  std::vector<const ir::For *> block_loops; ///< innermost first: blockIdx.x, .y, .z
  /// Each gpu_threads loop's dimension: 0 (threadIdx.x) for the innermost of its nest.
  std::map<const ir::For *, int> thread_dims;
  int64_t block_size[3] = {1, 1, 1};
  std::vector<SharedAllocation> shared;
  int64_t shared_bytes = 0;
  /// Funcs stored inside gpu_threads loops: each thread's own array, by element count.
  std::map<std::string, int64_t> registers;
};

/// Analyses the loop nest of one kernel (`nest` is its outermost GPUBlock loop). Throws
/// CompileError for shapes a kernel cannot have (more than three grid or block dimensions,
/// storage or block sizes without a constant bound).
KernelClosure kernel_closure(const ir::For *nest);

} // namespace ptxjit::codegen

#endif
