#include "InjectTracing.h"

#include "ir/Constants.h"
#include "ir/IRMutator.h"
#include "ir/ScopedEntry.h"
#include "lang/Function.h"
#include "lang/Parameter.h"

#include <map>

namespace ptxjit::lower {

using namespace ir;

namespace {

// A trace event printing `text` with a placeholder for each of `values` (none of which is
// printed otherwise): "Store f.0(%, %) = %".
Expr event(const std::string &text, const Expr &value, const std::vector<Expr> &values) {
  std::vector<Expr> args{make_bool(true), value};
  args.insert(args.end(), values.begin(), values.end());
  return Call::make(value.type(), std::string(Call::Trace) + ":" + text + "\n", std::move(args), Call::Intrinsic);
}

// "f.0(%, %) = %": the Func's name, the value's index, a placeholder for each coordinate and for
// the value.
std::string pointText(const std::string &func, size_t value, size_t dimensions) {
  std::string text = func + "." + std::to_string(value) + "(";
  for (size_t d = 0; d < dimensions; ++d)
    text += d ? ", %" : "%";
  return text + ") = %";
}

class InjectTracing : public IRMutator {
public:
  explicit InjectTracing(const Environment &env) : Env(env) {}

private:
  const Environment &Env;
  std::map<std::string, Region> Realized; // the region of each realization around the code
  int Lets = 0;                          // names the values loads are bound to apart

  const FunctionContents *function(const std::string &name) const {
    auto it = Env.find(name);
    return it == Env.end() ? nullptr : it->second.get();
  }

  using IRMutator::visit;

  Stmt visit(const Realize *op) override {
    ScopedEntry<Region> entry(Realized, op->name);
    Realized[op->name] = op->bounds;
    return IRMutator::visit(op);
  }

  // Produce, End produce, Consume, End consume: the realization's region, or the output buffer's.
  Stmt visit(const ProducerConsumer *op) override {
    Stmt body = mutate(op->body);
    const FunctionContents *f = function(op->name);
    if (!f || !f->trace_realizations)
      return ProducerConsumer::make(op->name, op->is_producer, body);
    std::vector<Expr> region;
    std::string placeholders;
    if (auto it = Realized.find(op->name); it != Realized.end()) {
      for (const Range &r : it->second) {
        region.push_back(r.min);
        region.push_back(r.extent);
      }
    } else {
      const std::string buffer = value_buffer_name(f->name, 0, f->types.size());
      for (size_t d = 0; d < f->args.size(); ++d) {
        region.push_back(Variable::make(Int(32), buffer_field_name(buffer, "min", static_cast<int>(d))));
        region.push_back(Variable::make(Int(32), buffer_field_name(buffer, "extent", static_cast<int>(d))));
      }
    }
    for (size_t i = 0; i < region.size(); ++i)
      placeholders += i ? ", %" : "%";
    auto mark = [&](const std::string &what) {
      return Evaluate::make(event(what + " " + f->name + "(" + placeholders + ")", make_zero(Int(32)), region));
    };
    const Stmt traced = op->is_producer ? Block::make({mark("Produce"), body, mark("End produce")})
                                        : Block::make({mark("Consume"), body, mark("End consume")});
    return ProducerConsumer::make(op->name, op->is_producer, traced);
  }

  // The store, then each value read back: "Store f.0(x, y) = v".
  Stmt visit(const Provide *op) override {
    Stmt provide = IRMutator::visit(op);
    const FunctionContents *f = function(op->name);
    if (!f || !f->trace_stores)
      return provide;
    std::vector<Stmt> block{provide};
    for (size_t v = 0; v < op->values.size(); ++v) {
      if (is_undef(op->values[v]))
        continue;
      Expr stored = Call::make(op->values[v].type(), op->name, op->args, Call::Halide, Env.at(op->name), nullptr,
                               static_cast<int>(v));
      std::vector<Expr> values = op->args;
      values.push_back(stored);
      block.push_back(Evaluate::make(event("Store " + pointText(op->name, v, op->args.size()), stored, values)));
    }
    return Block::make(block);
  }

  // The value read, printed: "Load f.0(x, y) = v".
  Expr visit(const Call *op) override {
    Expr call = IRMutator::visit(op);
    const FunctionContents *f = op->call_type == Call::Halide ? function(op->name) : nullptr;
    if (!f || !f->trace_loads)
      return call;
    const Expr loaded = Variable::make(op->type, op->name + ".traced_load" + std::to_string(Lets++));
    std::vector<Expr> values = call.as<Call>()->args;
    values.push_back(loaded);
    return Let::make(loaded.as<Variable>()->name, call,
                     event("Load " + pointText(op->name, static_cast<size_t>(op->value_index), op->args.size()), loaded,
                           values));
  }
};

} // namespace

Stmt inject_tracing(const Stmt &s, const Environment &env) {
  for (const auto &[name, f] : env)
    if (f->trace_stores || f->trace_loads || f->trace_realizations)
      return InjectTracing(env).mutate(s);
  return s;
}

} // namespace ptxjit::lower
