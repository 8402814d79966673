#include "BoxesTouched.h"

#include "ir/Constants.h"
#include "ir/IREquality.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <optional>
#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

// The names of the lets whose intervals a query can need: those named by the coordinates it
// collects, by loop bounds and by conditions, and by the values of the lets so named,
// transitively. Lets of other names (a realization's bounds, most often, the largest values) are
// never bounded: nothing the query reads looks them up.
class NeededLets : public IRVisitor {
public:
  explicit NeededLets(const BoxQuery &query) : Query(query) {}

  std::set<std::string> names() const {
    std::set<std::string> needed;
    std::vector<std::string> work;
    auto reach = [&](const Expr &e) {
      for (const std::string &name : variable_names(e))
        if (needed.insert(name).second)
          work.push_back(name);
    };
    for (const Expr &root : Roots)
      reach(root);
    while (!work.empty()) {
      const std::string name = std::move(work.back());
      work.pop_back();
      for (auto [it, end] = Definitions.equal_range(name); it != end; ++it)
        reach(it->second);
    }
    return needed;
  }

private:
  const BoxQuery &Query;
  std::vector<Expr> Roots;
  std::multimap<std::string, Expr> Definitions;

  using IRVisitor::visit;

  void visit(const Call *op) override {
    IRVisitor::visit(op);
    if (Query.calls && op->name == Query.name && (op->call_type == Call::Halide || op->call_type == Call::Image))
      Roots.insert(Roots.end(), op->args.begin(), op->args.end());
  }

  void visit(const Provide *op) override {
    IRVisitor::visit(op);
    if (Query.provides && op->name == Query.name)
      Roots.insert(Roots.end(), op->args.begin(), op->args.end());
  }

  void visit(const For *op) override {
    Roots.push_back(op->min);
    Roots.push_back(op->extent);
    IRVisitor::visit(op);
  }

  void visit(const IfThenElse *op) override {
    Roots.push_back(op->condition);
    IRVisitor::visit(op);
  }

  void visit(const LetStmt *op) override {
    Definitions.emplace(op->name, op->value);
    IRVisitor::visit(op);
  }

  void visit(const Let *op) override {
    Definitions.emplace(op->name, op->value);
    IRVisitor::visit(op);
  }
};

class BoxFinder : public IRVisitor {
public:
  BoxFinder(const BoxQuery &query, const Scope &scope, std::set<std::string> neededLets)
      : Query(query), TheScope(scope), NeededLetNames(std::move(neededLets)) {}
  Box Result;

private:
  const BoxQuery &Query;
  Scope TheScope;
  const std::set<std::string> NeededLetNames;
  // The values of the lets walked through, in terms of variables outside them: loop bounds keep
  // the correlation between a loop's min and extent that intervals alone would lose.
  std::map<std::string, Expr> LetValues;
  // The same lets as written, in terms of the lets before them.
  std::map<std::string, Expr> LetDefinitions;
  // Expressions a guard around the code bounds, such as u * 32 + ri in `if (u * 32 + ri < 211)`
  // (a split RVar's tail where rfactor made the outer loop a Var), by the names of their
  // narrowed intervals in the scope: an access at that expression is inside the guard's bound,
  // which intervals of u and ri alone would lose.
  std::vector<std::pair<Expr, std::string>> GuardedExprs;

  // `a`, or b's constant bound where b has one and it is tighter.
  static Expr tighter(const Expr &a, const Expr &b, bool isMin) {
    // A symbolic maximum may still have a constant bound: min(5, 2 * o.max - 2 * o) is at most 5.
    auto cb = isMin ? as_const_int(b) : structural_upper_bound(b);
    if (!cb)
      return a;
    auto ca = as_const_int(a);
    if (ca && (isMin ? *ca >= *cb : *ca <= *cb))
      return a;
    return make_const(b.type(), *cb);
  }

  template <typename T> static void restore(std::map<std::string, T> &map, const std::string &name,
                                            const std::optional<T> &saved) {
    if (saved)
      map[name] = *saved;
    else
      map.erase(name);
  }

  template <typename T> static std::optional<T> find(const std::map<std::string, T> &map, const std::string &name) {
    auto it = map.find(name);
    return it == map.end() ? std::nullopt : std::optional<T>(it->second);
  }

  using IRVisitor::visit;

