#ifndef PTXJIT_IR_IRVISITOR_H
#define PTXJIT_IR_IRVISITOR_H

// Walks an IR tree. The default visit of each node visits its children.

#include "IR.h"

namespace ptxjit::ir {

#define PTXJIT_FOR_EACH_IR_NODE(X)                                                                 \
  X(IntImm) X(UIntImm) X(FloatImm) X(Cast) X(Variable) X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min)  \
  X(Max) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or) X(Not) X(Select) X(Load) X(Ramp)         \
  X(Broadcast) X(Call) X(Let) X(LetStmt) X(AssertStmt) X(ProducerConsumer) X(For) X(Store)         \
  X(Provide) X(Allocate) X(Realize) X(Block) X(IfThenElse) X(Evaluate)

class IRVisitor {
public:
  virtual ~IRVisitor() = default;
#define PTXJIT_DECLARE_VISIT(Node) virtual void visit(const Node *);
  PTXJIT_FOR_EACH_IR_NODE(PTXJIT_DECLARE_VISIT)
#undef PTXJIT_DECLARE_VISIT
};

template <typename T, IRNodeType Kind> void ExprNode<T, Kind>::accept(IRVisitor *visitor) const {
  visitor->visit(static_cast<const T *>(this));
}
template <typename T, IRNodeType Kind> void StmtNode<T, Kind>::accept(IRVisitor *visitor) const {
  visitor->visit(static_cast<const T *>(this));
}

} // namespace ptxjit::ir

#endif
