#ifndef PTXJIT_IR_SIMPLIFY_H
#define PTXJIT_IR_SIMPLIFY_H

// Constant folding, linear normalization of integer sums, min/max/select and boolean rules, and
// let handling (lets bound to constants or variables are substituted; unused lets are dropped).

#include "IR.h"
#include "Interval.h"

#include <optional>

namespace ptxjit::ir {

Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s);

/// simplify(), also rewriting k * min(p, q) + r as min(k * p + r, k * q + r) (max for k < 0)
/// where that cancels terms: for expressions whose bounds are then taken, since intervals count
/// a variable on both sides of such a sum twice.
Expr simplify_for_bounds(const Expr &e);

/// True when `e` simplifies to the constant true.
bool can_prove(const Expr &e);

/// A constant no smaller than any value of integer `e` with the variables of `scope` over their
/// intervals (others unknown), e.g. 34 for min(x + 33, end) - x + 1; none when there is no such
/// bound to be found.
std::optional<int64_t> constant_upper_bound(const Expr &e, const Scope &scope = {});

/// A constant no smaller than integer `e`, read off its form alone: a constant, the smaller
/// known side of a min, both sides of a max or a sum, a difference less a constant; a difference
/// of mins, maxes or quotients by one constant taken apart, a few levels deep.
std::optional<int64_t> structural_upper_bound(const Expr &e);

/// `e` (an int32 or int64) with its differences of mins and maxes taken apart, `depth` levels
/// deep: max(p, q) - b as max(p - b, q - b), a - min(r, s) as max(a - r, a - s), each part
/// simplified for bounds. Equal to `e`, its bounds can be tighter where terms of the parts
/// cancel: max(min(t + 63, end), ...) - min(t, ...) over a range of t is at most 63 and more.
Expr split_differences(const Expr &e, int depth);

} // namespace ptxjit::ir

#endif
