#include "VectorizeLoops.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Monotonic.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <optional>
#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr broadcastIfScalar(const Expr &e, int lanes) { return e.type().is_vector() ? e : Broadcast::make(e, lanes); }

// The value every lane of `e` has, when it is the same in all lanes (undefined otherwise).
Expr uniformValue(const Expr &e) {
  if (e.type().is_scalar())
    return e;
  if (const auto *bc = e.as<Broadcast>())
    return bc->value;
  return Expr();
}

// Vector arithmetic that keeps ramps as ramps, so dense accesses stay recognizable.
Expr vectorAdd(const Expr &a, const Expr &b, bool subtract) {
  int lanes = std::max(int(a.type().lanes), int(b.type().lanes));
  const auto *ra = a.as<Ramp>();
  const auto *rb = b.as<Ramp>();
  Expr sa = uniformValue(a), sb = uniformValue(b);
  auto combine = [&](const Expr &x, const Expr &y) { return subtract ? Sub::make(x, y) : Add::make(x, y); };
  if (ra && sb.defined())
    return Ramp::make(combine(ra->base, sb), ra->stride, lanes);
  if (rb && sa.defined())
    return Ramp::make(combine(sa, rb->base), subtract ? Sub::make(make_zero(rb->stride.type()), rb->stride) : rb->stride,
                      lanes);
  if (ra && rb)
    return Ramp::make(combine(ra->base, rb->base), combine(ra->stride, rb->stride), lanes);
  if (sa.defined() && sb.defined() && a.type().is_vector())
    return Broadcast::make(combine(sa, sb), lanes);
  return combine(broadcastIfScalar(a, lanes), broadcastIfScalar(b, lanes));
}

Expr vectorMul(const Expr &a, const Expr &b) {
  int lanes = std::max(int(a.type().lanes), int(b.type().lanes));
  Expr sa = uniformValue(a), sb = uniformValue(b);
  if (const auto *ra = a.as<Ramp>(); ra && sb.defined())
    return Ramp::make(Mul::make(ra->base, sb), Mul::make(ra->stride, sb), lanes);
  if (const auto *rb = b.as<Ramp>(); rb && sa.defined())
    return Ramp::make(Mul::make(sa, rb->base), Mul::make(sa, rb->stride), lanes);
  if (sa.defined() && sb.defined() && a.type().is_vector())
    return Broadcast::make(Mul::make(sa, sb), lanes);
  return Mul::make(broadcastIfScalar(a, lanes), broadcastIfScalar(b, lanes));
}

// Widens the body of one vectorized loop. Sets Failed when the body needs scalar code.
class Widen : public IRMutator {
public:
  Widen(const std::string &var, Expr min, int lanes) : Lanes(lanes) {
    Widened[var] = Ramp::make(min, make_one(min.type()), lanes);
  }
  bool Failed = false;

private:
  int Lanes;
  std::map<std::string, Expr> Widened;
  using IRMutator::visit;

  Expr visit(const Variable *op) override {
    auto it = Widened.find(op->name);
    return it == Widened.end() ? Expr(op) : it->second;
  }

