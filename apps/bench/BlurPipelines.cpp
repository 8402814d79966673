#include "BlurPipelines.h"

using namespace ptxjit;

namespace bench {

BuiltPipeline make_blur(const std::string &suffix) {
  ImageParam in(Float(32), 2, "in" + suffix);
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func bx("blur_x" + suffix), by("blur_y" + suffix);
  bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
  by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
  // Shifted tails: the tails Halide's peer gets from the same schedule (its default for pure
  // definitions), so that both run full tiles without guards.
  by.tile(x, y, xi, yi, 256, 32, TailStrategy::ShiftInward).vectorize(xi, 8).parallel(y);
  bx.compute_at(by, x).vectorize(x, 8, TailStrategy::ShiftInward);
  return {in, by};
}

BuiltPipeline make_pointwise(const std::string &suffix) {
  ImageParam in(Float(32), 2, "in" + suffix);
  Var x("x"), y("y");
  Func f("pointwise" + suffix);
  Expr v = in(x, y);
  f(x, y) = sqrt(v * v + 1.0f) * 0.5f + select(v > 0.0f, v, -v * 0.25f);
  f.vectorize(x, 8).parallel(y);
  return {in, f};
}

BuiltPipeline make_gamma(const std::string &suffix) {
  ImageParam in(UInt(8), 2, "in" + suffix);
  Var x("x"), y("y");
  Func f("gamma" + suffix);
  f(x, y) = u8_sat(pow(cast<float>(in(x, y)) / 255.0f, GammaExponent) * 255.0f + 0.5f);
  f.vectorize(x, 16).parallel(y);
  return {in, f};
}

BuiltPipeline make_histogram(const std::string &suffix) {
  ImageParam in(UInt(8), 2, "in" + suffix);
  RDom r(0, in.width(), 0, in.height(), "r" + suffix);
  Func hist("hist" + suffix);
  hist(cast<int>(in(r.x, r.y))) += 1;
  return {in, hist};
}

} // namespace bench
