#include "IRMutator.h"

namespace ptxjit::ir {

Expr IRMutator::mutate(const Expr &e) {
  if (!e.defined())
    return e;
  const BaseExprNode *node = e.get();
  switch (node->node_type) {
#define PTXJIT_DISPATCH(Node)                                                                      \
  case IRNodeType::Node:                                                                           \
    return visit(static_cast<const Node *>(node));
    PTXJIT_DISPATCH(IntImm) PTXJIT_DISPATCH(UIntImm) PTXJIT_DISPATCH(FloatImm) PTXJIT_DISPATCH(Cast)
    PTXJIT_DISPATCH(Variable) PTXJIT_DISPATCH(Add) PTXJIT_DISPATCH(Sub) PTXJIT_DISPATCH(Mul)
    PTXJIT_DISPATCH(Div) PTXJIT_DISPATCH(Mod) PTXJIT_DISPATCH(Min) PTXJIT_DISPATCH(Max)
    PTXJIT_DISPATCH(EQ) PTXJIT_DISPATCH(NE) PTXJIT_DISPATCH(LT) PTXJIT_DISPATCH(LE)
    PTXJIT_DISPATCH(GT) PTXJIT_DISPATCH(GE) PTXJIT_DISPATCH(And) PTXJIT_DISPATCH(Or)
    PTXJIT_DISPATCH(Not) PTXJIT_DISPATCH(Select) PTXJIT_DISPATCH(Load) PTXJIT_DISPATCH(Ramp)
    PTXJIT_DISPATCH(Broadcast) PTXJIT_DISPATCH(Call) PTXJIT_DISPATCH(Let)
  default:
    internal_error("IRMutator: statement node in expression position");
  }
}

Stmt IRMutator::mutate(const Stmt &s) {
  if (!s.defined())
    return s;
  const BaseStmtNode *node = s.get();
  switch (node->node_type) {
    PTXJIT_DISPATCH(LetStmt) PTXJIT_DISPATCH(AssertStmt) PTXJIT_DISPATCH(ProducerConsumer)
    PTXJIT_DISPATCH(For) PTXJIT_DISPATCH(Store) PTXJIT_DISPATCH(Provide) PTXJIT_DISPATCH(Allocate)
    PTXJIT_DISPATCH(Realize) PTXJIT_DISPATCH(Block) PTXJIT_DISPATCH(IfThenElse) PTXJIT_DISPATCH(Evaluate)
#undef PTXJIT_DISPATCH
  default:
    internal_error("IRMutator: expression node in statement position");
  }
}

Expr IRMutator::visit(const IntImm *op) { return Expr(op); }
Expr IRMutator::visit(const UIntImm *op) { return Expr(op); }
Expr IRMutator::visit(const FloatImm *op) { return Expr(op); }
Expr IRMutator::visit(const Variable *op) { return Expr(op); }

Expr IRMutator::visit(const Cast *op) {
  Expr value = mutate(op->value);
  return value.same_as(op->value) ? Expr(op) : Cast::make(op->type, value);
}

#define PTXJIT_MUTATE_BINARY(Node)                                                                 \
  Expr IRMutator::visit(const Node *op) {                                                          \
    Expr a = mutate(op->a), b = mutate(op->b);                                                     \
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : Node::make(a, b);                     \
  }
PTXJIT_MUTATE_BINARY(Add)
PTXJIT_MUTATE_BINARY(Sub)
PTXJIT_MUTATE_BINARY(Mul)
PTXJIT_MUTATE_BINARY(Div)
PTXJIT_MUTATE_BINARY(Mod)
PTXJIT_MUTATE_BINARY(Min)
PTXJIT_MUTATE_BINARY(Max)
PTXJIT_MUTATE_BINARY(EQ)
PTXJIT_MUTATE_BINARY(NE)
PTXJIT_MUTATE_BINARY(LT)
PTXJIT_MUTATE_BINARY(LE)
PTXJIT_MUTATE_BINARY(GT)
PTXJIT_MUTATE_BINARY(GE)
PTXJIT_MUTATE_BINARY(And)
PTXJIT_MUTATE_BINARY(Or)
#undef PTXJIT_MUTATE_BINARY

Expr IRMutator::visit(const Not *op) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? Expr(op) : Not::make(a);
}

Expr IRMutator::visit(const Select *op) {
  Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
    return Expr(op);
  return Select::make(c, t, f);
}

Expr IRMutator::visit(const Load *op) {
  Expr index = mutate(op->index);
  return index.same_as(op->index) ? Expr(op) : Load::make(op->type, op->name, index);
}

