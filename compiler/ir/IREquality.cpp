#include "IREquality.h"

#include "IRVisitor.h"

#include <cstring>

namespace ptxjit::ir {
namespace {

// Serializes a tree into a self-delimiting byte sequence: every node writes its kind, then its
// fixed fields, then its children, and names are written with their length. The sequence goes to
// a Sink: a string (structural_key) or a running hash (structural_hash, which needs no string).
template <typename Sink> class StructuralKey : public IRVisitor {
public:
  Sink Key;

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
    Key.append(name.data(), name.size());
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

/// A hash of the bytes a StructuralKey writes, mixed a word at a time.
class HashSink {
public:
  void push_back(char c) { mix(static_cast<unsigned char>(c)); }
  void append(const char *bytes, size_t size) {
    for (; size >= 8; bytes += 8, size -= 8) {
      uint64_t word;
      std::memcpy(&word, bytes, 8);
      mix(word);
    }
    uint64_t last = 0; // fewer than 8 bytes: the top byte, their count, keeps "a" apart from "a\0"
    std::memcpy(&last, bytes, size);
    mix(last ^ (uint64_t(size) << 56));
  }
  uint64_t Hash = 14695981039346656037ull;

private:
  void mix(uint64_t word) {
    Hash = (Hash ^ word) * 0x9e3779b97f4a7c15ull;
    Hash ^= Hash >> 29;
  }
};

// Compares two trees field by field, as their structural keys would compare, without making them.
class Comparer {
public:
  bool same(const Expr &a, const Expr &b) {
    if (a.same_as(b))
      return true;
    if (!a.defined() || !b.defined() || a->node_type != b->node_type || !sameType(a.type(), b.type()))
      return false;
    return sameExpr(a.get(), b.get());
  }
  bool same(const Stmt &a, const Stmt &b) {
    if (a.same_as(b))
      return true;
    if (!a.defined() || !b.defined() || a->node_type != b->node_type)
      return false;
    return sameStmt(a.get(), b.get());
  }

private:
  static bool sameType(Type a, Type b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }
  template <typename T> bool sameAll(const std::vector<T> &a, const std::vector<T> &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i]))
        return false;
    return true;
  }
  template <typename Node> static const Node *as(const IRNode *n) { return static_cast<const Node *>(n); }

  bool sameExpr(const BaseExprNode *x, const BaseExprNode *y) {
    switch (x->node_type) {
    case IRNodeType::IntImm:
      return as<IntImm>(x)->value == as<IntImm>(y)->value;
    case IRNodeType::UIntImm:
      return as<UIntImm>(x)->value == as<UIntImm>(y)->value;
    case IRNodeType::FloatImm: // bit for bit, as the key: -0.0 is not 0.0
      return std::memcmp(&as<FloatImm>(x)->value, &as<FloatImm>(y)->value, sizeof(double)) == 0;
    case IRNodeType::Cast:
      return same(as<Cast>(x)->value, as<Cast>(y)->value);
    case IRNodeType::Variable:
      return as<Variable>(x)->name == as<Variable>(y)->name;
#define PTXJIT_SAME_BINARY(Node)                                                                   \
  case IRNodeType::Node:                                                                           \
    return same(as<Node>(x)->a, as<Node>(y)->a) && same(as<Node>(x)->b, as<Node>(y)->b);
      PTXJIT_SAME_BINARY(Add) PTXJIT_SAME_BINARY(Sub) PTXJIT_SAME_BINARY(Mul) PTXJIT_SAME_BINARY(Div)
      PTXJIT_SAME_BINARY(Mod) PTXJIT_SAME_BINARY(Min) PTXJIT_SAME_BINARY(Max) PTXJIT_SAME_BINARY(EQ)
      PTXJIT_SAME_BINARY(NE) PTXJIT_SAME_BINARY(LT) PTXJIT_SAME_BINARY(LE) PTXJIT_SAME_BINARY(GT)
      PTXJIT_SAME_BINARY(GE) PTXJIT_SAME_BINARY(And) PTXJIT_SAME_BINARY(Or)
#undef PTXJIT_SAME_BINARY
    case IRNodeType::Not:
      return same(as<Not>(x)->a, as<Not>(y)->a);
    case IRNodeType::Select: {
      const auto *a = as<Select>(x), *b = as<Select>(y);
      return same(a->condition, b->condition) && same(a->true_value, b->true_value) &&
             same(a->false_value, b->false_value);
    }
    case IRNodeType::Load:
      return as<Load>(x)->name == as<Load>(y)->name && same(as<Load>(x)->index, as<Load>(y)->index);
    case IRNodeType::Ramp:
      return same(as<Ramp>(x)->base, as<Ramp>(y)->base) && same(as<Ramp>(x)->stride, as<Ramp>(y)->stride);
    case IRNodeType::Broadcast:
      return same(as<Broadcast>(x)->value, as<Broadcast>(y)->value);
    case IRNodeType::Call: {
      const auto *a = as<Call>(x), *b = as<Call>(y);
      return a->name == b->name && a->call_type == b->call_type && a->value_index == b->value_index &&
             sameAll(a->args, b->args);
    }
    case IRNodeType::Let: {
      const auto *a = as<Let>(x), *b = as<Let>(y);
      return a->name == b->name && same(a->value, b->value) && same(a->body, b->body);
    }
    default:
      internal_error("structural comparison: an expression of an unknown kind");
    }
  }

