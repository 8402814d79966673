// The language at Halide's breadth, end to end on the host: operators and functions, each
// checked against plain C++ on fresh random data, scalar and vectorized.

#include "FixedPointPrograms.h"
#include "TestUtil.h"
#include "ptxjit.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <type_traits>
#include <unistd.h>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

// A realize's user context whose print handler keeps each message, in order, as a line.
struct PrintedLines : JITUserContext {
  std::mutex Mutex; // guards Lines: parallel loops print at once
  std::vector<std::string> Lines;
  PrintedLines() {
    handlers.print = [](JITUserContext *u, const char *message) {
      auto *p = static_cast<PrintedLines *>(u);
      std::lock_guard<std::mutex> lock(p->Mutex);
      p->Lines.push_back(message);
    };
  }
};

// A 3x3 box blur (three columns summed, then three rows of those over 9) of a fresh random input
// with a one-pixel margin, as plain C++ computes it.
struct BoxBlur {
  ImageParam in;
  Buffer<float> input;
  Var x{"x"}, y{"y"};
  BoxBlur(const std::string &prefix, int w, int h, uint32_t seed) : in(Float(32), 2, prefix + "_in"), input(w + 2, h + 2) {
    input.set_min({-1, -1});
    fill_random(input, seed);
    in.set(input);
  }
  /// The blur's two Funcs, named <prefix>_bx<suffix> and <prefix>_by<suffix>.
  std::pair<Func, Func> funcs(const std::string &prefix, const std::string &suffix) const {
    Func bx(prefix + "_bx" + suffix), by(prefix + "_by" + suffix);
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 9.0f;
    return {bx, by};
  }
  float reference(int i, int j) const {
    auto rx = [&](int jj) { return input(i - 1, jj) + input(i, jj) + input(i + 1, jj); };
    return (rx(j - 1) + rx(j) + rx(j + 1)) / 9.0f;
  }
};

// The language's shifts: a negative amount shifts the other way; every bit shifted out from the
// width up.
template <typename T> T shiftLeft(T a, int64_t n);
template <typename T> T shiftRight(T a, int64_t n) {
  constexpr int bits = sizeof(T) * 8;
  if (n < 0)
    return shiftLeft(a, -n);
  if (n >= bits)
    return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
  return T(a >> n);
}
template <typename T> T shiftLeft(T a, int64_t n) {
  constexpr int bits = sizeof(T) * 8;
  if (n < 0)
    return shiftRight(a, -n);
  if (n >= bits)
    return T(0);
  using U = std::make_unsigned_t<T>;
  return T(U(U(a) << n));
}

template <typename T> void checkBitwise(bool vectorize) {
  constexpr int bits = sizeof(T) * 8;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed << ", " << bits << "-bit " << (std::is_signed_v<T> ? "signed" : "unsigned")
                << (vectorize ? ", vectorized" : ""));
  const int n = 203;
  Buffer<T> as(n), bs(n), amounts(n);
  fill_random(as, seed, double(std::numeric_limits<T>::min()), double(std::numeric_limits<T>::max()));
  fill_random(bs, seed + 1, double(std::numeric_limits<T>::min()), double(std::numeric_limits<T>::max()));
  // Amounts past the width and, for signed types, negative ones.
  fill_random(amounts, seed + 2, std::is_signed_v<T> ? -bits - 3 : 0, bits + 3);
  if constexpr (std::is_signed_v<T>)
    amounts(0) = std::numeric_limits<T>::min();
  ImageParam a(type_of<T>(), 1, "a"), b(type_of<T>(), 1, "b"), s(type_of<T>(), 1, "s");
  a.set(as);
  b.set(bs);
  s.set(amounts);
  Var x("x"), xo("xo"), xi("xi");
  Func ops[6];
  ops[0](x) = a(x) & b(x);
  ops[1](x) = a(x) | b(x);
  ops[2](x) = a(x) ^ b(x);
  ops[3](x) = ~a(x);
  ops[4](x) = a(x) << s(x);
  ops[5](x) = a(x) >> s(x);
  for (int k = 0; k < 6; ++k) {
    INFO("operator " << k);
    if (vectorize)
      ops[k].vectorize(x, 8);
    Buffer<T> out = Pipeline(ops[k]).realize<T>({n});
    check_against(out, [&](const std::vector<int> &c) -> T {
      const T va = as(c[0]), vb = bs(c[0]);
      switch (k) {
      case 0:
        return T(va & vb);
      case 1:
        return T(va | vb);
      case 2:
        return T(va ^ vb);
      case 3:
        return T(~va);
      case 4:
        return shiftLeft(va, int64_t(amounts(c[0])));
      default:
        return shiftRight(va, int64_t(amounts(c[0])));
      }
    });
  }
}

} // namespace

TEST_CASE("Bitwise and shift operators on every integer type", "[cpu][language]") {
  for (bool vectorize : {false, true}) {
    checkBitwise<int8_t>(vectorize);
    checkBitwise<uint8_t>(vectorize);
    checkBitwise<int16_t>(vectorize);
    checkBitwise<uint16_t>(vectorize);
    checkBitwise<int32_t>(vectorize);
    checkBitwise<uint32_t>(vectorize);
  }
}

namespace {

template <typename T> int popcountOf(T v) { return std::popcount(std::make_unsigned_t<T>(v)); }
template <typename T> int leadingZerosOf(T v) { return std::countl_zero(std::make_unsigned_t<T>(v)); }
template <typename T> int trailingZerosOf(T v) { return std::countr_zero(std::make_unsigned_t<T>(v)); }

// C's division and remainder, with the language's zero for a divisor of zero.
template <typename T> T quotientTowardZero(T a, T b) { return b == 0 ? T(0) : T(a / b); }
template <typename T> T remainderTowardZero(T a, T b) { return b == 0 ? T(0) : T(a % b); }

template <typename T> void checkBitCountsAndDivision(bool vectorize) {
  constexpr int bits = sizeof(T) * 8;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed << ", " << bits << "-bit " << (std::is_signed_v<T> ? "signed" : "unsigned")
                << (vectorize ? ", vectorized" : ""));
  const int n = 211;
  Buffer<T> as(n), bs(n);
  // Every bit pattern for the counts; then zero, the extremes and a single high or low bit.
  std::mt19937_64 rng(seed);
  as.for_each_element([&](const std::vector<int> &c) { as.at(c) = T(rng()); });
  const T specials[] = {T(0), T(1), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(T(1) << (bits - 1)),
                        T(T(1) << (bits / 2)), T(-1)};
  for (size_t i = 0; i < std::size(specials); ++i)
    as(int(i)) = specials[i];
  // Divisors of both signs near zero, zero itself, and large ones.
  fill_random(bs, seed + 1, std::is_signed_v<T> ? -20 : 0, 20);
  for (int i = 0; i < n; i += 7)
    bs(i) = T(rng());
  bs(3) = 0;
  if constexpr (std::is_signed_v<T>)
    for (int i = 0; i < n; ++i)
      if (as(i) == std::numeric_limits<T>::min() && bs(i) == T(-1))
        bs(i) = 1; // the quotient overflows
  ImageParam a(type_of<T>(), 1, "a"), b(type_of<T>(), 1, "b");
  a.set(as);
  b.set(bs);
  Var x("x");
  const Expr values[] = {popcount(a(x)), count_leading_zeros(a(x)), count_trailing_zeros(a(x)),
                         div_round_to_zero(a(x), b(x)), mod_round_to_zero(a(x), b(x))};
  Func ops[5];
  for (int k = 0; k < 5; ++k) {
    INFO("function " << k);
    CHECK(values[k].type() == type_of<T>());
    ops[k](x) = values[k];
    if (vectorize)
      ops[k].vectorize(x, 8);
    Buffer<T> out = Pipeline(ops[k]).realize<T>({n});
    int mismatches = 0;
    out.for_each_element([&](const std::vector<int> &c) {
      const T va = as(c[0]), vb = bs(c[0]);
      const T expected = k == 0   ? T(popcountOf(va))
                         : k == 1 ? T(leadingZerosOf(va))
                         : k == 2 ? T(trailingZerosOf(va))
                         : k == 3 ? quotientTowardZero(va, vb)
                                  : remainderTowardZero(va, vb);
      if (out.at(c) != expected && ++mismatches <= 5)
        FAIL_CHECK("of " << int64_t(va) << " and " << int64_t(vb) << ": expected " << int64_t(expected) << ", got "
                         << int64_t(out.at(c)));
    });
  }
}

} // namespace

TEST_CASE("popcount, leading and trailing zeros, and division rounding toward zero, on every integer type",
          "[cpu][language]") {
  for (bool vectorize : {false, true}) {
    checkBitCountsAndDivision<int8_t>(vectorize);
    checkBitCountsAndDivision<uint8_t>(vectorize);
    checkBitCountsAndDivision<int16_t>(vectorize);
    checkBitCountsAndDivision<uint16_t>(vectorize);
    checkBitCountsAndDivision<int32_t>(vectorize);
    checkBitCountsAndDivision<uint32_t>(vectorize);
    checkBitCountsAndDivision<int64_t>(vectorize);
    checkBitCountsAndDivision<uint64_t>(vectorize);
  }
}

TEMPLATE_TEST_CASE("Fixed-point intrinsics (widening, rounding, saturating, halving) compute exactly on every integer type",
                   "[cpu][language]", int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t) {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const std::vector<FixedPointForm<TestType>> forms = fixed_point_forms_of<TestType>();
  const int n = 517;
  FixedPointInputs<TestType> in(n, seed);
  Var x("x"), form("form");
  for (bool vectorize : {false, true}) {
    INFO((vectorize ? "vectorized" : "scalar"));
    Func f = fixed_point_func(forms, in, x, form);
    if (vectorize)
      f.vectorize(x, 16);
    Buffer<uint64_t> out = Pipeline(f).realize<uint64_t>({n, int(forms.size())});
    check_fixed_point_forms(forms, in, out);
  }
}

TEST_CASE("Fixed-point intrinsics have Halide's result types and refuse what has no wider type", "[cpu][language]") {
  Var x("x");
  const Expr u8v = cast<uint8_t>(x), i8v = cast<int8_t>(x), u32v = cast<uint32_t>(x), i64v = cast<int64_t>(x);
  CHECK(widening_add(u8v, u8v).type() == UInt(16));
  CHECK(widening_sub(u8v, u8v).type() == Int(16));
  CHECK(widening_mul(u8v, i8v).type() == Int(16));
  CHECK(widening_mul(u32v, u32v).type() == UInt(64));
  CHECK(widening_shift_left(i8v, 3).type() == Int(16));
  CHECK(rounding_shift_right(u32v, x).type() == UInt(32));
  CHECK(mul_shift_right(u8v, 200, 7).type() == UInt(8));
  CHECK(saturating_add(i64v, i64v).type() == Int(64));
  CHECK(halving_sub(u8v, 3).type() == UInt(8));
  CHECK_THROWS_WITH(widening_add(i64v, i64v),
                    Catch::Contains("widening_add of int64: no integer type is twice as wide"));
  CHECK_THROWS_WITH(rounding_shift_right(i64v, 2), Catch::Contains("rounding_shift_right of int64"));
  CHECK_THROWS_WITH(saturating_add(Expr(1.5f), Expr(2.5f)), Catch::Contains("saturating_add needs integers, not float32"));
  CHECK_THROWS_WITH(rounding_shift_right(u8v, Expr(1.5f)), Catch::Contains("the shift amount must be an integer"));
  CHECK_THROWS_WITH(halving_add(u8v, 300), Catch::Contains("does not fit in uint8"));
}

TEST_CASE("Bit counts of constants fold as they compute, bound the coordinates they give, and need integers",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  // Folded by the simplifier: these must agree with the computed counts above.
  Var x("x");
  Func folded("folded_counts");
  folded(x) = i32(popcount(Expr(uint8_t(0xB5)))) * 1000000 + i32(count_leading_zeros(Expr(int16_t(1)))) * 10000 +
              i32(count_trailing_zeros(Expr(uint32_t(0)))) * 100 + i32(count_leading_zeros(Expr(int8_t(-1)))) +
              i32(div_round_to_zero(Expr(-7), Expr(2))) * 10 + i32(mod_round_to_zero(Expr(-7), Expr(-2))) + x * 0;
  Buffer<int32_t> constants = Pipeline(folded).realize<int32_t>({1});
  CHECK(constants(0) == 5 * 1000000 + 15 * 10000 + 32 * 100 + 0 + (-3) * 10 + (-1));

  // A table of 33 entries read at the count of an unsigned 32-bit value: bounded without a clamp.
  ImageParam in(UInt(32), 1, "in");
  Buffer<uint32_t> input(97);
  std::mt19937 rng(seed);
  input.for_each_element([&](const std::vector<int> &c) { input.at(c) = rng(); });
  input(0) = 0;
  input(1) = 0xFFFFFFFFu;
  in.set(input);
  Func table("count_table"), lookup("count_lookup");
  table(x) = x * x + 1;
  table.compute_root();
  lookup(x) = table(i32(popcount(in(x)))) + table(i32(count_leading_zeros(in(x))));
  Buffer<int32_t> out = Pipeline(lookup).realize<int32_t>({97});
  check_against(out, [&](const std::vector<int> &c) {
    const int p = std::popcount(input(c[0])), l = std::countl_zero(input(c[0]));
    return p * p + 1 + l * l + 1;
  });
  CHECK_THAT(Pipeline(lookup).lowered_stmt(Target("host")), Catch::Contains("allocate count_table[int32 * 33]"));

  CHECK_THROWS_WITH(popcount(Expr(1.5f)), Catch::Contains("popcount of float32: the argument must be an integer"));
  CHECK_THROWS_WITH(count_leading_zeros(Expr(true)), Catch::Contains("must be an integer"));
  CHECK_THROWS_WITH(div_round_to_zero(Expr(1.5f), Expr(2.0f)), Catch::Contains("the operands must be integers"));
}

TEST_CASE("Bitwise operators with literals, booleans and mixed types", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam a(UInt(8), 1, "a");
  Buffer<uint8_t> as(64);
  fill_random(as, seed, 0, 255);
  a.set(as);
  Var x("x");
  Func f("literals");
  // Literals take the other operand's type; x (int32) and a uint8 meet as int32.
  f(x) = cast<int32_t>((a(x) & 0xF0) | 3) + (x ^ a(x)) + (1 << (x % 9)) + cast<int32_t>(a(x) >> 2) +
         select((x > 3) & (x < 40), 1000, 0);
  Buffer<int32_t> out = Pipeline(f).realize<int32_t>({64});
  check_against(out, [&](const std::vector<int> &c) {
    const int v = c[0];
    return ((as(v) & 0xF0) | 3) + (v ^ as(v)) + (1 << (v % 9)) + (as(v) >> 2) + ((v > 3) && (v < 40) ? 1000 : 0);
  });
  CHECK_THROWS_WITH(Expr(1.5f) & Expr(2), Catch::Contains("operands of & must be integers"));
  CHECK_THROWS_WITH(~Expr(1.5f), Catch::Contains("operand of ~ must be an integer"));
  CHECK_THROWS_WITH(Expr(300) & a(x), Catch::Contains("does not fit in uint8"));
}

TEST_CASE("Masks and shifts bound the coordinates they compute", "[cpu][language]") {
  // x & 15 lies in [0, 15] and x >> 1 in [min >> 1, max >> 1]: bounds inference sizes the
  // producer and checks the input by them.
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 1, "in");
  Buffer<float> input(50);
  fill_random(input, seed);
  in.set(input);
  Var x("x");
  Func table("table"), f("masked");
  table(x) = in(x) * 2.0f;
  table.compute_root();
  f(x) = table(x & 15) + in(x >> 1);
  Buffer<float> out = Pipeline(f).realize<float>({100});
  check_against(out, [&](const std::vector<int> &c) { return input(c[0] & 15) * 2.0f + input(c[0] >> 1); });
  std::string lowered = Pipeline(f).lowered_stmt(Target("host"));
  CHECK_THAT(lowered, Catch::Contains("allocate table[float32 * 16]"));
}

namespace {

template <typename T> void checkMath(bool vectorize) {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed << ", " << sizeof(T) * 8 << "-bit floats" << (vectorize ? ", vectorized" : ""));
  const int n = 131;
  Buffer<T> unit(n), wide(n), above(n);
  fill_random(unit, seed, -0.999, 0.999); // asin acos atanh
  fill_random(wide, seed + 1, -8.0, 8.0);
  fill_random(above, seed + 2, 1.0, 30.0); // acosh, pow's base
  ImageParam u(type_of<T>(), 1, "u"), w(type_of<T>(), 1, "w"), a(type_of<T>(), 1, "a");
  u.set(unit);
  w.set(wide);
  a.set(above);
  Var x("x");
  struct Case {
    const char *name;
    Expr value;
    std::function<double(int)> reference;
  };
  std::vector<Case> cases = {
      {"tan", tan(w(x) * T(0.15)), [&](int i) { return std::tan(double(T(wide(i) * T(0.15)))); }},
      {"asin", asin(u(x)), [&](int i) { return std::asin(double(unit(i))); }},
      {"acos", acos(u(x)), [&](int i) { return std::acos(double(unit(i))); }},
      {"atan", atan(w(x)), [&](int i) { return std::atan(double(wide(i))); }},
      {"atan2", atan2(w(x), u(x)), [&](int i) { return std::atan2(double(wide(i)), double(unit(i))); }},
      {"sinh", sinh(w(x)), [&](int i) { return std::sinh(double(wide(i))); }},
      {"cosh", cosh(w(x)), [&](int i) { return std::cosh(double(wide(i))); }},
      {"asinh", asinh(w(x)), [&](int i) { return std::asinh(double(wide(i))); }},
      {"acosh", acosh(a(x)), [&](int i) { return std::acosh(double(above(i))); }},
      {"atanh", atanh(u(x)), [&](int i) { return std::atanh(double(unit(i))); }},
      {"trunc", trunc(w(x)), [&](int i) { return std::trunc(double(wide(i))); }},
      {"abs", abs(w(x)), [&](int i) { return std::fabs(double(wide(i))); }},
      {"absd", absd(w(x), u(x)), [&](int i) { return std::fabs(double(T(wide(i) - unit(i)))); }},
      {"lerp", lerp(w(x), a(x), (u(x) + 1) / 2),
       [&](int i) {
         const double t = double(T((unit(i) + T(1)) / T(2)));
         return double(wide(i)) * (1 - t) + double(above(i)) * t;
       }},
      {"fast_pow", fast_pow(a(x), u(x)), [&](int i) { return std::pow(double(above(i)), double(unit(i))); }},
      {"fast_exp", fast_exp(w(x)), [&](int i) { return std::exp(double(wide(i))); }},
      {"fast_log", fast_log(a(x)), [&](int i) { return std::log(double(above(i))); }},
      {"fast_sin", fast_sin(w(x)), [&](int i) { return std::sin(double(wide(i))); }},
      {"fast_cos", fast_cos(w(x)), [&](int i) { return std::cos(double(wide(i))); }},
      {"fast_inverse", fast_inverse(a(x)), [&](int i) { return 1.0 / double(above(i)); }},
      {"fast_inverse_sqrt", fast_inverse_sqrt(a(x)), [&](int i) { return 1.0 / std::sqrt(double(above(i))); }},
      {"erf", erf(w(x) * T(0.4)), [&](int i) { return std::erf(double(T(wide(i) * T(0.4)))); }},
      {"hypot", hypot(w(x), u(x)), [&](int i) { return std::hypot(double(wide(i)), double(unit(i))); }},
      {"fract", fract(w(x)), [&](int i) { return double(wide(i)) - std::trunc(double(wide(i))); }},
      {"unsafe_promise_clamped", unsafe_promise_clamped(w(x), T(-8), T(8)), [&](int i) { return double(wide(i)); }},
  };
  for (Case &c : cases) {
    INFO(c.name);
    Func f(std::string("math_") + c.name);
    f(x) = c.value;
    if (vectorize)
      f.vectorize(x, 8);
    Buffer<T> out = Pipeline(f).realize<T>({n});
    check_against(out, [&](const std::vector<int> &i) { return T(c.reference(i[0])); }, sizeof(T) == 4 ? 2e-5 : 1e-12);
  }
}

} // namespace

