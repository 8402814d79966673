#ifndef PTXJIT_TEST_FIXEDPOINTPROGRAMS_H
#define PTXJIT_TEST_FIXEDPOINTPROGRAMS_H

// Halide's fixed-point intrinsics (widening_add ... rounding_mul_shift_right) with exact
// references in 128-bit integers, shared by the [cpu] and [gpu] tests. Every form is a value of
// one Func over (x, form), its result's bits as a uint64, so one compile covers them all.

#include "TestUtil.h"
#include "ptxjit.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace ptxjit::test {

using Exact = __int128;

template <typename T> struct TwiceAsWide;
template <> struct TwiceAsWide<int8_t> { using type = int16_t; };
template <> struct TwiceAsWide<uint8_t> { using type = uint16_t; };
template <> struct TwiceAsWide<int16_t> { using type = int32_t; };
template <> struct TwiceAsWide<uint16_t> { using type = uint32_t; };
template <> struct TwiceAsWide<int32_t> { using type = int64_t; };
template <> struct TwiceAsWide<uint32_t> { using type = uint64_t; };
template <> struct TwiceAsWide<int64_t> { using type = void; };
template <> struct TwiceAsWide<uint64_t> { using type = void; };

template <typename T> Exact saturate(Exact v) {
  return std::clamp<Exact>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
}

// v * 2^k for k >= 0, k < 0 dividing and flooring; a product past any 64-bit range is held as a
// large value of its sign (it only saturates).
inline Exact exactShiftLeft(Exact v, int k) {
  if (k < 0)
    return -k >= 127 ? (v < 0 ? -1 : 0) : v >> -k;
  if (v == 0)
    return 0;
  if (k > 60)
    return v > 0 ? Exact(1) << 100 : -(Exact(1) << 100);
  return v * (Exact(1) << k);
}

// v / 2^k rounded half up; k < 0 multiplies.
inline Exact exactRoundingShiftRight(Exact v, int k) {
  if (k <= 0)
    return exactShiftLeft(v, -k);
  return exactShiftLeft(v, -k) + (exactShiftLeft(v, 1 - k) & 1);
}

// The language's shift of a value of type W: bits shifted out from the width up, a negative
// amount shifting the other way.
template <typename W> W languageShiftLeft(W x, int k) {
  constexpr int bits = sizeof(W) * 8;
  using U = std::make_unsigned_t<W>;
  if (k < 0) {
    if (-k >= bits)
      return std::is_signed_v<W> && x < 0 ? W(-1) : W(0);
    return W(x >> -k);
  }
  return k >= bits ? W(0) : W(U(U(x) << k));
}

template <typename T> struct FixedPointForm {
  const char *name;
  bool widens;                 // needs a type twice as wide: operands of at most 32 bits
  std::function<Expr(Expr a, Expr b, Expr s)> expression;
  std::function<Exact(T a, T b, int s)> reference; // the exact result, in the result's type
};

template <typename T> std::vector<FixedPointForm<T>> fixed_point_forms() {
  using W = typename TwiceAsWide<T>::type;
  auto wideShift = [](T a, int s) -> Exact {
    if constexpr (std::is_void_v<W>)
      return 0;
    else
      return languageShiftLeft<W>(W(a), s);
  };
  auto sat = [](Exact v) { return saturate<T>(v); };
  return {
      {"widening_add", true, [](Expr a, Expr b, Expr) { return widening_add(a, b); },
       [](T a, T b, int) { return Exact(a) + b; }},
      {"widening_sub", true, [](Expr a, Expr b, Expr) { return widening_sub(a, b); },
       [](T a, T b, int) { return Exact(a) - b; }},
      {"widening_mul", true, [](Expr a, Expr b, Expr) { return widening_mul(a, b); },
       [](T a, T b, int) { return Exact(a) * b; }},
      {"widening_shift_left", true, [](Expr a, Expr, Expr s) { return widening_shift_left(a, s); },
       [=](T a, T, int s) { return wideShift(a, s); }},
      {"widening_shift_right", true, [](Expr a, Expr, Expr s) { return widening_shift_right(a, s); },
       [=](T a, T, int s) { return wideShift(a, -s); }},
      {"rounding_shift_right", true, [](Expr a, Expr, Expr s) { return rounding_shift_right(a, s); },
       [=](T a, T, int s) { return sat(exactRoundingShiftRight(a, s)); }},
      {"rounding_shift_left", true, [](Expr a, Expr, Expr s) { return rounding_shift_left(a, s); },
       [=](T a, T, int s) { return sat(exactRoundingShiftRight(a, -s)); }},
      {"rounding_shift_left by an unsigned amount", true,
       [](Expr a, Expr, Expr s) { return rounding_shift_left(a, cast<uint8_t>(clamp(s, 0, 255))); },
       [=](T a, T, int s) { return sat(exactShiftLeft(a, std::clamp(s, 0, 255))); }},
      {"saturating_add", false, [](Expr a, Expr b, Expr) { return saturating_add(a, b); },
       [=](T a, T b, int) { return sat(Exact(a) + b); }},
      {"saturating_sub", false, [](Expr a, Expr b, Expr) { return saturating_sub(a, b); },
       [=](T a, T b, int) { return sat(Exact(a) - b); }},
      {"halving_add", false, [](Expr a, Expr b, Expr) { return halving_add(a, b); },
       [](T a, T b, int) { return (Exact(a) + b) >> 1; }},
      {"rounding_halving_add", false, [](Expr a, Expr b, Expr) { return rounding_halving_add(a, b); },
       [](T a, T b, int) { return (Exact(a) + b + 1) >> 1; }},
      // Of unsigned operands the half difference wraps, as narrow() does.
      {"halving_sub", false, [](Expr a, Expr b, Expr) { return halving_sub(a, b); },
       [](T a, T b, int) { return Exact(T((Exact(a) - b) >> 1)); }},
      {"mul_shift_right", true, [](Expr a, Expr b, Expr s) { return mul_shift_right(a, b, s); },
       [=](T a, T b, int s) { return sat(exactShiftLeft(Exact(a) * b, -s)); }},
      {"rounding_mul_shift_right", true, [](Expr a, Expr b, Expr s) { return rounding_mul_shift_right(a, b, s); },
       [=](T a, T b, int s) { return sat(exactRoundingShiftRight(Exact(a) * b, s)); }},
  };
}

