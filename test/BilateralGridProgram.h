#ifndef PTXJIT_TEST_BILATERALGRIDPROGRAM_H
#define PTXJIT_TEST_BILATERALGRIDPROGRAM_H

// A bilateral grid as Halide's app writes it, shared by the [cpu] and [gpu] tests: each S x S
// tile of the image is splatted into a 3-D grid at z = the value scaled by a Param and cast to an
// integer, the grid is blurred in z, x and y, and the image is sliced back out of it by trilinear
// interpolation. The grid's region comes from bounds of floats cast to integers. Input values are
// multiples of 1/64 and 1/r_sigma is 8, so the grid coordinates are exact however the float
// arithmetic is rounded or fused, and the reference agrees on every one of them.

#include "TestUtil.h"
#include "ptxjit.h"

#include <algorithm>
#include <cmath>

namespace ptxjit::test {

struct BilateralGridProgram {
  static constexpr int S = 8;
  static constexpr float RSigma = 0.125f;

  ImageParam in{Float(32), 2, "in"};
  Param<float> r_sigma{"r_sigma"};
  Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
  RDom r{0, S, 0, S, "r"};
  Func histogram{"histogram"}, blurz{"blurz"}, blurx{"blurx"}, blury{"blury"}, out{"bilateral_grid"};

  BilateralGridProgram() {
    Func clamped = BoundaryConditions::repeat_edge(in);
    Expr val = clamp(clamped(x * S + r.x - S / 2, y * S + r.y - S / 2), 0.0f, 1.0f);
    Expr zi = cast<int>(val * (1.0f / r_sigma) + 0.5f);
    histogram(x, y, z, c) = 0.0f;
    histogram(x, y, zi, c) += select(c == 0, val, 1.0f);
    blurz(x, y, z, c) = histogram(x, y, z - 2, c) + 4 * histogram(x, y, z - 1, c) + 6 * histogram(x, y, z, c) +
                        4 * histogram(x, y, z + 1, c) + histogram(x, y, z + 2, c);
    blurx(x, y, z, c) = blurz(x - 1, y, z, c) + 2 * blurz(x, y, z, c) + blurz(x + 1, y, z, c);
    blury(x, y, z, c) = blurx(x, y - 1, z, c) + 2 * blurx(x, y, z, c) + blurx(x, y + 1, z, c);

    Expr v = clamp(clamped(x, y), 0.0f, 1.0f);
    Expr zv = v * (1.0f / r_sigma);
    Expr zc = cast<int>(zv);
    Expr zf = zv - zc;
    Expr xf = cast<float>(x % S) / S, yf = cast<float>(y % S) / S;
    Expr xc = x / S, yc = y / S;
    Func interpolated("interpolated");
    interpolated(x, y, c) =
        lerp(lerp(lerp(blury(xc, yc, zc, c), blury(xc + 1, yc, zc, c), xf),
                  lerp(blury(xc, yc + 1, zc, c), blury(xc + 1, yc + 1, zc, c), xf), yf),
             lerp(lerp(blury(xc, yc, zc + 1, c), blury(xc + 1, yc, zc + 1, c), xf),
                  lerp(blury(xc, yc + 1, zc + 1, c), blury(xc + 1, yc + 1, zc + 1, c), xf), yf),
             zf);
    out(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
  }

  // Halide's CPU schedule: the histogram per row of blurz, the blurs and the output parallel and
  // vectorized.
  void schedule_cpu() {
    histogram.compute_at(blurz, y);
    histogram.update().reorder(c, r.x, r.y, x, y).unroll(c);
    blurz.compute_root().reorder(c, z, x, y).parallel(y).vectorize(x, 8).unroll(c);
    blurx.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, 8).unroll(c);
    blury.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, 8).unroll(c);
    out.compute_root().parallel(y).vectorize(x, 8);
  }

  // Halide's GPU schedule: every stage a kernel; each thread of the histogram's update owns one
  // grid column (x, y), so its writes at the computed z do not race.
  void schedule_gpu() {
    Var xi("xi"), yi("yi"), zi("zi");
    histogram.compute_root().reorder(c, z, x, y).gpu_tile(x, y, xi, yi, 8, 8);
    histogram.update().reorder(c, r.x, r.y, x, y).gpu_tile(x, y, xi, yi, 8, 8).unroll(c);
    blurz.compute_root().gpu_tile(x, y, z, xi, yi, zi, 8, 8, 1);
    blurx.compute_root().gpu_tile(x, y, z, xi, yi, zi, 8, 8, 1);
    blury.compute_root().gpu_tile(x, y, z, xi, yi, zi, 8, 8, 1);
    out.compute_root().gpu_tile(x, y, xi, yi, 16, 8);
  }

  /// Multiples of 1/64 in [-1/4, 5/4]: some clamp at each end.
  static Buffer<float> input(int width, int height, uint32_t seed) {
    Buffer<float> image(width, height);
    fill_random(image, seed, -16, 80);
    image.for_each_element([&](const std::vector<int> &p) { image.at(p) = std::round(image.at(p)) / 64.0f; });
    return image;
  }

  /// The output at (px, py), in double.
  static double reference(const Buffer<float> &image, int px, int py) {
    const int w = image.dim(0).extent(), h = image.dim(1).extent();
    auto clamped = [&](int i, int j) {
      return std::clamp(image.at({std::clamp(i, 0, w - 1), std::clamp(j, 0, h - 1)}), 0.0f, 1.0f);
    };
    auto histogram = [&](int gx, int gy, int gz, int gc) {
      double sum = 0;
      for (int ry = 0; ry < S; ++ry)
        for (int rx = 0; rx < S; ++rx) {
          float val = clamped(gx * S + rx - S / 2, gy * S + ry - S / 2);
          if (int(val * (1.0f / RSigma) + 0.5f) == gz)
            sum += gc == 0 ? val : 1.0;
        }
      return sum;
    };
    auto blurz = [&](int gx, int gy, int gz, int gc) {
      return histogram(gx, gy, gz - 2, gc) + 4 * histogram(gx, gy, gz - 1, gc) + 6 * histogram(gx, gy, gz, gc) +
             4 * histogram(gx, gy, gz + 1, gc) + histogram(gx, gy, gz + 2, gc);
    };
    auto blurx = [&](int gx, int gy, int gz, int gc) {
      return blurz(gx - 1, gy, gz, gc) + 2 * blurz(gx, gy, gz, gc) + blurz(gx + 1, gy, gz, gc);
    };
    auto blury = [&](int gx, int gy, int gz, int gc) {
      return blurx(gx, gy - 1, gz, gc) + 2 * blurx(gx, gy, gz, gc) + blurx(gx, gy + 1, gz, gc);
    };
    auto lerp = [](double a, double b, double t) { return a + (b - a) * t; };
    const float zv = clamped(px, py) * (1.0f / RSigma);
    const int zc = int(zv);
    const double zf = zv - zc, xf = double(px % S) / S, yf = double(py % S) / S;
    const int xc = px / S, yc = py / S;
    double channel[2];
    for (int gc = 0; gc < 2; ++gc) {
      auto plane = [&](int gz) {
        return lerp(lerp(blury(xc, yc, gz, gc), blury(xc + 1, yc, gz, gc), xf),
                    lerp(blury(xc, yc + 1, gz, gc), blury(xc + 1, yc + 1, gz, gc), xf), yf);
      };
      channel[gc] = lerp(plane(zc), plane(zc + 1), zf);
    }
    return channel[0] / channel[1];
  }
};

} // namespace ptxjit::test

#endif
