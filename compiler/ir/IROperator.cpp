#include "ptxjit/IROperator.h"

#include "Constants.h"
#include "IRPrinter.h"

#include <atomic>
#include <cmath>
#include <limits>

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
    // Float(16) and BFloat(16) meet in float32, the narrowest type that holds both.
    Type t = !tb.is_float() ? ta : !ta.is_float() ? tb : ta.bits != tb.bits ? (ta.bits > tb.bits ? ta : tb) : Float(32, ta.lanes);
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

Expr mathCall2(const char *name, Expr x, Expr y) {
  x = toFloat(std::move(x), name);
  y = toFloat(std::move(y), name);
  matchTypes(x, y, name);
  Type t = x.type();
  return Call::make(t, name, {std::move(x), std::move(y)}, Call::PureExtern);
}

Expr floatTest(const char *name, Expr x) {
  requireDefined(x, name);
  if (!x.type().is_float())
    throw CompileError(std::string(name) + " of " + to_string(x.type()) + ": the argument must be a float");
  const int lanes = x.type().lanes;
  return Call::make(Bool(lanes), name, {std::move(x)}, Call::Intrinsic);
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

namespace {

// The right side of a compound assignment in the left side's type (its own lanes kept), as Halide
// does: the assignment never changes the left side's type.
Expr inTypeOf(const Expr &a, Expr b, const char *what) {
  requireDefined(a, what);
  requireDefined(b, what);
  const int lanes = b.type().lanes;
  return cast(a.type().with_lanes(lanes), std::move(b));
}

} // namespace

Expr &operator+=(Expr &a, Expr b) { return a = a + inTypeOf(a, std::move(b), "+="); }
Expr &operator-=(Expr &a, Expr b) { return a = a - inTypeOf(a, std::move(b), "-="); }
Expr &operator*=(Expr &a, Expr b) { return a = a * inTypeOf(a, std::move(b), "*="); }
Expr &operator/=(Expr &a, Expr b) { return a = a / inTypeOf(a, std::move(b), "/="); }
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
Expr div_round_to_zero(Expr x, Expr y) {
  matchTypes(x, y, "div_round_to_zero");
  const Type t = x.type();
  if (!t.is_int() && !t.is_uint())
    throw CompileError("div_round_to_zero of " + to_string(t) + ": the operands must be integers");
  if (t.is_uint())
    return Div::make(x, y);
  // The Euclidean quotient is one step further from zero where x is negative and not a multiple.
  Expr zero = make_zero(t), one = make_one(t);
  Expr awayFromZero = And::make(LT::make(x, zero), NE::make(Mod::make(x, y), zero));
  Expr quotient = Div::make(x, y);
  return Select::make(awayFromZero, Add::make(quotient, Select::make(LT::make(y, zero), Sub::make(zero, one), one)),
                      quotient);
}
Expr mod_round_to_zero(Expr x, Expr y) {
  matchTypes(x, y, "mod_round_to_zero");
  const Type t = x.type();
  if (!t.is_int() && !t.is_uint())
    throw CompileError("mod_round_to_zero of " + to_string(t) + ": the operands must be integers");
  if (t.is_uint())
    return Mod::make(x, y);
  // The Euclidean remainder is in [0, |y|); rounding toward zero, it takes the sign of x.
  Expr zero = make_zero(t);
  Expr remainder = Mod::make(x, y);
  Expr awayFromZero = And::make(LT::make(x, zero), NE::make(remainder, zero));
  return Select::make(awayFromZero,
                      Select::make(LT::make(y, zero), Add::make(remainder, y), Sub::make(remainder, y)), remainder);
}
Expr operator-(Expr a) {
  requireDefined(a, "unary -");
  Type t = a.type();
  // A float's negation flips its sign, as in C++: -(+0) is -0, where 0 - (+0) is +0. Times -1
  // is exactly that, and LLVM makes it one negation on every target.
  if (t.is_float())
    return Mul::make(a, make_const(t, -1.0));
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

namespace {

Expr bitCount(const char *name, Expr x) {
  requireDefined(x, name);
  const Type t = x.type();
  if (!t.is_int() && !t.is_uint())
    throw CompileError(std::string(name) + " of " + to_string(t) + ": the argument must be an integer");
  return Call::make(t, name, {std::move(x)}, Call::Intrinsic);
}

} // namespace

Expr popcount(Expr x) { return bitCount(Call::Popcount, std::move(x)); }
Expr count_leading_zeros(Expr x) { return bitCount(Call::CountLeadingZeros, std::move(x)); }
Expr count_trailing_zeros(Expr x) { return bitCount(Call::CountTrailingZeros, std::move(x)); }

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
  const Type t = a.type();
  if (t.code == Type::UInt)
    return a;
  if (t.is_float())
    return Call::make(t, "fabs", {std::move(a)}, Call::PureExtern);
  // In the unsigned type the negation of the minimum is its magnitude.
  const Type ut = t.with_code(Type::UInt);
  Expr u = Cast::make(ut, a);
  return Select::make(LT::make(a, make_zero(t)), Sub::make(make_zero(ut), u), u);
}
Expr absd(Expr a, Expr b) {
  matchTypes(a, b, "absd");
  const Type t = a.type();
  if (t.is_float())
    return abs(Sub::make(a, b));
  // The difference of two values of a width fits the unsigned type of that width.
  const Type ut = t.with_code(Type::UInt);
  Expr ua = t == ut ? a : Expr(Cast::make(ut, a)), ub = t == ut ? b : Expr(Cast::make(ut, b));
  return Select::make(LT::make(a, b), Sub::make(ub, ua), Sub::make(ua, ub));
}
Expr select(Expr condition, Expr true_value, Expr false_value) {
  condition = toBool(condition, "select");
  matchTypes(true_value, false_value, "select");
  if (condition.type().is_scalar() && true_value.type().is_vector())
    condition = broadcastTo(condition, true_value.type().lanes);
  return Select::make(condition, true_value, false_value);
}

Tuple select_values(Expr condition, const Tuple &true_value, const Tuple &false_value) {
  if (true_value.size() != false_value.size())
    throw CompileError("select of Tuples of " + std::to_string(true_value.size()) + " and " +
                       std::to_string(false_value.size()) + " values: they must have as many");
  std::vector<Expr> values;
  for (size_t i = 0; i < true_value.size(); ++i)
    values.push_back(select(condition, true_value[i], false_value[i]));
  return Tuple(std::move(values));
}

Expr mux(Expr id, const std::vector<Expr> &values) {
  requireDefined(id, "mux");
  if (values.empty())
    throw CompileError("mux needs at least one value");
  const Type t = id.type();
  if (!t.is_int() && !t.is_uint())
    throw CompileError("mux: the index must be an integer, not " + to_string(t));
  // Narrow indices are compared as int32, so that every position of a long list is a value of it.
  if (t.bits < 32)
    id = cast(t.with_code(Type::Int).with_bits(32), id);
  Expr result = values.back();
  for (size_t i = values.size() - 1; i-- > 0;)
    result = select(id == Expr(int(i)), values[i], result);
  return result;
}

Expr undef(Type t) {
  check_supported(t, "undef of " + to_string(t));
  return Call::make(t, Call::Undef, {}, Call::Intrinsic);
}

namespace {
Expr randomCall(Type t, Expr seed, const char *what) {
  static std::atomic<int> calls{0};
  std::vector<Expr> args{Expr(calls++)};
  if (seed.defined()) {
    if (seed.type() != Int(32))
      throw CompileError(std::string("the seed of ") + what + " must be an int32, not " + to_string(seed.type()) +
                         " (" + ir::to_string(seed) + ")");
    args.push_back(std::move(seed));
  }
  return Call::make(t, Call::Random, std::move(args), Call::Intrinsic);
}
} // namespace

Expr random_float(Expr seed) { return randomCall(Float(32), std::move(seed), "random_float"); }
Expr random_int(Expr seed) { return randomCall(Int(32), std::move(seed), "random_int"); }
Expr random_uint(Expr seed) { return randomCall(UInt(32), std::move(seed), "random_uint"); }

Expr likely(Expr e) {
  requireDefined(e, "likely");
  return e;
}
Expr likely_if_innermost(Expr e) {
  requireDefined(e, "likely_if_innermost");
  return e;
}

Expr cast(Type t, Expr value) {
  requireDefined(value, "cast");
  check_supported(t, "cast to " + to_string(t.element_of()));
  if (t.is_scalar() && value.type().is_vector())
    t = t.with_lanes(value.type().lanes);
  if (value.type() == t)
    return value;
  if (t.lanes != value.type().lanes)
    throw CompileError("cast of " + to_string(value.type()) + " to " + to_string(t) + " changes vector width");
  return Cast::make(t, std::move(value));
}

Expr saturating_cast(Type t, Expr value) {
  requireDefined(value, "saturating_cast");
  check_supported(t, "saturating_cast to " + to_string(t.element_of()));
  const Type from = value.type();
  if (t.is_scalar() && from.is_vector())
    t = t.with_lanes(from.lanes);
  if (from == t)
    return value;
  if (t.is_bool())
    return cast(t, NE::make(value, make_zero(from)));
  if (t.is_float()) {
    // Values past the type's largest finite one clamp to it (a NaN stays a NaN), compared in a
    // type that holds that bound exactly: at least float32, or the integer type itself.
    auto largestOf = [](Type f) {
      return f.is_bfloat() ? bfloat16_t::from_bits(0x7f7f).to_double()
             : f.is_float() ? (f.bits == 16   ? float16_t::from_bits(0x7bff).to_double()
                               : f.bits == 32 ? double(std::numeric_limits<float>::max())
                                              : std::numeric_limits<double>::max())
             : f.is_int() ? double(f.element_of().max_int())
                          : double(f.element_of().max_uint());
    };
    const double largest = largestOf(t), fromLargest = largestOf(from);
    if (fromLargest > largest) {
      if (from.is_float() && from.bits < 32)
        value = cast(Float(32, from.lanes), value);
      const Type work = value.type().element_of();
      Expr bound = broadcastTo(make_const(work, largest), from.lanes);
      Expr clamped = Min::make(value, bound);
      if (!from.is_uint())
        clamped = Max::make(clamped, broadcastTo(make_const(work, -largest), from.lanes));
      value = from.is_float() ? Select::make(is_nan(value), value, clamped) : clamped;
    }
    return cast(t, value);
  }
  const __int128 lo = t.is_int() ? __int128(t.min_int()) : 0;
  const __int128 hi = t.is_int() ? __int128(t.max_int()) : __int128(t.max_uint());
  if (from.is_float()) {
    // The largest float of the source type not above the maximum (2^31 - 1 is not a float).
    long double top = static_cast<long double>(hi);
    double limit = from.bits == 32 ? double(static_cast<float>(top)) : static_cast<double>(top);
    if (static_cast<long double>(limit) > top)
      limit = from.bits == 32 ? double(std::nextafter(static_cast<float>(limit), 0.0f)) : std::nextafter(limit, 0.0);
    Expr clamped = Max::make(Min::make(value, broadcastTo(make_const(from.element_of(), limit), from.lanes)),
                             broadcastTo(make_const(from.element_of(), double(lo)), from.lanes));
    return Select::make(is_nan(value), broadcastTo(make_zero(t.element_of()), t.lanes), cast(t, clamped));
  }
  if (t.can_represent(from))
    return cast(t, value);
  // Integers: clamp in the source type to the part of the target's range it can hold.
  const __int128 fromLo = from.is_int() ? __int128(from.min_int()) : 0;
  const __int128 fromHi = from.is_int() ? __int128(from.max_int()) : __int128(from.max_uint());
  auto constant = [&](__int128 v) {
    return broadcastTo(from.is_int() ? make_const(from.element_of(), int64_t(v))
                                     : Expr(UIntImm::make(from.element_of(), uint64_t(v))),
                       from.lanes);
  };
  Expr clamped = value;
  if (hi < fromHi)
    clamped = Min::make(clamped, constant(hi));
  if (lo > fromLo)
    clamped = Max::make(clamped, constant(lo));
  return cast(t, clamped);
}

Expr reinterpret(Type t, Expr value) {
  requireDefined(value, "reinterpret");
  check_supported(t, "reinterpret as " + to_string(t.element_of()));
  const Type from = value.type();
  if (t.is_scalar() && from.is_vector())
    t = t.with_lanes(from.lanes);
  if (t.bits * t.lanes != from.bits * from.lanes || t.is_bool() || from.is_bool())
    throw CompileError("reinterpret of " + to_string(from) + " as " + to_string(t) +
                       ": the types must have the same number of bits (and not be bool)");
  if (from == t)
    return value;
  return Call::make(t, Call::Reinterpret, {std::move(value)}, Call::Intrinsic);
}

Expr u8(Expr e) { return cast(UInt(8), std::move(e)); }
Expr u16(Expr e) { return cast(UInt(16), std::move(e)); }
Expr u32(Expr e) { return cast(UInt(32), std::move(e)); }
Expr u64(Expr e) { return cast(UInt(64), std::move(e)); }
Expr i8(Expr e) { return cast(Int(8), std::move(e)); }
Expr i16(Expr e) { return cast(Int(16), std::move(e)); }
Expr i32(Expr e) { return cast(Int(32), std::move(e)); }
Expr i64(Expr e) { return cast(Int(64), std::move(e)); }
Expr f32(Expr e) { return cast(Float(32), std::move(e)); }
Expr f64(Expr e) { return cast(Float(64), std::move(e)); }
namespace {

// The integer type of a fixed-point operand.
Type integerOperand(const Expr &a, const char *what) {
  requireDefined(a, what);
  const Type t = a.type();
  if (!(t.is_int() || t.is_uint()) || t.is_bool())
    throw CompileError(std::string(what) + " needs integers, not " + to_string(t) + ": " + ir::to_string(a));
  return t;
}

// Both integer operands of a fixed-point operation in one type, as binary operators match them.
Type integerOperands(Expr &a, Expr &b, const char *what) {
  matchTypes(a, b, what);
  integerOperand(b, what);
  return integerOperand(a, what);
}

Type widened(Type t, const char *what) {
  if (t.bits > 32)
    throw CompileError(std::string(what) + " of " + to_string(t.element_of()) +
                       ": no integer type is twice as wide; use operands of at most 32 bits");
  return t.with_bits(t.bits * 2);
}

// A shift amount clamped to [lo, hi] (in its own type, which holds both: |lo|, |hi| <= 65) as
// int32, with `lanes` lanes. Past the width of the value shifted, every amount shifts the same.
Expr shiftAmount(Expr b, int lo, int hi, int lanes, const char *what) {
  requireDefined(b, what);
  const Type t = b.type();
  if (!(t.is_int() || t.is_uint()) || t.is_bool())
    throw CompileError(std::string(what) + ": the shift amount must be an integer, not " + to_string(t) + ": " +
                       ir::to_string(b));
  if (t.lanes != 1 && t.lanes != lanes)
    throw CompileError(std::string(what) + ": the shift amount has " + std::to_string(t.lanes) +
                       " lanes and the value shifted " + std::to_string(lanes));
  Expr clamped = Min::make(b, make_const(t, int64_t(hi)));
  if (t.is_int())
    clamped = Max::make(clamped, make_const(t, int64_t(lo)));
  return broadcastTo(cast(Int(32, t.lanes), clamped), lanes);
}

// x shifted left by `amount` (int32; right where negative), bits shifted out from x's width up.
// The left shift wraps, signed too (a signed 32- or 64-bit << must not overflow).
Expr shiftBy(const Expr &x, const Expr &amount) {
  const Type t = x.type(), ut = t.with_code(Type::UInt);
  const Expr zero = make_zero(amount.type());
  Expr left = reinterpret(t, reinterpret(ut, x) << cast(ut, Max::make(amount, zero)));
  return left >> cast(t, Max::make(Sub::make(zero, amount), zero));
}

// p (of the type twice as wide as t) shifted right by `amount` (int32 in [-t.bits, 2 * t.bits +
// 1]; left where negative), floored or rounded half up, then saturated to t. Exact: a right
// shift adds the last bit shifted out instead of a rounding term that could overflow, and a left
// shift (by at most t.bits) starts from p saturated to t, which then fits.
Expr shiftRightNarrow(const Expr &p, const Expr &amount, Type t, bool rounding) {
  const Type w = p.type();
  const Expr zero = make_zero(amount.type());
  Expr inT = Max::make(Min::make(p, cast(w, make_highest(t))), cast(w, make_lowest(t)));
  Expr left = shiftBy(inT, Sub::make(zero, amount));
  Expr right = shiftBy(p, Sub::make(zero, amount));
  if (rounding)
    right = right + (shiftBy(p, Sub::make(make_one(amount.type()), amount)) & make_one(w));
  return saturating_cast(t, select(GT::make(amount, zero), right, left));
}

} // namespace

Expr widening_add(Expr a, Expr b) {
  const Type w = widened(integerOperands(a, b, "widening_add"), "widening_add");
  return cast(w, a) + cast(w, b);
}
Expr widening_sub(Expr a, Expr b) {
  const Type w = widened(integerOperands(a, b, "widening_sub"), "widening_sub").with_code(Type::Int);
  return cast(w, a) - cast(w, b);
}
Expr widening_mul(Expr a, Expr b) {
  requireDefined(a, "widening_mul");
  requireDefined(b, "widening_mul");
  const Type ta = a.type(), tb = b.type();
  // Operands of one width but not one signedness multiply signed, as in Halide.
  if (!isLiteral(a) && !isLiteral(b) && ta.bits == tb.bits && ta.lanes == tb.lanes && ta.code != tb.code) {
    const Type w = widened(integerOperand(a, "widening_mul"), "widening_mul").with_code(Type::Int);
    integerOperand(b, "widening_mul");
    return cast(w, a) * cast(w, b);
  }
  const Type w = widened(integerOperands(a, b, "widening_mul"), "widening_mul");
  return cast(w, a) * cast(w, b);
}
Expr widening_shift_left(Expr a, Expr b) {
  const Type w = widened(integerOperand(a, "widening_shift_left"), "widening_shift_left");
  return shiftBy(cast(w, a), shiftAmount(b, -(w.bits + 1), w.bits + 1, w.lanes, "widening_shift_left"));
}
Expr widening_shift_right(Expr a, Expr b) {
  const Type w = widened(integerOperand(a, "widening_shift_right"), "widening_shift_right");
  Expr amount = shiftAmount(b, -(w.bits + 1), w.bits + 1, w.lanes, "widening_shift_right");
  return shiftBy(cast(w, a), Sub::make(make_zero(amount.type()), amount));
}
Expr rounding_shift_right(Expr a, Expr b) {
  const Type t = integerOperand(a, "rounding_shift_right"), w = widened(t, "rounding_shift_right");
  return shiftRightNarrow(cast(w, a), shiftAmount(b, -t.bits, 2 * t.bits + 1, t.lanes, "rounding_shift_right"), t,
                          true);
}
Expr rounding_shift_left(Expr a, Expr b) {
  const Type t = integerOperand(a, "rounding_shift_left"), w = widened(t, "rounding_shift_left");
  Expr amount = shiftAmount(b, -(2 * t.bits + 1), t.bits, t.lanes, "rounding_shift_left");
  return shiftRightNarrow(cast(w, a), Sub::make(make_zero(amount.type()), amount), t, true);
}
Expr saturating_add(Expr a, Expr b) {
  const Type t = integerOperands(a, b, "saturating_add");
  if (t.bits <= 32)
    return saturating_cast(t, widening_add(a, b));
  if (t.is_uint()) {
    Expr sum = a + b;
    return select(sum < a, make_highest(t), sum);
  }
  // In the unsigned type the sum wraps as defined; it overflowed where the operands have one
  // sign and the sum the other.
  const Type ut = t.with_code(Type::UInt);
  Expr sum = reinterpret(t, reinterpret(ut, a) + reinterpret(ut, b));
  const Expr zero = make_zero(t);
  Expr overflowed = (a < zero) == (b < zero) && (sum < zero) != (a < zero);
  return select(overflowed, select(a < zero, make_lowest(t), make_highest(t)), sum);
}
Expr saturating_sub(Expr a, Expr b) {
  const Type t = integerOperands(a, b, "saturating_sub");
  if (t.bits <= 32)
    return saturating_cast(t, widening_sub(a, b));
  if (t.is_uint())
    return select(a < b, make_zero(t), a - b);
  const Type ut = t.with_code(Type::UInt);
  Expr difference = reinterpret(t, reinterpret(ut, a) - reinterpret(ut, b));
  const Expr zero = make_zero(t);
  Expr overflowed = (a < zero) != (b < zero) && (difference < zero) != (a < zero);
  return select(overflowed, select(a < zero, make_lowest(t), make_highest(t)), difference);
}
Expr halving_add(Expr a, Expr b) {
  const Type t = integerOperands(a, b, "halving_add");
  const Expr one = make_one(t);
  if (t.bits <= 32)
    return cast(t, widening_add(a, b) >> 1);
  return (a >> one) + (b >> one) + (a & b & one);
}
Expr rounding_halving_add(Expr a, Expr b) {
  const Type t = integerOperands(a, b, "rounding_halving_add");
  const Expr one = make_one(t);
  if (t.bits <= 32)
    return cast(t, (widening_add(a, b) + 1) >> 1);
  return (a >> one) + (b >> one) + ((a | b) & one);
}
Expr halving_sub(Expr a, Expr b) {
  const Type t = integerOperands(a, b, "halving_sub");
  const Expr one = make_one(t);
  if (t.bits <= 32) {
    const Type w = widened(t, "halving_sub");
    return cast(t, (cast(w, a) - cast(w, b)) >> 1);
  }
  return (a >> one) - (b >> one) - (~a & b & one);
}
Expr mul_shift_right(Expr a, Expr b, Expr q) {
  const Type t = integerOperands(a, b, "mul_shift_right"), w = widened(t, "mul_shift_right");
  return shiftRightNarrow(cast(w, a) * cast(w, b), shiftAmount(q, -t.bits, 2 * t.bits + 1, t.lanes, "mul_shift_right"),
                          t, false);
}
Expr rounding_mul_shift_right(Expr a, Expr b, Expr q) {
  const Type t = integerOperands(a, b, "rounding_mul_shift_right"), w = widened(t, "rounding_mul_shift_right");
  return shiftRightNarrow(cast(w, a) * cast(w, b),
                          shiftAmount(q, -t.bits, 2 * t.bits + 1, t.lanes, "rounding_mul_shift_right"), t, true);
}

Expr u8_sat(Expr e) { return saturating_cast(UInt(8), std::move(e)); }
Expr u16_sat(Expr e) { return saturating_cast(UInt(16), std::move(e)); }
Expr u32_sat(Expr e) { return saturating_cast(UInt(32), std::move(e)); }
Expr u64_sat(Expr e) { return saturating_cast(UInt(64), std::move(e)); }
Expr i8_sat(Expr e) { return saturating_cast(Int(8), std::move(e)); }
Expr i16_sat(Expr e) { return saturating_cast(Int(16), std::move(e)); }
Expr i32_sat(Expr e) { return saturating_cast(Int(32), std::move(e)); }
Expr i64_sat(Expr e) { return saturating_cast(Int(64), std::move(e)); }

Expr sqrt(Expr x) { return mathCall("sqrt", std::move(x)); }
Expr exp(Expr x) { return mathCall("exp", std::move(x)); }
Expr log(Expr x) { return mathCall("log", std::move(x)); }
Expr sin(Expr x) { return mathCall("sin", std::move(x)); }
Expr cos(Expr x) { return mathCall("cos", std::move(x)); }
Expr tanh(Expr x) { return mathCall("tanh", std::move(x)); }
Expr floor(Expr x) { return mathCall("floor", std::move(x)); }
Expr ceil(Expr x) { return mathCall("ceil", std::move(x)); }
Expr round(Expr x) { return mathCall("round", std::move(x)); }
Expr trunc(Expr x) { return mathCall("trunc", std::move(x)); }
Expr tan(Expr x) { return mathCall("tan", std::move(x)); }
Expr asin(Expr x) { return mathCall("asin", std::move(x)); }
Expr acos(Expr x) { return mathCall("acos", std::move(x)); }
Expr atan(Expr x) { return mathCall("atan", std::move(x)); }
Expr sinh(Expr x) { return mathCall("sinh", std::move(x)); }
Expr cosh(Expr x) { return mathCall("cosh", std::move(x)); }
Expr asinh(Expr x) { return mathCall("asinh", std::move(x)); }
Expr acosh(Expr x) { return mathCall("acosh", std::move(x)); }
Expr atanh(Expr x) { return mathCall("atanh", std::move(x)); }
Expr pow(Expr x, Expr y) { return mathCall2("pow", std::move(x), std::move(y)); }
Expr atan2(Expr y, Expr x) { return mathCall2("atan2", std::move(y), std::move(x)); }
Expr fast_pow(Expr x, Expr y) { return pow(std::move(x), std::move(y)); }
Expr fast_exp(Expr x) { return exp(std::move(x)); }
Expr fast_log(Expr x) { return log(std::move(x)); }
Expr fast_sin(Expr x) { return sin(std::move(x)); }
Expr fast_cos(Expr x) { return cos(std::move(x)); }
Expr erf(Expr x) { return mathCall("erf", std::move(x)); }
Expr hypot(Expr x, Expr y) {
  x = toFloat(std::move(x), "hypot");
  y = toFloat(std::move(y), "hypot");
  matchTypes(x, y, "hypot");
  return sqrt(x * x + y * y);
}
Expr fract(Expr x) {
  x = toFloat(std::move(x), "fract");
  return x - trunc(x);
}
Expr fast_inverse(Expr x) {
  x = toFloat(std::move(x), "fast_inverse");
  return make_one(x.type()) / x;
}
Expr fast_inverse_sqrt(Expr x) {
  x = toFloat(std::move(x), "fast_inverse_sqrt");
  return make_one(x.type()) / sqrt(x);
}
Expr unsafe_promise_clamped(Expr value, Expr min, Expr max) {
  requireDefined(value, "unsafe_promise_clamped");
  requireDefined(min, "unsafe_promise_clamped");
  requireDefined(max, "unsafe_promise_clamped");
  return clamp(std::move(value), std::move(min), std::move(max));
}

namespace {

// An unsigned weight of `from` bits as one of `to` bits, the same fraction of the range:
// (2^to - 1) / (2^from - 1) is (2^from + 1)(2^2from + 1)... for powers of two (255 * 257 = 65535).
Expr rescaledWeight(const Expr &weight, Type computation) {
  const int from = weight.type().bits, to = computation.bits;
  if (from == to)
    return weight;
  uint64_t scale = 1;
  for (int left = std::abs(from - to), shift = std::min(from, to); left > 0; left -= shift, shift *= 2)
    scale += scale << shift;
  if (from < to)
    return cast(computation, weight) * make_const(computation, static_cast<int64_t>(scale));
  return cast(computation, weight / make_const(weight.type(), static_cast<int64_t>(scale)));
}

// Halide's integer lerp: in the unsigned type of the values' width (signed values biased by the
// type's minimum), zero * (max - w) + one * w in twice the width, divided by max with rounding.
Expr integerLerp(const Expr &zero, const Expr &one, const Expr &weight) {
  const Type t = zero.type(), u = t.with_code(Type::UInt);
  if (t.bits == 1) {
    Expr half = weight.type().is_float() ? make_const(weight.type(), 0.5)
                                         : make_const(weight.type(), static_cast<int64_t>(weight.type().max_uint() / 2));
    return select(weight > half, one, zero);
  }
  const Expr max = make_const(u, static_cast<int64_t>(u.max_uint()));
  Expr bias = t.is_int() ? cast(u, make_const(t, t.min_int())) : make_zero(u);
  Expr a = cast(u, zero) - bias, b = cast(u, one) - bias;
  Expr w;
  if (weight.type().is_float()) {
    // 2^32 - 1 is not a float: scale 32-bit weights in double.
    w = u.bits == 32 ? cast(u, cast(Float(64, weight.type().lanes), weight) * 4294967295.0)
                     : cast(u, cast(weight.type(), max) * weight);
  } else {
    w = rescaledWeight(weight, u);
  }
  const Type wide = u.with_bits(u.bits * 2);
  Expr products = cast(wide, a) * cast(wide, max - w) + cast(wide, b) * cast(wide, w);
  Expr wideMax = cast(wide, max);
  Expr result = cast(u, (products + wideMax / 2) / wideMax);
  return t.is_int() ? cast(t, result + bias) : result;
}

} // namespace

Expr lerp(Expr zero_val, Expr one_val, Expr weight) {
  requireDefined(zero_val, "lerp");
  requireDefined(one_val, "lerp");
  requireDefined(weight, "lerp");
  // Integer constants take the other value's type, as in Halide: lerp(0, cast<uint8_t>(x), w).
  if (as_const_int(zero_val) && zero_val.type() == Int(32))
    zero_val = cast(one_val.type(), zero_val);
  if (as_const_int(one_val) && one_val.type() == Int(32))
    one_val = cast(zero_val.type(), one_val);
  if (zero_val.type() != one_val.type())
    throw CompileError("lerp between " + to_string(zero_val.type()) + " and " + to_string(one_val.type()) +
                       ": the values must have one type");
  const Type t = zero_val.type();
  if (weight.type().is_int())
    throw CompileError("a lerp weight must be an unsigned integer (a fraction of its type's range: 255 is 1 for "
                       "uint8) or a float, not " + to_string(weight.type()));
  if (!t.is_float() && t.bits > 32)
    throw CompileError("lerp between " + to_string(t) + " values: integers of more than 32 bits are not supported");
  if (!t.is_float()) {
    if (auto constant = as_const_float(weight); constant && !(*constant >= 0.0 && *constant <= 1.0))
      throw CompileError("lerp of integers with the weight " + std::to_string(*constant) + ", outside [0, 1]");
    return integerLerp(zero_val, one_val, weight);
  }
  // Float values: an unsigned weight is a fraction of its type's range.
  if (!weight.type().is_float())
    weight = cast(t, weight) / make_const(t, std::ldexp(1.0, weight.type().bits) - 1);
  else
    weight = cast(t, weight);
  Expr one = broadcastTo(make_one(t.element_of()), t.lanes);
  return zero_val * (one - weight) + one_val * weight;
}

Expr is_nan(Expr x) { return floatTest(Call::IsNan, std::move(x)); }
Expr is_inf(Expr x) { return floatTest(Call::IsInf, std::move(x)); }
Expr is_finite(Expr x) { return floatTest(Call::IsFinite, std::move(x)); }

namespace {
// `text` in a message format: the placeholder character doubled.
std::string escapedText(const std::string &text) {
  std::string result;
  for (char c : text)
    result += c == Call::PrintPlaceholder[0] ? std::string(2, c) : std::string(1, c);
  return result;
}

// print's and require's arguments as a message format, separated by spaces, the values appended
// to `args`.
std::string messageFormat(const std::vector<PrintArgument> &parts, std::vector<Expr> &args, const char *what) {
  std::string format;
  for (const PrintArgument &a : parts) {
    if (!format.empty())
      format += ' ';
    if (a.value().defined()) {
      if (!a.value().type().is_scalar())
        throw CompileError(std::string(what) + " of a vector: " + ir::to_string(a.value()));
      format += Call::PrintPlaceholder;
      args.push_back(a.value());
      continue;
    }
    format += escapedText(a.text());
  }
  return format;
}

void checkConditionAndValue(const Expr &condition, const Expr &value, const char *what) {
  if (!condition.defined() || !value.defined())
    throw CompileError(std::string("undefined Expr given to ") + what);
  if (condition.type() != Bool())
    throw CompileError(std::string("the condition of ") + what + " must be a boolean, not " +
                       to_string(condition.type()) + ": " + ir::to_string(condition));
  if (!value.type().is_scalar())
    throw CompileError(std::string(what) + " of a vector: " + ir::to_string(value));
}
} // namespace

Expr detail::print_call(Expr condition, Expr value, const std::vector<PrintArgument> &more) {
  checkConditionAndValue(condition, value, "print_when");
  std::vector<Expr> args{condition, value};
  std::vector<PrintArgument> parts{PrintArgument(value)};
  parts.insert(parts.end(), more.begin(), more.end());
  std::vector<Expr> values;
  const std::string format = messageFormat(parts, values, "print");
  args.insert(args.end(), values.begin() + 1, values.end());
  return Call::make(value.type(), Call::Print + std::string(":") + format + "\n", std::move(args), Call::Intrinsic);
}

Expr detail::require_call(Expr condition, Expr value, const std::vector<PrintArgument> &message) {
  checkConditionAndValue(condition, value, "require");
  std::vector<Expr> args{condition, value};
  std::string format = "requirement failed: " + escapedText(ir::to_string(condition));
  if (const std::string text = messageFormat(message, args, "require"); !text.empty())
    format += ": " + text;
  return Call::make(value.type(), Call::Require + std::string(":") + format, std::move(args), Call::Intrinsic);
}

} // namespace ptxjit