  // A sum `e` written as k * guarded + rest, with `guarded` by its name and rest naming none of
  // its variables; undefined where it is not one. The simplifier folds a guarded expression into
  // the sums around it: x + (u * 7 + ri + 1) + 2 reads at x + u * 7 + ri + 3.
  static Expr asMultipleOfGuarded(const Expr &e, const Expr &guarded, const std::string &name) {
    if (!(e.as<Add>() || e.as<Sub>() || e.as<Mul>()) || e.type() != guarded.type() || !e.type().is_int() ||
        !e.type().is_scalar())
      return Expr();
    const std::set<std::string> names = variable_names(guarded);
    if (names.empty())
      return Expr();
    // The coefficients of one of guarded's variables in each give k; the rest must then be free
    // of all of them, which also rejects an `e` that is not linear in them.
    const std::string &probe = *names.begin();
    auto coefficient = [&](const Expr &x) {
      return as_const_int(simplify(Sub::make(substitute(probe, make_one(x.type()), x),
                                             substitute(probe, make_zero(x.type()), x))));
    };
    const auto inE = coefficient(e), inGuarded = coefficient(guarded);
    if (!inE || !inGuarded || *inE == 0 || *inGuarded == 0 || *inE % *inGuarded != 0)
      return Expr();
    const Expr k = make_const(e.type(), *inE / *inGuarded);
    const Expr rest = simplify(Sub::make(e, Mul::make(guarded, k)));
    if (std::any_of(names.begin(), names.end(), [&](const std::string &n) { return uses_variable(rest, n); }))
      return Expr();
    return simplify(Add::make(Mul::make(Variable::make(e.type(), name), k), rest));
  }

  // `e` with each guarded expression in it, alone or as a multiple inside a sum, replaced by the
  // name of its narrowed interval.
  Expr nameGuarded(const Expr &e) const {
    if (GuardedExprs.empty())
      return e;
    struct Namer : IRMutator {
      const std::vector<std::pair<Expr, std::string>> &Guarded;
      explicit Namer(const std::vector<std::pair<Expr, std::string>> &g) : Guarded(g) {}
      Expr mutate(const Expr &e) override {
        for (const auto &[guarded, name] : Guarded)
          if (equal(e, guarded))
            return Variable::make(e.type(), name);
        for (const auto &[guarded, name] : Guarded)
          if (Expr named = asMultipleOfGuarded(e, guarded, name); named.defined())
            return named;
        return IRMutator::mutate(e);
      }
    } namer(GuardedExprs);
    return namer.mutate(e);
  }

  void merge(const std::vector<Expr> &args) {
    Box box;
    for (const Expr &arg : args)
      box.push_back(bounds_of_expr_in_scope(nameGuarded(arg), TheScope, Query.call_bounds));
    mergeBox(box);
  }

  void mergeBox(const Box &box) {
    if (Result.empty()) {
      Result = box;
      return;
    }
    for (size_t i = 0; i < box.size() && i < Result.size(); ++i)
      Result[i] = interval_union(Result[i], box[i]);
  }

  void visit(const Call *op) override {
    IRVisitor::visit(op);
    if (Query.calls && op->name == Query.name && (op->call_type == Call::Halide || op->call_type == Call::Image))
      merge(op->args);
  }

  void visit(const Provide *op) override {
    IRVisitor::visit(op);
    if (Query.provides && op->name == Query.name)
      merge(op->args);
  }

  template <typename Body> void bind(const std::string &name, const Interval &value, const Body &body) {
    auto saved = TheScope.find(name) != TheScope.end() ? std::optional<Interval>(TheScope[name]) : std::nullopt;
    TheScope[name] = value;
    // A guarded expression of the name bound anew is another value inside.
    const std::vector<std::pair<Expr, std::string>> guarded = GuardedExprs;
    std::erase_if(GuardedExprs, [&](const auto &g) { return uses_variable(g.first, name); });
    body.accept(this);
    GuardedExprs = guarded;
    if (saved)
      TheScope[name] = *saved;
    else
      TheScope.erase(name);
  }

  void visit(const LetStmt *op) override {
    op->value.accept(this);
    // A let nothing the query reads names is not bounded: no lookup of its name can follow.
    if (!NeededLetNames.count(op->name))
      return op->body.accept(this);
    Expr value = substitute(LetValues, op->value);
    const std::optional<Expr> saved = find(LetValues, op->name), savedDefinition = find(LetDefinitions, op->name);
    LetDefinitions[op->name] = op->value;
    // A value too large to expand stays a name: its interval is in the scope.
    if (has_more_nodes_than(value, MaxExpandedLetNodes))
      LetValues.erase(op->name);
    else
      LetValues[op->name] = value;
    // Both bounds hold: the one through the variables the value names (narrowed by the guards
    // around it) and the one through the value written in outer variables, simplified (a loop
    // extent (y.max - y.min) + 1 whose ends are both g.y - 2 is 1, not the width of g.y's range).
    // The second is taken where it is a constant; combining symbolic bounds would grow them at
    // every let.
    Interval direct = bounds_of_expr_in_scope(nameGuarded(op->value), TheScope, Query.call_bounds);
    const bool exact = as_const_int(direct.min) && as_const_int(direct.max);
    Interval expanded = exact ? direct : bounds_of_expr_in_scope(simplify_for_bounds(value), TheScope, Query.call_bounds);
    bindNamingLargeEnds(op->name, {tighter(direct.min, expanded.min, true), tighter(direct.max, expanded.max, false)},
                        op->body);
    restore(LetValues, op->name, saved);
    restore(LetDefinitions, op->name, savedDefinition);
  }

