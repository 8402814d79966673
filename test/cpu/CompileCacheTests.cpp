// The definition key and the on-disk compile cache: keys that tell every change of a program
// apart, hits that skip compiling and give bit-identical results, damaged entries, eviction,
// an unwritable directory, and many processes and threads filling one cache.

#include "TestUtil.h"
#include "lang/DefinitionKey.h"
#include "ptxjit.h"

#include "DiskCache.h"
#include "PipelineCompiler.h"
#include "cuda/CudaDriver.h"

#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

namespace fs = std::filesystem;

// Points the process's compile cache at a fresh directory for one test, and back after.
class ScopedCacheDirectory {
public:
  explicit ScopedCacheDirectory(uint64_t maxBytes = uint64_t(1) << 30) {
    Previous = jit::DiskCache::process().settings();
    std::string pattern = (fs::temp_directory_path() / "ptxjit-cache-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    Path = pattern;
    jit::DiskCache::process().configure({true, Path, maxBytes});
  }
  ~ScopedCacheDirectory() {
    jit::DiskCache::process().configure(Previous);
    std::error_code ignored;
    fs::remove_all(Path, ignored);
  }
  const std::string &path() const { return Path; }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto &entry : fs::directory_iterator(Path))
      out.push_back(entry.path());
    return out;
  }

private:
  jit::DiskCache::Settings Previous;
  std::string Path;
};

// A blur with a gain, an offset `c` and a schedule of `variant` (0: inline, 1: compute_root
// vectorized, 2: tiles in parallel); the same names every time, as a program run again makes.
struct Blur {
  ImageParam in{Float(32), 2, "in"};
  Param<float> gain{"gain"};
  Func bx{"bx"}, by{"by"};
  Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
  Blur(float c, int variant) {
    bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) * gain;
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f + c;
    if (variant == 1) {
      bx.compute_root().vectorize(x, 8);
    } else if (variant == 2) {
      by.tile(x, y, xi, yi, 16, 8).parallel(y);
      bx.compute_at(by, x);
    }
  }
};

Buffer<float> realizeBlur(Blur &b, const Buffer<float> &input, int w, int h) {
  b.in.set(input);
  b.gain.set(0.5f);
  Pipeline p(b.by);
  return p.realize<float>({w, h});
}

Buffer<float> randomInput(int w, int h, uint32_t seed) {
  Buffer<float> input(w + 2, h + 2);
  input.set_min({-1, -1});
  fill_random(input, seed);
  return input;
}

bool bitIdentical(const Buffer<float> &a, const Buffer<float> &b) {
  bool same = a.extent(0) == b.extent(0) && a.extent(1) == b.extent(1);
  for (int y = 0; same && y < a.extent(1); ++y)
    same = std::memcmp(&a(0, y), &b(0, y), size_t(a.extent(0)) * sizeof(float)) == 0;
  return same;
}

void checkBlur(const Buffer<float> &out, const Buffer<float> &in, float c) {
  check_against(out, [&](const std::vector<int> &p) {
    auto bx = [&](int x, int y) { return (in(x - 1, y) + in(x, y) + in(x + 1, y)) * 0.5f; };
    return (bx(p[0], p[1] - 1) + bx(p[0], p[1]) + bx(p[0], p[1] + 1)) / 3.0f + c;
  }, 1e-5);
}

CompileCacheStatistics operator-(const CompileCacheStatistics &a, const CompileCacheStatistics &b) {
  CompileCacheStatistics d;
  d.hits = a.hits - b.hits;
  d.misses = a.misses - b.misses;
  d.stores = a.stores - b.stores;
  d.bytes_read = a.bytes_read - b.bytes_read;
  d.bytes_written = a.bytes_written - b.bytes_written;
  d.evictions = a.evictions - b.evictions;
  d.rejected = a.rejected - b.rejected;
  return d;
}

std::string keyOf(const Func &f) { return definition_key({f.contents()}).text; }

// Makes the blur of `c` and `variant` afresh (the same names, as a program run again does),
// realizes it on `input` over w x h and checks it; returns what the compile cache did meanwhile.
CompileCacheStatistics realizeCounting(float c, int variant, const Buffer<float> &input, int w, int h) {
  CompileCacheStatistics before = JIT::compile_cache_statistics();
  {
    Blur b(c, variant);
    checkBlur(realizeBlur(b, input, w, h), input, c);
  }
  return JIT::compile_cache_statistics() - before;
}

} // namespace

