// Halide's apps (github.com/halide/Halide, apps/), written as their generators write them and
// scheduled as their hand-written CPU schedules do, each checked against plain C++ on fresh
// random data. They are the programs Halide users write every day: boundary conditions, LUTs,
// RDoms over data-dependent extents, slid and folded storage, vectorized and parallel loops.

#include "TestUtil.h"
#include "ptxjit.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

/// apps/max_filter: a circular max filter of radius `radius` over each channel, from max filters
/// of heights 2^k (an update over an RDom whose extent is the input's height) and a horizontal
/// max over a per-column filter height.
struct MaxFilter {
  ImageParam Input{Float(32), 3, "max_filter_input"};
  Func VertLog{"vert_log"}, SliceForRadius{"slice_for_radius"}, Vert{"vert"}, FilterHeight{"filter_height"};
  Func Output{"max_filter"};
  Var x{"x"}, y{"y"}, c{"c"}, t{"t"};
  RDom R, Dy, Dx;

  explicit MaxFilter(int radius) {
    Func input = BoundaryConditions::repeat_edge(
        Input, {{Input.dim(0).min(), Input.dim(0).extent()}, {Input.dim(1).min(), Input.dim(1).extent()}});
    const int slices = static_cast<int>(std::ceil(std::log(radius) / std::log(2.0f))) + 1;
    VertLog(x, y, c, t) = input(x, y, c);
    R = RDom(-radius, Input.height() + radius, 1, slices - 1);
    VertLog(x, R.x, c, R.y) =
        max(VertLog(x, R.x, c, R.y - 1), VertLog(x, R.x + clamp((1 << (R.y - 1)), 0, radius * 2), c, R.y - 1));
    SliceForRadius(t) = cast<int>(floor(log(2 * t + 1) / logf(2)));
    Expr slice = clamp(SliceForRadius(t), 0, slices);
    Vert(x, y, c, t) = max(VertLog(x, y - t, c, slice), VertLog(x, y + t + 1 - clamp(1 << slice, 0, 2 * radius), c, slice));
    Dy = RDom(0, radius + 1);
    FilterHeight(x) = sum(select(x * x + Dy * Dy < (radius + 0.25f) * (radius + 0.25f), 1, 0));
    Dx = RDom(-radius, 2 * radius + 1);
    Output(x, y, c) = maximum(Vert(x + Dx, y, c, clamp(FilterHeight(Dx), 0, radius + 1)));
  }

  /// The app's CPU schedule: 256-column strips of each channel in parallel.
  void scheduleForCPU() {
    Var tx("tx"), task("task");
    SliceForRadius.compute_root();
    FilterHeight.compute_root();
    Output.compute_root().split(x, tx, x, 256).reorder(x, y, c, tx).fuse(c, tx, task).parallel(task).vectorize(x, 8);
    VertLog.compute_at(Output, task);
    VertLog.vectorize(x, 8);
    VertLog.update().reorder(x, R.x, R.y, c).vectorize(x, 8);
    Vert.compute_at(Output, y).vectorize(x, 8);
  }
};

/// The same filter in plain C++, computed as written: each Func a function of its arguments.
std::vector<float> maxFilterReference(const Buffer<float> &in, int radius) {
  const int w = in.width(), h = in.height(), channels = in.channels();
  const int slices = static_cast<int>(std::ceil(std::log(radius) / std::log(2.0f))) + 1;
  auto input = [&](int i, int j, int k) { return in(std::clamp(i, 0, w - 1), std::clamp(j, 0, h - 1), k); };
  // vert_log(x, y, c, t): the updates reach rows [-radius, h - 1] of slices 1 .. slices - 1, each
  // from the finished slice before it.
  std::function<float(int, int, int, int)> vertLog = [&](int i, int j, int k, int slice) -> float {
    if (slice < 1 || slice > slices - 1 || j < -radius || j > h - 1)
      return input(i, j, k);
    return std::max(vertLog(i, j, k, slice - 1), vertLog(i, j + std::clamp(1 << (slice - 1), 0, 2 * radius), k, slice - 1));
  };
  auto sliceForRadius = [](int r) { return static_cast<int>(std::floor(std::log(static_cast<float>(2 * r + 1)) / logf(2))); };
  auto vert = [&](int i, int j, int k, int r) {
    int slice = std::clamp(sliceForRadius(r), 0, slices);
    return std::max(vertLog(i, j - r, k, slice), vertLog(i, j + r + 1 - std::clamp(1 << slice, 0, 2 * radius), k, slice));
  };
  auto filterHeight = [&](int i) {
    int n = 0;
    for (int dy = 0; dy <= radius; ++dy)
      n += i * i + dy * dy < (radius + 0.25f) * (radius + 0.25f) ? 1 : 0;
    return n;
  };
  std::vector<float> out(static_cast<size_t>(w) * h * channels);
  for (int k = 0; k < channels; ++k)
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        float m = -INFINITY;
        for (int dx = -radius; dx <= radius; ++dx)
          m = std::max(m, vert(i + dx, j, k, std::clamp(filterHeight(dx), 0, radius + 1)));
        out[(static_cast<size_t>(k) * h + j) * w + i] = m;
      }
  return out;
}

} // namespace

TEST_CASE("Halide's max filter under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 300, h = 41, channels = 3, radius = 6;
  Buffer<float> in(w, h, channels);
  fill_random(in, seed, 0.0, 1.0);
  MaxFilter app(radius);
  app.scheduleForCPU();
  app.Input.set(in);
  const Buffer<float> out = app.Output.realize<float>({w, h, channels}, Target("host"));
  const std::vector<float> expected = maxFilterReference(in, radius);
  check_against(out, [&](const std::vector<int> &p) { return expected[(static_cast<size_t>(p[2]) * h + p[1]) * w + p[0]]; }, 0);
}
