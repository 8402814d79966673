#ifndef PTXJIT_LOWER_UNROLLLOOPS_H
#define PTXJIT_LOWER_UNROLLLOOPS_H

// Replaces each unrolled loop (constant extent) by one copy of its body per iteration.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt unroll_loops(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
