// End-to-end pipelines on the host target, checked against plain C++ on fresh random data.

#include "TestUtil.h"
#include "ptxjit.h"

#include <algorithm>
#include <cmath>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

float clampedAt(const Buffer<float> &in, int x, int y) {
  x = std::clamp(x, in.min(0), in.min(0) + in.extent(0) - 1);
  y = std::clamp(y, in.min(1), in.min(1) + in.extent(1) - 1);
  return in(x, y);
}

} // namespace

TEST_CASE("Pointwise arithmetic, casts and math", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "in");
  ImageParam bytes(UInt(8), 2, "bytes");
  Param<float> scale("scale");
  Var x("x"), y("y");
  Func f("pointwise");
  Expr v = in(x, y);
  Expr b = cast<int>(bytes(x, y));
  f(x, y) = sqrt(abs(v) + 1.0f) * scale + exp(v) - log(abs(v) + 2.0f) + pow(abs(v) + 0.5f, 1.5f) +
            sin(v) * cos(v) + tanh(v) + floor(v * 7.0f) + ceil(v * 3.0f) + round(v * 5.0f) +
            cast<float>(b % 7 - b / 3) + select(v > 0.25f, cast<float>(max(b, 100)), cast<float>(min(b, 17)));
  for (auto [w, h] : {std::pair{37, 11}, std::pair{64, 64}, std::pair{1, 1}}) {
    INFO(w << "x" << h);
    Buffer<float> input(w, h);
    Buffer<uint8_t> byteInput(w, h);
    fill_random(input, seed, -2.0, 2.0);
    fill_random(byteInput, seed + 1, 0, 255);
    in.set(input);
    bytes.set(byteInput);
    scale.set(1.75f);
    Pipeline p(f);
    Buffer<float> out = p.realize<float>({w, h});
    check_against(out, [&](const std::vector<int> &c) {
      float vv = input(c[0], c[1]);
      int bb = byteInput(c[0], c[1]);
      return std::sqrt(std::fabs(vv) + 1.0f) * 1.75f + std::exp(vv) - std::log(std::fabs(vv) + 2.0f) +
             std::pow(std::fabs(vv) + 0.5f, 1.5f) + std::sin(vv) * std::cos(vv) + std::tanh(vv) +
             std::floor(vv * 7.0f) + std::ceil(vv * 3.0f) + std::nearbyint(vv * 5.0f) +
             float(bb % 7 - bb / 3) + (vv > 0.25f ? float(std::max(bb, 100)) : float(std::min(bb, 17)));
    }, 1e-4);
  }
}

TEST_CASE("Integer division and modulo are Euclidean", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam a(Int(32), 1, "a"), b(Int(32), 1, "b");
  Var x("x");
  Func q("q"), r("r");
  q(x) = a(x) / b(x) + a(x) / 4 + a(x) / 3;
  r(x) = a(x) % b(x) + a(x) % 8;
  Buffer<int> av(1000), bv(1000);
  fill_random(av, seed, -1000, 1000);
  fill_random(bv, seed + 1, -9, 9);
  a.set(av);
  b.set(bv);
  auto ediv = [](int64_t n, int64_t d) -> int64_t {
    if (d == 0)
      return 0;
    int64_t qq = n / d, rr = n % d;
    return rr < 0 ? (d > 0 ? qq - 1 : qq + 1) : qq;
  };
  auto emod = [&](int64_t n, int64_t d) -> int64_t { return d == 0 ? 0 : n - ediv(n, d) * d; };
  Buffer<int> qo = Pipeline(q).realize<int>({1000});
  Buffer<int> ro = Pipeline(r).realize<int>({1000});
  check_against(qo, [&](const std::vector<int> &c) {
    int64_t n = av(c[0]);
    return ediv(n, bv(c[0])) + ediv(n, 4) + ediv(n, 3);
  });
  check_against(ro, [&](const std::vector<int> &c) { return emod(av(c[0]), bv(c[0])) + emod(av(c[0]), 8); });
}