TEST_CASE("Definition keys are equal for equal programs and differ for any change", "[unit][cache]") {
  Var x("x"), y("y"), xo("xo"), xi("xi");
  // Each builds the same program from fresh objects, but for one change.
  auto program = [&](int change) {
    ImageParam in(change == 1 ? Int(32) : Float(32), 2, "in");
    Param<float> p("p");
    Func f("f"), g("g");
    Expr value = change == 1 ? cast<float>(in(x, y)) : in(x, y);
    f(x, y) = value * (change == 2 ? 3.0f : 2.0f) + (change == 3 ? p * 2.0f : p);
    g(x, y) = f(x, y) + f(x + 1, y);
    if (change == 4)
      g.split(x, xo, xi, 8);
    if (change == 5)
      g.split(x, xo, xi, 16);
    if (change == 6)
      f.compute_root();
    if (change == 7)
      g.vectorize(x, 4);
    if (change == 8)
      in.dim(0).set_min(0);
    if (change == 9)
      g.bound(x, 0, 64);
    if (change == 10) {
      RDom r(0, 3, "r");
      g(x, y) += f(x + r, y);
    }
    if (change == 11) {
      RDom r(0, 4, "r");
      g(x, y) += f(x + r, y);
    }
    if (change == 12)
      f.in(g).compute_root();
    if (change == 13)
      g.specialize(p > 0.0f).vectorize(x, 4);
    if (change == 14)
      g.parallel(y);
    if (change == 15)
      g.prefetch(in, x, y, 2);
    if (change == 16)
      g.prefetch(in, x, y, 3);
    if (change == 17)
      g.prefetch(in, x, y, 2, PrefetchBoundStrategy::Clamp);
    if (change == 18)
      in.dim(0).set_stride(Expr());
    return keyOf(g);
  };
  const std::string base = program(0);
  REQUIRE_FALSE(base.empty());
  CHECK(program(0) == base);
  for (int change = 1; change <= 18; ++change) {
    INFO("change " << change);
    CHECK(program(change) != base);
    CHECK(program(change) == program(change));
    for (int other = 1; other < change; ++other)
      CHECK(program(change) != program(other));
  }
  // A Param's value and an ImageParam's buffer are not part of the program.
  ImageParam in(Float(32), 2, "in");
  Param<float> p("p");
  Func f("f"), g("g");
  f(x, y) = in(x, y) * 2.0f + p;
  g(x, y) = f(x, y) + f(x + 1, y);
  const std::string before = keyOf(g);
  p.set(7.0f);
  Buffer<float> image(8, 8);
  in.set(image);
  CHECK(keyOf(g) == before);
  CHECK(before == base);
}

TEST_CASE("Two Params of one name make a program without a key", "[unit][cache]") {
  Param<float> a("same"), b("same");
  Var x("x");
  Func f("f"), g("g");
  f(x) = a * cast<float>(x);
  g(x) = f(x) + b;
  DefinitionKey key = definition_key({g.contents()});
  CHECK(key.text.empty());
}

