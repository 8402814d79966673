// Bad pipelines, schedules and buffers: each gives an error that names what was wrong.

#include "TestUtil.h"
#include "ptxjit.h"

#include <atomic>

using namespace ptxjit;
using namespace ptxjit::test;

TEST_CASE("Definition errors name the Func and what was expected", "[unit][lang]") {
  Var x("x"), y("y"), z("z");
  Func f("f"), g("g"), undefinedFunc("undefined_func");
  CHECK_THROWS_WITH(g(x) = undefinedFunc(x) + 1, Catch::Contains("undefined_func is called before it is defined"));
  f(x, y) = x + y;
  CHECK_THROWS_WITH(g(x) = f(x, y, z), Catch::Contains("f has 2 dimensions but is called with 3 arguments"));
  CHECK_THROWS_WITH(g(x) = f(x, 1.5f), Catch::Contains("argument 1 of Func f must be an integer"));
  CHECK_THROWS_WITH(f(x, y) = f(x, y) + 0.5f * cast<float>(x),
                    Catch::Contains("f has type int32 but update f.s1 has type float32"));
  Func h("h");
  CHECK_THROWS_WITH(h(x + 1) = 3, Catch::Contains("first definition must be pure"));
  CHECK_THROWS_WITH(h(x, x) = 3, Catch::Contains("first definition must be pure"));
  CHECK_THROWS_WITH(h(x) = y, Catch::Contains("uses Var y, which is not one of its arguments (x)"));
  RDom r(0, 10, "r");
  CHECK_THROWS_WITH(h(x) = r.x, Catch::Contains("RVar r.x"));
  CHECK_THROWS_WITH(RDom(0, 4, 0, 2 - 5, "negative"), Catch::Contains("RDom negative has extent -3 in negative.y") &&
                                                            Catch::Contains("must not be negative"));
  CHECK_NOTHROW(RDom(0, 0, "empty"));
  h(x) = x;
  CHECK_THROWS_WITH(h(z) = h(z) + 1, Catch::Contains("uses Var z"));
  CHECK_THROWS_WITH(Func("bad name"), Catch::Contains("invalid Func name"));
}

