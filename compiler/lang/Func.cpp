#include "ptxjit/Func.h"

#include "ir/CSE.h"
#include "ir/Constants.h"
#include "ir/IREquality.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lang/Function.h"
#include "lang/ImplicitVars.h"
#include "lang/Parameter.h"
#include "lang/Random.h"
#include "lang/UniqueName.h"
#include "ptxjit/IROperator.h"
#include "ptxjit/Param.h"

#include <algorithm>
#include <functional>
#include <set>

namespace ptxjit {

using namespace ir;

namespace {

class CalledFunctions : public IRVisitor {
public:
  std::vector<std::shared_ptr<FunctionContents>> Found;

private:
  using IRVisitor::visit;
  void visit(const Call *op) override {
    IRVisitor::visit(op);
    if (op->call_type == Call::Halide && op->func &&
        std::find(Found.begin(), Found.end(), op->func) == Found.end())
      Found.push_back(op->func);
  }
};

// Replaces a Func's calls to itself with unowned ones, so its definitions hold no reference
// cycle to it.
class DropSelfReferences : public IRMutator {
public:
  explicit DropSelfReferences(const FunctionContents *self) : Self(self) {}

private:
  const FunctionContents *Self;
  using IRMutator::visit;
  Expr visit(const Call *op) override {
    Expr e = IRMutator::visit(op);
    const auto *call = e.as<Call>();
    if (call->call_type == Call::Halide && call->func.get() == Self)
      return Call::make(call->type, call->name, call->args, Call::Halide, nullptr, nullptr, call->value_index);
    return e;
  }
};

struct FreeVariable {
  std::string name;
  std::shared_ptr<ReductionDomainContents> rdom;
  bool is_param;
};

class FreeVariables : public IRVisitor {
public:
  std::vector<FreeVariable> Found;

private:
  std::vector<std::string> Bound; // names of the lets around the expression being visited
  using IRVisitor::visit;
  void visit(const Variable *op) override {
    if (std::find(Bound.begin(), Bound.end(), op->name) != Bound.end())
      return;
    for (const FreeVariable &v : Found)
      if (v.name == op->name)
        return;
    Found.push_back({op->name, op->reduction_domain, op->param != nullptr});
  }
  void visit(const Let *op) override {
    op->value.accept(this);
    Bound.push_back(op->name);
    op->body.accept(this);
    Bound.pop_back();
  }
};

std::vector<FreeVariable> freeVariables(const std::vector<Expr> &exprs) {
  FreeVariables finder;
  for (const Expr &e : exprs)
    e.accept(&finder);
  return finder.Found;
}

bool callsTransitively(const std::shared_ptr<FunctionContents> &from, const FunctionContents *target,
                       std::set<const FunctionContents *> &visited) {
  if (from.get() == target)
    return true;
  if (!visited.insert(from.get()).second)
    return false;
  std::vector<Expr> exprs;
  for (int s = 0; s < from->num_stages(); ++s) {
    const Definition &d = from->stage(s);
    exprs.insert(exprs.end(), d.values.begin(), d.values.end());
    exprs.insert(exprs.end(), d.args.begin(), d.args.end());
  }
  for (const Expr &e : exprs)
    for (const auto &callee : called_functions(e))
      if (callsTransitively(callee, target, visited))
        return true;
  return false;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

Expr integerArgument(Expr arg, const std::string &func, size_t i) {
  if (!arg.defined() || arg.type().is_float() || arg.type().is_vector())
    throw CompileError("argument " + std::to_string(i) + " of Func " + func + " must be an integer" +
                       (arg.defined() ? ", not " + to_string(arg.type()) + " (" + ir::to_string(arg) + ")" : ""));
  return cast(Int(32), arg);
}

// The prefix of the lets that common subexpression elimination makes in value `i` of a stage.
std::string letPrefix(const std::string &stageName, size_t i, size_t count) {
  return count == 1 ? stageName : stageName + ".v" + std::to_string(i);
}

bool containsUndef(const Expr &e) {
  struct Finder : IRVisitor {
    bool Found = false;
    using IRVisitor::visit;
    void visit(const Call *op) override {
      Found = Found || op->is_undef();
      IRVisitor::visit(op);
    }
  } finder;
  e.accept(&finder);
  return finder.Found;
}

// undef() stores nothing, so it has no value to compute with: it is a whole value or nothing.
// (The values are checked after common subexpression elimination, which makes them trees.)
void checkUndefPlacement(const std::string &stageName, const std::vector<Expr> &args, const std::vector<Expr> &values) {
  for (const Expr &value : values)
    if (!is_undef(value) && containsUndef(value))
      throw CompileError(stageName + ": undef() may only be a whole value of a definition, not part of " +
                         ir::to_string(value));
  for (const Expr &arg : args)
    if (containsUndef(arg))
      throw CompileError(stageName + ": undef() may not be an argument of a definition (" + ir::to_string(arg) + ")");
}

void definePure(FunctionContents &f, const std::vector<Expr> &args, std::vector<Expr> values) {
  const int randomTag = next_random_definition_tag();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = lower_random(common_subexpression_elimination(values[i], letPrefix(f.name + ".s0", i, values.size())),
                             args, randomTag);
  checkUndefPlacement("Func " + f.name, {}, values);
  std::vector<std::string> names;
  for (const Expr &arg : args)
    names.push_back(arg.as<Variable>()->name);
  for (const FreeVariable &v : freeVariables(values)) {
    if (v.rdom)
      throw CompileError("Func " + f.name + ": the pure definition uses RVar " + v.name +
                         "; reductions belong in update definitions");
    if (!v.is_param && std::find(names.begin(), names.end(), v.name) == names.end())
      throw CompileError("Func " + f.name + ": the pure definition uses Var " + v.name +
                         ", which is not one of its arguments (" + joinNames(names) + ")");
  }
  f.args = names;
  f.types.clear();
  for (const Expr &value : values)
    f.types.push_back(value.type());
  f.init.args = args;
  f.init.values = values;
  for (const std::string &n : names)
    f.init.schedule.dims.push_back({n, ForType::Serial, false});
}

void defineUpdate(const std::shared_ptr<FunctionContents> &f, std::vector<Expr> args, std::vector<Expr> values) {
  const std::string stageName = f->name + ".s" + std::to_string(f->updates.size() + 1);
  if (values.size() != f->types.size())
    throw CompileError("Func " + f->name + " has " + std::to_string(f->types.size()) + " value" +
                       (f->types.size() == 1 ? "" : "s") + " but update " + stageName + " gives " +
                       std::to_string(values.size()));
  if (args.size() != f->args.size())
    throw CompileError("Func " + f->name + " has " + std::to_string(f->args.size()) +
                       " dimensions but update " + stageName + " gives " + std::to_string(args.size()) + " arguments");
  for (size_t i = 0; i < args.size(); ++i)
    args[i] = integerArgument(args[i], f->name, i);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = common_subexpression_elimination(values[i], letPrefix(stageName, i, values.size()));
  checkUndefPlacement("update " + stageName + " of Func " + f->name, args, values);
  for (size_t i = 0; i < values.size(); ++i) {
    Expr &value = values[i];
    const Type type = f->types[i];
    if (value.type() != type) {
      bool literal = (value.as<IntImm>() && value.type() == Int(32)) || value.as<FloatImm>();
      const std::string which = values.size() == 1 ? "" : " value " + std::to_string(i);
      if (!literal)
        throw CompileError("Func " + f->name + which + " has type " + to_string(type) + " but update " + stageName +
                           which + " has type " + to_string(value.type()) + "; cast the value");
      value = cast(type, value);
    }
  }

  std::vector<Expr> all = args;
  all.insert(all.end(), values.begin(), values.end());
  std::shared_ptr<ReductionDomainContents> rdom;
  auto checkFreeVariables = [&](const std::vector<Expr> &exprs) {
    for (const FreeVariable &v : freeVariables(exprs)) {
      if (v.is_param)
        continue;
      if (v.rdom) {
        if (rdom && rdom != v.rdom)
          throw CompileError("update " + stageName + " uses RVars of two different RDoms (" + rdom->name + " and " +
                             v.rdom->name + ")");
        rdom = v.rdom;
        continue;
      }
      auto pos = std::find(f->args.begin(), f->args.end(), v.name);
      size_t i = static_cast<size_t>(pos - f->args.begin());
      const Variable *lhs = pos == f->args.end() ? nullptr : args[i].as<Variable>();
      if (!lhs || lhs->name != v.name)
        throw CompileError("update " + stageName + " uses Var " + v.name +
                           ", which must appear as argument " + (pos == f->args.end() ? std::string("of Func ") + f->name
                           : std::to_string(i)) + " on the left-hand side (pure arguments: " + joinNames(f->args) + ")");
    }
  };
  checkFreeVariables(all);
  // The RDom's predicate (where()) is part of the update: what it reads is checked as the value is.
  Expr predicate = rdom ? rdom->predicate : Expr();
  if (predicate.defined()) {
    // The domain keeps its RVars in the predicate as plain names (see RDom::where).
    std::map<std::string, Expr> rvars;
    for (const ReductionVariable &rv : rdom->domain)
      rvars[rv.var] = Variable::make(Int(32), rv.var, nullptr, rdom);
    predicate = substitute(rvars, predicate);
    checkFreeVariables({predicate});
    all.push_back(predicate);
  }

  // random_*() of the point the update computes: its pure Vars and RVars.
  std::vector<Expr> freeVariables;
  for (size_t i = 0; i < args.size(); ++i)
    if (const auto *v = args[i].as<Variable>(); v && v->name == f->args[i] && !v->param && !v->reduction_domain)
      freeVariables.push_back(args[i]);
  if (rdom)
    for (const ReductionVariable &rv : rdom->domain)
      freeVariables.push_back(Variable::make(Int(32), rv.var, nullptr, rdom));
  const int randomTag = next_random_definition_tag();
  for (Expr &arg : args)
    arg = lower_random(arg, freeVariables, randomTag);
  for (Expr &value : values)
    value = lower_random(value, freeVariables, randomTag);
  if (predicate.defined())
    predicate = lower_random(predicate, freeVariables, randomTag);

  DropSelfReferences dropSelf(f.get());
  for (Expr &arg : args)
    arg = dropSelf.mutate(arg);
  for (Expr &value : values)
    value = dropSelf.mutate(value);
  if (predicate.defined())
    predicate = dropSelf.mutate(predicate);
  for (const Expr &e : all)
    for (const auto &callee : called_functions(e)) {
      std::set<const FunctionContents *> visited;
      if (callee != f && callsTransitively(callee, f.get(), visited))
        throw CompileError("update " + stageName + " calls Func " + callee->name + ", which depends on " + f->name +
                           ": cyclic dependency");
    }

  Definition d;
  d.args = args;
  d.values = values;
  d.rdom = rdom;
  d.predicate = predicate;
  if (rdom) {
    rdom->used = true;
    for (const ReductionVariable &rv : rdom->domain)
      d.schedule.dims.push_back({rv.var, ForType::Serial, true});
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (const auto *v = args[i].as<Variable>(); v && v->name == f->args[i])
      d.schedule.dims.push_back({v->name, ForType::Serial, false});
  f->updates.push_back(std::move(d));
}

} // namespace

std::string value_buffer_name(const std::string &func, int index, size_t count) {
  return count == 1 ? func : func + "." + std::to_string(index);
}

std::vector<std::shared_ptr<FunctionContents>> called_functions(const Expr &e) {
  CalledFunctions finder;
  if (e.defined())
    e.accept(&finder);
  return finder.Found;
}

void mutate_definitions(FunctionContents &f, IRMutator &mutator) {
  for (int s = 0; s < f.num_stages(); ++s) {
    Definition &d = f.stage(s);
    for (Expr &a : d.args)
      a = mutator.mutate(a);
    for (Expr &v : d.values)
      v = mutator.mutate(v);
    if (d.predicate.defined())
      d.predicate = mutator.mutate(d.predicate);
  }
}

std::vector<std::vector<Expr>> calls_to(const std::string &func, const Expr &e, int valueIndex) {
  struct Finder : IRVisitor {
    const std::string &Func;
    const int ValueIndex;
    std::vector<std::vector<Expr>> Calls;
    Finder(const std::string &f, int v) : Func(f), ValueIndex(v) {}
    using IRVisitor::visit;
    void visit(const Call *op) override {
      if (op->call_type == Call::Halide && op->name == Func && (ValueIndex < 0 || op->value_index == ValueIndex))
        Calls.push_back(op->args);
      IRVisitor::visit(op);
    }
  } finder(func, valueIndex);
  if (e.defined())
    e.accept(&finder);
  return finder.Calls;
}

std::optional<ValueReduction> match_reduction(const std::string &func, const Definition &d, size_t index) {
  using Combiner = ValueReduction::Combiner;
  std::map<std::string, Expr> lets;
  const Expr body = peel_lets(d.values[index], lets);
  auto isOld = [&](const Expr &e) {
    const auto *call = e.as<Call>();
    if (!call || call->call_type != Call::Halide || call->name != func ||
        call->value_index != static_cast<int>(index) || call->args.size() != d.args.size())
      return false;
    for (size_t i = 0; i < d.args.size(); ++i)
      if (!equal(simplify(substitute(lets, call->args[i])), simplify(d.args[i])))
        return false;
    return true;
  };
  // Values left undef() stay as they were throughout the update: reading them is no dependence.
  auto contribution = [&](const Expr &e) -> std::optional<Expr> {
    Expr written = substitute(lets, e);
    for (size_t v = 0; v < d.values.size(); ++v)
      if (!is_undef(d.values[v]) && !calls_to(func, written, static_cast<int>(v)).empty())
        return std::nullopt;
    return written;
  };
  // Either operand may be the old value where the combiner is commutative.
  auto binary = [&](const auto *op, Combiner c, bool commutative) -> std::optional<ValueReduction> {
    if (!op)
      return std::nullopt;
    if (isOld(op->a))
      if (auto e = contribution(op->b))
        return ValueReduction{c, *e};
    if (commutative && isOld(op->b))
      if (auto e = contribution(op->a))
        return ValueReduction{c, *e};
    return std::nullopt;
  };
  if (auto r = binary(body.as<Add>(), Combiner::Add, true))
    return r;
  if (auto r = binary(body.as<Sub>(), Combiner::Subtract, false))
    return r;
  if (auto r = binary(body.as<Mul>(), Combiner::Multiply, true))
    return r;
  if (auto r = binary(body.as<Min>(), Combiner::Min, true))
    return r;
  if (auto r = binary(body.as<Max>(), Combiner::Max, true))
    return r;
  if (auto r = binary(body.as<And>(), Combiner::And, true))
    return r;
  return binary(body.as<Or>(), Combiner::Or, true);
}

namespace {

LoopLevelContents definedLevel(const LoopLevel &level, const std::string &func, const char *what) {
  const LoopLevelContents &l = *level.contents();
  if (l.kind == LoopLevelContents::Undefined)
    throw CompileError("Func " + func + " is " + what + " at a LoopLevel that is undefined; set() it before compiling");
  return l;
}

} // namespace

LoopLevelContents FunctionContents::computed_at() const {
  if (compute_level_set)
    return definedLevel(compute_level, name, "computed");
  return {updates.empty() ? LoopLevelContents::Inlined : LoopLevelContents::Root, "", ""};
}

LoopLevelContents FunctionContents::stored_at() const {
  return store_level_set ? definedLevel(store_level, name, "stored") : computed_at();
}

std::optional<LoopLevelContents> FunctionContents::hoisted_at() const {
  if (!hoist_level_set)
    return std::nullopt;
  return definedLevel(hoist_level, name, "hoisted");
}

// ---- LoopLevel ----

LoopLevel::LoopLevel() : Contents(std::make_shared<LoopLevelContents>()) {}

LoopLevel::LoopLevel(const Func &f, const VarOrRVar &var)
    : Contents(std::make_shared<LoopLevelContents>(LoopLevelContents{LoopLevelContents::At, f.name(), var.name()})) {}

LoopLevel LoopLevel::inlined() {
  LoopLevel l;
  l.Contents->kind = LoopLevelContents::Inlined;
  return l;
}

LoopLevel LoopLevel::root() {
  LoopLevel l;
  l.Contents->kind = LoopLevelContents::Root;
  return l;
}

void LoopLevel::set(const LoopLevel &other) { *Contents = *other.Contents; }

bool LoopLevel::defined() const { return Contents->kind != LoopLevelContents::Undefined; }
bool LoopLevel::is_inlined() const { return Contents->kind == LoopLevelContents::Inlined; }
bool LoopLevel::is_root() const { return Contents->kind == LoopLevelContents::Root; }
std::string LoopLevel::func() const { return Contents->func; }
std::string LoopLevel::var() const { return Contents->var; }

std::string LoopLevel::to_string() const {
  switch (Contents->kind) {
  case LoopLevelContents::Undefined:
    return "undefined";
  case LoopLevelContents::Inlined:
    return "inlined";
  case LoopLevelContents::Root:
    return "root";
  case LoopLevelContents::At:
    break;
  }
  return Contents->func + "." + Contents->var;
}

bool LoopLevel::operator==(const LoopLevel &other) const { return *Contents == *other.Contents; }

// ---- FuncRef ----

FuncRef::FuncRef(std::shared_ptr<FunctionContents> function, std::vector<Expr> args)
    : Function(std::move(function)), Args(std::move(args)) {
  for (size_t i = 0; i < Args.size(); ++i)
    if (!Args[i].defined())
      throw CompileError("argument " + std::to_string(i) + " of Func " + Function->name + " is undefined");
}

namespace {

// Defines f(args) = values: the pure definition when f is undefined, an update otherwise.
void define(const std::shared_ptr<FunctionContents> &f, const std::vector<Expr> &lhs, const std::vector<Expr> &values) {
  for (const Expr &value : values) {
    if (!value.defined())
      throw CompileError("Func " + f->name + " defined with an undefined Expr");
    if (value.type().is_vector())
      throw CompileError("Func " + f->name + " defined with a vector value");
  }
  const int dimensions = f->defined() ? static_cast<int>(f->args.size()) : -1;
  const std::vector<Expr> args = expand_implicit_lhs(lhs, values, dimensions, f->name);
  if (f->defined()) {
    defineUpdate(f, args, values);
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto *v = args[i].as<Variable>();
    if (!v || v->param || v->reduction_domain || !seen.insert(v->name).second)
      throw CompileError("Func " + f->name + ": the first definition must be pure, with distinct Vars as " +
                         "arguments, but argument " + std::to_string(i) + " is " + ir::to_string(args[i]));
  }
  definePure(*f, args, values);
}

// `f(args) op= values`: an undefined f first gets the pure definition f(...) = identity, over
// the update's own Vars where its arguments are distinct Vars (so that the update may use them
// as pure dimensions), and over implicit ones elsewhere, as in Halide.
template <typename Op>
FuncRef &compoundAssign(FuncRef &ref, const std::shared_ptr<FunctionContents> &f, const std::vector<Expr> &args,
                        const std::vector<Expr> &values, int64_t identity, Op op) {
  for (const Expr &value : values)
    if (!value.defined())
      throw CompileError("Func " + f->name + " updated with an undefined Expr");
  if (!f->defined()) {
    // f(_) += g(_): the implicit Vars the value uses.
    const std::vector<Expr> expanded = expand_implicit_lhs(args, values, -1, f->name);
    std::vector<Expr> vars;
    std::set<std::string> seen;
    for (size_t i = 0; i < expanded.size(); ++i) {
      const auto *v = expanded[i].as<ir::Variable>();
      if (v && !v->param && !v->reduction_domain && seen.insert(v->name).second)
        vars.push_back(expanded[i]);
      else
        vars.push_back(Var(f->name + "._" + std::to_string(i)));
    }
    std::vector<Expr> identities;
    for (const Expr &value : values)
      identities.push_back(make_const(value.type(), identity));
    define(f, vars, identities);
  }
  if (values.size() != f->types.size())
    throw CompileError("Func " + f->name + " has " + std::to_string(f->types.size()) + " value" +
                       (f->types.size() == 1 ? "" : "s") + " but is updated with " + std::to_string(values.size()));
  std::vector<Expr> updated;
  for (size_t i = 0; i < values.size(); ++i)
    updated.push_back(op(ref[static_cast<int>(i)], values[i]));
  define(f, args, updated);
  return ref;
}

const auto Plus = [](Expr a, Expr b) { return a + b; };
const auto Minus = [](Expr a, Expr b) { return a - b; };
const auto Times = [](Expr a, Expr b) { return a * b; };
const auto Divided = [](Expr a, Expr b) { return a / b; };

} // namespace

FuncRef &FuncRef::operator=(Expr value) {
  define(Function, Args, {std::move(value)});
  return *this;
}

FuncRef &FuncRef::operator=(const Tuple &values) {
  define(Function, Args, values.as_vector());
  return *this;
}

FuncRef &FuncRef::operator=(const FuncRef &other) { return *this = Tuple(other); }

FuncRef &FuncRef::operator+=(Expr v) { return compoundAssign(*this, Function, Args, {std::move(v)}, 0, Plus); }
FuncRef &FuncRef::operator-=(Expr v) { return compoundAssign(*this, Function, Args, {std::move(v)}, 0, Minus); }
FuncRef &FuncRef::operator*=(Expr v) { return compoundAssign(*this, Function, Args, {std::move(v)}, 1, Times); }
FuncRef &FuncRef::operator/=(Expr v) { return compoundAssign(*this, Function, Args, {std::move(v)}, 1, Divided); }
FuncRef &FuncRef::operator+=(const Tuple &v) { return compoundAssign(*this, Function, Args, v.as_vector(), 0, Plus); }
FuncRef &FuncRef::operator-=(const Tuple &v) { return compoundAssign(*this, Function, Args, v.as_vector(), 0, Minus); }
FuncRef &FuncRef::operator*=(const Tuple &v) { return compoundAssign(*this, Function, Args, v.as_vector(), 1, Times); }
FuncRef &FuncRef::operator/=(const Tuple &v) {
  return compoundAssign(*this, Function, Args, v.as_vector(), 1, Divided);
}

FuncRef::operator Expr() const {
  if (Function->defined() && Function->types.size() > 1)
    throw CompileError("Func " + Function->name + " has " + std::to_string(Function->types.size()) +
                       " values (a Tuple): call one of them, " + Function->name + "(...)[i]");
  return (*this)[0];
}

size_t FuncRef::size() const {
  if (!Function->defined())
    throw CompileError("Func " + Function->name + " is called before it is defined");
  return Function->types.size();
}

Expr FuncRef::operator[](int i) const {
  if (!Function->defined())
    throw CompileError("Func " + Function->name + " is called before it is defined");
  if (i < 0 || static_cast<size_t>(i) >= Function->types.size())
    throw CompileError("Func " + Function->name + " has " + std::to_string(Function->types.size()) + " value" +
                       (Function->types.size() == 1 ? "" : "s") + ", not a value " + std::to_string(i));
  const std::vector<Expr> given = expand_implicit_call_args(Args, static_cast<int>(Function->args.size()),
                                                            "Func " + Function->name);
  if (given.size() != Function->args.size())
    throw CompileError("Func " + Function->name + " has " + std::to_string(Function->args.size()) +
                       " dimensions but is called with " + std::to_string(given.size()) + " arguments");
  std::vector<Expr> args;
  for (size_t k = 0; k < given.size(); ++k)
    args.push_back(integerArgument(given[k], Function->name, k));
  return Call::make(Function->types[i], Function->name, std::move(args), Call::Halide, Function, nullptr, i);
}

Tuple::Tuple(const FuncRef &call) {
  for (size_t i = 0; i < call.size(); ++i)
    Values.push_back(call[static_cast<int>(i)]);
}

// ---- Stage ----

Stage::Stage(std::shared_ptr<FunctionContents> function, int index) : Function(std::move(function)), Index(index) {
  if (index < 0 || index >= Function->num_stages())
    throw CompileError("Func " + Function->name + " has no update definition " + std::to_string(index - 1));
}

Stage::Stage(std::shared_ptr<FunctionContents> function, int index, int specialization)
    : Stage(std::move(function), index) {
  SpecializationIndex = specialization;
}

std::string Stage::name() const { return Function->name + ".s" + std::to_string(Index); }

// The stage's schedule, or its specialization's.
StageSchedule &Stage::selectedSchedule() const {
  Definition &d = Function->stage(Index);
  return SpecializationIndex < 0 ? d.schedule : d.specializations.at(static_cast<size_t>(SpecializationIndex)).schedule;
}

StageSchedule &Stage::schedule() const {
  StageSchedule &s = selectedSchedule();
  s.touched = true;
  return s;
}

void Stage::unscheduled() {
  StageSchedule &s = selectedSchedule();
  if (s.touched || Function->stage(Index).atomic)
    throw CompileError("unscheduled() of " + name() + ": the stage was given a schedule already");
  s.touched = true;
}

namespace {

// The names of the variables `e` reads that are not Params or input sizes.
class NonParamVariables : public IRVisitor {
public:
  std::vector<std::string> Names;

private:
  using IRVisitor::visit;
  void visit(const Variable *op) override {
    if (!op->param && std::find(Names.begin(), Names.end(), op->name) == Names.end())
      Names.push_back(op->name);
  }
};

} // namespace

Stage Stage::specialize(Expr condition) {
  if (SpecializationIndex >= 0)
    throw CompileError("specialize of " + name() + ": a specialization cannot be specialized again; give the "
                       "combined condition (a && b) to the stage itself");
  if (!condition.defined() || !condition.type().is_bool() || !condition.type().is_scalar())
    throw CompileError("specialize of " + name() + ": the condition must be a bool");
  NonParamVariables reads;
  condition.accept(&reads);
  if (!reads.Names.empty())
    throw CompileError("specialize of " + name() + ": the condition reads " + joinNames(reads.Names) +
                       ", which is not a Param or an input's size; it must hold or fail for the whole realize");
  if (!is_realize_invariant(condition))
    throw CompileError("specialize of " + name() + ": the condition reads a Func or an input's values; it may read "
                       "only Params and input sizes");
  Definition &d = Function->stage(Index);
  if (d.specialize_fail)
    throw CompileError("specialize of " + name() + ": after specialize_fail, no condition can be added");
  for (size_t i = 0; i < d.specializations.size(); ++i)
    if (equal(d.specializations[i].condition, condition))
      return Stage(Function, Index, static_cast<int>(i));
  d.specializations.push_back({condition, d.schedule});
  return Stage(Function, Index, static_cast<int>(d.specializations.size()) - 1);
}

void Stage::specialize_fail(const std::string &message) {
  if (SpecializationIndex >= 0)
    throw CompileError("specialize_fail of " + name() + ": call it on the stage, not on one of its specializations");
  Definition &d = Function->stage(Index);
  if (d.specializations.empty())
    throw CompileError("specialize_fail of " + name() + ": there is no specialization; every realize would fail");
  d.specialize_fail = message;
}

namespace {

size_t findDim(const StageSchedule &s, const std::string &stage, const char *directive, const std::string &var) {
  for (size_t i = 0; i < s.dims.size(); ++i)
    if (s.dims[i].var == var)
      return i;
  std::vector<std::string> names;
  for (const Dim &d : s.dims)
    names.push_back(d.var);
  throw CompileError(std::string(directive) + " of " + stage + ": " + var + " is not a loop of " + stage +
                     " (its loops, innermost first: " + joinNames(names) + ")");
}

void requireFresh(const StageSchedule &s, const std::string &stage, const char *directive, const std::string &var,
                  const std::string &except) {
  if (var == except)
    return;
  for (const Dim &d : s.dims)
    if (d.var == var)
      throw CompileError(std::string(directive) + " of " + stage + ": " + var + " is already a loop of " + stage);
}

} // namespace

Stage &Stage::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
                    TailStrategy tail) {
  StageSchedule &s = schedule();
  size_t i = findDim(s, name(), "split", old.name());
  requireFresh(s, name(), "split", outer.name(), old.name());
  requireFresh(s, name(), "split", inner.name(), old.name());
  if (outer.name() == inner.name())
    throw CompileError("split of " + name() + ": outer and inner loops are both named " + inner.name());
  if (!factor.defined() || factor.type().is_float() || factor.type().is_vector())
    throw CompileError("split of " + name() + "." + old.name() + ": the factor must be an integer");
  if (auto c = as_const_int(factor); c && *c <= 0)
    throw CompileError("split of " + name() + "." + old.name() + ": the factor must be positive, not " +
                       std::to_string(*c));
  Dim d = s.dims[i];
  if (tail == TailStrategy::ShiftInward && Index > 0)
    throw CompileError("split of " + name() + "." + old.name() + ": TailStrategy::ShiftInward computes some points "
                       "twice, which only a pure definition allows; use GuardWithIf");
  if (tail == TailStrategy::RoundUp && Index > 0 && s.dims[i].is_rvar)
    throw CompileError("split of " + name() + "." + old.name() + ": TailStrategy::RoundUp computes points past the "
                       "end, which an RVar's loop does not allow (they would be reduced too); use GuardWithIf");
  if (tail == TailStrategy::PredicateLoads || tail == TailStrategy::PredicateStores)
    tail = TailStrategy::GuardWithIf;
  s.splits.push_back({Split::SplitVar, old.name(), outer.name(), inner.name(), cast(Int(32), factor), tail});
  Dim innerDim{inner.name(), d.for_type, d.is_rvar}, outerDim{outer.name(), ForType::Serial, d.is_rvar};
  s.dims[i] = innerDim;
  s.dims.insert(s.dims.begin() + static_cast<std::ptrdiff_t>(i) + 1, outerDim);
  return *this;
}

Stage &Stage::rename(const VarOrRVar &old, const VarOrRVar &renamed) {
  StageSchedule &s = schedule();
  size_t i = findDim(s, name(), "rename", old.name());
  if (renamed.name() == old.name())
    return *this;
  requireFresh(s, name(), "rename", renamed.name(), old.name());
  if (renamed.is_rvar() != s.dims[i].is_rvar)
    throw CompileError("rename of " + name() + ": " + old.name() + " is " + (s.dims[i].is_rvar ? "an RVar" : "a Var") +
                       " loop; name it with " + (s.dims[i].is_rvar ? "an RVar" : "a Var") + ", not " +
                       (renamed.is_rvar() ? "an RVar" : "a Var"));
  s.splits.push_back({Split::RenameVar, old.name(), renamed.name(), "", Expr(), TailStrategy::Auto});
  s.dims[i].var = renamed.name();
  return *this;
}

Stage &Stage::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
  StageSchedule &s = schedule();
  size_t i = findDim(s, name(), "fuse", inner.name());
  size_t o = findDim(s, name(), "fuse", outer.name());
  if (i == o)
    throw CompileError("fuse of " + name() + ": inner and outer are both " + inner.name());
  if (o != i + 1) {
    // As in Halide: move the outer loop directly outside the inner one first.
    std::vector<VarOrRVar> order;
    for (size_t k = 0; k < s.dims.size(); ++k) {
      if (k == o)
        continue;
      order.push_back(s.dims[k].is_rvar ? VarOrRVar(RVar(s.dims[k].var)) : VarOrRVar(Var(s.dims[k].var)));
      if (k == i)
        order.push_back(s.dims[o].is_rvar ? VarOrRVar(RVar(s.dims[o].var)) : VarOrRVar(Var(s.dims[o].var)));
    }
    reorder(order);
    i = findDim(s, name(), "fuse", inner.name());
    o = i + 1;
  }
  requireFresh(s, name(), "fuse", fused.name(), inner.name());
  if (fused.name() == outer.name())
    throw CompileError("fuse of " + name() + ": the fused loop cannot reuse the outer name " + outer.name());
  s.splits.push_back({Split::FuseVars, fused.name(), outer.name(), inner.name(), Expr(), TailStrategy::Auto});
  s.dims[i] = {fused.name(), ForType::Serial, s.dims[i].is_rvar && s.dims[o].is_rvar};
  s.dims.erase(s.dims.begin() + static_cast<std::ptrdiff_t>(o));
  return *this;
}

Stage &Stage::never_partition(const std::vector<VarOrRVar> &vars) {
  const StageSchedule &s = selectedSchedule();
  for (const VarOrRVar &v : vars)
    findDim(s, name(), "never_partition", v.name());
  return *this;
}
Stage &Stage::never_partition_all() { return *this; }
Stage &Stage::always_partition(const std::vector<VarOrRVar> &vars) {
  const StageSchedule &s = selectedSchedule();
  for (const VarOrRVar &v : vars)
    findDim(s, name(), "always_partition", v.name());
  return *this;
}
Stage &Stage::always_partition_all() { return *this; }

Stage &Stage::reorder(const std::vector<VarOrRVar> &vars) {
  StageSchedule &s = schedule();
  std::vector<size_t> positions;
  for (const VarOrRVar &v : vars) {
    size_t i = findDim(s, name(), "reorder", v.name());
    if (std::find(positions.begin(), positions.end(), i) != positions.end())
      throw CompileError("reorder of " + name() + ": " + v.name() + " is named twice");
    positions.push_back(i);
  }
  std::vector<Dim> named;
  for (size_t i : positions)
    named.push_back(s.dims[i]);
  for (size_t p = 0; p < positions.size(); ++p)
    for (size_t q = p + 1; q < positions.size(); ++q)
      if (positions[p] > positions[q] && named[p].is_rvar && named[q].is_rvar)
        s.reordered_rvars.emplace_back(named[p].var, named[q].var);
  std::sort(positions.begin(), positions.end());
  for (size_t k = 0; k < positions.size(); ++k)
    s.dims[positions[k]] = named[k];
  return *this;
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                   const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor, TailStrategy tail) {
  split(x, xo, xi, xfactor, tail);
  split(y, yo, yi, yfactor, tail);
  return reorder({xi, yi, xo, yo});
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
                   Expr yfactor, TailStrategy tail) {
  return tile(x, y, x, y, xi, yi, xfactor, yfactor, tail);
}

namespace {
void setForType(StageSchedule &s, const std::string &stageName, const char *directive, const VarOrRVar &var,
                ForType t) {
  s.dims[findDim(s, stageName, directive, var.name())].for_type = t;
}
} // namespace

Stage &Stage::parallel(const VarOrRVar &var) {
  setForType(schedule(), name(), "parallel", var, ForType::Parallel);
  return *this;
}
Stage &Stage::serial(const VarOrRVar &var) {
  setForType(schedule(), name(), "serial", var, ForType::Serial);
  return *this;
}
Stage &Stage::vectorize(const VarOrRVar &var) {
  setForType(schedule(), name(), "vectorize", var, ForType::Vectorized);
  return *this;
}
Stage &Stage::unroll(const VarOrRVar &var) {
  setForType(schedule(), name(), "unroll", var, ForType::Unrolled);
  return *this;
}
namespace {

// A name for a new inner loop that no loop of the stage has, so that vectorize or unroll by a
// factor can be applied to the same loop again (`unroll(x, 3).unroll(x, 2)`), as in Halide. It
// depends only on the stage's schedule, so the same program gets the same names every time (and
// its compiled code is found in the compile cache).
std::string freshLoopName(const StageSchedule &schedule, const std::string &base) {
  auto taken = [&](const std::string &name) {
    for (const Dim &d : schedule.dims)
      if (d.var == name)
        return true;
    for (const Split &s : schedule.splits)
      if (s.old_var == name || s.outer == name || s.inner == name)
        return true;
    return false;
  };
  for (int n = 0;; ++n)
    if (std::string name = base + std::to_string(n); !taken(name))
      return name;
}

} // namespace

Stage &Stage::vectorize(const VarOrRVar &var, int factor, TailStrategy tail) {
  Var inner(freshLoopName(schedule(), var.name() + "_vi"));
  split(var, var, inner, factor, tail);
  return vectorize(inner);
}
Stage &Stage::parallel(const VarOrRVar &var, Expr task_size, TailStrategy tail) {
  Var inner(freshLoopName(schedule(), var.name() + "_pi"));
  split(var, var, inner, std::move(task_size), tail);
  return parallel(var);
}
Stage &Stage::unroll(const VarOrRVar &var, int factor, TailStrategy tail) {
  Var inner(freshLoopName(schedule(), var.name() + "_ui"));
  split(var, var, inner, factor, tail);
  return unroll(inner);
}

Stage &Stage::gpu_blocks(const VarOrRVar &x) {
  setForType(schedule(), name(), "gpu_blocks", x, ForType::GPUBlock);
  return *this;
}
Stage &Stage::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y) { return gpu_blocks(x).gpu_blocks(y); }
Stage &Stage::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
  return gpu_blocks(x).gpu_blocks(y).gpu_blocks(z);
}
Stage &Stage::gpu_threads(const VarOrRVar &x) {
  setForType(schedule(), name(), "gpu_threads", x, ForType::GPUThread);
  return *this;
}
Stage &Stage::gpu_threads(const VarOrRVar &x, const VarOrRVar &y) { return gpu_threads(x).gpu_threads(y); }
Stage &Stage::gpu_lanes(const VarOrRVar &x) {
  setForType(schedule(), name(), "gpu_lanes", x, ForType::GPUThread);
  return *this;
}
Stage &Stage::gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
  return gpu_threads(x).gpu_threads(y).gpu_threads(z);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, Expr xsize, TailStrategy tail) {
  split(x, bx, tx, xsize, tail);
  return gpu_blocks(bx).gpu_threads(tx);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by,
                       const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize, Expr ysize, TailStrategy tail) {
  tile(x, y, bx, by, tx, ty, xsize, ysize, tail);
  return gpu_blocks(bx, by).gpu_threads(tx, ty);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                       const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx, const VarOrRVar &ty,
                       const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize, TailStrategy tail) {
  split(x, bx, tx, xsize, tail);
  split(y, by, ty, ysize, tail);
  split(z, bz, tz, zsize, tail);
  reorder({tx, ty, tz, bx, by, bz});
  return gpu_blocks(bx, by, bz).gpu_threads(tx, ty, tz);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, Expr xsize, TailStrategy tail) {
  return gpu_tile(x, x, tx, xsize, tail);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize,
                       Expr ysize, TailStrategy tail) {
  return gpu_tile(x, y, x, y, tx, ty, xsize, ysize, tail);
}
Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                       const VarOrRVar &ty, const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize,
                       TailStrategy tail) {
  return gpu_tile(x, y, z, x, y, z, tx, ty, tz, xsize, ysize, zsize, tail);
}