namespace {

// out = 3x3 box blur of `in` (no boundary handling: the input is larger than the output).
void checkBlur3x3(Func &blur, ImageParam &in, uint32_t seed, int w, int h) {
  Buffer<float> input(w + 2, h + 2);
  input.set_min({-1, -1});
  fill_random(input, seed);
  in.set(input);
  Pipeline p(blur);
  Buffer<float> out = p.realize<float>({w, h});
  check_against(out, [&](const std::vector<int> &c) {
    float sum = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        sum += input(c[0] + dx, c[1] + dy);
    return sum / 9.0f;
  });
}

struct Blur3x3 {
  ImageParam in{Float(32), 2, "in"};
  Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
  Func bx{"blur_x"}, by{"blur_y"};
  Blur3x3() {
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 9.0f;
  }
};

} // namespace

TEST_CASE("3x3 blur: inline, compute_root, compute_at", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  SECTION("inline") {
    Blur3x3 b;
    checkBlur3x3(b.by, b.in, seed, 67, 23);
  }
  SECTION("compute_root") {
    Blur3x3 b;
    b.bx.compute_root();
    checkBlur3x3(b.by, b.in, seed, 67, 23);
  }
  SECTION("compute_at a row") {
    Blur3x3 b;
    b.bx.compute_at(b.by, b.y);
    checkBlur3x3(b.by, b.in, seed, 31, 40);
  }
  SECTION("compute_at a row, store_root: a sliding window of rows") {
    Blur3x3 b;
    b.bx.compute_at(b.by, b.y).store_root();
    checkBlur3x3(b.by, b.in, seed, 31, 40);
    // Each row after the first computes only the one new row of blur_x it needs, into storage of
    // four rows.
    CHECK_THAT(Pipeline(b.by).lowered_stmt(Target("host")), Catch::Contains("let blur_x.s0.y.min = ((") && Catch::Contains(" + select((") &&
                                                                 Catch::Contains("allocate blur_x[float32 * blur_y.extent.0 * 4]"));
  }
  SECTION("sliding inside strips of rows, each strip its own window, strips in parallel") {
    Blur3x3 b;
    Var yo("yo"), yi("yi");
    b.by.split(b.y, yo, yi, 8, TailStrategy::GuardWithIf).parallel(yo).vectorize(b.x, 4);
    b.bx.store_at(b.by, yo).compute_at(b.by, yi).vectorize(b.x, 4);
    checkBlur3x3(b.by, b.in, seed, 45, 37); // the last strip has 5 rows
    CHECK_THAT(Pipeline(b.by).lowered_stmt(Target("host")), Catch::Contains("let blur_x.s0.y.min = ((") && Catch::Contains(" + select(("));
  }
  SECTION("sliding where the producer's rows are vectorized or parallel: slid, never folded") {
    // Rows a vector or parallel loop writes at once must not share a folded row.
    for (int variant = 0; variant < 2; ++variant) {
      Blur3x3 b;
      b.bx.store_root().compute_at(b.by, b.y);
      if (variant == 0)
        b.bx.vectorize(b.y, 4);
      else
        b.bx.parallel(b.y);
      checkBlur3x3(b.by, b.in, seed + variant, 29, 23);
      CHECK_THAT(Pipeline(b.by).lowered_stmt(Target("host")), !Catch::Contains("allocate blur_x[float32 * blur_y.extent.0 * 4]"));
    }
  }
  SECTION("compute_at a tile, store_root") {
    Blur3x3 b;
    b.by.tile(b.x, b.y, b.xi, b.yi, 16, 8);
    b.bx.compute_at(b.by, b.x).store_root();
    checkBlur3x3(b.by, b.in, seed, 45, 19);
  }
  SECTION("tiled, vectorized and parallel") {
    Blur3x3 b;
    b.by.tile(b.x, b.y, b.xi, b.yi, 32, 8).vectorize(b.xi, 8).parallel(b.y);
    b.bx.compute_at(b.by, b.x).vectorize(b.x, 8);
    checkBlur3x3(b.by, b.in, seed, 101, 37);
    checkBlur3x3(b.by, b.in, seed + 1, 7, 3);
  }
}

