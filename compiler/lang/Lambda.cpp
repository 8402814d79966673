#include "ptxjit/Lambda.h"

#include "lang/UniqueName.h"

namespace ptxjit {

Func lambda(const std::vector<Var> &vars, const Expr &e) {
  Func f(unique_name("lambda"));
  f(std::vector<Expr>(vars.begin(), vars.end())) = e;
  return f;
}

Func lambda(const Expr &e) {
  Func f(unique_name("lambda"));
  f(_) = e;
  return f;
}

} // namespace ptxjit