  // Binds `name` to `value` for `body` like bind(), but an end of more than MaxRepeatedEndNodes
  // becomes a name, defined by a Let around the ends of the box found in `body`: repeated, the
  // ends of nested lets multiply in size (the image checks of a chain of stencils computed in
  // one tile grew to megabytes).
  static constexpr int MaxRepeatedEndNodes = 50;
  template <typename Body> void bindNamingLargeEnds(const std::string &name, const Interval &value, const Body &body) {
    std::vector<std::pair<std::string, Expr>> ends;
    Interval named = value;
    for (auto [end, suffix] : {std::pair{&named.min, ".lower"}, std::pair{&named.max, ".upper"}})
      if (end->defined() && has_more_nodes_than(*end, MaxRepeatedEndNodes)) {
        ends.emplace_back(name + suffix, *end);
        *end = Variable::make(end->type(), name + suffix);
      }
    if (ends.empty())
      return bind(name, value, body);
    Box outside = std::move(Result);
    Result.clear();
    bind(name, named, body);
    Box inside = std::move(Result);
    Result = std::move(outside);
    for (Interval &i : inside)
      for (Expr *e : {&i.min, &i.max})
        for (auto it = ends.rbegin(); it != ends.rend(); ++it)
          if (e->defined() && uses_variable(*e, it->first))
            *e = Let::make(it->first, it->second, *e);
    if (!inside.empty())
      mergeBox(inside);
  }

  void visit(const Let *op) override {
    op->value.accept(this);
    if (!NeededLetNames.count(op->name))
      return op->body.accept(this);
    bindNamingLargeEnds(op->name, bounds_of_expr_in_scope(nameGuarded(op->value), TheScope, Query.call_bounds),
                        op->body);
  }

  void visit(const For *op) override {
    op->min.accept(this);
    op->extent.accept(this);
    Expr first = simplify_for_bounds(substitute(LetValues, op->min));
    Expr last = simplify_for_bounds(substitute(LetValues, Sub::make(Add::make(op->min, op->extent), IntImm::make(op->min.type(), 1))));
    Interval range{bounds_of_expr_in_scope(first, TheScope, Query.call_bounds).min, bounds_of_expr_in_scope(last, TheScope, Query.call_bounds).max};
    if (Expr lastLet = lastAsLet(op); lastLet.defined())
      range.max = tighter(TheScope[lastLet.as<Variable>()->name].max, range.max, false);
    // The loop variable shadows any let of the same name inside the loop.
    const std::optional<Expr> saved = find(LetValues, op->name), savedDefinition = find(LetDefinitions, op->name);
    LetValues.erase(op->name);
    LetDefinitions.erase(op->name);
    bind(op->name, range, op->body);
    restore(LetValues, op->name, saved);
    restore(LetDefinitions, op->name, savedDefinition);
  }

  // The loop's last value where it is a let in scope, such as v.max for a loop from v.min over
  // v.loop_extent = (v.max - v.min) + 1. Expanded in outer variables, the two ends of a large
  // region may no longer cancel (a sum of their bounds is far too wide); by name they do, and the
  // let's interval is already narrowed by the guards around it.
  Expr lastAsLet(const For *op) {
    Expr last = simplify(Sub::make(Add::make(op->min, op->extent), IntImm::make(op->min.type(), 1)));
    for (int level = 0; level < 2; ++level) {
      if (const auto *v = last.as<Variable>())
        return TheScope.count(v->name) && TheScope[v->name].max.defined() ? last : Expr();
      last = simplify(substitute(LetDefinitions, last));
    }
    const auto *v = last.as<Variable>();
    return v && TheScope.count(v->name) && TheScope[v->name].max.defined() ? last : Expr();
  }

  // A guard's limit is usually a let such as x.loop_max = x.loop_min + x.loop_extent - 1; its
  // value, simplified, is tighter than the sum of its parts' intervals.
  Interval limitBounds(const Expr &limit, const Scope &scope) {
    return bounds_of_expr_in_scope(simplify_for_bounds(substitute(LetValues, limit)), scope, Query.call_bounds);
  }