TEST_CASE("A slid producer that writes rows past its window, in any order, keeps the rows it needs", "[cpu][pipeline]") {
  // A tail shifted inward or rounded up computes more rows than one iteration needs, and a
  // reordered split writes them out of order: a folded storage must keep them apart, or a row
  // written later overwrites a needed one sharing its place (found by the differential tester).
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  for (TailStrategy tail : {TailStrategy::ShiftInward, TailStrategy::RoundUp}) {
    for (int order = 0; order < 3; ++order) {
      for (int reach : {0, 1, 2}) {
        INFO("tail " << int(tail) << ", order " << order << ", rows read " << reach + 1);
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y"), yo("yo"), yi("yi"), yio("yio"), yii("yii");
        Func p("p"), c("c");
        p(x, y) = in(x, y) * 7 + y;
        c(x, y) = p(x, y) * 3 + p(x - 2, y - reach);
        p.compute_at(c, y).store_root();
        p.split(y, yo, yi, 4, tail).split(yi, yio, yii, 3, TailStrategy::GuardWithIf);
        if (order == 1)
          p.reorder(yio, x, yo, yii);
        else if (order == 2)
          p.reorder(x, yii, yo, yio);
        Buffer<int32_t> input(16, 56); // a rounded-up tail reads further than the output
        input.set_min({-4, -8});
        fill_random(input, seed, -100, 100);
        in.set(input);
        Buffer<int32_t> out(12, 12);
        out.set_min({-2, 0});
        Pipeline(c).realize(out);
        check_against(out, [&](const std::vector<int> &q) {
          auto pv = [&](int xx, int yy) { return input(xx, yy) * 7 + yy; };
          return pv(q[0], q[1]) * 3 + pv(q[0] - 2, q[1] - reach);
        });
      }
    }
  }
}

TEST_CASE("Separable blur with boundary conditions", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 41, h = 29;
  Buffer<float> input(w, h);
  fill_random(input, seed);
  auto mirror = [](int v, int n) {
    int t = ((v % (2 * n)) + 2 * n) % (2 * n);
    return t < n ? t : 2 * n - 1 - t;
  };
  auto wrap = [](int v, int n) { return ((v % n) + n) % n; };
  auto mirrorInterior = [](int v, int n) {
    const int period = 2 * (n - 1), t = ((v % period) + period) % period;
    return t < n ? t : period - t;
  };
  struct Case {
    const char *Name;
    std::function<Func(const ImageParam &)> Make;
    std::function<float(int, int)> Reference;
  };
  std::vector<Case> cases = {
      {"repeat_edge", [](const ImageParam &i) { return BoundaryConditions::repeat_edge(i); },
       [&](int x, int y) { return clampedAt(input, x, y); }},
      {"constant_exterior", [](const ImageParam &i) { return BoundaryConditions::constant_exterior(i, 0.5f); },
       [&](int x, int y) { return (x < 0 || y < 0 || x >= w || y >= h) ? 0.5f : input(x, y); }},
      {"mirror_image", [](const ImageParam &i) { return BoundaryConditions::mirror_image(i); },
       [&](int x, int y) { return input(mirror(x, w), mirror(y, h)); }},
      {"repeat_image", [](const ImageParam &i) { return BoundaryConditions::repeat_image(i); },
       [&](int x, int y) { return input(wrap(x, w), wrap(y, h)); }},
      {"mirror_interior", [](const ImageParam &i) { return BoundaryConditions::mirror_interior(i); },
       [&](int x, int y) { return input(mirrorInterior(x, w), mirrorInterior(y, h)); }},
  };
  for (const Case &c : cases) {
    INFO(c.Name);
    ImageParam in(Float(32), 2, "in");
    in.set(input);
    Func bounded = c.Make(in);
    Var x("x"), y("y");
    Func bx("bx"), by("by");
    bx(x, y) = bounded(x - 2, y) + bounded(x, y) * 2.0f + bounded(x + 2, y);
    by(x, y) = bx(x, y - 2) + bx(x, y) * 2.0f + bx(x, y + 2);
    bx.compute_root().vectorize(x, 4);
    Pipeline p(by);
    // The output extends past the input on every side.
    Buffer<float> out(w + 10, h + 6);
    out.set_min({-5, -3});
    p.realize(out);
    check_against(out, [&](const std::vector<int> &p2) {
      auto rx = [&](int xx, int yy) { return c.Reference(xx - 2, yy) + c.Reference(xx, yy) * 2.0f + c.Reference(xx + 2, yy); };
      return rx(p2[0], p2[1] - 2) + rx(p2[0], p2[1]) * 2.0f + rx(p2[0], p2[1] + 2);
    });
  }
}

