#ifndef PTXJIT_VAR_H
#define PTXJIT_VAR_H

// A pure dimension variable, used to define Funcs and name loops in schedules.

#include "ptxjit/Expr.h"

#include <string>

#pragma GCC visibility push(default)
namespace ptxjit {

class Var {
public:
  /// A variable with a fresh unique name.
  Var();
  explicit Var(const std::string &name);
  const std::string &name() const { return Name; }
  operator Expr() const;

  /// The loop outside all of a stage's loops, of one iteration: `g.compute_at(f, Var::outermost())`
  /// computes g once for each time f is computed, around all of f's loops.
  static Var outermost();

private:
  std::string Name;
};

/// Halide's implicit-argument placeholder: in a call, `_` stands for Vars filling the callee's
/// remaining dimensions; on the left of a definition, for those the value uses
/// (`g(_) = f(_) * 2` works for an f of any dimensions; `h(x, _) = in(_, x)`).
extern const Var _;
/// The implicit Vars `_` stands for, in order; they name the loops of an ImageParam's wrapper
/// (`in.in(f).compute_at(f, x).vectorize(_0)`).
extern const Var _0, _1, _2, _3, _4, _5, _6, _7, _8, _9;

} // namespace ptxjit

#pragma GCC visibility pop

#endif
