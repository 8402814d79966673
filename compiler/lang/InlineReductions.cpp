#include "ptxjit/InlineReductions.h"

#include "ir/Constants.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "lang/Function.h"
#include "lang/UniqueName.h"
#include "ptxjit/Func.h"
#include "ptxjit/IROperator.h"
#include "ptxjit/Var.h"

#include <functional>
#include <limits>
#include <set>
#include <vector>

namespace ptxjit {
namespace {

using namespace ir;

// The pure Vars an expression names, in order of first use, and the RDoms it uses.
class FreeVariables : public IRVisitor {
public:
  std::vector<std::string> Vars;
  std::set<std::shared_ptr<ReductionDomainContents>> Domains;

private:
  using IRVisitor::visit;
  void visit(const Variable *op) override {
    if (op->reduction_domain)
      Domains.insert(op->reduction_domain);
    else if (!op->param && Seen.insert(op->name).second)
      Vars.push_back(op->name);
  }
  std::set<std::string> Seen;
};

// The anonymous Func of `e`'s free Vars, its arguments, and the one RDom `e` uses.
struct ReductionFunc {
  Func func;
  std::vector<Expr> args;
  std::shared_ptr<ReductionDomainContents> domain;
};

ReductionFunc reductionFunc(const char *what, const Expr &e, const std::string &name) {
  if (!e.defined())
    throw CompileError(std::string(what) + " of an undefined Expr");
  FreeVariables free;
  e.accept(&free);
  if (free.Domains.size() != 1)
    throw CompileError(std::string(what) + "(" + ir::to_string(e) + ") needs exactly one RDom in its argument, not " +
                       std::to_string(free.Domains.size()));
  ReductionFunc r{Func(name.empty() ? unique_name(what) : name), {}, *free.Domains.begin()};
  r.func.contents()->inline_reduction = true;
  for (const std::string &var : free.Vars)
    r.args.push_back(Var(var));
  return r;
}

Expr inlineReduction(const char *what, const Expr &e, const std::string &name, const Expr &initial,
                     const std::function<Expr(Expr, Expr)> &combine) {
  ReductionFunc r = reductionFunc(what, e, name);
  r.func(r.args) = initial;
  r.func(r.args) = combine(r.func(r.args), e);
  return r.func(r.args);
}

// argmin and argmax: the coordinates of the first point `better` than the best so far, and its value.
Tuple argReduction(const char *what, const Expr &e, const std::string &name, const Expr &initial,
                   const std::function<Expr(Expr, Expr)> &better) {
  ReductionFunc r = reductionFunc(what, e, name);
  FuncRef best = r.func(r.args);
  std::vector<Expr> initials, updates;
  for (const ReductionVariable &rv : r.domain->domain) {
    initials.push_back(0);
    updates.push_back(Variable::make(Int(32), rv.var, nullptr, r.domain));
  }
  initials.push_back(initial);
  updates.push_back(e);
  best = Tuple(initials);
  const size_t valueIndex = updates.size() - 1;
  Expr improves = better(e, best[static_cast<int>(valueIndex)]);
  for (size_t i = 0; i < updates.size(); ++i)
    updates[i] = select(improves, updates[i], best[static_cast<int>(i)]);
  best = Tuple(updates);
  return Tuple(best);
}

} // namespace

Expr sum(Expr e, const std::string &name) {
  return inlineReduction("sum", e, name, e.defined() ? make_zero(e.type()) : Expr(),
                         [](Expr a, Expr b) { return a + b; });
}
Expr product(Expr e, const std::string &name) {
  return inlineReduction("product", e, name, e.defined() ? make_one(e.type()) : Expr(),
                         [](Expr a, Expr b) { return a * b; });
}
Expr minimum(Expr e, const std::string &name) {
  return inlineReduction("minimum", e, name, e.defined() ? make_highest(e.type()) : Expr(),
                         [](Expr a, Expr b) { return min(a, b); });
}
Expr maximum(Expr e, const std::string &name) {
  return inlineReduction("maximum", e, name, e.defined() ? make_lowest(e.type()) : Expr(),
                         [](Expr a, Expr b) { return max(a, b); });
}
Tuple argmin(Expr e, const std::string &name) {
  return argReduction("argmin", e, name, e.defined() ? make_highest(e.type()) : Expr(),
                      [](Expr value, Expr best) { return value < best; });
}
Tuple argmax(Expr e, const std::string &name) {
  return argReduction("argmax", e, name, e.defined() ? make_lowest(e.type()) : Expr(),
                      [](Expr value, Expr best) { return value > best; });
}

} // namespace ptxjit
