#include "ptxjit.h"

#include <catch2/catch.hpp>

using namespace ptxjit;

TEST_CASE("smoke: pointwise", "[cpu][smoke]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y) * 2.0f + 1.0f;
  Buffer<float> input(17, 5);
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 17; ++i)
      input(i, j) = float(i + 100 * j);
  in.set(input);
  Pipeline p(f);
  std::string s = p.lowered_stmt(Target("host"));
  INFO(s);
  Buffer<float> out = p.realize<float>({17, 5});
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 17; ++i)
      REQUIRE(out(i, j) == input(i, j) * 2.0f + 1.0f);
}
