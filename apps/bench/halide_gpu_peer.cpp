// The Halide 14 GPU peer: the benchmark's blur (inline and shared-memory schedules) and its
// one-kernel pipeline, compiled ahead of time by halide_gpu_generator, run on the primary context
// of device 0 and a non-blocking stream of its own, and timed exactly as ptxjit's are (CUDA events
// around each call on device-resident buffers; host time per call for the one-kernel pipeline).
// Prints one JSON object. A separate program: Halide's runtime and ptxjit's stay apart.
// Usage: halide_gpu_peer [--quick].

#include "Json.h"
#include "halide_blur_inline.h"
#include "halide_blur_shared.h"
#include "halide_twice.h"

#include <HalideBuffer.h>
#include <HalideRuntimeCuda.h>
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

CUcontext Context = nullptr;
CUstream Stream = nullptr;

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    cuGetErrorName(r, &name);
    throw std::runtime_error(std::string(what) + " failed with " + (name ? name : "an unknown error"));
  }
}

void check(int r, const char *what) {
  if (r != 0)
    throw std::runtime_error(std::string(what) + " failed with Halide error " + std::to_string(r));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds of `work` on Stream, by events; median of `reps` after `warmup`.
double timeOnStream(int warmup, int reps, const std::function<void()> &work) {
  CUevent start, stop;
  check(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < warmup; ++i)
    work();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    check(cuEventRecord(start, Stream), "cuEventRecord");
    work();
    check(cuEventRecord(stop, Stream), "cuEventRecord");
    check(cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms);
  }
  cuEventDestroy(start);
  cuEventDestroy(stop);
  return median(times);
}

// Fills `b` with random values and gives it a device copy. In place: a Halide::Runtime::Buffer
// returned by value loses its device allocation.
void randomOnDevice(Halide::Runtime::Buffer<float> &b, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  b.for_each_value([&](float &v) { v = uniform(random); });
  b.set_host_dirty();
  check(b.copy_to_device(halide_cuda_device_interface()), "copy_to_device");
  if (!b.raw_buffer()->device)
    throw std::runtime_error("copy_to_device left the buffer without device memory");
}

std::string blur(bool shared, int reps) {
  const int w = 8192, h = 8192;
  Halide::Runtime::Buffer<float> in(w + 2, h + 2);
  in.set_min({-1, -1}); // before the device copy: Halide drops a buffer's device memory when its min moves
  randomOnDevice(in, 7);
  Halide::Runtime::Buffer<float> out(w, h);
  check(out.device_malloc(halide_cuda_device_interface()), "device_malloc");
  auto run = [&] { check((shared ? halide_blur_shared : halide_blur_inline)(in, out), "blur"); };
  uint64_t inDevice = in.raw_buffer()->device, outDevice = out.raw_buffer()->device;
  double ms = timeOnStream(3, reps, run);
  if (in.raw_buffer()->device != inDevice || out.raw_buffer()->device != outDevice)
    throw std::runtime_error("blur: the buffers' device memory changed while timed (in " + std::to_string(inDevice) +
                             " -> " + std::to_string(in.raw_buffer()->device) + ", out " + std::to_string(outDevice) +
                             " -> " + std::to_string(out.raw_buffer()->device) + ")");
  check(out.copy_to_host(), "copy_to_host");
  // Every pixel against a plain C++ reference: how many differ, and where the worst one is.
  double maxError = 0;
  long wrong = 0;
  int worstX = -1, worstY = -1;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      float s = 0;
      for (int dy = -1; dy <= 1; ++dy)
        s += (in(i - 1, j + dy) + in(i, j + dy) + in(i + 1, j + dy)) / 3.0f;
      double error = std::fabs(s / 3.0f - out(i, j));
      wrong += error > 1e-5;
      if (error > maxError) {
        maxError = error;
        worstX = i;
        worstY = j;
      }
    }
  double tbs = (double(w + 2) * (h + 2) + double(w) * h) * 4 / (ms * 1e-3) / 1e12;
  return "{\"ms\": " + bench::json_number(ms) + ", \"tb_per_s\": " + bench::json_number(tbs) +
         ", \"max_abs_error\": " + bench::json_number(maxError) + ", \"wrong_pixels\": " + std::to_string(wrong) +
         ", \"worst_pixel\": [" + std::to_string(worstX) + ", " + std::to_string(worstY) + "]}";
}

double oneKernelRealizeUs(int calls) {
  Halide::Runtime::Buffer<float> x(256);
  randomOnDevice(x, 3);
  Halide::Runtime::Buffer<float> out(256);
  check(out.device_malloc(halide_cuda_device_interface()), "device_malloc");
  check(halide_twice(x, out), "twice");
  check(cuStreamSynchronize(Stream), "cuStreamSynchronize");
  std::vector<double> us;
  for (int b = 0; b < 7; ++b) {
    auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)
      halide_twice(x, out);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
    check(cuStreamSynchronize(Stream), "cuStreamSynchronize");
  }
  check(out.copy_to_host(), "copy_to_host");
  for (int i = 0; i < 256; ++i)
    if (out(i) != x(i) * 2.0f)
      throw std::runtime_error("twice: wrong result at " + std::to_string(i));
  return median(us);
}

} // namespace

int main(int argc, char **argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    // Halide's runtime asks for "libcuda.so", a name only CUDA's development files give; a
    // driver installs libcuda.so.1.
    halide_set_custom_load_library([](const char *name) -> void * {
      return dlopen(std::strstr(name, "libcuda.so") ? "libcuda.so.1" : name, RTLD_LAZY | RTLD_GLOBAL);
    });
    check(cuInit(0), "cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&Context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxPushCurrent(Context), "cuCtxPushCurrent");
    check(cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    halide_set_cuda_acquire_context([](void *, void **out, bool) {
      *out = Context;
      return 0;
    });
    halide_set_cuda_release_context([](void *) { return 0; });
    halide_set_cuda_get_stream([](void *, void *, void **out) {
      *out = Stream;
      return 0;
    });
    const int reps = quick ? 5 : 20;
    std::string inlineBlur = blur(false, reps), sharedBlur = blur(true, reps);
    double oneKernel = oneKernelRealizeUs(quick ? 2000 : 10000);
    std::printf("{\"target\": \"x86-64-linux-cuda-cuda_capability_80\", \"blur_8192_inline\": %s, "
                "\"blur_8192_shared\": %s, \"one_kernel_realize_us\": %s}\n",
                inlineBlur.c_str(), sharedBlur.c_str(), bench::json_number(oneKernel).c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "halide_gpu_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