/// Operands of type T over the whole range (the extremes, 0 and +-1 among them) and shift
/// amounts of int16 from below minus the width to past twice the width, some far past; bound to
/// the ImageParams of the same names.
template <typename T> struct FixedPointInputs {
  Buffer<T> a, b;
  Buffer<int16_t> s;
  ImageParam pa{type_of<T>(), 1, "a"}, pb{type_of<T>(), 1, "b"}, ps{Int(16), 1, "s"};
  FixedPointInputs(int n, uint32_t seed) : a(n), b(n), s(n) {
    constexpr int bits = sizeof(T) * 8;
    std::mt19937_64 rng(seed);
    a.for_each_element([&](const std::vector<int> &c) { a.at(c) = T(rng()); });
    b.for_each_element([&](const std::vector<int> &c) { b.at(c) = T(rng() >> (rng() % (bits + 1) % 64)); });
    fill_random(s, seed + 1, -bits - 3, 2 * bits + 3);
    const T specials[] = {T(0), T(1), T(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
    for (int i = 0; i < 25 && i < n; ++i) {
      a(i) = specials[i % 5];
      b(i) = specials[i / 5];
    }
    for (int i = 25; i < n; i += 13)
      s(i) = int16_t(i % 2 ? 300 : -300);
    pa.set(a);
    pb.set(b);
    ps.set(s);
  }
};

/// f(x, form) = form's result at x, as the bits of a uint64 (signed results sign-extended).
template <typename T>
Func fixed_point_func(const std::vector<FixedPointForm<T>> &forms, const FixedPointInputs<T> &in, const Var &x,
                      const Var &form) {
  std::vector<Expr> values;
  for (const FixedPointForm<T> &f : forms)
    values.push_back(cast<uint64_t>(f.expression(in.pa(x), in.pb(x), in.ps(x))));
  Func f("fixed_point");
  f(x, form) = mux(form, values);
  return f;
}

/// The forms a type has: those that widen only of up to 32 bits.
template <typename T> std::vector<FixedPointForm<T>> fixed_point_forms_of() {
  std::vector<FixedPointForm<T>> all = fixed_point_forms<T>(), kept;
  for (const FixedPointForm<T> &f : all)
    if (!f.widens || sizeof(T) <= 4)
      kept.push_back(f);
  return kept;
}

template <typename T>
void check_fixed_point_forms(const std::vector<FixedPointForm<T>> &forms, const FixedPointInputs<T> &in,
                             const Buffer<uint64_t> &out) {
  for (size_t k = 0; k < forms.size(); ++k) {
    INFO(forms[k].name);
    int mismatches = 0;
    for (int i = 0; i < out.width(); ++i) {
      const uint64_t expected = uint64_t(forms[k].reference(in.a(i), in.b(i), in.s(i)));
      const uint64_t got = out(i, int(k));
      if (got != expected && ++mismatches <= 5)
        FAIL_CHECK("of " << int64_t(in.a(i)) << ", " << int64_t(in.b(i)) << " and shift " << in.s(i)
                         << ": expected " << int64_t(expected) << ", got " << int64_t(got));
    }
    CHECK(mismatches == 0);
  }
}

} // namespace ptxjit::test

#endif
