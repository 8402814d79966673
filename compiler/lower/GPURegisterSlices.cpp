#include "GPURegisterSlices.h"

#include "RewriteFuncAccesses.h"
#include "ir/Constants.h"
#include "ir/GPULoops.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Interval.h"
#include "ir/ScopedEntry.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

Expr threadIndex(int dim) { return Variable::make(Int(32), std::string("__thread_index.") + "xyz"[dim]); }

// One access of the Func, its box in terms of the thread's index.
struct Access {
  std::string what; // "out reads it", for errors
  bool writes;
  std::vector<Interval> box;
  std::vector<Expr> guards; // integers the conditions around it make non-negative
};

// Adds to `nonNegative` what integer comparisons `condition` asserts, as differences that are
// at least zero: a >= b as a - b, a < b as b - a - 1; conjunctions part by part.
void learnGuard(const Expr &condition, std::vector<Expr> &nonNegative) {
  auto integers = [](const Expr &a) { return a.type().is_scalar() && (a.type().is_int() || a.type().is_uint()); };
  auto atLeast = [&](const Expr &big, const Expr &small, int64_t gap) {
    if (integers(big) && big.type() == small.type())
      nonNegative.push_back(simplify(Sub::make(Sub::make(big, small), make_const(big.type(), gap))));
  };
  if (const auto *op = condition.as<And>()) {
    learnGuard(op->a, nonNegative);
    learnGuard(op->b, nonNegative);
  } else if (const auto *op = condition.as<GE>()) {
    atLeast(op->a, op->b, 0);
  } else if (const auto *op = condition.as<LE>()) {
    atLeast(op->b, op->a, 0);
  } else if (const auto *op = condition.as<GT>()) {
    atLeast(op->a, op->b, 1);
  } else if (const auto *op = condition.as<LT>()) {
    atLeast(op->b, op->a, 1);
  } else if (const auto *op = condition.as<EQ>()) {
    atLeast(op->a, op->b, 0);
    atLeast(op->b, op->a, 0);
  }
}

// `e` with the mins and maxes whose larger side the guards decide replaced by that side.
class AssumeGuards : public IRMutator {
public:
  explicit AssumeGuards(const std::vector<Expr> &nonNegative) : NonNegative(nonNegative) {}

private:
  const std::vector<Expr> &NonNegative;

  // Whether a >= b follows from a guard g >= 0: a - b - g is a constant of at least zero.
  bool atLeast(const Expr &a, const Expr &b) const {
    Expr difference = simplify(Sub::make(a, b));
    if (auto c = as_const_int(difference))
      return *c >= 0;
    return std::any_of(NonNegative.begin(), NonNegative.end(), [&](const Expr &g) {
      auto c = g.type() == difference.type() ? as_const_int(simplify(Sub::make(difference, g))) : std::nullopt;
      return c && *c >= 0;
    });
  }

  using IRMutator::visit;
  Expr visit(const Min *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return atLeast(b, a) ? a : atLeast(a, b) ? b : Min::make(a, b);
  }
  Expr visit(const Max *op) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return atLeast(a, b) ? a : atLeast(b, a) ? b : Max::make(a, b);
  }
};

[[noreturn]] void refuse(const std::string &func, const std::string &why) {
  throw CompileError("Func " + func + " is stored in registers at a gpu_blocks loop, where each thread keeps its own "
                     "slice, but " + why);
}

class SliceFinder : public IRVisitor {
public:
  SliceFinder(const std::string &func, const std::map<std::string, int> &dims,
              const std::map<std::string, Expr> &outerLets, const std::string &producer,
              const std::vector<Expr> &outerGuards)
      : Func(func), Dims(dims), LetValues(outerLets), Producer(producer), Guards(outerGuards) {}
  std::vector<Access> Accesses;

private:
  const std::string &Func;
  const std::map<std::string, int> &Dims;
  std::map<std::string, Expr> LetValues;   // lets around the access, in names outside the kernel
  std::map<std::string, Expr> ThreadLoops; // each enclosing thread loop's variable: its min + the thread index
  Scope Ranges;                            // the other loops inside the realize
  std::string Producer;                    // the Func whose definition encloses the access
  std::vector<Expr> Guards;                // what the conditions around the access make non-negative

  using IRVisitor::visit;

  // In names outside the kernel and block loops; thread loop variables as thread indices.
  Expr canonical(const Expr &e) const { return substitute(ThreadLoops, substitute(LetValues, e)); }

