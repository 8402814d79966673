// Halide's apps (github.com/halide/Halide, apps/) under their hand-written CPU schedules, each
// checked against plain C++ on fresh random data (HalideAppPrograms.h).
// They are the programs Halide users write every day: boundary conditions, LUTs, RDoms over
// data-dependent extents, slid and folded storage, vectorized and parallel loops.

#include "HalideAppPrograms.h"
#include "TestUtil.h"
#include "ptxjit.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace ptxjit;
using namespace ptxjit::test;

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

TEST_CASE("Halide's unsharp mask under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 203, h = 77;
  Buffer<float> in(w, h, 3);
  fill_random(in, seed, 0.25, 1.0);
  Unsharp app;
  app.scheduleForCPU();
  app.Input.set(in);
  const Buffer<float> out = app.Output.realize<float>({w, h, 3}, Target("host"));
  check_against(out, [&](const std::vector<int> &p) { return unsharpReference(in, p[0], p[1], p[2]); }, 1e-4);
}

TEST_CASE("Halide's IIR blur under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 96, h = 64;
  Buffer<float> in(w, h, 3);
  fill_random(in, seed, 0.0, 1.0);
  IirBlur app(w, h);
  app.Input.set(in);
  app.Alpha.set(0.1f);
  const Buffer<float> out = app.Output.realize<float>({w, h, 3}, Target("host"));
  std::vector<float> values(in.data(), in.data() + static_cast<size_t>(w) * h * 3);
  const std::vector<float> expected = iirPassReference(iirPassReference(values, w, h, 0.1f), h, w, 0.1f);
  check_against(out, [&](const std::vector<int> &p) { return expected[(static_cast<size_t>(p[2]) * h + p[1]) * w + p[0]]; }, 1e-5);
}

TEST_CASE("Halide's non-local means under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  // Its patch distances are hoisted to the parallel row of tiles (hoist_storage) and computed in
  // each tile. The two Funcs the app names "d" take distinct names here; the output's
  // dim(2).set_bounds(0, 3) is bound(c, 0, 3).
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 50, h = 37, patchSize = 5, searchArea = 5;
  const float sigma = 0.12f;
  ImageParam input(Float(32), 3, "nl_means_input");
  Param<int> patch("patch_size"), search("search_area");
  Param<float> sigmaParam("sigma");
  Var x("x"), y("y"), c("c"), dx("dx"), dy("dy");
  Expr invSigmaSq = -1.0f / (sigmaParam * sigmaParam * patch * patch);
  Func clamped = BoundaryConditions::repeat_edge(input);
  Func dc("dc");
  dc(x, y, dx, dy, c) = pow(clamped(x, y, c) - clamped(x + dx, y + dy, c), 2);
  RDom channels(0, 3);
  Func d("d");
  d(x, y, dx, dy) = sum(dc(x, y, dx, dy, channels));
  RDom patchDom(-(patch / 2), patch);
  Func blurDY("blur_d_y");
  blurDY(x, y, dx, dy) = sum(d(x, y + patchDom, dx, dy));
  Func blurD("blur_d");
  blurD(x, y, dx, dy) = sum(blurDY(x + patchDom, y, dx, dy));
  Func weight("w");
  weight(x, y, dx, dy) = fast_exp(blurD(x, y, dx, dy) * invSigmaSq);
  Func withAlpha("clamped_with_alpha");
  withAlpha(x, y, c) = mux(c, {clamped(x, y, 0), clamped(x, y, 1), clamped(x, y, 2), 1.0f});
  RDom s(-(search / 2), search, -(search / 2), search);
  Func total("non_local_means_sum");
  total(x, y, c) += weight(x, y, s.x, s.y) * withAlpha(x + s.x, y + s.y, c);
  Func out("non_local_means");
  out(x, y, c) = clamp(total(x, y, c) / total(x, y, 3), 0.0f, 1.0f);

  Var tx("tx"), ty("ty");
  out.bound(c, 0, 3);
  out.compute_root().reorder(c, x, y).tile(x, y, tx, ty, x, y, 16, 8).parallel(ty).vectorize(x, 8);
  blurDY.compute_at(out, tx).hoist_storage(out, ty).reorder(y, x).vectorize(x, 8);
  d.compute_at(out, tx).hoist_storage(out, ty).vectorize(x, 8);
  total.compute_at(out, x).reorder(c, x, y).bound(c, 0, 4).unroll(c).vectorize(x, 8);
  total.update(0).reorder(c, x, y, s.x, s.y).unroll(c).vectorize(x, 8);
  blurD.compute_at(total, x).vectorize(x, 8);

  Buffer<float> image(w, h, 3);
  fill_random(image, seed, 0.0, 1.0);
  input.set(image);
  patch.set(patchSize);
  search.set(searchArea);
  sigmaParam.set(sigma);
  const Buffer<float> result = out.realize<float>({w, h, 3}, Target("host"));

  auto px = [&](int i, int j, int k) -> double { return image(std::clamp(i, 0, w - 1), std::clamp(j, 0, h - 1), k); };
  auto dist = [&](int i, int j, int sx, int sy) {
    double v = 0;
    for (int k = 0; k < 3; ++k)
      v += (px(i, j, k) - px(i + sx, j + sy, k)) * (px(i, j, k) - px(i + sx, j + sy, k));
    return v;
  };
  const int lo = -(patchSize / 2), slo = -(searchArea / 2);
  const double invSq = -1.0 / (double(sigma) * sigma * patchSize * patchSize);
  check_against(result, [&](const std::vector<int> &p) {
    double sums[4] = {0, 0, 0, 0};
    for (int sy = slo; sy < slo + searchArea; ++sy)
      for (int sx = slo; sx < slo + searchArea; ++sx) {
        double blurred = 0;
        for (int a = lo; a < lo + patchSize; ++a)
          for (int b = lo; b < lo + patchSize; ++b)
            blurred += dist(p[0] + a, p[1] + b, sx, sy);
        const double wgt = std::exp(blurred * invSq);
        for (int k = 0; k < 4; ++k)
          sums[k] += wgt * (k < 3 ? px(p[0] + sx, p[1] + sy, k) : 1.0);
      }
    return std::clamp(sums[p[2]] / sums[3], 0.0, 1.0);
  }, 1e-3);
}

