// The language at Halide's breadth, end to end on the host: operators and functions, each
// checked against plain C++ on fresh random data, scalar and vectorized.

#include "TestUtil.h"
#include "ptxjit.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

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
