#include "InlineFunctions.h"

#include "ir/CSE.h"
#include "ir/IREquality.h"
#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <map>

namespace ptxjit::lower {

using namespace ir;

namespace {

// Gives the lets of one inlined copy names of their own, so that every let name in a statement is
// bound once (what CSE needs to look through them).
class RenameLets : public IRMutator {
public:
  explicit RenameLets(const std::string &suffix) : Suffix(suffix) {}

private:
  const std::string &Suffix;
  using IRMutator::visit;
  Expr visit(const Let *op) override {
    std::string name = op->name + Suffix;
    Expr body = substitute(op->name, Variable::make(op->value.type(), name), op->body);
    return Let::make(name, mutate(op->value), mutate(body));
  }
};

class Inliner : public IRMutator {
public:
  explicit Inliner(const FunctionContents &f) : F(f) {
    if (!f.updates.empty())
      throw CompileError("Func " + f.name + " has update definitions and cannot be computed inline; "
                         "schedule it compute_root() or compute_at()");
  }

private:
  const FunctionContents &F;
  // One copy per distinct (simplified) argument list: a Func read twice at one point is one node
  // with two parents, which the CSE after inlining finds in linear time.
  std::map<std::string, Expr> Copies;
  bool InProvide = false;
  int Provides = 0, Copied = 0;
  using IRMutator::visit;

  Expr visit(const Call *op) override {
    Expr e = IRMutator::visit(op);
    const auto *call = e.as<Call>();
    if (call->call_type != Call::Halide || call->name != F.name)
      return e;
    if (is_undef(F.init.values.at(call->value_index)))
      throw CompileError("Func " + F.name + " is read" +
                         (F.init.values.size() > 1 ? " at value " + std::to_string(call->value_index) : "") +
                         ", which its only definition leaves undef()");
    std::vector<Expr> args;
    std::string key = std::to_string(call->value_index) + ":";
    for (const Expr &a : call->args) {
      args.push_back(simplify(a));
      key += structural_key(args.back()) + ";";
    }
    if (auto it = Copies.find(key); InProvide && it != Copies.end())
      return it->second;
    std::map<std::string, Expr> replacements;
    for (size_t i = 0; i < F.args.size(); ++i)
      replacements[F.args[i]] = args[i];
    Expr copy = RenameLets(".i" + std::to_string(Copied++)).mutate(substitute(replacements, F.init.values.at(call->value_index)));
    if (InProvide)
      Copies.emplace(key, copy);
    return copy;
  }

  // What inlining duplicated becomes lets again, per definition.
  Stmt visit(const Provide *op) override {
    // Copies are shared within one definition, where every name means one thing.
    Copies.clear();
    InProvide = true;
    Stmt s = IRMutator::visit(op);
    InProvide = false;
    Copies.clear();
    const auto *provide = s.as<Provide>();
    if (s.get() == op)
      return s;
    const std::string prefix = provide->name + "." + F.name + ".inlined" + std::to_string(Provides++);
    std::vector<Expr> args;
    for (size_t i = 0; i < provide->args.size(); ++i)
      args.push_back(common_subexpression_elimination(provide->args[i], prefix + ".a" + std::to_string(i)));
    std::vector<Expr> values;
    for (size_t i = 0; i < provide->values.size(); ++i)
      values.push_back(common_subexpression_elimination(
          provide->values[i], provide->values.size() == 1 ? prefix : prefix + ".v" + std::to_string(i)));
    return Provide::make(provide->name, values, args, provide->atomic);
  }
};

} // namespace

Stmt inline_function(const Stmt &s, const FunctionContents &f) { return Inliner(f).mutate(s); }
Expr inline_function(const Expr &e, const FunctionContents &f) { return Inliner(f).mutate(e); }

} // namespace ptxjit::lower