namespace {

// The input a Buffer read in definitions is (made on its first read).
std::shared_ptr<ParameterContents> bufferInput(const RawBuffer &buffer) {
  if (!buffer.defined())
    throw CompileError("prefetch of an undefined Buffer");
  std::vector<Expr> origin(static_cast<size_t>(buffer.dimensions()), Expr(0));
  return detail::buffer_call(buffer, std::move(origin)).as<Call>()->param;
}

} // namespace

Stage &Stage::addPrefetch(const std::string &target, std::shared_ptr<ParameterContents> image, const VarOrRVar &at,
                          const VarOrRVar &from, Expr offset, PrefetchBoundStrategy strategy) {
  const std::string what = "prefetch of " + target + " in " + name();
  StageSchedule &s = schedule();
  const size_t atIndex = findDim(s, name(), "prefetch", at.name());
  const size_t fromIndex = findDim(s, name(), "prefetch", from.name());
  // Dims are innermost first.
  if (fromIndex < atIndex)
    throw CompileError(what + ": loop " + from.name() + " is inside loop " + at.name() +
                       "; the loop to prefetch from must be the loop the prefetch is at or one outside it");
  if (!offset.defined() || !(offset.type().is_int() || offset.type().is_uint()) || !offset.type().is_scalar())
    throw CompileError(what + ": the offset must be an integer");
  NonParamVariables reads;
  offset.accept(&reads);
  if (!reads.Names.empty() || !is_realize_invariant(offset))
    throw CompileError(what + ": the offset may read only Params and input sizes, not " +
                       (reads.Names.empty() ? std::string("a Func or an input's values") : joinNames(reads.Names)));
  s.prefetches.push_back({target, std::move(image), at.name(), from.name(), cast(Int(32), offset), strategy});
  return *this;
}

