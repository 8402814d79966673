// Stage::rfactor end to end on the host: each reduction it factors, each way of naming the RVars
// it keeps, against plain C++ on fresh random data; and its errors.

#include "TestUtil.h"
#include "ptxjit.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

using namespace ptxjit;
using namespace ptxjit::test;

TEST_CASE("rfactor splits a sum into parallel partial sums: every way of keeping RVars", "[cpu][rfactor]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int n = 1003; // not a multiple of any split factor below
  Buffer<int32_t> input(n);
  fill_random(input, seed, -1000000, 1000000);
  ImageParam in(Int(32), 1, "in");
  in.set(input);
  int64_t expected = 0;
  for (int i = 0; i < n; ++i)
    expected += input(i);

  for (int schedule = 0; schedule < 5; ++schedule) {
    INFO("schedule " << schedule);
    RDom r(0, n, "r");
    Func total("total");
    Var u("u"), ui("ui");
    RVar ro("ro"), ri("ri");
    total() = 7;
    total() += in(r);
    Func partial;
    switch (schedule) {
    case 0: // outer RVar kept: one partial sum per chunk, chunks in parallel
      total.update().split(r, ro, ri, 64);
      partial = total.update().rfactor(ro, u);
      partial.compute_root().update().parallel(u);
      break;
    case 1: // inner RVar kept: strided partial sums, vectorized across them
      total.update().split(r, ro, ri, 16);
      partial = total.update().rfactor({{ri, u}});
      partial.compute_root().update().vectorize(u);
      partial.vectorize(u);
      break;
    case 2: // the unsplit RVar kept: the intermediate is the input, reduced by f's update
      partial = total.update().rfactor(r, u);
      partial.compute_root().parallel(u, 100);
      partial.update().parallel(u, 100);
      break;
    case 3: // a split of a split
      total.update().split(r, ro, ri, 100).split(ro, ro, RVar("rm"), 3);
      partial = total.update().rfactor(RVar("rm"), u);
      partial.update().parallel(u);
      break;
    default: // nothing kept: the intermediate holds the whole sum
      partial = total.update().rfactor({});
      break;
    }
    Buffer<int32_t> result = Pipeline(total).realize<int32_t>({});
    CHECK(result() == static_cast<int32_t>(expected + 7));
  }
}

TEST_CASE("rfactor of min, max, product, &&, || and -, and of a Tuple, on several types", "[cpu][rfactor]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 37, h = 211;
  Buffer<float> values(w, h);
  Buffer<uint8_t> bytes(w, h);
  fill_random(values, seed, -100.0, 100.0);
  fill_random(bytes, seed + 1, 0, 255);
  ImageParam f32in(Float(32), 2, "values"), u8in(UInt(8), 2, "bytes");
  f32in.set(values);
  u8in.set(bytes);
  Var x("x"), u("u");
  RVar ro("ro"), ri("ri");

  // Column reductions f(x) over r = y, factored over chunks of rows computed in parallel.
  RDom r(0, h, "r");
  Func lowest("lowest"), highest("highest"), product("product"), all("all"), any("any"), difference("difference"),
      pair("pair");
  lowest(x) = std::numeric_limits<float>::infinity();
  lowest(x) = min(lowest(x), f32in(x, r));
  highest(x) = cast<uint8_t>(0);
  highest(x) = max(u8in(x, r), highest(x));
  product(x) = cast<uint32_t>(1);
  product(x) *= cast<uint32_t>(u8in(x, r)) * 2 + 1; // odd: the product does not become 0
  all(x) = true;
  all(x) = all(x) && u8in(x, r) > 2;
  any(x) = false;
  any(x) = u8in(x, r) == 77 || any(x);
  difference(x) = 1000.0f;
  difference(x) -= f32in(x, r);
  pair(x) = Tuple(0, cast<uint8_t>(255));
  pair(x) = Tuple(pair(x)[0] + cast<int32_t>(u8in(x, r)), min(pair(x)[1], u8in(x, r)));
  for (Func f : {lowest, highest, product, all, any, difference, pair}) {
    f.update().split(r, ro, ri, 32);
    Func partial = f.update().rfactor(ro, u);
    partial.compute_root().update().parallel(u).reorder(x, ri, u);
  }

  auto column = [&](auto init, auto step) {
    return [=](const std::vector<int> &p) {
      auto acc = init;
      for (int k = 0; k < h; ++k)
        acc = step(acc, p[0], k);
      return acc;
    };
  };
  check_against(Pipeline(lowest).realize<float>({w}),
                column(std::numeric_limits<float>::infinity(), [&](float a, int i, int k) { return std::min(a, values(i, k)); }));
  check_against(Pipeline(highest).realize<uint8_t>({w}),
                column(uint8_t(0), [&](uint8_t a, int i, int k) { return std::max(a, bytes(i, k)); }));
  check_against(Pipeline(product).realize<uint32_t>({w}),
                column(uint32_t(1), [&](uint32_t a, int i, int k) { return a * (uint32_t(bytes(i, k)) * 2u + 1u); }));
  Func flags("flags");
  flags(x) = select(all(x), 1, 0) + select(any(x), 2, 0);
  check_against(Pipeline(flags).realize<int32_t>({w}), [&](const std::vector<int> &p) {
    bool a = true, b = false;
    for (int k = 0; k < h; ++k) {
      a = a && bytes(p[0], k) > 2;
      b = b || bytes(p[0], k) == 77;
    }
    return (a ? 1 : 0) + (b ? 2 : 0);
  });
  check_against(Pipeline(difference).realize<float>({w}),
                column(1000.0, [&](double a, int i, int k) { return a - values(i, k); }), 1e-4);
  Buffer<int32_t> sums(w);
  Buffer<uint8_t> least(w);
  Pipeline(pair).realize({sums, least});
  check_against(sums, column(0, [&](int a, int i, int k) { return a + bytes(i, k); }));
  check_against(least,
                column(uint8_t(255), [&](uint8_t a, int i, int k) { return std::min(a, bytes(i, k)); }));
}

