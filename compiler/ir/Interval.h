#ifndef PTXJIT_IR_INTERVAL_H
#define PTXJIT_IR_INTERVAL_H

// Interval arithmetic over expressions: the range of values an expression takes when its free
// variables range over given intervals. Bounds are inclusive; an undefined bound is unbounded.

#include "IR.h"

#include <map>
#include <string>

namespace ptxjit::ir {

struct Interval {
  Expr min, max;
  bool is_bounded() const { return min.defined() && max.defined(); }
  static Interval single_point(const Expr &e) { return {e, e}; }
  static Interval everything() { return {}; }
};

/// The union of two intervals (undefined when either side is unbounded).
Interval interval_union(const Interval &a, const Interval &b);

using Scope = std::map<std::string, Interval>;

/// What the values returned by calls to Funcs lie in (lower/FuncValueBounds.h knows them).
class CallBounds {
public:
  virtual ~CallBounds() = default;
  /// The interval of the values `call` (a Call to a Func) returns; everything() when unknown.
  virtual Interval of(const Call *call) = 0;
};

/// Bounds of `e` with each variable named in `scope` ranging over its interval; other variables
/// are treated as fixed values. Calls to Funcs are bounded by `calls` where given, else by their
/// type.
Interval bounds_of_expr_in_scope(const Expr &e, const Scope &scope, CallBounds *calls = nullptr);

} // namespace ptxjit::ir

#endif
