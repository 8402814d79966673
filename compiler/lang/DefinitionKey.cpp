#include "lang/DefinitionKey.h"

#include "ir/IREquality.h"
#include "ir/IRVisitor.h"

#include <cstring>
#include <set>

namespace ptxjit {

// Every field lowering reads must be written into the key: a field left out would let two
// different pipelines share compiled code. These sizes (of the x86-64 libstdc++ layout) make a
// new field a compile error here until it is added below and the size updated. A Param's value
// and an ImageParam's bound buffer are left out on purpose: a realize reads them.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(FunctionContents) == 688, "a field of FunctionContents is missing from the definition key");
static_assert(sizeof(Definition) == 256, "a field of Definition is missing from the definition key");
static_assert(sizeof(StageSchedule) == 112, "a field of StageSchedule is missing from the definition key");
static_assert(sizeof(PrefetchDirective) == 128, "a field of PrefetchDirective is missing from the definition key");
static_assert(sizeof(Split) == 120, "a field of Split is missing from the definition key");
static_assert(sizeof(Dim) == 40, "a field of Dim is missing from the definition key");
static_assert(sizeof(Specialization) == 120, "a field of Specialization is missing from the definition key");
static_assert(sizeof(ReductionDomainContents) == 72, "a field of ReductionDomainContents is missing from the key");
static_assert(sizeof(ReductionVariable) == 48, "a field of ReductionVariable is missing from the definition key");
static_assert(sizeof(LoopLevelContents) == 72, "a field of LoopLevelContents is missing from the definition key");
static_assert(sizeof(FunctionBound) == 64, "a field of FunctionBound is missing from the definition key");
static_assert(sizeof(ParameterContents) == 280, "a field of ParameterContents is missing from the definition key");
static_assert(sizeof(DimensionConstraint) == 32, "a field of DimensionConstraint is missing from the definition key");
#endif

namespace {

// Writes the key; Funcs, Params and reduction domains are written once each, when first met,
// and referred to by name after that.
class KeyWriter : public ir::IRVisitor {
public:
  DefinitionKey Result;
  bool Keyable = true;

  void function(const std::shared_ptr<FunctionContents> &f) {
    if (!f)
      return;
    auto [it, inserted] = Functions.emplace(f->name, f.get());
    if (!inserted) {
      Keyable = Keyable && it->second == f.get();
      return;
    }
    tag('F');
    name(f->name);
    count(f->args.size());
    for (const std::string &a : f->args)
      name(a);
    count(f->types.size());
    for (Type t : f->types)
      type(t);
    count(f->num_stages());
    for (int s = 0; s < f->num_stages(); ++s)
      definition(f->stage(s));
    level(f->compute_level);
    level(f->store_level);
    level(f->hoist_level);
    flag(f->compute_level_set);
    flag(f->store_level_set);
    flag(f->hoist_level_set);
    flag(f->inline_reduction);
    count(f->bounds.size());
    for (const FunctionBound &b : f->bounds) {
      name(b.var);
      expr(b.min);
      expr(b.extent);
      expr(b.modulus);
      expr(b.remainder);
    }
    count(static_cast<size_t>(f->memory_type));
    count(f->storage_dims.size());
    for (const std::string &d : f->storage_dims)
      name(d);
    count(f->storage_alignment.size());
    for (const auto &[d, alignment] : f->storage_alignment) {
      name(d);
      count(static_cast<size_t>(alignment));
    }
    count(f->storage_folds.size());
    for (const auto &[d, rows] : f->storage_folds) {
      name(d);
      count(static_cast<size_t>(rows));
    }
    flag(f->trace_stores);
    flag(f->trace_loads);
    flag(f->trace_realizations);
    count(f->output_buffers.size());
    for (const auto &buffer : f->output_buffers) {
      name(buffer->name);
      type(buffer->type);
      count(static_cast<size_t>(buffer->dimensions));
      constraints(buffer->constraints);
    }
    name(f->wrapped_func.expired() ? "" : f->wrapped_func.lock()->name);
    name(f->wrapped_image.expired() ? "" : f->wrapped_image.lock()->name);
    if (auto image = f->wrapped_image.lock())
      parameter(image);
    wrappers(f->wrappers);
    // The wrapped Func is written after its wrapper's own fields: a wrapper reads it by name only.
    if (auto wrapped = f->wrapped_func.lock())
      function(wrapped);
  }

  // An output's buffer is written with its Func, and is no argument of the pipeline.
  void parameter(const std::shared_ptr<ParameterContents> &p) {
    if (!p || p->is_output)
      return;
    auto [it, inserted] = Result.parameters.emplace(p->name, p);
    if (!inserted) {
      Keyable = Keyable && it->second == p;
      return;
    }
    tag('P');
    name(p->name);
    type(p->type);
    flag(p->is_buffer);
    count(static_cast<size_t>(p->dimensions));
    constraints(p->constraints);
    count(static_cast<size_t>(p->host_alignment));
    wrappers(p->wrappers);
  }

private:
  std::map<std::string, const FunctionContents *> Functions;
  std::map<std::string, const ReductionDomainContents *> Domains;