TEST_CASE("rfactor of a histogram, of an RDom with a where() condition, and of fused RVars", "[cpu][rfactor]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 53, h = 41;
  Buffer<uint8_t> image(w, h);
  fill_random(image, seed, 0, 255);
  ImageParam in(UInt(8), 2, "image");
  in.set(image);
  Var x("x"), y("y"), u("u"), v("v");

  SECTION("a histogram: one per row in parallel, then summed") {
    RDom r(0, w, 0, h, "r");
    Func hist("hist");
    hist(x) = 0;
    hist(cast<int32_t>(in(r.x, r.y)) / 4) += 1;
    Func rows = hist.update().rfactor(r.y, y);
    rows.compute_root().update().parallel(y);
    Buffer<int32_t> result = Pipeline(hist).realize<int32_t>({64});
    std::vector<int> expected(64, 0);
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        ++expected[image(i, j) / 4];
    check_against(result, [&](const std::vector<int> &p) { return expected[p[0]]; });
  }

  SECTION("where(): the condition moves to the intermediate, on the kept RVars as Vars") {
    RDom r(0, w, 0, h, "r");
    r.where((r.x + r.y) % 3 != 0 && in(r.x, r.y) > 100);
    Func total("conditional_total");
    total() = 0;
    total() += cast<int32_t>(in(r.x, r.y));
    RVar rxo("rxo"), rxi("rxi");
    total.update().split(r.x, rxo, rxi, 8);
    Func partial = total.update().rfactor({{r.y, v}, {rxo, u}});
    partial.compute_root().update().parallel(v);
    int expected = 0;
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        if ((i + j) % 3 != 0 && image(i, j) > 100)
          expected += image(i, j);
    CHECK(Pipeline(total).realize<int32_t>({})() == expected);
  }

  SECTION("fused RVars, split again") {
    RDom r(0, w, 0, h, "r");
    Func total("fused_total");
    total(x) = 0.0f;
    total(x) += f32(in(r.x, r.y)) * f32(x + 1);
    RVar fused("fused"), fo("fo"), fi("fi");
    total.update().fuse(r.x, r.y, fused).split(fused, fo, fi, 128);
    Func partial = total.update().rfactor(fo, u);
    partial.compute_root().update().parallel(u).vectorize(x, 4);
    Buffer<float> result = Pipeline(total).realize<float>({5});
    double sum = 0;
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        sum += image(i, j);
    check_against(result, [&](const std::vector<int> &p) { return sum * (p[0] + 1); }, 1e-4);
  }
}

TEST_CASE("rfactor keeping every RVar: a split's tail still guards what the update reads", "[cpu][rfactor]") {
  // The intermediate has no RVar left to reduce over; the tail's condition must keep its
  // arguments from reading past the input, which is exactly the domain's size (found by the
  // differential tester).
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int n = 13;
  Buffer<int32_t> values(n);
  fill_random(values, seed, 0, 9);
  ImageParam in(Int(32), 1, "in");
  in.set(values);
  Var x("x"), u("u");
  RVar ro("ro"), ri("ri"), fused("fused");
  RDom r(0, n, "r");
  Func hist("tail_hist");
  hist(x) = 0;
  hist(clamp(in(r), 0, 9)) += 1;
  hist.update().split(r, ro, ri, 8).fuse(ri, ro, fused);
  hist.update().rfactor(fused, u).compute_root().update().parallel(u);
  Buffer<int32_t> out = Pipeline(hist).realize<int32_t>({10});
  check_against(out, [&](const std::vector<int> &c) {
    int count = 0;
    for (int i = 0; i < n; ++i)
      count += values(i) == c[0];
    return count;
  });
}

