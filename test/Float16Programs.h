#ifndef PTXJIT_TEST_FLOAT16PROGRAMS_H
#define PTXJIT_TEST_FLOAT16PROGRAMS_H

// Programs on Float(16) and BFloat(16) values, with their plain C++ references, shared by the
// [cpu], [ptx] and [gpu] tests. With strict_float each operation of a 16-bit type rounds once to
// it, so the references compute in double (which rounds +, -, *, / and sqrt of 16-bit values as
// once) and round with float16_t / bfloat16_t; results are compared bit for bit.

#include "TestUtil.h"
#include "ptxjit.h"

#include <cstring>
#include <functional>
#include <limits>

namespace ptxjit::test {

template <typename T> constexpr bool is_16_bit_float_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

template <typename T> double value_of(T v) {
  if constexpr (is_16_bit_float_v<T>)
    return v.to_double();
  else
    return static_cast<double>(v);
}


/// Random finite values of the 16-bit type T (every exponent, subnormals and zeros included),
/// no larger in magnitude than `largest`.
template <typename T> T random_finite(std::mt19937 &rng, double largest = 1e300) {
  while (true) {
    T v = T::from_bits(static_cast<uint16_t>(rng()));
    if (std::isfinite(v.to_double()) && std::fabs(v.to_double()) <= largest)
      return v;
  }
}

/// Whether a result equals its reference: the same bits, or both NaN; for a 16-bit float with
/// `steps`, at most that many of the type's steps away (fast math may round a * b + c once).
template <typename T> bool same_value(T got, T expected, int steps = 0) {
  const double g = value_of(got), e = value_of(expected);
  if (std::isnan(g) || std::isnan(e))
    return std::isnan(g) && std::isnan(e);
  if constexpr (is_16_bit_float_v<T>) {
    const double step = std::fabs(T::from_bits(static_cast<uint16_t>(expected.bits + 1)).to_double() - e);
    if (steps > 0 && std::isfinite(g) && std::isfinite(e) && std::fabs(g - e) <= steps * step)
      return true;
  }
  if constexpr (std::is_floating_point_v<T>)
    return std::memcmp(&got, &expected, sizeof(T)) == 0;
  else if constexpr (is_16_bit_float_v<T>)
    return got.bits == expected.bits;
  else
    return got == expected;
}

template <typename T>
void check_same_values(const Buffer<T> &actual, const std::function<T(int)> &reference, const char *what, int steps = 0) {
  int mismatches = 0;
  for (int i = 0; i < actual.dim(0).extent(); ++i) {
    T expected = reference(i), got = actual(i);
    if (!same_value(got, expected, steps) && ++mismatches <= 4)
      FAIL_CHECK(what << " at " << i << ": expected " << value_of(expected) << ", got " << value_of(got));
  }
  CHECK(mismatches == 0);
}

/// Arithmetic, comparisons, math and constants on T, one output value of the Tuple each.
template <typename T> struct Float16Arithmetic {
  static constexpr int Outputs = 9;
  ImageParam a{type_of<T>(), 1, "a"}, b{type_of<T>(), 1, "b"};
  Param<T> k{"k"};
  Var x{"x"};
  Func f{"f"};

  Float16Arithmetic() {
    Expr ax = a(x), bx = b(x);
    f(x) = Tuple(std::vector<Expr>{ax + bx, ax - bx, ax * bx, ax / bx, min(ax, bx), select(ax < bx, max(ax, bx), -ax),
                  sqrt(abs(ax)), ax * k + 0.1f, floor(ax * 4)});
  }

  static T reference(int value, T av, T bv, T kv) {
    const double a = value_of(av), b = value_of(bv), k = value_of(kv);
    switch (value) {
    case 0: return T(a + b);
    case 1: return T(a - b);
    case 2: return T(a * b);
    case 3: return T(a / b);
    case 4: return T(std::min(a, b));
    case 5: return T(a < b ? std::max(a, b) : -a);
    case 6: return T(std::sqrt(std::fabs(a)));
    case 7: return T(value_of(T(a * k)) + value_of(T(0.1)));
    default: return T(std::floor(value_of(T(a * 4))));
    }
  }

  /// Realizes on `n` fresh random values with `target` and checks every output.
  void check(Pipeline &p, const Target &target, int n, uint32_t seed) {
    INFO("seed " << seed << ", " << to_string(type_of<T>()) << ", target " << target.to_string());
    std::mt19937 rng(seed);
    Buffer<T> ab(n), bb(n);
    for (int i = 0; i < n; ++i) {
      ab(i) = random_finite<T>(rng);
      bb(i) = random_finite<T>(rng);
    }
    const T kv = random_finite<T>(rng, 100);
    a.set(ab);
    b.set(bb);
    k.set(kv);
    std::vector<Buffer<T>> outs;
    std::vector<RawBuffer> raw;
    for (int v = 0; v < Outputs; ++v) {
      outs.emplace_back(n);
      raw.push_back(outs.back());
    }
    p.realize(raw);
    for (int v = 0; v < Outputs; ++v) {
      if (outs[v].device_dirty())
        copy_to_host(outs[v]);
      check_same_values<T>(outs[v], [&](int i) { return reference(v, ab(i), bb(i), kv); },
                           ("value " + std::to_string(v)).c_str());
    }
  }
};

/// Conversions to T from float32 and float64 at and beside T's ties, from integers, and from T
/// to integers, wider floats and the other 16-bit type.
template <typename T> struct Float16Conversions {
  using Other = std::conditional_t<std::is_same_v<T, float16_t>, bfloat16_t, float16_t>;
  ImageParam f32in{Float(32), 1, "f32in"}, f64in{Float(64), 1, "f64in"}, i32in{Int(32), 1, "i32in"},
      i64in{Int(64), 1, "i64in"}, half{type_of<T>(), 1, "half"};
  Var x{"x"};
  Func to{"to"}, from{"from"};

  Float16Conversions() {
    const Type t = type_of<T>();
    to(x) = Tuple(std::vector<Expr>{cast(t, f32in(x)), cast(t, f64in(x)), cast(t, i32in(x)), cast(t, i64in(x)),
                   cast(t, cast(UInt(16), i32in(x))), cast(t, cast(Int(8), i32in(x)))});
    Expr h = half(x);
    from(x) = Tuple(std::vector<Expr>{cast(Int(32), h), cast(Float(32), h), cast(Float(64), h), cast(type_of<Other>(), h),
                     cast(UInt(8), min(abs(h), 255)), cast(Bool(), h)});
  }

  struct Inputs {
    Buffer<float> f32;
    Buffer<double> f64;
    Buffer<int32_t> i32;
    Buffer<int64_t> i64;
    Buffer<T> half;
  };

  // Ties between neighbouring T values, exact in float32, and values a little to either side.
  static Inputs inputs(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    Inputs in{Buffer<float>(n), Buffer<double>(n), Buffer<int32_t>(n), Buffer<int64_t>(n), Buffer<T>(n)};
    for (int i = 0; i < n; ++i) {
      T v = random_finite<T>(rng);
      T next = T::from_bits(static_cast<uint16_t>(v.bits + 1));
      double tie = std::isfinite(next.to_double()) ? (v.to_double() + next.to_double()) / 2 : v.to_double();
      const double nudge[] = {0.0, 0.0, 1e-9, -1e-9, 1e-30};
      const double d = tie * (1 + nudge[i % 5]) + (i % 7 == 0 ? std::ldexp(1.0, -40) : 0.0);
      in.f64(i) = i % 11 == 0 ? std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), int(rng() % 300) - 150) : d;
      in.f32(i) = i % 3 == 0 ? static_cast<float>(tie) : static_cast<float>(d);
      in.i32(i) = static_cast<int32_t>(rng()) >> (rng() % 31);
      in.i64(i) = static_cast<int64_t>((uint64_t(rng()) << 32) | rng()) >> (11 + rng() % 50); // within 2^53
      in.half(i) = random_finite<T>(rng, 60000);
    }
    return in;
  }

  void check(Pipeline &toPipeline, Pipeline &fromPipeline, const Target &target, int n, uint32_t seed) {
    INFO("seed " << seed << ", " << to_string(type_of<T>()) << ", target " << target.to_string());
    Inputs in = inputs(n, seed);
    f32in.set(in.f32);
    f64in.set(in.f64);
    i32in.set(in.i32);
    i64in.set(in.i64);
    half.set(in.half);
    std::vector<Buffer<T>> tos;
    for (int v = 0; v < 6; ++v)
      tos.emplace_back(n);
    toPipeline.realize(std::vector<RawBuffer>(tos.begin(), tos.end()));
    Buffer<int32_t> asInt(n);
    Buffer<float> asFloat(n);
    Buffer<double> asDouble(n);
    Buffer<Other> asOther(n);
    Buffer<uint8_t> asByte(n);
    Buffer<bool> asBool(n);
    fromPipeline.realize({asInt, asFloat, asDouble, asOther, asByte, asBool});
    for (RawBuffer *b : std::initializer_list<RawBuffer *>{&tos[0], &tos[1], &tos[2], &tos[3], &tos[4], &tos[5], &asInt,
                                                           &asFloat, &asDouble, &asOther, &asByte, &asBool})
      if (b->device_dirty())
        copy_to_host(*b);
    check_same_values<T>(tos[0], [&](int i) { return T(double(in.f32(i))); }, "from float32");
    check_same_values<T>(tos[1], [&](int i) { return T(in.f64(i)); }, "from float64");
    check_same_values<T>(tos[2], [&](int i) { return T(double(in.i32(i))); }, "from int32");
    check_same_values<T>(tos[3], [&](int i) { return T(double(in.i64(i))); }, "from int64");
    check_same_values<T>(tos[4], [&](int i) { return T(double(uint16_t(in.i32(i)))); }, "from uint16");
    check_same_values<T>(tos[5], [&](int i) { return T(double(int8_t(in.i32(i)))); }, "from int8");
    auto h = [&](int i) { return in.half(i).to_double(); };
    check_same_values<int32_t>(asInt, [&](int i) { return int32_t(h(i)); }, "to int32");
    check_same_values<float>(asFloat, [&](int i) { return float(h(i)); }, "to float32");
    check_same_values<double>(asDouble, [&](int i) { return h(i); }, "to float64");
    check_same_values<Other>(asOther, [&](int i) { return Other(h(i)); }, "to the other 16-bit float");
    check_same_values<uint8_t>(asByte, [&](int i) { return uint8_t(std::min(std::fabs(h(i)), 255.0)); }, "to uint8");
    check_same_values<bool>(asBool, [&](int i) { return h(i) != 0; }, "to bool");
  }
};

} // namespace ptxjit::test

#endif
