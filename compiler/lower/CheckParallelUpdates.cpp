#include "CheckParallelUpdates.h"

#include "ir/IRVisitor.h"

#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

bool mentionsAny(const Expr &e, const std::set<std::string> &names) {
  struct Finder : IRVisitor {
    const std::set<std::string> &Names;
    bool Found = false;
    explicit Finder(const std::set<std::string> &n) : Names(n) {}
    using IRVisitor::visit;
    void visit(const Variable *op) override { Found = Found || Names.count(op->name); }
  } finder(names);
  e.accept(&finder);
  return finder.Found;
}

// Whether distinct values of `rvar` give distinct values of `arg`, whatever the other RVars do:
// arg is rvar plus or minus something free of RVars.
bool oneToOne(const Expr &arg, const std::string &rvar, const std::set<std::string> &rvars) {
  if (const auto *v = arg.as<Variable>())
    return v->name == rvar;
  if (const auto *a = arg.as<Add>())
    return (oneToOne(a->a, rvar, rvars) && !mentionsAny(a->b, rvars)) ||
           (oneToOne(a->b, rvar, rvars) && !mentionsAny(a->a, rvars));
  if (const auto *s = arg.as<Sub>())
    return oneToOne(s->a, rvar, rvars) && !mentionsAny(s->b, rvars);
  return false;
}

// The RVars a loop of the stage iterates over: itself, or those it was split or fused from.
std::set<std::string> sourceRVars(const std::string &loop, const StageSchedule &schedule,
                                  const std::set<std::string> &rvars) {
  std::set<std::string> names = {loop};
  // Splits are recorded in order; walking them backwards maps each derived loop to its sources.
  for (auto it = schedule.splits.rbegin(); it != schedule.splits.rend(); ++it) {
    if (it->kind == Split::SplitVar) {
      if (names.count(it->outer) || names.count(it->inner)) {
        names.erase(it->outer);
        names.erase(it->inner);
        names.insert(it->old_var);
      }
    } else if (names.count(it->old_var)) {
      names.erase(it->old_var);
      names.insert(it->inner);
      names.insert(it->outer);
    }
  }
  std::set<std::string> result;
  for (const std::string &n : names)
    if (rvars.count(n))
      result.insert(n);
  return result;
}

} // namespace

void check_parallel_updates(const Environment &env) {
  for (const auto &[name, f] : env)
    for (int k = 1; k < f->num_stages(); ++k) {
      const Definition &d = f->stage(k);
      if (d.atomic || !d.rdom)
        continue;
      std::set<std::string> rvars;
      for (const ReductionVariable &rv : d.rdom->domain)
        rvars.insert(rv.var);
      for (const Dim &dim : d.schedule.dims) {
        if (!dim.is_rvar || dim.for_type == ForType::Serial || dim.for_type == ForType::Unrolled)
          continue;
        for (const std::string &rvar : sourceRVars(dim.var, d.schedule, rvars)) {
          bool disjoint = false;
          for (const Expr &arg : d.args)
            disjoint = disjoint || oneToOne(arg, rvar, rvars);
          if (!disjoint)
            throw CompileError("update " + name + ".s" + std::to_string(k) + " runs its RVar loop " + dim.var +
                               " as a " + to_string(dim.for_type) + " loop, but its iterations may write the "
                               "same point of " + name + " (it does not write at a one-to-one function of " +
                               rvar + "): a race. Make the update atomic() or keep the loop serial");
        }
      }
    }
}

} // namespace ptxjit::lower
