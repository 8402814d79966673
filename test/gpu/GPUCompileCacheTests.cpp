// The compile cache on the GPU: the PTX of each capability and the driver's binary of each
// device come from the disk once stored, and give bit-identical results. PTX made ahead, while
// the host code compiles.

#include "GPUTestUtil.h"

#include "DeviceCodeGenerator.h"
#include "DiskCache.h"
#include "PipelineCompiler.h"
#include "cuda/CudaDriver.h"
#include "cuda/DefaultHandlers.h"
#include "lang/DefinitionKey.h"

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

TEST_CASE("The PTX for the likely device is made while the host code compiles, and a realize takes it", "[gpu][cache]") {
  PTXJIT_REQUIRE_GPU(); // which initializes CUDA in this process
  const int capability = runtime::cuda::likely_device_capability();
  REQUIRE(capability > 0);
  jit::DiskCache &cache = jit::DiskCache::process();
  const jit::DiskCache::Settings previous = cache.settings();
  cache.configure({false, previous.directory, previous.max_bytes}); // all PTX made, none read
  const int version = runtime::cuda::max_ptx_version_for_driver(runtime::cuda::driver().version);
  for (const char *name : {"host-cuda", "host-cuda-cuda_capability_80"}) {
    INFO(name);
    const Target target(name);
    const Target resolved = jit::device_target(target, capability);
    Blur b;
    auto compiled = jit::compile_pipeline({b.by.contents()}, definition_key({b.by.contents()}), target, nullptr);
    CHECK(compiled->ptx_prepared_for() == resolved.to_string() + " " + std::to_string(version));
    // The first ask takes what was prepared, the second makes it again: the same text.
    const std::string prepared = compiled->ptx(resolved, version);
    CHECK(prepared == compiled->ptx(resolved, version));
    CHECK(prepared.find(".target " + std::string(target.cuda_capability() ? "sm_80" : "sm_")) != std::string::npos);
  }
  // A realize through a Pipeline loads what was prepared, and computes the blur.
  uint32_t seed = fresh_seed();
  INFO("seed " << seed);
  const int w = 150, h = 40;
  Blur b;
  Buffer<float> input = b.input(w, h, seed), out(w, h);
  onGPU(b.by).realize(out);
  check_against(out, [&](const std::vector<int> &c) { return Blur::reference(input, c[0], c[1]); });
  cache.configure(previous);
}
