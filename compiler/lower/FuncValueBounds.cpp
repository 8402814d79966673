#include "FuncValueBounds.h"

#include "ir/CSE.h"
#include "ir/Constants.h"
#include "ir/Simplify.h"
#include "ptxjit/IROperator.h"

namespace ptxjit::lower {

using namespace ir;

namespace {

bool provablyWithin(const Interval &inner, const Interval &outer) {
  return is_const_one(simplify(LE::make(outer.min, inner.min))) && is_const_one(simplify(LE::make(inner.max, outer.max)));
}

} // namespace

Interval FuncValueBounds::of(const Call *call) {
  if (call->call_type != Call::Halide)
    return Interval::everything();
  const ValueOf value{call->name, call->value_index};
  if (auto it = Assumed.find(value); it != Assumed.end())
    return it->second; // a self-reference of an update being bounded
  if (auto it = Known.find(value); it != Known.end())
    return it->second;
  if (!call->func)
    return Interval::everything(); // a self-reference to another value of a Tuple being bounded
  Interval range = compute(*call->func, call->value_index);
  Known[value] = range;
  return range;
}

Interval FuncValueBounds::stageBounds(const FunctionContents &f, int k, int index) {
  const Definition &d = f.stage(k);
  Scope scope;
  for (const std::string &arg : f.args)
    scope[arg] = Interval::everything();
  if (d.rdom)
    for (const ReductionVariable &rv : d.rdom->domain)
      scope[rv.var] = {rv.min, simplify(rv.min + rv.extent - 1)};
  // Values are DAGs: shared subexpressions become lets, so each is bounded once.
  Expr value = common_subexpression_elimination(d.values.at(index), f.name + ".value");
  Interval b = bounds_of_expr_in_scope(value, scope, this);
  return b.is_bounded() ? Interval{simplify(b.min), simplify(b.max)} : Interval::everything();
}

// An update may read the values it and the earlier stages wrote. With its reads of the Func in
// the range so far, an update whose values stay inside that range (widened once by what the
// update itself writes) keeps the Func inside it; otherwise (a counter f(x) = f(x) + 1) nothing
// but the type bounds it.
Interval FuncValueBounds::compute(const FunctionContents &f, int index) {
  const ValueOf value{f.name, index};
  Interval range = stageBounds(f, 0, index);
  for (int k = 1; k < f.num_stages() && range.is_bounded(); ++k) {
    Assumed[value] = range;
    Interval stage = stageBounds(f, k, index);
    if (stage.is_bounded() && !provablyWithin(stage, range)) {
      range = interval_union(range, stage);
      range = {simplify(range.min), simplify(range.max)};
      Assumed[value] = range;
      stage = stageBounds(f, k, index);
    }
    if (!stage.is_bounded() || !provablyWithin(stage, range))
      range = Interval::everything();
  }
  Assumed.erase(value);
  return range;
}

} // namespace ptxjit::lower