TEST_CASE("Math functions against the C library", "[cpu][language]") {
  for (bool vectorize : {false, true}) {
    checkMath<float>(vectorize);
    checkMath<double>(vectorize);
  }
}

TEST_CASE("lerp of integers is Halide's: exact, rounded, with weights that are fractions of their range",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  Var x("x");
  // The reference: in `bits`-bit unsigned arithmetic (signed values biased by their minimum),
  // (a * (max - w) + b * w) / max rounded to nearest, halves up.
  auto reference = [](uint64_t a, uint64_t b, uint64_t w, int bits) {
    const unsigned __int128 max = (uint64_t(1) << bits) - 1;
    return uint64_t((a * (max - w) + b * (unsigned __int128)w + max / 2) / max);
  };
  const int n = 257;
  ImageParam ua(UInt(8), 1, "ua"), ub(UInt(8), 1, "ub"), uw(UInt(8), 1, "uw"), sa(Int(16), 1, "sa"),
      sb(Int(16), 1, "sb"), ww(UInt(16), 1, "ww"), ia(Int(32), 1, "ia"), ib(Int(32), 1, "ib"), iw(UInt(32), 1, "iw"),
      fw(Float(32), 1, "fw");
  Buffer<uint8_t> a8(n), b8(n), w8(n);
  Buffer<int16_t> a16(n), b16(n);
  Buffer<uint16_t> w16(n);
  Buffer<int32_t> a32(n), b32(n);
  Buffer<uint32_t> w32(n);
  Buffer<float> wf(n);
  fill_random(a8, rng(), 0, 255);
  fill_random(b8, rng(), 0, 255);
  fill_random(w8, rng(), 0, 255);
  fill_random(a16, rng(), -32768, 32767);
  fill_random(b16, rng(), -32768, 32767);
  fill_random(w16, rng(), 0, 65535);
  fill_random(a32, rng(), INT32_MIN, INT32_MAX);
  fill_random(b32, rng(), INT32_MIN, INT32_MAX);
  fill_random(w32, rng(), 0, UINT32_MAX);
  fill_random(wf, rng(), 0.0, 1.0);
  // The ends of the weight's range give the ends exactly.
  w8(0) = 0, w8(1) = 255, w16(0) = 0, w16(1) = 65535, w32(0) = 0, w32(1) = UINT32_MAX;
  ua.set(a8), ub.set(b8), uw.set(w8), sa.set(a16), sb.set(b16), ww.set(w16), ia.set(a32), ib.set(b32), iw.set(w32);
  fw.set(wf);

  for (bool vectorize : {false, true}) {
    INFO("vectorized: " << vectorize);
    auto realize = [&](const Expr &e, auto sample) {
      Func f;
      f(x) = e;
      if (vectorize)
        f.vectorize(x, 8);
      return Pipeline(f).realize<decltype(sample)>({n});
    };
    check_against(realize(lerp(ua(x), ub(x), uw(x)), uint8_t()), [&](const std::vector<int> &c) {
      return reference(a8(c[0]), b8(c[0]), w8(c[0]), 8);
    });
    // A narrower weight scales up (x 257), a wider one down (/ 257); signed values are biased.
    check_against(realize(lerp(sa(x), sb(x), uw(x)), int16_t()), [&](const std::vector<int> &c) {
      return int16_t(reference(a16(c[0]) + 32768, b16(c[0]) + 32768, w8(c[0]) * 257u, 16) - 32768);
    });
    check_against(realize(lerp(ua(x), ub(x), ww(x)), uint8_t()), [&](const std::vector<int> &c) {
      return reference(a8(c[0]), b8(c[0]), w16(c[0]) / 257u, 8);
    });
    check_against(realize(lerp(ia(x), ib(x), iw(x)), int32_t()), [&](const std::vector<int> &c) {
      return int32_t(uint32_t(reference(uint32_t(a32(c[0])) ^ 0x80000000u, uint32_t(b32(c[0])) ^ 0x80000000u,
                                        w32(c[0]), 32)) ^ 0x80000000u);
    });
    // A float weight is scaled to the range and truncated.
    check_against(realize(lerp(ua(x), ub(x), fw(x)), uint8_t()), [&](const std::vector<int> &c) {
      return reference(a8(c[0]), b8(c[0]), uint64_t(255.0f * wf(c[0])), 8);
    });
    // Float values: an unsigned weight is its fraction of the range.
    check_against(realize(lerp(cast<float>(ua(x)), cast<float>(ub(x)), uw(x)), float()),
                  [&](const std::vector<int> &c) {
                    const float t = w8(c[0]) / 255.0f;
                    return a8(c[0]) * (1.0f - t) + b8(c[0]) * t;
                  });
    // An integer constant takes the other value's type.
    check_against(realize(lerp(0, ub(x), uw(x)), uint8_t()),
                  [&](const std::vector<int> &c) { return reference(0, b8(c[0]), w8(c[0]), 8); });
  }
  CHECK_THROWS_WITH(lerp(ua(x), ub(x), cast<int8_t>(x)),
                    Catch::Contains("a lerp weight must be an unsigned integer (a fraction of its type's range"));
  CHECK_THROWS_WITH(lerp(ua(x), sa(x), uw(x)), Catch::Contains("lerp between uint8 and int16: the values must have one type"));
  CHECK_THROWS_WITH(lerp(cast<int64_t>(x), cast<int64_t>(x), uw(x)),
                    Catch::Contains("integers of more than 32 bits are not supported"));
  CHECK_THROWS_WITH(lerp(ua(x), ub(x), 1.5f), Catch::Contains("outside [0, 1]"));
}

TEST_CASE("Chained selects, selects of Tuples, mux and likely, as Halide writes them", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "in");
  Buffer<float> input(37, 5);
  fill_random(input, seed);
  in.set(input);
  Var x("x"), y("y"), c("c");
  Func red("red"), green("green"), blue("blue");
  red(x, y) = in(x, y) * 2.0f;
  green(x, y) = in(x, y) + 1.0f;
  blue(x, y) = -in(x, y);
  auto reference = [&](const std::vector<int> &p) -> float {
    const float v = input(p[0], p[1]);
    return p[2] == 0 ? v * 2.0f : p[2] == 1 ? v + 1.0f : -v; // an index past the end: the last value
  };
  for (bool vectorize : {false, true}) {
    INFO((vectorize ? "vectorized, unrolled over c" : "scalar"));
    Func chained("chained"), muxed("muxed");
    chained(x, y, c) = select(c == 0, red(x, y), c == 1, green(x, y), blue(x, y));
    muxed(x, y, c) = mux(c, {red(x, y), green(x, y), blue(x, y)});
    if (vectorize)
      for (Func f : {chained, muxed})
        f.bound(c, 0, 4).reorder(c, x, y).unroll(c).vectorize(x, 8);
    check_against(Pipeline(chained).realize<float>({37, 5, 4}), reference);
    check_against(Pipeline(muxed).realize<float>({37, 5, 4}), reference);
  }
  // Values of mixed types meet as select's do; a narrow index reaches every value of a long list,
  // and indices out of range take the last.
  Func mixed("mixed"), wide("wide");
  mixed(x) = select(x < 3, 1, x < 6, 2.5f, cast<double>(x));
  check_against(Pipeline(mixed).realize<double>({9}), [](const std::vector<int> &p) {
    return p[0] < 3 ? 1.0 : p[0] < 6 ? 2.5 : double(p[0]);
  });
  std::vector<Expr> values;
  for (int i = 0; i < 300; ++i)
    values.push_back(Expr(i * 3 + 1));
  wide(x) = mux(cast<uint16_t>(x - 2), values);
  check_against(Pipeline(wide).realize<int>({310}), [](const std::vector<int> &p) {
    const int index = uint16_t(p[0] - 2);
    return index < 300 ? index * 3 + 1 : 299 * 3 + 1;
  });
  // A select of Tuples: the argmin of each row, first index on ties, as an update.
  RDom r(0, 37, "r");
  Func best("best");
  best(y) = Tuple(0, in(0, y));
  best(y) = select(in(r, y) < best(y)[1], Tuple(r.x, in(r, y)), Tuple(best(y)));
  Buffer<int> where(5);
  Buffer<float> least(5);
  Pipeline(best).realize({where, least});
  for (int row = 0; row < 5; ++row) {
    int k = 0;
    for (int i = 1; i < 37; ++i)
      if (input(i, row) < input(k, row))
        k = i;
    CHECK(where(row) == k);
    CHECK(least(row) == input(k, row));
  }
  // likely and likely_if_innermost are hints: their value is their argument.
  Func hinted("hinted");
  hinted(x) = in(clamp(likely(x), 0, 36), 0) + in(clamp(likely_if_innermost(x + 1), 0, 36), 1);
  hinted.vectorize(x, 4);
  check_against(Pipeline(hinted).realize<float>({40}), [&](const std::vector<int> &p) {
    return input(std::min(p[0], 36), 0) + input(std::min(p[0] + 1, 36), 1);
  });
  REQUIRE_THROWS_WITH(select(x > 0, Tuple(x, x), Tuple(x, x, x)), Catch::Contains("2 and 3 values"));
  REQUIRE_THROWS_WITH(mux(Expr(1.5f), {Expr(1), Expr(2)}), Catch::Contains("index must be an integer"));
  REQUIRE_THROWS_WITH(mux(x, {}), Catch::Contains("at least one value"));
}

TEST_CASE("undef() leaves a value as it was: pure definitions that store nothing, Tuple updates of one value",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  Var x("x"), xo("xo"), xi("xi");
  SECTION("Fibonacci without initializing the buffer first") {
    Func fib("fib");
    RDom r(2, 98, "r");
    fib(x) = undef<int>();
    fib(0) = 0;
    fib(1) = 1;
    fib(r) = fib(r - 1) + fib(r - 2);
    Buffer<int> out = Pipeline(fib).realize<int>({100});
    std::vector<int> expected{0, 1};
    for (int i = 2; i < 100; ++i)
      expected.push_back(int(uint32_t(expected[i - 1]) + uint32_t(expected[i - 2])));
    check_against(out, [&](const std::vector<int> &p) { return expected[p[0]]; });
  }
  SECTION("two values updated in turn, each update leaving the other as it was") {
    ImageParam in(Float(32), 1, "in");
    Buffer<float> input(100);
    fill_random(input, seed);
    in.set(input);
    RDom r(0, 100, "r");
    Expr left = max(r - 1, 0), right = min(r + 1, 99);
    for (bool vectorize : {false, true}) {
      INFO((vectorize ? "vectorized, parallel" : "serial"));
      Func pingPong("ping_pong");
      pingPong(x) = Tuple(undef<float>(), in(x));
      for (int i = 0; i < 3; ++i) {
        // Each reads the other value at r's neighbours, written by the previous update: every
        // point depends on no other point of the value it writes, so its loop may be parallel.
        pingPong(r) = Tuple(pingPong(left)[1] + pingPong(r)[1] + pingPong(right)[1], undef<float>());
        pingPong(r) = Tuple(undef<float>(), pingPong(left)[0] * 0.5f + pingPong(right)[0] * 0.25f);
      }
      if (vectorize)
        for (int u = 0; u < 6; ++u)
          pingPong.update(u).split(r, xo, xi, 8).vectorize(xi).parallel(xo);
      Buffer<float> first(100), second(100);
      Pipeline(pingPong).realize({first, second});
      std::vector<float> a(100), b(input.data(), input.data() + 100);
      for (int i = 0; i < 3; ++i) {
        std::vector<float> nextA(100), nextB(100);
        for (int k = 0; k < 100; ++k)
          nextA[k] = b[std::max(k - 1, 0)] + b[k] + b[std::min(k + 1, 99)];
        a = nextA;
        for (int k = 0; k < 100; ++k)
          nextB[k] = a[std::max(k - 1, 0)] * 0.5f + a[std::min(k + 1, 99)] * 0.25f;
        b = nextB;
      }
      check_against(first, [&](const std::vector<int> &p) { return a[p[0]]; });
      check_against(second, [&](const std::vector<int> &p) { return b[p[0]]; });
    }
  }
  SECTION("undef() is a whole value of a definition, and a Func that only undef defines is not read") {
    Func f("f"), g("g"), h("h"), pair("pair"), reader("reader");
    REQUIRE_THROWS_WITH(f(x) = undef<int>() + 1, Catch::Contains("f") && Catch::Contains("whole value"));
    g(x) = x;
    REQUIRE_THROWS_WITH(g(undef<int>()) = 1, Catch::Contains("argument"));
    REQUIRE_THROWS_WITH(g(x) = undef<float>(), Catch::Contains("type int32") && Catch::Contains("float32"));
    h(x) = undef<int>();
    reader(x) = h(x) + 1;
    REQUIRE_THROWS_WITH(Pipeline(reader).compile_jit(Target("host")),
                        Catch::Contains("Func h is read") && Catch::Contains("undef"));
    // The other value of a Tuple is read as usual.
    pair(x) = Tuple(undef<int>(), x * 3);
    Func second("second");
    second(x) = pair(x)[1];
    check_against(Pipeline(second).realize<int>({9}), [](const std::vector<int> &p) { return p[0] * 3; });
  }
}

TEST_CASE("abs and absd of integers are unsigned and never overflow", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam a(Int(8), 1, "a"), b(Int(8), 1, "b"), c(Int(32), 1, "c");
  Buffer<int8_t> as(100), bs(100);
  Buffer<int32_t> cs(100);
  fill_random(as, seed, -128, 127);
  fill_random(bs, seed + 1, -128, 127);
  fill_random(cs, seed + 2, -2147483647.0, 2147483647.0);
  as(0) = -128;
  bs(0) = 127;
  cs(0) = INT32_MIN;
  a.set(as);
  b.set(bs);
  c.set(cs);
  Var x("x");
  CHECK(abs(a(x)).type() == UInt(8));
  CHECK(absd(a(x), b(x)).type() == UInt(8));
  CHECK(abs(c(x)).type() == UInt(32));
  Func f("abs_int8"), g("absd_int8"), h("abs_int32");
  f(x) = abs(a(x));
  g(x) = absd(a(x), b(x));
  h(x) = abs(c(x));
  h.vectorize(x, 4);
  check_against(Pipeline(f).realize<uint8_t>({100}), [&](const std::vector<int> &i) { return std::abs(int(as(i[0]))); });
  check_against(Pipeline(g).realize<uint8_t>({100}),
                [&](const std::vector<int> &i) { return std::abs(int(as(i[0])) - int(bs(i[0]))); });
  check_against(Pipeline(h).realize<uint32_t>({100}),
                [&](const std::vector<int> &i) { return double(std::abs(int64_t(cs(i[0])))); });
}

TEST_CASE("Saturating casts clamp to the target's range; reinterpret keeps the bits", "[cpu][language]") {
  ImageParam fin(Float(32), 1, "fin"), iin(Int(32), 1, "iin"), din(Float(64), 1, "din"), lin(Int(64), 1, "lin");
  Buffer<float> floats(8);
  const float specials[] = {-1e10f, -129.5f, -0.75f, 0.5f, 255.9f, 3e9f, 1e30f, NAN};
  for (int i = 0; i < 8; ++i)
    floats(i) = specials[i];
  Buffer<int32_t> ints(6);
  const int32_t intValues[] = {INT32_MIN, -40000, -129, 100, 70000, INT32_MAX};
  for (int i = 0; i < 6; ++i)
    ints(i) = intValues[i];
  Buffer<double> doubles(4);
  const double doubleValues[] = {-1e300, -3.5, 1e39, 1e300};
  for (int i = 0; i < 4; ++i)
    doubles(i) = doubleValues[i];
  Buffer<int64_t> longs(4);
  const int64_t longValues[] = {INT64_MIN, -5000000000, 7, INT64_MAX};
  for (int i = 0; i < 4; ++i)
    longs(i) = longValues[i];
  fin.set(floats);
  iin.set(ints);
  din.set(doubles);
  lin.set(longs);
  Var x("x");
  auto realize = [&](Expr e, int n) {
    Func f;
    f(x) = e;
    return Pipeline(f);
  };
  auto saturate = [](double v, double lo, double hi) { return std::isnan(v) ? 0.0 : std::clamp(std::trunc(v), lo, hi); };
  check_against(realize(u8_sat(fin(x)), 8).realize<uint8_t>({8}),
                [&](const std::vector<int> &i) { return saturate(floats(i[0]), 0, 255); });
  check_against(realize(i8_sat(fin(x)), 8).realize<int8_t>({8}),
                [&](const std::vector<int> &i) { return saturate(floats(i[0]), -128, 127); });
  check_against(realize(i32_sat(fin(x)), 8).realize<int32_t>({8}),
                [&](const std::vector<int> &i) { return saturate(floats(i[0]), INT32_MIN, 2147483520.0); });
  check_against(realize(u32_sat(fin(x)), 8).realize<uint32_t>({8}),
                [&](const std::vector<int> &i) { return saturate(floats(i[0]), 0, 4294967040.0); });
  check_against(realize(u8_sat(iin(x)), 6).realize<uint8_t>({6}),
                [&](const std::vector<int> &i) { return std::clamp(ints(i[0]), 0, 255); });
  check_against(realize(i16_sat(iin(x)), 6).realize<int16_t>({6}),
                [&](const std::vector<int> &i) { return std::clamp(ints(i[0]), -32768, 32767); });
  check_against(realize(u32_sat(iin(x)), 6).realize<uint32_t>({6}),
                [&](const std::vector<int> &i) { return double(std::max(ints(i[0]), 0)); });
  check_against(realize(i32_sat(u32(iin(x))), 6).realize<int32_t>({6}), [&](const std::vector<int> &i) {
    return double(std::min<uint32_t>(uint32_t(ints(i[0])), uint32_t(INT32_MAX)));
  });
  check_against(realize(i32_sat(lin(x)), 4).realize<int32_t>({4}), [&](const std::vector<int> &i) {
    return double(std::clamp<int64_t>(longs(i[0]), INT32_MIN, INT32_MAX));
  });
  check_against(realize(saturating_cast<float>(din(x)), 4).realize<float>({4}), [&](const std::vector<int> &i) {
    return float(std::clamp(doubles(i[0]), -double(FLT_MAX), double(FLT_MAX)));
  });
  // Bits: float <-> uint32, int16 -> uint16, a double's halves through int64.
  Buffer<uint32_t> bits = realize(reinterpret<uint32_t>(fin(x)), 8).realize<uint32_t>({8});
  for (int i = 0; i < 7; ++i) {
    uint32_t expected;
    std::memcpy(&expected, &floats(i), 4);
    CHECK(bits(i) == expected);
  }
  check_against(realize(reinterpret<float>(reinterpret<uint32_t>(fin(x)) + 1), 8).realize<float>({7}),
                [&](const std::vector<int> &i) { return std::nextafter(floats(i[0]), floats(i[0]) > 0 ? INFINITY : -INFINITY); },
                0.0);
  check_against(realize(reinterpret<uint16_t>(i16(iin(x))), 6).realize<uint16_t>({6}),
                [&](const std::vector<int> &i) { return uint16_t(int16_t(ints(i[0]))); });
  CHECK_THROWS_WITH(reinterpret<uint16_t>(fin(x)), Catch::Contains("same number of bits"));
}

TEST_CASE("is_nan, is_inf and is_finite hold under fast math", "[cpu][language]") {
  ImageParam in(Float(32), 1, "in"), din(Float(64), 1, "din");
  Buffer<float> floats(6);
  const float values[] = {0.0f, -2.5f, NAN, INFINITY, -INFINITY, FLT_MAX};
  Buffer<double> doubles(6);
  for (int i = 0; i < 6; ++i) {
    floats(i) = values[i];
    doubles(i) = values[i];
  }
  in.set(floats);
  din.set(doubles);
  Var x("x");
  Func f("float_tests");
  f(x) = select(is_nan(in(x)), 1, 0) + select(is_inf(in(x)), 10, 0) + select(is_finite(in(x)), 100, 0) +
         select(is_nan(din(x)), 1000, 0) + select(is_inf(din(x)), 10000, 0) + select(is_finite(din(x)), 100000, 0);
  auto expected = [&](const std::vector<int> &i) {
    const float v = values[i[0]];
    return (std::isnan(v) ? 1001 : 0) + (std::isinf(v) ? 10010 : 0) + (std::isfinite(v) ? 100100 : 0);
  };
  check_against(Pipeline(f).realize<int32_t>({6}), expected);
  f.vectorize(x, 4);
  check_against(Pipeline(f).realize<int32_t>({6}), expected);
  CHECK_THROWS_WITH(is_nan(Expr(3)), Catch::Contains("must be a float"));
}