TEST_CASE("Schedule errors name the stage and the loop", "[unit][lang]") {
  Var x("x"), y("y"), z("z"), xo("xo"), xi("xi");
  Func f("f");
  f(x, y) = x * y;
  CHECK_THROWS_WITH(f.split(z, xo, xi, 8), Catch::Contains("split of f.s0: z is not a loop of f.s0") &&
                                                 Catch::Contains("x, y"));
  CHECK_THROWS_WITH(f.split(x, xo, xi, 0), Catch::Contains("factor must be positive"));
  CHECK_THROWS_WITH(f.reorder(x, x), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(f.parallel(z), Catch::Contains("parallel of f.s0: z is not a loop"));
  CHECK_THROWS_WITH(f.fuse(y, y, z), Catch::Contains("fuse of f.s0: inner and outer are both y"));
  CHECK_THROWS_WITH(f.update(0), Catch::Contains("has 0 update definitions"));
  CHECK_THROWS_WITH(f.bound(z, 0, 4), Catch::Contains("z is not one of its arguments"));
  CHECK_THROWS_WITH(f.compute_at(f, x), Catch::Contains("own loop"));
}

TEST_CASE("Lowering errors: compute levels, unbounded accesses, vector widths", "[cpu][errors]") {
  Var x("x"), y("y");
  ImageParam in(Float(32), 1, "in");
  Buffer<float> input(64);
  fill_random(input, fresh_seed());
  in.set(input);

  SECTION("compute_at a loop of a Func that does not call the producer") {
    Func p("producer"), q("other"), out("out");
    p(x) = in(x);
    q(x) = in(x) * 2.0f;
    out(x) = p(x) + 1.0f;
    Func all("all");
    all(x) = out(x) + q(x);
    p.compute_at(q, x);
    q.compute_root();
    out.compute_root();
    CHECK_THROWS_WITH(Pipeline(all).compile_jit(Target("host")),
                      Catch::Contains("producer is computed at other.x") && Catch::Contains("not an ancestor"));
  }
  SECTION("store_at a loop inside the one it is computed at") {
    Func p("producer"), out("out");
    Var yo("yo"), yi("yi");
    p(x, y) = in(x) + cast<float>(y);
    out(x, y) = p(x, y) * 2.0f;
    out.split(y, yo, yi, 4);
    p.compute_at(out, yo).store_at(out, yi);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")),
                      Catch::Contains("producer is stored at out.yi, inside the loop it is computed at (out.yo)") &&
                          !Catch::Contains("also used outside"));
  }
  SECTION("store_root outside a parallel loop the producer is computed inside") {
    // Every iteration would compute its rows (and their neighbours) into the one buffer at once.
    Func p("producer"), out("out");
    Var yo("yo"), yi("yi");
    p(x, y) = in(x) + cast<float>(y);
    out(x, y) = p(x, y - 1) + p(x, y + 1);
    out.split(y, yo, yi, 4).parallel(yo);
    p.compute_at(out, yi).store_root();
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")),
                      Catch::Contains("producer is stored at root, outside the parallel loop out.s0.yo") &&
                          Catch::Contains("race"));
    // Stored inside the parallel loop, each iteration has its own.
    p.store_at(out, yo);
    CHECK_NOTHROW(Pipeline(out).compile_jit(Target("host")));
  }
  SECTION("store_root outside a GPU block loop the producer is computed inside") {
    Func p("producer"), out("out");
    Var xo("xo"), xi("xi");
    p(x) = in(x) * 2.0f;
    out(x) = p(x - 1) + p(x + 1);
    out.gpu_tile(x, xo, xi, 32);
    p.compute_at(out, xo).store_root();
    CHECK_THROWS_WITH(Pipeline(out).compile_to_ptx(Target("host-cuda-cuda_capability_80")),
                      Catch::Contains("outside the parallel loop out.s0.xo") && Catch::Contains("race"));
  }
  SECTION("compute_at a loop that does not exist") {
    Func p("producer"), out("out");
    p(x) = in(x);
    out(x) = p(x) + 1.0f;
    p.compute_at(out, y);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")), Catch::Contains("out has no loop y"));
  }
  SECTION("an input read at an unbounded coordinate") {
    ImageParam index(Int(32), 1, "index");
    Func out("out");
    out(x) = in(index(x));
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")),
                      Catch::Contains("input in") && Catch::Contains("unbounded"));
  }
  SECTION("vectorizing a loop of unknown extent") {
    Func out("out");
    out(x) = in(x);
    out.vectorize(x);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")), Catch::Contains("non-constant extent"));
  }
  SECTION("unrolling a loop of unknown extent and no constant bound") {
    Func out("out");
    out(x) = in(x);
    out.unroll(x);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")),
                      Catch::Contains("unrolled loop out.s0.x") && Catch::Contains("no constant bound"));
  }
  SECTION("a Func with an update computed inline") {
    Func acc("acc"), out("out");
    acc(x) = in(x);
    acc(x) = acc(x) * 2.0f;
    acc.compute_inline();
    out(x) = acc(x);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")), Catch::Contains("acc has update definitions"));
  }
  SECTION("two Funcs with one name") {
    Func a("twin"), b("twin"), out("out");
    a(x) = in(x);
    b(x) = in(x) + 1.0f;
    out(x) = a(x) + b(x);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host")), Catch::Contains("named twin"));
  }
  SECTION("a parallel host loop around kernels whose results it reads") {
    Var y("y"), xi("xi");
    ImageParam in2(Float(32), 2, "in2");
    Func g("g"), out("out");
    g(x, y) = in2(x, y) * 2.0f;
    out(x, y) = g(x, y) + g(x + 1, y);
    out.parallel(y);
    g.compute_at(out, y).gpu_tile(x, xi, 32);
    CHECK_THROWS_WITH(Pipeline(out).compile_jit(Target("host-cuda")),
                      Catch::Contains("loop out.s0.y is parallel on the host and launches GPU kernels"));
  }
}