TEST_CASE("Boundary conditions of Funcs over a region, and of Buffers", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  // A Func defined everywhere, bounded to [2, 11] x [-3, 1]; the third dimension passes through.
  Var x("x"), y("y"), c("c");
  Func source("source");
  source(x, y, c) = x * 100 + y * 10 + c;
  const Region region = {{2, 10}, {-3, 5}};
  auto inRange = [](int v, int min, int extent) { return v >= min && v < min + extent; };
  auto edge = [](int v, int min, int extent) { return std::min(std::max(v, min), min + extent - 1); };
  auto tile = [](int v, int min, int extent) { return min + ((v - min) % extent + extent) % extent; };
  auto mirror = [](int v, int min, int extent) {
    const int t = ((v - min) % (2 * extent) + 2 * extent) % (2 * extent);
    return min + (t < extent ? t : 2 * extent - 1 - t);
  };
  auto interior = [](int v, int min, int extent) {
    const int period = 2 * (extent - 1), t = period ? ((v - min) % period + period) % period : 0;
    return min + (t < extent ? t : period - t);
  };
  struct Case {
    const char *name;
    Func bounded;
    std::function<int(int, int, int)> reference;
  };
  auto value = [](int vx, int vy, int vc) { return vx * 100 + vy * 10 + vc; };
  std::vector<Case> cases = {
      {"constant_exterior", BoundaryConditions::constant_exterior(source, -1, region),
       [&](int vx, int vy, int vc) { return inRange(vx, 2, 10) && inRange(vy, -3, 5) ? value(vx, vy, vc) : -1; }},
      {"repeat_edge", BoundaryConditions::repeat_edge(source, region),
       [&](int vx, int vy, int vc) { return value(edge(vx, 2, 10), edge(vy, -3, 5), vc); }},
      {"repeat_image", BoundaryConditions::repeat_image(source, region),
       [&](int vx, int vy, int vc) { return value(tile(vx, 2, 10), tile(vy, -3, 5), vc); }},
      {"mirror_image", BoundaryConditions::mirror_image(source, region),
       [&](int vx, int vy, int vc) { return value(mirror(vx, 2, 10), mirror(vy, -3, 5), vc); }},
      {"mirror_interior", BoundaryConditions::mirror_interior(source, region),
       [&](int vx, int vy, int vc) { return value(interior(vx, 2, 10), interior(vy, -3, 5), vc); }},
      // An undefined range leaves its dimension unbounded.
      {"repeat_edge in y only", BoundaryConditions::repeat_edge(source, {Range(), Range(0, 1)}),
       [&](int vx, int vy, int vc) { return value(vx, 0, vc); }},
  };
  for (Case &k : cases) {
    INFO(k.name);
    Func out("out");
    out(x, y, c) = k.bounded(x, y, c);
    Buffer<int> result(40, 23, 2);
    result.set_min({-14, -11, 0});
    Pipeline(out).realize(result);
    check_against(result, [&](const std::vector<int> &p) { return k.reference(p[0], p[1], p[2]); });
  }

  // A Buffer's own region, with a non-zero min; an extent of 1 mirrors to its one point.
  Buffer<int16_t> buffer(7, 1);
  buffer.set_min({-2, 4});
  fill_random(buffer, seed, -1000, 1000);
  Func out("from_buffer");
  out(x, y) = BoundaryConditions::mirror_interior(buffer)(x, y) + BoundaryConditions::repeat_image(buffer)(x, y) * 3 +
              BoundaryConditions::constant_exterior(buffer, 5)(x, y) * 7;
  Buffer<int16_t> result(30, 9);
  result.set_min({-12, 0});
  Pipeline(out).realize(result);
  check_against(result, [&](const std::vector<int> &p) {
    const int bx = p[0];
    const bool inside = inRange(bx, -2, 7) && p[1] == 4;
    return int16_t(buffer(interior(bx, -2, 7), 4) + buffer(tile(bx, -2, 7), 4) * 3 +
                   (inside ? buffer(bx, 4) : 5) * 7);
  });

  // An image given a region of its own (Halide's max filter bounds x and y only; here the
  // region is also narrower than the image, so that using the image's own would show).
  Buffer<int16_t> buffer3(5, 3, 2);
  fill_random(buffer3, seed + 1, -1000, 1000);
  ImageParam image(Int(16), 3, "bounded_image");
  image.set(buffer3);
  Func fromImage("from_image_region");
  fromImage(x, y, c) = BoundaryConditions::repeat_edge(image, {{1, 4}, {image.dim(1).min(), image.dim(1).extent()}})(x, y, c) +
                       BoundaryConditions::constant_exterior(image, 9, {{0, 3}, {0, 3}})(x, y, c) * 3;
  Buffer<int16_t> imageResult(12, 6, 2);
  imageResult.set_min({-3, -2, 0});
  Pipeline(fromImage).realize(imageResult);
  check_against(imageResult, [&](const std::vector<int> &p) {
    const int vx = p[0], vy = p[1], vc = p[2];
    return int16_t(buffer3(edge(vx, 1, 4), edge(vy, 0, 3), vc) + (inRange(vx, 0, 3) && inRange(vy, 0, 3) ? buffer3(vx, vy, vc) : 9) * 3);
  });

  // An ImageParam passes for a Func, and a Func wraps a Buffer, as in Halide.
  Func asFunc = image, ofBuffer(buffer3);
  Func sum("image_as_func");
  sum(x, y, c) = asFunc(x, y, c) + ofBuffer(x, y, c) * 2;
  check_against(sum.realize<int16_t>({5, 3, 2}, Target("host")),
                [&](const std::vector<int> &p) { return int16_t(buffer3(p[0], p[1], p[2]) * 3); });
  CHECK_THROWS_WITH(Func(Buffer<int>()), Catch::Contains("a Func of an undefined Buffer"));

  CHECK_THROWS_WITH(BoundaryConditions::repeat_edge(source, {{0, 1}, {0, 1}, {0, 1}, {0, 1}}),
                    Catch::Contains("4 bounds for 3 dimensions"));
  CHECK_THROWS_WITH(BoundaryConditions::mirror_image(image, {{0, 1}, {0, 1}, {0, 1}, {0, 1}}),
                    Catch::Contains("mirror_image of bounded_image: 4 bounds for 3 dimensions"));
  CHECK_THROWS_WITH(BoundaryConditions::repeat_edge(Func("undefined"), {}), Catch::Contains("undefined Func undefined"));
}