  template <typename Node> Expr binary(const Node *op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b))
      return Expr(op);
    int lanes = std::max(int(a.type().lanes), int(b.type().lanes));
    return Node::make(broadcastIfScalar(a, lanes), broadcastIfScalar(b, lanes));
  }

  Expr visit(const Add *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : vectorAdd(a, b, false);
  }
  Expr visit(const Sub *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : vectorAdd(a, b, true);
  }
  Expr visit(const Mul *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : vectorMul(a, b);
  }
  Expr visit(const Div *op) override { return binary(op); }
  Expr visit(const Mod *op) override { return binary(op); }
  Expr visit(const Min *op) override { return binary(op); }
  Expr visit(const Max *op) override { return binary(op); }
  Expr visit(const EQ *op) override { return binary(op); }
  Expr visit(const NE *op) override { return binary(op); }
  Expr visit(const LT *op) override { return binary(op); }
  Expr visit(const LE *op) override { return binary(op); }
  Expr visit(const GT *op) override { return binary(op); }
  Expr visit(const GE *op) override { return binary(op); }
  Expr visit(const And *op) override { return binary(op); }
  Expr visit(const Or *op) override { return binary(op); }

  Expr visit(const Cast *op) override {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Cast::make(op->type.with_lanes(v.type().lanes), v);
  }

  Expr visit(const Select *op) override {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
      return Expr(op);
    int lanes = std::max({int(c.type().lanes), int(t.type().lanes), int(f.type().lanes)});
    return Select::make(broadcastIfScalar(c, lanes), broadcastIfScalar(t, lanes), broadcastIfScalar(f, lanes));
  }

  Expr visit(const Load *op) override {
    Expr index = mutate(op->index);
    return index.same_as(op->index) ? Expr(op) : Load::make(op->type.with_lanes(index.type().lanes), op->name, index);
  }

  Expr visit(const Call *op) override {
    std::vector<Expr> args;
    bool changed = false;
    int lanes = 1;
    for (const Expr &a : op->args) {
      args.push_back(mutate(a));
      changed = changed || !args.back().same_as(a);
      lanes = std::max(lanes, int(args.back().type().lanes));
    }
    if (!changed)
      return Expr(op);
    for (Expr &a : args)
      a = broadcastIfScalar(a, lanes);
    return Call::make(op->type.with_lanes(lanes), op->name, args, op->call_type, op->func, op->param);
  }

  // A let whose value widens to a ramp or broadcast is substituted, so that accesses through it
  // stay recognizably dense; other widened lets become vector lets.
  template <typename LetNode, typename Body, typename Make>
  Body widenLet(const LetNode *op, const Body &body, Make make) {
    Expr value = mutate(op->value);
    if (value.type().is_scalar() && value.same_as(op->value)) {
      Body newBody = mutate(body);
      return newBody.same_as(body) ? Body(op) : make(op->name, value, newBody);
    }
    bool substitute = value.as<Ramp>() || value.as<Broadcast>();
    auto saved = Widened.find(op->name) != Widened.end() ? std::optional<Expr>(Widened[op->name]) : std::nullopt;
    Widened[op->name] = substitute ? value : Variable::make(value.type(), op->name);
    Body newBody = mutate(body);
    if (saved)
      Widened[op->name] = *saved;
    else
      Widened.erase(op->name);
    return substitute ? newBody : make(op->name, value, newBody);
  }

  Expr visit(const Let *op) override { return widenLet(op, op->body, Let::make); }
  Stmt visit(const LetStmt *op) override { return widenLet(op, op->body, LetStmt::make); }

  Stmt visit(const Store *op) override {
    Expr value = mutate(op->value), index = mutate(op->index);
    if (value.same_as(op->value) && index.same_as(op->index))
      return Stmt(op);
    if (index.type().is_scalar() || op->atomic) {
      Failed = true; // every lane would write one location, or lanes may collide
      return Stmt(op);
    }
    return Store::make(op->name, broadcastIfScalar(value, Lanes), index);
  }

  Stmt visit(const IfThenElse *op) override {
    Expr c = mutate(op->condition);
    if (c.type().is_vector())
      Failed = true;
    return IRMutator::visit(op);
  }

  Stmt visit(const AssertStmt *op) override {
    if (mutate(op->condition).type().is_vector())
      Failed = true;
    return Stmt(op);
  }

  Stmt visit(const Allocate *op) override {
    Failed = true;
    return Stmt(op);
  }

  Stmt visit(const For *op) override {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    if (min.type().is_vector() || extent.type().is_vector()) {
      Failed = true;
      return Stmt(op);
    }
    return IRMutator::visit(op);
  }
};

// Whether a guard's condition holds for every value of `var` from a to b when it holds at a and
// at b: comparisons of expressions that only grow or only shrink with `var`, and conjunctions of
// them. A condition such as var != 5 holds at both ends of 0..7 and fails in between.
bool holdsBetweenEnds(const Expr &c, const std::string &var) {
  if (!uses_variable(c, var))
    return true;
  auto compared = [&](const Expr &a, const Expr &b) {
    return is_monotonic(Sub::make(a, b), var) != Monotonic::Unknown;
  };
  if (const auto *op = c.as<LT>())
    return compared(op->a, op->b);
  if (const auto *op = c.as<LE>())
    return compared(op->a, op->b);
  if (const auto *op = c.as<GT>())
    return compared(op->a, op->b);
  if (const auto *op = c.as<GE>())
    return compared(op->a, op->b);
  if (const auto *op = c.as<And>())
    return holdsBetweenEnds(op->a, var) && holdsBetweenEnds(op->b, var);
  if (const auto *op = c.as<Or>()) // one side the same for every value of var
    return (!uses_variable(op->a, var) || !uses_variable(op->b, var)) && holdsBetweenEnds(op->a, var) &&
           holdsBetweenEnds(op->b, var);
  if (const auto *op = c.as<Not>())
    return holdsBetweenEnds(op->a, var) && !op->a.as<And>() && !op->a.as<Or>();
  return false;
}

