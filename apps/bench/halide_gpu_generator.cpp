// Compiles the Halide 14 GPU peer's pipelines ahead of time, at build time: the benchmark's blur
// (inline and shared-memory schedules) and its one-kernel pipeline, with the same schedules as
// ptxjit's, as static libraries for x86-64-linux-cuda-cuda_capability_80. The first carries
// Halide's runtime; the others leave it out. Usage: halide_gpu_generator <output directory>.

#include <Halide.h>

#include <cstdio>
#include <string>

using namespace Halide;

namespace {

void compileBlur(const std::string &directory, bool shared, const Target &target) {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func bx("blur_x"), by("blur_y");
  bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
  by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
  by.gpu_tile(x, y, xi, yi, 32, 8);
  if (shared)
    bx.compute_at(by, x).gpu_threads(x, y);
  std::string name = shared ? "halide_blur_shared" : "halide_blur_inline";
  by.compile_to_static_library(directory + "/" + name, {in}, name, target);
}

void compileTwice(const std::string &directory, const Target &target) {
  ImageParam X(Float(32), 1, "X");
  Var i("i"), io("io"), ii("ii");
  Func twice("twice");
  twice(i) = X(i) * 2.0f;
  twice.gpu_tile(i, io, ii, 256);
  twice.compile_to_static_library(directory + "/halide_twice", {X}, "halide_twice", target);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  std::string directory = argv[1];
  Target withRuntime("x86-64-linux-cuda-cuda_capability_80");
  Target withoutRuntime = withRuntime.with_feature(Target::NoRuntime);
  compileBlur(directory, false, withRuntime);
  compileBlur(directory, true, withoutRuntime);
  compileTwice(directory, withoutRuntime);
  return 0;
}
