#ifndef PTXJIT_LAMBDA_H
#define PTXJIT_LAMBDA_H

// Anonymous Funcs, as Halide's lambda: `lambda(x, y, x + y)` is a Func f with f(x, y) = x + y;
// `lambda(e)` one of the implicit Vars (_0, _1, ...) that e uses.

#include "ptxjit/Func.h"
#include "ptxjit/Var.h"

#include <vector>

#pragma GCC visibility push(default)
namespace ptxjit {

Func lambda(const std::vector<Var> &vars, const Expr &e);
Func lambda(const Expr &e);
inline Func lambda(const Var &x, const Expr &e) { return lambda(std::vector<Var>{x}, e); }
inline Func lambda(const Var &x, const Var &y, const Expr &e) { return lambda(std::vector<Var>{x, y}, e); }
inline Func lambda(const Var &x, const Var &y, const Var &z, const Expr &e) {
  return lambda(std::vector<Var>{x, y, z}, e);
}
inline Func lambda(const Var &x, const Var &y, const Var &z, const Var &w, const Expr &e) {
  return lambda(std::vector<Var>{x, y, z, w}, e);
}

} // namespace ptxjit
#pragma GCC visibility pop

#endif
