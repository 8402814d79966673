#ifndef PTXJIT_TEST_STRICTFLOATPROGRAMS_H
#define PTXJIT_TEST_STRICTFLOATPROGRAMS_H

// Float expressions that fast math may rewrite and strict_float must compute as written, with
// plain C++ references, shared by the [cpu] and [gpu] tests, for float and double. Each is a lane
// of one Func, so one compile covers all of them; results are compared bit for bit (any NaN
// matches any NaN).

#include "TestUtil.h"
#include "ptxjit.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

namespace ptxjit::test {

template <typename T> struct StrictFloatForm {
  const char *name;
  std::function<Expr(Expr)> expression;
  std::function<T(T)> reference;
};

template <typename T> std::vector<StrictFloatForm<T>> strict_float_forms() {
  const T zero = T(0), negativeZero = -T(0), one = T(1);
  // Half an ulp of 1: 1 + h rounds back to 1 (a tie, to even), 1 + 2h does not.
  const T h = std::numeric_limits<T>::epsilon() / 2;
  auto flag = [](bool b) { return b ? T(1) : T(0); };
  auto c = [](T v) { return Expr(v); };
  return {
      {"x - x", [](Expr e) { return e - e; }, [](T v) { return v - v; }},
      {"x * 0", [=](Expr e) { return e * c(zero); }, [=](T v) { return v * zero; }},
      {"0 * x", [=](Expr e) { return c(zero) * e; }, [=](T v) { return zero * v; }},
      {"x / x", [](Expr e) { return e / e; }, [](T v) { return v / v; }},
      {"x == x", [=](Expr e) { return select(e == e, c(one), c(zero)); }, [=](T v) { return flag(v == v); }},
      {"x != x", [=](Expr e) { return select(e != e, c(one), c(zero)); }, [=](T v) { return flag(v != v); }},
      {"x <= x", [=](Expr e) { return select(e <= e, c(one), c(zero)); }, [=](T v) { return flag(v <= v); }},
      {"x * x >= 0", [=](Expr e) { return select(e * e >= c(zero), c(one), c(zero)); },
       [=](T v) { return flag(v * v >= zero); }},
      {"(x + 1) - x", [=](Expr e) { return (e + c(one)) - e; }, [=](T v) { return (v + one) - v; }},
      {"(x + x) - x", [](Expr e) { return (e + e) - e; }, [](T v) { return (v + v) - v; }},
      {"2 * x - x", [=](Expr e) { return c(T(2)) * e - e; }, [](T v) { return T(2) * v - v; }},
      {"(x - 0.5) + 0.5", [=](Expr e) { return (e - c(T(0.5))) + c(T(0.5)); }, [](T v) { return (v - T(0.5)) + T(0.5); }},
      {"(x + h) + h", [=](Expr e) { return (e + c(h)) + c(h); }, [=](T v) { return (v + h) + h; }},
      {"(x * 3) * 5", [=](Expr e) { return (e * c(T(3))) * c(T(5)); }, [](T v) { return (v * T(3)) * T(5); }},
      {"(x * 2) / 2", [=](Expr e) { return (e * c(T(2))) / c(T(2)); }, [](T v) { return (v * T(2)) / T(2); }},
      {"x / 3", [=](Expr e) { return e / c(T(3)); }, [](T v) { return v / T(3); }},
      {"x * x + x", [](Expr e) { return e * e + e; }, [](T v) { return v * v + v; }},
      {"-(x - 1)", [=](Expr e) { return -(e - c(one)); }, [=](T v) { return -(v - one); }},
      {"0 - x", [=](Expr e) { return c(zero) - e; }, [=](T v) { return zero - v; }},
      {"min(x, 0)", [=](Expr e) { return min(e, c(zero)); }, [=](T v) { return v < zero ? v : zero; }},
      {"max(-0, x)", [=](Expr e) { return max(c(negativeZero), e); },
       [=](T v) { return negativeZero > v ? negativeZero : v; }},
      {"sqrt(x)", [](Expr e) { return sqrt(e); }, [](T v) { return std::sqrt(v); }},
  };
}

/// Values where the rewrites differ: signed zeros, one, infinities, NaN, the largest and smallest
/// magnitudes, and 2 / epsilon, where adding one rounds.
template <typename T> std::vector<T> strict_float_values() {
  using limits = std::numeric_limits<T>;
  return {T(0),          -T(0),         T(1),           T(1.5),      T(-2),
          limits::infinity(), -limits::infinity(), limits::quiet_NaN(), T(1e30), limits::max(),
          -limits::max(), limits::denorm_min(), limits::min(), T(2) / limits::epsilon()};
}

/// A Func of (x, form): form k of `p(x)`, for forms.size() forms.
template <typename T> Func strict_float_func(const std::vector<StrictFloatForm<T>> &forms, ImageParam &p, Var x, Var form) {
  Expr value = forms.back().expression(p(x));
  for (int k = int(forms.size()) - 2; k >= 0; --k)
    value = select(form == k, forms[k].expression(p(x)), value);
  Func f("strict_forms");
  f(x, form) = value;
  f.bound(form, 0, int(forms.size())).unroll(form);
  return f;
}

/// Fails a check for each value of `out` (x, form) that differs from the reference of `in`.
template <typename T>
void check_strict_float_forms(const std::vector<StrictFloatForm<T>> &forms, const Buffer<T> &in, const Buffer<T> &out) {
  int mismatches = 0;
  for (size_t k = 0; k < forms.size(); ++k)
    for (int i = 0; i < in.width(); ++i) {
      const T expected = forms[k].reference(in(i)), got = out(i, int(k));
      const bool same = std::memcmp(&expected, &got, sizeof(T)) == 0 || (std::isnan(expected) && std::isnan(got));
      if (!same && ++mismatches <= 8)
        FAIL_CHECK(forms[k].name << " of x = " << in(i) << " gave " << got << ", expected " << expected);
    }
  CHECK(mismatches == 0);
}

} // namespace ptxjit::test

#endif
