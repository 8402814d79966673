#include "ScheduleFunctions.h"

#include "BoundsInference.h"
#include "InjectPrefetches.h"
#include "InlineFunctions.h"
#include "ir/Constants.h"
#include "ptxjit/IROperator.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

std::string stagePrefix(const FunctionContents &f, int stage) {
  return f.name + ".s" + std::to_string(stage) + ".";
}

// Finds whether a statement or expression calls a Func.
class CallFinder : public IRVisitor {
public:
  explicit CallFinder(const std::string &name) : Name(name) {}
  bool Found = false;

private:
  const std::string &Name;
  using IRVisitor::visit;
  void visit(const Call *op) override {
    Found = Found || (op->call_type == Call::Halide && op->name == Name);
    IRVisitor::visit(op);
  }
};

bool calls(const Stmt &s, const std::string &name) {
  CallFinder finder(name);
  s.accept(&finder);
  return finder.Found;
}


// Rewrites the body of the first loop at `level` that calls `func` (or the whole statement
// at root) with `inject`.
class InjectAtLevel : public IRMutator {
public:
  InjectAtLevel(const LoopLevelContents &level, const std::string &func, std::function<Stmt(const Stmt &)> inject)
      : Level(level), Func(func), Inject(std::move(inject)) {}
  bool Injected = false;
  bool LoopExists = false;

private:
  const LoopLevelContents &Level;
  const std::string &Func;
  std::function<Stmt(const Stmt &)> Inject;
  using IRMutator::visit;

  // The branches of a specialization run one for the whole realize: each gets its own first loop.
  Stmt visit(const IfThenElse *op) override {
    if (Injected || !op->else_case.defined() || !is_realize_invariant(op->condition))
      return IRMutator::visit(op);
    Stmt thenCase = mutate(op->then_case);
    const bool injectedThen = Injected;
    Injected = false;
    Stmt elseCase = mutate(op->else_case);
    const bool injectedElse = Injected;
    Injected = injectedThen || injectedElse;
    if (injectedThen != injectedElse && calls(injectedThen ? op->else_case : op->then_case, Func))
      throw CompileError("Func " + Func + " is computed or stored at " + Level.func + "." + Level.var +
                         ", but one of the schedules " + Level.func + " is specialized to has no loop " + Level.var +
                         " around the uses (a split or fuse renamed it); use a loop every specialization keeps");
    return IfThenElse::make(op->condition, thenCase, elseCase);
  }

  Stmt visit(const For *op) override {
    if (Injected)
      return Stmt(op);
    if (is_stage_loop_of(op->name, Level)) {
      LoopExists = true;
      if (calls(op->body, Func) || containsProducer(op->body)) {
        Injected = true;
        return For::make(op->name, op->min, op->extent, op->for_type, Inject(op->body));
      }
    }
    return IRMutator::visit(op);
  }

  bool containsProducer(const Stmt &s) const {
    struct Finder : IRVisitor {
      const std::string &Name;
      bool Found = false;
      explicit Finder(const std::string &n) : Name(n) {}
      using IRVisitor::visit;
      void visit(const ProducerConsumer *op) override {
        Found = Found || (op->is_producer && op->name == Name);
        IRVisitor::visit(op);
      }
    } finder(Func);
    s.accept(&finder);
    return finder.Found;
  }
};

// The innermost loop around every use of `func` in `s`, outside vector loops, as a level (root
// where there is none): where an inline reduction is computed unless scheduled.
LoopLevelContents innermostLoopAround(const Stmt &s, const std::string &func) {
  struct Finder : IRVisitor {
    const std::string &Name;
    std::vector<const For *> Loops, Common;
    bool Found = false;
    explicit Finder(const std::string &n) : Name(n) {}
    using IRVisitor::visit;
    void visit(const For *op) override {
      Loops.push_back(op);
      IRVisitor::visit(op);
      Loops.pop_back();
    }
    void visit(const Call *op) override {
      IRVisitor::visit(op);
      if (op->call_type != Call::Halide || op->name != Name)
        return;
      if (!Found) {
        Common = Loops;
        Found = true;
        return;
      }
      size_t shared = 0;
      while (shared < Common.size() && shared < Loops.size() && Common[shared] == Loops[shared])
        ++shared;
      Common.resize(shared);
    }
  } finder(func);
  s.accept(&finder);
  for (auto it = finder.Common.rbegin(); it != finder.Common.rend(); ++it) {
    if ((*it)->for_type == ForType::Vectorized)
      continue;
    // Loop names are <func>.s<k>.<var>.
    const std::string &name = (*it)->name;
    const size_t funcEnd = name.find('.'), stageEnd = name.find('.', funcEnd + 1);
    if (funcEnd == std::string::npos || stageEnd == std::string::npos)
      continue;
    return {LoopLevelContents::At, name.substr(0, funcEnd), name.substr(stageEnd + 1)};
  }
  return {LoopLevelContents::Root, "", ""};
}