  void visit(const LetStmt *op) override {
    op->value.accept(this);
    ScopedEntry<Expr> entry(LetValues, op->name);
    Expr value = substitute(LetValues, op->value);
    if (has_more_nodes_than(value, MaxExpandedLetNodes))
      LetValues.erase(op->name);
    else
      LetValues[op->name] = value;
    op->body.accept(this);
  }

  void visit(const For *op) override {
    op->min.accept(this);
    op->extent.accept(this);
    ScopedEntry<Expr> thread(ThreadLoops, op->name);
    ScopedEntry<Interval> range(Ranges, op->name);
    ScopedEntry<Expr> let(LetValues, op->name);
    LetValues.erase(op->name);
    Expr min = simplify(canonical(op->min));
    if (op->for_type == ForType::GPUThread) {
      ThreadLoops[op->name] = simplify(Add::make(min, threadIndex(Dims.at(op->name))));
      Ranges.erase(op->name);
    } else {
      Expr max = simplify(canonical(Sub::make(Add::make(op->min, op->extent), make_one(op->min.type()))));
      Ranges[op->name] = {bounds_of_expr_in_scope(simplify_for_bounds(min), Ranges).min,
                          bounds_of_expr_in_scope(simplify_for_bounds(max), Ranges).max};
      ThreadLoops.erase(op->name);
    }
    op->body.accept(this);
  }

  // A fused loop's parts are non-empty, and a split's tail is skipped, inside guards; an access
  // under them is compared with the others where they hold.
  void visit(const IfThenElse *op) override {
    op->condition.accept(this);
    const size_t outer = Guards.size();
    learnGuard(simplify(canonical(op->condition)), Guards);
    op->then_case.accept(this);
    Guards.resize(outer);
    if (op->else_case.defined())
      op->else_case.accept(this);
  }

  void visit(const ProducerConsumer *op) override {
    if (!op->is_producer) {
      IRVisitor::visit(op);
      return;
    }
    std::string saved = Producer;
    Producer = op->name;
    IRVisitor::visit(op);
    Producer = saved;
  }

  void visit(const Realize *op) override {
    if (op->name != Func) // an inner realize of the same name is another Func's storage
      IRVisitor::visit(op);
  }

  void visit(const Provide *op) override {
    IRVisitor::visit(op);
    if (op->name == Func)
      record(op->args, true, "a definition of " + Func + " writes it");
  }

  void visit(const Call *op) override {
    IRVisitor::visit(op);
    if (op->call_type == Call::Halide && op->name == Func)
      record(op->args, false, (Producer.empty() ? std::string("code") : Producer) + " reads it");
  }

  void record(const std::vector<Expr> &args, bool writes, const std::string &what) {
    if (ThreadLoops.empty())
      refuse(Func, what + " outside any gpu_threads loop; give that code gpu_threads loops or store " + Func +
                       " in shared memory");
    Access access{what, writes, {}, Guards};
    for (const Expr &arg : args) {
      Interval i = bounds_of_expr_in_scope(simplify_for_bounds(canonical(arg)), Ranges);
      if (!i.is_bounded())
        refuse(Func, "where " + what + " the index " + to_string(arg) + " has no bound over the thread's loops");
      access.box.push_back({simplify(i.min), simplify(i.max)});
    }
    Accesses.push_back(std::move(access));
  }
};

