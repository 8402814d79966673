#include "InjectPrefetches.h"

#include "BoxesTouched.h"
#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Parameter.h"
#include "ptxjit/IROperator.h"

#include <algorithm>
#include <map>
#include <optional>

namespace ptxjit::lower {

using namespace ir;

namespace {

// A placeholder is an Evaluate of an intrinsic named PlaceholderPrefix, then the strategy's
// digit, then the at loop's, the from loop's and the target's names, each after its length and
// a colon (loop and Func names may hold any character), with the offset as its argument and the
// input, for an input, as its parameter.
constexpr const char *PlaceholderPrefix = "prefetch_placeholder:";

struct Placeholder {
  std::string at, from, target;
  PrefetchBoundStrategy strategy;
  Expr offset;
  std::shared_ptr<ParameterContents> image;
};

std::optional<Placeholder> decode(const Stmt &s) {
  const auto *e = s.as<Evaluate>();
  const Call *call = e ? e->value.as<Call>() : nullptr;
  const std::string prefix = PlaceholderPrefix;
  if (!call || call->call_type != Call::Intrinsic || call->name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  Placeholder p;
  p.strategy = static_cast<PrefetchBoundStrategy>(call->name[prefix.size()] - '0');
  size_t at = prefix.size() + 1;
  for (std::string *field : {&p.at, &p.from, &p.target}) {
    const size_t colon = call->name.find(':', at);
    const size_t length = std::stoul(call->name.substr(at, colon - at));
    *field = call->name.substr(colon + 1, length);
    at = colon + 1 + length;
  }
  p.offset = call->args.at(0);
  p.image = call->param;
  return p;
}

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

// Bytes the hints step by: a cache line of the x86 processors and the GPUs' L2 sector pair.
constexpr int LineBytes = 64;

class PrefetchInjector : public IRMutator {
public:
  PrefetchInjector(const Environment &env, const Outputs &outputs) : Env(env), OutputList(outputs) {}

private:
  const Environment &Env;
  const Outputs &OutputList;

  // The loops and lets around the statement being mutated, outermost first.
  struct Binding {
    std::string name;
    Expr value; // a let's; undefined for a loop
  };
  std::vector<Binding> Bindings;
  // The placeholders directly inside each enclosing loop (not inside a loop within it), and the
  // loops' names.
  std::vector<std::vector<Placeholder>> Pending;
  std::vector<std::string> Loops;
  // The realizations around the statement, by Func.
  std::map<std::string, std::vector<const Realize *>> Realizations;

  using IRMutator::visit;

  Stmt visit(const Evaluate *op) override {
    std::optional<Placeholder> p = decode(Stmt(op));
    if (!p)
      return IRMutator::visit(op);
    PTXJIT_INTERNAL_ASSERT(!Pending.empty() && Loops.back() == p->at,
                           "prefetch placeholder of loop " + p->at + " is not directly inside it");
    // The latest directive for a target wins, as in Halide.
    std::vector<Placeholder> &here = Pending.back();
    here.erase(std::remove_if(here.begin(), here.end(), [&](const Placeholder &q) { return q.target == p->target; }),
               here.end());
    here.push_back(std::move(*p));
    return Evaluate::make(make_zero(Int(32)));
  }

  Stmt visit(const LetStmt *op) override {
    Bindings.push_back({op->name, op->value});
    Stmt body = mutate(op->body);
    Bindings.pop_back();
    return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
  }

  Stmt visit(const Realize *op) override {
    std::vector<const Realize *> &stack = Realizations[op->name];
    stack.push_back(op);
    Stmt body = mutate(op->body);
    stack.pop_back();
    return body.same_as(op->body) ? Stmt(op) : Realize::make(op->name, op->types, op->bounds, body, op->memory);
  }

  Stmt visit(const For *op) override {
    const bool vectorized = op->for_type == ForType::Vectorized;
    // At a vectorized loop the hint goes before the loop, outside its binding.
    if (!vectorized)
      Bindings.push_back({op->name, Expr()});
    Pending.emplace_back();
    Loops.push_back(op->name);
    Stmt body = mutate(op->body);
    std::vector<Placeholder> placeholders = std::move(Pending.back());
    Pending.pop_back();
    Loops.pop_back();
    std::vector<Stmt> hints;
    for (const Placeholder &p : placeholders)
      if (Stmt hint = prefetch(p, op, body); hint.defined())
        hints.push_back(hint);
    if (!vectorized)
      Bindings.pop_back();
    if (hints.empty())
      return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    if (vectorized) {
      hints.push_back(For::make(op->name, op->min, op->extent, op->for_type, body));
      return Block::make(hints);
    }
    hints.push_back(body);
    return For::make(op->name, op->min, op->extent, op->for_type, Block::make(hints));
  }

  // The statement whose touched region is prefetched: the loop's body (the whole loop, for a
  // vectorized one) with the `from` loop's variable advanced by the offset, and the lets between
  // that loop and this one bound again inside, so that those computed from it advance too. The
  // variable is replaced, not bound again: intervals in terms of it would then refer to themselves.
  Stmt shiftedQuery(const Placeholder &p, const For *loop, const Stmt &body) const {
    const Expr advanced = Add::make(var(p.from), p.offset);
    Stmt query = body;
    if (loop->for_type == ForType::Vectorized) {
      if (p.from == loop->name)
        return For::make(loop->name, loop->min, loop->extent, ForType::Serial, substitute(p.from, advanced, body));
      query = For::make(loop->name, loop->min, loop->extent, ForType::Serial, body);
    }
    auto from = std::find_if(Bindings.rbegin(), Bindings.rend(), [&](const Binding &b) { return b.name == p.from; });
    PTXJIT_INTERNAL_ASSERT(from != Bindings.rend(), "prefetch: the from loop " + p.from + " is not around its at loop");
    for (auto b = Bindings.rbegin(); b != from; ++b)
      if (b->value.defined())
        query = LetStmt::make(b->name, b->value, query);
    return substitute(p.from, advanced, query);
  }

  struct Target {
    std::vector<Type> types;
    std::shared_ptr<FunctionContents> func; // null for an input
    std::vector<Interval> bounds;           // the buffer's region
    size_t innermost = 0;                   // the dimension stored densely
  };

  // What `p` prefetches, where the hint at `loop` can reach it; nothing where the hint would load
  // nothing useful (storage a GPU keeps in shared memory or registers).
  std::optional<Target> target(const Placeholder &p, const For *loop) const {
    Target t;
    if (p.image) {
      t.types = {p.image->type};
      for (int d = 0; d < p.image->dimensions; ++d) {
        Expr min = var(buffer_field_name(p.image->name, "min", d));
        t.bounds.push_back({min, Add::make(min, Sub::make(var(buffer_field_name(p.image->name, "extent", d)),
                                                          make_one(Int(32))))});
      }
      return t;
    }
    auto f = Env.find(p.target);
    PTXJIT_INTERNAL_ASSERT(f != Env.end(), "prefetch: " + p.target + " is touched but not in the pipeline");
    t.func = f->second;
    t.types = t.func->types;
    if (!t.func->storage_dims.empty())
      t.innermost = static_cast<size_t>(std::find(t.func->args.begin(), t.func->args.end(), t.func->storage_dims[0]) -
                                        t.func->args.begin());
    auto realized = Realizations.find(p.target);
    if (realized != Realizations.end() && !realized->second.empty()) {
      const Realize *r = realized->second.back();
      if (r->memory == MemoryType::GPUShared || r->memory == MemoryType::Register)
        return std::nullopt;
      for (const Range &range : r->bounds)
        t.bounds.push_back({range.min, Add::make(range.min, Sub::make(range.extent, make_one(Int(32))))});
      return t;
    }
    const bool output = std::any_of(OutputList.begin(), OutputList.end(),
                                    [&](const std::shared_ptr<FunctionContents> &o) { return o->name == p.target; });
    if (!output)
      throw CompileError("prefetch of " + p.target + " at loop " + loop->name + ": " + p.target +
                         " is stored inside that loop, so there is nothing to load ahead; prefetch a Func stored "
                         "outside the loop (store_at, compute_root), an input or an output");
    // An output is stored in its buffers, all of one region; the first one's fields name it.
    const std::string buffer = value_buffer_name(p.target, 0, t.types.size());
    // An output's layout is its buffer's: dimension 0 is the dense one, as usual.
    t.innermost = 0;
    for (size_t d = 0; d < t.func->args.size(); ++d) {
      Expr min = var(buffer_field_name(buffer, "min", static_cast<int>(d)));
      t.bounds.push_back({min, Add::make(min, Sub::make(var(buffer_field_name(buffer, "extent", static_cast<int>(d))),
                                                        make_one(Int(32))))});
    }
    return t;
  }

  Stmt prefetch(const Placeholder &p, const For *loop, const Stmt &body) const {
    BoxQuery query{p.target, true, true, nullptr};
    Box box = box_touched(shiftedQuery(p, loop, body), query);
    // Untouched (a specialization that never reads it, say), or a region that cannot be bounded.
    if (box.empty() || std::any_of(box.begin(), box.end(), [](const Interval &i) { return !i.is_bounded(); }))
      return Stmt();
    std::optional<Target> t = target(p, loop);
    if (!t)
      return Stmt();
    PTXJIT_INTERNAL_ASSERT(t->bounds.size() == box.size(), "prefetch: the region of " + p.target + " has " +
                                                              std::to_string(box.size()) + " dimensions");
    Expr inside = make_bool(true);
    for (size_t d = 0; d < box.size(); ++d) {
      if (p.strategy == PrefetchBoundStrategy::Clamp) {
        box[d].min = Max::make(box[d].min, t->bounds[d].min);
        box[d].max = Min::make(box[d].max, t->bounds[d].max);
      } else if (p.strategy == PrefetchBoundStrategy::GuardWithIf) {
        inside = And::make(inside, And::make(GE::make(box[d].min, t->bounds[d].min), LE::make(box[d].max, t->bounds[d].max)));
      }
      box[d].min = simplify(box[d].min);
      box[d].max = simplify(box[d].max);
    }

    const std::string prefix = loop->name + ".prefetch." + p.target + ".";
    std::vector<Stmt> values;
    for (size_t v = 0; v < t->types.size(); ++v) {
      // Along the dense dimension, one request a line and one for the region's last element
      // (the region need not start at a line's start, so its end may lie on one more); one
      // request an element elsewhere.
      const int perLine = std::max(1, LineBytes / std::max(1, t->types[v].bytes()));
      const size_t inner = t->innermost;
      std::vector<Expr> coords;
      for (size_t d = 0; d < box.size(); ++d)
        coords.push_back(var(prefix + std::to_string(d)));
      auto request = [&](std::vector<Expr> at) {
        Expr element = t->func ? Call::make(t->types[v], p.target, std::move(at), Call::Halide, t->func, nullptr,
                                            static_cast<int>(v))
                               : Call::make(t->types[v], p.target, std::move(at), Call::Image, nullptr, p.image);
        return Evaluate::make(Call::make(Int(32), Call::Prefetch, {element}, Call::Intrinsic));
      };
      const std::string line = prefix + "line";
      const Expr extent = simplify(box[inner].max - box[inner].min + 1);
      std::vector<Expr> lineCoords = coords, lastCoords = coords;
      lineCoords[inner] = box[inner].min + var(line) * perLine;
      lastCoords[inner] = box[inner].max;
      Stmt s = For::make(line, 0, simplify((extent + (perLine - 1)) / perLine), ForType::Serial, request(lineCoords));
      if (perLine > 1)
        s = Block::make(s, IfThenElse::make(extent > 1, request(lastCoords)));
      for (size_t d = 0; d < box.size(); ++d)
        if (d != inner)
          s = For::make(prefix + std::to_string(d), box[d].min, simplify(box[d].max - box[d].min + 1), ForType::Serial, s);
      values.push_back(s);
    }
    Stmt hint = Block::make(values);
    return p.strategy == PrefetchBoundStrategy::GuardWithIf ? IfThenElse::make(simplify(inside), hint) : hint;
  }
};

} // namespace

Stmt prefetch_placeholder(const PrefetchDirective &p, const std::string &atLoop, const std::string &fromLoop) {
  std::string name = PlaceholderPrefix + std::to_string(static_cast<int>(p.strategy));
  for (const std::string *field : {&atLoop, &fromLoop, &p.name})
    name += std::to_string(field->size()) + ":" + *field;
  return Evaluate::make(Call::make(Int(32), name, {p.offset}, Call::Intrinsic, nullptr, p.image));
}

Stmt inject_prefetches(const Stmt &s, const Environment &env, const Outputs &outputs) {
  return PrefetchInjector(env, outputs).mutate(s);
}

} // namespace ptxjit::lower
