#ifndef PTXJIT_LOWER_CHECKUPDATELOOPS_H
#define PTXJIT_LOWER_CHECKUPDATELOOPS_H

// Refuses schedules that change what an update computes, as Halide does:
// - RVar loops run in parallel (parallel, vectorized or GPU loops) whose iterations may touch the
//   same point: a histogram's `hist(in(r)) += 1` over a parallel r, or a scan
//   `f(r) = f(r - 1) + 1`, is a race. Allowed are atomic() updates, and updates in which each
//   such RVar selects its own slice of the Func: some argument is the RVar plus or minus
//   something free of RVars, and every read of the Func has that same argument
//   (`f(r.x, r.y) = f(r.x - 1, r.y) + 1` over a parallel r.y).
// - reorder() of RVar loops, which changes the order of the iterations. Allowed where the order
//   cannot matter: f(...) = f(...) op e with op one of + - * min max and e not reading f, a value
//   that reads neither f nor the RVars, or iterations of the reordered loops touching distinct
//   slices as above.

#include "RealizationOrder.h"

namespace ptxjit::lower {

void check_update_loops(const Environment &env);

} // namespace ptxjit::lower

#endif
