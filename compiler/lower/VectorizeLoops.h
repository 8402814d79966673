#ifndef PTXJIT_LOWER_VECTORIZELOOPS_H
#define PTXJIT_LOWER_VECTORIZELOOPS_H

// Replaces each vectorized loop by vector code: its variable becomes a ramp and every value
// that depends on it is widened. Bounds guards that depend on the variable are hoisted: the
// vector code runs when every lane passes them, a scalar loop otherwise (the tail). Loops whose
// bodies cannot be widened (storage inside, conditions per lane) stay scalar.

#include "ir/IR.h"

namespace ptxjit::lower {

ir::Stmt vectorize_loops(const ir::Stmt &s);

} // namespace ptxjit::lower

#endif