TEST_CASE("Inline reductions: sum, product, minimum and maximum over an RDom", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(UInt(8), 2, "in");
  Buffer<uint8_t> input(40, 30);
  fill_random(input, seed, 0, 255);
  in.set(input);
  Var x("x"), y("y");
  RDom r(-1, 3, -1, 3, "r");
  Func box("box"), spread("spread"), total("total");
  // A 3x3 box sum in a wider type, and the spread of the window.
  box(x, y) = sum(cast<int32_t>(in(x + r.x, y + r.y)));
  spread(x, y) = maximum(in(x + r.x, y + r.y)) - minimum(in(x + r.x, y + r.y));
  // Windows inside the input: outputs from (1, 1).
  Buffer<int32_t> shifted(38, 28);
  shifted.set_min({1, 1});
  Pipeline(box).realize(shifted);
  check_against(shifted, [&](const std::vector<int> &c) {
    int s = 0;
    for (int j = -1; j <= 1; ++j)
      for (int i = -1; i <= 1; ++i)
        s += input(c[0] + i, c[1] + j);
    return s;
  });
  Buffer<uint8_t> spreads(38, 28);
  spreads.set_min({1, 1});
  Pipeline(spread).realize(spreads);
  check_against(spreads, [&](const std::vector<int> &c) {
    int lo = 255, hi = 0;
    for (int j = -1; j <= 1; ++j)
      for (int i = -1; i <= 1; ++i) {
        lo = std::min<int>(lo, input(c[0] + i, c[1] + j));
        hi = std::max<int>(hi, input(c[0] + i, c[1] + j));
      }
    return hi - lo;
  });
  // No free Var: a reduction to one value, used by every point.
  RDom all(0, 40, 0, 30, "all");
  total(x) = x + sum(cast<int32_t>(in(all.x, all.y)), "grand_total");
  int grand = 0;
  for (int j = 0; j < 30; ++j)
    for (int i = 0; i < 40; ++i)
      grand += input(i, j);
  check_against(Pipeline(total).realize<int32_t>({5}), [&](const std::vector<int> &c) { return c[0] + grand; });
  // Products and float extremes.
  ImageParam v(Float(32), 1, "v");
  Buffer<float> values(16);
  fill_random(values, seed + 1, -4.0, 4.0);
  v.set(values);
  RDom k(0, 4, "k");
  Func prod("prod"), lo("lo");
  prod(x) = product(cast<int32_t>(x + k + 1));
  lo(x) = minimum(v(x * 4 + k)) + maximum(v(x * 4 + k));
  check_against(Pipeline(prod).realize<int32_t>({4}),
                [&](const std::vector<int> &c) { return (c[0] + 1) * (c[0] + 2) * (c[0] + 3) * (c[0] + 4); });
  check_against(Pipeline(lo).realize<float>({4}), [&](const std::vector<int> &c) {
    float a = INFINITY, b = -INFINITY;
    for (int i = 0; i < 4; ++i) {
      a = std::min(a, values(c[0] * 4 + i));
      b = std::max(b, values(c[0] * 4 + i));
    }
    return a + b;
  });
  CHECK_THROWS_WITH(sum(x * 2), Catch::Contains("needs exactly one RDom"));
  CHECK_THROWS_WITH(sum(r.x + k), Catch::Contains("needs exactly one RDom"));
}

TEST_CASE("Inline argmin and argmax: the first point of an RDom where a value is extreme, and the value",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(UInt(8), 2, "in");
  Buffer<uint8_t> input(37, 29);
  fill_random(input, seed, 0, 12); // few values: ties, where the first in loop order wins
  in.set(input);
  Var x("x"), y("y");
  RDom window(-2, 5, -1, 3, "window");
  Func low("low"), high("high");
  Tuple least = argmin(in(x + window.x, y + window.y));
  low(x, y) = least[0] * 100 + least[1] * 10 + cast<int32_t>(least[2]) * 1000;
  Tuple most = argmax(cast<float>(in(x + window.x, y + window.y)) * 0.5f, "most");
  high(x, y) = cast<float>(most[0] + 5 * most[1]) + most[2] * 64.0f;
  // The window's coordinates (i, j) of the extreme value, and the value.
  auto extreme = [&](const std::vector<int> &c, bool greatest) {
    std::array<int, 3> found = {0, 0, greatest ? -1 : 256};
    for (int j = -1; j <= 1; ++j)
      for (int i = -2; i <= 2; ++i) {
        int v = input(c[0] + i, c[1] + j);
        if (greatest ? v > found[2] : v < found[2])
          found = {i, j, v};
      }
    return found;
  };
  Buffer<int32_t> lows(33, 27);
  lows.set_min({2, 1});
  Pipeline(low).realize(lows);
  check_against(lows, [&](const std::vector<int> &c) {
    auto [i, j, value] = extreme(c, false);
    return i * 100 + j * 10 + value * 1000;
  });
  Buffer<float> highs(33, 27);
  highs.set_min({2, 1});
  Pipeline(high).realize(highs);
  check_against(highs, [&](const std::vector<int> &c) {
    auto [i, j, value] = extreme(c, true);
    return float(i + 5 * j) + value * 0.5f * 64.0f;
  });
  CHECK(least.size() == 3);
  CHECK_THROWS_WITH(argmin(x * 2), Catch::Contains("argmin((x * 2)) needs exactly one RDom"));
}

TEST_CASE("A Func's definitions read back: value, values, update_args, update_value(s)", "[cpu][language]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  Var x("x"), y("y");
  ImageParam in(Float(32), 2, "in");
  Func f("f"), g("g"), pair("pair"), sums("sums");
  f(x, y) = in(x, y) * 3.0f + cast<float>(x);
  // A definition's value reused in another Func means what it meant in f.
  g(x, y) = f.value() - 1.0f;
  Buffer<float> input(17, 6);
  fill_random(input, seed);
  in.set(input);
  check_against(g.realize<float>({17, 6}, Target("host")),
                [&](const std::vector<int> &p) { return input(p[0], p[1]) * 3.0f + float(p[0]) - 1.0f; });
  CHECK_FALSE(f.has_update_definition());
  CHECK_THROWS_WITH(f.update_args(), Catch::Contains("Func f has 0 update definitions; update 0 does not exist"));

  pair(x) = Tuple(x, x * 2);
  CHECK(pair.values().size() == 2);
  CHECK_THROWS_WITH(pair.value(), Catch::Contains("the definition of Func pair has 2 values (a Tuple)"));
  CHECK_THROWS_WITH(Func("undefined").value(), Catch::Contains("Func undefined has no value: it is not defined"));

  RDom r(0, 6, "r");
  sums(x) = 0.0f;
  sums(x) += in(x, r);
  REQUIRE(sums.has_update_definition());
  CHECK(sums.update_args().size() == 1);
  CHECK(sums.update_values(0).size() == 1);
  CHECK(sums.update_value().type() == Float(32));
  CHECK_THROWS_WITH(sums.update_value(1), Catch::Contains("Func sums has 1 update definitions; update 1 does not exist"));
}

TEST_CASE("Func::realize, and Buffers that wrap the caller's memory", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::vector<float> pixels(24 * 10);
  std::mt19937 rng(seed);
  for (float &p : pixels)
    p = std::uniform_real_distribution<float>(-1, 1)(rng);
  // A view, not a copy: writes through the Buffer land in the vector.
  Buffer<float> wrapped(pixels.data(), {24, 10});
  CHECK(wrapped.data() == pixels.data());
  CHECK(wrapped.stride(1) == 24);
  ImageParam in(Float(32), 2, "in");
  in.set(wrapped);
  Var x("x"), y("y");
  Func f("doubled");
  f(x, y) = in(x, y) * 2.0f;
  Buffer<float> out = f.realize<float>({24, 10});
  check_against(out, [&](const std::vector<int> &c) { return pixels[c[1] * 24 + c[0]] * 2.0f; });
  // Realized into the caller's memory.
  std::vector<float> result(24 * 10, NAN);
  Buffer<float> into(result.data(), {24, 10});
  Pipeline(f).realize(into);
  for (int i = 0; i < 240; ++i)
    CHECK(result[i] == pixels[i] * 2.0f);
  CHECK_THROWS_WITH(Buffer<float>(result.data(), {-1}), Catch::Contains("negative size"));
}

TEST_CASE("Buffers read directly in definitions, and RDoms over a buffer's region", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  Buffer<uint8_t> image(30, 20);
  fill_random(image, seed, 0, 255);
  Var x("x"), y("y");
  Func twice("twice");
  twice(x, y) = cast<int32_t>(image(x, y)) * 2 + image(x + 1, y); // one input, read twice
  Buffer<int32_t> out = twice.realize<int32_t>({29, 20});
  check_against(out, [&](const std::vector<int> &c) { return image(c[0], c[1]) * 2 + image(c[0] + 1, c[1]); });
  // The elements are read at each realize: new data, same definition.
  image.fill(7);
  check_against(twice.realize<int32_t>({29, 20}), [&](const std::vector<int> &c) { return 21; });
  fill_random(image, seed + 1, 0, 255);
  // Bounds are checked as for an ImageParam.
  Func past("past");
  past(x) = image(x + 25, 0);
  CHECK_THROWS_WITH(past.realize<uint8_t>({10}), Catch::Contains("is read at [25, 34] in dimension 0"));
  // A crop is an input of its own.
  Buffer<uint8_t> crop = image.cropped(0, 10, 5);
  Func cropped("from_crop");
  cropped(x) = crop(x + 10, 3) + image(x, 3);
  check_against(cropped.realize<uint8_t>({5}),
                [&](const std::vector<int> &c) { return uint8_t(image(c[0] + 10, 3) + image(c[0], 3)); });
  // A histogram over every pixel of the buffer, and a sum over an ImageParam's region.
  RDom all(image, "all");
  Func hist("hist");
  hist(x) = 0;
  hist(cast<int32_t>(image(all.x, all.y)) / 16) += 1;
  std::vector<int> expected(16, 0);
  image.for_each_element([&](const std::vector<int> &c) { ++expected[image.at(c) / 16]; });
  check_against(hist.realize<int32_t>({16}), [&](const std::vector<int> &c) { return expected[c[0]]; });
  ImageParam in(UInt(8), 2, "in");
  in.set(image);
  RDom region(in, "region");
  Func total("total");
  total(x) = x + sum(cast<int32_t>(in(region.x, region.y)));
  int grand = 0;
  image.for_each_element([&](const std::vector<int> &c) { grand += image.at(c); });
  check_against(total.realize<int32_t>({3}), [&](const std::vector<int> &c) { return c[0] + grand; });
  CHECK_THROWS_WITH(Buffer<float>()(x), Catch::Contains("undefined Buffer"));
}

TEST_CASE("TailStrategy::RoundUp computes whole iterations; PredicateLoads and Stores guard", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 1, "in");
  Buffer<int32_t> input(16);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), xo("xo"), xi("xi");
  Func g("rounded"), f("reader");
  g(x) = in(x) * 3;
  f(x) = g(x) + 1;
  g.compute_root().split(x, xo, xi, 8, TailStrategy::RoundUp).vectorize(xi);
  // The consumer needs 13 points; the producer computes (and stores: AddressSanitizer would see a
  // write past the allocation) 16, in whole vectors with no guard.
  const std::string lowered = Pipeline(f).lowered_stmt(Target("host"));
  CHECK_THAT(lowered, !Catch::Contains("if ((rounded.s0.x") && Catch::Contains("rounded[ramp("));
  check_against(Pipeline(f).realize<int32_t>({13}), [&](const std::vector<int> &c) { return input(c[0]) * 3 + 1; });
  // On the output the extent must be a multiple of the factor.
  Func out("rounded_output");
  out(x) = in(x) - 5;
  out.split(x, xo, xi, 4, TailStrategy::RoundUp);
  check_against(Pipeline(out).realize<int32_t>({16}), [&](const std::vector<int> &c) { return input(c[0]) - 5; });
  CHECK_THROWS_WITH(Pipeline(out).realize<int32_t>({14}),
                    Catch::Contains("extent 14 in x, not a multiple of the factor 4") && Catch::Contains("RoundUp"));
  // Predicated tails compute what GuardWithIf computes.
  Func p("predicated");
  p(x) = in(x) * 2;
  p.split(x, xo, xi, 4, TailStrategy::PredicateLoads);
  check_against(Pipeline(p).realize<int32_t>({14}), [&](const std::vector<int> &c) { return input(c[0]) * 2; });
  // An update's pure Var rounds up too (Halide's default there): its earlier stage computes, and
  // the storage holds, what the rounded loop reads and writes.
  Func u("updated"), reader("updated_reader");
  u(x) = in(x) * 5;
  u(x) += in(x) - x;
  reader(x) = u(x) * 2;
  u.compute_root().vectorize(x, 4, TailStrategy::RoundUp).update().split(x, xo, xi, 8, TailStrategy::RoundUp).vectorize(xi);
  check_against(Pipeline(reader).realize<int32_t>({11}),
                [&](const std::vector<int> &c) { return (input(c[0]) * 6 - c[0]) * 2; });
  RDom r(0, 5, "rounded_r");
  u(r) += 1;
  CHECK_THROWS_WITH(u.update(1).split(r.x, xo, xi, 4, TailStrategy::RoundUp),
                    Catch::Contains("an RVar's loop does not allow"));
}

TEST_CASE("Shifts by the width less one inside bounded loops", "[cpu][language]") {
  // Fuzz seed 237000071: (int8(-10) >> 7) < 0 inside a guarded split loop compared the bounds
  // of the shift, which divided by 2^7, a value int8 does not have: the select took its other
  // side everywhere.
  Var x("x"), xo("xo"), xi("xi");
  Func f("signs");
  Expr narrow = cast<int8_t>(x % 7) - cast<int8_t>(10);
  f(x) = select((narrow >> cast<int8_t>(7)) < cast<int8_t>(0), 1000, 0) +
         select((cast<int16_t>(x % 7) - cast<int16_t>(10)) >> cast<int16_t>(15) == cast<int16_t>(-1), 100, 0) +
         select(((cast<int8_t>(-1) + cast<int8_t>(-9)) >> cast<int8_t>(7)) < cast<int8_t>(x * 0), 10, 0) +
         select((cast<int32_t>(x % 7) - 10) >> 31 < 0, 1, 0);
  f.split(x, xo, xi, 6, TailStrategy::GuardWithIf);
  Buffer<int32_t> out = Pipeline(f).realize<int32_t>({20});
  check_against(out, [](const std::vector<int> &) { return 1111; });
}

TEST_CASE("specialize: schedules chosen at realize by conditions on Params and input sizes", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Param<int> offset("offset");
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func f("specialized");
  f(x, y) = in(x, y) * 2 + offset;
  // Wide inputs: full tiles of 8 with a shifted tail, vectorized; that tail needs a width of at
  // least 8, which only this branch may check. A positive offset runs the rows in parallel.
  f.specialize(in.width() >= 8).split(x, xo, xi, 8, TailStrategy::ShiftInwards).vectorize(xi);
  f.specialize(offset > 0).parallel(y);
  Pipeline p(f);
  for (int width : {13, 8, 5, 1}) {
    for (int value : {3, -4}) {
      INFO("width " << width << ", offset " << value);
      Buffer<int32_t> input(width, 7);
      fill_random(input, seed + width, -1000, 1000);
      in.set(input);
      offset.set(value);
      Buffer<int32_t> out(width, 7);
      p.realize(out);
      check_against(out, [&](const std::vector<int> &c) { return input(c[0], c[1]) * 2 + value; });
    }
  }
  std::string lowered = p.lowered_stmt(Target("host"));
  CHECK_THAT(lowered, Catch::Contains("if ((in.extent.0 >= 8))") && Catch::Contains("parallel"));

  // An update specialized; and specialize_fail where no condition holds.
  Func g("checked");
  RDom r(0, 3);
  g(x) = x;
  g(x) += in(x, r) * offset;
  g.update().specialize(offset == 2).vectorize(x, 4);
  g.update().specialize(offset == 3);
  g.update().specialize_fail("offset must be 2 or 3");
  Buffer<int32_t> input(9, 3);
  fill_random(input, seed, -100, 100);
  in.set(input);
  Pipeline pg(g);
  for (int value : {2, 3}) {
    offset.set(value);
    Buffer<int32_t> out = pg.realize<int32_t>({9});
    check_against(out, [&](const std::vector<int> &c) {
      return c[0] + (input(c[0], 0) + input(c[0], 1) + input(c[0], 2)) * value;
    });
  }
  offset.set(4);
  CHECK_THROWS_WITH(pg.realize<int32_t>({9}), Catch::Contains("offset must be 2 or 3"));

  // A producer computed at a loop of a specialized consumer is computed in each branch.
  Func producer("producer"), consumer("consumer");
  Var yo("yo"), yi("yi");
  producer(x, y) = in(x, y) + 1;
  consumer(x, y) = producer(x, y) * 2 + producer(x, y + 1) + offset;
  consumer.specialize(offset > 2).parallel(y);
  producer.compute_at(consumer, y);
  for (int value : {3, -1}) {
    offset.set(value);
    Buffer<int32_t> out = Pipeline(consumer).realize<int32_t>({9, 2});
    check_against(out, [&](const std::vector<int> &c) {
      return (input(c[0], c[1]) + 1) * 2 + input(c[0], c[1] + 1) + 1 + value;
    });
  }
  // ... which must have that loop.
  Func producer2("producer2"), consumer2("consumer2");
  producer2(x, y) = in(x, y) + 1;
  consumer2(x, y) = producer2(x, y) + offset;
  consumer2.specialize(offset > 2).split(y, yo, yi, 2);
  producer2.compute_at(consumer2, y);
  CHECK_THROWS_WITH(Pipeline(consumer2).realize<int32_t>({9, 2}),
                    Catch::Contains("specialized to has no loop y around the uses"));

  // Conditions must hold or fail for the whole realize.
  Func h("h");
  h(x) = x;
  CHECK_THROWS_WITH(h.specialize(x > 3), Catch::Contains("reads x, which is not a Param or an input's size"));
  CHECK_THROWS_WITH(h.specialize(offset + 1), Catch::Contains("the condition must be a bool"));
  CHECK_THROWS_WITH(h.specialize(in(0, 0) > 3), Catch::Contains("reads a Func or an input's values"));
  CHECK_THROWS_WITH(h.specialize_fail("no"), Catch::Contains("there is no specialization"));
  CHECK_THROWS_WITH(h.specialize(offset > 1).specialize(offset > 2), Catch::Contains("cannot be specialized again"));
}

TEST_CASE("loop_nest, print_loop_nest and compile_to_lowered_stmt show what the schedule made", "[cpu][language]") {
  ImageParam in(Float(32), 2, "in");
  Param<int> mode("mode");
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func producer("producer"), out("out");
  producer(x, y) = in(x, y) * 2.0f;
  out(x, y) = producer(x, y) + producer(x + 1, y);
  producer.compute_at(out, y);
  out.specialize(mode > 0).split(x, xo, xi, 8).vectorize(xi).parallel(y);
  out.specialize_fail("mode must be positive");
  const std::string nest = Pipeline(out).loop_nest();
  INFO(nest);
  CHECK(nest == "produce out:\n"
                "  if (mode > 0):\n"
                "    parallel out.s0.y:\n"
                "      produce producer:\n"
                "        for producer.s0.y:\n"
                "          for producer.s0.x:\n"
                "            producer(producer.s0.x, producer.s0.y) = ...\n"
                "      for out.s0.xo:\n"
                "        vectorized out.s0.xi:\n"
                "          out(out.s0.x, out.s0.y) = ...\n"
                "  else:\n"
                "    error: mode must be positive\n");

  char path[] = "/tmp/ptxjit_lowered_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  out.compile_to_lowered_stmt(path, Target("host"));
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::remove(path);
  CHECK(text == Pipeline(out).lowered_stmt(Target("host")));
  CHECK_THROWS_WITH(out.compile_to_lowered_stmt("/nonexistent/dir/out.stmt", Target("host")),
                    Catch::Contains("cannot write /nonexistent/dir/out.stmt"));
}

