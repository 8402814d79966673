#include "IREquality.h"

#include "IRVisitor.h"

#include <cstring>

namespace ptxjit::ir {
namespace {

// Serializes a tree into a self-delimiting byte string: every node writes its kind, then its
// fixed fields, then its children, and names are written with their length.
class StructuralKey : public IRVisitor {
public:
  std::string Key;

  void add(const Expr &e) {
    if (!e.defined()) {
      Key.push_back('\xff');
      return;
    }
    header(e.get());
    addType(e.type());
    e.accept(this);
  }
  void add(const Stmt &s) {
    if (!s.defined()) {
      Key.push_back('\xff');
      return;
    }
    header(s.get());
    s.accept(this);
  }

private:
  void header(const IRNode *node) { Key.push_back(static_cast<char>(node->node_type)); }
  void addType(Type t) {
    addRaw(t.code);
    addRaw(t.bits);
    addRaw(t.lanes);
  }
  template <typename T> void addRaw(const T &value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    Key.append(bytes, sizeof(T));
  }
  void addName(const std::string &name) {
    addRaw(static_cast<uint32_t>(name.size()));
    Key += name;
  }

  void visit(const IntImm *op) override { addRaw(op->value); }
  void visit(const UIntImm *op) override { addRaw(op->value); }
  void visit(const FloatImm *op) override { addRaw(op->value); }
  void visit(const Variable *op) override { addName(op->name); }
  void visit(const Cast *op) override { add(op->value); }
#define PTXJIT_KEY_BINARY(Node)                                                                    \
  void visit(const Node *op) override {                                                            \
    add(op->a);                                                                                    \
    add(op->b);                                                                                    \
  }
  PTXJIT_KEY_BINARY(Add) PTXJIT_KEY_BINARY(Sub) PTXJIT_KEY_BINARY(Mul) PTXJIT_KEY_BINARY(Div)
  PTXJIT_KEY_BINARY(Mod) PTXJIT_KEY_BINARY(Min) PTXJIT_KEY_BINARY(Max) PTXJIT_KEY_BINARY(EQ)
  PTXJIT_KEY_BINARY(NE) PTXJIT_KEY_BINARY(LT) PTXJIT_KEY_BINARY(LE) PTXJIT_KEY_BINARY(GT)
  PTXJIT_KEY_BINARY(GE) PTXJIT_KEY_BINARY(And) PTXJIT_KEY_BINARY(Or)
#undef PTXJIT_KEY_BINARY
  void visit(const Not *op) override { add(op->a); }
  void visit(const Select *op) override {
    add(op->condition);
    add(op->true_value);
    add(op->false_value);
  }
  void visit(const Load *op) override {
    addName(op->name);
    add(op->index);
  }
  void visit(const Ramp *op) override {
    add(op->base);
    add(op->stride);
  }
  void visit(const Broadcast *op) override { add(op->value); }
  void visit(const Call *op) override {
    addName(op->name);
    addRaw(op->call_type);
    addRaw(op->value_index);
    addRaw(static_cast<uint32_t>(op->args.size()));
    for (const Expr &arg : op->args)
      add(arg);
  }
  void visit(const Let *op) override {
    addName(op->name);
    add(op->value);
    add(op->body);
  }
  void visit(const LetStmt *op) override {
    addName(op->name);
    add(op->value);
    add(op->body);
  }
  void visit(const AssertStmt *op) override {
    add(op->condition);
    addName(op->message);
    addRaw(static_cast<uint32_t>(op->message_args.size()));
    for (const Expr &arg : op->message_args)
      add(arg);
  }
  void visit(const ProducerConsumer *op) override {
    addName(op->name);
    addRaw(op->is_producer);
    add(op->body);
  }
  void visit(const For *op) override {
    addName(op->name);
    addRaw(op->for_type);
    add(op->min);
    add(op->extent);
    add(op->body);
  }
  void visit(const Store *op) override {
    addName(op->name);
    addRaw(op->atomic);
    add(op->value);
    add(op->index);
  }
  void visit(const Provide *op) override {
    addName(op->name);
    addRaw(op->atomic);
    addRaw(static_cast<uint32_t>(op->values.size()));
    for (const Expr &value : op->values)
      add(value);
    addRaw(static_cast<uint32_t>(op->args.size()));
    for (const Expr &arg : op->args)
      add(arg);
  }
  void visit(const Allocate *op) override {
    addName(op->name);
    addType(op->type);
    addRaw(op->memory);
    addRaw(op->side);
    addRaw(static_cast<uint32_t>(op->extents.size()));
    for (const Expr &extent : op->extents)
      add(extent);
    add(op->body);
  }
  void visit(const Realize *op) override {
    addName(op->name);
    addRaw(static_cast<uint32_t>(op->types.size()));
    for (const Type &t : op->types)
      addType(t);
    addRaw(op->memory);
    addRaw(static_cast<uint32_t>(op->bounds.size()));
    for (const Range &r : op->bounds) {
      add(r.min);
      add(r.extent);
    }
    add(op->body);
  }
  void visit(const Block *op) override {
    add(op->first);
    add(op->rest);
  }
  void visit(const IfThenElse *op) override {
    add(op->condition);
    add(op->then_case);
    add(op->else_case);
  }
  void visit(const Evaluate *op) override { add(op->value); }
};

} // namespace

std::string structural_key(const Expr &e) {
  StructuralKey key;
  key.add(e);
  return std::move(key.Key);
}

std::string structural_key(const Stmt &s) {
  StructuralKey key;
  key.add(s);
  return std::move(key.Key);
}

bool equal(const Expr &a, const Expr &b) { return a.same_as(b) || structural_key(a) == structural_key(b); }
bool equal(const Stmt &a, const Stmt &b) { return a.same_as(b) || structural_key(a) == structural_key(b); }

uint64_t hash_bytes(const std::string &bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t structural_hash(const Expr &e) { return hash_bytes(structural_key(e)); }
uint64_t structural_hash(const Stmt &s) { return hash_bytes(structural_key(s)); }

} // namespace ptxjit::ir