// The thread's slice in dimension `d`: where it starts (in thread indices) and its constant size.
// Every access starts a constant away from the others, and reads stay within what the thread
// writes.
std::pair<Expr, int64_t> sliceOf(const std::string &func, const std::vector<Access> &accesses, size_t d) {
  const Access &first = accesses.front();
  std::vector<int64_t> lows;
  for (const Access &a : accesses) {
    auto offset = as_const_int(simplify(Sub::make(a.box[d].min, first.box[d].min)));
    if (!offset && !a.guards.empty()) {
      // Where the access happens, the guards around it hold (the slice's origin, first's start,
      // is used as it is: the offset only places a's own accesses).
      AssumeGuards assume(a.guards);
      offset = as_const_int(simplify(Sub::make(assume.mutate(a.box[d].min), assume.mutate(first.box[d].min))));
    }
    if (!offset)
      refuse(func, "where " + a.what + " a thread's slice in dimension " + std::to_string(d) + " starts at " +
                       to_string(a.box[d].min) + ", not a constant away from " + to_string(first.box[d].min) +
                       " (where " + first.what + "): threads would read each other's registers; store " + func +
                       " in shared memory");
    lows.push_back(*offset);
  }
  const int64_t lowest = *std::min_element(lows.begin(), lows.end());
  Expr start = simplify(Add::make(first.box[d].min, make_const(Int(32), lowest)));
  std::vector<int64_t> highs;
  for (const Access &a : accesses) {
    auto last = constant_upper_bound(simplify_for_bounds(Sub::make(a.box[d].max, start)));
    if (!last && !a.guards.empty()) {
      AssumeGuards assume(a.guards);
      last = constant_upper_bound(simplify_for_bounds(Sub::make(assume.mutate(a.box[d].max), assume.mutate(start))));
    }
    if (!last)
      refuse(func, "where " + a.what + " a thread's slice in dimension " + std::to_string(d) + " (" +
                       to_string(start) + " to " + to_string(a.box[d].max) + ") has no constant size; split the "
                       "loops by constant factors");
    highs.push_back(*last);
  }
  std::optional<std::pair<int64_t, int64_t>> written;
  for (size_t i = 0; i < accesses.size(); ++i)
    if (accesses[i].writes)
      written = written ? std::pair{std::min(written->first, lows[i] - lowest), std::max(written->second, highs[i])}
                        : std::pair{lows[i] - lowest, highs[i]};
  for (size_t i = 0; i < accesses.size(); ++i)
    if (!accesses[i].writes && (!written || lows[i] - lowest < written->first || highs[i] > written->second))
      refuse(func, accesses[i].what + " beyond what the thread writes (in dimension " + std::to_string(d) +
                       ", offsets " + std::to_string(lows[i] - lowest) + " to " + std::to_string(highs[i]) +
                       (written ? " of " + std::to_string(written->first) + " to " + std::to_string(written->second)
                                : std::string(", where nothing is written")) +
                       "): it would need other threads' registers; store " + func + " in shared memory");
  return {start, written->second + 1};
}

// The coefficient of thread index `dim` in `e`, where `e` is affine in it.
std::optional<int64_t> threadCoefficient(const Expr &e, int dim) {
  const std::string name = threadIndex(dim).as<Variable>()->name;
  auto at = [&](int value) { return substitute(name, make_const(Int(32), int64_t(value)), e); };
  auto k = as_const_int(simplify(Sub::make(at(1), at(0)))), next = as_const_int(simplify(Sub::make(at(2), at(1))));
  return k && next && *k == *next ? k : std::nullopt;
}

// Threads whose slices differ must not overlap: each thread index moves the slice in one
// dimension of its own by at least the slice's size there. (Threads whose index the slice does
// not use compute the same slice, each into its own registers.)
void checkDisjoint(const std::string &func, const std::vector<Expr> &origin, const Region &slice) {
  std::vector<int> dimensionOf(3, -1);
  for (size_t d = 0; d < origin.size(); ++d) {
    int used = 0;
    for (int t = 0; t < 3; ++t) {
      auto k = threadCoefficient(origin[d], t);
      if (!k)
        refuse(func, "its slice in dimension " + std::to_string(d) + " starts at " + to_string(origin[d]) +
                         ", not a multiple of the thread index plus a constant");
      if (*k == 0)
        continue;
      const int64_t extent = *as_const_int(slice[d].extent);
      if (++used > 1 || dimensionOf[t] != -1 || std::abs(*k) < extent)
        refuse(func, "the slices of different threads overlap (dimension " + std::to_string(d) + " starts at " +
                         to_string(origin[d]) + " and is " + std::to_string(extent) + " wide): give each thread a "
                         "tile of its own, split by the size of the thread's part");
      dimensionOf[t] = static_cast<int>(d);
    }
  }
}

// Shifts each access of the Func to the origin of the thread's slice, the origin written in the
// variables of the thread loops around the access.
class ShiftAccesses : public RewriteFuncAccesses {
public:
  ShiftAccesses(const std::string &func, const std::vector<Expr> &origin, const std::map<std::string, int> &dims)
      : RewriteFuncAccesses(func), Origin(origin), Dims(dims) {}

private:
  const std::vector<Expr> &Origin;
  const std::map<std::string, int> &Dims;
  std::map<std::string, Expr> ThreadIndices; // thread index name -> its loop's variable less the loop's min

