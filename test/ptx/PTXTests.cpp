// Device code generated offline (no driver): PTX for fixed capabilities, checked for the
// instructions it should hold and, where ptxas is installed, assembled by it.

#include "codegen/OpaqueNegations.h"
#include "FixedPointPrograms.h"
#include "Float16Programs.h"
#include "GPUScheduleRecipes.h"
#include "HalideAppPrograms.h"
#include "TestUtil.h"
#include "ptxjit.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <unistd.h>

using namespace ptxjit;

namespace {

// Assembles `ptx` with ptxas for `arch`; returns ptxas's output, or "" when it accepted it.
// With `info`, ptxas runs verbose and `info` receives what it reports of each kernel (registers,
// stack frame, spills, shared memory).
std::string assemble(const std::string &ptx, const std::string &arch, std::string *info = nullptr) {
#ifdef PTXJIT_PTXAS
  char path[] = "/tmp/ptxjit_test_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::string ptxFile = std::string(path) + ".ptx", log = std::string(path) + ".log";
  std::ofstream(ptxFile) << ptx;
  std::string command = std::string(PTXJIT_PTXAS) + (info ? " -v" : "") + " -arch=" + arch + " -o /dev/null " +
                        ptxFile + " > " + log + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (info)
    *info = output;
  std::remove(ptxFile.c_str());
  std::remove(log.c_str());
  std::remove(path);
  return status == 0 ? "" : "ptxas failed (" + std::to_string(status) + "): " + output;
#else
  (void)ptx;
  (void)arch;
  (void)info;
  WARN("ptxas not found at build time: PTX not assembled");
  return "";
#endif
}

// Assembles `ptx` and checks that ptxas kept every kernel in registers: no stack frame, no spills.
void checkRegistersOnly(const std::string &ptx, const std::string &arch) {
  std::string info;
  CHECK(assemble(ptx, arch, &info).empty());
#ifdef PTXJIT_PTXAS
  INFO(info);
  CHECK_THAT(info, Catch::Contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"));
  CHECK_FALSE(std::regex_search(info, std::regex("[1-9][0-9]* bytes (stack frame|spill)")));
#endif
}

size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

struct Pipelines {
  ImageParam in{Float(32), 2, "in"};
  Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
};

// The 3x3 blur the tests schedule in different ways, tiled 32x8 on the GPU.
struct Blur : Pipelines {
  Func bx{"blur_x"}, by{"blur_y"};
  explicit Blur(TailStrategy tail = TailStrategy::Auto) {
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 9.0f;
    by.gpu_tile(x, y, xi, yi, 32, 8, tail);
  }
};

} // namespace

TEST_CASE("PTX for a pointwise pipeline on sm_80 and sm_90a", "[ptx]") {
  for (const char *spelling : {"host-cuda-cuda_capability_80", "host-cuda-cuda_capability_90a"}) {
    INFO(spelling);
    Pipelines p;
    Func f("pointwise");
    f(p.x, p.y) = sqrt(p.in(p.x, p.y)) * exp(p.in(p.x, p.y)) + tanh(p.in(p.x, p.y));
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    Target target(spelling);
    std::string ptx = Pipeline(f).compile_to_ptx(target);
    std::string arch = target.has_feature(Target::Feature::CUDACapability90a) ? "sm_90a" : "sm_80";
    CHECK_THAT(ptx, Catch::Contains(".target " + arch));
    CHECK_THAT(ptx, Catch::Contains(".entry ptxjit_pointwise"));
    CHECK_THAT(ptx, Catch::Contains("ld.global.nc.f32"));  // the read-only input
    CHECK_THAT(ptx, Catch::Contains("st.global.f32"));
    CHECK_THAT(ptx, Catch::Contains(".reqntid 32, 8, 1"));
    CHECK_THAT(ptx, !Catch::Contains("__nv_"));   // libdevice linked and inlined
    CHECK_THAT(ptx, !Catch::Contains("bar.sync")); // no shared memory, no barrier
    CHECK(assemble(ptx, arch).empty());
  }
}

TEST_CASE("PTX for a blur and a matrix multiply", "[ptx]") {
  Blur p;
  std::string blur = Pipeline(p.by).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK(assemble(blur, "sm_80").empty());

  ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
  RDom r(0, A.width(), "r");
  Func prod("prod"), mm("mm");
  prod(p.x, p.y) = 0.0f;
  prod(p.x, p.y) += A(r, p.y) * B(p.x, r);
  mm(p.x, p.y) = prod(p.x, p.y);
  prod.compute_root().gpu_tile(p.x, p.y, p.xi, p.yi, 16, 16);
  prod.update(0).gpu_tile(p.x, p.y, p.xi, p.yi, 16, 16);
  mm.gpu_tile(p.x, p.y, p.xi, p.yi, 16, 16);
  std::string matmul = Pipeline(mm).compile_to_ptx(Target("host-cuda-cuda_capability_90"));
  CHECK_THAT(matmul, Catch::Contains("fma.rn.f32"));
  // Three kernels: prod's initialization, its update, and mm.
  CHECK_THAT(matmul, Catch::Contains("_k2("));
  CHECK(assemble(matmul, "sm_90").empty());
}

TEST_CASE("Capabilities newer than NVPTX knows get sm_90 PTX the driver compiles for them", "[ptx]") {
  for (const char *spelling : {"host-cuda-cuda_capability_100", "host-cuda-cuda_capability_120"}) {
    INFO(spelling);
    Pipelines p;
    Func f("newer");
    f(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    std::string ptx = Pipeline(f).compile_to_ptx(Target(spelling));
    CHECK_THAT(ptx, Catch::Contains(".target sm_90\n"));
    CHECK(assemble(ptx, "sm_90").empty());
  }
}

TEST_CASE("PTX for a blur with its producer in shared memory", "[ptx]") {
  Blur b;
  b.bx.compute_at(b.by, b.x).gpu_threads(b.x, b.y);
  std::string ptx = Pipeline(b.by).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains("st.shared.f32"));
  CHECK_THAT(ptx, Catch::Contains("ld.shared.f32"));
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK_THAT(ptx, Catch::Contains(".reqntid 32, 10, 1")); // the producer's tile: 8 rows and a row above and below
  // The tile is clipped at the image's edge, but stored at its constant bound: constant strides
  // (and rows one element longer than 32, which spreads a column over the 32 banks).
  CHECK_THAT(Pipeline(b.by).lowered_stmt(Target("host-cuda-cuda_capability_80")),
             Catch::Contains("allocate blur_x[float32 * 33 * 10]"));
  // Shared memory is addressed with 32-bit registers (%r), not 64-bit ones (%rd).
  for (size_t at = ptx.find(".shared.f32"); at != std::string::npos; at = ptx.find(".shared.f32", at + 1)) {
    std::string line = ptx.substr(at, ptx.find('\n', at) - at);
    INFO(line);
    CHECK(line.find("[%rd") == std::string::npos);
  }
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("align_storage of a shared tile keeps its rows a multiple wide, unpadded", "[ptx]") {
  Blur b;
  b.bx.compute_at(b.by, b.x).gpu_threads(b.x, b.y).align_storage(b.x, 16);
  const Target target("host-cuda-cuda_capability_80");
  // 32 columns: a multiple of 16 already, and not widened to 33 to spread them over the banks.
  CHECK_THAT(Pipeline(b.by).lowered_stmt(target), Catch::Contains("allocate blur_x[float32 * 32 * 10]"));
  b.bx.align_storage(b.x, 24);
  CHECK_THAT(Pipeline(b.by).lowered_stmt(target), Catch::Contains("allocate blur_x[float32 * 48 * 10]"));
  CHECK(assemble(Pipeline(b.by).compile_to_ptx(target), "sm_80").empty());
}

TEST_CASE("PTX for a blur whose block and thread loops are renamed", "[ptx]") {
  Blur b; // its output's block loops are x and y, its thread loops xi and yi
  Var bxr("bxr"), byr("byr"), txr("txr"), tyr("tyr");
  b.by.rename(b.x, bxr).rename(b.y, byr).rename(b.xi, txr).rename(b.yi, tyr);
  b.bx.compute_at(b.by, bxr).rename(b.x, txr).gpu_threads(txr, b.y);
  std::string ptx = Pipeline(b.by).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  // The same kernel as without the renames: the producer's tile in shared memory.
  CHECK_THAT(ptx, Catch::Contains("st.shared.f32"));
  CHECK_THAT(ptx, Catch::Contains(".reqntid 32, 10, 1"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for a blur with shifted tails: full tiles, no guards", "[ptx]") {
  for (bool shared : {false, true}) {
    INFO((shared ? "shared" : "inline"));
    Blur b(TailStrategy::ShiftInward);
    if (shared)
      b.bx.compute_at(b.by, b.x).gpu_threads(b.x, b.y);
    std::string ptx = Pipeline(b.by).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
    // Every thread of a block computes: the only branch left skips the producer's two extra
    // rows in the consumer (threads 8 and 9 of y).
    size_t branches = 0;
    for (size_t at = ptx.find("@%p"); at != std::string::npos; at = ptx.find("@%p", at + 1))
      ++branches;
    CHECK(branches == (shared ? 1u : 0u));
    CHECK(assemble(ptx, "sm_80").empty());
  }
}

TEST_CASE("PTX for vectorized GPU loops: 128-bit loads and stores where aligned", "[ptx]") {
  ImageParam X(Float(32), 1, "X"), Y(Float(32), 1, "Y");
  Param<float> a("a");
  Var i("i"), io("io"), ii("ii"), iv("iv");
  Func axpy("axpy");
  axpy(i) = a * X(i) + Y(i);
  axpy.split(i, i, iv, 4).vectorize(iv).gpu_tile(i, io, ii, 64);
  std::string ptx = Pipeline(axpy).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains("ld.global.nc.v4.f32"));
  CHECK_THAT(ptx, Catch::Contains("st.global.v4.f32"));
  CHECK_THAT(ptx, Catch::Contains("ld.global.nc.f32")); // where the address is not 16-byte aligned
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX is fast math unless strict_float", "[ptx]") {
  ImageParam X(Float(32), 1, "X"), Y(Float(32), 1, "Y");
  Var i("i"), io("io"), ii("ii");
  Func f("f");
  f(i) = X(i) * Y(i) - X(i + 1) / 3.0f + sqrt(Y(i + 1));
  f.gpu_tile(i, io, ii, 64);
  std::string fast = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(fast, Catch::Contains("fma.rn.f32"));
  CHECK_THAT(fast, !Catch::Contains("div.rn.f32"));
  CHECK_THAT(fast, Catch::Contains("sqrt.approx.f32"));
  std::string strict = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80-strict_float"));
  CHECK_THAT(strict, Catch::Contains("sqrt.rn.f32") && !Catch::Contains("sqrt.approx"));
  CHECK_THAT(strict, !Catch::Contains("fma.rn.f32"));
  CHECK_THAT(strict, Catch::Contains("mul.rn.f32"));
  CHECK_THAT(strict, Catch::Contains("div.rn.f32"));
  CHECK(assemble(fast, "sm_80").empty());
  CHECK(assemble(strict, "sm_80").empty());
}

TEMPLATE_TEST_CASE("Under strict_float, min, max and selects against a zero stay compare and select in PTX",
                   "[ptx]", float, double, float16_t) {
  // min.f32 and max.f32 order -0 below +0; min(x, +0) is x < +0 ? x : +0, which is +0 for x = -0.
  // Fast math ignores the sign of zero and may use them.
  ImageParam p(type_of<TestType>(), 1, "p");
  Var x("x"), xo("xo"), xi("xi");
  const Expr zero = Expr(static_cast<TestType>(0.0)), negativeZero = Expr(static_cast<TestType>(-0.0));
  Func f("f");
  f(x) = min(p(x), zero) + max(p(x) * 2, negativeZero) + select(p(x) * 3 < zero, p(x) * 3, zero);
  f.gpu_tile(x, xo, xi, 64);
  const std::string fast = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  const std::string strict = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80-strict_float"));
  INFO(strict);
  CHECK(occurrences(fast, "\tmin.") + occurrences(fast, "\tmax.") >= 2);
  CHECK(occurrences(strict, "\tmin.") + occurrences(strict, "\tmax.") == 0);
  CHECK(occurrences(strict, "\tselp.") >= 3);
  CHECK(assemble(fast, "sm_80").empty());
  CHECK(assemble(strict, "sm_80").empty());
}

TEST_CASE("PTX for a producer in storage of each thread's own", "[ptx]") {
  Blur b;
  b.bx.compute_at(b.by, b.xi); // a column of three values per thread
  std::string ptx = Pipeline(b.by).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, !Catch::Contains(".shared"));
  CHECK_THAT(ptx, !Catch::Contains("bar.sync"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for a histogram with atomic updates", "[ptx]") {
  ImageParam in(UInt(8), 2, "in");
  RDom r(0, in.width(), 0, in.height(), "r");
  Var x("x"), xo("xo"), xi("xi");
  Func hist("hist");
  hist(x) = 0;
  hist(cast<int>(in(r.x, r.y))) += 1;
  hist.gpu_tile(x, xo, xi, 64);
  hist.update(0).atomic().gpu_tile(r.x, r.y, Var("rxo"), Var("ryo"), Var("rxi"), Var("ryi"), 32, 8);
  std::string ptx = Pipeline(hist).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  bool atomicAdd = ptx.find("atom.global.add") != std::string::npos || ptx.find("red.global.add") != std::string::npos;
  CHECK(atomicAdd);
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for atomic min, max and products: compare-and-swap loops", "[ptx]") {
  ImageParam in(Int(32), 2, "in");
  RDom r(0, in.width(), 0, in.height(), "r");
  Var x("x"), xo("xo"), xi("xi");
  Expr bucket = clamp(in(r.x, r.y) / 100, 0, 15);
  Func mx("atomic_max"), mn("atomic_min_float"), narrow("atomic_min_uint8"), product("atomic_product_int64");
  mx(x) = 0;
  mx(bucket) = max(mx(bucket), in(r.x, r.y));
  mn(x) = 0.0f;
  mn(bucket) = min(mn(bucket), cast<float>(in(r.x, r.y)));
  narrow(x) = cast<uint8_t>(255);
  narrow(bucket) = min(narrow(bucket), cast<uint8_t>(in(r.x, r.y)));
  product(x) = cast<int64_t>(1);
  product(bucket) = product(bucket) * cast<int64_t>(in(r.x, r.y));
  for (Func f : {mx, mn, narrow, product}) {
    INFO(f.name());
    f.gpu_tile(x, xo, xi, 16);
    f.update(0).atomic().gpu_tile(r.x, r.y, Var("rxo"), Var("ryo"), Var("rxi"), Var("ryi"), 32, 8);
    std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
    INFO(ptx);
    CHECK_THAT(ptx, Catch::Contains("atom.global.cas") || Catch::Contains("atom.cas"));
    CHECK(assemble(ptx, "sm_80").empty());
  }
}

TEST_CASE("Bad GPU schedules are CompileErrors naming the Func and the reason", "[ptx][errors]") {
  Pipelines p;
  Target cuda("host-cuda-cuda_capability_80");
  SECTION("gpu_threads outside gpu_blocks") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y);
    f.gpu_threads(p.x);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda), Catch::Contains("f.s0.x is not inside a gpu_blocks loop"));
  }
  SECTION("gpu_blocks inside gpu_threads") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y);
    Var yo("yo");
    f.split(p.y, yo, p.y, 4).gpu_blocks(yo).gpu_threads(p.y).gpu_blocks(p.x);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda), Catch::Contains("gpu_blocks loop f.s0.x is inside a gpu_threads loop"));
  }
  SECTION("too many threads per block") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 64, 32);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda),
                      Catch::Contains("2048 threads per block; CUDA allows at most 1024") && Catch::Contains("kernel"));
  }
  SECTION("a GPU schedule on a host target") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(Target("host")), Catch::Contains("has no cuda feature"));
  }
  SECTION("store_in that does not fit where the Func is computed") {
    Func g("g"), f("f");
    g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    f(p.x, p.y) = g(p.x, p.y) + g(p.x + 1, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    g.compute_at(f, p.xi).store_in(MemoryType::GPUShared);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda),
                      Catch::Contains("Func g is stored in shared memory but computed inside a gpu_threads loop"));
    Func h("h"), k("k");
    h(p.x, p.y) = p.in(p.x, p.y);
    k(p.x, p.y) = h(p.x, p.y);
    h.compute_root().store_in(MemoryType::Register);
    CHECK_THROWS_WITH(Pipeline(k).compile_jit(Target("host")), Catch::Contains("computed outside any GPU kernel"));
  }
  SECTION("shared memory over the 227 KiB any device gives a block") {
    Func g("g"), f("f");
    g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    f(p.x, p.y) = g(p.x, p.y) + g(p.x, p.y + 1900);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 1);
    g.compute_at(f, p.x).gpu_threads(p.x); // 32 threads, each a column of 1901 rows: 243 KB

    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda),
                      Catch::Contains("bytes of shared memory for g") && Catch::Contains("at most 232448 bytes"));
  }
  SECTION("compile_to_ptx without a fixed capability") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    CHECK_THROWS_WITH(Pipeline(f).compile_to_ptx(Target("host-cuda")), Catch::Contains("fixed CUDA capability"));
  }
}