std::string describe(const LoopLevelContents &level) {
  return level.kind == LoopLevelContents::Root ? "root" : level.func + "." + level.var;
}

Stmt injectAt(const Stmt &s, const LoopLevelContents &level, const std::string &func, const char *what,
              const std::function<Stmt(const Stmt &)> &inject) {
  if (level.kind == LoopLevelContents::Root)
    return inject(s);
  InjectAtLevel injector(level, func, inject);
  Stmt result = injector.mutate(s);
  if (!injector.Injected) {
    if (!injector.LoopExists)
      throw CompileError("Func " + func + " is " + what + " at " + describe(level) + ", but " + level.func +
                         " has no loop " + level.var + " in this pipeline");
    throw CompileError("Func " + func + " is " + what + " at " + describe(level) + ", but that loop is not an "
                       "ancestor of the uses of " + func + " (" + level.func + " does not call " + func +
                       " inside it)");
  }
  return result;
}

// Checks that every use of `func` lies inside its realization.
class UsesOutsideRealization : public IRVisitor {
public:
  explicit UsesOutsideRealization(const std::string &name) : Name(name) {}
  bool Found = false;
  /// A definition of the Func (in its produce) is outside the storage: stored inside the loop it
  /// is computed at, rather than used elsewhere.
  bool ProducedOutside = false;
  /// A parallel or GPU loop between the storage and the produce: its iterations would all write
  /// the one buffer, computing overlapping regions at once.
  std::string ParallelBetween;

private:
  const std::string &Name;
  int Depth = 0;
  std::vector<std::string> ParallelLoops; // inside the storage, outside the produce
  using IRVisitor::visit;
  void visit(const Realize *op) override {
    if (op->name != Name)
      return IRVisitor::visit(op);
    ++Depth;
    std::vector<std::string> outer = std::move(ParallelLoops);
    ParallelLoops.clear();
    IRVisitor::visit(op);
    ParallelLoops = std::move(outer);
    --Depth;
  }
  void visit(const For *op) override {
    const bool parallel = Depth > 0 && (op->for_type == ForType::Parallel || is_gpu(op->for_type));
    if (parallel)
      ParallelLoops.push_back(op->name);
    IRVisitor::visit(op);
    if (parallel)
      ParallelLoops.pop_back();
  }
  void visit(const ProducerConsumer *op) override {
    if (op->is_producer && op->name == Name) {
      if (Depth > 0 && !ParallelLoops.empty() && ParallelBetween.empty())
        ParallelBetween = ParallelLoops.front();
      // The Func's own loops may be parallel.
      std::vector<std::string> outer = std::move(ParallelLoops);
      ParallelLoops.clear();
      IRVisitor::visit(op);
      ParallelLoops = std::move(outer);
      return;
    }
    IRVisitor::visit(op);
  }
  void visit(const Call *op) override {
    Found = Found || (op->call_type == Call::Halide && op->name == Name && Depth == 0);
    IRVisitor::visit(op);
  }
  void visit(const Provide *op) override {
    Found = Found || (op->name == Name && Depth == 0);
    ProducedOutside = ProducedOutside || (op->name == Name && Depth == 0);
    IRVisitor::visit(op);
  }
};

} // namespace

bool is_stage_loop_of(const std::string &loop, const LoopLevelContents &level) {
  // Loop names are <func>.s<k>.<var>
  const std::string prefix = level.func + ".s";
  if (loop.compare(0, prefix.size(), prefix) != 0)
    return false;
  size_t dot = loop.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size())
    return false;
  for (size_t i = prefix.size(); i < dot; ++i)
    if (!std::isdigit(static_cast<unsigned char>(loop[i])))
      return false;
  return loop.compare(dot + 1, std::string::npos, level.var) == 0;
}