TEST_CASE("Histogram with an RDom", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(UInt(8), 2, "in");
  Buffer<uint8_t> input(123, 45);
  fill_random(input, seed, 0, 255);
  in.set(input);
  RDom r(0, in.width(), 0, in.height(), "r");
  Func hist("hist");
  hist(cast<int>(in(r.x, r.y))) += 1;
  Buffer<int> out = Pipeline(hist).realize<int>({256});
  std::vector<int> expected(256, 0);
  for (int yy = 0; yy < 45; ++yy)
    for (int xx = 0; xx < 123; ++xx)
      ++expected[input(xx, yy)];
  check_against(out, [&](const std::vector<int> &c) { return expected[c[0]]; });
}

TEST_CASE("Matrix multiply with an RDom", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int n = 37, m = 29, k = 53;
  ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
  Buffer<float> a(k, n), b(m, k);
  fill_random(a, seed);
  fill_random(b, seed + 1);
  A.set(a);
  B.set(b);
  Var x("x"), y("y"), xi("xi");
  RDom r(0, k, "r");
  Func prod("prod"), out("matmul");
  prod(x, y) = 0.0f;
  prod(x, y) += A(r, y) * B(x, r);
  out(x, y) = prod(x, y);
  prod.compute_at(out, y).vectorize(x, 8);
  prod.update(0).reorder(x, r).vectorize(x, 8);
  out.parallel(y).vectorize(x, 8);
  Buffer<float> c = Pipeline(out).realize<float>({m, n});
  check_against(c, [&](const std::vector<int> &p) {
    float sum = 0;
    for (int kk = 0; kk < k; ++kk)
      sum += a(kk, p[1]) * b(p[0], kk);
    return sum;
  }, 1e-4);
}