  // Narrows variables tested by `condition` (conjunctions of var <= e, var < e, var >= e, var > e).
  void narrow(const Expr &condition, Scope &scope) {
    if (const auto *a = condition.as<And>()) {
      narrow(a->a, scope);
      narrow(a->b, scope);
      return;
    }
    // A variable defined outside the statement is one value: narrowed, it is that value clamped.
    // Another expression of loop variables gets a name (GuardedExprs), narrowed from its bounds.
    auto narrowable = [&](const Expr &var) -> Interval * {
      if (const auto *v = var.as<Variable>())
        return &scope.emplace(v->name, Interval{var, var}).first->second;
      if (is_const(var))
        return nullptr;
      for (const auto &[guarded, name] : GuardedExprs)
        if (equal(guarded, var))
          return &scope.at(name);
      const std::string name = "guarded." + std::to_string(GuardedExprs.size());
      Interval *bounds = &scope.insert_or_assign(name, bounds_of_expr_in_scope(nameGuarded(var), scope, Query.call_bounds))
                              .first->second;
      GuardedExprs.emplace_back(var, name);
      return bounds;
    };
    auto upper = [&](const Expr &var, const Expr &limit) {
      Interval *narrowed = narrowable(var);
      if (!narrowed)
        return;
      Interval &i = *narrowed;
      Interval l = limitBounds(limit, scope);
      if (l.max.defined())
        i.max = i.max.defined() ? simplify(Min::make(i.max, l.max)) : l.max;
    };
    auto lower = [&](const Expr &var, const Expr &limit) {
      Interval *narrowed = narrowable(var);
      if (!narrowed)
        return;
      Interval &i = *narrowed;
      Interval l = limitBounds(limit, scope);
      if (l.min.defined())
        i.min = i.min.defined() ? simplify(Max::make(i.min, l.min)) : l.min;
    };
    auto minusOne = [](const Expr &e) { return Sub::make(e, IntImm::make(e.type(), 1)); };
    auto plusOne = [](const Expr &e) { return Add::make(e, IntImm::make(e.type(), 1)); };
    if (const auto *c = condition.as<LE>(); c && c->a.type().is_int()) {
      upper(c->a, c->b);
      lower(c->b, c->a);
    } else if (const auto *c = condition.as<LT>(); c && c->a.type().is_int()) {
      upper(c->a, minusOne(c->b));
      lower(c->b, plusOne(c->a));
    } else if (const auto *c = condition.as<GE>(); c && c->a.type().is_int()) {
      lower(c->a, c->b);
      upper(c->b, c->a);
    } else if (const auto *c = condition.as<GT>(); c && c->a.type().is_int()) {
      lower(c->a, plusOne(c->b));
      upper(c->b, minusOne(c->a));
    }
  }

  void visit(const IfThenElse *op) override {
    op->condition.accept(this);
    if (op->else_case.defined() && is_realize_invariant(op->condition)) {
      // One branch runs for the whole realize (a specialization): the box is the box of the branch
      // taken, not the union of both.
      Box before = std::move(Result);
      Result.clear();
      op->then_case.accept(this);
      Box thenBox = std::move(Result);
      Result.clear();
      op->else_case.accept(this);
      Box elseBox = std::move(Result);
      Result = std::move(before);
      if (thenBox.empty() || elseBox.empty() || thenBox.size() != elseBox.size()) {
        for (Box *b : {&thenBox, &elseBox})
          if (!b->empty())
            mergeBox(*b);
        return;
      }
      Box chosen(thenBox.size());
      for (size_t i = 0; i < thenBox.size(); ++i) {
        auto pick = [&](const Expr &t, const Expr &e) {
          return t.defined() && e.defined() ? Select::make(op->condition, t, e) : Expr();
        };
        chosen[i] = {pick(thenBox[i].min, elseBox[i].min), pick(thenBox[i].max, elseBox[i].max)};
      }
      mergeBox(chosen);
      return;
    }
    Scope saved = TheScope;
    const std::vector<std::pair<Expr, std::string>> guarded = GuardedExprs;
    narrow(op->condition, TheScope);
    op->then_case.accept(this);
    TheScope = saved;
    GuardedExprs = guarded;
    if (op->else_case.defined())
      op->else_case.accept(this);
  }
};

template <typename Node> Box box_touched(const Node &node, const BoxQuery &query, const Scope &scope) {
  if (!node.defined())
    return {};
  NeededLets needed(query);
  node.accept(&needed);
  BoxFinder finder(query, scope, needed.names());
  node.accept(&finder);
  return finder.Result;
}

} // namespace

Box box_touched(const Stmt &s, const BoxQuery &query, const Scope &scope) { return box_touched<Stmt>(s, query, scope); }

Box box_touched(const Expr &e, const BoxQuery &query, const Scope &scope) { return box_touched<Expr>(e, query, scope); }

} // namespace ptxjit::lower