namespace {

// The loop nest of one stage under one of its schedules.
Stmt buildLoopNest(const FunctionContents &f, int stageIndex, const StageSchedule &schedule,
                   std::vector<Stmt> *outputChecks) {
  const Definition &d = f.stage(stageIndex);
  const std::string prefix = stagePrefix(f, stageIndex);

  // Variables split or fused away are lets defined from the loops that replace them. A let never
  // takes the name of a loop or of another let: a schedule may name a new loop after the
  // variable it splits (split(x, x, xi)) or after one split away earlier (split(x, xo, xi) then
  // split(xi, xi, x)), and a binding hiding another of its name inside one loop nest is what
  // later passes, substituting values across bindings, would get wrong. Loops keep their names
  // (prefix + the dimension's), which loop levels refer to.
  std::set<std::string> taken;
  for (const Dim &dim : schedule.dims)
    taken.insert(prefix + dim.var);
  std::map<std::pair<size_t, std::string>, std::string> letNames; // (split, variable) -> let
  for (size_t k = 0; k < schedule.splits.size(); ++k) {
    const Split &s = schedule.splits[k];
    std::vector<std::string> defined = s.kind == Split::FuseVars ? std::vector<std::string>{s.inner, s.outer}
                                                                 : std::vector<std::string>{s.old_var};
    for (const std::string &v : defined) {
      std::string name = prefix + v;
      if (!taken.insert(name).second)
        taken.insert(name += ".split" + std::to_string(k));
      letNames[{k, v}] = name;
    }
  }
  // The binding of variable `v` as split `k` makes it (k = -1: the definition's own): the let of
  // the first later split that replaces it, else its loop.
  auto binding = [&](const std::string &v, int k) {
    for (size_t j = static_cast<size_t>(k + 1); j < schedule.splits.size(); ++j)
      if (auto it = letNames.find({j, v}); it != letNames.end())
        return var(it->second);
    return var(prefix + v);
  };

  // Pure Vars and RVars become this stage's loop variables, or lets of them.
  std::map<std::string, Expr> renames;
  for (const std::string &a : f.args)
    renames[a] = binding(a, -1);
  if (d.rdom)
    for (const ReductionVariable &rv : d.rdom->domain)
      renames[rv.var] = binding(rv.var, -1);
  std::vector<Expr> args;
  for (const Expr &a : d.args)
    args.push_back(substitute(renames, a));
  std::vector<Expr> values;
  for (const Expr &value : d.values)
    values.push_back(substitute(renames, value));
  Stmt body = Provide::make(f.name, values, args, d.atomic);
  // One condition inside another, so that each guards what the next reads: a split's tail
  // (first) keeps a where() condition from reading past the domain, as the update does.
  if (d.predicate.defined()) {
    const std::vector<Expr> terms = conjuncts(substitute(renames, d.predicate));
    for (auto term = terms.rbegin(); term != terms.rend(); ++term)
      body = IfThenElse::make(*term, body);
  }

  // Each loop's bounds are lets named <base>.loop_min/loop_extent/loop_max. A split may name a new
  // loop after a variable that had bounds already: the old one (split(x, x, xi)) or one split
  // away earlier (split(x, xo, xi) then split(xi, xi, x)). The new loop then gets a base of its
  // own, so that the earlier variable's bounds stay what its guard and let read.
  std::map<std::string, std::string> base;
  std::set<std::string> bounded; // the bases defined so far
  for (const std::string &a : f.args)
    bounded.insert(base[a] = prefix + a);
  if (d.rdom)
    for (const ReductionVariable &rv : d.rdom->domain)
      bounded.insert(base[rv.var] = prefix + rv.var);
  auto baseOf = [&](const std::string &name) {
    auto it = base.find(name);
    return it != base.end() ? it->second : prefix + name;
  };
  struct SplitBases {
    std::string old_var, outer, inner;
  };
  std::vector<SplitBases> splitBases;
  for (size_t k = 0; k < schedule.splits.size(); ++k) {
    const Split &s = schedule.splits[k];
    auto fresh = [&](const std::string &name) {
      std::string b = prefix + name;
      if (!bounded.insert(b).second)
        bounded.insert(b += ".split" + std::to_string(k));
      return base[name] = b;
    };
    SplitBases b;
    if (s.kind == Split::SplitVar) {
      b.old_var = baseOf(s.old_var);
      b.outer = fresh(s.outer);
      b.inner = fresh(s.inner);
    } else if (s.kind == Split::RenameVar) {
      b.old_var = baseOf(s.old_var);
      b.outer = fresh(s.outer);
    } else {
      b.inner = baseOf(s.inner);
      b.outer = baseOf(s.outer);
      b.old_var = fresh(s.old_var);
    }
    splitBases.push_back(b);
  }
  auto bound = [](const std::string &b, const char *field) { return var(b + "." + field); };

  // Each split variable is defined from its outer and inner loops; later splits define the
  // variables earlier ones use, so they go outside. Points past the end of a split loop are
  // skipped by a guard just inside the let that defines the variable: a later split may reuse
  // the name, and the guard must test this one.
  for (size_t k = 0; k < schedule.splits.size(); ++k) {
    const Split &s = schedule.splits[k];
    const SplitBases &b = splitBases[k];
    if (s.kind == Split::SplitVar) {
      const Expr self = var(letNames.at({k, s.old_var}));
      Expr start = binding(s.outer, int(k)) * s.factor + bound(b.old_var, "loop_min");
      if (s.tail == TailStrategy::ShiftInward) {
        start = min(start, bound(b.old_var, "loop_max") + 1 - s.factor);
      } else if (s.tail != TailStrategy::RoundUp) {
        body = IfThenElse::make(LE::make(self, bound(b.old_var, "loop_max")), body);
      }
      body = LetStmt::make(self.as<Variable>()->name, start + binding(s.inner, int(k)), body);
    } else if (s.kind == Split::RenameVar) {
      body = LetStmt::make(letNames.at({k, s.old_var}), binding(s.outer, int(k)), body);
    } else {
      // The clamps never bind; they let bounds inference see each variable's exact range. The
      // max goes outside: a loop's region may be empty (min past max) in iterations of outer
      // loops, and the union over them must then stay within the maxes.
      Expr fused = binding(s.old_var, int(k));
      Expr innerExtent = bound(b.inner, "loop_extent");
      Expr inner = min(max(Mod::make(fused, innerExtent) + bound(b.inner, "loop_min"), bound(b.inner, "loop_min")),
                       bound(b.inner, "loop_max"));
      Expr outer = min(max(Div::make(fused, innerExtent) + bound(b.outer, "loop_min"), bound(b.outer, "loop_min")),
                       bound(b.outer, "loop_max"));
      body = LetStmt::make(letNames.at({k, s.inner}), inner, body);
      body = LetStmt::make(letNames.at({k, s.outer}), outer, body);
    }
  }

  // Prefetch placeholders first in the body of their loops (see InjectPrefetches.h).
  auto dimIndex = [&](const PrefetchDirective &p, const std::string &v) {
    auto it = std::find_if(schedule.dims.begin(), schedule.dims.end(), [&](const Dim &d) { return d.var == v; });
    if (it == schedule.dims.end())
      throw CompileError("prefetch of " + p.name + " in " + f.name + ".s" + std::to_string(stageIndex) + ": " + v +
                         " is no longer one of its loops (a later split, fuse or rename replaced it)");
    return it - schedule.dims.begin();
  };
  for (const PrefetchDirective &p : schedule.prefetches)
    if (dimIndex(p, p.from) < dimIndex(p, p.at))
      throw CompileError("prefetch of " + p.name + " in " + f.name + ".s" + std::to_string(stageIndex) + ": loop " +
                         p.from + " is now inside loop " + p.at + " (a later reorder); it must be the same loop or "
                         "one outside it");
  for (const Dim &dim : schedule.dims) {
    for (const PrefetchDirective &p : schedule.prefetches)
      if (p.at == dim.var)
        body = Block::make(prefetch_placeholder(p, prefix + p.at, prefix + p.from), body);
    body = For::make(prefix + dim.var, bound(baseOf(dim.var), "loop_min"), bound(baseOf(dim.var), "loop_extent"),
                     dim.for_type, body);
  }
  // Var::outermost(): a level to compute other Funcs at, around every loop; simplification
  // removes the loop.
  body = For::make(prefix + OutermostLoop, 0, 1, ForType::Serial, body);
  // A shifted tail starts at the region's max less the factor; where the region is empty (min past
  // max, in iterations of outer loops whose consumers need nothing) the split loop runs no
  // iteration. Said as a guard, bounds inference sees that too: otherwise the shift reaches below
  // the min by more than the factor.
  for (size_t k = 0; k < schedule.splits.size(); ++k)
    if (schedule.splits[k].kind == Split::SplitVar && schedule.splits[k].tail == TailStrategy::ShiftInward)
      body = IfThenElse::make(GE::make(bound(splitBases[k].old_var, "loop_max"), bound(splitBases[k].old_var, "loop_min")),
                              body);
  // A fused loop's iterations are points of its parts where both are non-empty (the product of
  // two negative extents is positive). Said as a guard, bounds inference narrows their maxes by
  // it: an inner extent computed per iteration of an outer loop is otherwise bounded apart from
  // the min it is relative to, and the clamps' lower ends drop below the loops' mins. Around the
  // whole nest, it also holds for the Funcs computed inside (a slice of registers a thread keeps
  // in a fused block loop has a constant size where it does).
  for (size_t k = 0; k < schedule.splits.size(); ++k)
    if (schedule.splits[k].kind == Split::FuseVars)
      body = IfThenElse::make(
          And::make(GE::make(bound(splitBases[k].inner, "loop_max"), bound(splitBases[k].inner, "loop_min")),
                    GE::make(bound(splitBases[k].outer, "loop_max"), bound(splitBases[k].outer, "loop_min"))),
          body);

  // Loop bounds, outermost first: the region or RDom, then each split's loops.
  std::vector<std::pair<std::string, Expr>> lets;
  // A known max is used as it is: recomputed from min and extent, bounds inference would see
  // min - min as a range instead of 0 (shifted tails are bounded by the loop's max).
  auto defineLoop = [&](const std::string &b, Expr min, Expr extent, Expr max = Expr()) {
    lets.emplace_back(b + ".loop_min", min);
    lets.emplace_back(b + ".loop_extent", extent);
    lets.emplace_back(b + ".loop_max", max.defined() ? max : bound(b, "loop_min") + bound(b, "loop_extent") - 1);
  };
  for (size_t i = 0; i < d.args.size(); ++i)
    if (const auto *v = d.args[i].as<Variable>(); v && v->name == f.args[i]) {
      Expr min = var(prefix + v->name + ".min"), max = var(prefix + v->name + ".max");
      defineLoop(prefix + v->name, min, max - min + 1, max);
    }
  if (d.rdom)
    for (const ReductionVariable &rv : d.rdom->domain)
      defineLoop(prefix + rv.var, substitute(renames, rv.min), substitute(renames, rv.extent));
  for (size_t k = 0; k < schedule.splits.size(); ++k) {
    const Split &s = schedule.splits[k];
    const SplitBases &b = splitBases[k];
    if (s.kind == Split::SplitVar) {
      defineLoop(b.outer, 0, (bound(b.old_var, "loop_extent") + s.factor - 1) / s.factor);
      defineLoop(b.inner, 0, s.factor);
    } else if (s.kind == Split::RenameVar) {
      defineLoop(b.outer, bound(b.old_var, "loop_min"), bound(b.old_var, "loop_extent"), bound(b.old_var, "loop_max"));
    } else {
      defineLoop(b.old_var, 0, bound(b.inner, "loop_extent") * bound(b.outer, "loop_extent"));
    }
  }
  // The output's region is the buffer's: a shifted tail must not start before it. The checks are
  // stated over the stage's region (the loop bounds substituted), to run before anything else.
  if (outputChecks)
    for (size_t k = 0; k < schedule.splits.size(); ++k) {
      const Split &s = schedule.splits[k];
      if (s.kind != Split::SplitVar || (s.tail != TailStrategy::ShiftInward && s.tail != TailStrategy::RoundUp))
        continue;
      Expr extent = bound(splitBases[k].old_var, "loop_extent");
      for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        extent = substitute(it->first, it->second, extent);
      if (s.tail == TailStrategy::ShiftInward)
        outputChecks->push_back(AssertStmt::make(GE::make(extent, s.factor),
                                                 "output " + f.name + " has extent % in " + s.old_var +
                                                     ", less than the factor % of its split with "
                                                     "TailStrategy::ShiftInward; make the output at least that "
                                                     "large or use GuardWithIf",
                                                 {extent, s.factor}));
      else
        outputChecks->push_back(AssertStmt::make(EQ::make(Mod::make(extent, s.factor), make_zero(extent.type())),
                                                 "output " + f.name + " has extent % in " + s.old_var +
                                                     ", not a multiple of the factor % of its split with "
                                                     "TailStrategy::RoundUp, which would write past its end; use "
                                                     "GuardWithIf",
                                                 {extent, s.factor}));
    }
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = LetStmt::make(it->first, it->second, body);
  // A factor known only at run time (a Param) that is not positive would make the split's loops
  // empty: the stage would compute nothing, silently.
  std::vector<Stmt> factorChecks;
  for (const Split &s : schedule.splits)
    if (s.kind == Split::SplitVar && !is_const(s.factor))
      factorChecks.push_back(AssertStmt::make(GT::make(s.factor, 0),
                                              "split of " + prefix + s.old_var + " into " + s.outer + " and " +
                                                  s.inner + ": its factor " + to_string(s.factor) +
                                                  " is %, but it must be positive",
                                              {s.factor}));
  return factorChecks.empty() ? body : Block::make(Block::make(factorChecks), body);
}

} // namespace

