#ifndef PTXJIT_TEST_HALIDEAPPPROGRAMS_H
#define PTXJIT_TEST_HALIDEAPPPROGRAMS_H

// Halide's apps (github.com/halide/Halide, apps/), written as their generators write them, with
// their hand-written CPU and GPU schedules and plain C++ references: the [cpu], [ptx] and [gpu]
// tests run the same programs.

#include "ptxjit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ptxjit::test {

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

  /// The app's GPU schedule: the LUTs on the host, vert_log in tiles of RoundUp tails and its
  /// update a thread per column, the output in 32x8 tiles with a block per channel too.
  void scheduleForGPU() {
    Var xi("xi"), xo("xo"), yi("yi");
    SliceForRadius.compute_root();
    FilterHeight.compute_root();
    Output.gpu_tile(x, y, xi, yi, 32, 8).gpu_blocks(x, y, c);
    VertLog.compute_root()
        .reorder(c, t, x, y)
        .gpu_tile(x, y, xi, yi, 16, 16, TailStrategy::RoundUp)
        .update()
        .split(x, xo, xi, 32, TailStrategy::RoundUp)
        .reorder(R.x, R.y, xi, xo, c)
        .gpu_blocks(xo, c)
        .gpu_threads(xi);
  }
};

/// The same filter in plain C++, computed as written: each Func a function of its arguments.
inline std::vector<float> maxFilterReference(const Buffer<float> &in, int radius) {
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

/// apps/unsharp: gray, a separable Gaussian of 7 taps from a kernel Func, and the sharpened
/// ratio applied to each channel of an edge-repeated input.
struct Unsharp {
  ImageParam Input{Float(32), 3, "unsharp_input"};
  Func Kernel{"kernel"}, Gray{"gray"}, BlurY{"blur_y"}, BlurX{"blur_x"}, Sharpen{"sharpen"}, Ratio{"ratio"};
  Func Output{"unsharp"};
  Var x{"x"}, y{"y"}, c{"c"};
  static constexpr float Sigma = 1.5f;

  Unsharp() {
    const float pi = 3.14159265358979310000f;
    Kernel(x) = exp(-x * x / (2 * Sigma * Sigma)) / (sqrtf(2 * pi) * Sigma);
    Func bounded = BoundaryConditions::repeat_edge(Input);
    Gray(x, y) = 0.299f * bounded(x, y, 0) + 0.587f * bounded(x, y, 1) + 0.114f * bounded(x, y, 2);
    BlurY(x, y) = Kernel(0) * Gray(x, y) + Kernel(1) * (Gray(x, y - 1) + Gray(x, y + 1)) +
                  Kernel(2) * (Gray(x, y - 2) + Gray(x, y + 2)) + Kernel(3) * (Gray(x, y - 3) + Gray(x, y + 3));
    BlurX(x, y) = Kernel(0) * BlurY(x, y) + Kernel(1) * (BlurY(x - 1, y) + BlurY(x + 1, y)) +
                  Kernel(2) * (BlurY(x - 2, y) + BlurY(x + 2, y)) + Kernel(3) * (BlurY(x - 3, y) + BlurY(x + 3, y));
    Sharpen(x, y) = 2 * Gray(x, y) - BlurX(x, y);
    Ratio(x, y) = Sharpen(x, y) / Gray(x, y);
    Output(x, y, c) = Ratio(x, y) * Input(x, y, c);
  }

  void scheduleForCPU() {
    Var yo("yo"), yi("yi");
    Output.split(y, yo, yi, 32).vectorize(x, 8).parallel(yo).reorder(x, c, yi, yo);
    Gray.compute_at(Output, yi).store_at(Output, yo).vectorize(x, 8);
    BlurY.compute_at(Output, yi).store_at(Output, yo).vectorize(x, 8);
    Ratio.compute_at(Output, yi).store_at(Output, yo).vectorize(x, 8);
  }

  /// The app's GPU schedule: 32x32 tiles of all three channels, gray in 2x2 unrolled blocks of
  /// the tile's threads, blur_y two columns a thread.
  void scheduleForGPU() {
    Var xi("xi"), yi("yi");
    Output.compute_root().reorder(c, x, y).gpu_tile(x, y, xi, yi, 32, 32).bound(c, 0, 3).unroll(c);
    Ratio.compute_at(Output, xi);
    Gray.compute_at(Output, x).tile(x, y, xi, yi, 2, 2).unroll(xi).unroll(yi).gpu_threads(x, y);
    BlurY.compute_at(Output, x).unroll(x, 2).gpu_threads(x, y);
  }
};

inline double unsharpReference(const Buffer<float> &in, int i, int j, int k) {
  const int w = in.width(), h = in.height();
  const double pi = 3.14159265358979310000, sigma = Unsharp::Sigma;
  auto kernel = [&](int t) { return std::exp(-double(t) * t / (2 * sigma * sigma)) / (std::sqrt(2 * pi) * sigma); };
  auto gray = [&](int u, int v) {
    u = std::clamp(u, 0, w - 1);
    v = std::clamp(v, 0, h - 1);
    return 0.299 * in(u, v, 0) + 0.587 * in(u, v, 1) + 0.114 * in(u, v, 2);
  };
  auto blurY = [&](int u, int v) {
    double s = kernel(0) * gray(u, v);
    for (int t = 1; t <= 3; ++t)
      s += kernel(t) * (gray(u, v - t) + gray(u, v + t));
    return s;
  };
  double blurX = kernel(0) * blurY(i, j);
  for (int t = 1; t <= 3; ++t)
    blurX += kernel(t) * (blurY(i - t, j) + blurY(i + t, j));
  return (2 * gray(i, j) - blurX) / gray(i, j) * in(i, j, k);
}

/// apps/iir_blur: a first-order IIR filter down the columns and back up, transposed, twice. The
/// two passes share the Vars; their Funcs take a suffix each, as ptxjit refuses two Funcs of one
/// name in a pipeline (Halide renames the second).
struct IirBlur {
  ImageParam Input{Float(32), 3, "iir_input"};
  Param<float> Alpha{"alpha"};
  Var x{"x"}, y{"y"}, c{"c"};
  Func Output;

  bool ForGPU;

  Func blurColumnsTransposed(Func input, Expr height, const std::string &pass) {
    Func blur("blur" + pass);
    blur(x, y, c) = undef<float>();
    blur(x, 0, c) = input(x, 0, c);
    RDom ry(1, height - 1);
    blur(x, ry, c) = (1 - Alpha) * blur(x, ry - 1, c) + Alpha * input(x, ry, c);
    Expr flipped = height - ry - 1;
    blur(x, flipped, c) = (1 - Alpha) * blur(x, flipped + 1, c) + Alpha * blur(x, flipped, c);
    Func transpose("transpose" + pass);
    transpose(x, y, c) = blur(y, x, c);
    if (ForGPU) {
      // The app's CUDA schedule: a block per 32 columns of a channel, its 32 lanes a column each;
      // blur in heap storage at the block, read through a wrapper padded to 33 columns.
      Var xi("xi"), yi("yi");
      transpose.compute_root().tile(x, y, xi, yi, 32, 32).gpu_blocks(y, c).gpu_lanes(xi);
      blur.compute_at(transpose, y).store_in(MemoryType::Heap).gpu_lanes(x);
      blur.update(0).gpu_lanes(x);
      blur.update(1).unroll(ry, 8).gpu_lanes(x);
      blur.update(2).unroll(ry, 8).gpu_lanes(x);
      blur.in().align_storage(x, 33).compute_at(transpose, x).gpu_lanes(x);
      return transpose;
    }
    // The app's CPU schedule, natural vector size 8, with Halide's default tails (ptxjit's
    // guard). blur's update loops over x are vectorized by 8: vectorized whole, as the app
    // does, their extent (32) is not found constant through the fused loop t.
    Var xo("xo"), yo("yo"), t("t"), yi("yi");
    transpose.compute_root().tile(x, y, xo, yo, x, y, 8, 8 * 4, TailStrategy::ShiftInward).split(y, y, yi, 8, TailStrategy::ShiftInward).vectorize(yi).vectorize(x).fuse(yo, c, t).parallel(t);
    blur.compute_at(transpose, t);
    blur.update(0).unscheduled();
    blur.update(1).reorder(x, ry).vectorize(x, 8);
    blur.update(2).reorder(x, ry).vectorize(x, 8);
    return transpose;
  }

  IirBlur(int width, int height, bool forGPU = false) : ForGPU(forGPU) {
    Output = blurColumnsTransposed(blurColumnsTransposed(Input, Input.height(), "_columns"), Input.width(), "_rows");
    Input.dim(0).set_bounds(0, width).set_stride(1);
    Input.dim(1).set_bounds(0, height).set_stride(width);
    Input.dim(2).set_bounds(0, 3).set_stride(width * height);
  }
};

/// The IIR filter down each column and back up, then transposed: the app's pass in plain C++.
inline std::vector<float> iirPassReference(const std::vector<float> &in, int w, int h, float alpha) {
  std::vector<float> blur(in.size()), out(in.size());
  for (int k = 0; k < 3; ++k) {
    auto at = [&](int i, int j) { return (static_cast<size_t>(k) * h + j) * w + i; };
    for (int i = 0; i < w; ++i) {
      blur[at(i, 0)] = in[at(i, 0)];
      for (int j = 1; j < h; ++j)
        blur[at(i, j)] = (1 - alpha) * blur[at(i, j - 1)] + alpha * in[at(i, j)];
      for (int r = 1; r < h; ++r) {
        const int j = h - r - 1;
        blur[at(i, j)] = (1 - alpha) * blur[at(i, j + 1)] + alpha * blur[at(i, j)];
      }
    }
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        out[(static_cast<size_t>(k) * w + i) * h + j] = blur[at(i, j)];
  }
  return out;
}

/// apps/stencil_chain: `stages` 5x5 stencils of uint16 in a row, each of the one before, from an
/// edge-repeated input. The CPU schedule computes groups of 11 stages in parallel tiles, each
/// stage but the group's last slid down the tile's rows.
struct StencilChain {
  ImageParam Input{UInt(16), 2, "stencil_input"};
  std::vector<Func> Stages;
  Func Output{"stencil_chain"};
  Var x{"x"}, y{"y"};
  int Width, Height;

  StencilChain(int stages, int width, int height) : Width(width), Height(height) {
    Stages.push_back(BoundaryConditions::repeat_edge(Input));
    for (int s = 0; s < stages; s++) {
      Func f("stage_" + std::to_string(s));
      Expr e = cast<uint16_t>(0);
      for (int i = -2; i <= 2; i++)
        for (int j = -2; j <= 2; j++)
          e += ((i + 3) * (j + 3)) * Stages.back()(x + i, y + j);
      f(x, y) = e;
      Stages.push_back(f);
    }
    Output(x, y) = Stages.back()(x, y);
  }

  void scheduleForCPU() {
    const int groupSize = 11, last = static_cast<int>(Stages.size()) - 1;
    Var yi("yi"), yo("yo"), xo("xo"), xi("xi"), t("t");
    for (int j = last; j > 0; j -= groupSize) {
      Func out = j == last ? Output : Stages[j];
      const int expansion = 4 * (last - j);
      out.compute_root()
          .tile(x, y, xo, yo, xi, yi, (Width + expansion) / 4, (Height + expansion) / 4)
          .fuse(xo, yo, t)
          .parallel(t)
          .vectorize(xi, 16);
      for (int i = std::max(0, j - groupSize + 1); i < j; i++)
        Stages[i].store_at(out, t).compute_at(out, yi).vectorize(Stages[i].args()[0], 16);
    }
  }

  /// The app's GPU schedule: every stage a kernel of 60x12 tiles, 2x2 points a thread, reading
  /// the stage before through a wrapper staged in shared memory and one in registers.
  void scheduleForGPU() {
    Var xi("xi"), yi("yi"), xii("xii"), yii("yii");
    std::vector<Func> stages = Stages;
    stages.pop_back(); // the second-last stage is inlined into the output
    stages.push_back(Output);
    for (size_t i = 1; i < stages.size(); i++) {
      Func &s = stages[i];
      Func prev = stages[i - 1];
      const Var sx = s.args()[0], sy = s.args()[1];
      s.compute_root().gpu_tile(sx, sy, xi, yi, 30 * 2, 12).tile(xi, yi, xii, yii, 2, 2).unroll(xii).unroll(yii);
      prev.in().compute_at(s, sx).tile(prev.args()[0], prev.args()[1], xi, yi, 2, 2).vectorize(xi).unroll(yi)
          .gpu_threads(prev.args()[0], prev.args()[1]);
      prev.in().in().compute_at(s, xi).vectorize(prev.args()[0], 2).unroll(prev.args()[0]).unroll(prev.args()[1]);
    }
  }
};

/// The stencil chain in plain C++ over the output's region, each stage over its reach.
inline std::vector<uint16_t> stencilChainReference(const Buffer<uint16_t> &in, int stages) {
  const int w = in.width(), h = in.height();
  int margin = 2 * stages;
  auto at = [](int i, int j, int width, int m) { return static_cast<size_t>(j + m) * (width + 2 * m) + (i + m); };
  std::vector<uint16_t> current((w + 2 * margin) * static_cast<size_t>(h + 2 * margin));
  for (int j = -margin; j < h + margin; ++j)
    for (int i = -margin; i < w + margin; ++i)
      current[at(i, j, w, margin)] = in(std::clamp(i, 0, w - 1), std::clamp(j, 0, h - 1));
  for (int s = 0; s < stages; ++s) {
    const int m = margin - 2;
    std::vector<uint16_t> next((w + 2 * m) * static_cast<size_t>(h + 2 * m));
    for (int j = -m; j < h + m; ++j)
      for (int i = -m; i < w + m; ++i) {
        uint16_t e = 0;
        for (int a = -2; a <= 2; ++a)
          for (int b = -2; b <= 2; ++b)
            e = static_cast<uint16_t>(e + static_cast<uint16_t>((a + 3) * (b + 3)) * current[at(i + a, j + b, w, margin)]);
        next[at(i, j, w, m)] = e;
      }
    current = std::move(next);
    margin = m;
  }
  return current;
}

/// apps/interpolate: fills pixels of low alpha from a pyramid of premultiplied downsamples,
/// upsampled and blended back level by level, then normalized by alpha.
struct Interpolate {
  ImageParam Input{Float(32), 3, "interpolate_input"};
  std::vector<Func> Downsampled, DownX, Interpolated, Upsampled, UpsampledX;
  Func Normalize{"normalize"};
  Var x{"x"}, y{"y"}, c{"c"};
  int Levels;

  static std::vector<Func> funcs(const std::string &name, int size) {
    std::vector<Func> result;
    for (int i = 0; i < size; i++)
      result.emplace_back(name + "_" + std::to_string(i));
    return result;
  }

  explicit Interpolate(int levels)
      : Downsampled(funcs("downsampled", levels)), DownX(funcs("downx", levels)),
        Interpolated(funcs("interpolated", levels)), Upsampled(funcs("upsampled", levels)),
        UpsampledX(funcs("upsampledx", levels)), Levels(levels) {
    Input.dim(2).set_bounds(0, 4);
    Func clamped = BoundaryConditions::repeat_edge(Input);
    Downsampled[0](x, y, c) = select(c < 3, clamped(x, y, c) * clamped(x, y, 3), clamped(x, y, 3));
    for (int l = 1; l < levels; ++l) {
      Func prev = Downsampled[l - 1];
      if (l == 4) {
        Expr w = Input.width() / (1 << (l - 1)), h = Input.height() / (1 << (l - 1));
        prev = lambda(x, y, c, prev(clamp(x, 0, w), clamp(y, 0, h), c));
      }
      DownX[l](x, y, c) = (prev(x * 2 - 1, y, c) + 2.0f * prev(x * 2, y, c) + prev(x * 2 + 1, y, c)) * 0.25f;
      Downsampled[l](x, y, c) =
          (DownX[l](x, y * 2 - 1, c) + 2.0f * DownX[l](x, y * 2, c) + DownX[l](x, y * 2 + 1, c)) * 0.25f;
    }
    Interpolated[levels - 1](x, y, c) = Downsampled[levels - 1](x, y, c);
    for (int l = levels - 2; l >= 0; --l) {
      UpsampledX[l](x, y, c) = (Interpolated[l + 1](x / 2, y, c) + Interpolated[l + 1]((x + 1) / 2, y, c)) / 2.0f;
      Upsampled[l](x, y, c) = (UpsampledX[l](x, y / 2, c) + UpsampledX[l](x, (y + 1) / 2, c)) / 2.0f;
      Expr alpha = 1.0f - Downsampled[l](x, y, 3);
      Interpolated[l](x, y, c) = Downsampled[l](x, y, c) + alpha * Upsampled[l](x, y, c);
    }
    Normalize(x, y, c) = Interpolated[0](x, y, c) / Interpolated[0](x, y, 3);
  }

  void scheduleForCPU() {
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
    for (int l = 1; l < Levels - 1; ++l)
      Downsampled[l].compute_root().never_partition(x).reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, 8);
    Downsampled[0]
        .clone_in(DownX[1])
        .store_at(Downsampled[1], yo)
        .compute_at(Downsampled[1], yi)
        .reorder(c, x, y)
        .unroll(c)
        .vectorize(x, 8)
        .never_partition(y);
    Normalize.bound(x, 0, Input.width())
        .bound(y, 0, Input.height())
        .bound(c, 0, 3)
        .never_partition(y)
        .split(x, xo, xi, 8)
        .split(y, yo, yi, 32)
        .reorder(xi, c, xo, yi, yo)
        .unroll(c)
        .vectorize(xi)
        .parallel(yo);
    for (int l = 1; l < Levels; l++)
      Interpolated[l].store_at(Normalize, yo).compute_at(Normalize, yi).never_partition_all().vectorize(x, 8);
  }

  void scheduleForGPU() {
    Var xi("xi"), yi("yi"), xii("xii"), yii("yii");
    // 32x32 tiles rounded up, 2x2 points a thread, channels unrolled.
    auto tilePairs = [&](Func f) {
      f.reorder(c, x, y)
          .tile(x, y, xi, yi, 32, 32, TailStrategy::RoundUp)
          .tile(xi, yi, xii, yii, 2, 2)
          .gpu_blocks(x, y)
          .gpu_threads(xi, yi)
          .unroll(xii)
          .unroll(yii)
          .unroll(c);
    };
    Normalize.never_partition_all().bound(x, 0, Input.width()).bound(y, 0, Input.height()).bound(c, 0, 3);
    tilePairs(Normalize);
    for (int l = 1; l < Levels; l++)
      Downsampled[l].compute_root().never_partition_all().reorder(c, x, y).unroll(c).gpu_tile(x, y, xi, yi, 16, 16);
    for (int l = 3; l < Levels; l += 2)
      tilePairs(Interpolated[l].compute_root().never_partition_all());
    UpsampledX[1].compute_at(Normalize, x).never_partition_all().reorder(c, x, y).tile(x, y, xi, yi, 2, 1).unroll(xi)
        .unroll(yi).unroll(c).gpu_threads(x, y);
    Interpolated[1].compute_at(Normalize, x).never_partition_all().reorder(c, x, y).tile(x, y, xi, yi, 2, 2).unroll(xi)
        .unroll(yi).unroll(c).gpu_threads(x, y);
    Interpolated[2].compute_at(Normalize, x).never_partition_all().reorder(c, x, y).unroll(c).gpu_threads(x, y);
  }
};

