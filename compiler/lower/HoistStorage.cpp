#include "HoistStorage.h"

#include "ScheduleFunctions.h"
#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/ScopedEntry.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <map>
#include <optional>
#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

std::string describe(const LoopLevelContents &level) {
  return level.kind == LoopLevelContents::Root ? "root" : level.func + "." + level.var;
}

bool allocates(const Stmt &s, const std::set<std::string> &buffers) {
  struct Finder : IRVisitor {
    const std::set<std::string> &Buffers;
    bool Found = false;
    explicit Finder(const std::set<std::string> &b) : Buffers(b) {}
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
      Found = Found || Buffers.count(op->name) > 0;
      IRVisitor::visit(op);
    }
  } finder(buffers);
  s.accept(&finder);
  return finder.Found;
}

/// An allocation taken out of the statement, to be made again at the hoist level.
struct HoistedAllocation {
  Type type;
  MemoryType memory;
  StorageSide side;
  Expr size; // elements, bounded over every place it was allocated
};

// Removes the allocations of `buffers` from the statement it mutates (the body of the loop
// storage is hoisted to), bounding each one's size over the lets and loops between. The lets'
// values are substituted where small (so that x.max - x.min cancels); larger ones, and the
// loops, are bounded by their ranges.
class TakeAllocations : public IRMutator {
public:
  TakeAllocations(const std::set<std::string> &buffers, std::string func, std::string level)
      : Buffers(buffers), Func(std::move(func)), Level(std::move(level)) {}
  std::map<std::string, HoistedAllocation> Taken;

private:
  const std::set<std::string> &Buffers;
  const std::string Func, Level;
  std::map<std::string, Expr> LetValues;
  Scope Ranges;
  std::vector<std::string> Crossed;     // the lets and loops between the hoist level and here
  std::vector<std::string> SharedLoops; // crossed loops whose iterations run at once
  using IRMutator::visit;

  Expr expanded(const Expr &e) const { return substitute(LetValues, e); }

  template <typename Work> Stmt within(const std::string &name, Work work) {
    ScopedEntry<Expr> let(LetValues, name);
    ScopedEntry<Interval> range(Ranges, name);
    LetValues.erase(name);
    Ranges.erase(name);
    Crossed.push_back(name);
    Stmt result = work();
    Crossed.pop_back();
    return result;
  }

  Stmt visit(const LetStmt *op) override {
    Expr value = expanded(op->value);
    const bool large = has_more_nodes_than(value, MaxExpandedLetNodes);
    const Interval range = large ? bounds_of_expr_in_scope(value, Ranges) : Interval();
    Stmt body = within(op->name, [&] {
      if (large)
        Ranges[op->name] = range;
      else
        LetValues[op->name] = value;
      return mutate(op->body);
    });
    return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
  }

  Stmt visit(const For *op) override {
    if (!allocates(op->body, Buffers))
      return Stmt(op);
    Expr first = expanded(op->min), last = expanded(Sub::make(Add::make(op->min, op->extent), make_one(op->min.type())));
    const bool shared = op->for_type != ForType::Serial && op->for_type != ForType::Unrolled;
    const Interval range{bounds_of_expr_in_scope(first, Ranges).min, bounds_of_expr_in_scope(last, Ranges).max};
    Stmt body = within(op->name, [&] {
      Ranges[op->name] = range;
      if (shared)
        SharedLoops.push_back(op->name + " (" + to_string(op->for_type) + ")");
      Stmt result = mutate(op->body);
      if (shared)
        SharedLoops.pop_back();
      return result;
    });
    return For::make(op->name, op->min, op->extent, op->for_type, body);
  }

  Stmt visit(const Allocate *op) override {
    if (!Buffers.count(op->name))
      return IRMutator::visit(op);
    const std::string what = "hoist_storage of Func " + Func + " at " + Level;
    if (!SharedLoops.empty())
      throw CompileError(what + ": its storage would be shared by the iterations of loop " + SharedLoops.front() +
                         ", which run at once; hoist it to a loop inside that one");
    Expr size;
    for (const Expr &e : op->extents)
      size = size.defined() ? Mul::make(size, e) : e;
    Expr bound = bounds_of_expr_in_scope(simplify_for_bounds(expanded(size)), Ranges).max;
    if (bound.defined())
      bound = simplify(bound);
    for (const std::string &name : Crossed)
      if (bound.defined() && uses_variable(bound, name))
        bound = Expr();
    if (!bound.defined())
      throw CompileError(what + ": the size of its storage " + op->name + " (" + to_string(size) +
                         " elements) has no bound outside the loops between");
    auto [it, inserted] = Taken.emplace(op->name, HoistedAllocation{op->type, op->memory, op->side, bound});
    if (!inserted)
      it->second.size = simplify(Max::make(it->second.size, bound));
    return mutate(op->body);
  }
};

Stmt allocateAround(const Stmt &body, const std::map<std::string, HoistedAllocation> &taken) {
  Stmt result = body;
  for (const auto &[name, a] : taken)
    result = Allocate::make(name, a.type, {a.size}, result, a.memory, a.side);
  return result;
}

// Hoists the storage of one Func to the loops of its hoist level that hold it.
class HoistToLevel : public IRMutator {
public:
  HoistToLevel(const std::set<std::string> &buffers, const std::string &func, const LoopLevelContents &level)
      : Buffers(buffers), Func(func), Level(level) {}
  bool Hoisted = false;

private:
  const std::set<std::string> &Buffers;
  const std::string &Func;
  const LoopLevelContents &Level;
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    if (!is_stage_loop_of(op->name, Level) || !allocates(op->body, Buffers))
      return IRMutator::visit(op);
    TakeAllocations take(Buffers, Func, describe(Level));
    Stmt body = take.mutate(op->body);
    Hoisted = true;
    return For::make(op->name, op->min, op->extent, op->for_type, allocateAround(body, take.Taken));
  }
};

} // namespace

Stmt hoist_storage(const Stmt &s, const Environment &env) {
  Stmt result = s;
  for (const auto &[name, f] : env) {
    std::optional<LoopLevelContents> level = f->hoisted_at();
    if (!level)
      continue;
    std::set<std::string> buffers;
    for (size_t i = 0; i < f->types.size(); ++i)
      buffers.insert(value_buffer_name(f->name, static_cast<int>(i), f->types.size()));
    if (!allocates(result, buffers))
      throw CompileError("hoist_storage of Func " + f->name + " at " + describe(*level) +
                         ": it has no storage of its own to hoist (it is inlined or an output)");
    if (level->kind == LoopLevelContents::Root) {
      TakeAllocations take(buffers, f->name, "root");
      result = allocateAround(take.mutate(result), take.Taken);
      continue;
    }
    HoistToLevel hoist(buffers, f->name, *level);
    result = hoist.mutate(result);
    if (!hoist.Hoisted)
      throw CompileError("hoist_storage of Func " + f->name + " at " + describe(*level) +
                         ": that loop is not around its storage (stored at " + describe(f->stored_at()) +
                         "); hoist it to a loop at or outside the store level");
  }
  return result;
}

} // namespace ptxjit::lower