TEST_CASE("The compile cache's settings come from the environment", "[unit][cache]") {
  struct Saved {
    const char *name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  for (const char *name : {"PTXJIT_CACHE", "PTXJIT_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "PTXJIT_CACHE_MAX_BYTES"}) {
    const char *v = std::getenv(name);
    saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
    unsetenv(name);
  }
  auto restore = [&] {
    for (const Saved &s : saved)
      s.value ? setenv(s.name, s.value->c_str(), 1) : unsetenv(s.name);
  };
  try {
    setenv("HOME", "/home/someone", 1);
    jit::DiskCache::Settings s = jit::DiskCache::settings_from_environment();
    CHECK(s.enabled);
    CHECK(s.directory == "/home/someone/.cache/ptxjit");
    CHECK(s.max_bytes == uint64_t(1) << 30);
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    CHECK(jit::DiskCache::settings_from_environment().directory == "/xdg/ptxjit");
    setenv("PTXJIT_CACHE_DIR", "/elsewhere", 1);
    CHECK(jit::DiskCache::settings_from_environment().directory == "/elsewhere");
    setenv("PTXJIT_CACHE_MAX_BYTES", "64M", 1);
    CHECK(jit::DiskCache::settings_from_environment().max_bytes == uint64_t(64) << 20);
    setenv("PTXJIT_CACHE_MAX_BYTES", "123456", 1);
    CHECK(jit::DiskCache::settings_from_environment().max_bytes == 123456);
    setenv("PTXJIT_CACHE", "0", 1);
    CHECK_FALSE(jit::DiskCache::settings_from_environment().enabled);
    setenv("PTXJIT_CACHE", "yes", 1);
    CHECK_THROWS_WITH(jit::DiskCache::settings_from_environment(), Catch::Contains("PTXJIT_CACHE must be 0 or 1"));
    setenv("PTXJIT_CACHE", "1", 1);
    setenv("PTXJIT_CACHE_MAX_BYTES", "12X", 1);
    CHECK_THROWS_WITH(jit::DiskCache::settings_from_environment(),
                      Catch::Contains("PTXJIT_CACHE_MAX_BYTES") && Catch::Contains("'12X'"));
    setenv("PTXJIT_CACHE_MAX_BYTES", "-5", 1);
    CHECK_THROWS(jit::DiskCache::settings_from_environment());
    unsetenv("PTXJIT_CACHE_MAX_BYTES");
    unsetenv("PTXJIT_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK_FALSE(jit::DiskCache::settings_from_environment().enabled); // nowhere to put it
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

TEST_CASE("A compile cache hit skips compiling and gives bit-identical results", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 61, h = 23;
  Buffer<float> input = randomInput(w, h, seed);
  for (int variant = 0; variant < 3; ++variant) {
    INFO("schedule " << variant);
    CompileCacheStatistics start = JIT::compile_cache_statistics();
    Buffer<float> first;
    {
      Blur b(0.25f, variant);
      first = realizeBlur(b, input, w, h);
    }
    CompileCacheStatistics afterMiss = JIT::compile_cache_statistics() - start;
    CHECK(afterMiss.misses == 1);
    CHECK(afterMiss.stores == 1);
    CHECK(afterMiss.hits == 0);
    checkBlur(first, input, 0.25f);

    // The first Pipeline is gone: the same program made again comes from the disk.
    CompileCacheStatistics beforeHit = JIT::compile_cache_statistics();
    Buffer<float> second;
    {
      Blur b(0.25f, variant);
      second = realizeBlur(b, input, w, h);
    }
    CompileCacheStatistics afterHit = JIT::compile_cache_statistics() - beforeHit;
    CHECK(afterHit.hits == 1);
    CHECK(afterHit.misses == 0);
    CHECK(afterHit.stores == 0);
    CHECK(bitIdentical(first, second));

    // Another constant is another program.
    CHECK(realizeCounting(0.75f, variant, input, w, h).misses == 1);
  }
  // Without the cache the same program compiles again, to the same results.
  Buffer<float> cached;
  {
    Blur b(0.25f, 1);
    cached = realizeBlur(b, input, w, h);
  }
  jit::DiskCache::Settings settings = jit::DiskCache::process().settings();
  jit::DiskCache::process().configure({false, settings.directory, settings.max_bytes});
  CompileCacheStatistics beforeOff = JIT::compile_cache_statistics();
  Buffer<float> uncached;
  {
    Blur b(0.25f, 1);
    uncached = realizeBlur(b, input, w, h);
  }
  CompileCacheStatistics off = JIT::compile_cache_statistics() - beforeOff;
  CHECK(off.hits + off.misses + off.stores == 0);
  CHECK(bitIdentical(cached, uncached));
}

TEST_CASE("Pipelines alive share compiled code and bind their own Params", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 19, h = 7;
  Buffer<float> inputA = randomInput(w, h, seed), inputB = randomInput(w, h, seed + 1);
  Blur a(0.5f, 1), b(0.5f, 1);
  a.in.set(inputA);
  b.in.set(inputB);
  a.gain.set(0.5f);
  b.gain.set(0.5f);
  Pipeline pa(a.by), pb(b.by);
  CompileCacheStatistics before = JIT::compile_cache_statistics();
  pa.compile_jit();
  pb.compile_jit(); // in memory: no disk lookup
  CompileCacheStatistics d = JIT::compile_cache_statistics() - before;
  CHECK(d.misses == 1);
  CHECK(d.hits == 0);
  Buffer<float> outA = pa.realize<float>({w, h}), outB = pb.realize<float>({w, h});
  checkBlur(outA, inputA, 0.5f);
  checkBlur(outB, inputB, 0.5f);
}

TEST_CASE("A damaged compile cache entry is rejected and written again", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 33, h = 9;
  Buffer<float> input = randomInput(w, h, seed);
  {
    Blur b(1.5f, 2);
    realizeBlur(b, input, w, h);
  }
  std::vector<fs::path> files = cache.files();
  REQUIRE(files.size() == 1);
  const fs::path entry = files[0];
  const auto size = fs::file_size(entry);
  for (const char *damage : {"flipped byte", "truncated", "empty"}) {
    INFO(damage);
    if (std::strcmp(damage, "flipped byte") == 0) {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(std::streamoff(size - 100));
      char c = 0;
      f.read(&c, 1);
      c = char(c ^ 0x5a);
      f.seekp(std::streamoff(size - 100));
      f.write(&c, 1);
    } else {
      fs::resize_file(entry, std::strcmp(damage, "empty") == 0 ? 0 : size / 2);
    }
    CompileCacheStatistics d = realizeCounting(1.5f, 2, input, w, h);
    CHECK(d.rejected == 1);
    CHECK(d.misses == 1);
    CHECK(d.stores == 1);
    CHECK(fs::file_size(entry) == size);
    // Whole again: the next compile hits.
    CHECK(realizeCounting(1.5f, 2, input, w, h).hits == 1);
  }
}

TEST_CASE("The compile cache deletes the least recently used entries beyond its size", "[cpu][cache]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 16, h = 4;
  Buffer<float> input = randomInput(w, h, seed);
  uint64_t entryBytes = 0;
  {
    ScopedCacheDirectory probe;
    entryBytes = realizeCounting(10.0f, 0, input, w, h).bytes_written;
  }
  REQUIRE(entryBytes > 0);
  ScopedCacheDirectory cache(entryBytes * 5 / 2); // room for two entries
  auto hits = [&](float c) { return realizeCounting(c, 0, input, w, h).hits; };
  CHECK(hits(1.0f) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20)); // distinct modification times
  CHECK(hits(2.0f) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(hits(1.0f) == 1); // 1 is now the most recently used
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CompileCacheStatistics evicting = realizeCounting(3.0f, 0, input, w, h);
  CHECK(evicting.hits == 0);
  CHECK(evicting.evictions == 1); // 2, the least recently used
  uint64_t total = 0;
  for (const fs::path &f : cache.files())
    total += fs::file_size(f);
  CHECK(total <= entryBytes * 5 / 2);
  CHECK(cache.files().size() == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(hits(1.0f) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(hits(3.0f) == 1);
  CHECK(hits(2.0f) == 0);
}

namespace {
int Warnings = 0;
std::string LastWarning;
} // namespace

TEST_CASE("An unwritable compile cache warns once and compiles as usual", "[cpu][cache]") {
  ScopedCacheDirectory scratch;
  // A directory that cannot exist: its parent is a file.
  const std::string file = scratch.path() + "/a-file";
  std::ofstream(file) << "not a directory";
  jit::DiskCache::process().configure({true, file + "/cache", uint64_t(1) << 30});
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 12, h = 5;
  Buffer<float> input = randomInput(w, h, seed);
  Warnings = 0;
  for (float c : {4.0f, 5.0f, 6.0f}) {
    Blur b(c, 1);
    b.in.set(input);
    b.gain.set(0.5f);
    Pipeline p(b.by);
    p.jit_handlers().print = [](JITUserContext *, const char *message) {
      ++Warnings;
      LastWarning = message;
    };
    checkBlur(p.realize<float>({w, h}), input, c);
  }
  CHECK(Warnings == 1);
  CHECK_THAT(LastWarning, Catch::Contains("compile cache") && Catch::Contains(file));
}

// Runs only when named, in child processes (see the test below).
TEST_CASE("Compile cache child", "[.]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 24, h = 6;
  Buffer<float> input = randomInput(w, h, seed);
  // Threads of this process and other processes fill the cache at once; the order differs.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        int k = (i + t + int(seed % 6)) % 6;
        Blur b(float(k), k % 3);
        b.in.set(input);
        b.gain.set(0.5f);
        Buffer<float> out = Pipeline(b.by).realize<float>({w, h});
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            auto bx = [&](int xx, int yy) { return (input(xx - 1, yy) + input(xx, yy) + input(xx + 1, yy)) * 0.5f; };
            float expected = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f + float(k);
            if (std::fabs(out(x, y) - expected) > 1e-4f)
              ++wrong;
          }
      }
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(wrong == 0);
}

TEST_CASE("Eight processes fill one compile cache at once", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i)
    children.push_back(spawn_test("Compile cache child", {"PTXJIT_CACHE_DIR=" + cache.path()}));
  for (pid_t child : children)
    require_passed(child);
  // Six whole entries and nothing else: no temporary file is left behind.
  std::vector<fs::path> files = cache.files();
  CHECK(files.size() == 6);
  for (const fs::path &f : files)
    CHECK(f.extension() == ".entry");
  // Every program is now a hit here, with correct results.
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 24, h = 6;
  Buffer<float> input = randomInput(w, h, seed);
  for (int k = 0; k < 6; ++k) {
    CompileCacheStatistics d = realizeCounting(float(k), k % 3, input, w, h);
    CHECK(d.hits == 1);
    CHECK(d.misses == 0);
    CHECK(d.rejected == 0);
  }
}

// Runs only when named, in a child process (see the test below).
TEST_CASE("Compile cache hit then a compile in a new process", "[.]") {
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 24, h = 6;
  Buffer<float> input = randomInput(w, h, seed);
  // The process's JIT is made by linking cached objects, without LLVM's host target; the
  // compile after it must set that up.
  CompileCacheStatistics hit = realizeCounting(3.0f, 1, input, w, h);
  CHECK(hit.hits == 1);
  CHECK(hit.misses == 0);
  for (int variant : {0, 2}) {
    CompileCacheStatistics miss = realizeCounting(4.0f, variant, input, w, h);
    CHECK(miss.misses == 1);
  }
}

TEST_CASE("A process whose first pipeline comes from the compile cache compiles the next one", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 24, h = 6;
  CHECK(realizeCounting(3.0f, 1, randomInput(w, h, seed), w, h).misses == 1);
  require_passed(spawn_test("Compile cache hit then a compile in a new process", {"PTXJIT_CACHE_DIR=" + cache.path()}));
}

TEST_CASE("Cached pipelines make PTX for a capability the cache does not hold", "[ptx][cache]") {
  ScopedCacheDirectory cache;
  // As a realize on host-cuda asks for the PTX of the device it meets.
  const Target hostCuda("host-cuda");
  const Target sm80 = hostCuda.resolve_cuda_capability(8, 0), sm86 = hostCuda.resolve_cuda_capability(8, 6);
  auto compile = [&] {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func f("scaled");
    f(x, y) = in(x, y) * 3.0f + sqrt(abs(in(x + 1, y)));
    f.gpu_tile(x, y, xi, yi, 16, 8);
    return jit::compile_pipeline({f.contents()}, definition_key({f.contents()}), hostCuda, nullptr);
  };
  std::string first80 = compile()->ptx(sm80, 78);
  // From the disk: the host code and sm_80's PTX hit; sm_86's is made by lowering again.
  CompileCacheStatistics before = JIT::compile_cache_statistics();
  auto cached = compile();
  std::string cached80 = cached->ptx(sm80, 78), cached86 = cached->ptx(sm86, 78);
  CompileCacheStatistics d = JIT::compile_cache_statistics() - before;
  CHECK(d.hits == 2);
  CHECK(d.misses == 1);
  CHECK(cached80 == first80);
  // The same PTX as a compile without the cache.
  jit::DiskCache::process().configure({false, cache.path(), uint64_t(1) << 30});
  CHECK(compile()->ptx(sm86, 78) == cached86);
  CHECK(cached86.find("sm_86") != std::string::npos);
}

TEST_CASE("A compile makes PTX ahead only where the process has initialized CUDA, and never loads it", "[ptx][cache]") {
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func f("ahead");
  f(x, y) = in(x, y) * 2.0f;
  f.gpu_tile(x, y, xi, yi, 16, 8);
  const bool loadedBefore = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr;
  const bool initialized = runtime::cuda::initialized_driver() != nullptr;
  auto compiled = jit::compile_pipeline({f.contents()}, definition_key({f.contents()}), Target("host-cuda"), nullptr);
  CHECK(compiled->ptx_prepared_for().empty() == !initialized);
  // A process that had not loaded the driver still has not.
  if (!loadedBefore)
    CHECK(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == nullptr);
}

TEST_CASE("A cached object that does not link is compiled again", "[cpu][cache]") {
  ScopedCacheDirectory cache;
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 20, h = 6;
  Buffer<float> input = randomInput(w, h, seed);
  {
    Blur b(2.5f, 1);
    realizeBlur(b, input, w, h);
  }
  std::vector<fs::path> files = cache.files();
  REQUIRE(files.size() == 1);
  // The entry: a 32-byte header (magic, identity size, payload size, checksum), the identity, then
  // the payload, whose last field is the object. Its end (the ELF section headers) is zeroed and
  // the entry stored again whole, checksum and all: only linking can tell.
  std::ifstream file(files[0], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 32);
  uint64_t identityBytes = 0;
  std::memcpy(&identityBytes, bytes.data() + 8, sizeof(identityBytes));
  const std::string identity = bytes.substr(32, identityBytes);
  std::string payload = bytes.substr(32 + identityBytes);
  REQUIRE(payload.size() > 512);
  std::fill(payload.end() - 256, payload.end(), '\0');
  jit::DiskCache::process().store(identity, payload);
  CompileCacheStatistics d = realizeCounting(2.5f, 1, input, w, h);
  CHECK(d.hits == 1);   // found whole,
  CHECK(d.stores == 1); // but compiled and stored again
}
