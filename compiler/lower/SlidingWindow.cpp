#include "SlidingWindow.h"

#include "BoxesTouched.h"
#include "RewriteFuncAccesses.h"
#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Monotonic.h"
#include "ir/ScopedEntry.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Function.h"
#include "ptxjit/Error.h"

#include <algorithm>
#include <optional>
#include <set>

namespace ptxjit::lower {

using namespace ir;

namespace {

std::string boundName(const std::string &func, const std::string &dim, const char *end) {
  return func + ".s0." + dim + "." + end;
}

// The computation of `func` that follows the lets of its region: at once, or after those of
// Funcs it reads that are computed at the same loop (a pyramid level computed per row reads the
// level below, computed just before it: their lets come first, then each produce in turn).
const ProducerConsumer *followingProduce(Stmt s, const std::string &func) {
  while (s.defined()) {
    if (const auto *let = s.as<LetStmt>()) {
      s = let->body;
    } else if (const auto *pc = s.as<ProducerConsumer>()) {
      if (pc->is_producer)
        return pc->name == func ? pc : nullptr;
      s = pc->body;
    } else if (const auto *block = s.as<Block>()) {
      const auto *first = block->first.as<ProducerConsumer>();
      if (!first || !first->is_producer)
        return nullptr;
      if (first->name == func)
        return first;
      s = block->rest;
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

// Reads of variable `name` outside the computation of `func`, renamed `renamed`.
class RenameOutsideProduce : public IRMutator {
public:
  RenameOutsideProduce(const std::string &func, const std::string &name, const std::string &renamed)
      : Func(func), Name(name), Renamed(renamed) {}

private:
  const std::string &Func, &Name, &Renamed;
  using IRMutator::visit;
  Expr visit(const Variable *op) override { return op->name == Name ? Variable::make(op->type, Renamed) : Expr(op); }
  Stmt visit(const ProducerConsumer *op) override {
    return op->is_producer && op->name == Func ? Stmt(op) : IRMutator::visit(op);
  }
};

// How many times `s` computes `func`.
int producersOf(const Stmt &s, const std::string &func) {
  struct Counter : IRVisitor {
    const std::string &Func;
    int Count = 0;
    explicit Counter(const std::string &f) : Func(f) {}
    using IRVisitor::visit;
    void visit(const ProducerConsumer *op) override {
      Count += op->is_producer && op->name == Func;
      IRVisitor::visit(op);
    }
  } counter(func);
  s.accept(&counter);
  return counter.Count;
}

class Slider : public IRMutator {
public:
  explicit Slider(const Environment &env) : Env(env) {}

  /// Whether a Realize of `func` was seen.
  bool realized(const std::string &func) const { return Seen.count(func) != 0; }

private:
  struct Loop {
    std::string name;
    ForType type;
    Expr min; // written out
  };
  const Environment &Env;
  std::map<std::string, Expr> LetValues; // the lets around the code, written out (size-limited)
  // The lets around the code too large to write out, each with the loops its value varies with:
  // an expression naming one varies with those loops, unseen.
  std::map<std::string, std::set<std::string>> OpaqueLets;

  // The loops around the code that `e` (written out) varies with, through opaque lets too.
  std::set<std::string> loopsOf(const Expr &e) const {
    std::set<std::string> loops;
    for (const std::string &name : variable_names(e)) {
      if (std::any_of(Loops.begin(), Loops.end(), [&](const Loop &l) { return l.name == name; }))
        loops.insert(name);
      else if (auto it = OpaqueLets.find(name); it != OpaqueLets.end())
        loops.insert(it->second.begin(), it->second.end());
    }
    return loops;
  }
  std::vector<Loop> Loops;               // around the code, outermost first
  // The conditions around the code, written out, each with the number of loops around it.
  std::vector<std::pair<size_t, Expr>> Conditions;
  struct Realization {
    size_t loops;         // the loops around the storage
    bool computedOnce;    // computed in one place only
  };
  std::map<std::string, Realization> Realized; // Funcs realized around the code
  struct Slide {
    std::string loop;
    size_t dim;
    int64_t window; // the rows of the dimension one iteration needs and writes (see foldSpan)
  };
  std::map<std::string, Slide> Slid; // Funcs slid inside the Realize being mutated
  std::set<std::string> Seen;        // Funcs realized anywhere

  using IRMutator::visit;

  Expr expand(const Expr &e) const { return substitute(LetValues, e); }

  Stmt visit(const Realize *op) override {
    Seen.insert(op->name);
    ScopedEntry<Realization> entry(Realized, op->name);
    Realized[op->name] = {Loops.size(), producersOf(op->body, op->name) == 1};
    Stmt result = IRMutator::visit(op);
    std::map<std::string, int64_t> requested; // fold_storage: rows by dimension name
    if (auto f = Env.find(op->name); f != Env.end())
      requested = f->second->storage_folds;
    if (auto slid = Slid.find(op->name); slid != Slid.end()) {
      const std::string dim = Env.at(op->name)->args[slid->second.dim];
      std::optional<int64_t> rows;
      if (auto it = requested.find(dim); it != requested.end()) {
        rows = it->second;
        requested.erase(it);
      }
      result = fold(result.as<Realize>(), slid->second, rows, dim);
      Slid.erase(slid);
    }
    for (const auto &[dim, rows] : requested)
      requireWithin(result.as<Realize>(), dim, rows);
    return result;
  }

  Stmt visit(const For *op) override {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    ScopedEntry<Expr> shadowed(LetValues, op->name);
    ScopedEntry<std::set<std::string>> shadowedOpaque(OpaqueLets, op->name);
    LetValues.erase(op->name);
    OpaqueLets.erase(op->name);
    Loops.push_back({op->name, op->for_type, expand(op->min)});
    Stmt body = mutate(op->body);
    Loops.pop_back();
    return For::make(op->name, min, extent, op->for_type, body);
  }

  Stmt visit(const IfThenElse *op) override {
    Expr condition = mutate(op->condition);
    Conditions.emplace_back(Loops.size(), expand(op->condition));
    Stmt thenCase = mutate(op->then_case);
    Conditions.back().second = Not::make(Conditions.back().second);
    Stmt elseCase = op->else_case.defined() ? mutate(op->else_case) : Stmt();
    Conditions.pop_back();
    return IfThenElse::make(condition, thenCase, elseCase);
  }

  Stmt visit(const LetStmt *op) override {
    if (Stmt slid = slideAt(op); slid.defined())
      return slid;
    Expr value = mutate(op->value);
    ScopedEntry<Expr> entry(LetValues, op->name);
    ScopedEntry<std::set<std::string>> opaque(OpaqueLets, op->name);
    Expr expanded = expand(op->value);
    if (has_more_nodes_than(expanded, MaxExpandedLetNodes)) {
      LetValues.erase(op->name);
      OpaqueLets[op->name] = loopsOf(expanded);
    } else {
      LetValues[op->name] = expanded;
      OpaqueLets.erase(op->name);
    }
    Stmt body = mutate(op->body);
    return LetStmt::make(op->name, value, body);
  }

  // Storage folding: a Func slid along a dimension and used only inside the loop it slides over
  // needs only the window of that dimension one iteration uses; rows older than the window are
  // never read again. It is stored modulo a power of two no smaller than the window.
  // Where fold_storage asked for `rows`, folds to that many, or throws where the fold would
  // lose rows still needed.
  static Stmt fold(const Realize *op, const Slide &slide, std::optional<int64_t> rows, const std::string &dim) {
    int64_t folded = 1;
    while (folded < slide.window)
      folded *= 2;
    const std::string request =
        rows ? "fold_storage(" + dim + ", " + std::to_string(*rows) + ") of Func " + op->name + ": " : "";
    if (rows && *rows < slide.window)
      throw CompileError(request + "each iteration of loop " + slide.loop + " needs " +
                         std::to_string(slide.window) + " rows of it in " + dim + "; the extent must be at least that");
    if (rows)
      folded = *rows;
    auto extent = as_const_int(op->bounds[slide.dim].extent);
    if (extent && *extent <= folded)
      return Stmt(op);
    if (rows && accessedOutside(op->body, op->name, slide.loop))
      throw CompileError(request + "it is read or written outside loop " + slide.loop +
                         ", which needs every row it computed");
    if (rows && !writtenInOrder(op->body, op->name, slide.dim))
      throw CompileError(request + "rows of it in " + dim +
                         " are written by parallel, vectorized or GPU loops, whose order a fold cannot keep");
    if (accessedOutside(op->body, op->name, slide.loop) || !writtenInOrder(op->body, op->name, slide.dim))
      return Stmt(op);
    Region bounds = op->bounds;
    bounds[slide.dim].extent = make_const(Int(32), folded);
    Stmt body = FoldAccesses(op->name, slide.dim, bounds[slide.dim].min, make_const(Int(32), folded)).mutate(op->body);
    return Realize::make(op->name, op->types, bounds, body, op->memory);
  }

  // fold_storage of a dimension the Func does not slide along: nothing to fold where the stored
  // extent is within the rows asked for; otherwise every row is needed.
  void requireWithin(const Realize *op, const std::string &dim, int64_t rows) const {
    const std::vector<std::string> &args = Env.at(op->name)->args;
    const size_t d = static_cast<size_t>(std::find(args.begin(), args.end(), dim) - args.begin());
    auto extent = as_const_int(simplify(expand(op->bounds.at(d).extent)));
    if (extent && *extent <= rows)
      return;
    throw CompileError("fold_storage(" + dim + ", " + std::to_string(rows) + ") of Func " + op->name +
                       ": its storage cannot be folded in " + dim + ": ptxjit folds a Func computed inside a serial "
                       "loop along which its region in " + dim + " slides forward, stored further out (store_at), "
                       "and read only inside that loop" +
                       (extent ? " (it stores " + std::to_string(*extent) + " rows)" : ""));
  }

  // Whether every write of `func` in `s` reaches dimension `dim` through serial or unrolled loops
  // only: rows a fold puts in one place (a tail shifted inward computes more than the window) are
  // then written one after the other, the last one staying, never by lanes or threads at once.
  static bool writtenInOrder(const Stmt &s, const std::string &func, size_t dim) {
    struct Checker : IRVisitor {
      const std::string &Func;
      size_t Dim;
      bool InOrder = true;
      std::map<std::string, Expr> Lets;
      std::vector<std::string> Unordered; // loops whose iterations run at once
      std::vector<std::string> Opaque;    // lets too large to write out
      Checker(const std::string &f, size_t d) : Func(f), Dim(d) {}
      using IRVisitor::visit;
      void visit(const LetStmt *op) override {
        ScopedEntry<Expr> entry(Lets, op->name);
        Expr value = substitute(Lets, op->value);
        const bool opaque = has_more_nodes_than(value, MaxExpandedLetNodes);
        if (opaque) {
          Lets.erase(op->name);
          Opaque.push_back(op->name);
        } else {
          Lets[op->name] = value;
        }
        op->body.accept(this);
        if (opaque)
          Opaque.pop_back();
      }
      void visit(const For *op) override {
        ScopedEntry<Expr> shadowed(Lets, op->name);
        Lets.erase(op->name);
        const bool ordered = op->for_type == ForType::Serial || op->for_type == ForType::Unrolled;
        if (!ordered)
          Unordered.push_back(op->name);
        IRVisitor::visit(op);
        if (!ordered)
          Unordered.pop_back();
      }
      void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (op->name != Func)
          return;
        Expr index = substitute(Lets, op->args[Dim]);
        for (const std::string &loop : Unordered)
          InOrder = InOrder && !uses_variable(index, loop);
        // A let too large to write out hides what the index depends on.
        for (const std::string &name : Opaque)
          InOrder = InOrder && !uses_variable(index, name);
      }
    } checker(func, dim);
    s.accept(&checker);
    return checker.InOrder;
  }

  // Whether `s` reads or writes `func` outside the loop named `loop`.
  static bool accessedOutside(const Stmt &s, const std::string &func, const std::string &loop) {
    struct Finder : IRVisitor {
      const std::string &Func, &Loop;
      int Inside = 0;
      bool Outside = false;
      Finder(const std::string &f, const std::string &l) : Func(f), Loop(l) {}
      using IRVisitor::visit;
      void visit(const For *op) override {
        Inside += op->name == Loop;
        IRVisitor::visit(op);
        Inside -= op->name == Loop;
      }
      void visit(const Provide *op) override {
        Outside = Outside || (op->name == Func && Inside == 0);
        IRVisitor::visit(op);
      }
      void visit(const Call *op) override {
        Outside = Outside || (op->call_type == Call::Halide && op->name == Func && Inside == 0);
        IRVisitor::visit(op);
      }
    } finder(func, loop);
    s.accept(&finder);
    return finder.Outside;
  }

  class FoldAccesses : public RewriteFuncAccesses {
  public:
    FoldAccesses(const std::string &func, size_t dim, Expr min, Expr modulus)
        : RewriteFuncAccesses(func), Dim(dim), Min(std::move(min)), Modulus(std::move(modulus)) {}

  private:
    size_t Dim;
    Expr Min, Modulus;
    // Counted from the storage's min: where each iteration's window starts a constant away from
    // it (an unrolled strip of rows), the folded indices are constants too (registers on a GPU).
    std::vector<Expr> coordinates(std::vector<Expr> args) override {
      args[Dim] = Add::make(Min, Mod::make(Sub::make(args[Dim], Min), Modulus));
      return args;
    }
  };

  // Whether `e` never decreases as `v` counts up: by its structure (a tail shifted inward is a
  // min with a constant), else by proving it against the value one iteration before.
  static bool nonDecreasing(const Expr &e, const std::string &v) {
    const Monotonic m = is_monotonic(e, v);
    if (m == Monotonic::Constant || m == Monotonic::Increasing)
      return true;
    Expr before = substitute(v, Sub::make(Variable::make(Int(32), v), make_one(Int(32))), e);
    return can_prove(GE::make(e, before));
  }

  // Whether `condition`, once false as `v` counts up, stays false.
  static bool staysFalse(const Expr &condition, const std::string &v) {
    if (!uses_variable(condition, v))
      return true;
    if (const auto *a = condition.as<And>())
      return staysFalse(a->a, v) && staysFalse(a->b, v);
    auto bounded = [&](const Expr &rising, const Expr &limit) {
      return !uses_variable(limit, v) && nonDecreasing(rising, v);
    };
    if (const auto *c = condition.as<LE>())
      return bounded(c->a, c->b);
    if (const auto *c = condition.as<LT>())
      return bounded(c->a, c->b);
    return false;
  }

  // How many consecutive rows of dimension `d` one iteration both needs and writes: a fold must
  // keep them all apart. The computation may write rows past the window it needs (a tail shifted
  // inward or rounded up), and in any order (its loops reordered); where such a row shared a
  // place with a needed one, the one written last would stay. The slid start ranges from the
  // unslid one to one past the end. Nothing where no constant bounds it.
  static std::optional<int64_t> foldSpan(const ProducerConsumer *produce, const std::string &func, size_t d,
                                         const std::map<std::string, Expr> &written, const std::string &minName,
                                         const Expr &max) {
    const Expr &min = written.at(minName);
    Scope scope;
    scope[minName] = Interval{min, simplify(Add::make(max, make_one(Int(32))))};
    Box writes = box_touched(Stmt(produce), {func, false, true}, scope);
    if (writes.size() <= d || !writes[d].is_bounded())
      return std::nullopt;
    std::map<std::string, Expr> lets = written;
    lets.erase(minName);
    Expr low = Min::make(substitute(lets, writes[d].min), min), high = Max::make(substitute(lets, writes[d].max), max);
    auto span = constant_upper_bound(simplify_for_bounds(Sub::make(high, low)));
    if (!span)
      return std::nullopt;
    return *span + 1;
  }

  // At the first of the lets that bound a Func's computation, where it can slide: the lets again
  // with the sliding dimension's start moved past what the iteration before computed.
  Stmt slideAt(const LetStmt *first) {
    const std::string func = first->name.substr(0, first->name.find(".s0."));
    auto f = Env.find(func);
    auto realized = Realized.find(func);
    if (f == Env.end() || realized == Realized.end() || !realized->second.computedOnce || !f->second->updates.empty() ||
        !f->second->init.specializations.empty() || first->name != boundName(func, f->second->args[0], "min"))
      return Stmt();
    // The lets of the region, in order, then the computation.
    std::vector<const LetStmt *> chain;
    Stmt rest = Stmt(first);
    std::map<std::string, Expr> written = LetValues, original;
    while (const auto *let = rest.as<LetStmt>()) {
      if (let->name.rfind(func + ".s0.", 0) != 0)
        break;
      chain.push_back(let);
      original[let->name] = let->value;
      written[let->name] = substitute(written, let->value);
      rest = let->body;
    }
    const ProducerConsumer *produce = followingProduce(rest, func);
    const std::vector<std::string> &dims = f->second->args;
    if (!produce || Loops.size() <= realized->second.loops)
      return Stmt();
    for (const std::string &d : dims)
      if (!original.count(boundName(func, d, "min")) || !original.count(boundName(func, d, "max")))
        return Stmt();
    for (size_t i = realized->second.loops; i < Loops.size(); ++i)
      if (Loops[i].type != ForType::Serial && Loops[i].type != ForType::Unrolled)
        return Stmt();
    const Loop &loop = Loops.back();
    // A let too large to write out that varies with the loop hides how the region or a condition
    // does (the iteration before would be taken to have computed what this one needs).
    auto readsOpaqueInLoop = [&](const Expr &e) {
      for (const std::string &name : variable_names(e))
        if (auto it = OpaqueLets.find(name); it != OpaqueLets.end() && it->second.count(loop.name))
          return true;
      return false;
    };
    for (const auto &[depth, condition] : Conditions)
      if (depth == Loops.size() && (readsOpaqueInLoop(condition) || !staysFalse(condition, loop.name)))
        return Stmt();
    for (const std::string &d : dims)
      if (readsOpaqueInLoop(written[boundName(func, d, "min")]) || readsOpaqueInLoop(written[boundName(func, d, "max")]))
        return Stmt();
    // The dimension whose region moves with the loop; the first when none does.
    std::optional<size_t> sliding;
    for (size_t d = 0; d < dims.size(); ++d) {
      Expr min = written[boundName(func, dims[d], "min")], max = written[boundName(func, dims[d], "max")];
      if (!uses_variable(min, loop.name) && !uses_variable(max, loop.name))
        continue;
      if (sliding || !nonDecreasing(min, loop.name))
        return Stmt();
      sliding = d;
    }
    const size_t d = sliding.value_or(0);
    const std::string minName = boundName(func, dims[d], "min");
    Expr max = written[boundName(func, dims[d], "max")];
    if (sliding)
      if (auto window = foldSpan(produce, func, d, written, minName, max))
        Slid[func] = {loop.name, d, *window};
    Expr v = Variable::make(Int(32), loop.name);
    Expr previousMax = simplify(substitute(loop.name, Sub::make(v, make_one(Int(32))), max));
    // The unslid start plus how far past it the iteration before reached: written so that the
    // extent (max - min + 1) keeps max - unslid, which cancels to a constant bound.
    Expr unslid = Variable::make(Int(32), minName + ".unslid"), zero = make_zero(Int(32));
    Expr slidMin = Add::make(unslid, Select::make(GT::make(v, loop.min),
                                                  Max::make(Sub::make(Add::make(previousMax, make_one(Int(32))), unslid), zero),
                                                  zero));
    // The lets again, the sliding start named after its unslid value; the computation as before.
    std::map<std::string, Expr> outerLets = LetValues;
    std::map<std::string, std::set<std::string>> outerOpaque = OpaqueLets;
    // Funcs computed between the lets and the computation size their regions for the unslid one:
    // sliding those by themselves keeps what earlier iterations computed of them too.
    written[minName + ".unslid"] = written[minName];
    for (const LetStmt *let : chain) {
      const std::string name = let->name == minName ? minName + ".unslid" : let->name;
      if (has_more_nodes_than(written[name], MaxExpandedLetNodes)) {
        LetValues.erase(name);
        OpaqueLets[name] = loopsOf(written[name]);
      } else {
        LetValues[name] = written[name];
        OpaqueLets.erase(name);
      }
    }
    LetValues.erase(minName);
    OpaqueLets[minName] = loopsOf(written[minName]);
    OpaqueLets[minName].insert(loop.name); // slid: it varies with the loop
    Stmt body = mutate(RenameOutsideProduce(func, minName, minName + ".unslid").mutate(rest));
    LetValues = std::move(outerLets);
    OpaqueLets = std::move(outerOpaque);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const LetStmt *let = *it;
      if (let->name == minName)
        body = LetStmt::make(minName + ".unslid", let->value, LetStmt::make(minName, slidMin, body));
      else
        body = LetStmt::make(let->name, let->value, body);
    }
    return body;
  }
};

} // namespace

Stmt sliding_window(const Stmt &s, const Environment &env) {
  Slider slider(env);
  Stmt result = slider.mutate(s);
  for (const auto &[name, f] : env)
    if (!f->storage_folds.empty() && !slider.realized(name)) {
      const auto &[dim, rows] = *f->storage_folds.begin();
      throw CompileError("fold_storage(" + dim + ", " + std::to_string(rows) + ") of Func " + name +
                         ": it has no storage of its own to fold (it is inlined, or an output, stored in its buffer)");
    }
  return result;
}

} // namespace ptxjit::lower
