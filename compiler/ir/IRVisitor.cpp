#include "IRVisitor.h"

namespace ptxjit::ir {

void IRVisitor::visit(const IntImm *) {}
void IRVisitor::visit(const UIntImm *) {}
void IRVisitor::visit(const FloatImm *) {}
void IRVisitor::visit(const Variable *) {}
void IRVisitor::visit(const Cast *op) { op->value.accept(this); }

#define PTXJIT_VISIT_BINARY(Node)                                                                  \
  void IRVisitor::visit(const Node *op) {                                                          \
    op->a.accept(this);                                                                            \
    op->b.accept(this);                                                                            \
  }
PTXJIT_VISIT_BINARY(Add)
PTXJIT_VISIT_BINARY(Sub)
PTXJIT_VISIT_BINARY(Mul)
PTXJIT_VISIT_BINARY(Div)
PTXJIT_VISIT_BINARY(Mod)
PTXJIT_VISIT_BINARY(Min)
PTXJIT_VISIT_BINARY(Max)
PTXJIT_VISIT_BINARY(EQ)
PTXJIT_VISIT_BINARY(NE)
PTXJIT_VISIT_BINARY(LT)
PTXJIT_VISIT_BINARY(LE)
PTXJIT_VISIT_BINARY(GT)
PTXJIT_VISIT_BINARY(GE)
PTXJIT_VISIT_BINARY(And)
PTXJIT_VISIT_BINARY(Or)
#undef PTXJIT_VISIT_BINARY

void IRVisitor::visit(const Not *op) { op->a.accept(this); }
void IRVisitor::visit(const Select *op) {
  op->condition.accept(this);
  op->true_value.accept(this);
  op->false_value.accept(this);
}
void IRVisitor::visit(const Load *op) { op->index.accept(this); }
void IRVisitor::visit(const Ramp *op) {
  op->base.accept(this);
  op->stride.accept(this);
}
void IRVisitor::visit(const Broadcast *op) { op->value.accept(this); }
void IRVisitor::visit(const Call *op) {
  for (const Expr &arg : op->args)
    arg.accept(this);
}
void IRVisitor::visit(const Let *op) {
  op->value.accept(this);
  op->body.accept(this);
}
void IRVisitor::visit(const LetStmt *op) {
  op->value.accept(this);
  op->body.accept(this);
}
void IRVisitor::visit(const AssertStmt *op) {
  op->condition.accept(this);
  for (const Expr &arg : op->message_args)
    arg.accept(this);
}
void IRVisitor::visit(const ProducerConsumer *op) { op->body.accept(this); }
void IRVisitor::visit(const For *op) {
  op->min.accept(this);
  op->extent.accept(this);
  op->body.accept(this);
}
void IRVisitor::visit(const Store *op) {
  op->value.accept(this);
  op->index.accept(this);
}
void IRVisitor::visit(const Provide *op) {
  for (const Expr &value : op->values)
    value.accept(this);
  for (const Expr &arg : op->args)
    arg.accept(this);
}
void IRVisitor::visit(const Allocate *op) {
  for (const Expr &extent : op->extents)
    extent.accept(this);
  op->body.accept(this);
}
void IRVisitor::visit(const Realize *op) {
  for (const Range &r : op->bounds) {
    r.min.accept(this);
    r.extent.accept(this);
  }
  op->body.accept(this);
}
void IRVisitor::visit(const Block *op) {
  op->first.accept(this);
  op->rest.accept(this);
}
void IRVisitor::visit(const IfThenElse *op) {
  op->condition.accept(this);
  op->then_case.accept(this);
  if (op->else_case.defined())
    op->else_case.accept(this);
}
void IRVisitor::visit(const Evaluate *op) { op->value.accept(this); }

} // namespace ptxjit::ir