  std::vector<Expr> coordinates(std::vector<Expr> args) override {
    for (size_t d = 0; d < args.size(); ++d)
      args[d] = simplify(Sub::make(args[d], substitute(ThreadIndices, Origin[d])));
    return args;
  }

  // The loop's variable under a name of its own (a split's let may rebind the loop's name).
  using RewriteFuncAccesses::visit;
  Stmt visit(const For *op) override {
    if (op->for_type != ForType::GPUThread)
      return IRMutator::visit(op);
    const std::string index = threadIndex(Dims.at(op->name)).as<Variable>()->name, alias = op->name + ".thread_index";
    ScopedEntry<Expr> entry(ThreadIndices, index);
    ThreadIndices[index] = Sub::make(Variable::make(Int(32), alias), op->min);
    Stmt body = LetStmt::make(alias, Variable::make(Int(32), op->name), mutate(op->body));
    return For::make(op->name, op->min, op->extent, op->for_type, body);
  }
};

class RegisterSlices : public IRMutator {
  std::map<std::string, int> Dims; // the thread dimension of each thread loop of the kernel, by name
  int BlockDepth = 0, ThreadDepth = 0;
  // The values of the lets around the code, written out: the lets that bound each stage of a Func
  // have names of their own but the same values.
  std::map<std::string, Expr> LetValues;
  std::string Producer; // the Func whose definition encloses the code, for errors
  std::vector<Expr> Guards; // what the conditions around the code make non-negative (see learnGuard)

  using IRMutator::visit;

  Stmt visit(const IfThenElse *op) override {
    const size_t outer = Guards.size();
    learnGuard(simplify(substitute(LetValues, op->condition)), Guards);
    Stmt thenCase = mutate(op->then_case);
    Guards.resize(outer);
    Stmt elseCase = mutate(op->else_case);
    if (thenCase.same_as(op->then_case) && elseCase.same_as(op->else_case))
      return Stmt(op);
    return IfThenElse::make(op->condition, thenCase, elseCase);
  }

  Stmt visit(const ProducerConsumer *op) override {
    if (!op->is_producer)
      return IRMutator::visit(op);
    std::string saved = Producer;
    Producer = op->name;
    Stmt result = IRMutator::visit(op);
    Producer = saved;
    return result;
  }

  Stmt visit(const LetStmt *op) override {
    ScopedEntry<Expr> entry(LetValues, op->name);
    Expr value = substitute(LetValues, op->value);
    if (has_more_nodes_than(value, MaxExpandedLetNodes))
      LetValues.erase(op->name);
    else
      LetValues[op->name] = value;
    return IRMutator::visit(op);
  }

  Stmt visit(const For *op) override {
    if (op->for_type == ForType::GPUBlock && BlockDepth == 0) {
      Dims.clear();
      for (const auto &[loop, dim] : gpu_thread_dimensions(Stmt(op)))
        Dims[loop->name] = dim;
    }
    ScopedEntry<Expr> shadowed(LetValues, op->name);
    LetValues.erase(op->name);
    BlockDepth += op->for_type == ForType::GPUBlock;
    ThreadDepth += op->for_type == ForType::GPUThread;
    Stmt result = IRMutator::visit(op);
    BlockDepth -= op->for_type == ForType::GPUBlock;
    ThreadDepth -= op->for_type == ForType::GPUThread;
    return result;
  }

  Stmt visit(const Realize *op) override {
    if (BlockDepth == 0 || ThreadDepth > 0 || op->memory != MemoryType::Register)
      return IRMutator::visit(op);
    SliceFinder finder(op->name, Dims, LetValues, Producer, Guards);
    op->body.accept(&finder);
    if (finder.Accesses.empty())
      return IRMutator::visit(op);
    std::vector<Expr> origin;
    Region slice;
    for (size_t d = 0; d < op->bounds.size(); ++d) {
      auto [start, extent] = sliceOf(op->name, finder.Accesses, d);
      origin.push_back(start);
      slice.push_back({make_zero(Int(32)), make_const(Int(32), extent)});
    }
    checkDisjoint(op->name, origin, slice);
    Stmt body = mutate(ShiftAccesses(op->name, origin, Dims).mutate(op->body));
    return Realize::make(op->name, op->types, slice, body, op->memory);
  }
};

} // namespace

Stmt gpu_register_slices(const Stmt &s) { return RegisterSlices().mutate(s); }

} // namespace ptxjit::lower
