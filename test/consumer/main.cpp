// A program outside ptxjit's tree, built against an installed ptxjit (find_package) or its
// sources (add_subdirectory): a CPU pipeline on random data, checked against plain C++.

#include <ptxjit.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

int main() {
  using namespace ptxjit;
  if (std::strcmp(version(), PTXJIT_VERSION_STRING) != 0) {
    std::fprintf(stderr, "headers are %s but the library is %s\n", PTXJIT_VERSION_STRING, version());
    return 1;
  }
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi");
  Func blur("blur");
  blur(x, y) = (in(x, y) + in(x + 1, y) + in(x, y + 1)) * 0.5f;
  blur.split(x, x, xi, 8).vectorize(xi).parallel(y);
  Buffer<float> input(65, 33);
  std::mt19937 rng(std::random_device{}());
  input.for_each_element([&](const std::vector<int> &c) { input.at(c) = std::uniform_real_distribution<float>(-1, 1)(rng); });
  in.set(input);
  Buffer<float> out = Pipeline(blur).realize<float>({64, 32});
  int wrong = 0;
  out.for_each_element([&](const std::vector<int> &c) {
    float expected = (input(c[0], c[1]) + input(c[0] + 1, c[1]) + input(c[0], c[1] + 1)) * 0.5f;
    wrong += std::abs(out.at(c) - expected) > 1e-5f;
  });
  try {
    Target("x86-64-linux-cuda-cuda_capabilty_80");
    std::fprintf(stderr, "a misspelled target string was accepted\n");
    return 1;
  } catch (const TargetError &e) {
    std::printf("bad target string refused: %s\n", e.what());
  }
  std::printf("ptxjit %s: %d of %d values wrong\n", version(), wrong, 64 * 32);
  return wrong == 0 ? 0 : 1;
}
