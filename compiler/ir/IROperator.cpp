#include "ptxjit/IROperator.h"

#include "Constants.h"
#include "IRPrinter.h"

namespace ptxjit {
namespace {

using namespace ir;

void requireDefined(const Expr &e, const char *what) {
  if (!e.defined())
    throw CompileError(std::string("undefined Expr used as an operand of ") + what);
}

// An int32 or float constant written as a C++ literal adapts to the other operand's type.
bool isLiteral(const Expr &e) {
  return (e.as<IntImm>() && e.type() == Int(32)) || e.as<FloatImm>();
}

Expr castLiteral(const Expr &literal, Type t, const char *what) {
  if (auto i = as_const_int(literal); i && !t.is_float()) {
    bool fits = t.is_bool() ? (*i == 0 || *i == 1)
                : t.is_int() ? (*i >= t.element_of().min_int() && *i <= t.element_of().max_int())
                             : (*i >= 0 && uint64_t(*i) <= t.element_of().max_uint());
    if (!fits)
      throw CompileError("integer literal " + std::to_string(*i) + " does not fit in " +
                         to_string(t.element_of()) + ", the type of the other operand of " + what);
  }
  if (auto i = as_const_int(literal))
    return make_const(t, *i);
  return make_const(t, *as_const_float(literal));
}

Expr broadcastTo(const Expr &e, int lanes) {
  return e.type().lanes == lanes ? e : Broadcast::make(e, lanes);
}

// Brings both operands to one type, as the header describes.
void matchTypes(Expr &a, Expr &b, const char *what) {
  requireDefined(a, what);
  requireDefined(b, what);
  if (a.type() == b.type())
    return;
  Type ta = a.type(), tb = b.type();
  if (ta.lanes != tb.lanes) {
    if (ta.is_scalar())
      a = broadcastTo(a, tb.lanes);
    else if (tb.is_scalar())
      b = broadcastTo(b, ta.lanes);
    else
      throw CompileError(std::string("operands of ") + what + " have different vector widths: " +
                         to_string(ta) + " and " + to_string(tb));
    ta = a.type();
    tb = b.type();
    if (ta == tb)
      return;
  }
  if (isLiteral(b) && !isLiteral(a) && !(b.as<FloatImm>() && !ta.is_float())) {
    b = castLiteral(b, ta, what);
    return;
  }
  if (isLiteral(a) && !isLiteral(b) && !(a.as<FloatImm>() && !tb.is_float())) {
    a = castLiteral(a, tb, what);
    return;
  }
  if (ta.is_float() || tb.is_float()) {
    Type t = !tb.is_float() ? ta : !ta.is_float() ? tb : (ta.bits >= tb.bits ? ta : tb);
    a = cast(t, a);
    b = cast(t, b);
    return;
  }
  if (ta.is_bool() != tb.is_bool()) {
    if (ta.is_bool())
      a = cast(tb, a);
    else
      b = cast(ta, b);
    return;
  }
  int bits = std::max(ta.bits, tb.bits);
  Type t = (ta.is_int() || tb.is_int()) ? Int(bits, ta.lanes) : UInt(bits, ta.lanes);
  a = cast(t, a);
  b = cast(t, b);
}

Expr toFloat(Expr x, const char *what) {
  requireDefined(x, what);
  return x.type().is_float() ? x : cast(Float(32, x.type().lanes), x);
}

Expr mathCall(const char *name, Expr x) {
  x = toFloat(std::move(x), name);
  Type t = x.type();
  return Call::make(t, name, {std::move(x)}, Call::PureExtern);
}

Expr toBool(Expr e, const char *what) {
  requireDefined(e, what);
  if (!e.type().is_bool())
    throw CompileError(std::string("operand of ") + what + " must be a boolean, not " +
                       to_string(e.type()) + ": " + ir::to_string(e));
  return e;
}

Expr bitwise(const char *name, const char *what, Expr a, Expr b) {
  matchTypes(a, b, what);
  if (a.type().is_float())
    throw CompileError(std::string("operands of ") + what + " must be integers, not " + to_string(a.type()) + ": " +
                       ir::to_string(a) + " " + what + " " + ir::to_string(b));
  Type t = a.type();
  return Call::make(t, name, {std::move(a), std::move(b)}, Call::Intrinsic);
}

} // namespace

Expr operator+(Expr a, Expr b) {
  matchTypes(a, b, "+");
  return Add::make(a, b);
}
Expr operator-(Expr a, Expr b) {
  matchTypes(a, b, "-");
  return Sub::make(a, b);
}
Expr operator*(Expr a, Expr b) {
  matchTypes(a, b, "*");
  return Mul::make(a, b);
}
Expr operator/(Expr a, Expr b) {
  matchTypes(a, b, "/");
  return Div::make(a, b);
}
Expr operator%(Expr a, Expr b) {
  matchTypes(a, b, "%");
  return Mod::make(a, b);
}
Expr operator-(Expr a) {
  requireDefined(a, "unary -");
  Type t = a.type();
  return Sub::make(make_zero(t), a);
}
Expr operator==(Expr a, Expr b) {
  matchTypes(a, b, "==");
  return EQ::make(a, b);
}
Expr operator!=(Expr a, Expr b) {
  matchTypes(a, b, "!=");
  return NE::make(a, b);
}
Expr operator<(Expr a, Expr b) {
  matchTypes(a, b, "<");
  return LT::make(a, b);
}
Expr operator<=(Expr a, Expr b) {
  matchTypes(a, b, "<=");
  return LE::make(a, b);
}
Expr operator>(Expr a, Expr b) {
  matchTypes(a, b, ">");
  return GT::make(a, b);
}
Expr operator>=(Expr a, Expr b) {
  matchTypes(a, b, ">=");
  return GE::make(a, b);
}
Expr operator&&(Expr a, Expr b) {
  a = toBool(a, "&&");
  b = toBool(b, "&&");
  matchTypes(a, b, "&&");
  return And::make(a, b);
}
Expr operator||(Expr a, Expr b) {
  a = toBool(a, "||");
  b = toBool(b, "||");
  matchTypes(a, b, "||");
  return Or::make(a, b);
}
Expr operator!(Expr a) { return Not::make(toBool(a, "!")); }

Expr operator&(Expr a, Expr b) { return bitwise(Call::BitwiseAnd, "&", std::move(a), std::move(b)); }
Expr operator|(Expr a, Expr b) { return bitwise(Call::BitwiseOr, "|", std::move(a), std::move(b)); }
Expr operator^(Expr a, Expr b) { return bitwise(Call::BitwiseXor, "^", std::move(a), std::move(b)); }
Expr operator<<(Expr a, Expr b) { return bitwise(Call::ShiftLeft, "<<", std::move(a), std::move(b)); }
Expr operator>>(Expr a, Expr b) { return bitwise(Call::ShiftRight, ">>", std::move(a), std::move(b)); }
Expr operator~(Expr a) {
  requireDefined(a, "~");
  if (a.type().is_float())
    throw CompileError("the operand of ~ must be an integer, not " + to_string(a.type()) + ": " + ir::to_string(a));
  Type t = a.type();
  return Call::make(t, Call::BitwiseNot, {std::move(a)}, Call::Intrinsic);
}

Expr min(Expr a, Expr b) {
  matchTypes(a, b, "min");
  return Min::make(a, b);
}
Expr max(Expr a, Expr b) {
  matchTypes(a, b, "max");
  return Max::make(a, b);
}
Expr clamp(Expr value, Expr lo, Expr hi) {
  requireDefined(value, "clamp");
  Type t = value.type();
  lo = isLiteral(lo) ? castLiteral(lo, t, "clamp") : cast(t, lo);
  hi = isLiteral(hi) ? castLiteral(hi, t, "clamp") : cast(t, hi);
  return Max::make(Min::make(value, hi), lo);
}
Expr abs(Expr a) {
  requireDefined(a, "abs");
  if (a.type().code == Type::UInt)
    return a;
  return Select::make(a < make_zero(a.type()), -a, a);
}
Expr select(Expr condition, Expr true_value, Expr false_value) {
  condition = toBool(condition, "select");
  matchTypes(true_value, false_value, "select");
  if (condition.type().is_scalar() && true_value.type().is_vector())
    condition = broadcastTo(condition, true_value.type().lanes);
  return Select::make(condition, true_value, false_value);
}

Expr cast(Type t, Expr value) {
  requireDefined(value, "cast");
  if (t.is_scalar() && value.type().is_vector())
    t = t.with_lanes(value.type().lanes);
  if (value.type() == t)
    return value;
  if (t.lanes != value.type().lanes)
    throw CompileError("cast of " + to_string(value.type()) + " to " + to_string(t) + " changes vector width");
  return Cast::make(t, std::move(value));
}

Expr sqrt(Expr x) { return mathCall("sqrt", std::move(x)); }
Expr exp(Expr x) { return mathCall("exp", std::move(x)); }
Expr log(Expr x) { return mathCall("log", std::move(x)); }
Expr sin(Expr x) { return mathCall("sin", std::move(x)); }
Expr cos(Expr x) { return mathCall("cos", std::move(x)); }
Expr tanh(Expr x) { return mathCall("tanh", std::move(x)); }
Expr floor(Expr x) { return mathCall("floor", std::move(x)); }
Expr ceil(Expr x) { return mathCall("ceil", std::move(x)); }
Expr round(Expr x) { return mathCall("round", std::move(x)); }
Expr pow(Expr x, Expr y) {
  x = toFloat(std::move(x), "pow");
  y = toFloat(std::move(y), "pow");
  matchTypes(x, y, "pow");
  Type t = x.type();
  return Call::make(t, "pow", {x, y}, Call::PureExtern);
}

} // namespace ptxjit