TEST_CASE("Multi-stage pipeline with parallel and vectorize and tails", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "in");
  Param<float> gain("gain");
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func clamped("clamped"), brighten("brighten"), sharpen("sharpen"), result("result");
  clamped = BoundaryConditions::repeat_edge(in);
  brighten(x, y) = clamped(x, y) * gain;
  sharpen(x, y) = brighten(x, y) * 2.0f - (brighten(x - 1, y) + brighten(x + 1, y)) * 0.5f;
  result(x, y) = cast<uint8_t>(clamp(sharpen(x, y) * 100.0f + 128.0f, 0.0f, 255.0f));
  brighten.compute_root().parallel(y).vectorize(x, 8);
  sharpen.compute_at(result, y).vectorize(x, 4);
  result.split(x, xo, xi, 16).vectorize(xi).parallel(y);
  for (auto [w, h] : {std::pair{97, 13}, std::pair{16, 1}, std::pair{5, 7}, std::pair{130, 66}}) {
    INFO(w << "x" << h);
    Buffer<float> input(w, h);
    fill_random(input, seed);
    in.set(input);
    gain.set(1.25f);
    Buffer<uint8_t> out = Pipeline(result).realize<uint8_t>({w, h});
    check_against(out, [&](const std::vector<int> &c) {
      auto bright = [&](int xx) { return clampedAt(input, xx, c[1]) * 1.25f; };
      float s = bright(c[0]) * 2.0f - (bright(c[0] - 1) + bright(c[0] + 1)) * 0.5f;
      return static_cast<uint8_t>(std::clamp(s * 100.0f + 128.0f, 0.0f, 255.0f));
    }, 0, 1);
  }
}

TEST_CASE("Fuse, unroll, reorder and a Func with an update over pure vars", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Int(32), 2, "in");
  Buffer<int> input(19, 11);
  fill_random(input, seed, -100, 100);
  in.set(input);
  Var x("x"), y("y"), xy("xy");
  Func f("f"), g("g");
  f(x, y) = in(x, y) * 3;
  f(x, y) = f(x, y) + x - y;
  f.compute_root().unroll(x, 3);
  f.update(0).reorder(y, x);
  g(x, y) = f(x, y) + 1;
  g.fuse(x, y, xy).parallel(xy);
  Buffer<int> out = Pipeline(g).realize<int>({19, 11});
  check_against(out, [&](const std::vector<int> &c) { return input(c[0], c[1]) * 3 + c[0] - c[1] + 1; });
}

TEST_CASE("Splits that reuse a loop name guard each split's own variable", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), yo("yo"), xi("xi"), yi("yi");
  Func band("band");
  band(x, y) = in(x, y) * 2.0f;
  // y is split twice, both times keeping the name y for the outer loop.
  band.split(y, yo, y, 16).parallel(yo).tile(x, y, xi, yi, 8, 4).vectorize(xi);
  for (auto [w, h] : {std::pair{200, 100}, std::pair{13, 37}}) {
    INFO(w << "x" << h);
    Buffer<float> input(w, h);
    fill_random(input, seed);
    in.set(input);
    Buffer<float> out(w, h);
    out.fill(NAN);
    Pipeline(band).realize(out);
    check_against(out, [&](const std::vector<int> &c) { return input(c[0], c[1]) * 2.0f; });
  }
}

