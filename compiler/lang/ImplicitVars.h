#ifndef PTXJIT_LANG_IMPLICITVARS_H
#define PTXJIT_LANG_IMPLICITVARS_H

// Halide's implicit arguments: the placeholder `_` in a call stands for the Vars _0, _1, ... that
// fill the callee's remaining dimensions, and on the left of a definition for those the value
// uses (g(_) = f(_) + 1 defines a g of as many dimensions as f).

#include "ir/IR.h"

#include <string>
#include <vector>

namespace ptxjit {

/// The arguments of a call to `callee` of `dimensions` dimensions with its `_` (at most one)
/// replaced by the implicit Vars that fill the rest; unchanged without one.
std::vector<Expr> expand_implicit_call_args(std::vector<Expr> args, int dimensions, const std::string &callee);

/// The left-hand side of a definition of `func` with its `_` replaced: for a pure definition
/// (`dimensions` < 0) by the implicit Vars `values` use, for an update by those that fill the
/// Func's `dimensions`.
std::vector<Expr> expand_implicit_lhs(std::vector<Expr> args, const std::vector<Expr> &values, int dimensions,
                                      const std::string &func);

} // namespace ptxjit

#endif
