#ifndef PTXJIT_INLINEREDUCTIONS_H
#define PTXJIT_INLINEREDUCTIONS_H

// Reductions written inside an expression, as in Halide: `sum(in(x, r))` is a call to an
// anonymous Func of the expression's free Vars (here x), defined as 0 and updated over the RDom
// the expression uses (here r). The result has the expression's type: cast first to reduce
// narrow values into a wider sum. `name` names the Func (a fresh name when empty).

#include "ptxjit/Expr.h"
#include "ptxjit/Tuple.h"

#include <string>

#pragma GCC visibility push(default)
namespace ptxjit {

Expr sum(Expr e, const std::string &name = "");
Expr product(Expr e, const std::string &name = "");
Expr minimum(Expr e, const std::string &name = "");
Expr maximum(Expr e, const std::string &name = "");
/// The RDom point where `e` is least (greatest), the first in loop order on ties: a Tuple of its
/// coordinates, one for each RVar of the RDom (0 where every value is the type's highest
/// (lowest)), followed by that value.
Tuple argmin(Expr e, const std::string &name = "");
Tuple argmax(Expr e, const std::string &name = "");

} // namespace ptxjit
#pragma GCC visibility pop

#endif