TEST_CASE("A GPU loop of one iteration still makes a kernel", "[ptx]") {
  // gpu_tile by the whole extent of a bound dimension: one block, and the block loop must stay.
  Func f("one_block");
  Var x("x"), xo("xo"), xi("xi");
  f(x) = x * 2;
  f.bound(x, 0, 16).gpu_tile(x, xo, xi, 16);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("x86-64-linux-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
}

TEST_CASE("Device code computes 8- and 16-bit integers in 32-bit registers", "[ptx]") {
  // The CUDA 13 driver miscompiles 16-bit registers: a 16-bit min fused with a comparison, a
  // loop-invariant 16-bit value shifted right (codegen/PromoteNarrowIntegers.h; [gpu] "A narrow
  // min compared for equality on the GPU", "A loop-invariant 16-bit value shifted right in a
  // kernel's serial loop"). Only loads, stores, conversions and compares may stay narrow.
  Var x("x"), y("y"), xo("xo"), xi("xi");
  ImageParam a(UInt(8), 1, "a"), b(Int(16), 1, "b"), in(Float(32), 2, "in");
  Func f("narrow_arithmetic");
  f(x, y) = select(min(cast<uint8_t>(y) * cast<uint8_t>(4), cast<uint8_t>(7)) / cast<uint8_t>(7) == 1,
                   max(a(x), cast<uint8_t>(y)), cast<uint8_t>(min(b(x), cast<int16_t>(-3)) == -3)) +
            cast<uint8_t>(max(cast<int8_t>(a(x)), cast<int8_t>(-5)) == -5) +
            cast<uint8_t>(min(cast<uint16_t>(b(x)), cast<uint16_t>(y))) +
            cast<uint8_t>(b(x) / cast<int16_t>(-5) + b(x) % cast<int16_t>(7) -
                          (b(x) / cast<int16_t>(8)) * cast<int16_t>(a(x)) + cast<int16_t>(y));
  Func g("narrow_vectorized");
  g(x) = min(a(x), cast<uint8_t>(9)) + cast<uint8_t>(max(b(x), cast<int16_t>(2)) * cast<int16_t>(3)) - a(x) / 3;
  // A loop-invariant narrow value shifted both ways inside a thread's serial loop.
  Func h("narrow_shifts_in_a_loop");
  Expr shift = select(cast<uint8_t>(y) < cast<uint8_t>(clamp(in(x, y), 0.0f, 25.0f)), cast<int16_t>(-7),
                      cast<int16_t>(clamp(in(x, y), -25.0f, 25.0f)));
  h(x, y) = (cast<int16_t>(clamp(cast<float>(x), -25.0f, 25.0f)) << shift) + (cast<int16_t>(-15) % b(x)) +
            abs(cast<int8_t>(a(x))) + (cast<uint16_t>(a(y)) >> cast<uint16_t>(x % 7));
  // A narrow value carried around a serial loop.
  Func sum("narrow_sum");
  RDom r(0, 10);
  sum(x) = cast<uint16_t>(0);
  sum(x) += cast<uint16_t>(a(x + r)) * cast<uint16_t>(r + 3) ^ cast<uint16_t>(b(r));
  f.gpu_tile(x, xo, xi, 32);
  g.split(x, xo, xi, 128).gpu_blocks(xo).split(xi, xi, x, 4).gpu_threads(xi).vectorize(x);
  h.split(x, xo, xi, 3).reorder(y, xi, xo).gpu_blocks(xo).gpu_threads(xi);
  sum.gpu_tile(x, xo, xi, 64);
  sum.update().gpu_tile(x, xo, xi, 64);
  const std::regex narrowArithmetic(
      "\\t(add|sub|mul|mul24|mad|div|rem|min|max|abs|neg|not|and|or|xor|shl|shr|selp|cvt\\.rzi)(\\.lo|\\.hi)?\\.[bsu](8|16)\\b");
  for (const char *spelling : {"host-cuda-cuda_capability_80", "host-cuda-cuda_capability_90"}) {
    INFO(spelling);
    for (Func *func : {&f, &g, &h, &sum}) {
      std::string ptx = Pipeline(*func).compile_to_ptx(Target(spelling));
      INFO(ptx);
      std::smatch match;
      CHECK_FALSE(std::regex_search(ptx, match, narrowArithmetic));
      CHECK(assemble(ptx, Target(spelling).has_feature(Target::Feature::CUDACapability90) ? "sm_90" : "sm_80").empty());
    }
  }
}

TEST_CASE("PTX hides negations from the driver's fused 3-way min and max", "[ptx]") {
  // The CUDA 13.0 PTX compiler drops a negation that feeds two fused mins (codegen/OpaqueNegations.h).
  Var x("x"), xo("xo"), xi("xi");
  ImageParam a(Int(32), 1, "a"), b(Int(32), 1, "b"), c(Int(8), 1, "c");
  Func f("negated_min_operands");
  f(x) = min(min(x, -a(x)), b(x)) + max(max(-b(x), x), a(x)) +
         cast<int32_t>(min(min(-c(x), cast<int8_t>(x)), cast<int8_t>(3)));
  f.gpu_tile(x, xo, xi, 64);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_90"));
  INFO(ptx);
  CHECK_THAT(ptx, !Catch::Contains("neg.s32") && !Catch::Contains("neg.s16") && Catch::Contains("not.b32"));
  CHECK(assemble(ptx, "sm_90").empty());
}

TEST_CASE("PTX converts a negated condition to float as -1", "[ptx]") {
  // LLVM 19's NVPTX converts a signed i1 as unsigned (codegen/SignedBoolToFloat.h): the quotient
  // q / -5 of q in [0, 7] is -(q > 4), which instcombine makes a sitofp of the condition.
  ImageParam in(UInt(8), 1, "in");
  Var x("x"), xo("xo"), xi("xi");
  Func f("negated_condition");
  f(x) = cast<float>(x) - cast<float>(cast<int32_t>((in(x) % 8) / in(x + 1)) / -5);
  f.gpu_tile(x, xo, xi, 64);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_90"));
  INFO(ptx);
  const std::regex unsignedBoolAsSigned(R"(selp\.[bsu]32\s+(%r\d+), 1, 0, %p\d+;\s*cvt\.rn\.f32\.s32\s+%f\d+, \1;)");
  CHECK_FALSE(std::regex_search(ptx, unsignedBoolAsSigned));
  CHECK_THAT(ptx, Catch::Contains("0fBF800000")); // -1.0
  CHECK(assemble(ptx, "sm_90").empty());
}

TEST_CASE("PTX of a specialized GPU schedule has a kernel for each branch", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Param<int> mode("mode");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func f("specialized_kernels");
  f(x, y) = in(x, y) * 3.0f + cast<float>(mode);
  f.specialize(mode == 1).gpu_tile(x, xo, xi, 128, TailStrategy::ShiftInwards);
  f.gpu_tile(x, y, xo, yo, xi, yi, 8, 8);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  INFO(ptx);
  CHECK_THAT(ptx, Catch::Contains(".reqntid 128, 1, 1") && Catch::Contains(".reqntid 8, 8, 1"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("Negations in PTX text become not and add", "[unit]") {
  const std::string ptx = "\tneg.s32 \t%r160, %r159;\n"
                          "\tmax.s32 \t%r161, %r140, %r160;\n"
                          "  neg.s16 %rs2,%rs1;\n"
                          "\tneg.s64 \t%rd2, %rd1;\n"
                          "\tneg.f32 \t%f2, %f1;\n"
                          "\t// neg.s32 in a comment\n";
  CHECK(codegen::make_negations_opaque(ptx) == "\tnot.b32 \t%r160, %r159;\n"
                                                "\tadd.s32 \t%r160, %r160, 1;\n"
                                                "\tmax.s32 \t%r161, %r140, %r160;\n"
                                                "\tnot.b16 \t%rs2, %rs1;\n"
                                                "\tadd.s16 \t%rs2, %rs2, 1;\n"
                                                "\tneg.s64 \t%rd2, %rd1;\n"
                                                "\tneg.f32 \t%f2, %f1;\n"
                                                "\t// neg.s32 in a comment\n");
}

TEST_CASE("PTX for bitwise and shift operators", "[ptx]") {
  ImageParam a(Int(32), 1, "a"), b(UInt(8), 1, "b");
  Var x("x"), xo("xo"), xi("xi");
  Func f("bitwise");
  f(x) = ((a(x) & 255) | (a(x) ^ x)) + (~a(x) << (x % 40 - 5)) + (a(x) >> cast<int32_t>(b(x))) +
         cast<int32_t>((b(x) << 3) >> cast<uint8_t>(x % 11));
  f.gpu_tile(x, xo, xi, 64);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  INFO(ptx);
  for (const char *op : {"and.b32", "or.b32", "xor.b32", "not.b32", "shl.b32", "shr.s32"})
    CHECK_THAT(ptx, Catch::Contains(op));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for math functions, float tests, saturating casts and reinterpret", "[ptx]") {
  ImageParam a(Float(32), 1, "a"), d(Float(64), 1, "d");
  Var x("x"), xo("xo"), xi("xi");
  Func f("math"), g("math64");
  f(x) = tan(a(x)) + asin(a(x)) + acos(a(x)) + atan(a(x)) + atan2(a(x), 2.0f) + sinh(a(x)) + cosh(a(x)) + asinh(a(x)) +
         acosh(a(x)) + atanh(a(x)) + trunc(a(x)) + abs(a(x)) + lerp(a(x), 1.0f, 0.25f) +
         select(is_nan(a(x)) || is_inf(a(x)), 1.0f, 0.0f) + f32(u8_sat(a(x)) + u8(i16_sat(a(x)))) +
         reinterpret<float>(reinterpret<uint32_t>(a(x)) & 0x7fffffff) + erf(a(x)) + hypot(a(x), 2.0f) + fract(a(x)) +
         fast_inverse(a(x)) + fast_inverse_sqrt(a(x)) + f32(popcount(i32(a(x)))) + f32(count_leading_zeros(u8(a(x)))) +
         f32(count_trailing_zeros(i16(a(x)))) + f32(div_round_to_zero(i32(a(x)), 3)) +
         f32(mod_round_to_zero(i8(a(x)), i8(x)));
  g(x) = tan(d(x)) + atan2(d(x), 3.0) + f64(i32_sat(d(x))) + select(is_finite(d(x)), 1.0, 0.0) + erf(d(x)) +
         f64(popcount(i64(d(x))) + count_leading_zeros(u64(d(x))) + count_trailing_zeros(u64(d(x))));
  for (Func *func : {&f, &g}) {
    func->gpu_tile(x, xo, xi, 64);
    std::string ptx = Pipeline(*func).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
    INFO(ptx);
    CHECK_THAT(ptx, !Catch::Contains(".extern")); // libdevice is linked in, nothing left to resolve
    CHECK(assemble(ptx, "sm_80").empty());
  }
}

TEMPLATE_TEST_CASE("PTX for the fixed-point intrinsics", "[ptx]", int8_t, uint8_t, int16_t, uint16_t, int32_t,
                   uint32_t, int64_t, uint64_t) {
  test::FixedPointInputs<TestType> in(64, 1);
  Var x("x"), form("form"), xo("xo"), xi("xi");
  Func f = test::fixed_point_func(test::fixed_point_forms_of<TestType>(), in, x, form);
  f.gpu_tile(x, xo, xi, 64);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for an rfactor: a kernel of partial sums, one per thread", "[ptx]") {
  ImageParam in(Float(32), 1, "in");
  Var u("u"), ut("ut");
  RDom r(0, 1 << 20, "r");
  RVar ro("ro"), ri("ri");
  Func total("total");
  total() = 0.0f;
  total() += in(r);
  total.update().split(r, ro, ri, 256);
  Func partial = total.update().rfactor(ri, u);
  partial.compute_root().gpu_tile(u, ut, 64);
  partial.update().gpu_tile(u, ut, 64);
  std::string ptx = Pipeline(total).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
  CHECK_THAT(ptx, !Catch::Contains("atom.")); // each thread its own partial sum
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("An update restricted by RDom::where compiles for the GPU", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func prefix("guarded_prefix");
  RDom r(0, 64);
  r.where(r.x <= x && in(r.x, y) > 0.0f);
  prefix(x, y) = 0.0f;
  prefix(x, y) += in(r.x, y);
  prefix.gpu_tile(x, xo, xi, 32);
  prefix.update().gpu_tile(x, xo, xi, 32);
  std::string ptx = Pipeline(prefix).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("A Tuple reduction and a Tuple output compile for the GPU", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xo("xo"), xi("xi");
  Func best("best"), out("out");
  RDom r(0, 40);
  best(x) = Tuple(-1, 1e30f);
  best(x) = Tuple(select(in(x, r) < best(x)[1], r, best(x)[0]), min(in(x, r), best(x)[1]));
  out(x, y) = Tuple(best(x)[0] - y, in(x, y) - best(x)[1]);
  out.gpu_tile(x, xo, xi, 32);
  best.compute_at(out, xo).gpu_threads(x);
  best.update().gpu_threads(x);
  std::string ptx = Pipeline(out).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("A pipeline of two outputs compiles for the GPU", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func blurred("blurred"), edges("edges");
  blurred(x, y) = (in(x, y) + in(x + 1, y) + in(x + 2, y)) / 3.0f;
  edges(x, y) = Tuple(blurred(x + 1, y) - blurred(x, y), cast<int32_t>(blurred(x, y) > 0.0f));
  blurred.gpu_tile(x, y, xo, yo, xi, yi, 32, 4);
  edges.gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
  std::string ptx = Pipeline({edges, blurred}).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".entry"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("An input staged through ImageParam::in lives in shared memory", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func stencil("stencil");
  stencil(x, y) = in(x - 1, y) + in(x, y) * 2.0f + in(x + 1, y) - in(x, y + 1);
  stencil.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
  in.in(stencil).compute_at(stencil, xo).gpu_threads(_0, _1);
  std::string ptx = Pipeline(stencil).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".shared"));
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("An inline reduction in a kernel accumulates in registers", "[ptx]") {
  ImageParam in(UInt(8), 2, "in");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  RDom r(0, 3, 0, 3, "r");
  Func box("box");
  box(x, y) = sum(cast<float>(in(x + r.x, y + r.y)));
  box.gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
  CHECK_THAT(Pipeline(box).loop_nest(), Catch::Contains("gpu_thread box.s0.xi:\n          produce sum"));
  std::string ptx = Pipeline(box).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, !Catch::Contains(".local"));
  CHECK(assemble(ptx, "sm_80").empty());
}

// The region of each root Func is stated in its consumers' region names, not expanded into the
// output's: expanded, every level of a chain of stencils with rounded-up tiles doubled the size of
// the region expressions (a runaway compile, 25 s for 8 Funcs).
TEST_CASE("Bounds of a long chain of root stencils stay small", "[ptx]") {
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  ImageParam in(Float(32), 2, "in");
  Func input = BoundaryConditions::repeat_edge(in);
  std::vector<Func> chain{input};
  const int length = 12;
  for (int k = 0; k < length; ++k) {
    Func f("f" + std::to_string(k));
    f(x, y) = chain.back()(x - 1, y) + chain.back()(x + 1, y + 1) * 0.5f;
    f.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, k % 2 ? TailStrategy::RoundUp : TailStrategy::ShiftInward);
    chain.push_back(f);
  }
  const std::string stmt = Pipeline(chain.back()).lowered_stmt(Target("host-cuda-cuda_capability_80"));
  size_t longest = 0;
  for (size_t at = 0, end; at < stmt.size(); at = end + 1) {
    end = std::min(stmt.find('\n', at), stmt.size());
    longest = std::max(longest, end - at);
  }
  INFO(stmt.size() << " characters, the longest line " << longest);
  CHECK(longest < 1000);
  CHECK(stmt.size() < 100000);
}

TEST_CASE("print in a kernel calls device printf", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  Func f("f");
  f(x, y) = print_when(in(x, y) > 0.5f, in(x, y), "at", x, y, cast<uint8_t>(y)) + 1.0f;
  f.gpu_tile(x, y, xo, yo, xi, yi, 16, 16).vectorize(xi, 4);
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".extern .func  (.param .b32 func_retval0) vprintf"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("Tracing in kernels prints through device printf", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Func f = test::traced_gpu_stencil(in, "traced", 16, 16);
  const std::string stmt = Pipeline(f).lowered_stmt(Target("host-cuda-cuda_capability_80"));
  INFO(stmt);
  CHECK_THAT(stmt, Catch::Contains("Store traced_out.0(") && Catch::Contains("Load traced_tile.0(") &&
                       Catch::Contains("Produce traced_tile("));
  std::string ptx = Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains(".extern .func  (.param .b32 func_retval0) vprintf"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("Funcs without a GPU schedule run on the host between kernels", "[ptx]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func lut("lut"), g("g"), f("f"), h("h");
  lut(x) = cast<float>(x) * 0.5f;
  g(x, y) = in(x, y) + lut(x % 16);
  f(x, y) = g(x, y) * 2.0f + g(x + 1, y);
  h(x, y) = f(x, y) + lut(y % 16);
  lut.compute_root();
  g.compute_root().gpu_tile(x, y, xi, yi, 16, 16);
  f.compute_root().vectorize(x, 8);
  h.gpu_tile(x, y, xi, yi, 16, 16);
  Pipeline p(h);
  std::string ptx = p.compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK(occurrences(ptx, ".entry") == 2);
  CHECK_NOTHROW(p.compile_jit(Target("host-cuda-cuda_capability_80")));
}

TEST_CASE("Stores outside thread loops in a kernel run in one thread of the block", "[ptx]") {
  Pipelines p;
  Target cuda("host-cuda-cuda_capability_80");
  SECTION("a producer at the block loop without thread loops of its own") {
    Func g("g"), f("f");
    g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    f(p.x, p.y) = g(p.x, p.y) + g(p.x + 1, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    g.compute_at(f, p.x);
    std::string ptx = Pipeline(f).compile_to_ptx(cuda);
    CHECK_THAT(ptx, Catch::Contains("bar.sync"));
    CHECK(assemble(ptx, "sm_80").empty());
  }
  SECTION("a kernel of gpu_blocks only, with serial loops inside") {
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y) + 1.0f;
    f(p.x, p.y) += f(p.x, p.y) * 0.5f;
    f.gpu_blocks(p.y);
    f.update().gpu_blocks(p.y);
    std::string ptx = Pipeline(f).compile_to_ptx(cuda);
    CHECK_THAT(ptx, Catch::Contains(".reqntid 1, 1, 1"));
    CHECK(assemble(ptx, "sm_80").empty());
  }
}

TEST_CASE("Shared tiles sized at run time take dynamic shared memory", "[ptx]") {
  Pipelines p;
  Param<int> reach("reach");
  Var xo("xo"), xio("xio"), xii("xii");
  Func g("g"), f("f");
  g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
  f(p.x, p.y) = g(p.x, p.y) + g(p.x + reach, p.y);
  f.gpu_tile(p.x, p.y, p.xi, p.yi, 64, 4);
  // g's tile is 64 + reach columns wide: threads stride over it 64 at a time.
  g.compute_at(f, p.x).split(p.x, xio, xii, 64).gpu_threads(xii, p.y);
  Target target("host-cuda-cuda_capability_90");
  std::string ptx = Pipeline(f).compile_to_ptx(target);
  CHECK_THAT(ptx, Catch::Contains(".extern .shared"));
  CHECK_THAT(ptx, Catch::Contains("st.shared.f32"));
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK(assemble(ptx, "sm_90").empty());

  SECTION("a run-time tile and a constant one in one kernel") {
    Func a("a"), b("b"), k("k");
    a(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    b(p.x, p.y) = p.in(p.x, p.y) + 1.0f;
    k(p.x, p.y) = a(p.x + reach, p.y) * b(p.x, p.y);
    k.gpu_tile(p.x, p.y, p.xi, p.yi, 64, 4);
    a.compute_at(k, p.x).split(p.x, xio, xii, 64).gpu_threads(xii, p.y);
    b.compute_at(k, p.x).gpu_threads(p.x, p.y);
    std::string both = Pipeline(k).compile_to_ptx(target);
    CHECK(assemble(both, "sm_90").empty());
    // b's constant tile comes first, at the start of the block: a's offset follows from b's size.
    std::string stmt = Pipeline(k).lowered_stmt(target);
    CHECK_THAT(stmt, Catch::Contains("allocate b[float32 * 65 * 4]")); // rows padded off the banks
  }
}

TEST_CASE("Per-thread tiles with constant indices live in registers: no stack frame", "[ptx]") {
  ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
  Func out = test::register_tiled_matmul(A, B, 1024);
  Target target("host-cuda-cuda_capability_90");
  // The tile's clipped bounds fold over the loops' constant ranges: no guard is left.
  std::string stmt = Pipeline(out).lowered_stmt(target);
  CHECK_THAT(stmt, !Catch::Contains("if ("));
  CHECK_THAT(stmt, Catch::Contains("allocate prod[float32 * 4 * 8]"));
  std::string ptx = Pipeline(out).compile_to_ptx(target);
  CHECK_THAT(ptx, !Catch::Contains(".local"));
  CHECK_THAT(ptx, Catch::Contains("ld.global.nc.v4.f32"));
  CHECK(occurrences(ptx, "fma.rn.f32") == 4 * 8 * 8); // the 4x8 tile times 8 unrolled steps of k
  checkRegistersOnly(ptx, "sm_90");
}

TEST_CASE("Registers at a block loop: each thread its own slice, shared staging between", "[ptx]") {
  ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
  Func out = test::shared_staged_matmul(A, B, 1024);
  Target target("host-cuda-cuda_capability_90");
  std::string stmt = Pipeline(out).lowered_stmt(target);
  CHECK_THAT(stmt, Catch::Contains("allocate prod in registers[float32 * 4 * 4]"));
  std::string ptx = Pipeline(out).compile_to_ptx(target);
  CHECK_THAT(ptx, !Catch::Contains(".local"));
  CHECK_THAT(ptx, Catch::Contains("ld.shared"));
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK(occurrences(ptx, "fma.rn.f32") == 4 * 4 * 8); // the 4x4 tile times 8 unrolled steps of k
  CHECK(occurrences(ptx, "ld.shared.v4.f32") == 16);   // a step of k: a row of A's 4, of B's 4 rows
  checkRegistersOnly(ptx, "sm_90");
  SECTION("8x8 a thread, A's slice wider than the block's threads") {
    ImageParam A2(Float(32), 2, "A"), B2(Float(32), 2, "B");
    std::string wide = Pipeline(test::shared_staged_matmul(A2, B2, 1024, {128, 128, 8, 8})).compile_to_ptx(target);
    CHECK_THAT(wide, Catch::Contains(".reqntid 16, 16, 1"));
    CHECK(occurrences(wide, "fma.rn.f32") == 8 * 8 * 8);
    checkRegistersOnly(wide, "sm_90");
  }
}

TEST_CASE("Registers at a block loop refuse slices threads would share", "[ptx]") {
  Pipelines p;
  Target cuda("host-cuda-cuda_capability_80");
  Var xo("xo"), xs("xs");
  Func g("g"), f("f");
  g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
  SECTION("a consumer reading its neighbour's element") {
    f(p.x, p.y) = g(p.x, p.y) + g(p.x + 1, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    g.compute_at(f, p.x).gpu_threads(p.x, p.y).store_in(MemoryType::Register);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda),
                      Catch::Contains("Func g is stored in registers at a gpu_blocks loop") &&
                          Catch::Contains("f reads it beyond what the thread writes (in dimension 0, offsets 1 to 1 of "
                                          "0 to 0)"));
  }
  SECTION("a producer outside thread loops") {
    f(p.x, p.y) = g(p.x, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    g.compute_at(f, p.x).store_in(MemoryType::Register);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda),
                      Catch::Contains("a definition of g writes it outside any gpu_threads loop"));
  }
  SECTION("threads whose slices overlap") {
    f(p.x, p.y) = g(p.x, p.y);
    f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    // Thread xs computes columns xs and xs + 16: its slice would span the 15 columns between.
    g.compute_at(f, p.x).split(p.x, xo, xs, 16).gpu_threads(xs, p.y).store_in(MemoryType::Register);
    CHECK_THROWS_WITH(Pipeline(f).compile_jit(cuda), Catch::Contains("the slices of different threads overlap"));
  }
}

TEST_CASE("The heap at a block loop: each block a slice of one device allocation", "[ptx]") {
  Pipelines p;
  Target cuda("host-cuda-cuda_capability_80");
  Func g("g"), f("f");
  g(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
  f(p.x, p.y) = g(p.x, p.y) + g(p.x + 1, p.y);
  f.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
  g.compute_at(f, p.x).gpu_threads(p.x, p.y).store_in(MemoryType::Heap);
  // g's 33x8 tile for each of the grid's blocks, allocated around the kernel.
  std::string stmt = Pipeline(f).lowered_stmt(cuda);
  CHECK_THAT(stmt, Catch::Contains("allocate g in heap on device[float32 * 33 * 8 * "));
  std::string ptx = Pipeline(f).compile_to_ptx(cuda);
  CHECK_THAT(ptx, !Catch::Contains(".shared"));
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK(assemble(ptx, "sm_80").empty());
  SECTION("not at an outer block loop, where blocks would share it") {
    Var xo("xo"), yo("yo");
    Func h("h"), k("k");
    h(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    k(p.x, p.y) = h(p.x, p.y) + h(p.x + 1, p.y);
    k.gpu_tile(p.x, p.y, xo, yo, p.xi, p.yi, 32, 8);
    h.compute_at(k, yo).gpu_threads(p.x, p.y).store_in(MemoryType::Heap);
    CHECK_THROWS_WITH(Pipeline(k).compile_jit(cuda), Catch::Contains("Func h is stored in the heap at gpu_blocks loop") &&
                                                         Catch::Contains("blocks would share it"));
  }
}

TEST_CASE("A producer per thread over a strip of rows lives in registers", "[ptx]") {
  Pipelines p;
  Func bx("blur_x"), by("blur_y");
  bx(p.x, p.y) = (p.in(p.x - 1, p.y) + p.in(p.x, p.y) + p.in(p.x + 1, p.y)) / 3.0f;
  by(p.x, p.y) = (bx(p.x, p.y - 1) + bx(p.x, p.y) + bx(p.x, p.y + 1)) / 3.0f;
  test::schedule_register_strips(bx, by, p.x, p.y);
  Target target("host-cuda-cuda_capability_90");
  CHECK_THAT(Pipeline(by).lowered_stmt(target), Catch::Contains("allocate blur_x[float32 * 4 * 18]"));
  std::string ptx = Pipeline(by).compile_to_ptx(target);
  CHECK_THAT(ptx, !Catch::Contains(".local"));
  CHECK_THAT(ptx, Catch::Contains(".reqntid 64, 4, 1"));
  checkRegistersOnly(ptx, "sm_90");
}

TEST_CASE("A producer slid down each thread's strip keeps a window of rows in registers", "[ptx]") {
  Pipelines p;
  Func bx("blur_x"), by("blur_y");
  bx(p.x, p.y) = (p.in(p.x - 1, p.y) + p.in(p.x, p.y) + p.in(p.x + 1, p.y)) / 3.0f;
  by(p.x, p.y) = (bx(p.x, p.y - 1) + bx(p.x, p.y) + bx(p.x, p.y + 1)) / 3.0f;
  test::schedule_sliding_strips(bx, by, p.x, p.y);
  Target target("host-cuda-cuda_capability_90");
  CHECK_THAT(Pipeline(by).lowered_stmt(target), Catch::Contains("allocate blur_x[float32 * 4 * 4]"));
  std::string ptx = Pipeline(by).compile_to_ptx(target);
  CHECK_THAT(ptx, !Catch::Contains(".local"));
  // Each of the strip's 18 rows of blur_x computed once: 2 additions a lane, as each output
  // (some fused into a multiply-add).
  CHECK(occurrences(ptx, "add.f32") + occurrences(ptx, "fma.rn.f32") == 18 * 4 * 2 + 16 * 4 * 2);
  checkRegistersOnly(ptx, "sm_90");
  SECTION("in the three rows fold_storage asks for, still in registers") {
    bx.fold_storage(p.y, 3);
    CHECK_THAT(Pipeline(by).lowered_stmt(target), Catch::Contains("allocate blur_x[float32 * 4 * 3]"));
    std::string folded = Pipeline(by).compile_to_ptx(target);
    CHECK_THAT(folded, !Catch::Contains(".local"));
    checkRegistersOnly(folded, "sm_90");
  }
}

TEST_CASE("Shared tiles 32 banks wide get rows one element longer", "[ptx]") {
  Pipelines p;
  Func t("t");
  t(p.x, p.y) = p.in(p.y, p.x);
  t.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 32);
  p.in.in().compute_at(t, p.x).gpu_threads(_0, _1);
  Target target("host-cuda-cuda_capability_90");
  CHECK_THAT(Pipeline(t).lowered_stmt(target), Catch::Contains("[float32 * 33 * 32]"));
  CHECK(assemble(Pipeline(t).compile_to_ptx(target), "sm_90").empty());
  SECTION("not where a loop over the tile is vectorized: its rows keep their alignment") {
    Func u("u");
    Var xo("xo"), xv("xv");
    u(p.x, p.y) = p.in(p.x, p.y) * 2.0f;
    u.gpu_tile(p.x, p.y, p.xi, p.yi, 32, 8);
    p.in.in(u).compute_at(u, p.x).split(_0, xo, xv, 4).vectorize(xv).gpu_threads(xo, _1);
    CHECK_THAT(Pipeline(u).lowered_stmt(target), Catch::Contains("[float32 * 32 * 8]"));
  }
}
TEST_CASE("A transpose of 32x8 threads, 4 rows each, through a padded shared tile", "[ptx]") {
  Pipelines p;
  Var xo("xo"), yo("yo"), yii("yii"), j("j"), k("k");
  Func t("t");
  t(p.x, p.y) = p.in(p.y, p.x);
  t.tile(p.x, p.y, xo, yo, p.xi, p.yi, 32, 32).split(p.yi, p.yi, yii, 4).reorder(yii, p.xi, p.yi, xo, yo)
      .gpu_blocks(xo, yo).gpu_threads(p.xi, p.yi).unroll(yii);
  // The tile's loop over 4 rows at a time has a clipped extent, bounded by 8.
  p.in.in().compute_at(t, xo).split(_1, j, k, 4).reorder(k, _0, j).gpu_threads(_0, j).unroll(k);
  Target target("host-cuda-cuda_capability_90");
  CHECK_THAT(Pipeline(t).lowered_stmt(target), Catch::Contains("[float32 * 33 * 32]"));
  std::string ptx = Pipeline(t).compile_to_ptx(target);
  CHECK_THAT(ptx, Catch::Contains(".reqntid 32, 8, 1"));
  CHECK(assemble(ptx, "sm_90").empty());
}

TEMPLATE_TEST_CASE("PTX for arithmetic and conversions on 16-bit floats, with no bfloat16 instruction", "[ptx]", float16_t,
                   bfloat16_t) {
  test::Float16Arithmetic<TestType> arithmetic;
  test::Float16Conversions<TestType> conversions;
  Var xo("xo"), xi("xi");
  arithmetic.f.gpu_tile(arithmetic.x, xo, xi, 64);
  conversions.to.gpu_tile(conversions.x, xo, xi, 64);
  conversions.from.split(conversions.x, xo, xi, 256).gpu_blocks(xo).split(xi, xi, conversions.x, 4).gpu_threads(xi).vectorize(conversions.x);
  for (const char *capability : {"75", "80", "90"}) {
    const std::string arch = std::string("sm_") + capability;
    INFO(arch);
    const Target target(std::string("host-cuda-strict_float-cuda_capability_") + capability);
    for (Func *f : {&arithmetic.f, &conversions.to, &conversions.from}) {
      const std::string ptx = Pipeline(*f).compile_to_ptx(target);
      // bfloat16 is integer code on its bits on every capability.
      CHECK_THAT(ptx, !Catch::Contains(".bf16"));
      if (type_of<TestType>() == Float(16) && f != &conversions.from)
        CHECK_THAT(ptx, Catch::Contains("cvt.rn.f16.f32"));
      CHECK(assemble(ptx, arch) == "");
    }
  }
}

TEST_CASE("PTX of random numbers: integer hashing only, vectorized per thread", "[ptx]") {
  Var x("x"), y("y"), xi("xi"), yi("yi"), xv("xv");
  Func noise("noise_ptx");
  noise(x, y) = Tuple(random_float(), random_int(Expr(7)));
  noise.gpu_tile(x, y, xi, yi, 64, 4).split(xi, xi, xv, 4).vectorize(xv);
  const std::string ptx = Pipeline(noise).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains("mul.lo.s32") || Catch::Contains("mul.lo.u32"));
  CHECK_THAT(ptx, Catch::Contains("cvt.rn.f32.u32"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("require() inside a GPU kernel is a CompileError naming the requirement", "[ptx]") {
  Var x("x"), xi("xi");
  Param<int> p("required_p");
  Func f("required_gpu");
  f(x) = require(p > 0, x * p, "p must be positive");
  f.gpu_tile(x, xi, 64);
  CHECK_THROWS_WITH(Pipeline(f).compile_to_ptx(Target("host-cuda-cuda_capability_80")),
                    Catch::Contains("require() inside a GPU kernel (requirement failed: (required_p > 0): p must be "
                                    "positive): requirements are checked on the host"));
}

TEST_CASE("prefetch in a GPU kernel: L2 requests for device memory, none for a shared tile", "[ptx]") {
  ImageParam in(Float(32), 2, "prefetch_ptx_in");
  Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
  Func columns("prefetch_ptx_columns");
  columns(x, y) = in(x, y) * 2.0f;
  // Each thread walks down its column, asking for the row four ahead.
  columns.gpu_tile(x, xo, xi, 64).reorder(y, xi, xo).prefetch(in, y, 4);
  const std::string ptx = Pipeline(columns).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(ptx, Catch::Contains("prefetch.global.L2"));
  CHECK(assemble(ptx, "sm_80").empty());

  Func stencil("prefetch_ptx_stencil");
  stencil(x, y) = in(x - 1, y) + in(x + 1, y);
  stencil.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
  Func staged = in.in(stencil);
  staged.compute_at(stencil, xo).gpu_threads(_0, _1);
  stencil.prefetch(staged, xi, 1);
  const std::string sharedPtx = Pipeline(stencil).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK_THAT(sharedPtx, !Catch::Contains("prefetch.global"));
  CHECK(assemble(sharedPtx, "sm_80").empty());
}

TEST_CASE("PTX for Halide's max filter and unsharp mask under their GPU schedules", "[ptx]") {
  const Target target("host-cuda-cuda_capability_80");
  test::MaxFilter maxFilter(6);
  maxFilter.scheduleForGPU();
  const std::string maxPTX = Pipeline(maxFilter.Output).compile_to_ptx(target);
  // vert_log's pure and update stages and the output: a kernel each.
  CHECK(occurrences(maxPTX, ".entry ") == 3);
  CHECK(assemble(maxPTX, "sm_80").empty());
  test::Unsharp unsharp;
  unsharp.scheduleForGPU();
  const std::string unsharpPTX = Pipeline(unsharp.Output).compile_to_ptx(target);
  CHECK(occurrences(unsharpPTX, ".entry ") == 1);
  CHECK_THAT(unsharpPTX, Catch::Contains("bar.sync")); // gray and blur_y in shared memory
  CHECK(assemble(unsharpPTX, "sm_80").empty());
}

TEST_CASE("PTX for Halide's IIR blur under its CUDA schedule: lanes, heap storage at blocks, a padded wrapper",
          "[ptx]") {
  test::IirBlur app(96, 64, /*forGPU=*/true);
  const std::string ptx = Pipeline(app.Output).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK(occurrences(ptx, ".entry ") == 2); // one kernel a pass
  CHECK_THAT(ptx, Catch::Contains(".reqntid 32, 1, 1"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for Halide's stencil chain under its GPU schedule: nested wrappers in shared memory and registers",
          "[ptx]") {
  test::StencilChain app(4, 120, 48);
  app.scheduleForGPU();
  const std::string ptx = Pipeline(app.Output).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  CHECK(occurrences(ptx, ".entry ") == 4); // one kernel a stage, the last inlined into the output
  CHECK_THAT(ptx, Catch::Contains("bar.sync"));
  CHECK(assemble(ptx, "sm_80").empty());
}

TEST_CASE("PTX for Halide's convolution layer under its CUDA schedule: registers in a block loop of fused tiles and "
          "batches", "[ptx]") {
  // The fused loop's parts are non-empty where it runs: each thread's slice of conv starts a
  // constant away wherever it is written and read, and has a constant size, whatever the sizes.
  for (bool bounded : {false, true}) {
    INFO((bounded ? "the app's bounds" : "no bounds"));
    test::ConvLayer app(32);
    app.scheduleForCUDA();
    if (bounded)
      app.boundOutput(64, 20, 15, 3);
    const std::string ptx = Pipeline(app.Relu).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
    CHECK(occurrences(ptx, ".entry ") == 1);
    // With loops of constant extents, conv's accumulators are registers (without, the loops
    // are guarded and the slice is in the thread's local memory).
    if (bounded)
      CHECK_THAT(ptx, !Catch::Contains(".local"));
    CHECK(assemble(ptx, "sm_80").empty());
  }
}

TEST_CASE("PTX for Halide's interpolate under its GPU schedule", "[ptx]") {
  test::Interpolate app(6);
  app.scheduleForGPU();
  const std::string ptx = Pipeline(app.Normalize).compile_to_ptx(Target("host-cuda-cuda_capability_80"));
  // Five downsamples, interpolated 3 and 5 at root, and the output with its producers inside.
  CHECK(occurrences(ptx, ".entry ") == 8);
  CHECK(assemble(ptx, "sm_80").empty());
}