TEST_CASE("Var::outermost() computes a producer once per realization of its consumer", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(12, 9);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y");
  Func table("table"), middle("middle"), out("out");
  table(x, y) = in(x, y) * 3;
  middle(x, y) = table(x, y) + table(x + 1, y);
  out(x, y) = middle(x, y) - middle(x, y + 1);
  // middle is computed per row of out; table once for each of those, around all of middle's loops.
  middle.compute_at(out, y);
  table.compute_at(middle, Var::outermost());
  Pipeline p(out);
  const std::string nest = p.loop_nest();
  INFO(nest);
  CHECK(nest.find("produce table:") > nest.find("produce middle:"));
  CHECK(nest.find("produce table:") < nest.find("for middle.s0.y:"));
  Buffer<int32_t> result = p.realize<int32_t>({11, 8});
  check_against(result, [&](const std::vector<int> &c) {
    auto m = [&](int xx, int yy) { return input(xx, yy) * 3 + input(xx + 1, yy) * 3; };
    return m(c[0], c[1]) - m(c[0], c[1] + 1);
  });
}

TEST_CASE("The implicit argument _ fills the dimensions a call or a definition leaves out", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 3, "in");
  Buffer<int32_t> input(5, 4, 3);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), c("c");
  Func doubled("doubled"), shifted("shifted"), total("total"), accumulated("accumulated");
  // As many dimensions as the input: three.
  doubled(_) = in(_) * 2;
  // _ in the middle and on both sides: shifted(x, _0, _1) = doubled(x + 1, _0, _1) + x.
  shifted(x, _) = doubled(x + 1, _) + x;
  // An update over _: total(_0, _1, _2) = doubled + shifted, then += 1.
  total(_) = doubled(_) + shifted(_);
  total(_) += 1;
  // An implicit pure definition from an update, as f(x) += ... makes one.
  accumulated(_) += in(_) * 3;
  CHECK(doubled.dimensions() == 3);
  CHECK(shifted.dimensions() == 3);
  Buffer<int32_t> t = Pipeline(total).realize<int32_t>({4, 4, 3});
  check_against(t, [&](const std::vector<int> &p) {
    return input(p[0], p[1], p[2]) * 2 + input(p[0] + 1, p[1], p[2]) * 2 + p[0] + 1;
  });
  Buffer<int32_t> a = Pipeline(accumulated).realize<int32_t>({5, 4, 3});
  check_against(a, [&](const std::vector<int> &p) { return input(p[0], p[1], p[2]) * 3; });

  Func bad("bad");
  CHECK_THROWS_WITH(bad(x) = in(_, _), Catch::Contains("more than one implicit argument _"));
  CHECK_THROWS_WITH(bad(x) = in(x, x, x, x, _), Catch::Contains("3 dimensions but is called with 4 arguments besides _"));
  CHECK_THROWS_WITH(bad(x) = in(x, x), Catch::Contains("3 dimensions but is called with 2 arguments"));
}

TEST_CASE("RDom::where restricts an update to the points where its predicate holds", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(12, 12);
  fill_random(input, seed, -100, 100);
  in.set(input);
  Var x("x"), y("y");

  SECTION("a triangle of a 2-D domain, written in place") {
    Func f("lower_triangle");
    RDom r(0, 12, 0, 12);
    r.where(r.x <= r.y);
    f(x, y) = 0;
    f(r.x, r.y) = in(r.x, r.y) * 2;
    Buffer<int32_t> out = Pipeline(f).realize<int32_t>({12, 12});
    check_against(out, [&](const std::vector<int> &c) { return c[0] <= c[1] ? input(c[0], c[1]) * 2 : 0; });
  }
  SECTION("a predicate of a pure Var: a prefix sum of each row, under every schedule") {
    for (int schedule = 0; schedule < 3; ++schedule) {
      INFO("schedule " << schedule);
      Func prefix("prefix");
      RDom r(0, 12);
      r.where(r.x <= x);
      prefix(x, y) = 0;
      prefix(x, y) += in(r.x, y);
      if (schedule == 1)
        prefix.update().parallel(y);
      if (schedule == 2)
        prefix.update().vectorize(x, 4).reorder(x, r.x);
      Buffer<int32_t> out = Pipeline(prefix).realize<int32_t>({12, 12});
      check_against(out, [&](const std::vector<int> &c) {
        int sum = 0;
        for (int k = 0; k <= c[0]; ++k)
          sum += input(k, c[1]);
        return sum;
      });
    }
  }
  SECTION("predicates that read the input, combined, in a histogram and an inline reduction") {
    Param<int> threshold("threshold");
    threshold.set(10);
    RVar ro("ro"), ri("ri");
    for (int schedule = 0; schedule < 4; ++schedule) {
      INFO("schedule " << schedule);
      Func hist("hist");
      RDom r(in);
      r.where(in(r.x, r.y) > threshold);
      r.where(r.x % 2 == 0);
      hist(x) = 0;
      hist(clamp(in(r.x, r.y), 0, 99)) += 1;
      if (schedule == 1)
        hist.update().atomic().parallel(r.y);
      if (schedule == 2)
        hist.update().split(r.x, ro, ri, 4).unroll(ri);
      if (schedule == 3)
        hist.update().atomic().vectorize(r.x, 4);
      Buffer<int32_t> h = Pipeline(hist).realize<int32_t>({100});
      check_against(h, [&](const std::vector<int> &c) {
        int count = 0;
        for (int j = 0; j < 12; ++j)
          for (int i = 0; i < 12; i += 2)
            count += input(i, j) > 10 && std::clamp(input(i, j), 0, 99) == c[0];
        return count;
      });
    }
    Func evens("sum_of_positive_evens");
    RDom s(0, 12);
    s.where(in(s, y) > 0);
    evens(y) = sum(in(s, y));
    Buffer<int32_t> e = Pipeline(evens).realize<int32_t>({12});
    check_against(e, [&](const std::vector<int> &c) {
      int total = 0;
      for (int i = 0; i < 12; ++i)
        total += input(i, c[0]) > 0 ? input(i, c[0]) : 0;
      return total;
    });
  }
  SECTION("a predicate narrows what the update reads: no input is needed past it") {
    ImageParam small(Int(32), 1, "small");
    Buffer<int32_t> values(5);
    fill_random(values, seed + 1, -100, 100);
    small.set(values);
    Func g("reads_only_where");
    RDom r(0, 100);
    r.where(r.x < 5);
    g(x) = 0;
    g(x) += small(r.x) * x;
    Buffer<int32_t> out = Pipeline(g).realize<int32_t>({3});
    check_against(out, [&](const std::vector<int> &c) {
      int total = 0;
      for (int i = 0; i < 5; ++i)
        total += values(i) * c[0];
      return total;
    });
  }
  SECTION("a predicate on an expression of RVars bounds the reads at that expression") {
    // Anti-diagonals of a triangle: small(r.x + r.y) reads only [0, 5), and the condition on it
    // guards the read of the input in the next condition.
    ImageParam small(Int(32), 1, "small");
    Buffer<int32_t> values(5);
    fill_random(values, seed + 2, -100, 100);
    small.set(values);
    Func diagonals("diagonals");
    RDom r(0, 9, 0, 9);
    r.where(r.x + r.y < 5 && small(r.x + r.y) > -50);
    diagonals(x) = 0;
    diagonals(x) += small(r.x + r.y) * (x + r.x);
    Buffer<int32_t> out = Pipeline(diagonals).realize<int32_t>({4});
    check_against(out, [&](const std::vector<int> &c) {
      int total = 0;
      for (int j = 0; j < 9; ++j)
        for (int i = 0; i + j < 5; ++i)
          total += values(i + j) > -50 ? values(i + j) * (c[0] + i) : 0;
      return total;
    });
  }
  SECTION("errors") {
    RDom r(0, 4);
    CHECK_THROWS_WITH(r.where(r.x + 1), Catch::Contains("where() needs a boolean condition"));
    Func f("f");
    f(x) = 0;
    f(r) += 1;
    CHECK_THROWS_WITH(r.where(r.x > 1), Catch::Contains("after an update used the RDom"));
    RDom q(0, 4);
    q.where(q.x < y);
    Func g("g");
    g(x) = 0;
    CHECK_THROWS_WITH(g(q) += 1, Catch::Contains("uses Var y"));
  }
}

TEST_CASE("lambda makes an anonymous Func of its Vars or of the implicit ones", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(9, 7);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y");
  Func scaled = lambda(x, y, in(x, y) * 3 + x - y);
  Buffer<int32_t> a = scaled.realize<int32_t>({9, 7});
  check_against(a, [&](const std::vector<int> &c) { return input(c[0], c[1]) * 3 + c[0] - c[1]; });
  // Of the implicit Vars: a Func of as many dimensions as the input.
  Func doubled = lambda(in(_) * 2);
  Func shifted = lambda(x, doubled(x, 2) + 1);
  Buffer<int32_t> b = shifted.realize<int32_t>({9});
  check_against(b, [&](const std::vector<int> &c) { return input(c[0], 2) * 2 + 1; });
  CHECK(scaled.name() != doubled.name());
}

TEST_CASE("reorder_storage lays a Func out in another order: calls, loops and values are unchanged", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 3, "in");
  Buffer<float> input(42, 31, 3);
  fill_random(input, seed);
  in.set(input);
  Var x("x"), y("y"), c("c"), xi("xi"), yi("yi");

  SECTION("column-major and channel-innermost intermediates, root and inside tiles, vectorized") {
    for (int schedule = 0; schedule < 4; ++schedule) {
      INFO("schedule " << schedule);
      Func columns("columns"), interleaved("interleaved"), out("reordered_out");
      columns(x, y, c) = in(x, y, c) * 2.0f + f32(y);
      interleaved(x, y, c) = columns(x, y, c) - columns(x + 1, y, c) * f32(c + 1);
      out(x, y, c) = interleaved(x, y, c) + interleaved(x, y + 1, 2 - c) + columns(x + 1, y + 1, c);
      columns.reorder_storage(y, x);            // (y, x, c)
      interleaved.reorder_storage(c, x);        // (c, y, x): the named ones trade places
      switch (schedule) {
      case 0:
        columns.compute_root();
        interleaved.compute_root();
        break;
      case 1:
        out.tile(x, y, xi, yi, 8, 4);
        columns.compute_at(out, x).vectorize(x, 4);
        interleaved.compute_at(out, x).vectorize(x, 4);
        break;
      case 2:
        // Stored once, computed a row at a time: the window slides over y.
        columns.store_root().compute_at(out, y);
        interleaved.compute_at(out, y).vectorize(x, 8);
        out.vectorize(x, 8);
        break;
      default:
        columns.compute_root().parallel(y).vectorize(x, 8);
        interleaved.compute_at(out, c).reorder(c, x, y);
        out.reorder(x, y, c).parallel(c);
        break;
      }
      Buffer<float> result = Pipeline(out).realize<float>({40, 29, 3});
      auto col = [&](int i, int j, int k) { return input(i, j, k) * 2.0f + float(j); };
      auto inter = [&](int i, int j, int k) { return col(i, j, k) - col(i + 1, j, k) * float(k + 1); };
      check_against(result, [&](const std::vector<int> &p) {
        return inter(p[0], p[1], p[2]) + inter(p[0], p[1] + 1, 2 - p[2]) + col(p[0] + 1, p[1] + 1, p[2]);
      });
    }
  }

  SECTION("the allocation lists the dimensions in storage order") {
    Func table("stored_by_columns"), read("read_columns");
    table(x, y) = x * 100 + y;
    read(x, y) = table(y, x);
    table.compute_root().bound(x, 0, 7).bound(y, 0, 5).reorder_storage(y, x);
    read.bound(x, 0, 5).bound(y, 0, 7);
    CHECK_THAT(Pipeline(read).lowered_stmt(Target("host")), Catch::Contains("allocate stored_by_columns[int32 * 5 * 7]"));
    Buffer<int32_t> transposed = Pipeline(read).realize<int32_t>({5, 7});
    check_against(transposed, [&](const std::vector<int> &p) { return p[1] * 100 + p[0]; });
  }

  SECTION("a Tuple with updates, and an output, keep their values") {
    RDom r(0, 3, "r");
    Func pair("reordered_pair"), out("pair_out");
    pair(x, y) = Tuple(in(x, y, 0), 0.0f);
    pair(x, y) = Tuple(pair(x, y)[0] + in(x, y, r) * 0.5f, pair(x, y)[1] + in(x + 1, y, r % 3));
    out(x, y) = pair(x, y)[0] * pair(x, y)[1];
    pair.compute_root().reorder_storage(y, x);
    pair.update().reorder(x, r);
    out.reorder_storage(y, x);
    Buffer<float> result = Pipeline(out).realize<float>({40, 30});
    check_against(result, [&](const std::vector<int> &p) {
      float first = input(p[0], p[1], 0), second = 0.0f;
      for (int k = 0; k < 3; ++k) {
        first += input(p[0], p[1], k) * 0.5f;
        second += input(p[0] + 1, p[1], k);
      }
      return first * second;
    }, 1e-4);
  }

  Func f("unscheduled"), g("storage_errors");
  CHECK_THROWS_WITH(f.reorder_storage(x), Catch::Contains("define the Func before scheduling it"));
  g(x, y) = in(x, y, 0);
  CHECK_THROWS_WITH(g.reorder_storage(y, c), Catch::Contains("reorder_storage of Func storage_errors: c is not one of its dimensions"));
  CHECK_THROWS_WITH(g.reorder_storage(y, y), Catch::Contains("y is named twice"));
}

TEST_CASE("LoopLevel: handles to a level that set() changes for every copy, read when the pipeline compiles",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(31, 20);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func producer("level_producer"), out("level_out");
  producer(x, y) = in(x, y) * 5 - in(x + 1, y);
  out(x, y) = producer(x, y) + producer(x, y + 1);
  out.split(x, xo, xi, 8, TailStrategy::GuardWithIf);
  auto reference = [&](const std::vector<int> &p) {
    auto prod = [&](int i, int j) { return input(i, j) * 5 - input(i + 1, j); };
    return prod(p[0], p[1]) + prod(p[0], p[1] + 1);
  };

  // Named before it is known, as a generator's LoopLevel parameter is.
  LoopLevel level;
  CHECK_FALSE(level.defined());
  CHECK(level.to_string() == "undefined");
  producer.compute_at(level);
  CHECK_THROWS_WITH(Pipeline(out).realize<int32_t>({30, 19}),
                    Catch::Contains("Func level_producer is computed at a LoopLevel that is undefined"));
  LoopLevel copy = level;
  copy.set(LoopLevel(out, xo)); // every copy changes
  CHECK(level.to_string() == "level_out.xo");
  CHECK(level.func() == "level_out");
  CHECK(level.var() == "xo");
  // Whether `inner` comes after `outer` in the loop nest (inside it, where `outer` is a loop).
  auto after = [&](const std::string &outer, const std::string &inner) {
    const std::string nest = Pipeline(out).loop_nest();
    INFO(nest);
    return nest.find(outer) != std::string::npos && nest.find(inner) != std::string::npos &&
           nest.find(outer) < nest.find(inner);
  };
  CHECK(after("for level_out.s0.xo:", "produce level_producer:"));
  check_against(Pipeline(out).realize<int32_t>({30, 19}), reference);

  // A later set() is a new program: compiled again, at root.
  level.set(LoopLevel::root());
  CHECK(level.is_root());
  CHECK(after("produce level_producer:", "produce level_out:"));
  check_against(Pipeline(out).realize<int32_t>({30, 19}), reference);
  // compute_root() gives the Func a level of its own; the handle it had is left as it was.
  producer.compute_at(level).compute_inline();
  CHECK(level.is_root());
  CHECK(Pipeline(out).loop_nest().find("produce level_producer") == std::string::npos);

  // Stored at one level, computed at another: a window sliding over rows.
  LoopLevel rows(out, y), outside = LoopLevel::root();
  producer.compute_at(rows).store_at(outside);
  check_against(Pipeline(out).realize<int32_t>({30, 19}), reference);
  CHECK(LoopLevel::inlined().is_inlined());
  CHECK(LoopLevel(out, y) == rows);
  CHECK_FALSE(rows == outside);

  producer.compute_at(LoopLevel(producer, x));
  CHECK_THROWS_WITH(Pipeline(out).realize<int32_t>({30, 19}),
                    Catch::Contains("Func level_producer is computed at level_producer.x, a loop of its own"));
}

TEST_CASE("align_storage pads a stored extent to a multiple: strides align, values are unchanged", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(45, 23);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y"), xi("xi"), yi("yi");
  auto reference = [&](const std::vector<int> &p) {
    auto prod = [&](int i, int j) { return input(i, j) * 3 + input(i + 1, j); };
    return prod(p[0], p[1]) + prod(p[0] + 1, p[1] + 1);
  };
  for (int schedule = 0; schedule < 4; ++schedule) {
    INFO("schedule " << schedule);
    Func producer("aligned_producer"), out("aligned_out");
    producer(x, y) = in(x, y) * 3 + in(x + 1, y);
    out(x, y) = producer(x, y) + producer(x + 1, y + 1);
    switch (schedule) {
    case 0: // at root: 44 columns stored as 48
      producer.compute_root().align_storage(x, 16);
      break;
    case 1: // inside 13 x 5 tiles: 14 x 6 stored as 16 x 6, vectorized
      out.tile(x, y, xi, yi, 13, 5, TailStrategy::GuardWithIf);
      producer.compute_at(out, x).align_storage(x, 8).vectorize(x, 4);
      break;
    case 2: // both dimensions, in column-major storage
      producer.compute_root().reorder_storage(y, x).align_storage(y, 4).align_storage(x, 3);
      break;
    default: // a sliding window over rows
      producer.store_root().compute_at(out, y).align_storage(x, 32);
      break;
    }
    check_against(Pipeline(out).realize<int32_t>({43, 21}), reference);
    const std::string stmt = Pipeline(out).lowered_stmt(Target("host"));
    if (schedule == 1)
      CHECK_THAT(stmt, Catch::Contains("allocate aligned_producer[int32 * 16 * 6]"));
  }
  // A constant extent shows the padding; an alignment of 1 changes nothing.
  Func table("aligned_table"), read("aligned_read");
  table(x, y) = x + y * 100;
  read(x, y) = table(x, y);
  table.compute_root().align_storage(x, 8).align_storage(y, 1);
  read.bound(x, 0, 5).bound(y, 0, 3);
  CHECK_THAT(Pipeline(read).lowered_stmt(Target("host")), Catch::Contains("allocate aligned_table[int32 * 8 * 3]"));
  check_against(Pipeline(read).realize<int32_t>({5, 3}), [](const std::vector<int> &p) { return p[0] + p[1] * 100; });

  Param<int> n("n", 4);
  CHECK_THROWS_WITH(table.align_storage(x, 0), Catch::Contains("align_storage of Func aligned_table.x") &&
                                                   Catch::Contains("positive constant, not 0"));
  CHECK_THROWS_WITH(table.align_storage(x, n), Catch::Contains("positive constant, not n"));
  CHECK_THROWS_WITH(table.align_storage(Var("z"), 4), Catch::Contains("z is not one of its arguments"));
}