Stage &Stage::prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                       PrefetchBoundStrategy strategy) {
  return addPrefetch(f.name(), nullptr, at, from, std::move(offset), strategy);
}
Stage &Stage::prefetch(const ImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                       PrefetchBoundStrategy strategy) {
  if (!image.contents())
    throw CompileError("prefetch of an uninitialized ImageParam in " + name());
  return addPrefetch(image.name(), image.contents(), at, from, std::move(offset), strategy);
}
Stage &Stage::prefetch(const RawBuffer &buffer, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                       PrefetchBoundStrategy strategy) {
  std::shared_ptr<ParameterContents> input = bufferInput(buffer);
  return addPrefetch(input->name, input, at, from, std::move(offset), strategy);
}
Stage &Stage::prefetch(const Func &f, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(f, at, at, offset, strategy);
}
Stage &Stage::prefetch(const ImageParam &image, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(image, at, at, offset, strategy);
}
Stage &Stage::prefetch(const RawBuffer &buffer, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(buffer, at, at, offset, strategy);
}

Stage &Stage::allow_race_conditions() {
  schedule().allow_race_conditions = true;
  return *this;
}

Stage &Stage::atomic() {
  if (Index == 0)
    throw CompileError("atomic() of " + name() + ": only update definitions can be atomic");
  if (Function->types.size() > 1)
    throw CompileError("atomic() of " + name() + ": atomic updates of Funcs of several values (Tuples) are not "
                       "supported");
  if (Function->types[0].is_bool())
    throw CompileError("atomic() of " + name() + ": atomic updates of bool Funcs are not supported");
  Definition &d = Function->stage(Index);
  for (const Expr &arg : d.args)
    if (!calls_to(Function->name, arg).empty())
      throw CompileError("atomic() of " + name() + ": an argument of the update reads " + Function->name +
                         " itself; compute the index in another Func");
  // One atomic read-modify-write covers the point updated and nothing else: every read of the
  // Func must be of that point (the value's common subexpressions are lets around it).
  std::map<std::string, Expr> lets;
  peel_lets(d.values[0], lets);
  for (const std::vector<Expr> &args : calls_to(Function->name, d.values[0]))
    for (size_t i = 0; i < d.args.size(); ++i)
      if (!equal(simplify(substitute(lets, args[i])), simplify(d.args[i])))
        throw CompileError("atomic() of " + name() + ": the value reads " + Function->name +
                           " at another point than the one it updates, which other iterations write at the "
                           "same time; compute it in another Func");
  d.atomic = true;
  return *this;
}

