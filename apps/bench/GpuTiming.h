#ifndef PTXJIT_APPS_BENCH_GPUTIMING_H
#define PTXJIT_APPS_BENCH_GPUTIMING_H

// What the GPU benchmarks share: the bench's context and stream, timing by events, device
// memory of their own, random inputs, and what the driver's PTX compiler gave each kernel.

#include "cuda/CudaDriver.h"
#include "ptxjit.h"

#include <functional>
#include <string>
#include <vector>

namespace bench {

#define CHECK_CU(call)                                                                             \
  do {                                                                                             \
    CUresult r_ = ::ptxjit::runtime::cuda::driver().call;                                          \
    if (r_ != CUDA_SUCCESS)                                                                        \
      throw ::ptxjit::RuntimeError(std::string(#call) + " failed: " + ::ptxjit::runtime::cuda::describe(r_)); \
  } while (0)

double median(std::vector<double> v);

/// The bench's own context (the device's primary one) and stream, handed to realize.
struct BenchContext : ptxjit::JITUserContext {
  CUcontext Context = nullptr;
  CUstream Stream = nullptr;
  BenchContext();
};

/// Milliseconds of `work` on the stream, by events; median of `reps` after `warmup`.
double time_on_stream(CUstream stream, int warmup, int reps, const std::function<void()> &work);

struct DeviceBuffer {
  CUdeviceptr Pointer = 0;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

/// A random float image in [-1, 1] on the host, copied to `device` and set as its device copy.
ptxjit::Buffer<float> random_image(const std::vector<int> &sizes, DeviceBuffer &device, CUstream stream,
                                   uint32_t seed);

/// The largest difference between `out` and the 3x3 blur of `in` (in(x, y) the input at output
/// coordinates, x and y from -1), on a sample of points.
double blur_max_error(const std::function<float(int, int)> &in, const ptxjit::Buffer<float> &out);

/// What the driver's PTX compiler gave each kernel of `ptx` on the current context's device, as
/// a JSON array: registers per thread, local memory (stack frame and spills) per thread, static
/// shared memory per block.
std::string kernel_resources(const std::string &ptx);

} // namespace bench

#endif