/// The interpolation in plain C++, each Func a memoized function of its coordinates.
class InterpolateReference {
public:
  InterpolateReference(const Buffer<float> &in, int levels) : In(in), Levels(levels) {}

  float normalized(int i, int j, int k) { return interpolated(0, i, j, k) / interpolated(0, i, j, 3); }

private:
  const Buffer<float> &In;
  int Levels;
  std::map<std::array<int, 4>, float> Down, Interp;

  static int floorDiv2(int v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

  float clamped(int i, int j, int k) const {
    return In(std::clamp(i, 0, In.width() - 1), std::clamp(j, 0, In.height() - 1), k);
  }
  float downsampled(int l, int i, int j, int k) {
    auto key = std::array<int, 4>{l, i, j, k};
    if (auto it = Down.find(key); it != Down.end())
      return it->second;
    float v;
    if (l == 0) {
      v = k < 3 ? clamped(i, j, k) * clamped(i, j, 3) : clamped(i, j, 3);
    } else {
      auto prev = [&](int a, int b) {
        if (l == 4) {
          const int w = In.width() / (1 << (l - 1)), h = In.height() / (1 << (l - 1));
          a = std::clamp(a, 0, w);
          b = std::clamp(b, 0, h);
        }
        return downsampled(l - 1, a, b, k);
      };
      auto downx = [&](int b) { return (prev(i * 2 - 1, b) + 2.0f * prev(i * 2, b) + prev(i * 2 + 1, b)) * 0.25f; };
      v = (downx(j * 2 - 1) + 2.0f * downx(j * 2) + downx(j * 2 + 1)) * 0.25f;
    }
    return Down[key] = v;
  }
  float interpolated(int l, int i, int j, int k) {
    auto key = std::array<int, 4>{l, i, j, k};
    if (auto it = Interp.find(key); it != Interp.end())
      return it->second;
    float v;
    if (l == Levels - 1) {
      v = downsampled(l, i, j, k);
    } else {
      auto upx = [&](int b) {
        return (interpolated(l + 1, floorDiv2(i), b, k) + interpolated(l + 1, floorDiv2(i + 1), b, k)) / 2.0f;
      };
      const float up = (upx(floorDiv2(j)) + upx(floorDiv2(j + 1))) / 2.0f;
      const float alpha = 1.0f - downsampled(l, i, j, 3);
      v = downsampled(l, i, j, k) + alpha * up;
    }
    return Interp[key] = v;
  }
};

/// apps/conv_layer: a 3x3 convolution over CI input channels to CO outputs, plus a bias, then a
/// ReLU; channels innermost, as the app stores them.
struct ConvLayer {
  ImageParam Input{Float(32), 4, "conv_input"}, Filter{Float(32), 4, "conv_filter"}, Bias{Float(32), 1, "conv_bias"};
  Func Conv{"conv"}, Relu{"relu"};
  Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
  RDom R;

