#ifndef PTXJIT_TEST_STRICTFLOATPROGRAMS_H
#define PTXJIT_TEST_STRICTFLOATPROGRAMS_H

// Float expressions that fast math may rewrite and strict_float must compute as written, with
// plain C++ references, shared by the [cpu] and [gpu] tests. Each is a lane of one Func, so one
// compile covers all of them; results are compared bit for bit (any NaN matches any NaN).

#include "TestUtil.h"
#include "ptxjit.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace ptxjit::test {

struct StrictFloatForm {
  const char *name;
  std::function<Expr(Expr)> expression;
  std::function<float(float)> reference;
};

inline std::vector<StrictFloatForm> strict_float_forms() {
  auto flag = [](bool b) { return b ? 1.0f : 0.0f; };
  return {
      {"x - x", [](Expr e) { return e - e; }, [](float v) { return v - v; }},
      {"x * 0", [](Expr e) { return e * 0.0f; }, [](float v) { return v * 0.0f; }},
      {"0 * x", [](Expr e) { return 0.0f * e; }, [](float v) { return 0.0f * v; }},
      {"x / x", [](Expr e) { return e / e; }, [](float v) { return v / v; }},
      {"x == x", [](Expr e) { return select(e == e, 1.0f, 0.0f); }, [=](float v) { return flag(v == v); }},
      {"x != x", [](Expr e) { return select(e != e, 1.0f, 0.0f); }, [=](float v) { return flag(v != v); }},
      {"x <= x", [](Expr e) { return select(e <= e, 1.0f, 0.0f); }, [=](float v) { return flag(v <= v); }},
      {"x * x >= 0", [](Expr e) { return select(e * e >= 0.0f, 1.0f, 0.0f); }, [=](float v) { return flag(v * v >= 0.0f); }},
      {"(x + 1) - x", [](Expr e) { return (e + 1.0f) - e; }, [](float v) { return (v + 1.0f) - v; }},
      {"(x + x) - x", [](Expr e) { return (e + e) - e; }, [](float v) { return (v + v) - v; }},
      {"2 * x - x", [](Expr e) { return 2.0f * e - e; }, [](float v) { return 2.0f * v - v; }},
      {"(x - 0.5) + 0.5", [](Expr e) { return (e - 0.5f) + 0.5f; }, [](float v) { return (v - 0.5f) + 0.5f; }},
      {"(x + 1e-8) + 1e-8", [](Expr e) { return (e + 1e-8f) + 1e-8f; }, [](float v) { return (v + 1e-8f) + 1e-8f; }},
      {"(x * 3) * 5", [](Expr e) { return (e * 3.0f) * 5.0f; }, [](float v) { return (v * 3.0f) * 5.0f; }},
      {"(x * 2) / 2", [](Expr e) { return (e * 2.0f) / 2.0f; }, [](float v) { return (v * 2.0f) / 2.0f; }},
      {"x / 3", [](Expr e) { return e / 3.0f; }, [](float v) { return v / 3.0f; }},
      {"x * x + x", [](Expr e) { return e * e + e; }, [](float v) { return v * v + v; }},
      {"-(x - 1)", [](Expr e) { return -(e - 1.0f); }, [](float v) { return -(v - 1.0f); }},
      {"0 - x", [](Expr e) { return 0.0f - e; }, [](float v) { return 0.0f - v; }},
      {"min(x, 0)", [](Expr e) { return min(e, 0.0f); }, [](float v) { return v < 0.0f ? v : 0.0f; }},
      {"max(-0, x)", [](Expr e) { return max(-0.0f, e); }, [](float v) { return -0.0f > v ? -0.0f : v; }},
      {"sqrt(x)", [](Expr e) { return sqrt(e); }, [](float v) { return std::sqrt(v); }},
  };
}

/// Values where the rewrites differ: signed zeros, infinities, NaN, the largest and smallest
/// magnitudes.
inline std::vector<float> strict_float_values() {
  return {0.0f, -0.0f, 1.5f, -2.0f, INFINITY, -INFINITY, NAN, 1e30f, 3e38f, -3e38f, 1e-45f, 1.17549435e-38f, 16777216.0f};
}

/// A Func of (x, form): form k of `p(x)`, for forms.size() forms.
inline Func strict_float_func(const std::vector<StrictFloatForm> &forms, ImageParam &p, Var x, Var form) {
  Expr value = forms.back().expression(p(x));
  for (int k = int(forms.size()) - 2; k >= 0; --k)
    value = select(form == k, forms[k].expression(p(x)), value);
  Func f("strict_forms");
  f(x, form) = value;
  f.bound(form, 0, int(forms.size())).unroll(form);
  return f;
}

/// Fails a check for each value of `out` (x, form) that differs from the reference of `in`.
inline void check_strict_float_forms(const std::vector<StrictFloatForm> &forms, const Buffer<float> &in,
                                     const Buffer<float> &out) {
  int mismatches = 0;
  for (size_t k = 0; k < forms.size(); ++k)
    for (int i = 0; i < in.width(); ++i) {
      const float expected = forms[k].reference(in(i)), got = out(i, int(k));
      const bool same = std::memcmp(&expected, &got, sizeof(float)) == 0 || (std::isnan(expected) && std::isnan(got));
      if (!same && ++mismatches <= 8)
        FAIL_CHECK(forms[k].name << " of x = " << in(i) << " gave " << got << ", expected " << expected);
    }
  CHECK(mismatches == 0);
}

} // namespace ptxjit::test

#endif