TEST_CASE("bound_extent and align_bounds fix or widen the region a Func computes", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 1, "in");
  Buffer<int32_t> input(64);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x");

  SECTION("an intermediate widened by align_bounds reads the aligned region") {
    Func f("aligned"), out("out");
    f(x) = in(x) * 3;
    out(x) = f(x - 1) + f(x + 1);
    f.compute_root().align_bounds(x, 8);
    Buffer<int32_t> result(17);
    result.set_min({4}); // f needs [3, 21]: aligned, [0, 23]
    Pipeline(out).realize(result);
    check_against(result, [&](const std::vector<int> &c) { return input(c[0] - 1) * 3 + input(c[0] + 1) * 3; });
    Buffer<int32_t> narrow(19);
    narrow.set_min({3});
    in.set(narrow);
    CHECK_THROWS_WITH(Pipeline(out).realize(result), Catch::Contains("input buffer in is read at [0, 23]"));
    in.set(input);
    Func g("aligned_by_remainder"), out2("out2");
    g(x) = in(x) + 1;
    out2(x) = g(x);
    g.compute_root().align_bounds(x, 4, 1);
    narrow = Buffer<int32_t>(8);
    narrow.set_min({5}); // out2 needs [6, 11]: aligned to 4k + 1, [5, 12]
    fill_random(narrow, seed + 1, -1000, 1000);
    in.set(narrow);
    Buffer<int32_t> r2(6);
    r2.set_min({6});
    Pipeline(out2).realize(r2);
    check_against(r2, [&](const std::vector<int> &c) { return narrow(c[0]) + 1; });
  }
  SECTION("an aligned Func with a scan covers what the scan reads and writes") {
    Func f("aligned_scan"), out("out");
    RDom r(0, 5);
    f(x) = in(x);
    f(r) = f(r) + f(r - 1);
    out(x) = f(x) * 2;
    f.compute_root().align_bounds(x, 8);
    Buffer<int32_t> window(24); // the scan reads f(-1) and out needs [0, 9]: aligned, [-8, 15]
    window.set_min({-8});
    fill_random(window, seed + 3, -1000, 1000);
    in.set(window);
    Buffer<int32_t> result = Pipeline(out).realize<int32_t>({10});
    check_against(result, [&](const std::vector<int> &c) {
      int value = window(c[0]);
      if (c[0] <= 4)
        for (int k = -1; k < c[0]; ++k)
          value += window(k);
      return value * 2;
    });
    in.set(input);
  }
  SECTION("an intermediate with bound_extent computes that many points, and no fewer are needed") {
    Func f("fixed_extent"), out("out");
    f(x) = in(x) - 7;
    out(x) = f(x) + f(x + 2);
    f.compute_root().bound_extent(x, 16).vectorize(x, 16);
    Buffer<int32_t> result(10);
    Pipeline p(out);
    p.realize(result); // f needs [0, 11], computes [0, 15]
    check_against(result, [&](const std::vector<int> &c) { return input(c[0]) - 7 + input(c[0] + 2) - 7; });
    Buffer<int32_t> wide(20);
    CHECK_THROWS_WITH(p.realize(wide), Catch::Contains("Func fixed_extent has bound_extent 16 in x but its consumers need [0, 21]"));
  }
  SECTION("computed per tile: each tile's region aligned, and no more input read than that") {
    ImageParam in2(Int(32), 2, "in2");
    Buffer<int32_t> input2(25, 16); // exactly what the aligned tiles read: x in [-3, 21], y in [0, 15]
    input2.set_min({-3, 0});
    fill_random(input2, seed + 2, -1000, 1000);
    in2.set(input2);
    Var y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    Func f("aligned_per_tile"), g("tiled");
    f(x, y) = in2(x, y) * 2 + 1;
    f(x, y) += in2(x + 1, y);
    g(x, y) = f(x - 1, y) + f(x + 1, y + 1);
    g.tile(x, y, xo, yo, xi, yi, 5, 3);
    // Tile xo needs f at [5 xo - 1, 5 xo + 5]: from 4k + 1 to the point before the next 4k + 1.
    f.compute_at(g, xo).align_bounds(x, 4, 1).bound_extent(y, 4);
    Buffer<int32_t> result(17, 13);
    Pipeline(g).realize(result);
    auto fRef = [&](int a, int b) { return input2(a, b) * 2 + 1 + input2(a + 1, b); };
    check_against(result, [&](const std::vector<int> &c) { return fRef(c[0] - 1, c[1]) + fRef(c[0] + 1, c[1] + 1); });
  }
  SECTION("the output: bound_extent fixes the buffer's extent, align_bounds its alignment") {
    Func out("out");
    out(x) = in(x) * 2;
    out.bound_extent(x, 16).vectorize(x, 8);
    Buffer<int32_t> result(16);
    result.set_min({5});
    Pipeline p(out);
    p.realize(result);
    check_against(result, [&](const std::vector<int> &c) { return input(c[0]) * 2; });
    Buffer<int32_t> other(12);
    CHECK_THROWS_WITH(p.realize(other), Catch::Contains("output buffer out has extent 12 in dimension 0 but out has bound_extent 16"));
    Func aligned("aligned_out");
    aligned(x) = in(x) + 1;
    aligned.align_bounds(x, 4);
    Buffer<int32_t> good(8);
    good.set_min({4});
    Pipeline(aligned).realize(good);
    check_against(good, [&](const std::vector<int> &c) { return input(c[0]) + 1; });
    Buffer<int32_t> bad(8);
    bad.set_min({3});
    CHECK_THROWS_WITH(Pipeline(aligned).realize(bad), Catch::Contains("is aligned to 4"));
  }
  SECTION("errors") {
    Func f("f");
    f(x) = x;
    CHECK_THROWS_WITH(f.align_bounds(x, 0), Catch::Contains("the modulus must be a positive constant, not 0"));
    Param<int> modulus("modulus");
    CHECK_THROWS_WITH(f.align_bounds(x, modulus), Catch::Contains("the modulus must be a positive constant, not modulus"));
    Var y("y");
    CHECK_THROWS_WITH(f.bound_extent(y, 4), Catch::Contains("y is not one of its arguments"));
  }
}

TEST_CASE("Tuples: Funcs of several values, read by index, updated together, realized into several buffers",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "in");
  Buffer<float> input(23, 9);
  fill_random(input, seed, -4, 4);
  in.set(input);
  Var x("x"), y("y"), xo("xo"), xi("xi");

  SECTION("an intermediate Tuple, inline, at root and at a tile, read at different points by value") {
    for (int schedule = 0; schedule < 3; ++schedule) {
      Func pair("pair"), out("out");
      pair(x, y) = Tuple(x + 2 * y, in(x, y) * 0.5f);
      out(x, y) = cast<float>(pair(x - 1, y)[0]) + pair(x + 1, y)[1] - pair(x, y)[1];
      if (schedule == 1)
        pair.compute_root();
      if (schedule == 2) {
        out.split(x, xo, xi, 8).vectorize(xi).parallel(y);
        pair.compute_at(out, xo).vectorize(x, 4);
      }
      Buffer<float> result(21, 9);
      result.set_min({1, 0});
      Pipeline(out).realize(result);
      check_against(result, [&](const std::vector<int> &c) {
        const int px = c[0], py = c[1];
        return float((px - 1) + 2 * py) + input(px + 1, py) * 0.5f - input(px, py) * 0.5f;
      });
    }
  }

  SECTION("a Func read only by a value of an inlined Tuple that nothing reads is not computed") {
    Func unread("unread"), pair("pair"), out("out");
    unread(x, y) = in(x + 100, y); // past the input: computing it would fail the input's check
    pair(x, y) = Tuple(in(x, y) * 2.0f, unread(x, y));
    out(x, y) = pair(x, y)[0];
    unread.compute_root();
    Buffer<float> result = Pipeline(out).realize<float>({23, 9});
    check_against(result, [&](const std::vector<int> &c) { return input(c[0], c[1]) * 2.0f; });
  }

  SECTION("an output Tuple of two types goes to two buffers") {
    Func f("f");
    f(x, y) = Tuple(cast<int16_t>(x - y), in(x, y) + 1.0f);
    f.split(x, xo, xi, 4).vectorize(xi).parallel(y);
    Buffer<int16_t> first(23, 9);
    Buffer<float> second(23, 9);
    Pipeline(f).realize({first, second});
    check_against(first, [&](const std::vector<int> &c) { return c[0] - c[1]; });
    check_against(second, [&](const std::vector<int> &c) { return input(c[0], c[1]) + 1.0f; });
    CHECK(f.outputs() == 2);
    CHECK(f.types() == std::vector<Type>{Int(16), Float(32)});
  }

  SECTION("an update computes every value before it stores any: a swap") {
    Func f("swapped");
    f(x) = Tuple(x, x * 10);
    f(x) = Tuple(f(x)[1], f(x)[0]);
    Buffer<int32_t> a(6), b(6);
    Pipeline(f).realize({a, b});
    check_against(a, [](const std::vector<int> &c) { return c[0] * 10; });
    check_against(b, [](const std::vector<int> &c) { return c[0]; });
  }

  SECTION("argmin of each row, and elementwise += of a Tuple") {
    Func best("best"), stats("stats"), out("out");
    RDom r(0, 23);
    best(y) = Tuple(-1, std::numeric_limits<float>::infinity());
    best(y) = Tuple(select(in(r, y) < best(y)[1], r, best(y)[0]), min(in(r, y), best(y)[1]));
    stats(y) = Tuple(0, 0.0f);
    stats(y) += Tuple(1, in(r, y) * in(r, y));
    best.compute_root();
    stats.compute_root().update().parallel(y);
    out(y) = cast<float>(best(y)[0]) + best(y)[1] * 100.0f + stats(y)[1] + cast<float>(stats(y)[0]) * 1000.0f;
    Buffer<float> result = Pipeline(out).realize<float>({9});
    check_against(result, [&](const std::vector<int> &c) {
      int index = -1;
      float lowest = std::numeric_limits<float>::infinity(), squares = 0;
      for (int k = 0; k < 23; ++k) {
        float v = input(k, c[0]);
        if (v < lowest) {
          index = k;
          lowest = v;
        }
        squares += v * v;
      }
      return float(index) + lowest * 100.0f + squares + 23 * 1000.0f;
    }, 1e-5);
  }

  SECTION("mistakes are named") {
    Func f("f"), g("g");
    f(x) = Tuple(x, x + 1);
    CHECK_THROWS_WITH(g(x) = f(x) + 1, Catch::Contains("Func f has 2 values (a Tuple): call one of them, f(...)[i]"));
    CHECK_THROWS_WITH(f(x) = x * 2, Catch::Contains("Func f has 2 values but update f.s1 gives 1"));
    CHECK_THROWS_WITH(f(x) = Tuple(x, cast<float>(x)), Catch::Contains("Func f value 1 has type int32 but update f.s1 value 1 "
                                                             "has type float32"));
    CHECK_THROWS_WITH(f(x)[2], Catch::Contains("Func f has 2 values, not a value 2"));
    CHECK_THROWS_WITH(f.type(), Catch::Contains("Func f has 2 values (a Tuple): ask for its types()"));
    Func h("h");
    RDom r(0, 4);
    h(x) = Tuple(0, 0);
    h(r) += Tuple(1, 2);
    CHECK_THROWS_WITH(h.update().atomic(), Catch::Contains("atomic updates of Funcs of several values"));
    Buffer<int32_t> one(4), other(5);
    CHECK_THROWS_WITH(Pipeline(f).realize(one), Catch::Contains("Func f has 2 values but is realized into 1 buffer"));
    CHECK_THROWS_WITH(Pipeline(f).realize({one, other}),
                      Catch::Contains("output buffer f.1 covers [0, 4] in dimension 0 but output buffer f.0 covers "
                                      "[0, 3]"));
    Buffer<float> wrongType(4);
    CHECK_THROWS_WITH(Pipeline(f).realize({one, wrongType}),
                      Catch::Contains("output buffer 1 of Func f has type float32, but f value 1 has type int32"));
  }
}

TEST_CASE("Pipelines of several outputs compute each over its own buffers in one realize", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(30, 12);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y"), xo("xo"), xi("xi");

  SECTION("independent outputs of different types and dimensions sharing a producer") {
    Func shared("shared"), image("image"), histogram("histogram");
    shared(x, y) = in(x, y) * 3;
    image(x, y) = cast<float>(shared(x, y) + shared(x + 1, y)) * 0.5f;
    RDom r(0, 28, 0, 12);
    histogram(x) = 0;
    histogram(clamp(shared(r.x, r.y) / 300 + 10, 0, 19)) += 1;
    shared.compute_root();
    image.split(x, xo, xi, 8).vectorize(xi).parallel(y);
    Buffer<float> imageOut(29, 12);
    Buffer<int32_t> histogramOut(20);
    Pipeline({image, histogram}).realize({imageOut, histogramOut});
    check_against(imageOut, [&](const std::vector<int> &c) {
      return float(input(c[0], c[1]) * 3 + input(c[0] + 1, c[1]) * 3) * 0.5f;
    });
    std::vector<int> bins(20, 0);
    for (int j = 0; j < 12; ++j)
      for (int i = 0; i < 28; ++i) {
        int v = input(i, j) * 3, q = v / 300 - (v % 300 < 0 ? 1 : 0);
        ++bins[std::clamp(q + 10, 0, 19)];
      }
    check_against(histogramOut, [&](const std::vector<int> &c) { return bins[c[0]]; });
  }

  SECTION("an output read by another is computed first over its buffer, which must cover the reads") {
    Func first("first"), second("second");
    first(x, y) = in(x, y) + 1;
    second(x, y) = Tuple(first(x, y) * 2, first(x + 1, y) - first(x, y));
    Buffer<int32_t> firstOut(30, 12), doubled(29, 12), difference(29, 12);
    // The buffers in the order of the outputs given, each output's values in order.
    Pipeline({second, first}).realize({doubled, difference, firstOut});
    check_against(firstOut, [&](const std::vector<int> &c) { return input(c[0], c[1]) + 1; });
    check_against(doubled, [&](const std::vector<int> &c) { return (input(c[0], c[1]) + 1) * 2; });
    check_against(difference, [&](const std::vector<int> &c) { return input(c[0] + 1, c[1]) - input(c[0], c[1]); });
    Buffer<int32_t> narrow(29, 12);
    CHECK_THROWS_WITH(Pipeline({second, first}).realize({doubled, difference, narrow}),
                      Catch::Contains("output first is computed over [0, 28] in dimension 0 (its buffer), but the "
                                      "pipeline's other outputs read it at [0, 29]"));
    CHECK_THROWS_WITH(Pipeline({second, first}).realize({doubled, difference}),
                      Catch::Contains("pipeline second, first has 3 output buffers (one for each value of each "
                                      "output) but is realized into 2 buffers"));
    Buffer<float> wrong(30, 12);
    CHECK_THROWS_WITH(Pipeline({second, first}).realize({doubled, difference, wrong}),
                      Catch::Contains("output buffer 2 (Func first) has type float32, but first has type int32"));
    CHECK_THROWS_WITH(Pipeline({first, first}), Catch::Contains("Func first is given twice as an output"));
    first.compute_at(second, y);
    CHECK_THROWS_WITH(Pipeline({second, first}).realize({doubled, difference, firstOut}),
                      Catch::Contains("Func first is an output of the pipeline and cannot be computed or stored at "
                                      "another Func's loop"));
  }
}

TEST_CASE("Func::in and ImageParam::in: wrappers that chosen consumers read, scheduled on their own",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int32_t> input(40, 20);
  fill_random(input, seed, -1000, 1000);
  in.set(input);
  Var x("x"), y("y"), xo("xo"), xi("xi");
  auto expected = [&](const std::vector<int> &c) {
    auto f = [&](int i, int j) { return input(i, j) * 2 + 1; };
    return f(c[0], c[1]) + f(c[0] + 1, c[1]) + f(c[0], c[1]) * 3;
  };

  SECTION("f.in(g): only g reads the wrapper, computed at g's tile; h reads f") {
    Func f("f"), g("g"), h("h");
    f(x, y) = in(x, y) * 2 + 1;
    g(x, y) = f(x, y) + f(x + 1, y);
    h(x, y) = g(x, y) + f(x, y) * 3;
    f.compute_root();
    g.compute_root().split(x, xo, xi, 8);
    Func wrapper = f.in(g);
    CHECK(wrapper.name() == "f_in_g");
    CHECK(f.in(g).name() == "f_in_g"); // the same wrapper again
    wrapper.compute_at(g, xo).vectorize(x, 4);
    Pipeline p(h);
    const std::string nest = p.loop_nest();
    INFO(nest);
    CHECK(nest.find("produce f_in_g") != std::string::npos);
    CHECK(nest.find("produce f_in_g") > nest.find("produce g"));
    Buffer<int32_t> result(38, 20);
    p.realize(result);
    check_against(result, expected);
  }

  SECTION("f.in({g, h}) and in.in({g, h}): one wrapper that both consumers read") {
    Func f("f"), g("g"), h("h");
    f(x, y) = in(x, y) * 2 + 1;
    g(x, y) = f(x, y) + f(x + 1, y);
    h(x, y) = g(x, y) + f(x, y) * 3;
    g.compute_root();
    Func shared = f.in({g, h});
    CHECK(shared.name() == "f_in_g_h");
    CHECK(f.in(g).name() == "f_in_g_h"); // each consumer's wrapper is the shared one
    CHECK(f.in({h, g}).name() == "f_in_g_h");
    shared.compute_root().vectorize(x, 4);
    Pipeline p(h);
    const std::string nest = p.loop_nest();
    INFO(nest);
    CHECK(nest.find("produce f_in_g_h") != std::string::npos);
    CHECK(nest.find("produce f:") == std::string::npos); // f is read through the wrapper only, inlined
    Buffer<int32_t> result(38, 20);
    p.realize(result);
    check_against(result, expected);
    // Consumers given together share one wrapper: a consumer with another is an error.
    Func k("k");
    k(x, y) = f(x, y) - 1;
    Func alone = f.in(k);
    CHECK_THROWS_WITH(f.in({g, k}), Catch::Contains("g reads f_in_g_h but k reads f_in_k; consumers given together share one wrapper"));
    CHECK_THROWS_WITH(f.in(std::vector<Func>{}), Catch::Contains("name at least one consumer"));
    CHECK(alone.name() == "f_in_k");

    ImageParam img(Int(32), 2, "img_shared");
    img.set(input);
    Func a("a_of_img"), b("b_of_img");
    a(x, y) = img(x, y) + 1;
    b(x, y) = a(x, y) * img(x + 1, y);
    a.compute_root();
    img.in({a, b}).compute_root();
    const std::string imageNest = Pipeline(b).loop_nest();
    CHECK(imageNest.find("produce img_shared_in_a_of_img_b_of_img") != std::string::npos);
    Buffer<int32_t> product(39, 20);
    Pipeline(b).realize(product);
    check_against(product, [&](const std::vector<int> &c) { return (input(c[0], c[1]) + 1) * input(c[0] + 1, c[1]); });
  }

  SECTION("f.in(): every consumer reads one wrapper; a consumer's own wrapper wins") {
    Func f("f"), g("g"), h("h");
    f(x, y) = in(x, y) * 2 + 1;
    g(x, y) = f(x, y) + f(x + 1, y);
    h(x, y) = g(x, y) + f(x, y) * 3;
    g.compute_root();
    f.in().compute_root();
    Pipeline p(h);
    std::string nest = p.loop_nest();
    CHECK(nest.find("produce f_global_wrapper") != std::string::npos);
    Buffer<int32_t> result(38, 20);
    p.realize(result);
    check_against(result, expected);
    f.in(h).compute_root();
    nest = Pipeline(h).loop_nest();
    CHECK(nest.find("produce f_in_h") != std::string::npos);
    CHECK(nest.find("produce f_global_wrapper") != std::string::npos);
    Pipeline(h).realize(result);
    check_against(result, expected);
  }

  SECTION("in.in(f): an input staged per tile of f's consumer, its loops named by the implicit Vars") {
    Func f("f"), g("g"), h("h");
    f(x, y) = in(x, y) * 2 + 1;
    g(x, y) = f(x, y) + f(x + 1, y);
    h(x, y) = g(x, y) + f(x, y) * 3;
    h.split(x, xo, xi, 16);
    // f reads the input (inlined into g and h): a wrapper for f, at h's tiles.
    in.in(f).compute_at(h, xo).vectorize(_0, 4);
    CHECK(Pipeline(h).loop_nest().find("produce in_in_f") != std::string::npos);
    Buffer<int32_t> result(38, 20);
    Pipeline(h).realize(result);
    check_against(result, expected);
    Func only("only");
    only(x, y) = in(x, y) - 7;
    Func all = in.in();
    all.compute_root();
    Buffer<int32_t> shifted(10, 5);
    shifted.set_min({3, 2});
    Pipeline(only).realize(shifted);
    check_against(shifted, [&](const std::vector<int> &c) { return input(c[0], c[1]) - 7; });
    CHECK(Pipeline(only).loop_nest().find("produce in_global_wrapper") != std::string::npos);
  }

  SECTION("mistakes are named") {
    Func undefined("undefined"), f("f");
    CHECK_THROWS_WITH(undefined.in(), Catch::Contains("Func undefined is wrapped by in() before it is defined"));
    f(x) = x;
    CHECK_THROWS_WITH(f.in(f), Catch::Contains("Func f cannot wrap its reads of itself"));
  }
}