TEST_CASE("Shifted tails compute some points twice and never leave the region", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  SECTION("a tiled, vectorized blur whose tiles and producer tiles are all full") {
    Blur3x3 b;
    b.by.tile(b.x, b.y, b.xi, b.yi, 16, 8, TailStrategy::ShiftInward).vectorize(b.xi, 8).parallel(b.y);
    b.bx.compute_at(b.by, b.x).vectorize(b.x, 8, TailStrategy::ShiftInward);
    checkBlur3x3(b.by, b.in, seed, 101, 37);
    checkBlur3x3(b.by, b.in, seed + 1, 16, 8);
  }
  SECTION("an output smaller than the factor is an error naming it") {
    Blur3x3 b;
    b.by.split(b.x, b.x, b.xi, 16, TailStrategy::ShiftInward);
    CHECK_THROWS_WITH(checkBlur3x3(b.by, b.in, seed, 9, 4),
                      Catch::Contains("output blur_y has extent 9 in x, less than the factor 16"));
  }
  SECTION("an intermediate smaller than the factor is computed over a larger region") {
    ImageParam in(Float(32), 1, "in");
    Var x("x"), xo("xo"), xi("xi");
    Func g("g"), f("f");
    g(x) = in(x) * 2.0f;
    f(x) = g(x) + g(x + 1);
    g.compute_root().split(x, xo, xi, 8, TailStrategy::ShiftInward);
    Buffer<float> input(12);
    input.set_min({-8});
    fill_random(input, seed);
    in.set(input);
    Buffer<float> out = Pipeline(f).realize<float>({3});
    check_against(out, [&](const std::vector<int> &c) { return input(c[0]) * 2.0f + input(c[0] + 1) * 2.0f; });
  }
  SECTION("only pure definitions may shift") {
    Var x("x"), xo("xo"), xi("xi");
    RDom r(0, 10, "r");
    Func h("h");
    h(x) = 0;
    h(x) += r;
    CHECK_THROWS_WITH(h.update(0).split(x, xo, xi, 2, TailStrategy::ShiftInward),
                      Catch::Contains("ShiftInward") && Catch::Contains("pure definition"));
  }
}

TEST_CASE("A definition that reuses subexpressions many levels deep compiles quickly", "[cpu][pipeline]") {
  // Written out as a tree this value has 2^30 leaves; common subexpressions keep it linear.
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(Float(32), 1, "in");
  Var x("x");
  Func f("deep");
  Expr value = in(x);
  for (int i = 0; i < 30; ++i)
    value = value * 0.5f + cos(value) * 0.25f;
  f(x) = value;
  f.vectorize(x, 8);
  Buffer<float> input(100);
  fill_random(input, seed);
  in.set(input);
  Buffer<float> out = Pipeline(f).realize<float>({100});
  check_against(out, [&](const std::vector<int> &c) {
    float v = input(c[0]);
    for (int i = 0; i < 30; ++i)
      v = v * 0.5f + std::cos(v) * 0.25f;
    return v;
  }, 1e-4);
}

