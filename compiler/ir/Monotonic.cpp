#include "Monotonic.h"

#include "Constants.h"
#include "Substitute.h"

namespace ptxjit::ir {

namespace {

Monotonic flip(Monotonic m) {
  return m == Monotonic::Increasing ? Monotonic::Decreasing
         : m == Monotonic::Decreasing ? Monotonic::Increasing
                                      : m;
}

// Of a sum, a min or a max of two terms: the direction they share.
Monotonic both(Monotonic a, Monotonic b) {
  if (a == Monotonic::Constant)
    return b;
  if (b == Monotonic::Constant || a == b)
    return a;
  return Monotonic::Unknown;
}

// Of a term scaled by a constant.
Monotonic scaled(Monotonic m, const Expr &factor) {
  auto c = as_const_int(factor);
  if (!c)
    return m == Monotonic::Constant ? m : Monotonic::Unknown;
  return *c > 0 ? m : *c < 0 ? flip(m) : Monotonic::Constant;
}

// Whether arithmetic in `t` is free of wrapping for the directions to hold.
bool doesNotWrap(Type t) { return t.is_int() && t.bits >= 32; }

} // namespace

Monotonic is_monotonic(const Expr &e, const std::string &var) {
  if (!uses_variable(e, var))
    return Monotonic::Constant;
  if (const auto *v = e.as<Variable>())
    return v->name == var ? Monotonic::Increasing : Monotonic::Constant;
  if (!doesNotWrap(e.type()))
    return Monotonic::Unknown;
  if (const auto *op = e.as<Add>())
    return both(is_monotonic(op->a, var), is_monotonic(op->b, var));
  if (const auto *op = e.as<Sub>())
    return both(is_monotonic(op->a, var), flip(is_monotonic(op->b, var)));
  if (const auto *op = e.as<Min>())
    return both(is_monotonic(op->a, var), is_monotonic(op->b, var));
  if (const auto *op = e.as<Max>())
    return both(is_monotonic(op->a, var), is_monotonic(op->b, var));
  if (const auto *op = e.as<Mul>()) {
    if (!uses_variable(op->b, var))
      return scaled(is_monotonic(op->a, var), op->b);
    if (!uses_variable(op->a, var))
      return scaled(is_monotonic(op->b, var), op->a);
    return Monotonic::Unknown;
  }
  if (const auto *op = e.as<Div>()) {
    // Division rounds down: by a positive constant it keeps the order, by a negative one flips it.
    if (uses_variable(op->b, var))
      return Monotonic::Unknown;
    return scaled(is_monotonic(op->a, var), op->b);
  }
  if (const auto *op = e.as<Select>()) {
    if (uses_variable(op->condition, var))
      return Monotonic::Unknown;
    // One of the two throughout, whichever the condition picks.
    return both(is_monotonic(op->true_value, var), is_monotonic(op->false_value, var));
  }
  if (const auto *op = e.as<Cast>()) {
    if (op->type.can_represent(op->value.type()))
      return is_monotonic(op->value, var);
    return Monotonic::Unknown;
  }
  return Monotonic::Unknown;
}

} // namespace ptxjit::ir
