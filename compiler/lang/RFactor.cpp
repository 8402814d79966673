// Stage::rfactor, as in Halide: an update f(...) = f(...) op e over an RDom becomes an
// intermediate Func that reduces over the RVars not preserved, one result for each value of the
// preserved ones (now pure Vars, so its loops over them may be parallel or GPU loops), and an
// update of f that combines those results over the preserved RVars. For example
//   f() = 0;  f() += g(r);  f.update().split(r, ro, ri, 64);  intm = f.update().rfactor(ro, u);
// makes intm(u) = 0; intm(u) += g(u * 64 + ri) where u * 64 + ri < extent, over ri; and f's
// update f() += intm(ro), over ro.

#include "ir/Constants.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Function.h"
#include "ptxjit/Func.h"
#include "ptxjit/IROperator.h"

#include <algorithm>
#include <set>

namespace ptxjit {

using namespace ir;

namespace {

using Combiner = ValueReduction::Combiner;

Expr combine(Combiner c, Expr old, Expr contribution) {
  switch (c) {
  case Combiner::Add:
    return old + contribution;
  case Combiner::Subtract:
    return old - contribution;
  case Combiner::Multiply:
    return old * contribution;
  case Combiner::Min:
    return min(old, contribution);
  case Combiner::Max:
    return max(old, contribution);
  case Combiner::And:
    return old && contribution;
  case Combiner::Or:
    return old || contribution;
  }
  return Expr();
}

// The combiner that merges partial results: a subtraction accumulates negated contributions,
// merged by adding.
Combiner mergeCombiner(Combiner c) { return c == Combiner::Subtract ? Combiner::Add : c; }

Expr identity(Combiner c, Type t) {
  switch (c) {
  case Combiner::Add:
  case Combiner::Subtract:
    return make_zero(t);
  case Combiner::Multiply:
    return make_one(t);
  case Combiner::Min:
    return make_highest(t);
  case Combiner::Max:
    return make_lowest(t);
  case Combiner::And:
    return make_bool(true);
  case Combiner::Or:
    return make_bool(false);
  }
  return Expr();
}

Expr plainVar(const std::string &name) { return Variable::make(Int(32), name); }

// The update's RVars after the stage's splits, fuses and renames of RVars: the loops the schedule made,
// each over [min, min + extent), and what the original RVars are in terms of them.
struct SplitDomain {
  std::vector<ReductionVariable> rvars;         // in the order the splits leave them, innermost first
  std::map<std::string, Expr> original;         // original RVar name -> expression of the new ones
  std::vector<Expr> predicates;                 // the points that exist (tails of splits)
  std::vector<Split> pureSplits;                // the splits of pure Vars, kept in the schedules
};

SplitDomain applyRVarSplits(const std::string &stage, const ReductionDomainContents &rdom,
                            const std::vector<Split> &splits) {
  SplitDomain s;
  s.rvars = rdom.domain;
  for (const ReductionVariable &rv : rdom.domain)
    s.original[rv.var] = plainVar(rv.var);
  auto find = [&](const std::string &name) {
    return std::find_if(s.rvars.begin(), s.rvars.end(), [&](const ReductionVariable &rv) { return rv.var == name; });
  };
  // Writes `name` as `value` in every original RVar's expression and every predicate.
  auto replace = [&](const std::string &name, const Expr &value) {
    for (auto &[original, e] : s.original)
      e = substitute(name, value, e);
    for (Expr &p : s.predicates)
      p = substitute(name, value, p);
  };
  for (const Split &split : splits) {
    if (split.kind == Split::SplitVar) {
      auto old = find(split.old_var);
      if (old == s.rvars.end()) {
        s.pureSplits.push_back(split);
        continue;
      }
      const ReductionVariable was = *old;
      const Expr factor = split.factor;
      const Expr outerExtent = simplify((was.extent + factor - 1) / factor);
      const Expr value = plainVar(split.outer) * factor + plainVar(split.inner) + was.min;
      const auto index = old - s.rvars.begin();
      s.rvars[static_cast<size_t>(index)] = {split.inner, make_zero(Int(32)), factor};
      s.rvars.insert(s.rvars.begin() + index + 1, {split.outer, make_zero(Int(32)), outerExtent});
      replace(split.old_var, value);
      if (!is_const_zero(simplify(was.extent % factor)))
        s.predicates.push_back(value < was.min + was.extent);
      continue;
    }
    if (split.kind == Split::RenameVar) {
      auto old = find(split.old_var);
      if (old == s.rvars.end()) {
        s.pureSplits.push_back(split);
        continue;
      }
      old->var = split.outer;
      replace(split.old_var, plainVar(split.outer));
      continue;
    }
    auto inner = find(split.inner), outer = find(split.outer);
    if (inner == s.rvars.end() && outer == s.rvars.end()) {
      s.pureSplits.push_back(split);
      continue;
    }
    if (inner == s.rvars.end() || outer == s.rvars.end())
      throw CompileError("rfactor of " + stage + ": the loop " + split.old_var + " fuses RVar and pure Var (" +
                         split.inner + ", " + split.outer + "); fuse RVars with RVars only");
    const ReductionVariable in = *inner, out = *outer;
    const Expr fused = plainVar(split.old_var);
    s.rvars.erase(outer);
    *find(in.var) = {split.old_var, make_zero(Int(32)), simplify(in.extent * out.extent)};
    std::map<std::string, Expr> values{{in.var, fused % in.extent + in.min}, {out.var, fused / in.extent + out.min}};
    for (auto &[original, e] : s.original)
      e = substitute(values, e);
    for (Expr &p : s.predicates)
      p = substitute(values, p);
  }
  return s;
}

Expr conjunction(const std::vector<Expr> &terms) {
  Expr all;
  for (const Expr &t : terms)
    all = all.defined() ? (all && t) : t;
  return all;
}

// A domain of `rvars`, restricted to `predicate` (in their plain names, as RDom::where keeps it).
std::shared_ptr<ReductionDomainContents> makeDomain(const std::string &name, std::vector<ReductionVariable> rvars,
                                                    Expr predicate) {
  if (rvars.empty())
    return nullptr;
  auto domain = std::make_shared<ReductionDomainContents>();
  domain->name = name;
  domain->domain = std::move(rvars);
  domain->predicate = std::move(predicate);
  return domain;
}

// The plain names of a domain's RVars as its RVar Exprs.
std::map<std::string, Expr> domainVariables(const std::shared_ptr<ReductionDomainContents> &domain) {
  std::map<std::string, Expr> vars;
  if (domain)
    for (const ReductionVariable &rv : domain->domain)
      vars[rv.var] = Variable::make(Int(32), rv.var, nullptr, domain);
  return vars;
}

// f_intm, as Halide names it; f_intm1, f_intm2, ... where f already reads earlier ones. Made
// from the definition, not a counter, so that the same program gets the same names (and finds
// its compiled code in the compile cache).
std::string intermediateName(const FunctionContents &f) {
  const std::string base = f.name + "_intm";
  std::set<std::string> taken;
  for (int s = 0; s < f.num_stages(); ++s)
    for (const Expr &value : f.stage(s).values)
      for (const auto &callee : called_functions(value))
        if (callee->name.rfind(base, 0) == 0)
          taken.insert(callee->name);
  for (size_t n = 0;; ++n)
    if (std::string name = n == 0 ? base : base + std::to_string(n); !taken.count(name))
      return name;
}

} // namespace

Func Stage::rfactor(const RVar &r, const Var &v) { return rfactor({{r, v}}); }

Func Stage::rfactor(const std::vector<std::pair<RVar, Var>> &preserved) {
  const std::string stage = name();
  if (Index == 0)
    throw CompileError("rfactor of " + stage + ": only update definitions can be factored");
  if (SpecializationIndex >= 0)
    throw CompileError("rfactor of " + stage + ": call rfactor on the update itself, not on a specialization");
  FunctionContents &f = *Function;
  Definition &d = f.stage(Index);
  if (!d.specializations.empty())
    throw CompileError("rfactor of " + stage + ": the update has specializations; call rfactor before specialize");
  if (!d.rdom)
    throw CompileError("rfactor of " + stage + ": the update has no RDom to factor");
  for (const Expr &arg : d.args)
    if (!calls_to(f.name, arg).empty())
      throw CompileError("rfactor of " + stage + ": an argument of the update reads " + f.name + " itself");
  std::vector<ValueReduction> reductions;
  for (size_t i = 0; i < d.values.size(); ++i) {
    auto r = match_reduction(f.name, d, i);
    if (!r)
      throw CompileError("rfactor of " + stage + ": value " + std::to_string(i) + " (" + ir::to_string(d.values[i]) +
                         ") is not " + f.name + "'s old value combined by +, -, *, min, max, && or || with an "
                         "expression that does not read " + f.name);
    reductions.push_back(*r);
  }

  SplitDomain split = applyRVarSplits(stage, *d.rdom, d.schedule.splits);
  std::map<std::string, std::string> preservedAs; // preserved RVar -> its pure Var in the intermediate
  std::set<std::string> pureNames(f.args.begin(), f.args.end());
  for (const Dim &dim : d.schedule.dims)
    if (!dim.is_rvar)
      pureNames.insert(dim.var);
  for (const auto &[rvar, var] : preserved) {
    auto dim = std::find_if(d.schedule.dims.begin(), d.schedule.dims.end(),
                            [&](const Dim &x) { return x.var == rvar.name(); });
    if (dim == d.schedule.dims.end() || !dim->is_rvar)
      throw CompileError("rfactor of " + stage + ": " + rvar.name() + " is not an RVar loop of " + stage);
    if (pureNames.count(var.name()))
      throw CompileError("rfactor of " + stage + ": Var " + var.name() + " already names a dimension of " + f.name);
    if (!preservedAs.emplace(rvar.name(), var.name()).second)
      throw CompileError("rfactor of " + stage + ": " + rvar.name() + " is preserved twice");
    pureNames.insert(var.name());
  }

  // The RVars the intermediate reduces over (lifted) and those f's update keeps, in the order of
  // the split domain; the preserved Vars follow f's dimensions in that order too.
  std::vector<ReductionVariable> lifted, kept;
  std::vector<std::string> intermediateVars;
  for (const ReductionVariable &rv : split.rvars) {
    if (auto p = preservedAs.find(rv.var); p != preservedAs.end()) {
      kept.push_back(rv);
      intermediateVars.push_back(p->second);
    } else {
      lifted.push_back(rv);
    }
  }

  // Everything in terms of the split domain's plain names, then of the new domains.
  std::map<std::string, Expr> toSplit;
  for (const auto &[original, e] : split.original)
    toSplit[original] = e;
  std::vector<Expr> predicates = split.predicates;
  if (d.predicate.defined())
    for (const Expr &term : conjuncts(substitute(toSplit, d.predicate)))
      predicates.push_back(term);
  std::map<std::string, Expr> keptAsVars;
  for (const auto &[rvar, var] : preservedAs)
    keptAsVars[rvar] = Var(var);

  std::vector<Expr> intermediatePredicates, mergePredicates;
  for (const Expr &p : predicates) {
    intermediatePredicates.push_back(substitute(keptAsVars, p));
    // As Halide: f's update keeps the conditions on its own RVars only (the intermediate holds
    // the identity at the other points anyway).
    if (std::none_of(lifted.begin(), lifted.end(), [&](const ReductionVariable &rv) { return uses_variable(p, rv.var); }))
      mergePredicates.push_back(p);
  }
  auto intermediateDomain = makeDomain(d.rdom->name + "_intm", lifted, conjunction(intermediatePredicates));
  auto mergeDomain = makeDomain(d.rdom->name + "_merge", kept, conjunction(mergePredicates));

  // The intermediate: f's dimensions and the preserved Vars, the identity, then the reduction
  // over the lifted RVars.
  auto contents = std::make_shared<FunctionContents>();
  contents->name = intermediateName(f);
  Func intermediate(contents);
  std::vector<Expr> pureArgs, intermediateArgs, identities;
  for (const std::string &a : f.args)
    pureArgs.push_back(Var(a));
  intermediateArgs = pureArgs;
  for (const std::string &v : intermediateVars)
    intermediateArgs.push_back(Var(v));
  for (size_t i = 0; i < reductions.size(); ++i)
    identities.push_back(identity(reductions[i].combiner, f.types[i]));
  intermediate(intermediateArgs) = Tuple(identities);

  std::map<std::string, Expr> toIntermediate = domainVariables(intermediateDomain);
  for (const auto &[rvar, var] : keptAsVars)
    toIntermediate[rvar] = var;
  for (const auto &[original, e] : toSplit)
    toIntermediate[original] = substitute(toIntermediate, e);
  std::vector<Expr> updateArgs;
  for (const Expr &a : d.args)
    updateArgs.push_back(substitute(toIntermediate, a));
  for (const std::string &v : intermediateVars)
    updateArgs.push_back(Var(v));
  FuncRef intermediateOld = intermediate(updateArgs);
  std::vector<Expr> updateValues;
  for (size_t i = 0; i < reductions.size(); ++i) {
    Expr old = intermediateOld[static_cast<int>(i)];
    updateValues.push_back(
        combine(reductions[i].combiner, old, substitute(toIntermediate, reductions[i].contribution)));
  }
  intermediate(updateArgs) = Tuple(updateValues);
  // With every RVar kept, a domain of one point carries the conditions (a split's tail), so that
  // they guard the whole update, the reads of its arguments too, as a domain's conditions do.
  std::optional<Dim> unitLoop;
  if (!intermediateDomain && !intermediatePredicates.empty()) {
    const std::string unit = d.rdom->name + "_intm.unit";
    Definition &update = contents->updates.at(0);
    update.rdom = makeDomain(d.rdom->name + "_intm", {{unit, make_zero(Int(32)), make_one(Int(32))}}, Expr());
    update.rdom->used = true;
    update.predicate = substitute(toIntermediate, conjunction(intermediatePredicates));
    unitLoop = Dim{unit, ForType::Serial, true};
  }
  if (!f.storage_dims.empty()) {
    contents->storage_dims = f.storage_dims;
    contents->storage_dims.insert(contents->storage_dims.end(), intermediateVars.begin(), intermediateVars.end());
  }

  // Its update is scheduled as this stage was: the preserved RVars' loops are its pure Vars'.
  StageSchedule intermediateSchedule;
  intermediateSchedule.splits = split.pureSplits;
  if (unitLoop)
    intermediateSchedule.dims.push_back(*unitLoop);
  for (Dim dim : d.schedule.dims) {
    if (auto p = preservedAs.find(dim.var); p != preservedAs.end())
      dim = {p->second, dim.for_type, false};
    intermediateSchedule.dims.push_back(dim);
  }
  contents->updates.at(0).schedule = intermediateSchedule;

  // This stage becomes f(x, ...) = f(x, ...) op intermediate(x, ..., kept RVars), over every
  // point of f's dimensions (an update of other points, as a histogram's, covers them all).
  std::map<std::string, Expr> toMerge = domainVariables(mergeDomain);
  std::vector<Expr> readArgs = pureArgs;
  for (const ReductionVariable &rv : kept)
    readArgs.push_back(toMerge.at(rv.var));
  FuncRef partial = intermediate(readArgs);
  Func self(Function);
  FuncRef old = self(pureArgs);
  std::vector<Expr> mergeValues;
  for (size_t i = 0; i < reductions.size(); ++i)
    mergeValues.push_back(combine(mergeCombiner(reductions[i].combiner), old[static_cast<int>(i)],
                                  partial[static_cast<int>(i)]));
  // The merge is defined where this update was: the updates after it wait aside, and all come
  // back as they were if the definition is refused.
  std::vector<Definition> later(f.updates.begin() + Index, f.updates.end());
  const Definition original = d;
  f.updates.resize(static_cast<size_t>(Index - 1));
  try {
    self(pureArgs) = Tuple(mergeValues);
  } catch (...) {
    f.updates.resize(static_cast<size_t>(Index - 1));
    f.updates.push_back(original);
    f.updates.insert(f.updates.end(), later.begin(), later.end());
    throw;
  }
  f.updates.insert(f.updates.end(), later.begin(), later.end());

  // The merge keeps this stage's loops but the lifted RVars', and loops over the dimensions of f
  // it did not have (outermost).
  StageSchedule &merge = f.stage(Index).schedule;
  merge.splits = split.pureSplits;
  merge.dims.clear();
  std::set<std::string> covered;
  for (const Dim &dim : original.schedule.dims) {
    const bool liftedLoop = dim.is_rvar && !preservedAs.count(dim.var);
    if (!liftedLoop)
      merge.dims.push_back(dim);
  }
  for (const Split &s : split.pureSplits) {
    covered.insert(s.old_var);
    covered.insert(s.inner);
    covered.insert(s.outer);
  }
  for (const Dim &dim : merge.dims)
    covered.insert(dim.var);
  for (const std::string &a : f.args)
    if (!covered.count(a))
      merge.dims.push_back({a, ForType::Serial, false});
  return intermediate;
}

} // namespace ptxjit