TEST_CASE("Long chains of stencils compile in linear time at every compute level", "[cpu][pipeline]") {
  // Each Func's region is stated in its consumer's: expanded into the output's, the expressions
  // doubled with every level (a chain of 8 in one tile took minutes to compile). Left out under
  // ThreadSanitizer, as the other compile-time tests: no threads.
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 23, h = 17, length = 10;
  Buffer<float> input(w, h);
  fill_random(input, seed);
  std::function<float(int, int, int)> reference = [&](int level, int x, int y) {
    return level == 0 ? clampedAt(input, x, y)
                      : reference(level - 1, x - 1, y) + reference(level - 1, x + 1, y + 1) * 0.5f;
  };
  for (const char *schedule : {"root tiles", "in the output's tile, split and shifted", "at the consumer's rows"}) {
    INFO(schedule);
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    ImageParam in(Float(32), 2, "in");
    in.set(input);
    std::vector<Func> chain{BoundaryConditions::repeat_edge(in)};
    for (int k = 0; k < length; ++k) {
      Func f("f" + std::to_string(k));
      f(x, y) = chain.back()(x - 1, y) + chain.back()(x + 1, y + 1) * 0.5f;
      chain.push_back(f);
    }
    Func out = chain.back();
    out.tile(x, y, xo, yo, xi, yi, 8, 4, TailStrategy::ShiftInward);
    for (int k = 1; k < length; ++k) {
      if (schedule[0] == 'r')
        chain[k].compute_root().tile(x, y, xo, yo, xi, yi, 8, 4, TailStrategy::GuardWithIf);
      else if (schedule[0] == 'i')
        chain[k].compute_at(out, xo).split(x, xo, xi, 4, TailStrategy::ShiftInward);
      else
        chain[k].compute_at(chain[k + 1], k + 1 == length ? xo : y);
    }
    Pipeline p(out);
    CHECK(p.lowered_stmt(Target("host")).size() < 200000);
    Buffer<float> result(w + 3, h + 2);
    result.set_min({-2, -1});
    p.realize(result);
    check_against(result, [&](const std::vector<int> &c) { return reference(length, c[0], c[1]); }, 1e-4);
  }
}

TEST_CASE("Atomic updates let a histogram's RVar loop run in parallel", "[cpu][pipeline]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  ImageParam in(UInt(8), 2, "in");
  Buffer<uint8_t> input(301, 97);
  fill_random(input, seed, 0, 255);
  in.set(input);
  RDom r(0, in.width(), 0, in.height(), "r");
  Func hist("hist");
  hist(cast<int>(in(r.x, r.y))) += 1;
  hist.update(0).parallel(r.y).atomic();
  Buffer<int> out = Pipeline(hist).realize<int>({256});
  std::vector<int> expected(256, 0);
  for (int y = 0; y < 97; ++y)
    for (int x = 0; x < 301; ++x)
      ++expected[input(x, y)];
  check_against(out, [&](const std::vector<int> &c) { return expected[c[0]]; });

  Func f("f");
  Var x("x");
  f(x) = x;
  CHECK_THROWS_WITH(f.update(0), Catch::Contains("has 0 update definitions"));
  f(x) = f(x) * 2;
  CHECK_THROWS_WITH(Stage(f.contents(), 0).atomic(), Catch::Contains("only update definitions"));
}

TEST_CASE("infer_arguments lists the Params, ImageParams and Buffers the definitions read", "[cpu][pipeline]") {
  ImageParam in(Float(32), 2, "in");
  Param<int16_t> offset("offset");
  Param<float16_t> scale("scale");
  Buffer<uint8_t> table(16);
  table.fill(3);
  Var x("x"), y("y");
  Func clamped = BoundaryConditions::repeat_edge(in);
  Func f("f"), g("g");
  f(x, y) = clamped(x, y) * cast<float>(scale) + offset;
  g(x, y) = f(x, y) + table(x % 16);
  std::vector<Argument> arguments = Pipeline(g).infer_arguments();
  REQUIRE(arguments.size() == 4);
  auto named = [&](const std::string &name) {
    for (const Argument &a : arguments)
      if (a.name == name)
        return a;
    FAIL("no argument " << name);
    return Argument();
  };
  CHECK((named("in").is_buffer && named("in").type == Float(32) && named("in").dimensions == 2));
  CHECK_FALSE(named("in").buffer.defined());
  CHECK((!named("offset").is_buffer && named("offset").type == Int(16)));
  CHECK(named("scale").type == Float(16));
  const auto direct = std::find_if(arguments.begin(), arguments.end(), [](const Argument &a) {
    return a.is_buffer && a.name != "in";
  });
  REQUIRE(direct != arguments.end());
  CHECK(direct->buffer.host_bytes() == table.host_bytes());
  Buffer<float> input(8, 8);
  in.set(input);
  for (const Argument &a : Pipeline(g).infer_arguments())
    CHECK(a.buffer.defined() == a.is_buffer); // the ImageParam's buffer now, and the Buffer's
}