  bool sameStmt(const BaseStmtNode *x, const BaseStmtNode *y) {
    switch (x->node_type) {
    case IRNodeType::LetStmt: {
      const auto *a = as<LetStmt>(x), *b = as<LetStmt>(y);
      return a->name == b->name && same(a->value, b->value) && same(a->body, b->body);
    }
    case IRNodeType::AssertStmt: {
      const auto *a = as<AssertStmt>(x), *b = as<AssertStmt>(y);
      return same(a->condition, b->condition) && a->message == b->message && sameAll(a->message_args, b->message_args);
    }
    case IRNodeType::ProducerConsumer: {
      const auto *a = as<ProducerConsumer>(x), *b = as<ProducerConsumer>(y);
      return a->name == b->name && a->is_producer == b->is_producer && same(a->body, b->body);
    }
    case IRNodeType::For: {
      const auto *a = as<For>(x), *b = as<For>(y);
      return a->name == b->name && a->for_type == b->for_type && same(a->min, b->min) &&
             same(a->extent, b->extent) && same(a->body, b->body);
    }
    case IRNodeType::Store: {
      const auto *a = as<Store>(x), *b = as<Store>(y);
      return a->name == b->name && a->atomic == b->atomic && same(a->value, b->value) && same(a->index, b->index);
    }
    case IRNodeType::Provide: {
      const auto *a = as<Provide>(x), *b = as<Provide>(y);
      return a->name == b->name && a->atomic == b->atomic && sameAll(a->values, b->values) && sameAll(a->args, b->args);
    }
    case IRNodeType::Allocate: {
      const auto *a = as<Allocate>(x), *b = as<Allocate>(y);
      return a->name == b->name && sameType(a->type, b->type) && a->memory == b->memory && a->side == b->side &&
             sameAll(a->extents, b->extents) && same(a->body, b->body);
    }
    case IRNodeType::Realize: {
      const auto *a = as<Realize>(x), *b = as<Realize>(y);
      if (a->name != b->name || a->types.size() != b->types.size() || a->memory != b->memory ||
          a->bounds.size() != b->bounds.size())
        return false;
      for (size_t i = 0; i < a->types.size(); ++i)
        if (!sameType(a->types[i], b->types[i]))
          return false;
      for (size_t i = 0; i < a->bounds.size(); ++i)
        if (!same(a->bounds[i].min, b->bounds[i].min) || !same(a->bounds[i].extent, b->bounds[i].extent))
          return false;
      return same(a->body, b->body);
    }
    case IRNodeType::Block:
      return same(as<Block>(x)->first, as<Block>(y)->first) && same(as<Block>(x)->rest, as<Block>(y)->rest);
    case IRNodeType::IfThenElse: {
      const auto *a = as<IfThenElse>(x), *b = as<IfThenElse>(y);
      return same(a->condition, b->condition) && same(a->then_case, b->then_case) && same(a->else_case, b->else_case);
    }
    case IRNodeType::Evaluate:
      return same(as<Evaluate>(x)->value, as<Evaluate>(y)->value);
    default:
      internal_error("structural comparison: a statement of an unknown kind");
    }
  }
};

} // namespace

std::string structural_key(const Expr &e) {
  StructuralKey<std::string> key;
  key.add(e);
  return std::move(key.Key);
}

std::string structural_key(const Stmt &s) {
  StructuralKey<std::string> key;
  key.add(s);
  return std::move(key.Key);
}

bool equal(const Expr &a, const Expr &b) { return Comparer().same(a, b); }
bool equal(const Stmt &a, const Stmt &b) { return Comparer().same(a, b); }

uint64_t hash_bytes(const std::string &bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t structural_hash(const Expr &e) {
  StructuralKey<HashSink> key;
  key.add(e);
  return key.Key.Hash;
}

uint64_t structural_hash(const Stmt &s) {
  StructuralKey<HashSink> key;
  key.add(s);
  return key.Key.Hash;
}

} // namespace ptxjit::ir
