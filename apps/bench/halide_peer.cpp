// The Halide 14 peer: the benchmark's blur and gamma, with the same schedules, compiled with
// Halide's JIT. Prints {"compile_jit_ms": ..., "realize_ms": ..., "gamma_realize_ms": ...}. Built
// only where libhalide14-0-dev exists; it is a separate program because Halide links its own LLVM.

#include "Json.h"

#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace Halide;

namespace {
double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

int main(int argc, char **argv) {
  int w = argc > 2 ? std::atoi(argv[1]) : 2048, h = argc > 2 ? std::atoi(argv[2]) : 2048;
  std::vector<double> compiles;
  Halide::Buffer<float> input(w + 2, h + 2), out(w, h);
  input.set_min(-1, -1);
  for (int y = -1; y <= h; ++y)
    for (int x = -1; x <= w; ++x)
      input(x, y) = float((x * 7 + y * 13) % 17) / 17.0f;
  Func last;
  for (int i = 0; i < 5; ++i) {
    double start = nowMs();
    ImageParam in(Float(32), 2);
    Var x, y, xi, yi;
    Func bx, by;
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
    by.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
    bx.compute_at(by, x).vectorize(x, 8);
    by.compile_jit(get_host_target());
    compiles.push_back(nowMs() - start);
    in.set(input);
    last = by;
  }
  last.realize(out);
  std::vector<double> realizes;
  for (int i = 0; i < 15; ++i) {
    double start = nowMs();
    last.realize(out);
    realizes.push_back(nowMs() - start);
  }
  double maxError = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        sum += (input(x - 1, y + dy) + input(x, y + dy) + input(x + 1, y + dy)) / 3.0f;
      maxError = std::max(maxError, double(std::fabs(sum / 3.0f - out(x, y))));
    }
  std::sort(compiles.begin(), compiles.end());
  std::sort(realizes.begin(), realizes.end());

  // Gamma: pow per pixel of a uint8 image, as the benchmark's make_gamma.
  Halide::Buffer<uint8_t> pixels(w, h), corrected(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      pixels(x, y) = uint8_t((x * 31 + y * 17) % 256);
  ImageParam gammaIn(UInt(8), 2);
  Var gx, gy;
  Func gamma;
  gamma(gx, gy) = ConciseCasts::u8_sat(pow(cast<float>(gammaIn(gx, gy)) / 255.0f, 1.0f / 2.2f) * 255.0f + 0.5f);
  gamma.vectorize(gx, 16).parallel(gy);
  gamma.compile_jit(get_host_target());
  gammaIn.set(pixels);
  gamma.realize(corrected);
  std::vector<double> gammaRealizes;
  for (int i = 0; i < 15; ++i) {
    double start = nowMs();
    gamma.realize(corrected);
    gammaRealizes.push_back(nowMs() - start);
  }
  std::sort(gammaRealizes.begin(), gammaRealizes.end());
  int gammaError = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int expected = int(std::pow(pixels(x, y) / 255.0f, 1.0f / 2.2f) * 255.0f + 0.5f);
      gammaError = std::max(gammaError, std::abs(expected - int(corrected(x, y))));
    }
  std::printf("{\"compile_jit_ms\": %s, \"realize_ms\": %s, \"width\": %d, \"height\": %d, "
              "\"max_abs_error\": %s, \"gamma_realize_ms\": %s, \"gamma_max_abs_error\": %d}\n",
              bench::json_number(compiles[compiles.size() / 2]).c_str(),
              bench::json_number(realizes[realizes.size() / 2]).c_str(), w, h, bench::json_number(maxError).c_str(),
              bench::json_number(gammaRealizes[gammaRealizes.size() / 2]).c_str(), gammaError);
  return 0;
}