Stmt build_stage_loop_nest(const FunctionContents &f, int stageIndex, std::vector<Stmt> *outputChecks) {
  const Definition &d = f.stage(stageIndex);
  // Each schedule's nest runs where its condition holds and no earlier one's does; the checks an
  // output's nest needs hold under the same condition.
  std::vector<Stmt> defaultChecks;
  Stmt result = d.specialize_fail ? AssertStmt::make(make_bool(false), *d.specialize_fail, {})
                                  : buildLoopNest(f, stageIndex, d.schedule, outputChecks ? &defaultChecks : nullptr);
  Expr noneHolds;
  for (const Specialization &s : d.specializations)
    noneHolds = noneHolds.defined() ? And::make(noneHolds, Not::make(s.condition)) : Not::make(s.condition);
  auto guarded = [](const std::vector<Stmt> &checks, const Expr &condition) {
    return condition.defined() ? IfThenElse::make(condition, Block::make(checks)) : Block::make(checks);
  };
  if (outputChecks && !defaultChecks.empty())
    outputChecks->push_back(guarded(defaultChecks, noneHolds));
  std::vector<Stmt> nests;
  Expr earlierHold;
  for (const Specialization &s : d.specializations) {
    std::vector<Stmt> checks;
    nests.push_back(buildLoopNest(f, stageIndex, s.schedule, outputChecks ? &checks : nullptr));
    if (!checks.empty())
      outputChecks->push_back(guarded(checks, earlierHold.defined() ? And::make(s.condition, Not::make(earlierHold))
                                                                    : s.condition));
    earlierHold = earlierHold.defined() ? Or::make(earlierHold, s.condition) : s.condition;
  }
  for (size_t i = nests.size(); i-- > 0;)
    result = IfThenElse::make(d.specializations[i].condition, nests[i], result);
  return result;
}