TEST_CASE("Vector math of any width, in chunks of the host's vector math library, matches the C library",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int n = 67;
  ImageParam a(Float(32), 1, "a"), b(Float(32), 1, "b"), c(Float(64), 1, "c");
  Buffer<float> as(n), bs(n);
  Buffer<double> cs(n);
  fill_random(as, seed, 0.05, 3.0);
  fill_random(bs, seed + 1, -2.0, 2.0);
  fill_random(cs, seed + 2, 0.05, 3.0);
  a.set(as), b.set(bs), c.set(cs);
  Var x("x");
  for (int lanes : {2, 3, 4, 8, 12, 16, 32}) {
    INFO(lanes << " lanes");
    Func f("vector_math_f32"), g("vector_math_f64");
    f(x) = pow(a(x), b(x)) + exp(b(x)) + log(a(x)) + sin(b(x)) * cos(a(x)) + tanh(b(x)) + atan2(b(x), a(x)) +
           asinh(b(x)) + acosh(a(x) + 1.0f);
    g(x) = pow(c(x), 1.5) + exp(-c(x)) + log(c(x)) + tan(c(x) * 0.3) + sinh(c(x)) - cosh(c(x) * 0.5) + atan(c(x));
    f.vectorize(x, lanes);
    g.vectorize(x, lanes);
    check_against(Pipeline(f).realize<float>({n}), [&](const std::vector<int> &i) {
      const double p = as(i[0]), q = bs(i[0]);
      return std::pow(p, q) + std::exp(q) + std::log(p) + std::sin(q) * std::cos(p) + std::tanh(q) +
             std::atan2(q, p) + std::asinh(q) + std::acosh(p + 1.0);
    }, 2e-5);
    check_against(Pipeline(g).realize<double>({n}), [&](const std::vector<int> &i) {
      const double p = cs(i[0]);
      return std::pow(p, 1.5) + std::exp(-p) + std::log(p) + std::tan(p * 0.3) + std::sinh(p) - std::cosh(p * 0.5) +
             std::atan(p);
    }, 1e-12);
  }
}

TEST_CASE("Vector exp and log of floats within a few units in the last place; pow right at the special values",
          "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  const int n = 1 << 16;
  Buffer<float> wide(n), exponent(n);
  for (int i = 0; i < n; ++i) {
    wide(i) = std::ldexp(std::uniform_real_distribution<float>(1, 2)(rng), std::uniform_int_distribution<int>(-149, 127)(rng));
    exponent(i) = std::uniform_real_distribution<float>(-87.0f, 88.5f)(rng);
  }
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, -2.5f, INFINITY, -INFINITY, NAN, 1e-45f, 100.0f, -100.0f};
  for (size_t k = 0; k < std::size(specials); ++k)
    wide(int(k)) = exponent(int(k)) = specials[k];
  ImageParam a(Float(32), 1, "a"), b(Float(32), 1, "b");
  a.set(wide), b.set(exponent);
  Var x("x");
  Func e("vexp"), l("vlog"), p("vpow");
  e(x) = exp(b(x));
  l(x) = log(a(x));
  p(x) = pow(b(x), a(x));
  for (Func *f : {&e, &l, &p})
    f->vectorize(x, 8);
  Buffer<float> es = Pipeline(e).realize<float>({n}), ls = Pipeline(l).realize<float>({n}),
                ps = Pipeline(p).realize<float>({n});
  // Units in the last place of the float nearest `want`; subnormal results may flush to zero.
  auto ulps = [](float got, double want) {
    if (std::isnan(want))
      return std::isnan(got) ? 0.0 : 1e9;
    if (std::isinf(want) || std::fabs(want) > FLT_MAX)
      return got == float(want) ? 0.0 : 1e9;
    if (std::fabs(want) < FLT_MIN)
      return std::fabs(got) <= FLT_MIN ? 0.0 : 1e9;
    const float w = float(want);
    return std::fabs(got - want) / double(std::nextafter(std::fabs(w), INFINITY) - std::fabs(w));
  };
  double worstExp = 0, worstLog = 0;
  for (int i = 0; i < n; ++i) {
    worstExp = std::max(worstExp, ulps(es(i), std::exp(double(exponent(i)))));
    worstLog = std::max(worstLog, ulps(ls(i), std::log(double(wide(i)))));
  }
  CHECK(worstExp <= 2.0);
  CHECK(worstLog <= 3.0);
  // pow at the special values (each with itself as the exponent), as the C library's.
  for (size_t k = 0; k < std::size(specials); ++k) {
    INFO("pow(" << exponent(int(k)) << ", " << wide(int(k)) << ")");
    const double want = std::pow(double(exponent(int(k))), double(wide(int(k))));
    CHECK(ulps(ps(int(k)), want) <= 2.0);
  }
}

TEST_CASE("print and print_when report through the call's print handler and return their value", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  PrintedLines printing;
  const int n = 37;
  Buffer<float> input(n);
  fill_random(input, seed, -100.0, 100.0);
  ImageParam in(Float(32), 1, "in");
  in.set(input);
  Var x("x");
  auto expectedLine = [&](int i, bool withInput) {
    char text[160];
    if (withInput)
      std::snprintf(text, sizeof text, "%d at %d , 100%% of %f %u %d\n", 3 * i - 50, i, double(input(i)),
                    unsigned(uint8_t(i * 40)), int(int8_t(-i)));
    else
      std::snprintf(text, sizeof text, "%f is the input at %d\n", double(input(i)), i);
    return std::string(text);
  };
  for (const char *schedule : {"serial", "vectorized", "parallel"}) {
    INFO(schedule);
    printing.Lines.clear();
    Func f("f");
    f(x) = print(3 * x - 50, "at", x, ", 100% of", in(x), cast<uint8_t>(x * 40), cast<int8_t>(-x)) + 1;
    if (schedule[0] == 'v')
      f.vectorize(x, 8);
    else if (schedule[0] == 'p')
      f.parallel(x);
    Buffer<int> out(n);
    Pipeline(f).realize(&printing, out);
    for (int i = 0; i < n; ++i)
      CHECK(out(i) == 3 * i - 50 + 1);
    std::vector<std::string> expected;
    for (int i = 0; i < n; ++i)
      expected.push_back(expectedLine(i, true));
    std::vector<std::string> lines = printing.Lines;
    if (schedule[0] == 'p')
      std::sort(lines.begin(), lines.end()), std::sort(expected.begin(), expected.end());
    CHECK(lines == expected);
  }

  printing.Lines.clear();
  Func g("g");
  g(x) = print_when(in(x) > 0.0f, in(x), "is the input at", x) * 2.0f;
  g.vectorize(x, 4);
  Buffer<float> out(n);
  Pipeline(g).realize(&printing, out);
  std::vector<std::string> expected;
  for (int i = 0; i < n; ++i) {
    CHECK(out(i) == input(i) * 2.0f);
    if (input(i) > 0.0f)
      expected.push_back(expectedLine(i, false));
  }
  CHECK(printing.Lines == expected);

  // A double prints whole, however long (-DBL_MAX is 317 characters).
  printing.Lines.clear();
  Func huge("huge");
  huge(x) = print(cast<double>(x) * -DBL_MAX, "end");
  Buffer<double> hugeOut(2);
  Pipeline(huge).realize(&printing, hugeOut);
  char hugeText[400];
  std::snprintf(hugeText, sizeof hugeText, "%f end\n", -DBL_MAX);
  CHECK(printing.Lines == std::vector<std::string>{"-0.000000 end\n", hugeText});

  CHECK_THROWS_WITH(print_when(x, x), Catch::Contains("the condition of print_when must be a boolean"));
}

TEST_CASE("trace_stores, trace_loads and trace_realizations print each event through the print handler",
          "[cpu][language]") {
  const Target host("host");
  PrintedLines printing;
  Var x("x"), y("y");

  SECTION("Halide's tutorial gradient: one store a point, in loop order, vectorized lane by lane") {
    for (bool vectorized : {false, true}) {
      INFO("vectorized " << vectorized);
      printing.Lines.clear();
      Func gradient(vectorized ? "traced_gradient_vectors" : "traced_gradient");
      gradient(x, y) = x + y;
      gradient.trace_stores();
      if (vectorized)
        gradient.vectorize(x, 4);
      Buffer<int> out(4, 2);
      Pipeline p(gradient);
      p.compile_jit(host);
      p.realize(&printing, out);
      std::vector<std::string> expected;
      for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 4; ++i) {
          CHECK(out(i, j) == i + j);
          expected.push_back("Store " + gradient.name() + ".0(" + std::to_string(i) + ", " + std::to_string(j) +
                             ") = " + std::to_string(i + j) + "\n");
        }
      CHECK(printing.Lines == expected);
    }
  }

  SECTION("loads of a root producer, a Tuple's stores and the realizations' regions") {
    printing.Lines.clear();
    Func producer("traced_producer"), pair("traced_pair");
    producer(x) = x * 10;
    pair(x) = Tuple(producer(x) + producer(x + 1), cast<float>(x) * 0.5f);
    producer.compute_root().trace_loads().trace_realizations();
    pair.trace_stores();
    Buffer<int> sums(3);
    Buffer<float> halves(3);
    sums.set_min({2});
    halves.set_min({2});
    Pipeline p(pair);
    p.compile_jit(host);
    p.realize(&printing, {sums, halves});
    const std::vector<std::string> expected = {
        "Produce traced_producer(2, 4)\n",
        "End produce traced_producer(2, 4)\n",
        "Consume traced_producer(2, 4)\n",
        "Load traced_producer.0(2) = 20\n",
        "Load traced_producer.0(3) = 30\n",
        "Store traced_pair.0(2) = 50\n",
        "Store traced_pair.1(2) = 1.000000\n",
        "Load traced_producer.0(3) = 30\n",
        "Load traced_producer.0(4) = 40\n",
        "Store traced_pair.0(3) = 70\n",
        "Store traced_pair.1(3) = 1.500000\n",
        "Load traced_producer.0(4) = 40\n",
        "Load traced_producer.0(5) = 50\n",
        "Store traced_pair.0(4) = 90\n",
        "Store traced_pair.1(4) = 2.000000\n",
        "End consume traced_producer(2, 4)\n"};
    CHECK(printing.Lines == expected);
    for (int i = 2; i < 5; ++i) {
      CHECK(sums(i) == 20 * i + 10);
      CHECK(halves(i) == i * 0.5f);
    }
  }
}

TEST_CASE("Boundary conditions of a Func of several values bound each value alike", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 9, h = 6;
  Buffer<float> input(w, h);
  fill_random(input, seed, -5.0, 5.0);
  ImageParam in(Float(32), 2, "in");
  in.set(input);
  Var x("x"), y("y");
  Func pair("pair");
  pair(x, y) = Tuple(x + 10 * y, in(clamp(x, 0, w - 1), clamp(y, 0, h - 1)) * 0.5f);
  const Region region = {Range(0, w), Range(0, h)};
  auto clampTo = [](int v, int n) { return std::min(std::max(v, 0), n - 1); };
  auto mirror = [](int v, int n) {
    int t = ((v % (2 * n)) + 2 * n) % (2 * n);
    return t < n ? t : 2 * n - 1 - t;
  };
  struct Case {
    const char *Name;
    Func Bounded;
    std::function<std::pair<int, float>(int, int)> Reference;
  };
  std::vector<Case> cases = {
      {"repeat_edge", BoundaryConditions::repeat_edge(pair, region),
       [&](int i, int j) {
         const int ci = clampTo(i, w), cj = clampTo(j, h);
         return std::pair{ci + 10 * cj, input(ci, cj) * 0.5f};
       }},
      {"mirror_image", BoundaryConditions::mirror_image(pair, region),
       [&](int i, int j) {
         const int mi = mirror(i, w), mj = mirror(j, h);
         return std::pair{mi + 10 * mj, input(mi, mj) * 0.5f};
       }},
      {"constant_exterior", BoundaryConditions::constant_exterior(pair, Tuple(Expr(-1), Expr(2.5f)), region),
       [&](int i, int j) {
         if (i < 0 || j < 0 || i >= w || j >= h)
           return std::pair{-1, 2.5f};
         return std::pair{i + 10 * j, input(i, j) * 0.5f};
       }},
  };
  for (Case &c : cases) {
    INFO(c.Name);
    REQUIRE(c.Bounded.outputs() == 2);
    Func out("out_" + std::string(c.Name));
    out(x, y) = Tuple(c.Bounded(x, y)[0] * 2, c.Bounded(x, y)[1] + 1.0f);
    Buffer<int> first(w + 7, h + 5);
    Buffer<float> second(w + 7, h + 5);
    first.set_min({-3, -2});
    second.set_min({-3, -2});
    Pipeline(out).realize({first, second});
    check_against(first, [&](const std::vector<int> &p) { return c.Reference(p[0], p[1]).first * 2; });
    check_against(second, [&](const std::vector<int> &p) { return c.Reference(p[0], p[1]).second + 1.0f; });
  }
  CHECK_THROWS_WITH(BoundaryConditions::constant_exterior(pair, Expr(0), region),
                    Catch::Contains("1 exterior values for a Func of 2"));
}

TEST_CASE("ImageParam::dim constraints are checked at realize and known to the compiler", "[cpu][language]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 64, h = 20;
  ImageParam in(Float(32), 2, "in");
  Param<int> width("width");
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y) * 2.0f + in(x, y + 1);
  in.dim(0).set_bounds(0, width).dim(1).set_min(0).set_stride(w);
  in.set_host_alignment(16);
  CHECK_THAT(in.dim(1).max().type().bits, Catch::Predicate<int>([](int b) { return b == 32; }));
  Buffer<float> input(w, h + 1);
  fill_random(input, seed);
  in.set(input);
  width.set(w);
  Pipeline p(f);
  // The stride is a constant in the code: no index multiplies by a run-time stride of in.
  CHECK_THAT(p.lowered_stmt(Target("host")), !Catch::Contains("* in.stride.1"));
  Buffer<float> out = p.realize<float>({w, h});
  out.for_each_element([&](const std::vector<int> &c) {
    REQUIRE(out(c[0], c[1]) == input(c[0], c[1]) * 2.0f + input(c[0], c[1] + 1));
  });
  SECTION("a buffer that breaks one is refused, naming input, dimension and both values") {
    width.set(w - 1);
    CHECK_THROWS_WITH(p.realize<float>({w - 1, h}),
                      Catch::Contains("input buffer in has extent 64 in dimension 0, but its ImageParam requires 63"));
    width.set(w);
    Buffer<float> narrow(w, h + 1);
    narrow.set_min({0, 1});
    in.set(narrow);
    CHECK_THROWS_WITH(p.realize<float>({w, h - 1}),
                      Catch::Contains("input buffer in has min 1 in dimension 1, but its ImageParam requires 0"));
  }
  SECTION("constraints are values of Params and constants") {
    Var z("z");
    CHECK_THROWS_WITH(in.dim(0).set_min(z), Catch::Contains("in.dim(0).set_min: a constraint is a value of Params "
                                                                   "and constants, but it uses z"));
    CHECK_THROWS_WITH(in.dim(2), Catch::Contains("ImageParam in has no dimension 2"));
    CHECK_THROWS_WITH(in.set_host_alignment(12), Catch::Contains("must be a power of two"));
  }
  SECTION("host memory off the alignment asked is refused when bound") {
    ImageParam aligned(Float(32), 1, "aligned");
    aligned.set_host_alignment(64);
    std::vector<float> storage(40);
    uint8_t *base = reinterpret_cast<uint8_t *>(storage.data());
    float *offBoundary = reinterpret_cast<float *>(base + (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64 + 4);
    Buffer<float> off(offBoundary, {8});
    CHECK_THROWS_WITH(aligned.set(off), Catch::Contains("requires host memory aligned to 64 bytes"));
  }
}

TEST_CASE("The loop nest and values of a split, reordered and specialized Func with a vectorized update", "[cpu]") {
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Param<bool> wide("wide", true);
  Func f("f");
  f(x, y) = x * y;
  f(x, 0) = f(x, 0) + 1;
  f.split(x, xo, xi, 8, TailStrategy::RoundUp).reorder(xi, y, xo);
  f.update(0).vectorize(x, 4);
  f.specialize(wide).parallel(y);
  Pipeline p(f);
  const std::string nest = p.loop_nest();
  INFO(nest);
  CHECK(nest.find("xo") != std::string::npos);
  CHECK(nest.find("xi") != std::string::npos);
  for (bool w : {true, false}) {
    wide.set(w);
    Buffer<int32_t> out = p.realize<int32_t>({16, 3});
    check_against(out, [](const std::vector<int> &c) { return c[0] * c[1] + (c[1] == 0 ? 1 : 0); });
  }
}

TEST_CASE("Estimates are accepted as in Halide and change nothing", "[cpu][language]") {
  // Halide's generators declare estimates for its autoschedulers; ptxjit has none.
  auto make = [](bool estimates) {
    ImageParam in(Float(32), 2, "in");
    Param<float> gain("gain");
    Var x("x"), y("y"), xi("xi");
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func blur("blur_estimated");
    blur(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) * gain;
    blur.split(x, x, xi, 8).vectorize(xi).parallel(y);
    if (estimates) {
      in.set_estimates({{0, 1920}, {0, 1080}});
      in.dim(0).set_estimate(0, 1920);
      gain.set_estimate(0.5f);
      blur.set_estimates({{0, 1920}, {0, 1080}}).set_estimate(y, 0, 1080);
    }
    return std::make_tuple(in, gain, blur);
  };
  auto [plainIn, plainGain, plain] = make(false);
  auto [in, gain, blur] = make(true);
  CHECK(Pipeline(blur).lowered_stmt(Target("host")) == Pipeline(plain).lowered_stmt(Target("host")));

  Buffer<float> input(37, 11);
  fill_random(input, fresh_seed());
  in.set(input);
  gain.set(0.25f);
  Buffer<float> out = blur.realize<float>({37, 11}, Target("host"));
  for (int y = 0; y < 11; ++y)
    for (int x = 0; x < 37; ++x) {
      float sum = input(std::max(x - 1, 0), y) + input(x, y) + input(std::min(x + 1, 36), y);
      REQUIRE(out(x, y) == sum * 0.25f);
    }

  Var z("z");
  Func undefined("undefined_f");
  CHECK_THROWS_WITH(undefined.set_estimate(z, 0, 8), Catch::Contains("define the Func before scheduling it"));
  CHECK_THROWS_WITH(blur.set_estimate(z, 0, 8),
                    Catch::Contains("set_estimate of Func blur_estimated: z is not one of its arguments (x, y)"));
  CHECK_THROWS_WITH(blur.set_estimate(Var("x"), 0.5f, 8), Catch::Contains("its values must be integers"));
  CHECK_THROWS_WITH(blur.set_estimates({{0, 8}}), Catch::Contains("1 ranges for its 2 dimensions (x, y)"));
  CHECK_THROWS_WITH(in.set_estimates({{0, 8}, {0, 8}, {0, 3}}), Catch::Contains("ImageParam in: set_estimates with 3 ranges for 2 dimensions"));
  CHECK_THROWS_WITH(in.dim(1).set_estimate(0, 2.0f), Catch::Contains("ImageParam in: set_estimate of dimension 1: its values must be integers"));
}

