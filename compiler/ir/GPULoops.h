#ifndef PTXJIT_IR_GPULOOPS_H
#define PTXJIT_IR_GPULOOPS_H

// Which thread index (threadIdx.x, .y, .z) each gpu_threads loop of a kernel takes: the
// innermost loop of a nest takes x, the one around it y, and so on; a loop around nests of
// different depths takes the dimension after the deepest of them.

#include "IR.h"

#include <map>

namespace ptxjit::ir {

/// Each gpu_threads loop of `s` to its dimension (0 for x). Dimensions past 2 are returned as
/// they are; the kernel's closure rejects them.
std::map<const For *, int> gpu_thread_dimensions(const Stmt &s);

} // namespace ptxjit::ir

#endif
