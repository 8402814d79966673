#include "BoxesTouched.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

class BoxFinder : public IRVisitor {
public:
  BoxFinder(const BoxQuery &query, const Scope &scope) : Query(query), TheScope(scope) {}
  Box Result;

private:
  const BoxQuery &Query;
  Scope TheScope;

  using IRVisitor::visit;

  void merge(const std::vector<Expr> &args) {
    bool first = Result.empty();
    if (first)
      Result.resize(args.size());
    for (size_t i = 0; i < args.size() && i < Result.size(); ++i) {
      Interval b = bounds_of_expr_in_scope(args[i], TheScope);
      Result[i] = first ? b : interval_union(Result[i], b);
    }
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
    body.accept(this);
    if (saved)
      TheScope[name] = *saved;
    else
      TheScope.erase(name);
  }

  void visit(const LetStmt *op) override {
    op->value.accept(this);
    bind(op->name, bounds_of_expr_in_scope(op->value, TheScope), op->body);
  }

  void visit(const Let *op) override {
    op->value.accept(this);
    bind(op->name, bounds_of_expr_in_scope(op->value, TheScope), op->body);
  }

  void visit(const For *op) override {
    op->min.accept(this);
    op->extent.accept(this);
    Interval min = bounds_of_expr_in_scope(op->min, TheScope);
    Interval extent = bounds_of_expr_in_scope(op->extent, TheScope);
    Interval range{min.min, min.max.defined() && extent.max.defined()
                                ? simplify(Sub::make(Add::make(min.max, extent.max), make_one_like(min.max)))
                                : Expr()};
    bind(op->name, range, op->body);
  }

  static Expr make_one_like(const Expr &e) { return IntImm::make(e.type(), 1); }

  // Narrows variables tested by `condition` (conjunctions of var <= e, var < e, var >= e, var > e).
  void narrow(const Expr &condition, Scope &scope) {
    if (const auto *a = condition.as<And>()) {
      narrow(a->a, scope);
      narrow(a->b, scope);
      return;
    }
    auto upper = [&](const Expr &var, const Expr &limit) {
      const auto *v = var.as<Variable>();
      if (!v || !scope.count(v->name))
        return;
      Interval &i = scope[v->name];
      Interval l = bounds_of_expr_in_scope(limit, scope);
      if (l.max.defined())
        i.max = i.max.defined() ? simplify(Min::make(i.max, l.max)) : l.max;
    };
    auto lower = [&](const Expr &var, const Expr &limit) {
      const auto *v = var.as<Variable>();
      if (!v || !scope.count(v->name))
        return;
      Interval &i = scope[v->name];
      Interval l = bounds_of_expr_in_scope(limit, scope);
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
    Scope saved = TheScope;
    narrow(op->condition, TheScope);
    op->then_case.accept(this);
    TheScope = saved;
    if (op->else_case.defined())
      op->else_case.accept(this);
  }
};

} // namespace

Box box_touched(const Stmt &s, const BoxQuery &query, const Scope &scope) {
  BoxFinder finder(query, scope);
  if (s.defined())
    s.accept(&finder);
  return finder.Result;
}

Box box_touched(const Expr &e, const BoxQuery &query, const Scope &scope) {
  BoxFinder finder(query, scope);
  if (e.defined())
    e.accept(&finder);
  return finder.Result;
}

} // namespace ptxjit::lower