// ---- Func ----

Func::Func() : Func(unique_name("f")) {}
Func::Func(const std::string &name) : Contents(std::make_shared<FunctionContents>()) {
  if (name.empty() || name.find_first_of(". ") != std::string::npos)
    throw CompileError("invalid Func name '" + name + "': it must be non-empty, without dots or spaces");
  Contents->name = name;
}

Func::Func(std::shared_ptr<FunctionContents> contents) : Contents(std::move(contents)) {
  if (!Contents)
    throw CompileError("a Func made of no contents");
}

Func wrapper_of(std::map<std::string, std::shared_ptr<FunctionContents>> &wrappers,
                const std::vector<std::string> &consumers, const std::string &wrappedName,
                const std::vector<Type> &types, const std::vector<std::string> &vars, bool image,
                const std::function<void(FunctionContents &)> &link) {
  if (consumers.empty())
    throw CompileError("in() of " + wrappedName + ": name at least one consumer");
  std::string joined;
  for (const std::string &c : consumers)
    joined += (joined.empty() ? "" : "_") + c;
  auto wrapperOf = [&](const std::string &c) {
    auto it = wrappers.find(c);
    return it == wrappers.end() ? nullptr : it->second;
  };
  const std::shared_ptr<FunctionContents> existing = wrapperOf(consumers.front());
  for (const std::string &c : consumers)
    if (wrapperOf(c) != existing)
      throw CompileError("in() of " + wrappedName + " for several consumers: " + consumers.front() + " reads " +
                         (existing ? existing->name : std::string("no wrapper")) + " but " + c + " reads " +
                         (wrapperOf(c) ? wrapperOf(c)->name : std::string("none")) +
                         "; consumers given together share one wrapper");
  if (existing)
    return Func(existing);
  Func wrapper(joined.empty() ? wrappedName + "_global_wrapper" : wrappedName + "_in_" + joined);
  std::vector<Expr> args;
  for (const std::string &v : vars)
    args.push_back(Var(v));
  std::vector<Expr> values;
  for (size_t i = 0; i < types.size(); ++i)
    values.push_back(Call::make(types[i], wrappedName, args, image ? Call::Image : Call::Halide, nullptr, nullptr,
                                static_cast<int>(i)));
  wrapper(args) = Tuple(values);
  link(*wrapper.contents());
  for (const std::string &c : consumers)
    wrappers[c] = wrapper.contents();
  return wrapper;
}