TEST_CASE("Buffer errors at realize name the buffer and the region", "[cpu][errors]") {
  Var x("x"), y("y");
  ImageParam in(Float(32), 2, "in");
  Func blur("blur");
  blur(x, y) = in(x - 1, y) + in(x + 1, y);
  Pipeline p(blur);

  CHECK_THROWS_WITH(p.realize<float>({8, 8}), Catch::Contains("ImageParam in is not bound"));

  Buffer<float> small(8, 8);
  fill_random(small, fresh_seed());
  in.set(small);
  CHECK_THROWS_WITH(p.realize<float>({8, 8}),
                    Catch::Contains("input buffer in is read at [-1, 8] in dimension 0, but it covers only [0, 7]"));

  Buffer<int> wrongType(8, 8);
  CHECK_THROWS_WITH(p.realize(wrongType), Catch::Contains("has type int32, but blur has type float32"));
  Buffer<float> wrongDims(8);
  CHECK_THROWS_WITH(p.realize(wrongDims), Catch::Contains("has 1 dimensions, but blur has 2"));
  CHECK_THROWS_WITH(in.set(Buffer<uint8_t>(4, 4)), Catch::Contains("in has type float32 but the buffer given has type uint8"));

  // The call's error handler sees the message first.
  struct Context : JITUserContext {
    std::string Seen;
  } context;
  context.handlers.error = [](JITUserContext *c, const char *message) { static_cast<Context *>(c)->Seen = message; };
  Buffer<float> out(8, 8);
  CHECK_THROWS_AS(p.realize(&context, out), RuntimeError);
  CHECK_THAT(context.Seen, Catch::Contains("input buffer in"));
}

TEST_CASE("An allocation that fails frees what the call allocated before it", "[cpu][errors]") {
  Var x("x"), y("y");
  ImageParam in(Float(32), 1, "in");
  Buffer<float> input(8192);
  fill_random(input, fresh_seed());
  in.set(input);
  // `big` (32 KiB, on the heap) is allocated before `huge` (2^60 elements) is refused; it must be
  // freed (the sanitizer builds check for leaks).
  Func big("big"), huge("huge"), out("out");
  big(x) = in(x) * 2.0f;
  huge(x, y) = cast<float>(x + y);
  out(x) = big(x) + huge(x, 0);
  big.compute_root();
  huge.compute_root().bound(y, 0, 1 << 30).bound(x, 0, 1 << 30);
  Buffer<float> result(8192);
  CHECK_THROWS_WITH(Pipeline(out).realize(result), Catch::Contains("intermediate huge needs 1073741824 x 1073741824 elements"));
}

TEST_CASE("Default handlers apply from the next call; the call's handler wins", "[cpu][errors]") {
  static std::atomic<int> defaultCalls{0}, callCalls{0};
  Var x("x");
  ImageParam in(Float(32), 1, "in");
  Func f("f");
  f(x) = in(x + 100);
  in.set(Buffer<float>(4));
  Pipeline p(f);
  Buffer<float> out(4);
  JITHandlers handlers;
  handlers.error = [](JITUserContext *, const char *) { ++defaultCalls; };
  JITHandlers previous = JIT::set_default_handlers(handlers);
  CHECK_THROWS_AS(p.realize(out), RuntimeError);
  CHECK(defaultCalls == 1);
  JITUserContext context;
  context.handlers.error = [](JITUserContext *, const char *) { ++callCalls; };
  CHECK_THROWS_AS(p.realize(&context, out), RuntimeError);
  CHECK(callCalls == 1);
  CHECK(defaultCalls == 1);
  JITHandlers mine = JIT::set_default_handlers(previous);
  CHECK(mine.error == handlers.error);
}

TEST_CASE("device_malloc and device_free are overridden together", "[cpu][errors]") {
  Var x("x");
  Func f("f");
  f(x) = x;
  Buffer<int> out(4);
  JITUserContext context;
  context.handlers.device_malloc = [](JITUserContext *, CUcontext, CUstream, size_t, CUdeviceptr *) { return 0; };
  CHECK_THROWS_WITH(Pipeline(f).realize(&context, out),
                    Catch::Contains("the call's handlers set device_malloc without device_free"));
  JITHandlers onlyFree;
  onlyFree.device_free = [](JITUserContext *, CUcontext, CUstream, CUdeviceptr) { return 0; };
  JITHandlers previous = JIT::set_default_handlers(onlyFree);
  CHECK_THROWS_WITH(Pipeline(f).realize(out), Catch::Contains("the default handlers set device_free without device_malloc"));
  JIT::set_default_handlers(previous);
  Pipeline(f).realize(out);
  CHECK(out(3) == 3);
}