  explicit ConvLayer(int inputChannels) {
    R = RDom(0, inputChannels, 0, 3, 0, 3);
    Conv(c, x, y, n) = Bias(c);
    Conv(c, x, y, n) += Filter(c, R.y, R.z, R.x) * Input(R.x, x + R.y, y + R.z, n);
    Relu(c, x, y, n) = max(0, Conv(c, x, y, n));
  }

  /// The app's x86 schedule: 24 output channels by 4 columns a tile, accumulators unrolled.
  void scheduleForCPU() {
    const int vec = 8, tileW = 3, tileH = 4;
    Var co("co"), ci("ci"), xo("xo"), xi("xi");
    Relu.split(c, co, ci, vec * tileW)
        .split(x, xo, xi, tileH)
        .reorder(ci, xi, xo, y, n, co)
        .vectorize(ci, vec)
        .unroll(ci)
        .unroll(xi)
        .parallel(y)
        .parallel(n)
        .parallel(co);
    Conv.compute_at(Relu, xo)
        .vectorize(c, vec)
        .unroll(c)
        .unroll(x)
        .unroll(y)
        .update()
        .reorder(c, x, y, R.x, R.y, R.z, n)
        .vectorize(c, vec)
        .unroll(c)
        .unroll(x)
        .unroll(y)
        .unroll(R.x, 2);
    Filter.in().compute_at(Conv, R.x).vectorize(_0, vec).unroll(_0).unroll(_3);
    Input.in().compute_at(Conv, x).unroll(_0);
  }

