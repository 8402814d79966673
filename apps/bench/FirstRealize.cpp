#include "FirstRealize.h"

#include "Json.h"
#include "cuda/CudaDriver.h"
#include "ptxjit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

using namespace ptxjit;

namespace bench {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One child: its compile and first-realize times, or nothing if it failed.
bool runChild(const std::string &mode, const std::string &cacheDirectory, double &compileMs, double &firstMs) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    return false;
  std::string command = "PTXJIT_CACHE_DIR='" + cacheDirectory + "' '" + self.string() + "' --first-realize-child " + mode;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return false;
  std::string out;
  char chunk[256];
  while (size_t n = std::fread(chunk, 1, sizeof(chunk), pipe))
    out.append(chunk, n);
  if (pclose(pipe) != 0)
    return false;
  compileMs = json_field(out, "compile_ms");
  firstMs = json_field(out, "first_realize_ms");
  return !std::isnan(compileMs) && !std::isnan(firstMs);
}

std::string temporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "ptxjit-bench-first-XXXXXX").string();
  return mkdtemp(pattern.data()) ? pattern : std::string();
}

std::string measureMode(const std::string &mode) {
  const int coldRuns = 3, warmRuns = 7;
  std::vector<double> coldCompile, coldFirst, warmCompile, warmFirst;
  std::string warmDirectory;
  for (int i = 0; i < coldRuns; ++i) {
    std::string directory = temporaryDirectory();
    double c, f;
    if (!directory.empty() && runChild(mode, directory, c, f)) {
      coldCompile.push_back(c);
      coldFirst.push_back(f);
    }
    std::error_code ignored;
    if (warmDirectory.empty())
      warmDirectory = directory; // filled by this cold run
    else
      std::filesystem::remove_all(directory, ignored);
  }
  for (int i = 0; i < warmRuns && !warmDirectory.empty(); ++i) {
    double c, f;
    if (runChild(mode, warmDirectory, c, f)) {
      warmCompile.push_back(c);
      warmFirst.push_back(f);
    }
  }
  std::error_code ignored;
  if (!warmDirectory.empty())
    std::filesystem::remove_all(warmDirectory, ignored);
  auto total = [](const std::vector<double> &a, const std::vector<double> &b) {
    std::vector<double> t;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      t.push_back(a[i] + b[i]);
    return median(t);
  };
  return "{\"cold\": {\"compile_jit_ms\": " + json_number(median(coldCompile)) + ", \"first_realize_ms\": " +
         json_number(median(coldFirst)) + ", \"total_ms\": " + json_number(total(coldCompile, coldFirst)) +
         ", \"processes\": " + std::to_string(coldCompile.size()) + "}, \"warm_cache\": {\"compile_jit_ms\": " +
         json_number(median(warmCompile)) + ", \"first_realize_ms\": " + json_number(median(warmFirst)) +
         ", \"total_ms\": " + json_number(total(warmCompile, warmFirst)) + ", \"processes\": " +
         std::to_string(warmCompile.size()) + "}}";
}

} // namespace

std::string first_realize_benchmarks(bool gpu) {
  std::string json = "{\"image\": \"256x256 f32 blur, host buffers\", \"cpu\": " + measureMode("cpu");
  if (gpu)
    json += ", \"gpu\": " + measureMode("gpu") + ", \"gpu_device_buffers\": " + measureMode("gpu_device_buffers");
  return json + "}";
}

namespace {

int firstRealize(const std::string &mode) {
  const bool deviceBuffers = mode == "gpu_device_buffers", gpu = mode == "gpu" || deviceBuffers;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (gpu) {
    // The context exists before the clock starts, as in a process that already uses CUDA.
    const runtime::cuda::DriverApi &api = runtime::cuda::driver();
    if (api.cuDeviceGet(&device, 0) != CUDA_SUCCESS || api.cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
        api.cuCtxPushCurrent(context) != CUDA_SUCCESS)
      return 1;
  }
  const int w = 256, h = 256;
  Buffer<float> input(w + 2, h + 2), out(w, h);
  input.set_min({-1, -1});
  input.for_each_element([&](const std::vector<int> &c) { input.at(c) = float((c[0] * 7 + c[1] * 13) % 17); });

  auto start = Clock::now();
  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func bx("blur_x"), by("blur_y");
  bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
  by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
  if (gpu) {
    by.gpu_tile(x, y, xi, yi, 32, 8);
  } else {
    by.tile(x, y, xi, yi, 64, 32).vectorize(xi, 8).parallel(y);
    bx.compute_at(by, x).vectorize(x, 8);
  }
  Pipeline p(by);
  p.compile_jit(Target(gpu ? "host-cuda" : "host"));
  double compileMs = msSince(start);
  const runtime::cuda::DriverApi *api = gpu ? &runtime::cuda::driver() : nullptr;
  CUdeviceptr inDevice = 0, outDevice = 0;
  if (deviceBuffers) {
    // Already on the device, as a framework's tensors are: no copies, no staging memory.
    const size_t inBytes = size_t(w + 2) * (h + 2) * sizeof(float), outBytes = size_t(w) * h * sizeof(float);
    if (api->cuMemAlloc(&inDevice, inBytes) != CUDA_SUCCESS || api->cuMemAlloc(&outDevice, outBytes) != CUDA_SUCCESS ||
        api->cuMemcpyHtoDAsync(inDevice, input.data(), inBytes, nullptr) != CUDA_SUCCESS || api->cuCtxSynchronize() != CUDA_SUCCESS)
      return 1;
    input.set_device(inDevice);
    out.set_device(outDevice);
  }
  in.set(input);
  auto realizeStart = Clock::now();
  p.realize(out); // with host buffers, returns once the output is on the host
  if (deviceBuffers && api->cuCtxSynchronize() != CUDA_SUCCESS)
    return 1;
  double firstMs = msSince(realizeStart);
  if (deviceBuffers && (api->cuMemcpyDtoHAsync(out.data(), outDevice, size_t(w) * h * sizeof(float), nullptr) != CUDA_SUCCESS || api->cuCtxSynchronize() != CUDA_SUCCESS))
    return 1;
  float expected = ((input(-1, -1) + input(0, -1) + input(1, -1)) + (input(-1, 0) + input(0, 0) + input(1, 0)) +
                    (input(-1, 1) + input(0, 1) + input(1, 1))) / 9.0f;
  if (std::fabs(out(0, 0) - expected) > 1e-4f)
    return 1;
  std::printf("{\"compile_ms\": %.4f, \"first_realize_ms\": %.4f}\n", compileMs, firstMs);
  if (deviceBuffers) {
    out.set_device(0);
    input.set_device(0);
    api->cuMemFree(inDevice);
    api->cuMemFree(outDevice);
  }
  if (gpu) {
    CUcontext popped;
    runtime::cuda::driver().cuCtxPopCurrent(&popped);
    runtime::cuda::driver().cuDevicePrimaryCtxRelease(device);
  }
  return 0;
}

} // namespace

int first_realize_child(const std::string &mode) {
  try {
    return firstRealize(mode);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "first realize (%s): %s\n", mode.c_str(), e.what());
    return 1;
  }
}

} // namespace bench
