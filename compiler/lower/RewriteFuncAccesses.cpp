#include "RewriteFuncAccesses.h"

namespace ptxjit::lower {

using namespace ir;

std::vector<Expr> RewriteFuncAccesses::rewritten(const std::vector<Expr> &args) {
  std::vector<Expr> inner;
  for (const Expr &a : args)
    inner.push_back(mutate(a));
  return coordinates(std::move(inner));
}

Stmt RewriteFuncAccesses::visit(const Provide *op) {
  if (op->name != Func)
    return IRMutator::visit(op);
  std::vector<Expr> values;
  for (const Expr &v : op->values)
    values.push_back(mutate(v));
  return Provide::make(op->name, values, rewritten(op->args), op->atomic);
}

Expr RewriteFuncAccesses::visit(const Call *op) {
  if (op->call_type != Call::Halide || op->name != Func)
    return IRMutator::visit(op);
  return Call::make(op->type, op->name, rewritten(op->args), op->call_type, op->func, op->param, op->value_index);
}

Stmt RewriteFuncAccesses::visit(const Realize *op) { return op->name == Func ? Stmt(op) : IRMutator::visit(op); }

} // namespace ptxjit::lower
