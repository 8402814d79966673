// Float(16) and BFloat(16): the conversions of float16_t and bfloat16_t, the types in the
// language, and pipelines computing on them against plain C++ bit for bit.

#include "Float16Programs.h"
#include "ir/IR.h"

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

// The value of the 16-bit pattern one step further from zero than `v` (same sign).
template <typename T> double stepAway(T v) { return T::from_bits(static_cast<uint16_t>(v.bits + 1)).to_double(); }

// Checks that T(d) is the value of T nearest to d, ties to the even pattern, infinity past the
// largest finite value by half a step or more.
template <typename T> void checkRoundsToNearest(double d) {
  const T r(d);
  const double rd = r.to_double();
  INFO(to_string(type_of<T>()) << " of " << d << " gave bits " << r.bits << " (" << rd << ")");
  if (std::isnan(d)) {
    CHECK(std::isnan(rd));
    return;
  }
  CHECK(std::signbit(rd) == std::signbit(d));
  const T zeroOrSmaller = T::from_bits(static_cast<uint16_t>(r.bits & 0x7fff ? r.bits - 1 : r.bits));
  if (std::isinf(rd)) { // d is at least halfway past the largest finite value
    const T largest = T::from_bits(static_cast<uint16_t>(r.bits - 1));
    const double step = largest.to_double() - T::from_bits(static_cast<uint16_t>(largest.bits - 1)).to_double();
    CHECK(std::fabs(d) >= std::fabs(largest.to_double()) + std::fabs(step) / 2);
    return;
  }
  const double error = std::fabs(d - rd);
  for (double neighbour : {stepAway(r), zeroOrSmaller.to_double()}) {
    if (std::isinf(neighbour) || neighbour == rd)
      continue;
    const double other = std::fabs(d - neighbour);
    CHECK(error <= other);
    if (error == other)
      CHECK((r.bits & 1) == 0);
  }
}

} // namespace

TEST_CASE("float16_t and bfloat16_t convert every value exactly and round to nearest, ties to even", "[unit]") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const double h = float16_t::from_bits(b).to_double(), bf = bfloat16_t::from_bits(b).to_double();
    if (std::isnan(h))
      CHECK(std::isnan(float16_t(h).to_double()));
    else if (float16_t(h).bits != b)
      FAIL_CHECK("float16 bits " << bits << " came back as " << float16_t(h).bits);
    if (std::isnan(bf))
      CHECK(std::isnan(bfloat16_t(bf).to_double()));
    else if (bfloat16_t(bf).bits != b)
      FAIL_CHECK("bfloat16 bits " << bits << " came back as " << bfloat16_t(bf).bits);
    // bfloat16 is float32's upper half.
    if (!std::isnan(bf)) {
      const float f = static_cast<float>(bf);
      uint32_t fbits;
      std::memcpy(&fbits, &f, 4);
      CHECK(fbits == uint32_t(b) << 16);
    }
  }
  CHECK(float16_t(1.0).bits == 0x3c00);
  CHECK(float16_t(65504.0).bits == 0x7bff);
  CHECK(float16_t(65519.99).bits == 0x7bff);
  CHECK(float16_t(65520.0).bits == 0x7c00);
  CHECK(float16_t(-std::ldexp(1.0, -24)).bits == 0x8001); // the smallest subnormal
  CHECK(float16_t(std::ldexp(1.0, -25)).bits == 0x0000);  // its half: a tie, to even (zero)
  CHECK(float16_t(std::ldexp(3.0, -25)).bits == 0x0002);  // one and a half: to even (two)
  CHECK(bfloat16_t(1.0).bits == 0x3f80);
  CHECK(bfloat16_t(1.0 + 1.0 / 256).bits == 0x3f80); // a tie, to even
  CHECK(bfloat16_t(1.0 + 3.0 / 256).bits == 0x3f82);
  CHECK(bfloat16_t(-INFINITY).bits == 0xff80);
  CHECK(std::isnan(bfloat16_t(std::nan("")).to_double()));

  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    // Random doubles over the 16-bit types' ranges, and exact ties between their neighbours.
    const double random = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), int(rng() % 300) - 150);
    checkRoundsToNearest<float16_t>(random);
    checkRoundsToNearest<bfloat16_t>(random);
    const auto h = float16_t::from_bits(static_cast<uint16_t>(rng()));
    if (std::isfinite(h.to_double()) && std::isfinite(stepAway(h)))
      checkRoundsToNearest<float16_t>((h.to_double() + stepAway(h)) / 2);
    const auto bf = bfloat16_t::from_bits(static_cast<uint16_t>(rng()));
    if (std::isfinite(bf.to_double()) && std::isfinite(stepAway(bf)))
      checkRoundsToNearest<bfloat16_t>((bf.to_double() + stepAway(bf)) / 2);
  }
}