Stmt schedule_functions(const Outputs &outputs, const Environment &env, const std::vector<std::string> &order,
                        CallBounds &funcValues) {
  std::map<std::string, std::vector<Stmt>> outputChecks;
  for (const auto &output : outputs)
    if (output->computed_at().kind == LoopLevelContents::At || output->stored_at().kind == LoopLevelContents::At)
      throw CompileError("Func " + output->name + " is an output of the pipeline and cannot be computed or stored "
                         "at another Func's loop");
  auto isOutput = [&](const FunctionContents &f) {
    return std::any_of(outputs.begin(), outputs.end(), [&](const auto &o) { return o.get() == &f; });
  };

  Stmt result;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const FunctionContents &f = *env.at(*it);
    if (isOutput(f)) {
      // At root over its buffer, before what follows (which may read it).
      std::vector<Stmt> stages;
      for (int s = 0; s < f.num_stages(); ++s)
        stages.push_back(build_stage_loop_nest(f, s, &outputChecks[f.name]));
      Stmt produce = ProducerConsumer::make(f.name, true, Block::make(stages));
      if (result.defined()) {
        // The root level's lets stay leading.
        auto [lets, consumer] = peel_lets(result);
        result = wrap_in_lets(lets, Block::make(produce, ProducerConsumer::make(f.name, false,
                                                                                 check_output_reads(f, consumer, funcValues))));
      } else {
        result = produce;
      }
      continue;
    }
    // A Func read only by values of an inlined Tuple that nothing reads is not computed.
    if (!calls(result, f.name))
      continue;
    LoopLevelContents compute = f.computed_at(), store = f.stored_at();
    if (f.inline_reduction && !f.compute_level_set) {
      compute = innermostLoopAround(result, f.name);
      if (!f.store_level_set)
        store = compute;
    }
    if (compute.kind == LoopLevelContents::Inlined) {
      if (f.store_level_set && store.kind != LoopLevelContents::Inlined)
        throw CompileError("Func " + f.name + " is computed inline and cannot be stored at " + describe(store));
      for (int s = 0; s < f.num_stages(); ++s)
        if (!f.stage(s).specializations.empty())
          throw CompileError("Func " + f.name + " is computed inline, where its specializations' schedules have no "
                             "loops to apply to; compute it at root or at a loop of its consumer");
      result = inline_function(result, f);
      continue;
    }
    if (store.kind == LoopLevelContents::Inlined)
      store = compute;
    for (const auto &[level, what] : {std::pair{compute, "computed"}, std::pair{store, "stored"}})
      if (level.kind == LoopLevelContents::At && level.func == f.name)
        throw CompileError("Func " + f.name + " is " + what + " at " + describe(level) + ", a loop of its own");
    if (compute.kind == LoopLevelContents::At && env.count(compute.func) == 0)
      throw CompileError("Func " + f.name + " is computed at " + describe(compute) + ", but " + compute.func +
                         " is not part of this pipeline");
    if (store.kind == LoopLevelContents::At && env.count(store.func) == 0)
      throw CompileError("Func " + f.name + " is stored at " + describe(store) + ", but " + store.func +
                         " is not part of this pipeline");

    result = injectAt(result, compute, f.name, "computed", [&](const Stmt &level) {
      std::vector<Stmt> stageNests;
      for (int s = 0; s < f.num_stages(); ++s)
        stageNests.push_back(build_stage_loop_nest(f, s, nullptr));
      return define_compute_bounds(f, ProducerConsumer::make(f.name, true, Block::make(stageNests)), level, funcValues);
    });
    result = injectAt(result, store, f.name, "stored", [&](const Stmt &body) { return realize_with_bounds(f, body, funcValues); });

    UsesOutsideRealization outside(f.name);
    result.accept(&outside);
    if (outside.ProducedOutside)
      throw CompileError("Func " + f.name + " is stored at " + describe(store) + ", inside the loop it is computed at (" +
                         describe(compute) + "); store it at that loop or further out");
    if (outside.Found)
      throw CompileError("Func " + f.name + " is computed at " + describe(compute) + " and stored at " +
                         describe(store) + ", but it is also used outside that loop; compute it further out");
    if (!outside.ParallelBetween.empty())
      throw CompileError("Func " + f.name + " is stored at " + describe(store) + ", outside the parallel loop " +
                         outside.ParallelBetween + ", but computed inside it at " + describe(compute) +
                         ": the loop's iterations would race on its storage; store it inside that loop");
  }
  // The outputs' regions, then the root level's lets in their names, around the checks of every
  // output's schedule (stated over its region) and the pipeline.
  auto [rootLets, body] = peel_lets(result);
  Lets lets;
  std::vector<Stmt> checks;
  for (const auto &output : outputs) {
    const std::vector<Stmt> &scheduleChecks = outputChecks[output->name];
    checks.insert(checks.end(), scheduleChecks.begin(), scheduleChecks.end());
    define_output_bounds(*output, funcValues, lets, checks);
  }
  lets.insert(lets.end(), rootLets.begin(), rootLets.end());
  return wrap_in_lets(lets, Block::make(Block::make(checks), body));
}

} // namespace ptxjit::lower