namespace {

Func funcWrapper(const std::shared_ptr<FunctionContents> &f, const std::vector<std::string> &consumers) {
  if (!f->defined())
    throw CompileError("Func " + f->name + " is wrapped by in() before it is defined");
  for (const std::string &consumer : consumers) {
    if (consumer == f->name)
      throw CompileError("Func " + f->name + " cannot wrap its reads of itself: in() names another consumer");
    if (auto it = f->wrappers.find(consumer); it != f->wrappers.end() && it->second->wrapped_func.lock() != f)
      throw CompileError("in() of Func " + f->name + (consumer.empty() ? "" : " for " + consumer) + ": " +
                         it->second->name + " is read there instead already; a consumer reads one wrapper or clone");
  }
  return wrapper_of(f->wrappers, consumers, f->name, f->types, f->args, false,
                    [&](FunctionContents &w) { w.wrapped_func = f; });
}

std::vector<std::string> namesOf(const std::vector<Func> &funcs) {
  std::vector<std::string> names;
  for (const Func &f : funcs)
    names.push_back(f.name());
  return names;
}

} // namespace

Func Func::in(const Func &consumer) { return funcWrapper(Contents, {consumer.name()}); }
Func Func::in(const std::vector<Func> &consumers) { return funcWrapper(Contents, namesOf(consumers)); }
Func Func::in() { return funcWrapper(Contents, {""}); }

