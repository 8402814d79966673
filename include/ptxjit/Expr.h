#ifndef PTXJIT_EXPR_H
#define PTXJIT_EXPR_H

// Handles to immutable IR nodes. The node structs live in the compiler (ir/IR.h); users build
// expressions with the operators of IROperator.h.

#include "ptxjit/Type.h"

#include <cstdint>
#include <atomic>
#include <type_traits>
#include <utility>
#include <vector>

namespace ptxjit::ir {
class IRVisitor;
class IRMutator;
} // namespace ptxjit::ir

#pragma GCC visibility push(default)
namespace ptxjit {

namespace ir {

enum class IRNodeType : uint8_t {
  // Expressions
  IntImm, UIntImm, FloatImm, Cast, Variable, Add, Sub, Mul, Div, Mod, Min, Max,
  EQ, NE, LT, LE, GT, GE, And, Or, Not, Select, Load, Ramp, Broadcast, Call, Let,
  // Statements
  LetStmt, AssertStmt, ProducerConsumer, For, Store, Provide, Allocate, Realize, Block,
  IfThenElse, Evaluate,
};

/// Nodes are reference counted intrusively, so a mutator holding a raw node pointer can hand
/// back the same node when nothing changed.
struct IRNode {
  explicit IRNode(IRNodeType t) : node_type(t) {}
  IRNode(const IRNode &) = delete;
  IRNode &operator=(const IRNode &) = delete;
  virtual ~IRNode() = default;
  virtual void accept(IRVisitor *visitor) const = 0;
  const IRNodeType node_type;
  mutable std::atomic<int> ref_count{0};
};

struct BaseExprNode : IRNode {
  BaseExprNode(IRNodeType t, Type ty) : IRNode(t), type(ty) {}
  const Type type;
};

struct BaseStmtNode : IRNode {
  using IRNode::IRNode;
};

template <typename Base> class IRHandle {
public:
  IRHandle() = default;
  explicit IRHandle(const Base *node) : Node(node) { retain(); }
  IRHandle(const IRHandle &other) : Node(other.Node) { retain(); }
  IRHandle(IRHandle &&other) noexcept : Node(other.Node) { other.Node = nullptr; }
  IRHandle &operator=(const IRHandle &other) {
    IRHandle copy(other);
    std::swap(Node, copy.Node);
    return *this;
  }
  IRHandle &operator=(IRHandle &&other) noexcept {
    std::swap(Node, other.Node);
    return *this;
  }
  ~IRHandle() { release(); }

  bool defined() const { return Node != nullptr; }
  const Base *get() const { return Node; }
  const Base *operator->() const { return Node; }
  bool same_as(const IRHandle &other) const { return Node == other.Node; }
  template <typename T> const T *as() const {
    return Node && Node->node_type == T::NodeType ? static_cast<const T *>(Node) : nullptr;
  }
  void accept(IRVisitor *visitor) const { Node->accept(visitor); }

private:
  void retain() {
    if (Node)
      Node->ref_count.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (Node && Node->ref_count.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete Node;
    Node = nullptr;
  }
  const Base *Node = nullptr;
};

} // namespace ir

/// A typed expression.
class Expr : public ir::IRHandle<ir::BaseExprNode> {
public:
  Expr() = default;
  Expr(const ir::BaseExprNode *node) : IRHandle(node) {}
  /// No other pointer becomes an Expr: it would convert to bool.
  template <typename T, typename = std::enable_if_t<!std::is_base_of_v<ir::BaseExprNode, T>>>
  Expr(const T *) = delete;
  Expr(int8_t v);
  Expr(int16_t v);
  Expr(int32_t v);
  Expr(int64_t v);
  Expr(uint8_t v);
  Expr(uint16_t v);
  Expr(uint32_t v);
  Expr(uint64_t v);
  Expr(float v);
  Expr(double v);
  Expr(float16_t v);
  Expr(bfloat16_t v);
  Expr(bool v);
  Type type() const { return get()->type; }
};

/// A one-dimensional interval [min, min + extent).
struct Range {
  Expr min, extent;
  Range() = default;
  Range(Expr min, Expr extent) : min(std::move(min)), extent(std::move(extent)) {}
};
using Region = std::vector<Range>;

} // namespace ptxjit

#pragma GCC visibility pop

#endif
