// Interop with the CUDA runtime API (what PyTorch and cuBLAS use): buffers from cudaMalloc,
// a stream from cudaStreamCreate, and the device's primary context, which cudart and ptxjit's
// built-in acquire_context share. ptxjit computes a blur on that stream, in place on the
// cudart buffers, and the program checks it against plain C++.

#include "ptxjit.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace ptxjit;

namespace {

#define CHECK_CUDART(call)                                                                         \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "interop: %s failed: %s\n", #call, cudaGetErrorString(e_));             \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

// Hands realize the application's stream; the context stays the built-in (primary) one.
struct AppContext : JITUserContext {
  cudaStream_t Stream = nullptr;
  AppContext() {
    handlers.get_stream = [](JITUserContext *u, CUcontext, CUstream *out) {
      *out = static_cast<AppContext *>(u)->Stream;
      return 0;
    };
  }
};

} // namespace

int main() {
  std::string why;
  if (!host_supports_target_device(Target("host-cuda"), &why)) {
    std::printf("interop: no GPU here (%s)\n", why.c_str());
    return 0;
  }
  const int w = 1920, h = 1080;
  CHECK_CUDART(cudaSetDevice(0));
  AppContext app;
  CHECK_CUDART(cudaStreamCreateWithFlags(&app.Stream, cudaStreamNonBlocking));

  Buffer<float> input(w + 2, h + 2), output(w, h);
  input.set_min({-1, -1});
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  input.for_each_element([&](const std::vector<int> &c) { input.at(c) = dist(rng); });
  void *inDevice = nullptr, *outDevice = nullptr;
  CHECK_CUDART(cudaMalloc(&inDevice, input.number_of_elements() * sizeof(float)));
  CHECK_CUDART(cudaMalloc(&outDevice, output.number_of_elements() * sizeof(float)));
  CHECK_CUDART(cudaMemcpyAsync(inDevice, input.data(), input.number_of_elements() * sizeof(float),
                               cudaMemcpyHostToDevice, app.Stream));
  input.set_device(reinterpret_cast<uint64_t>(inDevice));
  output.set_device(reinterpret_cast<uint64_t>(outDevice));

  ImageParam in(Float(32), 2, "in");
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func bx("blur_x"), by("blur_y");
  bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
  by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
  by.gpu_tile(x, y, xi, yi, 32, 8);
  in.set(input);
  Pipeline pipeline(by);
  try {
    pipeline.compile_jit(Target("host-cuda"));
    pipeline.realize(&app, output); // enqueued on app.Stream, after the upload
  } catch (const std::exception &e) {
    std::fprintf(stderr, "interop: %s\n", e.what());
    return 1;
  }
  CHECK_CUDART(cudaMemcpyAsync(output.data(), outDevice, output.number_of_elements() * sizeof(float),
                               cudaMemcpyDeviceToHost, app.Stream));
  CHECK_CUDART(cudaStreamSynchronize(app.Stream));

  double maxError = 0;
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      float s = 0;
      for (int dy = -1; dy <= 1; ++dy)
        s += (input(i - 1, j + dy) + input(i, j + dy) + input(i + 1, j + dy)) / 3.0f;
      maxError = std::max(maxError, double(std::fabs(s / 3.0f - output(i, j))));
    }
  std::printf("interop: blur %dx%d on a cudaStreamCreate stream and cudaMalloc buffers, max |error| %.2g: %s\n", w, h,
              maxError, maxError < 1e-5 ? "OK" : "WRONG");
  cudaFree(inDevice);
  cudaFree(outDevice);
  cudaStreamDestroy(app.Stream);
  return maxError < 1e-5 ? 0 : 1;
}