TEST_CASE("rfactor of a split with a tail: the tail's guard bounds reads at the split RVar inside sums", "[cpu][rfactor]") {
  // In the intermediate an RVar r of RDom(m, e) split by k is u * k + ri + m, folded into the
  // reads' larger sums (x + r + 2 through an inlined Func, 2 * r - x); the tail's guard must bound
  // them, or an input that covers exactly what the domain reads is refused (found by the
  // differential tester).
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  struct Case {
    int min, extent, factor;
  };
  for (const Case c : {Case{1, 6, 7}, Case{0, 13, 4}, Case{-2, 9, 5}, Case{3, 10, 16}}) {
    INFO("RDom(" << c.min << ", " << c.extent << ") split by " << c.factor);
    const int w = 11, last = c.min + c.extent - 1;
    // Each input covers exactly what its read reaches for x in [0, w).
    Buffer<int32_t> shifted(w + c.extent), scaled(2 * last - (2 * c.min - (w - 1)) + 1);
    shifted.set_min({c.min + 2});
    scaled.set_min({2 * c.min - (w - 1)});
    fill_random(shifted, seed, -1000, 1000);
    fill_random(scaled, seed + 1, -1000, 1000);
    ImageParam a(Int(32), 1, "a"), b(Int(32), 1, "b");
    a.set(shifted);
    b.set(scaled);
    Var x("x"), u("u");
    RVar ro("ro"), ri("ri");
    RDom r(c.min, c.extent, "r");
    Func offset("offset"), f("tail_sum");
    offset(x) = a(x + 2) * 3;
    f(x) = 0;
    f(x) += offset(x + r) + b(2 * r - x);
    f.update().split(r, ro, ri, c.factor, TailStrategy::GuardWithIf);
    f.update().rfactor(ro, u).compute_root().update().parallel(u);
    Buffer<int32_t> out = Pipeline(f).realize<int32_t>({w});
    check_against(out, [&](const std::vector<int> &p) {
      int sum = 0;
      for (int i = c.min; i <= last; ++i)
        sum += shifted(p[0] + i + 2) * 3 + scaled(2 * i - p[0]);
      return sum;
    });
  }
}

TEST_CASE("rfactor keeps a reordered storage and can be factored again", "[cpu][rfactor]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 24, h = 300;
  Buffer<int32_t> input(w, h);
  fill_random(input, seed, -50, 50);
  ImageParam in(Int(32), 2, "in");
  in.set(input);
  Var x("x"), c("c"), u("u"), t("t");
  RDom r(0, h, "r");
  RVar ro("ro"), ri("ri"), rm("rm"), rn("rn");
  Func sums("sums");
  sums(x, c) = 0;
  sums(x, c) += in(x, r) * in(x, r) * (c + 1);
  sums.reorder_storage(c, x); // the partial sums are stored (c, x, u)
  sums.update().split(r, ro, ri, 10);
  Func partial = sums.update().rfactor(ro, u); // partial(x, c, u): 30 chunks of 10 rows
  partial.compute_root().update().parallel(u);
  // The partial sums summed in 5 groups of 6 chunks, each group a Func of its own.
  sums.update().split(ro, rm, rn, 6);
  Func groups = sums.update().rfactor(rm, t);
  groups.compute_root().update().parallel(t);
  CHECK_THAT(Pipeline(sums).lowered_stmt(Target("host")), Catch::Contains("allocate " + partial.name() + "["));
  Buffer<int32_t> result = Pipeline(sums).realize<int32_t>({w, 3});
  check_against(result, [&](const std::vector<int> &p) {
    int s = 0;
    for (int k = 0; k < h; ++k)
      s += input(p[0], k) * input(p[0], k) * (p[1] + 1);
    return s;
  });
}

TEST_CASE("rfactor errors name the stage and what is wrong", "[cpu][rfactor]") {
  Var x("x"), u("u");
  RDom r(0, 10, "r");
  RVar ro("ro"), ri("ri");
  Func f("plain"), g("scaled"), h("self_indexed"), k("two_sums");
  f(x) = x;
  f(x) += r;
  CHECK_THROWS_WITH(f.update(0).rfactor(RVar("nowhere"), u),
                    Catch::Contains("rfactor of plain.s1: nowhere is not an RVar loop of plain.s1"));
  CHECK_THROWS_WITH(f.update(0).rfactor(r, x), Catch::Contains("Var x already names a dimension of plain"));
  CHECK_THROWS_WITH(f.update(0).rfactor({{r, u}, {r, Var("w")}}), Catch::Contains("r.x is preserved twice"));
  Param<int32_t> level("level");
  CHECK_THROWS_WITH(f.update(0).specialize(level > 3).rfactor(r, u),
                    Catch::Contains("call rfactor on the update itself, not on a specialization"));
  g(x) = 1;
  g(x) = g(x) * 2 + r;
  CHECK_THROWS_WITH(g.update(0).rfactor(r, u),
                    Catch::Contains("value 0 (") && Catch::Contains("is not scaled's old value combined by +, -, *"));
  h(x) = 0;
  h(x) += h(x - 1) + r;
  CHECK_THROWS_WITH(h.update(0).rfactor(r, u), Catch::Contains("is not self_indexed's old value combined"));
  k(x) = 0;
  k(x) = k(x) + r;
  k.update(0).split(r, ro, ri, 4).fuse(ri, x, Var("mixed"));
  CHECK_THROWS_WITH(k.update(0).rfactor(ro, u), Catch::Contains("fuses RVar and pure Var"));
  Func pure("pure_only");
  pure(x) = x;
  CHECK_THROWS_WITH(pure.update(0).rfactor(r, u), Catch::Contains("update(0) does not exist"));
}
