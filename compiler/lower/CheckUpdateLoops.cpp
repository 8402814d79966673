#include "CheckUpdateLoops.h"

#include "ir/IREquality.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <map>
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
    } else if (it->kind == Split::RenameVar) {
      if (names.erase(it->outer))
        names.insert(it->old_var);
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

struct Update {
  const std::string &func;
  const Definition &definition;
  std::set<std::string> rvars;
  std::map<std::string, Expr> lets; // around the values, from common subexpression elimination
  std::vector<Expr> bodies;         // the values inside them
  // Reads of the values the update writes (not those it leaves undef(), which stay as they were
  // throughout it), in the values and in the arguments, lets substituted.
  std::vector<std::vector<Expr>> selfCalls;

  Update(const std::string &f, const Definition &d) : func(f), definition(d) {
    for (const ReductionVariable &rv : d.rdom->domain)
      rvars.insert(rv.var);
    for (const Expr &value : d.values)
      bodies.push_back(peel_lets(value, lets));
    std::vector<Expr> readers = d.values;
    readers.insert(readers.end(), d.args.begin(), d.args.end());
    if (d.predicate.defined())
      readers.push_back(d.predicate);
    for (size_t written = 0; written < d.values.size(); ++written) {
      if (is_undef(d.values[written]))
        continue;
      for (const Expr &e : readers)
        for (std::vector<Expr> &call : calls_to(f, e, static_cast<int>(written)))
          selfCalls.push_back(std::move(call));
    }
    for (std::vector<Expr> &call : selfCalls)
      for (Expr &arg : call)
        arg = substitute(lets, arg);
  }

  // Iterations with distinct values of `rvar` touch distinct points: some argument is one-to-one
  // in it, and every read of the Func has that same argument.
  bool slicedBy(const std::string &rvar) const {
    for (size_t j = 0; j < definition.args.size(); ++j) {
      if (!oneToOne(definition.args[j], rvar, rvars))
        continue;
      bool sameSlice = true;
      for (const std::vector<Expr> &call : selfCalls)
        sameSlice = sameSlice && call.size() == definition.args.size() && equal(call[j], definition.args[j]);
      if (sameSlice)
        return true;
    }
    return false;
  }

  bool slicedByAll(const std::set<std::string> &sources) const {
    for (const std::string &rvar : sources)
      if (!slicedBy(rvar))
        return false;
    return !sources.empty();
  }

  // Whether the order of the iterations cannot change the result: each value written is a
  // reduction (match_reduction) and the Func is read nowhere else; or the values read neither
  // the values written nor the RVars.
  bool orderIndependent() const {
    if (selfCalls.empty()) {
      for (const Expr &value : definition.values)
        if (mentionsAny(value, rvars))
          return false;
      return true;
    }
    if (selfCalls.size() != static_cast<size_t>(std::count_if(bodies.begin(), bodies.end(),
                                                               [](const Expr &b) { return !is_undef(b); })))
      return false;
    for (size_t i = 0; i < bodies.size(); ++i)
      if (!is_undef(bodies[i]) && !match_reduction(func, definition, i))
        return false;
    return true;
  }
};

std::string stageName(const std::string &func, int k) { return func + ".s" + std::to_string(k); }

void checkParallelLoops(const Update &u, int k) {
  if (u.definition.atomic || u.definition.schedule.allow_race_conditions)
    return;
  for (const Dim &dim : u.definition.schedule.dims) {
    if (!dim.is_rvar || dim.for_type == ForType::Serial || dim.for_type == ForType::Unrolled)
      continue;
    for (const std::string &rvar : sourceRVars(dim.var, u.definition.schedule, u.rvars))
      if (!u.slicedBy(rvar))
        throw CompileError("update " + stageName(u.func, k) + " runs its RVar loop " + dim.var + " as a " +
                           to_string(dim.for_type) + " loop, but its iterations may touch the same point of " +
                           u.func + " (no argument is a one-to-one function of " + rvar +
                           " that every read of " + u.func + " shares): a race. Make the update atomic() or keep "
                           "the loop serial (or allow_race_conditions() where the race is benign)");
  }
}

void checkReorderedLoops(const Update &u, int k) {
  const StageSchedule &schedule = u.definition.schedule;
  if (schedule.reordered_rvars.empty() || schedule.allow_race_conditions || u.orderIndependent())
    return;
  for (const auto &[a, b] : schedule.reordered_rvars) {
    if (u.slicedByAll(sourceRVars(a, schedule, u.rvars)) || u.slicedByAll(sourceRVars(b, schedule, u.rvars)))
      continue;
    throw CompileError("update " + stageName(u.func, k) + " reorders its RVar loops " + a + " and " + b +
                       ", which changes the order of its iterations and may change its result. Only an update "
                       "of the form " + u.func + "(...) = " + u.func + "(...) op e with op one of + - * min max && ||, "
                       "or one whose reordered iterations touch distinct points, may reorder its RVars");
  }
}

} // namespace

void check_update_loops(const Environment &env) {
  for (const auto &[name, f] : env)
    for (int k = 1; k < f->num_stages(); ++k) {
      const Definition &d = f->stage(k);
      if (!d.rdom)
        continue;
      // Each schedule the update may run under: its own and its specializations'.
      std::vector<Definition> scheduled(1, d);
      for (const Specialization &s : d.specializations) {
        scheduled.push_back(d);
        scheduled.back().schedule = s.schedule;
      }
      for (const Definition &variant : scheduled) {
        Update u(name, variant);
        checkParallelLoops(u, k);
        checkReorderedLoops(u, k);
      }
    }
}

} // namespace ptxjit::lower
