#ifndef PTXJIT_CODEGEN_KERNELCLOSURE_H
#define PTXJIT_CODEGEN_KERNELCLOSURE_H

// What a GPU kernel needs from the host: the scalars and buffers its loop nest uses but does not
// define, its launch shape (grid loops; block size), and its shared memory. The block size is a
// constant bound found by bounds inference. Funcs stored at a gpu_blocks loop live in one block
// of dynamic shared memory: each gets a bound on its size over all blocks, a constant where one
// exists, else an expression of values known at launch (a tile whose size follows a run-time
// extent). Funcs stored inside gpu_threads loops, or in registers at a gpu_blocks loop (each
// thread's slice), are arrays of each thread's own (registers, or local memory where indexing
// needs it).

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

/// A Func's part of the kernel's dynamic shared memory. Offsets and sizes are 64-bit integer
/// expressions of the kernel's scalar arguments: constants for the allocations of constant size,
/// which come first, and the 16-byte aligned running sum of those of run-time size after them.
struct SharedAllocation {
  std::string name;
  ir::Expr offset, bytes;
};

struct KernelClosure {
  std::vector<KernelArgument> arguments; ///< buffers first, then scalars, each sorted by name
  std::vector<const ir::For *> block_loops; ///< innermost first: blockIdx.x, .y, .z
  /// Each gpu_threads loop's dimension: 0 (threadIdx.x) for the innermost of its nest.
  std::map<const ir::For *, int> thread_dims;
  int64_t block_size[3] = {1, 1, 1};
  std::vector<SharedAllocation> shared;
  ir::Expr shared_bytes; ///< the whole block's, as SharedAllocation::bytes; 0 without shared memory
  /// Funcs stored inside gpu_threads loops or in registers: each thread's own array, by element count.
  std::map<std::string, int64_t> registers;
};

/// Analyses the loop nest of one kernel (`nest` is its outermost GPUBlock loop). Throws
/// CompileError for shapes a kernel cannot have (more than three grid or block dimensions, block
/// sizes or thread-local storage without a constant bound, shared storage bounded by nothing
/// known at launch).
KernelClosure kernel_closure(const ir::For *nest);

} // namespace ptxjit::codegen

#endif
