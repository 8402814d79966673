#ifndef PTXJIT_LOWER_GPUSINGLETHREADSECTIONS_H
#define PTXJIT_LOWER_GPUSINGLETHREADSECTIONS_H

// Inside a kernel, code outside every gpu_threads loop runs in each thread of the block. Code
// there that stores (a Func computed at a gpu_blocks loop without thread loops of its own, the
// serial loops of a kernel with gpu_blocks only) must run once: each such statement becomes a
// section of one thread, gpu_threads loops of one iteration in each dimension. The barriers
// after shared producers then hand its results to the other threads.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt gpu_single_thread_sections(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