TEST_CASE("Halide's stencil chain under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 96, h = 64, stages = 13;
  Buffer<uint16_t> in(w, h);
  fill_random(in, seed, 0, 65535);
  StencilChain app(stages, w, h);
  app.scheduleForCPU();
  app.Input.set(in);
  const Buffer<uint16_t> out = app.Output.realize<uint16_t>({w, h}, Target("host"));
  const std::vector<uint16_t> expected = stencilChainReference(in, stages);
  check_against(out, [&](const std::vector<int> &p) { return expected[static_cast<size_t>(p[1]) * w + p[0]]; });
}

TEST_CASE("Halide's interpolate under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 70, h = 45, levels = 6;
  Buffer<float> in(w, h, 4);
  fill_random(in, seed, 0.05, 1.0);
  Interpolate app(levels);
  app.scheduleForCPU();
  app.Input.set(in);
  const Buffer<float> out = app.Normalize.realize<float>({w, h, 3}, Target("host"));
  InterpolateReference reference(in, levels);
  check_against(out, [&](const std::vector<int> &p) { return reference.normalized(p[0], p[1], p[2]); }, 1e-4);
}

TEST_CASE("Halide's convolution layer under its CPU schedule matches plain C++", "[cpu][pipeline]") {
  const uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int batch = 2, ci = 16, co = 48, w = 10, h = 7;
  Buffer<float> input(ci, w + 2, h + 2, batch), filter(co, 3, 3, ci), bias(co);
  fill_random(input, seed);
  fill_random(filter, seed + 1);
  fill_random(bias, seed + 2);
  ConvLayer app(ci);
  app.scheduleForCPU();
  app.Input.set(input);
  app.Filter.set(filter);
  app.Bias.set(bias);
  const Buffer<float> out = app.Relu.realize<float>({co, w, h, batch}, Target("host"));
  check_against(out, [&](const std::vector<int> &p) {
    return ConvLayer::reference(input, filter, bias, p[0], p[1], p[2], p[3]);
  }, 1e-4);
}