Expr IRMutator::visit(const Ramp *op) {
  Expr base = mutate(op->base), stride = mutate(op->stride);
  if (base.same_as(op->base) && stride.same_as(op->stride))
    return Expr(op);
  return Ramp::make(base, stride, op->lanes);
}

Expr IRMutator::visit(const Broadcast *op) {
  Expr value = mutate(op->value);
  return value.same_as(op->value) ? Expr(op) : Broadcast::make(value, op->lanes);
}

Expr IRMutator::visit(const Call *op) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr &arg : op->args) {
    args.push_back(mutate(arg));
    changed = changed || !args.back().same_as(arg);
  }
  if (!changed)
    return Expr(op);
  return Call::make(op->type, op->name, std::move(args), op->call_type, op->func, op->param, op->value_index);
}

Expr IRMutator::visit(const Let *op) {
  Expr value = mutate(op->value), body = mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body))
    return Expr(op);
  return Let::make(op->name, value, body);
}

Stmt IRMutator::visit(const LetStmt *op) {
  Expr value = mutate(op->value);
  Stmt body = mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body))
    return Stmt(op);
  return LetStmt::make(op->name, value, body);
}

Stmt IRMutator::visit(const AssertStmt *op) {
  Expr condition = mutate(op->condition);
  bool changed = !condition.same_as(op->condition);
  std::vector<Expr> args;
  for (const Expr &arg : op->message_args) {
    args.push_back(mutate(arg));
    changed = changed || !args.back().same_as(arg);
  }
  return changed ? AssertStmt::make(condition, op->message, std::move(args)) : Stmt(op);
}

Stmt IRMutator::visit(const ProducerConsumer *op) {
  Stmt body = mutate(op->body);
  return body.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, body);
}

Stmt IRMutator::visit(const For *op) {
  Expr min = mutate(op->min), extent = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body))
    return Stmt(op);
  return For::make(op->name, min, extent, op->for_type, body);
}

Stmt IRMutator::visit(const Store *op) {
  Expr value = mutate(op->value), index = mutate(op->index);
  if (value.same_as(op->value) && index.same_as(op->index))
    return Stmt(op);
  return Store::make(op->name, value, index, op->atomic);
}

Stmt IRMutator::visit(const Provide *op) {
  bool changed = false;
  std::vector<Expr> values;
  for (const Expr &value : op->values) {
    values.push_back(mutate(value));
    changed = changed || !values.back().same_as(value);
  }
  std::vector<Expr> args;
  for (const Expr &arg : op->args) {
    args.push_back(mutate(arg));
    changed = changed || !args.back().same_as(arg);
  }
  return changed ? Provide::make(op->name, std::move(values), std::move(args), op->atomic) : Stmt(op);
}

Stmt IRMutator::visit(const Allocate *op) {
  bool changed = false;
  std::vector<Expr> extents;
  for (const Expr &extent : op->extents) {
    extents.push_back(mutate(extent));
    changed = changed || !extents.back().same_as(extent);
  }
  Stmt body = mutate(op->body);
  changed = changed || !body.same_as(op->body);
  return changed ? Allocate::make(op->name, op->type, std::move(extents), body, op->memory, op->side) : Stmt(op);
}

Stmt IRMutator::visit(const Realize *op) {
  bool changed = false;
  Region bounds;
  for (const Range &r : op->bounds) {
    bounds.push_back({mutate(r.min), mutate(r.extent)});
    changed = changed || !bounds.back().min.same_as(r.min) || !bounds.back().extent.same_as(r.extent);
  }
  Stmt body = mutate(op->body);
  changed = changed || !body.same_as(op->body);
  return changed ? Realize::make(op->name, op->types, std::move(bounds), body, op->memory) : Stmt(op);
}

Stmt IRMutator::visit(const Block *op) {
  Stmt first = mutate(op->first), rest = mutate(op->rest);
  if (first.same_as(op->first) && rest.same_as(op->rest))
    return Stmt(op);
  return Block::make(first, rest);
}

Stmt IRMutator::visit(const IfThenElse *op) {
  Expr condition = mutate(op->condition);
  Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
  if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
      else_case.same_as(op->else_case))
    return Stmt(op);
  return IfThenElse::make(condition, then_case, else_case);
}

Stmt IRMutator::visit(const Evaluate *op) {
  Expr value = mutate(op->value);
  return value.same_as(op->value) ? Stmt(op) : Evaluate::make(value);
}

} // namespace ptxjit::ir