  /// The app's bounds on its output (it compiles for one size): loops of constant extents.
  void boundOutput(int channels, int width, int height, int batch) {
    Relu.bound(c, 0, channels).bound(x, 0, width).bound(y, 0, height).bound(n, 0, batch);
  }

  /// The app's CUDA schedule: a block computes 32 output channels (a lane each) by 5x5 pixels of
  /// a batch, conv's accumulators in registers; the channel tiles and the batch fused into one
  /// block dimension; 16 input channels of the input staged in registers at a time.
  void scheduleForCUDA() {
    Var xi("xi"), xo("xo"), yi("yi"), yo("yo"), ci("ci"), co("co"), t("t");
    RVar rxo("rxo"), rxi("rxi"), rxii("rxii");
    Relu.compute_root()
        .split(x, xo, xi, 5)
        .split(y, yo, yi, 5)
        .split(c, co, ci, 32)
        .reorder(xi, yi, ci, xo, yo, co, n)
        .gpu_lanes(ci)
        .unroll(xi)
        .unroll(yi)
        .fuse(co, n, t)
        .gpu_blocks(xo, yo, t);
    Conv.compute_at(Relu, xo)
        .store_in(MemoryType::Register)
        .gpu_lanes(c)
        .unroll(x)
        .unroll(y)
        .update()
        .split(R.x, rxo, rxi, 16)
        .split(rxi, rxi, rxii, 2)
        .reorder(c, rxii, x, y, R.y, R.z, rxi, rxo)
        .gpu_lanes(c)
        .unroll(x)
        .unroll(y)
        .unroll(R.y)
        .unroll(R.z)
        .unroll(rxii);
    Input.in().compute_at(Conv, rxo).vectorize(_0, 2).split(_1, xo, xi, 4).fuse(_0, xi, t).gpu_lanes(t).unroll(xo).unroll(_2);
  }

  static float reference(const Buffer<float> &input, const Buffer<float> &filter, const Buffer<float> &bias, int oc,
                         int i, int j, int b) {
    float v = bias(oc);
    for (int rz = 0; rz < 3; ++rz)
      for (int ry = 0; ry < 3; ++ry)
        for (int rx = 0; rx < input.dim(0).extent(); ++rx)
          v += filter(oc, ry, rz, rx) * input(rx, i + ry, j + rz, b);
    return std::max(0.0f, v);
  }
};

} // namespace ptxjit::test

#endif
