#ifndef PTXJIT_LOWER_GPUBLOCKHEAPSLICES_H
#define PTXJIT_LOWER_GPUBLOCKHEAPSLICES_H

// A Func stored on the heap at a gpu_blocks loop (compute_at a block loop, store_in(Heap)) is a
// tile each block shares among its threads, as shared memory would be, but in device memory:
// for tiles past what shared memory holds. Its storage moves out of the kernel, one slice for
// each block, taken from the device pool before the launch (a dimension of the block's linear
// index added); inside the kernel each block addresses its own slice. The slice has a bound of
// the tile's extent over the blocks in each dimension (a constant, or what the host computes
// before the launch); the Func must be stored inside all of the kernel's block loops. Otherwise a CompileError names the Func and what is missing.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt gpu_block_heap_slices(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