Func &Func::trace_stores() {
  Contents->trace_stores = true;
  return *this;
}
Func &Func::trace_loads() {
  Contents->trace_loads = true;
  return *this;
}
Func &Func::trace_realizations() {
  Contents->trace_realizations = true;
  return *this;
}

std::vector<OutputImageParam> Func::output_buffers() const {
  if (!Contents->defined())
    throw CompileError("output_buffers() of Func " + name() + " before it is defined: its buffers' types are not known");
  if (Contents->output_buffers.empty())
    for (size_t v = 0; v < Contents->types.size(); ++v) {
      auto p = std::make_shared<ParameterContents>();
      p->name = value_buffer_name(Contents->name, static_cast<int>(v), Contents->types.size());
      p->type = Contents->types[v];
      p->is_buffer = true;
      p->is_output = true;
      p->dimensions = static_cast<int>(Contents->args.size());
      Contents->output_buffers.push_back(std::move(p));
    }
  std::vector<OutputImageParam> buffers;
  for (const auto &p : Contents->output_buffers)
    buffers.push_back(OutputImageParam(p));
  return buffers;
}

OutputImageParam Func::output_buffer() const {
  std::vector<OutputImageParam> buffers = output_buffers();
  if (buffers.size() != 1)
    throw CompileError("output_buffer() of Func " + name() + ", which has " + std::to_string(buffers.size()) +
                       " values: each has a buffer of its own; use output_buffers()");
  return buffers.front();
}

namespace {

// Calls of a Func to itself (in its updates), renamed.
class RenameSelfCalls : public IRMutator {
public:
  RenameSelfCalls(const std::string &from, const std::string &to) : From(from), To(to) {}

private:
  const std::string &From, &To;
  using IRMutator::visit;
  Expr visit(const Call *op) override {
    Expr e = IRMutator::visit(op);
    const auto *call = e.as<Call>();
    if (call->call_type != Call::Halide || call->func || call->name != From)
      return e;
    return Call::make(call->type, To, call->args, Call::Halide, nullptr, nullptr, call->value_index);
  }
};

} // namespace

Func Func::clone_in(const Func &consumer) { return clone_in(std::vector<Func>{consumer}); }

