#include "Constants.h"

#include <bit>
#include <limits>

namespace ptxjit::ir {

Expr make_const(Type t, int64_t value) {
  if (t.is_vector())
    return Broadcast::make(make_const(t.element_of(), value), t.lanes);
  if (t.is_int())
    return IntImm::make(t, value);
  if (t.is_float())
    return FloatImm::make(t, static_cast<double>(value));
  return UIntImm::make(t, static_cast<uint64_t>(value));
}

Expr make_const(Type t, double value) {
  if (t.is_vector())
    return Broadcast::make(make_const(t.element_of(), value), t.lanes);
  if (t.is_float())
    return FloatImm::make(t, value);
  return make_const(t, static_cast<int64_t>(value));
}

Expr make_zero(Type t) { return make_const(t, int64_t(0)); }
Expr make_one(Type t) { return make_const(t, int64_t(1)); }
Expr make_bool(bool value, int lanes) { return make_const(Bool(lanes), int64_t(value)); }

Expr make_highest(Type t) {
  if (t.is_bool())
    return make_bool(true, t.lanes);
  if (t.is_float())
    return make_const(t, std::numeric_limits<double>::infinity());
  return t.is_int() ? make_const(t, t.max_int()) : Expr(UIntImm::make(t, t.max_uint()));
}

Expr make_lowest(Type t) {
  if (t.is_float())
    return make_const(t, -std::numeric_limits<double>::infinity());
  return t.is_int() ? make_const(t, t.min_int()) : make_zero(t);
}

std::optional<int64_t> as_const_int(const Expr &e) {
  if (!e.defined())
    return std::nullopt;
  if (const auto *b = e.as<Broadcast>())
    return as_const_int(b->value);
  if (const auto *i = e.as<IntImm>())
    return i->value;
  if (const auto *u = e.as<UIntImm>(); u && u->value <= uint64_t(INT64_MAX))
    return static_cast<int64_t>(u->value);
  return std::nullopt;
}

std::optional<double> as_const_float(const Expr &e) {
  if (!e.defined())
    return std::nullopt;
  if (const auto *b = e.as<Broadcast>())
    return as_const_float(b->value);
  if (const auto *f = e.as<FloatImm>())
    return f->value;
  return std::nullopt;
}

bool is_const(const Expr &e) { return as_const_int(e) || as_const_float(e) || e.as<UIntImm>(); }
bool is_const_zero(const Expr &e) {
  auto i = as_const_int(e);
  auto f = as_const_float(e);
  return (i && *i == 0) || (f && *f == 0.0);
}
bool is_const_one(const Expr &e) {
  auto i = as_const_int(e);
  auto f = as_const_float(e);
  return (i && *i == 1) || (f && *f == 1.0);
}

std::optional<Expr> fold_bitwise(const std::string &name, Type t, int64_t a, int64_t b) {
  const int bits = t.bits;
  // Signed constants are sign-extended and unsigned ones zero-extended in int64: both shift right
  // correctly as their own type once the width is checked.
  auto shiftLeft = [&](uint64_t n) { return n >= uint64_t(bits) ? int64_t(0) : int64_t(uint64_t(a) << n); };
  auto shiftRight = [&](uint64_t n) {
    if (t.is_int())
      return n >= uint64_t(bits) ? (a < 0 ? int64_t(-1) : int64_t(0)) : a >> n;
    return n >= uint64_t(bits) ? int64_t(0) : int64_t(uint64_t(a) >> n);
  };
  const bool negative = t.is_int() && b < 0;
  // The magnitude of INT64_MIN is past every width, as its unsigned negation says.
  const uint64_t magnitude = negative ? uint64_t(0) - uint64_t(b) : uint64_t(b);
  int64_t value;
  if (name == Call::BitwiseAnd)
    value = a & b;
  else if (name == Call::BitwiseOr)
    value = a | b;
  else if (name == Call::BitwiseXor)
    value = a ^ b;
  else if (name == Call::BitwiseNot)
    value = ~a;
  else if (name == Call::Popcount || name == Call::CountLeadingZeros || name == Call::CountTrailingZeros) {
    const uint64_t bitsOfType = bits == 64 ? uint64_t(a) : uint64_t(a) & ((uint64_t(1) << bits) - 1);
    if (name == Call::Popcount)
      value = std::popcount(bitsOfType);
    else if (bitsOfType == 0)
      value = bits;
    else
      value = name == Call::CountLeadingZeros ? std::countl_zero(bitsOfType) - (64 - bits) : std::countr_zero(bitsOfType);
  }
  else if (name == Call::ShiftLeft)
    value = negative ? shiftRight(magnitude) : shiftLeft(magnitude);
  else if (name == Call::ShiftRight)
    value = negative ? shiftLeft(magnitude) : shiftRight(magnitude);
  else
    return std::nullopt;
  return make_const(t, value); // wraps to the width
}

} // namespace ptxjit::ir
