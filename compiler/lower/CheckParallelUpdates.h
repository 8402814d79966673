#ifndef PTXJIT_LOWER_CHECKPARALLELUPDATES_H
#define PTXJIT_LOWER_CHECKPARALLELUPDATES_H

// Refuses updates whose RVar loops run in parallel (parallel, vectorized or GPU loops) when
// their iterations may write the same point: a histogram's `hist(in(r)) += 1` over a parallel
// r is a race. Such an update needs atomic(); one that writes at a one-to-one function of each
// such RVar (`f(r.x, r.y) = ...` over a parallel r.y) is disjoint and allowed.

#include "RealizationOrder.h"

namespace ptxjit::lower {

void check_parallel_updates(const Environment &env);

} // namespace ptxjit::lower

#endif