TEST_CASE("random_float, random_int and random_uint: uniform, independent, and the same at each point whatever the schedule",
          "[cpu][language]") {
  const Target host("host");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  const int w = 512, h = 512;

  SECTION("uniform in [0, 1), 16 buckets level, two calls uncorrelated, one call shared") {
    Func f("random_pair");
    Expr shared = random_float();
    f(x, y) = Tuple(shared + shared, shared, random_float());
    Buffer<float> twice(w, h), once(w, h), other(w, h);
    Pipeline(f).realize({twice, once, other});
    double sum = 0, squares = 0, product = 0;
    std::array<int, 16> buckets{};
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        const float v = once(i, j);
        REQUIRE(v >= 0.0f);
        REQUIRE(v < 1.0f);
        REQUIRE(twice(i, j) == 2 * v);
        sum += v;
        squares += double(v) * v;
        product += (v - 0.5) * (other(i, j) - 0.5);
        ++buckets[int(v * 16)];
      }
    const double n = double(w) * h, mean = sum / n;
    CHECK(std::fabs(mean - 0.5) < 0.005);
    CHECK(std::fabs(squares / n - mean * mean - 1.0 / 12) < 0.003);
    // The correlation of the two calls: 0 within about 8 standard deviations (1/sqrt(n) each).
    CHECK(std::fabs(product / n * 12) < 8 / std::sqrt(n));
    for (int count : buckets)
      CHECK(std::abs(count - int(n / 16)) < int(n / 16 * 0.05));
  }

  SECTION("every schedule and placement gives each point the same value") {
    Func noise("noise");
    noise(x, y) = Tuple(random_float(), random_int(), random_uint());
    Buffer<float> f0(w, h);
    Buffer<int32_t> i0(w, h);
    Buffer<uint32_t> u0(w, h);
    Pipeline(noise).realize({f0, i0, u0});
    int equalNeighbours = 0, negative = 0, high = 0;
    for (int j = 0; j < h; ++j)
      for (int i = 0; i + 1 < w; ++i) {
        equalNeighbours += i0(i, j) == i0(i + 1, j) || u0(i, j) == u0(i + 1, j);
        negative += i0(i, j) < 0;
        high += u0(i, j) >= 0x80000000u;
      }
    CHECK(equalNeighbours == 0);
    CHECK(std::abs(negative - w * h / 2) < w * h / 50); // every 32-bit value, signed and unsigned
    CHECK(std::abs(high - w * h / 2) < w * h / 50);

    // The same Func, scheduled, and read by consumers that inline it or compute it at their loops.
    noise.tile(x, y, xi, yi, 64, 8).vectorize(xi, 8).parallel(y);
    Buffer<float> f1(w, h);
    Buffer<int32_t> i1(w, h);
    Buffer<uint32_t> u1(w, h);
    Pipeline(noise).realize({f1, i1, u1});
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        REQUIRE(f1(i, j) == f0(i, j));
        REQUIRE(i1(i, j) == i0(i, j));
        REQUIRE(u1(i, j) == u0(i, j));
      }
    for (int placement = 0; placement < 3; ++placement) {
      Func inner("random_inner"), outer("random_outer");
      inner(x, y) = random_float();
      outer(x, y) = inner(x + 1, y) - inner(x, y - 1);
      Func reference("random_reference");
      reference(x, y) = inner(x, y);
      const Buffer<float> direct = reference.realize<float>({w + 1, h + 1}, host);
      if (placement == 1)
        inner.compute_root().vectorize(x, 8);
      if (placement == 2)
        inner.compute_at(outer, y).vectorize(x, 4);
      outer.vectorize(x, 8).parallel(y);
      Buffer<float> out(w, h);
      out.set_min({0, 1});
      Pipeline(outer).realize(out);
      for (int j = 1; j < h; ++j)
        for (int i = 0; i < w; ++i)
          REQUIRE(out(i, j) == direct(i + 1, j) - direct(i, j - 1));
    }
  }

  SECTION("a seed picks other values; updates are random in their RVars; histograms stay in bounds") {
    Param<int> seed("seed");
    Func seeded("random_seeded");
    seeded(x) = random_uint(seed);
    seed.set(1);
    const Buffer<uint32_t> one = seeded.realize<uint32_t>({1000}, host);
    const Buffer<uint32_t> again = seeded.realize<uint32_t>({1000}, host);
    seed.set(2);
    const Buffer<uint32_t> two = seeded.realize<uint32_t>({1000}, host);
    int same = 0;
    for (int i = 0; i < 1000; ++i) {
      REQUIRE(one(i) == again(i));
      same += one(i) == two(i);
    }
    CHECK(same == 0);

    // 64000 draws into 16 buckets, seeded by the RVar: each near 4000, and never bucket 16
    // (bounds inference takes random_float() * 16 to [0, 16], as Halide does).
    RDom r(0, 64000, "random_draws");
    Func hist("random_hist");
    hist(x) = 0;
    hist(cast<int>(random_float(r) * 16.0f)) += 1;
    const Buffer<int> counts = hist.realize<int>({17}, host);
    int total = 0;
    for (int i = 0; i < 16; ++i) {
      CHECK(std::abs(counts(i) - 4000) < 300);
      total += counts(i);
    }
    CHECK(counts(16) == 0);
    CHECK(total == 64000);

    // An update's pure Vars and RVars both pick the value: a random walk along r, in every row x.
    Func walk("random_walk");
    RDom k(1, 99, "random_steps");
    walk(x, y) = 0.0f;
    walk(x, k) = walk(x, k - 1) + (random_float() - 0.5f);
    const Buffer<float> path = walk.realize<float>({8, 100}, host);
    std::vector<float> steps;
    for (int i = 0; i < 8; ++i)
      for (int j = 1; j < 100; ++j) {
        const float step = path(i, j) - path(i, j - 1);
        CHECK(std::fabs(step) <= 0.5f);
        steps.push_back(step);
      }
    // Steps the same in every row or every column would leave at most 99 distinct values; the
    // differences of accumulated floats round, so a few of the 792 may coincide by chance.
    std::sort(steps.begin(), steps.end());
    const auto distinct = std::unique(steps.begin(), steps.end()) - steps.begin();
    CHECK(distinct >= 780);
  }

  SECTION("errors: the seed's type, a random value outside a definition") {
    CHECK_THROWS_WITH(random_float(cast<int16_t>(x)), Catch::Contains("the seed of random_float must be an int32, not int16"));
    CHECK_THROWS_WITH(random_uint(Expr(1.5f)), Catch::Contains("the seed of random_uint must be an int32, not float32"));
    Func f("random_extent");
    RDom r(0, cast<int>(random_float() * 4.0f) + 1, "random_extent_r");
    f(x) = 0;
    f(r) += 1;
    CHECK_THROWS_WITH(f.realize<int>({8}, host), Catch::Contains("belong in a Func's definition or an RDom's where()"));
  }
}

TEST_CASE("unscheduled() states that a stage has no schedule, as in Halide", "[cpu][language]") {
  Var x("x");
  RDom r(0, 10, "unscheduled_r");
  Func f("unscheduled_f");
  f(x) = x;
  f(x) += 1;
  f(r) = f(r) * 2;
  f.update(0).unscheduled();
  f.update(1).unscheduled();
  const Buffer<int> out = f.realize<int>({12}, Target("host"));
  for (int i = 0; i < 12; ++i)
    CHECK(out(i) == (i < 10 ? 2 * (i + 1) : i + 1));
  CHECK_THROWS_WITH(f.update(0).unscheduled(), Catch::Contains("unscheduled() of unscheduled_f.s1: the stage was given a schedule already"));
  Func g("unscheduled_g");
  g(x) = x;
  g(x) += 1;
  g.update(0).vectorize(x, 4);
  CHECK_THROWS_WITH(g.update(0).unscheduled(), Catch::Contains("the stage was given a schedule already"));
}

TEST_CASE("fold_storage keeps the rows a slid Func needs, modulo the extent asked for", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 203, h = 97;
  const BoxBlur program("fold", w, h, seed);
  const Var &x = program.x, &y = program.y;
  Var xi("xi"), yi("yi"), yo("yo");
  auto reference = [&](int i, int j) { return program.reference(i, j); };
  auto blur = [&](const std::string &suffix) { return program.funcs("fold", suffix); };

  SECTION("three rows slid down the whole image, where ptxjit alone would keep four") {
    auto [bx, by] = blur("_3");
    bx.store_root().compute_at(by, y).vectorize(x, 8).fold_storage(y, 3);
    by.vectorize(x, 8);
    CHECK_THAT(Pipeline(by).lowered_stmt(host), Catch::Contains("allocate fold_bx_3[float32 * 203 * 3]") ||
                                                    Catch::Contains("* 3]"));
    check_against(by.realize<float>({w, h}, host), [&](const std::vector<int> &c) { return reference(c[0], c[1]); });
  }

  SECTION("camera_pipe's schedule: strips of rows in parallel, two rows an iteration, four stored") {
    auto [bx, by] = blur("_strips");
    by.split(y, yo, yi, 16).split(yi, yi, Var("yii"), 2, TailStrategy::ShiftInward).parallel(yo).vectorize(x, 8);
    bx.compute_at(by, yi).store_at(by, yo).vectorize(x, 8).fold_storage(y, 4);
    CHECK_THAT(Pipeline(by).lowered_stmt(host), Catch::Contains("* 4]"));
    check_against(by.realize<float>({w, h}, host), [&](const std::vector<int> &c) { return reference(c[0], c[1]); });
  }

  SECTION("a fold the storage already fits changes nothing") {
    auto [bx, by] = blur("_fits");
    bx.compute_at(by, y).fold_storage(y, 4);
    check_against(by.realize<float>({w, h}, host), [&](const std::vector<int> &c) { return reference(c[0], c[1]); });
  }

  SECTION("errors: too few rows, storage that cannot fold, no storage, a non-constant extent") {
    auto [bx, by] = blur("_few");
    bx.store_root().compute_at(by, y).fold_storage(y, 2);
    CHECK_THROWS_WITH(by.realize<float>({w, h}, host),
                      Catch::Contains("fold_storage(y, 2) of Func fold_bx_few: each iteration of loop fold_by_few.s0.y "
                                      "needs 3 rows of it in y; the extent must be at least that"));
    auto [rootX, rootY] = blur("_root");
    rootX.compute_root().fold_storage(y, 4);
    CHECK_THROWS_WITH(rootY.realize<float>({w, h}, host), Catch::Contains("fold_storage(y, 4) of Func fold_bx_root: its "
                                                                          "storage cannot be folded in y"));
    auto [outX, outY] = blur("_out");
    outY.fold_storage(y, 4);
    CHECK_THROWS_WITH(outY.realize<float>({w, h}, host), Catch::Contains("it has no storage of its own to fold"));
    Param<int> rows("rows");
    CHECK_THROWS_WITH(outX.fold_storage(y, rows), Catch::Contains("fold_storage of Func fold_bx_out.y: the extent must be a positive constant"));
    CHECK_THROWS_WITH(outX.fold_storage(Var("z"), 4), Catch::Contains("z is not one of its arguments"));
  }
}

TEST_CASE("require: a value where its condition holds, a failed realize naming it and the message where not",
          "[cpu][language]") {
  const Target host("host");
  Var x("x"), xo("xo"), xi("xi");
  Param<int> p1("p1"), p2("p2");
  Func f("required_sum");
  f(x) = require(p1 + p2 == 19, (p1 + p2) * x, "the parameters should add to exactly", 19, "but were", p1, p2);
  p1.set(10);
  p2.set(9);
  const Buffer<int> good = f.realize<int>({8}, host);
  for (int i = 0; i < 8; ++i)
    CHECK(good(i) == 19 * i);
  p2.set(5);
  CHECK_THROWS_WITH(f.realize<int>({8}, host),
                    Catch::Contains("requirement failed: ((p1 + p2) == 19): the parameters should add to exactly 19 "
                                    "but were 10 5"));

  // Per point, vectorized and in parallel tasks with heap storage: the first failing lane is
  // reported, with its values; the realize fails, and the error handler hears it once.
  ImageParam in(Float(32), 1, "required_in");
  Buffer<float> values(1000);
  fill_random(values, fresh_seed(), 0.0, 4.0);
  in.set(values);
  Func root("required_root"), scaled("required_scaled");
  root(x) = require(in(x) >= 0.0f, sqrt(in(x)), "negative input", in(x), "at", x);
  scaled(x) = root(x) * 2.0f + root(x + 1);
  scaled.split(x, xo, xi, 64).parallel(xo).vectorize(xi, 8);
  root.compute_at(scaled, xo).vectorize(x, 8);
  Buffer<float> out = scaled.realize<float>({999}, host);
  for (int i = 0; i < 999; ++i)
    CHECK(out(i) == Approx(std::sqrt(values(i)) * 2 + std::sqrt(values(i + 1))));
  values(613) = -2.5f;
  CHECK_THROWS_WITH(scaled.realize<float>({999}, host),
                    Catch::Contains("requirement failed: (required_in(x) >= 0.0f): negative input -2.500000 at 613"));
  values(613) = 1.0f;
  CHECK_NOTHROW(scaled.realize<float>({999}, host));

  CHECK_THROWS_WITH(require(x, x), Catch::Contains("the condition of require must be a boolean"));
}

TEST_CASE("prefetch: hints at the loop asked for, ahead by the offset, that change no value", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 203, h = 97;
  const BoxBlur program("prefetch", w, h, seed);
  const Var &x = program.x, &y = program.y;
  const ImageParam &in = program.in;
  const Buffer<float> &input = program.input;
  Var yi("yi");
  auto blur = [&](const std::string &suffix) { return program.funcs("prefetch", suffix); };
  auto checkBlur = [&](const Func &by) {
    check_against(by.realize<float>({w, h}, host), [&](const std::vector<int> &c) { return program.reference(c[0], c[1]); });
  };

  SECTION("the rows two iterations ahead of a parallel, vectorized blur, under each bound strategy") {
    for (PrefetchBoundStrategy strategy :
         {PrefetchBoundStrategy::GuardWithIf, PrefetchBoundStrategy::Clamp, PrefetchBoundStrategy::NonFaulting}) {
      INFO("strategy " << static_cast<int>(strategy));
      auto [bx, by] = blur("_" + std::to_string(static_cast<int>(strategy)));
      by.split(y, y, yi, 8).parallel(y).vectorize(x, 8).prefetch(in, yi, yi, 2, strategy);
      bx.compute_at(by, yi).vectorize(x, 8);
      const std::string stmt = Pipeline(by).lowered_stmt(host);
      // The rows bx reads two iterations ahead: yi + 2 - 1 to yi + 2 + 1.
      CHECK_THAT(stmt, Catch::Contains("prefetch(prefetch_in["));
      CHECK_THAT(stmt, Catch::Contains(".s0.yi) + 1), ") || Catch::Contains(".s0.yi) + 1) >= "));
      checkBlur(by);
    }
  }

  SECTION("one element, four ahead: a single request, no line loop beyond it") {
    ImageParam line(Float(32), 1, "prefetch_line");
    Buffer<float> values(300);
    fill_random(values, seed);
    line.set(values);
    Func f("prefetch_single");
    f(x) = line(x) * 2.0f;
    f.prefetch(line, x, 4, PrefetchBoundStrategy::NonFaulting);
    const std::string stmt = Pipeline(f).lowered_stmt(host);
    CHECK_THAT(stmt, Catch::Contains("prefetch(prefetch_line[((prefetch_single.s0.x - prefetch_line.min.0) + 4)])"));
    CHECK(stmt.find("prefetch(", stmt.find("prefetch(") + 1) == std::string::npos);
    check_against(f.realize<float>({300}, host), [&](const std::vector<int> &c) { return values(c[0]) * 2.0f; });
  }

  SECTION("Halide's tile example: at y, from w two ahead, over the lines of x") {
    Var z("z"), v("v");
    Func f("prefetch_tile_f"), g("prefetch_tile_g");
    f(x, y, z, v) = cast<float>(x + y * 3 + z * 5 + v * 7);
    g(x, y, z, v) = 2.0f * f(x, y, z, v);
    f.compute_root();
    g.prefetch(f, y, v, 2, PrefetchBoundStrategy::NonFaulting);
    const std::string stmt = Pipeline(g).lowered_stmt(host);
    CHECK_THAT(stmt, Catch::Contains("for (prefetch_tile_g.s0.y.prefetch.prefetch_tile_f.line"));
    CHECK_THAT(stmt, Catch::Contains("+ 2) * prefetch_tile_f.stride.3)"));
    check_against(g.realize<float>({40, 3, 4, 5}, host),
                  [&](const std::vector<int> &c) { return 2.0f * float(c[0] + c[1] * 3 + c[2] * 5 + c[3] * 7); });
  }

  SECTION("a Buffer, a Func of several values, the output itself, an update, a vectorized loop, a Param offset") {
    Param<int> ahead("prefetch_ahead");
    ahead.set(3);
    Func pair("prefetch_pair"), out("prefetch_out");
    pair(x, y) = Tuple(input(x, y) * 2.0f, input(x + 1, y) - 1.0f);
    out(x, y) = pair(x, y)[0] + pair(x, y)[1];
    RDom r(0, 3, "prefetch_r");
    out(x, y) += input(x - 1 + r, y);
    pair.compute_root().prefetch(input, y, 1, PrefetchBoundStrategy::Clamp);
    out.vectorize(x, 8).prefetch(pair, x, y, ahead).prefetch(out, x, 2);
    out.update().prefetch(input, x, y, 1).prefetch(input, r, 1);
    const std::string stmt = Pipeline(out).lowered_stmt(host);
    CHECK_THAT(stmt, Catch::Contains("prefetch(prefetch_pair.0["));
    CHECK_THAT(stmt, Catch::Contains("prefetch(prefetch_pair.1["));
    CHECK_THAT(stmt, Catch::Contains("prefetch(prefetch_out["));
    check_against(out.realize<float>({w, h}, host), [&](const std::vector<int> &c) {
      const int i = c[0], j = c[1];
      return input(i, j) * 2.0f + (input(i + 1, j) - 1.0f) + input(i - 1, j) + input(i, j) + input(i + 1, j);
    });
    // At a vectorized loop the hint covers the whole vector, before it.
    Var xo("xo"), xv("xv");
    Func vec2("prefetch_vec2");
    vec2(x, y) = in(x, y) + 1.0f;
    vec2.split(x, xo, xv, 8).vectorize(xv).prefetch(in, xv, xo, 1);
    CHECK_THAT(Pipeline(vec2).lowered_stmt(host), Catch::Contains("prefetch(prefetch_in["));
    check_against(vec2.realize<float>({w, h}, host), [&](const std::vector<int> &c) { return input(c[0], c[1]) + 1.0f; });
  }

  SECTION("a specialization keeps the hint, and a realize where the Func is never read drops it") {
    auto [bx, by] = blur("_special");
    Param<int> wide("prefetch_wide");
    bx.compute_at(by, y);
    by.specialize(wide > 0).vectorize(x, 8).prefetch(in, y, 1);
    wide.set(1);
    CHECK_THAT(Pipeline(by).lowered_stmt(host), Catch::Contains("prefetch(prefetch_in["));
    checkBlur(by);
    wide.set(0);
    checkBlur(by);
    Func unread("prefetch_unread"), other("prefetch_other");
    unread(x, y) = in(x, y);
    other(x, y) = cast<float>(x + y);
    other.prefetch(unread, y, 1);
    CHECK_THAT(Pipeline(other).lowered_stmt(host), !Catch::Contains("prefetch("));
  }

  SECTION("errors: loops in the wrong order or gone, offsets that are not integers of Params, storage inside the loop") {
    Func f("prefetch_err"), g("prefetch_err_g");
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(x, y) + f(x, y + 1);
    CHECK_THROWS_WITH(g.prefetch(in, y, x), Catch::Contains("prefetch of prefetch_in in prefetch_err_g.s0: loop x is "
                                                             "inside loop y; the loop to prefetch from must be the loop "
                                                             "the prefetch is at or one outside it"));
    CHECK_THROWS_WITH(g.prefetch(in, Var("q"), 1), Catch::Contains("q is not a loop of prefetch_err_g.s0"));
    CHECK_THROWS_WITH(g.prefetch(in, x, x, Expr(1.5f)), Catch::Contains("the offset must be an integer"));
    CHECK_THROWS_WITH(g.prefetch(in, x, x, Expr(x)), Catch::Contains("the offset may read only Params and input "
                                                                     "sizes, not x"));
    f.compute_at(g, x);
    g.prefetch(f, x, 1);
    CHECK_THROWS_WITH(g.realize<float>({8, 8}, host), Catch::Contains("prefetch of prefetch_err at loop "
                                                                      "prefetch_err_g.s0.x: prefetch_err is stored inside "
                                                                      "that loop"));
    Func later("prefetch_later");
    later(x, y) = in(x, y);
    later.prefetch(in, x, 1).split(x, Var("xo"), Var("xi"), 4);
    CHECK_THROWS_WITH(later.realize<float>({8, 8}, host), Catch::Contains("prefetch of prefetch_in in prefetch_later.s0: "
                                                                          "x is no longer one of its loops"));
  }
}

