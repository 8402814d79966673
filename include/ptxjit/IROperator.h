#ifndef PTXJIT_IROPERATOR_H
#define PTXJIT_IROPERATOR_H

// Operators and functions on Expr. Mixed types follow C++-like promotion: float beats integer,
// wider beats narrower, signed and unsigned of equal width meet as signed; an int or float
// literal takes the type of the other operand (a CompileError when it does not fit).
// Integer division is Euclidean: % is never negative (for positive divisors, / rounds down);
// dividing by zero gives zero.

#include "ptxjit/Expr.h"
#include "ptxjit/Tuple.h"

#include <iosfwd>
#include <string>
#include <type_traits>
#include <vector>

#pragma GCC visibility push(default)
namespace ptxjit {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
/// As Halide's: `a = a op b` with b cast to a's type first, so that the type of `a` never
/// changes (`Expr sum = 0.0f; sum += f(x)`; an integer `sum` would truncate a float f).
Expr &operator+=(Expr &a, Expr b);
Expr &operator-=(Expr &a, Expr b);
Expr &operator*=(Expr &a, Expr b);
Expr &operator/=(Expr &a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

// Bitwise operators on integers (and booleans), on the operands' matched type. A shift by a
// negative amount shifts the other way; shifting by the type's width or more gives 0, or -1 for
// a negative signed value shifted right (all bits shifted out, as if one at a time).
Expr operator&(Expr a, Expr b);
Expr operator|(Expr a, Expr b);
Expr operator^(Expr a, Expr b);
Expr operator~(Expr a);
Expr operator<<(Expr a, Expr b);
Expr operator>>(Expr a, Expr b);
/// The number of bits set in an integer, of the integer's type.
Expr popcount(Expr x);
/// The number of zero bits above (leading) or below (trailing) the highest or lowest set bit of
/// an integer, of the integer's type; of zero, the type's width.
Expr count_leading_zeros(Expr x);
Expr count_trailing_zeros(Expr x);
/// Integer division and remainder rounding toward zero, as in C (the operators round down:
/// -7 / 2 is -4, div_round_to_zero(-7, 2) is -3 and mod_round_to_zero(-7, 2) is -1). A divisor
/// of zero gives 0, as the operators do.
Expr div_round_to_zero(Expr x, Expr y);
Expr mod_round_to_zero(Expr x, Expr y);

/// Writes `e` as PTXJIT_DEBUG=2 prints it, e.g. "((x + 1) * 2)".
std::ostream &operator<<(std::ostream &out, const Expr &e);

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr clamp(Expr value, Expr lo, Expr hi);
/// |a|; of a signed integer, the unsigned integer of the same width (|INT8_MIN| is 128).
Expr abs(Expr a);
/// |a - b| without overflow; of integers, the unsigned integer of the same width.
Expr absd(Expr a, Expr b);
Expr select(Expr condition, Expr true_value, Expr false_value);
/// select(c0, v0, c1, v1, ..., default): v0 where c0 holds, else v1 where c1 holds, ..., else the
/// default, as in Halide.
template <typename... Rest> Expr select(Expr c0, Expr v0, Expr c1, Expr v1, const Rest &...rest) {
  return select(std::move(c0), std::move(v0), select(std::move(c1), std::move(v1), rest...));
}
/// Each value of two Tuples of the same size, chosen by one condition (an argmin's update); a call
/// to a Func of several values is a Tuple here when written `Tuple(f(x))`.
template <typename T, typename = std::enable_if_t<std::is_same_v<T, Tuple>>>
Tuple select(Expr condition, const T &true_value, const T &false_value) {
  return select_values(std::move(condition), true_value, false_value);
}
template <typename T, typename... Rest, typename = std::enable_if_t<std::is_same_v<T, Tuple>>>
Tuple select(Expr c0, const T &v0, Expr c1, const T &v1, const Rest &...rest) {
  return select_values(std::move(c0), v0, select(std::move(c1), v1, rest...));
}
Tuple select_values(Expr condition, const Tuple &true_value, const Tuple &false_value);
/// mux(id, {v0, v1, ...}): the value at index `id` (an integer), the last one where `id` is out of
/// range, as in Halide: `rgb(x, y, c) = mux(c, {r(x, y), g(x, y), b(x, y)})`.
Expr mux(Expr id, const std::vector<Expr> &values);
/// A value of type t that a definition leaves as it was, as in Halide: `f(x) = undef<int>()` stores
/// nothing (the updates define f; reading a point none of them wrote is undefined), and
/// `f(r) = Tuple(undef<float>(), f(r)[1] + 1)` updates only the second value. Only a whole value
/// of a definition may be undef.
Expr undef(Type t);
template <typename T> Expr undef() { return undef(type_of<T>()); }
/// Halide's random numbers: random_float() is uniform in [0, 1) (multiples of 2^-24),
/// random_int() and random_uint() cover every 32-bit value. Each call is a random variable of its
/// own, a deterministic function of the point the Func's definition computes (its pure Vars and
/// RVars), of which definition it is in, and of `seed` (an int32, e.g. a Param) where given:
/// `Expr r = random_float(); f(x) = r + r` doubles one variable, `random_float() + random_float()`
/// adds two. A Func inlined anywhere, vectorized, split or on a GPU gives each point the same
/// value; the values of two Tuple elements share the call's value. Only in a Func's definition
/// (or an RDom's where()).
Expr random_float(Expr seed = Expr());
Expr random_int(Expr seed = Expr());
Expr random_uint(Expr seed = Expr());
/// `e` itself. Halide's hints for loop partitioning, which ptxjit does not do.
Expr likely(Expr e);
Expr likely_if_innermost(Expr e);

/// Converts, wrapping integers that do not fit and truncating floats toward zero (a float
/// outside the integer type's range is undefined, as in C++).
Expr cast(Type t, Expr value);
template <typename T> Expr cast(Expr value) { return cast(type_of<T>(), std::move(value)); }
/// Converts, clamping to the range of `t` first (NaN becomes 0).
Expr saturating_cast(Type t, Expr value);
template <typename T> Expr saturating_cast(Expr value) { return saturating_cast(type_of<T>(), std::move(value)); }
/// The same bits seen as another type of the same width.
Expr reinterpret(Type t, Expr value);
template <typename T> Expr reinterpret(Expr value) { return reinterpret(type_of<T>(), std::move(value)); }

// Halide's fixed-point arithmetic on integers, defined through widen (twice the bits, the same
// signedness) and narrow (half the bits): exact, whatever the operands. widen needs operands of
// at most 32 bits; saturating_add, saturating_sub and the halving ones take 64-bit ones too.
// Shift amounts may be negative (a shift the other way) and of any integer type.
/// widen(a) + widen(b).
Expr widening_add(Expr a, Expr b);
/// widen(a) - widen(b), signed.
Expr widening_sub(Expr a, Expr b);
/// widen(a) * widen(b); signed where either is.
Expr widening_mul(Expr a, Expr b);
/// widen(a) << b and widen(a) >> b.
Expr widening_shift_left(Expr a, Expr b);
Expr widening_shift_right(Expr a, Expr b);
/// saturating_narrow((widen(a) + (1 << max(b, 0)) / 2) >> b): a right shift rounding to nearest
/// (ties up); a negative b shifts left, saturating.
Expr rounding_shift_right(Expr a, Expr b);
/// saturating_narrow((widen(a) + (1 >> min(b, 0)) / 2) << b).
Expr rounding_shift_left(Expr a, Expr b);
/// saturating_narrow(widen(a) + widen(b)) and saturating_narrow(widen(a) - widen(b)).
Expr saturating_add(Expr a, Expr b);
Expr saturating_sub(Expr a, Expr b);
/// narrow((widen(a) + widen(b)) / 2), narrow((widen(a) + widen(b) + 1) / 2) and
/// narrow((widen(a) - widen(b)) / 2), dividing toward negative infinity.
Expr halving_add(Expr a, Expr b);
Expr rounding_halving_add(Expr a, Expr b);
Expr halving_sub(Expr a, Expr b);
/// saturating_narrow(widening_mul(a, b) >> q) and saturating_narrow(rounding_shift_right(
/// widening_mul(a, b), q)), in a's type.
Expr mul_shift_right(Expr a, Expr b, Expr q);
Expr rounding_mul_shift_right(Expr a, Expr b, Expr q);

// Halide's shorthands: u8(e) is cast<uint8_t>(e), u8_sat(e) saturating_cast<uint8_t>(e).
Expr u8(Expr e);
Expr u16(Expr e);
Expr u32(Expr e);
Expr u64(Expr e);
Expr i8(Expr e);
Expr i16(Expr e);
Expr i32(Expr e);
Expr i64(Expr e);
Expr f32(Expr e);
Expr f64(Expr e);
Expr u8_sat(Expr e);
Expr u16_sat(Expr e);
Expr u32_sat(Expr e);
Expr u64_sat(Expr e);
Expr i8_sat(Expr e);
Expr i16_sat(Expr e);
Expr i32_sat(Expr e);
Expr i64_sat(Expr e);

// Math on floats; integer arguments are converted to float32.
Expr sqrt(Expr x);
Expr exp(Expr x);
Expr log(Expr x);
Expr pow(Expr x, Expr y);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tanh(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);
Expr trunc(Expr x);
Expr tan(Expr x);
Expr asin(Expr x);
Expr acos(Expr x);
Expr atan(Expr x);
Expr atan2(Expr y, Expr x);
Expr sinh(Expr x);
Expr cosh(Expr x);
Expr asinh(Expr x);
Expr acosh(Expr x);
Expr atanh(Expr x);
/// sqrt(x * x + y * y).
Expr hypot(Expr x, Expr y);
/// x - trunc(x): the fractional part, with the sign of x.
Expr fract(Expr x);
/// The error function.
Expr erf(Expr x);
/// zero_val * (1 - weight) + one_val * weight, as Halide's: the weight is a float or an unsigned
/// integer meaning a fraction of its type's range (255 is 1 for uint8); integer values (up to 32
/// bits) interpolate exactly, rounded to nearest.
Expr lerp(Expr zero_val, Expr one_val, Expr weight);
// Halide's fast approximations; here the same functions, which already allow approximate math.
Expr fast_pow(Expr x, Expr y);
Expr fast_exp(Expr x);
Expr fast_log(Expr x);
Expr fast_sin(Expr x);
Expr fast_cos(Expr x);
/// 1 / x and 1 / sqrt(x), which the GPU computes with its approximate reciprocal instructions.
Expr fast_inverse(Expr x);
Expr fast_inverse_sqrt(Expr x);
/// `value`, which the caller promises lies in [min, max]: bounds inference takes that range. A
/// broken promise clamps the value (in Halide it is undefined behavior).
Expr unsafe_promise_clamped(Expr value, Expr min, Expr max);
/// Tests of a float that hold whatever the optimizer assumes about NaN and infinity elsewhere.
Expr is_nan(Expr x);
Expr is_inf(Expr x);
Expr is_finite(Expr x);

/// One argument of print(): an Expr (printed as a number) or text.
class PrintArgument {
public:
  PrintArgument(const char *text) : Text(text) {}
  PrintArgument(std::string text) : Text(std::move(text)) {}
  /// Anything an Expr converts from: a Var, a FuncRef, a number (not text: a pointer converts
  /// to bool).
  template <typename T, typename = std::enable_if_t<std::is_convertible_v<const T &, Expr> &&
                                                    !std::is_convertible_v<const T &, std::string>>>
  PrintArgument(const T &value) : Value(value) {}
  const Expr &value() const { return Value; }
  const std::string &text() const { return Text; }

private:
  Expr Value;
  std::string Text;
};

namespace detail {
Expr print_call(Expr condition, Expr value, const std::vector<PrintArgument> &more);
Expr require_call(Expr condition, Expr value, const std::vector<PrintArgument> &message);
} // namespace detail

/// `value`, printing it and the other arguments (separated by spaces, then a newline) each time
/// it is evaluated where `condition` holds: through the realize call's print handler on the host
/// (stderr by default), with device printf in CUDA kernels (the process's stdout, when the
/// stream next synchronizes). Numbers print as C's printf does (%lld, %llu, %f).
template <typename... Args> Expr print_when(Expr condition, Expr value, const Args &...more) {
  return detail::print_call(std::move(condition), std::move(value), {PrintArgument(more)...});
}
/// print_when(true, value, more...).
template <typename... Args> Expr print(Expr value, const Args &...more) {
  return detail::print_call(Expr(true), std::move(value), {PrintArgument(more)...});
}
/// Halide's require: `value` where `condition` holds; where it fails, the realize fails (a
/// RuntimeError through the error handler) with "requirement failed: <condition>: " and the
/// message, its arguments written as print writes them: `f(x) = require(p > 0, in(x) / p, "p must
/// be positive, not", p)`. On the host only: a requirement inside a GPU kernel is a CompileError.
/// Like any expression, it is evaluated at every point computed (both values of a select
/// included).
template <typename... Args> Expr require(Expr condition, Expr value, const Args &...message) {
  return detail::require_call(std::move(condition), std::move(value), {PrintArgument(message)...});
}

} // namespace ptxjit

#pragma GCC visibility pop

#endif