bool readsMemory(const Expr &e) {
  struct Finder : IRVisitor {
    bool Found = false;
    using IRVisitor::visit;
    void visit(const Load *) override { Found = true; }
    void visit(const Call *op) override {
      Found = Found || (op->call_type != Call::PureExtern && op->call_type != Call::Intrinsic);
      IRVisitor::visit(op);
    }
  } finder;
  e.accept(&finder);
  return finder.Found;
}

// The guards in a vectorized loop's body that can be tested once for all its lanes before the
// loop: those without an else that test the loop variable in a way holdsBetweenEnds accepts,
// read no memory (the body may write it), and, inside inner loops, name none of their
// variables. Their conditions get the lets between them and the loop substituted in.
class GuardFinder : public IRVisitor {
public:
  explicit GuardFinder(const std::string &var) : Var(var) {}
  std::vector<Expr> Conditions;
  std::set<const IfThenElse *> Guards;

private:
  const std::string &Var;
  std::map<std::string, Expr> Lets;
  std::vector<std::string> InnerLoops;
  using IRVisitor::visit;

  void visit(const LetStmt *op) override {
    Lets[op->name] = substitute(Lets, op->value);
    op->body.accept(this);
  }

  void visit(const IfThenElse *op) override {
    Expr c = substitute(Lets, op->condition);
    if (!op->else_case.defined() && uses_variable(c, Var) && holdsBetweenEnds(c, Var) && !readsMemory(c) &&
        std::none_of(InnerLoops.begin(), InnerLoops.end(), [&](const std::string &loop) { return uses_variable(c, loop); })) {
      Conditions.push_back(c);
      Guards.insert(op);
    }
    op->then_case.accept(this);
    if (op->else_case.defined())
      op->else_case.accept(this);
  }

  void visit(const For *op) override {
    InnerLoops.push_back(op->name);
    op->body.accept(this);
    InnerLoops.pop_back();
  }
};

// Replaces the guards GuardFinder found with their then-case.
class DropGuards : public IRMutator {
public:
  explicit DropGuards(const std::set<const IfThenElse *> &guards) : Guards(guards) {}

private:
  const std::set<const IfThenElse *> &Guards;
  using IRMutator::visit;
  Stmt visit(const IfThenElse *op) override {
    return Guards.count(op) ? mutate(op->then_case) : IRMutator::visit(op);
  }
};

bool containsVectors(const Stmt &s) {
  struct Finder : IRVisitor {
    bool Found = false;
    using IRVisitor::visit;
    void visit(const Ramp *) override { Found = true; }
    void visit(const Broadcast *) override { Found = true; }
    void visit(const Variable *op) override { Found = Found || op->type.is_vector(); }
    void visit(const Load *op) override {
      Found = Found || op->type.is_vector();
      IRVisitor::visit(op);
    }
  } finder;
  s.accept(&finder);
  return finder.Found;
}

class VectorizeAll : public IRMutator {
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    Stmt body = mutate(op->body);
    if (op->for_type != ForType::Vectorized)
      return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    auto lanes = as_const_int(op->extent);
    if (!lanes)
      throw CompileError("vectorized loop " + op->name + " has a non-constant extent (" + to_string(op->extent) +
                         ") with no constant bound; vectorize with a factor, e.g. vectorize(x, 8)");
    Stmt serial = For::make(op->name, op->min, op->extent, ForType::Serial, body);
    if (*lanes == 1)
      return serial;
    int n = static_cast<int>(*lanes);
    // A vectorized loop inside (vectorize(yi).vectorize(x) of a transpose) made vectors of its
    // own; lanes of two loops at once are not made: this loop runs its iterations in turn.
    if (containsVectors(body))
      return serial;

    GuardFinder guards(op->name);
    body.accept(&guards);
    Expr allLanesPass;
    Expr last = Add::make(op->min, IntImm::make(op->min.type(), n - 1));
    for (const Expr &c : guards.Conditions) {
      Expr both = And::make(substitute(op->name, op->min, c), substitute(op->name, last, c));
      allLanesPass = allLanesPass.defined() ? And::make(allLanesPass, both) : both;
    }
    Stmt unguarded = guards.Conditions.empty() ? body : DropGuards(guards.Guards).mutate(body);
    Widen widen(op->name, op->min, n);
    Stmt vector = widen.mutate(unguarded);
    if (widen.Failed)
      return serial;
    return allLanesPass.defined() ? IfThenElse::make(allLanesPass, vector, serial) : vector;
  }
};

} // namespace

Stmt vectorize_loops(const Stmt &s) { return VectorizeAll().mutate(s); }

} // namespace ptxjit::lower
