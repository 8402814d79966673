// The compile cache on the GPU: the PTX of each capability and the driver's binary of each
// device come from the disk once stored, and give bit-identical results.

#include "GPUTestUtil.h"

#include "DiskCache.h"

#include <cstring>
#include <filesystem>

using namespace ptxjit;
using namespace ptxjit::test;

namespace {

CompileCacheStatistics since(const CompileCacheStatistics &before) {
  CompileCacheStatistics now = JIT::compile_cache_statistics(), d;
  d.hits = now.hits - before.hits;
  d.misses = now.misses - before.misses;
  d.stores = now.stores - before.stores;
  d.rejected = now.rejected - before.rejected;
  return d;
}

} // namespace

TEST_CASE("GPU code from the compile cache: host object, PTX and driver binary", "[gpu][cache]") {
  PTXJIT_REQUIRE_GPU();
  jit::DiskCache &cache = jit::DiskCache::process();
  const jit::DiskCache::Settings previous = cache.settings();
  std::string directory = (std::filesystem::temp_directory_path() / "ptxjit-gpu-cache-XXXXXX").string();
  REQUIRE(mkdtemp(directory.data()) != nullptr);
  cache.configure({true, directory, uint64_t(1) << 30});
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 200, h = 70;
  auto realize = [&] {
    Blur b;
    Buffer<float> input = b.input(w, h, seed);
    Buffer<float> out(w, h);
    onGPU(b.by).realize(out);
    return out;
  };
  CompileCacheStatistics before = JIT::compile_cache_statistics();
  Buffer<float> first = realize();
  CompileCacheStatistics miss = since(before);
  CHECK(miss.misses == 3); // host code, PTX, binary
  CHECK(miss.stores == 3);
  before = JIT::compile_cache_statistics();
  Buffer<float> second = realize();
  CompileCacheStatistics hit = since(before);
  CHECK(hit.hits == 3);
  CHECK(hit.misses == 0);
  CHECK(hit.stores == 0);
  bool same = true;
  for (int y = 0; y < h; ++y)
    same = same && std::memcmp(&first(0, y), &second(0, y), w * sizeof(float)) == 0;
  CHECK(same);
  Buffer<float> input = Blur().input(w, h, seed);
  check_against(second, [&](const std::vector<int> &c) { return Blur::reference(input, c[0], c[1]); });
  cache.configure(previous);
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}
