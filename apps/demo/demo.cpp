// The README's first command runs this: it shows what ptxjit does today, end to end.
// 1. Target strings: parsed without touching the CUDA driver; capabilities resolve lazily.
// 2. A separable 3x3 blur defined, scheduled, JIT-compiled for the host CPU and realized,
//    checked against plain C++.

#include "ptxjit.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

using namespace ptxjit;

namespace {

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int showTargets() {
  const char *spellings[] = {"host", "host-cuda", "x86-64-linux-cuda-cuda_capability_80",
                             "host-cuda-cuda_capabilty_80"};
  std::printf("Targets\n");
  for (const char *spelling : spellings) {
    try {
      Target t(spelling);
      std::printf("  %-40s -> %s", spelling, t.to_string().c_str());
      if (t.has_gpu_feature() && t.cuda_capability() == 0)
        std::printf(" (resolved per device, e.g. H200 -> %d)", t.resolve_cuda_capability(9, 0).cuda_capability());
      std::printf("\n");
    } catch (const TargetError &e) {
      std::printf("  %-40s -> error: %s\n", spelling, e.what());
    }
  }
  return 0;
}

int blurOnHost() {
  const int w = 1920, h = 1080;
  auto start = std::chrono::steady_clock::now();
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func bx("blur_x"), by("blur_y");
  bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
  by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
  by.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
  bx.compute_at(by, x).vectorize(x, 8);
  Pipeline pipeline(by);
  pipeline.compile_jit(Target("host"));
  double compileMs = millisecondsSince(start);

  Buffer<float> input(w + 2, h + 2), output(w, h);
  input.set_min({-1, -1});
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  input.for_each_element([&](const std::vector<int> &c) { input.at(c) = dist(rng); });
  in.set(input);
  pipeline.realize(output);
  start = std::chrono::steady_clock::now();
  pipeline.realize(output);
  double realizeMs = millisecondsSince(start);

  double maxError = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        sum += (input(i - 1, j + dy) + input(i, j + dy) + input(i + 1, j + dy)) / 3.0f;
      maxError = std::max(maxError, double(std::fabs(sum / 3.0f - output(i, j))));
    }
  std::printf("\nBlur %dx%d on %s\n  compile (definition to callable): %.1f ms\n  realize: %.2f ms\n"
              "  max |error| against plain C++: %.2g\n",
              w, h, Target("host").to_string().c_str(), compileMs, realizeMs, maxError);
  return maxError < 1e-5 ? 0 : 1;
}

} // namespace

int main() {
  try {
    showTargets();
    return blurOnHost();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
}
