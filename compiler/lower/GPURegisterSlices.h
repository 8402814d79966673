#ifndef PTXJIT_LOWER_GPUREGISTERSLICES_H
#define PTXJIT_LOWER_GPUREGISTERSLICES_H

// A Func stored in registers at a gpu_blocks loop (compute_at a block loop, store_in(Register))
// is one tile for the whole block, but registers belong to a thread: each thread keeps the slice
// of the tile it computes and reads, across the thread loops of the block (an accumulator held
// while shared tiles are staged between barriers). The slice of an access is the box its
// arguments cover with the thread's index fixed and every other loop of the block ranging.
// All accesses must cover the same box up to constant offsets (a thread reads only what it
// wrote), of a constant size: the Func is then realized per thread over that box, its accesses
// shifted to the box's origin. Otherwise a CompileError names the Func and the access.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt gpu_register_slices(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