Func Func::clone_in(const std::vector<Func> &consumers) {
  if (consumers.empty())
    throw CompileError("clone_in of Func " + name() + ": name at least one consumer");
  if (!defined())
    throw CompileError("clone_in of Func " + name() + ": it is not defined yet");
  std::string cloneName = name() + "_clone_in";
  for (const Func &c : consumers) {
    if (c.contents() == Contents)
      throw CompileError("clone_in of Func " + name() + ": a Func cannot read a clone of itself");
    cloneName += "_" + c.name();
  }
  std::shared_ptr<FunctionContents> existing;
  for (const Func &c : consumers)
    if (auto it = Contents->wrappers.find(c.name()); it != Contents->wrappers.end()) {
      if (it->second->name != cloneName)
        throw CompileError("clone_in of Func " + name() + " for " + c.name() + ": " + it->second->name +
                           " is read there instead already; a consumer reads one wrapper or clone");
      existing = it->second;
    }
  if (existing) {
    for (const Func &c : consumers)
      Contents->wrappers[c.name()] = existing;
    return Func(existing);
  }
  // The definitions and the schedule as they are now; the clone is scheduled on its own after.
  auto clone = std::make_shared<FunctionContents>(*Contents);
  clone->name = cloneName;
  clone->wrappers.clear();
  clone->output_buffers.clear(); // the original's, by its name; a clone is read, not realized
  RenameSelfCalls rename(Contents->name, cloneName);
  mutate_definitions(*clone, rename);
  for (const Func &c : consumers)
    Contents->wrappers[c.name()] = clone;
  return Func(clone);
}

const std::string &Func::name() const { return Contents->name; }
bool Func::defined() const { return Contents->defined(); }
int Func::dimensions() const { return static_cast<int>(Contents->args.size()); }
Type Func::type() const {
  if (types().size() > 1)
    throw CompileError("Func " + name() + " has " + std::to_string(Contents->types.size()) +
                       " values (a Tuple): ask for its types()");
  return Contents->types[0];
}
std::vector<Type> Func::types() const {
  if (!defined())
    throw CompileError("Func " + name() + " has no type: it is not defined");
  return Contents->types;
}
int Func::outputs() const { return static_cast<int>(types().size()); }
std::vector<Var> Func::args() const {
  std::vector<Var> vars;
  for (const std::string &a : Contents->args)
    vars.emplace_back(a);
  return vars;
}
int Func::num_update_definitions() const { return static_cast<int>(Contents->updates.size()); }
bool Func::has_update_definition() const { return !Contents->updates.empty(); }

namespace {
// The one value of `values`, stage `stage` of `f`.
Expr onlyValue(const FunctionContents &f, const std::vector<Expr> &values, const std::string &stage) {
  if (values.size() > 1)
    throw CompileError(stage + " of Func " + f.name + " has " + std::to_string(values.size()) +
                       " values (a Tuple): ask for its values");
  return values[0];
}

const Definition &updateDefinition(const FunctionContents &f, int i) {
  if (i < 0 || i >= static_cast<int>(f.updates.size()))
    throw CompileError("Func " + f.name + " has " + std::to_string(f.updates.size()) + " update definitions; update " +
                       std::to_string(i) + " does not exist");
  return f.updates[i];
}
} // namespace

Expr Func::value() const { return onlyValue(*Contents, values().as_vector(), "the definition"); }
Tuple Func::values() const {
  if (!defined())
    throw CompileError("Func " + name() + " has no value: it is not defined");
  return Tuple(Contents->init.values);
}
std::vector<Expr> Func::update_args(int i) const { return updateDefinition(*Contents, i).args; }
Expr Func::update_value(int i) const {
  return onlyValue(*Contents, updateDefinition(*Contents, i).values, "update " + std::to_string(i));
}
Tuple Func::update_values(int i) const { return Tuple(updateDefinition(*Contents, i).values); }

FuncRef Func::operator()(std::vector<Expr> args) const { return FuncRef(Contents, std::move(args)); }

Stage Func::update(int i) {
  if (i < 0 || i >= num_update_definitions())
    throw CompileError("Func " + name() + " has " + std::to_string(num_update_definitions()) +
                       " update definitions; update(" + std::to_string(i) + ") does not exist");
  return Stage(Contents, i + 1);
}

Stage Func::specialize(Expr condition) { return Stage(Contents, 0).specialize(std::move(condition)); }
void Func::specialize_fail(const std::string &message) { Stage(Contents, 0).specialize_fail(message); }

namespace {
Stage pureStage(const std::shared_ptr<FunctionContents> &f, const char *directive) {
  if (!f->defined())
    throw CompileError(std::string(directive) + " of Func " + f->name + ": define the Func before scheduling it");
  return Stage(f, 0);
}
} // namespace

Func &Func::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
                  TailStrategy tail) {
  pureStage(Contents, "split").split(old, outer, inner, factor, tail);
  return *this;
}
Func &Func::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
  pureStage(Contents, "fuse").fuse(inner, outer, fused);
  return *this;
}
Func &Func::rename(const VarOrRVar &old, const VarOrRVar &renamed) {
  pureStage(Contents, "rename").rename(old, renamed);
  return *this;
}
Func &Func::never_partition(const std::vector<VarOrRVar> &vars) {
  pureStage(Contents, "never_partition").never_partition(vars);
  return *this;
}
Func &Func::never_partition_all() {
  pureStage(Contents, "never_partition_all").never_partition_all();
  return *this;
}
Func &Func::always_partition(const std::vector<VarOrRVar> &vars) {
  pureStage(Contents, "always_partition").always_partition(vars);
  return *this;
}
Func &Func::always_partition_all() {
  pureStage(Contents, "always_partition_all").always_partition_all();
  return *this;
}
Func &Func::reorder(const std::vector<VarOrRVar> &vars) {
  pureStage(Contents, "reorder").reorder(vars);
  return *this;
}
Func &Func::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                 const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor, TailStrategy tail) {
  pureStage(Contents, "tile").tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail);
  return *this;
}
Func &Func::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
                 Expr yfactor, TailStrategy tail) {
  pureStage(Contents, "tile").tile(x, y, xi, yi, xfactor, yfactor, tail);
  return *this;
}
Func &Func::parallel(const VarOrRVar &var) {
  pureStage(Contents, "parallel").parallel(var);
  return *this;
}
Func &Func::parallel(const VarOrRVar &var, Expr task_size, TailStrategy tail) {
  pureStage(Contents, "parallel").parallel(var, std::move(task_size), tail);
  return *this;
}
Func &Func::serial(const VarOrRVar &var) {
  pureStage(Contents, "serial").serial(var);
  return *this;
}
Func &Func::vectorize(const VarOrRVar &var) {
  pureStage(Contents, "vectorize").vectorize(var);
  return *this;
}
Func &Func::vectorize(const VarOrRVar &var, int factor, TailStrategy tail) {
  pureStage(Contents, "vectorize").vectorize(var, factor, tail);
  return *this;
}
Func &Func::unroll(const VarOrRVar &var) {
  pureStage(Contents, "unroll").unroll(var);
  return *this;
}
Func &Func::unroll(const VarOrRVar &var, int factor, TailStrategy tail) {
  pureStage(Contents, "unroll").unroll(var, factor, tail);
  return *this;
}

Func &Func::gpu_blocks(const VarOrRVar &x) {
  pureStage(Contents, "gpu_blocks").gpu_blocks(x);
  return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y) {
  pureStage(Contents, "gpu_blocks").gpu_blocks(x, y);
  return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
  pureStage(Contents, "gpu_blocks").gpu_blocks(x, y, z);
  return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x) {
  pureStage(Contents, "gpu_threads").gpu_threads(x);
  return *this;
}
Func &Func::gpu_lanes(const VarOrRVar &x) {
  pureStage(Contents, "gpu_lanes").gpu_lanes(x);
  return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x, const VarOrRVar &y) {
  pureStage(Contents, "gpu_threads").gpu_threads(x, y);
  return *this;
}
Func &Func::gpu_threads(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z) {
  pureStage(Contents, "gpu_threads").gpu_threads(x, y, z);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, Expr xsize, TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, bx, tx, xsize, tail);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by,
                     const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize, Expr ysize, TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, y, bx, by, tx, ty, xsize, ysize, tail);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &bx,
                     const VarOrRVar &by, const VarOrRVar &bz, const VarOrRVar &tx, const VarOrRVar &ty,
                     const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize, TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, y, z, bx, by, bz, tx, ty, tz, xsize, ysize, zsize, tail);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &tx, Expr xsize, TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, tx, xsize, tail);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &tx, const VarOrRVar &ty, Expr xsize,
                     Expr ysize, TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, y, tx, ty, xsize, ysize, tail);
  return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &z, const VarOrRVar &tx,
                     const VarOrRVar &ty, const VarOrRVar &tz, Expr xsize, Expr ysize, Expr zsize,
                     TailStrategy tail) {
  pureStage(Contents, "gpu_tile").gpu_tile(x, y, z, tx, ty, tz, xsize, ysize, zsize, tail);
  return *this;
}

