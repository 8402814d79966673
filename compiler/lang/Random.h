#ifndef PTXJIT_LANG_RANDOM_H
#define PTXJIT_LANG_RANDOM_H

#include "ptxjit/Expr.h"

#include <vector>

namespace ptxjit {

/// A tag for the next definition, distinct within the process: two definitions that use the
/// same random_float() Expr get different numbers from it, as in Halide.
int next_random_definition_tag();

/// Replaces each random_float(), random_int() and random_uint() call in `e` with its value: a
/// hash of the call's id and seed, `tag` and the definition's free variables (its pure Vars and
/// RVars, Int(32)). The value is then a pure function of the point the definition computes, so
/// that inlining, vectorizing, splitting and GPU schedules give every point the same number.
Expr lower_random(const Expr &e, const std::vector<Expr> &freeVariables, int tag);

} // namespace ptxjit

#endif
