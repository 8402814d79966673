#include "Substitute.h"

#include "IRMutator.h"

namespace ptxjit::ir {
namespace {

class Substituter : public IRMutator {
public:
  explicit Substituter(const std::map<std::string, Expr> &replacements) : Replacements(replacements) {}

private:
  const std::map<std::string, Expr> &Replacements;
  std::map<std::string, int> Shadowed;

  using IRMutator::visit;

  bool isShadowed(const std::string &name) const {
    auto it = Shadowed.find(name);
    return it != Shadowed.end() && it->second > 0;
  }

  Expr visit(const Variable *op) override {
    auto it = Replacements.find(op->name);
    if (it == Replacements.end() || isShadowed(op->name))
      return Expr(op);
    return it->second;
  }

  template <typename Body> Body withShadow(const std::string &name, const Body &body) {
    if (!Replacements.count(name))
      return mutate(body);
    ++Shadowed[name];
    Body result = mutate(body);
    --Shadowed[name];
    return result;
  }

  Expr visit(const Let *op) override {
    Expr value = mutate(op->value);
    Expr body = withShadow(op->name, op->body);
    if (value.same_as(op->value) && body.same_as(op->body))
      return Expr(op);
    return Let::make(op->name, value, body);
  }

  Stmt visit(const LetStmt *op) override {
    Expr value = mutate(op->value);
    Stmt body = withShadow(op->name, op->body);
    if (value.same_as(op->value) && body.same_as(op->body))
      return Stmt(op);
    return LetStmt::make(op->name, value, body);
  }

  Stmt visit(const For *op) override {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    Stmt body = withShadow(op->name, op->body);
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body))
      return Stmt(op);
    return For::make(op->name, min, extent, op->for_type, body);
  }
};

class VariableFinder : public IRVisitor {
public:
  explicit VariableFinder(const std::string &name) : Name(name) {}
  bool Found = false;

private:
  const std::string &Name;
  using IRVisitor::visit;
  void visit(const Variable *op) override { Found = Found || op->name == Name; }
};

// Counts nodes, and stops descending once past the limit.
class NodeCounter : public IRVisitor {
public:
  explicit NodeCounter(int limit) : Limit(limit) {}
  int Count = 0;

private:
  int Limit;
#define PTXJIT_COUNT_VISIT(Node)                                                                   \
  void visit(const Node *op) override {                                                            \
    if (++Count <= Limit)                                                                          \
      IRVisitor::visit(op);                                                                        \
  }
  PTXJIT_FOR_EACH_IR_NODE(PTXJIT_COUNT_VISIT)
#undef PTXJIT_COUNT_VISIT
};

} // namespace

Expr peel_lets(const Expr &e, std::map<std::string, Expr> &values) {
  Expr body = e;
  while (const auto *let = body.as<Let>()) {
    values[let->name] = substitute(values, let->value);
    body = let->body;
  }
  return body;
}

bool has_more_nodes_than(const Expr &e, int nodes) {
  NodeCounter counter(nodes);
  if (e.defined())
    e.accept(&counter);
  return counter.Count > nodes;
}

Expr substitute(const std::map<std::string, Expr> &replacements, const Expr &e) {
  return Substituter(replacements).mutate(e);
}
Stmt substitute(const std::map<std::string, Expr> &replacements, const Stmt &s) {
  return Substituter(replacements).mutate(s);
}
Expr substitute(const std::string &name, const Expr &replacement, const Expr &e) {
  return substitute(std::map<std::string, Expr>{{name, replacement}}, e);
}
Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s) {
  return substitute(std::map<std::string, Expr>{{name, replacement}}, s);
}

std::set<std::string> variable_names(const Expr &e) {
  struct Names : IRVisitor {
    std::set<std::string> Found;
    using IRVisitor::visit;
    void visit(const Variable *op) override { Found.insert(op->name); }
  } names;
  e.accept(&names);
  return std::move(names.Found);
}

bool uses_variable(const Expr &e, const std::string &name) {
  VariableFinder finder(name);
  if (e.defined())
    e.accept(&finder);
  return finder.Found;
}
bool uses_variable(const Stmt &s, const std::string &name) {
  VariableFinder finder(name);
  if (s.defined())
    s.accept(&finder);
  return finder.Found;
}

bool is_realize_invariant(const Expr &e) {
  class Finder : public IRVisitor {
  public:
    bool Varies = false;

  private:
    using IRVisitor::visit;
    void visit(const Variable *op) override { Varies = Varies || !op->param; }
    void visit(const Load *) override { Varies = true; }
    void visit(const Call *op) override {
      Varies = Varies || op->call_type == Call::Halide || op->call_type == Call::Image;
      IRVisitor::visit(op);
    }
  } finder;
  if (e.defined())
    e.accept(&finder);
  return !finder.Varies;
}

} // namespace ptxjit::ir