namespace {
void checkBoundVar(const FunctionContents &f, const char *directive, const Var &var, const std::vector<Expr> &values) {
  if (!f.defined())
    throw CompileError(std::string(directive) + " of Func " + f.name + ": define the Func before scheduling it");
  if (std::find(f.args.begin(), f.args.end(), var.name()) == f.args.end())
    throw CompileError(std::string(directive) + " of Func " + f.name + ": " + var.name() +
                       " is not one of its arguments (" + joinNames(f.args) + ")");
  for (const Expr &v : values)
    if (!v.defined() || v.type().is_float() || v.type().is_vector())
      throw CompileError(std::string(directive) + " of Func " + f.name + "." + var.name() + ": its values must be integers");
}
// The positive constant a storage directive of dimension `var` takes.
int64_t storageConstant(const FunctionContents &f, const char *directive, const char *what, const Var &var,
                        const Expr &value) {
  checkBoundVar(f, directive, var, {value});
  Expr e = ir::simplify(cast(Int(32), value));
  auto c = ir::as_const_int(e);
  if (!c || *c <= 0)
    throw CompileError(std::string(directive) + " of Func " + f.name + "." + var.name() + ": the " + what +
                       " must be a positive constant, not " + ir::to_string(e));
  return *c;
}
} // namespace

Func &Func::prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                     PrefetchBoundStrategy strategy) {
  pureStage(Contents, "prefetch").prefetch(f, at, from, std::move(offset), strategy);
  return *this;
}
Func &Func::prefetch(const ImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                     PrefetchBoundStrategy strategy) {
  pureStage(Contents, "prefetch").prefetch(image, at, from, std::move(offset), strategy);
  return *this;
}
Func &Func::prefetch(const RawBuffer &buffer, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                     PrefetchBoundStrategy strategy) {
  pureStage(Contents, "prefetch").prefetch(buffer, at, from, std::move(offset), strategy);
  return *this;
}
Func &Func::prefetch(const Func &f, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(f, at, at, offset, strategy);
}
Func &Func::prefetch(const ImageParam &image, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(image, at, at, offset, strategy);
}
Func &Func::prefetch(const RawBuffer &buffer, const VarOrRVar &at, int offset, PrefetchBoundStrategy strategy) {
  return prefetch(buffer, at, at, offset, strategy);
}

Func &Func::bound(const Var &var, Expr min, Expr extent) {
  checkBoundVar(*Contents, "bound", var, {min, extent});
  Contents->bounds.push_back({var.name(), cast(Int(32), min), cast(Int(32), extent), Expr(), Expr()});
  return *this;
}

Func &Func::bound_extent(const Var &var, Expr extent) {
  checkBoundVar(*Contents, "bound_extent", var, {extent});
  Contents->bounds.push_back({var.name(), Expr(), cast(Int(32), extent), Expr(), Expr()});
  return *this;
}

Func &Func::align_bounds(const Var &var, Expr modulus, Expr remainder) {
  checkBoundVar(*Contents, "align_bounds", var, {modulus, remainder});
  // A constant: the region's bounds divide by it.
  Expr m = ir::simplify(cast(Int(32), modulus));
  auto value = ir::as_const_int(m);
  if (!value || *value <= 0)
    throw CompileError("align_bounds of Func " + name() + "." + var.name() +
                       ": the modulus must be a positive constant, not " + ir::to_string(m));
  Contents->bounds.push_back({var.name(), Expr(), Expr(), m, cast(Int(32), remainder)});
  return *this;
}

Func &Func::set_estimate(const Var &var, Expr min, Expr extent) {
  checkBoundVar(*Contents, "set_estimate", var, {min, extent});
  return *this;
}

Func &Func::set_estimates(const Region &estimates) {
  if (!Contents->defined())
    throw CompileError("set_estimates of Func " + name() + ": define the Func before scheduling it");
  if (estimates.size() != Contents->args.size())
    throw CompileError("set_estimates of Func " + name() + ": " + std::to_string(estimates.size()) +
                       " ranges for its " + std::to_string(Contents->args.size()) + " dimensions (" +
                       joinNames(Contents->args) + ")");
  for (size_t d = 0; d < estimates.size(); ++d)
    set_estimate(Var(Contents->args[d]), estimates[d].min, estimates[d].extent);
  return *this;
}

Func &Func::compute_root() { return compute_at(LoopLevel::root()); }
Func &Func::compute_at(const Func &consumer, const VarOrRVar &var) {
  if (consumer.contents() == Contents)
    throw CompileError("Func " + name() + " cannot be computed at its own loop " + var.name());
  return compute_at(LoopLevel(consumer, var));
}
Func &Func::compute_at(const LoopLevel &level) {
  Contents->compute_level = level;
  Contents->compute_level_set = true;
  return *this;
}
Func &Func::compute_inline() { return compute_at(LoopLevel::inlined()); }
Func &Func::store_in(MemoryType memory) {
  Contents->memory_type = memory;
  return *this;
}
Func &Func::reorder_storage(const std::vector<Var> &dims) {
  pureStage(Contents, "reorder_storage");
  std::vector<std::string> &order = Contents->storage_dims;
  if (order.empty())
    order = Contents->args;
  // As reorder does for loops: the named dimensions take the places they hold among themselves.
  std::vector<size_t> positions;
  for (const Var &v : dims) {
    auto it = std::find(order.begin(), order.end(), v.name());
    if (it == order.end())
      throw CompileError("reorder_storage of Func " + name() + ": " + v.name() + " is not one of its dimensions");
    const size_t i = static_cast<size_t>(it - order.begin());
    if (std::find(positions.begin(), positions.end(), i) != positions.end())
      throw CompileError("reorder_storage of Func " + name() + ": " + v.name() + " is named twice");
    positions.push_back(i);
  }
  std::sort(positions.begin(), positions.end());
  for (size_t k = 0; k < positions.size(); ++k)
    order[positions[k]] = dims[k].name();
  return *this;
}

Func &Func::align_storage(const Var &var, Expr alignment) {
  Contents->storage_alignment[var.name()] = storageConstant(*Contents, "align_storage", "alignment", var, alignment);
  return *this;
}

Func &Func::fold_storage(const Var &var, Expr extent, bool) {
  Contents->storage_folds[var.name()] = storageConstant(*Contents, "fold_storage", "extent", var, extent);
  return *this;
}

Func &Func::store_root() { return store_at(LoopLevel::root()); }
Func &Func::store_at(const Func &consumer, const VarOrRVar &var) {
  if (consumer.contents() == Contents)
    throw CompileError("Func " + name() + " cannot be stored at its own loop " + var.name());
  return store_at(LoopLevel(consumer, var));
}
Func &Func::store_at(const LoopLevel &level) {
  Contents->store_level = level;
  Contents->store_level_set = true;
  return *this;
}

Func &Func::hoist_storage_root() { return hoist_storage(LoopLevel::root()); }
Func &Func::hoist_storage(const Func &consumer, const VarOrRVar &var) {
  if (consumer.contents() == Contents)
    throw CompileError("Func " + name() + " cannot hoist its storage to its own loop " + var.name());
  return hoist_storage(LoopLevel(consumer, var));
}
Func &Func::hoist_storage(const LoopLevel &level) {
  if (level.is_inlined())
    throw CompileError("hoist_storage of Func " + name() + ": storage cannot be hoisted to an inlined level");
  Contents->hoist_level = level;
  Contents->hoist_level_set = true;
  return *this;
}

} // namespace ptxjit