TEST_CASE("16-bit float types in the language: names, operand types, constants and unsupported types", "[unit]") {
  CHECK(to_string(Float(16)) == "float16");
  CHECK(to_string(BFloat(16, 8)) == "bfloat16x8");
  CHECK(type_of<float16_t>() == Float(16));
  CHECK(type_of<bfloat16_t>() == BFloat(16));
  CHECK(Float(16) != BFloat(16));
  CHECK(BFloat(16).is_float());
  CHECK(Float(32).can_represent(BFloat(16)));
  CHECK_FALSE(Float(16).can_represent(BFloat(16)));
  CHECK_FALSE(BFloat(16).can_represent(Float(16)));

  ImageParam h(Float(16), 1, "h"), b(BFloat(16), 1, "b");
  Var x("x");
  CHECK((h(x) + b(x)).type() == Float(32)); // where both are held exactly
  CHECK((h(x) + 1).type() == Float(16));     // literals take the other operand's type
  CHECK((b(x) * 0.5f).type() == BFloat(16));
  CHECK((h(x) + cast(Float(64), x)).type() == Float(64));
  CHECK(Expr(float16_t(0.1)).type() == Float(16));
  CHECK(Expr(bfloat16_t(0.1)).type() == BFloat(16));
  CHECK((b(x) * bfloat16_t(3.0)).type() == BFloat(16));

  // A pointer other than an IR node's does not become an Expr (through bool, as it once did).
  static_assert(!std::is_constructible_v<Expr, const char *>);
  static_assert(!std::is_constructible_v<Expr, const int *>);
  static_assert(std::is_convertible_v<const ir::FloatImm *, Expr>);
  CHECK_THROWS_WITH(cast(Float(8), x), Catch::Contains("cast to float8") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(cast(BFloat(32), x), Catch::Contains("cast to bfloat32"));
  CHECK_THROWS_WITH(reinterpret(Int(12), x), Catch::Contains("reinterpret as int12"));
  CHECK_THROWS_WITH(ImageParam(Float(128), 2, "wide"), Catch::Contains("ImageParam wide of type float128"));
}

TEMPLATE_TEST_CASE("Arithmetic on 16-bit floats rounds once per operation, as plain C++ does, with each schedule",
                   "[cpu]", float16_t, bfloat16_t) {
  const uint32_t seed = fresh_seed();
  for (int schedule = 0; schedule < 3; ++schedule) {
    Float16Arithmetic<TestType> program;
    Var xo("xo"), xi("xi");
    if (schedule == 1)
      program.f.vectorize(program.x, 8);
    if (schedule == 2)
      program.f.split(program.x, xo, xi, 64).parallel(xo).vectorize(xi, 16);
    Pipeline p(program.f);
    INFO("schedule " << schedule);
    program.check(p, Target("host-strict_float"), 1000, seed + schedule);
  }
}

TEMPLATE_TEST_CASE("Conversions to and from 16-bit floats round to nearest, ties to even", "[cpu]", float16_t,
                   bfloat16_t) {
  const uint32_t seed = fresh_seed();
  for (bool vectorized : {false, true}) {
    Float16Conversions<TestType> program;
    if (vectorized) {
      program.to.vectorize(program.x, 8);
      program.from.vectorize(program.x, 16);
    }
    Pipeline to(program.to), from(program.from);
    INFO("vectorized " << vectorized);
    program.check(to, from, Target("host-strict_float"), 2000, seed);
  }
}

TEMPLATE_TEST_CASE("A stencil and a reduction stored in a 16-bit float type", "[cpu]", float16_t, bfloat16_t) {
  const Type t = type_of<TestType>();
  ImageParam in(t, 1, "in");
  Var x("x");
  RDom r(0, 8, "r");
  Func pairs("pairs"), blur("blur"), total("total");
  pairs(x) = in(x) + in(x + 1);
  blur(x) = pairs(x) + pairs(x + 1) * 0.5f;
  total(x) = cast(t, 0);
  total(x) += blur(x * 8 + r) - in(x);
  pairs.compute_root().vectorize(x, 8);
  blur.compute_root();
  total.update().vectorize(x, 4);

  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  const int n = 256;
  Buffer<TestType> input(n * 8 + 2);
  for (int i = 0; i < n * 8 + 2; ++i)
    input(i) = random_finite<TestType>(rng, 1000);
  in.set(input);
  Buffer<TestType> out(n);
  Pipeline p(total);
  p.compile_jit(Target("host-strict_float"));
  p.realize(out);
  check_same_values<TestType>(out, [&](int i) {
    auto v = [&](int j) { return value_of(input(j)); };
    auto pair = [&](int j) { return value_of(TestType(v(j) + v(j + 1))); };
    TestType sum(0.0);
    for (int k = 0; k < 8; ++k) {
      const int j = i * 8 + k;
      const TestType b(pair(j) + value_of(TestType(pair(j + 1) * 0.5)));
      sum = TestType(value_of(sum) + value_of(TestType(value_of(b) - v(i))));
    }
    return sum;
  }, "total");
}

TEMPLATE_TEST_CASE("Params and constants of 16-bit float types, with and without strict_float", "[cpu]", float16_t,
                   bfloat16_t) {
  const Type t = type_of<TestType>();
  Param<TestType> scale("scale");
  Var x("x");
  Func f("f");
  f(x) = cast(t, x) * scale + cast(t, 1.0 / 3) + sqrt(cast(t, 2));
  f.vectorize(x, 8);
  scale.set(TestType(-2.71828));
  CHECK(scale.get().bits == TestType(-2.71828).bits);
  for (const char *target : {"host-strict_float", "host"}) {
    INFO(target);
    Pipeline p(f);
    p.compile_jit(Target(target));
    Buffer<TestType> out(300);
    p.realize(out);
    // Without strict_float the product and the first sum may round once.
    const int steps = std::string(target) == "host" ? 1 : 0;
    check_same_values<TestType>(out, [&](int i) {
      const double scaled = value_of(TestType(value_of(TestType(double(i))) * value_of(TestType(-2.71828))));
      return TestType(value_of(TestType(scaled + value_of(TestType(1.0 / 3)))) + value_of(TestType(std::sqrt(2.0))));
    }, "f", steps);
  }
}

TEST_CASE("saturating_cast to a 16-bit float clamps to its largest finite value", "[cpu]") {
  ImageParam f64in(Float(64), 1, "f64in"), i32in(Int(32), 1, "i32in");
  Var x("x");
  Func f("f");
  f(x) = Tuple(saturating_cast(Float(16), f64in(x)), saturating_cast(Float(16), i32in(x)),
               saturating_cast(BFloat(16), f64in(x)), saturating_cast(Float(16), cast(BFloat(16), f64in(x))),
               saturating_cast(Float(32), f64in(x)));
  const double values[] = {1e300, -1e300, 70000, -65519, 1.5, -0.0, NAN, 3.4e38};
  const int32_t ints[] = {70000, -70000, 65504, 65519, 65535, -3, 0, 2147483647};
  Buffer<double> d(8);
  Buffer<int32_t> i(8);
  for (int k = 0; k < 8; ++k) {
    d(k) = values[k];
    i(k) = ints[k];
  }
  f64in.set(d);
  i32in.set(i);
  Buffer<float16_t> fromDouble(8), fromInt(8), fromBFloat(8);
  Buffer<bfloat16_t> bfromDouble(8);
  Buffer<float> f32fromDouble(8);
  Pipeline p(f);
  p.compile_jit(Target("host-strict_float"));
  p.realize({fromDouble, fromInt, bfromDouble, fromBFloat, f32fromDouble});
  const double largest16 = 65504, largestBF = bfloat16_t::from_bits(0x7f7f).to_double();
  auto clamped = [](double v, double m) { return std::isnan(v) ? v : std::max(-m, std::min(m, v)); };
  for (int k = 0; k < 8; ++k) {
    INFO(values[k] << ", " << ints[k]);
    CHECK(same_value(fromDouble(k), float16_t(clamped(values[k], largest16))));
    CHECK(same_value(fromInt(k), float16_t(clamped(ints[k], largest16))));
    CHECK(same_value(bfromDouble(k), bfloat16_t(clamped(values[k], largestBF))));
    CHECK(same_value(fromBFloat(k), float16_t(clamped(bfloat16_t(values[k]).to_double(), largest16))));
    CHECK(same_value(f32fromDouble(k), static_cast<float>(clamped(values[k], std::numeric_limits<float>::max()))));
  }
}