TEST_CASE("Compound assignments of Exprs keep the left side's type, as in Halide", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "compound_in");
  Buffer<float> input(40, 30);
  input.set_min({-1, -1});
  fill_random(input, seed);
  in.set(input);
  Var x("x"), y("y");
  // A 3x3 box summed the way Halide code is written.
  Expr sum = 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      sum += in(x + dx, y + dy);
  sum /= 9.0f;
  Func box("compound_box");
  box(x, y) = sum;
  check_against(box.realize<float>({38, 28}, host), [&](const std::vector<int> &c) {
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        s += input(c[0] + dx, c[1] + dy);
    return s / 9.0f;
  });
  // The right side is cast to the left side's type: an int stays an int, a uint8 wraps.
  Expr count = 0;
  count += 2.7f;
  count *= x;
  count -= 1;
  CHECK(count.type() == Int(32));
  Expr narrow = cast<uint8_t>(x);
  narrow += 300;
  CHECK(narrow.type() == UInt(8));
  Func f("compound_types");
  f(x) = Tuple(count, narrow);
  Buffer<int> counts(10);
  Buffer<uint8_t> narrows(10);
  Pipeline(f).realize({counts, narrows});
  for (int i = 0; i < 10; ++i) {
    CHECK(counts(i) == 2 * i - 1);
    CHECK(narrows(i) == uint8_t(i + 44));
  }
  Expr undefined;
  CHECK_THROWS_WITH(undefined += 1, Catch::Contains("+="));
}

TEST_CASE("realize without an element type returns a Realization, as in Halide", "[cpu][language]") {
  const Target host("host");
  Var x("x"), y("y");
  Func gradient("realization_gradient");
  gradient(x, y) = x + y;
  Buffer<int32_t> output = gradient.realize({80, 60}, host);
  REQUIRE(output.dimensions() == 2);
  for (int j = 0; j < 60; ++j)
    for (int i = 0; i < 80; ++i)
      REQUIRE(output(i, j) == i + j);

  Func pair("realization_pair");
  pair(x) = Tuple(x * 2, cast<float>(x) / 4.0f);
  Realization r = pair.realize({10}, host);
  REQUIRE(r.size() == 2);
  Buffer<int> doubled = r[0];
  Buffer<float> quarters = r[1];
  for (int i = 0; i < 10; ++i) {
    CHECK(doubled(i) == 2 * i);
    CHECK(quarters(i) == float(i) / 4.0f);
  }
  CHECK_THROWS_WITH(Buffer<int>(r), Catch::Contains("2 buffers (one for each value) cannot become one Buffer"));
  CHECK_THROWS_WITH([&] { Buffer<float> wrong = gradient.realize({4, 4}, host); }(),
                    Catch::Contains("the untyped buffer's element type is int32, not float32"));

  Func answer("realization_scalar");
  answer() = 42;
  Buffer<int> scalar = answer.realize();
  CHECK(scalar() == 42);

  Func other("realization_other");
  other(x) = cast<uint8_t>(x + 1);
  Func first("realization_first");
  first(x) = x * 3;
  Realization both = Pipeline({first, other}).realize({5});
  REQUIRE(both.size() == 2);
  Buffer<int> thrice = both[0];
  Buffer<uint8_t> plusOne = both[1];
  for (int i = 0; i < 5; ++i) {
    CHECK(thrice(i) == 3 * i);
    CHECK(plusOne(i) == i + 1);
  }
}

TEST_CASE("clone_in gives consumers a copy of a Func with a schedule of its own, as in Halide", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "clone_in_input");
  Buffer<float> input(50, 40);
  fill_random(input, seed);
  in.set(input);
  Var x("x"), y("y");

  SECTION("Halide's tutorial: f at root for h, a clone inside g's loop") {
    Func f("clone_f"), g("clone_g"), h("clone_h");
    f(x, y) = in(x, y) * 2.0f + 1.0f;
    g(x, y) = f(x, y) - 3.0f;
    h(x, y) = f(x, y) + g(x, y);
    f.compute_root();
    Func clone = f.clone_in(g);
    CHECK(clone.name() == "clone_f_clone_in_clone_g");
    clone.compute_at(g, x);
    g.compute_root();
    const std::string nest = Pipeline(h).loop_nest();
    CHECK_THAT(nest, Catch::Contains("produce clone_f_clone_in_clone_g"));
    CHECK_THAT(nest, Catch::StartsWith("produce clone_f:"));
    // The clone is computed inside g's loop over x; f itself at root.
    CHECK(nest.find("produce clone_f_clone_in_clone_g") > nest.find("for clone_g.s0.x"));
    check_against(h.realize<float>({50, 40}, host), [&](const std::vector<int> &c) {
      float fv = input(c[0], c[1]) * 2.0f + 1.0f;
      return fv + (fv - 3.0f);
    });
    CHECK(f.clone_in(g).name() == clone.name());
    CHECK_THROWS_WITH(f.in(g), Catch::Contains("clone_f_clone_in_clone_g is read there instead already"));
    CHECK_THROWS_WITH(f.clone_in(f), Catch::Contains("cannot read a clone of itself"));
  }

  SECTION("a Func with updates reading itself, one clone for two consumers") {
    RDom r(0, 5, "clone_r");
    Func acc("clone_acc"), p("clone_p"), q("clone_q"), out("clone_out");
    acc(x, y) = in(x, y);
    acc(x, y) = acc(x, y) * 0.5f + in(x, clamp(y + r, 0, 39)) * 0.25f;
    p(x, y) = acc(x, y) + 1.0f;
    q(x, y) = acc(x, y) * 3.0f;
    out(x, y) = p(x, y) + q(x, y) + acc(x, y);
    Func clone = acc.clone_in({p, q});
    clone.compute_at(out, y);
    p.compute_at(out, y);
    q.compute_at(out, y);
    CHECK(clone.name() == "clone_acc_clone_in_clone_p_clone_q");
    CHECK_THROWS_WITH(acc.clone_in(q), Catch::Contains("clone_acc_clone_in_clone_p_clone_q is read there instead"));
    auto reference = [&](int i, int j) {
      float v = input(i, j);
      for (int k = 0; k < 5; ++k)
        v = v * 0.5f + input(i, std::clamp(j + k, 0, 39)) * 0.25f;
      return v;
    };
    check_against(out.realize<float>({50, 40}, host), [&](const std::vector<int> &c) {
      float a = reference(c[0], c[1]);
      return (a + 1.0f) + a * 3.0f + a;
    });
  }
}

TEST_CASE("Interleaved images: an ImageParam's dimension 0 stride set, as in Halide's RGB example", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam input(UInt(8), 3, "interleaved_in");
  input.dim(0).set_stride(3);
  input.dim(2).set_stride(1).set_bounds(0, 3);
  Var x("x"), y("y"), c("c");
  Func brighter("interleaved_brighter");
  brighter(x, y, c) = u8_sat(cast<int>(input(x, y, c)) * 3 / 2 + 5);
  brighter.bound(c, 0, 3).reorder(c, x, y).unroll(c).vectorize(x, 16).parallel(y);
  const int w = 101, h = 37;
  Buffer<uint8_t> rgb = Buffer<uint8_t>::make_interleaved(w, h, 3);
  REQUIRE(rgb.stride(0) == 3);
  REQUIRE(rgb.stride(1) == 3 * w);
  REQUIRE(rgb.stride(2) == 1);
  fill_random(rgb, seed, 0, 255);
  // The bytes lie channel by channel: pixel (1, 0)'s red follows pixel (0, 0)'s blue.
  CHECK(&rgb(1, 0, 0) == &rgb(0, 0, 2) + 1);
  input.set(rgb);
  check_against(brighter.realize<uint8_t>({w, h, 3}, host), [&](const std::vector<int> &p) {
    return uint8_t(std::min(255, int(rgb(p[0], p[1], p[2])) * 3 / 2 + 5));
  });
  // A planar buffer breaks the constraint: the realize names it.
  Buffer<uint8_t> planar(w, h, 3);
  fill_random(planar, seed + 1, 0, 255);
  input.set(planar);
  CHECK_THROWS_WITH(brighter.realize<uint8_t>({w, h, 3}, host),
                    Catch::Contains("input buffer interleaved_in has stride 1 in dimension 0, but its ImageParam requires 3"));

  // set_stride(Expr()) lifts the constraint, density included: either layout is read.
  ImageParam any(UInt(8), 3, "any_layout_in");
  any.dim(0).set_stride(Expr());
  Func copy("any_layout_copy");
  copy(x, y, c) = any(x, y, c);
  copy.vectorize(x, 16);
  for (const Buffer<uint8_t> &b : {rgb, planar}) {
    INFO("stride " << b.stride(0));
    any.set(b);
    check_against(copy.realize<uint8_t>({w, h, 3}, host), [&](const std::vector<int> &p) { return b(p[0], p[1], p[2]); });
  }
}

TEST_CASE("output_buffer(): interleaved, free and fixed output layouts, checked at realize", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 67, h = 19;
  Buffer<uint8_t> input(w, h, 3);
  fill_random(input, seed, 0, 255);
  auto reference = [&](const std::vector<int> &p) {
    return uint8_t(std::min(255, int(input(p[0], p[1], p[2])) * 3 / 2 + 5));
  };
  Var x("x"), y("y"), c("c");

  SECTION("an interleaved output, as in Halide's RGB example") {
    Func brighter("interleaved_out");
    brighter(x, y, c) = u8_sat(cast<int>(input(x, y, c)) * 3 / 2 + 5);
    brighter.output_buffer().dim(0).set_stride(3).dim(2).set_stride(1).set_bounds(0, 3);
    brighter.reorder(c, x, y).unroll(c).vectorize(x, 16).parallel(y);
    Pipeline pipeline(brighter);
    pipeline.compile_jit(host);
    Buffer<uint8_t> rgb = Buffer<uint8_t>::make_interleaved(w, h, 3);
    pipeline.realize(rgb);
    check_against(rgb, reference);
    // The channels of a pixel lie side by side.
    CHECK(&rgb(1, 0, 0) == &rgb(0, 0, 2) + 1);
    // A planar buffer, or one of four channels, breaks the constraints: the realize names them.
    Buffer<uint8_t> planar(w, h, 3);
    CHECK_THROWS_WITH(pipeline.realize(planar),
                      Catch::Contains("output buffer interleaved_out has stride 1 in dimension 0, but its "
                                      "output_buffer() requires 3"));
    Buffer<uint8_t> rgba = Buffer<uint8_t>::make_interleaved(w, h, 4);
    CHECK_THROWS_WITH(pipeline.realize(rgba),
                      Catch::Contains("output buffer interleaved_out has stride 4 in dimension 0"));
  }

  SECTION("set_stride(Expr()) takes either layout; unconstrained, an output must be dense") {
    Func copy("any_layout_out");
    copy(x, y, c) = u8_sat(cast<int>(input(x, y, c)) * 3 / 2 + 5);
    copy.vectorize(x, 16);
    Buffer<uint8_t> rgb = Buffer<uint8_t>::make_interleaved(w, h, 3), planar(w, h, 3);
    Pipeline dense(copy);
    dense.compile_jit(host);
    CHECK_THROWS_WITH(dense.realize(rgb),
                      Catch::Contains("output buffer any_layout_out must be dense in dimension 0, but its stride there is 3"));
    // Constrained after a compile: compiled again, not the dense code from before.
    copy.output_buffer().dim(0).set_stride(Expr());
    Pipeline anyLayout(copy);
    anyLayout.compile_jit(host);
    for (Buffer<uint8_t> *b : {&rgb, &planar}) {
      INFO("stride " << b->stride(0));
      anyLayout.realize(*b);
      check_against(*b, reference);
    }
  }

  SECTION("fixed bounds make the loops constant; the output's fields are expressions") {
    Func ramp("fixed_out");
    ramp(x, y) = x + y * 100;
    OutputImageParam out = ramp.output_buffer();
    out.dim(0).set_bounds(0, 40).dim(1).set_bounds(3, 7);
    ramp(x, y) += out.width() * y + out.dim(1).min() * 1000;
    ramp.vectorize(x, 8);
    const std::string stmt = Pipeline(ramp).lowered_stmt(host);
    INFO(stmt);
    CHECK(stmt.find("for (fixed_out.s0.y, 3, 7)") != std::string::npos);
    CHECK(stmt.find("for (fixed_out.s0.x, 0, 5)") != std::string::npos);
    Pipeline pipeline(ramp);
    pipeline.compile_jit(host);
    Buffer<int> result(40, 7);
    result.set_min({0, 3});
    pipeline.realize(result);
    check_against(result, [](const std::vector<int> &p) { return p[0] + p[1] * 140 + 3000; });
    Buffer<int> wider(41, 7);
    wider.set_min({0, 3});
    CHECK_THROWS_WITH(pipeline.realize(wider),
                      Catch::Contains("output buffer fixed_out has extent 41 in dimension 0, but its output_buffer() requires 40"));
  }

  SECTION("a Tuple's buffers are constrained one by one") {
    Func pair("tuple_out");
    pair(x, y) = Tuple(cast<int16_t>(input(x, y, 0)) * 2, input(x, y, 1) / 2);
    CHECK_THROWS_WITH(pair.output_buffer(), Catch::Contains("has 2 values: each has a buffer of its own; use output_buffers()"));
    std::vector<OutputImageParam> buffers = pair.output_buffers();
    REQUIRE(buffers.size() == 2);
    CHECK(buffers[1].type() == UInt(8));
    buffers[1].dim(0).set_stride(2);
    // The second value written into every other byte of a buffer of pairs.
    Buffer<int16_t> doubled(w, h);
    std::vector<uint8_t> pairs(2 * w * h);
    Buffer<uint8_t> halves(RawBuffer::view(buffer_type_of<uint8_t>(), {{0, w, 2, 0}, {0, h, 2 * w, 0}},
                                           pairs.data() + 1, 0, nullptr));
    Pipeline pipeline(pair);
    pipeline.compile_jit(host);
    pipeline.realize({doubled, halves});
    check_against(doubled, [&](const std::vector<int> &p) { return int16_t(input(p[0], p[1], 0) * 2); });
    check_against(halves, [&](const std::vector<int> &p) { return uint8_t(input(p[0], p[1], 1) / 2); });
    Buffer<uint8_t> denseHalves(w, h);
    CHECK_THROWS_WITH(pipeline.realize({doubled, denseHalves}),
                      Catch::Contains("output buffer tuple_out.1 has stride 1 in dimension 0, but its output_buffer() requires 2"));
  }

  SECTION("the fields of a Func that is not an output are an error") {
    Func inner("not_output_inner"), outer("not_output_outer");
    inner(x, y) = x + y;
    outer(x, y) = inner(x, y) + inner.output_buffer().width();
    CHECK_THROWS_WITH(outer.realize({8, 8}, host),
                      Catch::Contains("uses not_output_inner.extent.0, a field of the output buffer not_output_inner, "
                                      "but that Func is not an output of this pipeline"));
    Func undefined("undefined_output");
    CHECK_THROWS_WITH(undefined.output_buffer(), Catch::Contains("output_buffers() of Func undefined_output before it is defined"));
    CHECK_THROWS_WITH(inner.output_buffer().dim(2), Catch::Contains("the output buffer not_output_inner has no dimension 2"));
    CHECK_THROWS_WITH(inner.output_buffer().dim(0).set_min(x),
                      Catch::Contains("the output buffer not_output_inner.dim(0).set_min: a constraint is a value of Params "
                                      "and constants, but it uses x"));
  }
}

TEST_CASE("hoist_storage allocates once at an outer loop what is computed inside it", "[cpu][language]") {
  const Target host("host");
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 203, h = 37;
  const BoxBlur program("hoist", w, h, seed);
  const Var &x = program.x, &y = program.y;
  auto reference = [&](const std::vector<int> &c) { return program.reference(c[0], c[1]); };
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi");

  SECTION("a tile's producer allocated once a row of tiles, at its largest tile") {
    auto [bx, by] = program.funcs("hoist", "_row");
    by.split(x, xo, xi, 32).split(y, yo, yi, 8).reorder(xi, yi, xo, yo);
    bx.compute_at(by, xo).hoist_storage(by, yo).vectorize(x, 8);
    const std::string stmt = Pipeline(by).lowered_stmt(host);
    INFO(stmt);
    // The allocation is made in loop yo, before loop xo, of a size that does not depend on xo.
    const size_t allocation = stmt.find("allocate hoist_bx_row["), xoLoop = stmt.find("for (hoist_by_row.s0.xo");
    REQUIRE(allocation != std::string::npos);
    REQUIRE(xoLoop != std::string::npos);
    CHECK(allocation < xoLoop);
    CHECK(stmt.substr(allocation, stmt.find('\n', allocation) - allocation).find("s0.xo") == std::string::npos);
    check_against(by.realize<float>({w, h}, host), reference);
  }

  SECTION("hoisted outside every loop, with a slid and folded producer") {
    auto [rx, ry] = program.funcs("hoist", "_serial_root");
    ry.split(y, yo, yi, 16);
    rx.store_at(ry, yo).compute_at(ry, yi).fold_storage(y, 4).hoist_storage_root().vectorize(x, 8);
    const std::string stmt = Pipeline(ry).lowered_stmt(host);
    INFO(stmt);
    CHECK(stmt.find("allocate hoist_bx_serial_root[") < stmt.find("for (hoist_by_serial_root.s0.yo"));
    check_against(ry.realize<float>({w, h}, host), reference);
  }

  SECTION("errors: a parallel loop between, a loop not around the storage, no storage") {
    auto [px, py] = program.funcs("hoist", "_parallel");
    py.split(y, yo, yi, 8).parallel(yo);
    px.compute_at(py, yi).hoist_storage_root();
    CHECK_THROWS_WITH(py.realize<float>({w, h}, host),
                      Catch::Contains("hoist_storage of Func hoist_bx_parallel at root: its storage would be shared by "
                                      "the iterations of loop hoist_by_parallel.s0.yo (parallel)"));
    auto [ix, iy] = program.funcs("hoist", "_inside");
    iy.split(y, yo, yi, 8);
    ix.compute_at(iy, yo).hoist_storage(iy, yi);
    CHECK_THROWS_WITH(iy.realize<float>({w, h}, host),
                      Catch::Contains("hoist_storage of Func hoist_bx_inside at hoist_by_inside.yi: that loop is not "
                                      "around its storage (stored at hoist_by_inside.yo)"));
    auto [nx, ny] = program.funcs("hoist", "_inlined");
    nx.hoist_storage_root();
    CHECK_THROWS_WITH(ny.realize<float>({w, h}, host), Catch::Contains("it has no storage of its own to hoist"));
    CHECK_THROWS_WITH(nx.hoist_storage(nx, x), Catch::Contains("cannot hoist its storage to its own loop x"));
    CHECK_THROWS_WITH(nx.hoist_storage(LoopLevel::inlined()),
                      Catch::Contains("hoist_storage of Func hoist_bx_inlined: storage cannot be hoisted to an inlined level"));
  }
}