  void tag(char c) { Result.text.push_back(c); }
  void raw(const void *bytes, size_t size) { Result.text.append(static_cast<const char *>(bytes), size); }
  void count(size_t n) {
    uint64_t value = n;
    raw(&value, sizeof(value));
  }
  void flag(bool b) { Result.text.push_back(b ? '1' : '0'); }
  void name(const std::string &s) {
    count(s.size());
    Result.text += s;
  }
  void type(Type t) {
    count(static_cast<size_t>(t.code));
    count(static_cast<size_t>(t.bits));
    count(static_cast<size_t>(t.lanes));
  }
  void expr(const Expr &e) {
    name(ir::structural_key(e));
    if (e.defined())
      e.accept(this); // the Funcs, Params and domains it names
  }
  void constraints(const std::vector<DimensionConstraint> &all) {
    count(all.size());
    for (const DimensionConstraint &c : all) {
      expr(c.min);
      expr(c.extent);
      expr(c.stride);
      flag(c.any_stride);
    }
  }
  void level(const LoopLevel &handle) {
    const LoopLevelContents &l = *handle.contents();
    count(static_cast<size_t>(l.kind));
    name(l.func);
    name(l.var);
  }
  void wrappers(const std::map<std::string, std::shared_ptr<FunctionContents>> &all) {
    count(all.size());
    for (const auto &[consumer, wrapper] : all) {
      name(consumer);
      name(wrapper->name);
    }
    for (const auto &[consumer, wrapper] : all)
      function(wrapper);
  }
  void domain(const std::shared_ptr<ReductionDomainContents> &d) {
    if (!d) {
      tag('-');
      return;
    }
    tag('R');
    name(d->name);
    auto [it, inserted] = Domains.emplace(d->name, d.get());
    if (!inserted) {
      Keyable = Keyable && it->second == d.get();
      return;
    }
    count(d->domain.size());
    for (const ReductionVariable &rv : d->domain) {
      name(rv.var);
      expr(rv.min);
      expr(rv.extent);
    }
    expr(d->predicate);
    flag(d->used);
  }
  void schedule(const StageSchedule &s) {
    count(s.splits.size());
    for (const Split &split : s.splits) {
      count(static_cast<size_t>(split.kind));
      name(split.old_var);
      name(split.outer);
      name(split.inner);
      expr(split.factor);
      count(static_cast<size_t>(split.tail));
    }
    count(s.dims.size());
    for (const Dim &d : s.dims) {
      name(d.var);
      count(static_cast<size_t>(d.for_type));
      flag(d.is_rvar);
    }
    count(s.reordered_rvars.size());
    for (const auto &[a, b] : s.reordered_rvars) {
      name(a);
      name(b);
    }
    count(s.prefetches.size());
    for (const PrefetchDirective &p : s.prefetches) {
      name(p.name);
      parameter(p.image);
      name(p.at);
      name(p.from);
      expr(p.offset);
      count(static_cast<size_t>(p.strategy));
    }
    flag(s.allow_race_conditions);
    flag(s.touched);
  }
  void definition(const Definition &d) {
    tag('D');
    count(d.args.size());
    for (const Expr &a : d.args)
      expr(a);
    count(d.values.size());
    for (const Expr &v : d.values)
      expr(v);
    domain(d.rdom);
    expr(d.predicate);
    schedule(d.schedule);
    count(d.specializations.size());
    for (const Specialization &s : d.specializations) {
      expr(s.condition);
      schedule(s.schedule);
    }
    flag(d.specialize_fail.has_value());
    name(d.specialize_fail.value_or(""));
    flag(d.atomic);
  }

  using ir::IRVisitor::visit;
  void visit(const ir::Variable *op) override {
    parameter(op->param);
    domain(op->reduction_domain);
  }
  void visit(const ir::Call *op) override {
    ir::IRVisitor::visit(op);
    parameter(op->param);
    function(op->func);
  }
};

} // namespace

DefinitionKey definition_key(const std::vector<std::shared_ptr<FunctionContents>> &outputs) {
  KeyWriter writer;
  for (const auto &output : outputs) {
    writer.Result.text += "O";
    writer.Result.text += output->name;
    writer.Result.text.push_back('\0');
  }
  for (const auto &output : outputs)
    writer.function(output);
  if (!writer.Keyable)
    writer.Result.text.clear();
  return std::move(writer.Result);
}

} // namespace ptxjit
