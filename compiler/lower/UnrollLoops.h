#ifndef PTXJIT_LOWER_UNROLLLOOPS_H
#define PTXJIT_LOWER_UNROLLLOOPS_H

// Replaces each unrolled loop by one copy of its body per iteration. A vectorized or unrolled
// loop whose extent is not constant but bounded by a constant (a tile clipped at the image's
// edge) takes the bound: an unrolled one guards each copy; a vectorized one runs as a vector of
// that many lanes where the extent reaches the bound and serially elsewhere.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt unroll_loops(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
