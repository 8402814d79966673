#include "GpuTiming.h"

#include "Json.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace ptxjit;
namespace cu = ptxjit::runtime::cuda;

namespace bench {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

BenchContext::BenchContext() {
  handlers.acquire_context = [](JITUserContext *u, CUcontext *out, bool) {
    *out = static_cast<BenchContext *>(u)->Context;
    return 0;
  };
  handlers.release_context = [](JITUserContext *) { return 0; };
  handlers.get_stream = [](JITUserContext *u, CUcontext, CUstream *out) {
    *out = static_cast<BenchContext *>(u)->Stream;
    return 0;
  };
}

double time_on_stream(CUstream stream, int warmup, int reps, const std::function<void()> &work) {
  CUevent start, stop;
  CHECK_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  for (int i = 0; i < warmup; ++i)
    work();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    CHECK_CU(cuEventRecord(start, stream));
    work();
    CHECK_CU(cuEventRecord(stop, stream));
    CHECK_CU(cuEventSynchronize(stop));
    float ms = 0;
    CHECK_CU(cuEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  cu::driver().cuEventDestroy(start);
  cu::driver().cuEventDestroy(stop);
  return median(times);
}

DeviceBuffer::DeviceBuffer(size_t bytes) { CHECK_CU(cuMemAlloc(&Pointer, bytes)); }
DeviceBuffer::~DeviceBuffer() { cu::driver().cuMemFree(Pointer); }

Buffer<float> random_image(const std::vector<int> &sizes, DeviceBuffer &device, CUstream stream, uint32_t seed) {
  Buffer<float> b(sizes);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < b.number_of_elements(); ++i)
    b.data()[i] = dist(rng);
  CHECK_CU(cuMemcpyHtoDAsync(device.Pointer, b.data(), b.number_of_elements() * sizeof(float), stream));
  CHECK_CU(cuStreamSynchronize(stream)); // the host data is pageable and may change after return
  b.set_device(device.Pointer);
  return b;
}

double blur_max_error(const std::function<float(int, int)> &in, const Buffer<float> &out) {
  double maxError = 0;
  for (int j = 0; j < out.height(); j += 97)
    for (int i = 0; i < out.width(); i += 89) {
      float s = 0;
      for (int dy = -1; dy <= 1; ++dy)
        s += (in(i - 1, j + dy) + in(i, j + dy) + in(i + 1, j + dy)) / 3.0f;
      maxError = std::max(maxError, double(std::fabs(s / 3.0f - out(i, j))));
    }
  return maxError;
}

std::string kernel_resources(const std::string &ptx) {
  CUmodule module;
  CHECK_CU(cuModuleLoadData(&module, ptx.c_str()));
  std::string rows;
  const std::string entry = ".entry ";
  for (size_t at = ptx.find(entry); at != std::string::npos; at = ptx.find(entry, at + 1)) {
    size_t begin = at + entry.size(), end = ptx.find_first_of("( \n", begin);
    std::string name = ptx.substr(begin, end - begin);
    CUfunction f;
    int registers = 0, local = 0, shared = 0;
    if (cu::driver().cuModuleGetFunction(&f, module, name.c_str()) != CUDA_SUCCESS)
      continue;
    cu::driver().cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    cu::driver().cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    cu::driver().cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    rows += std::string(rows.empty() ? "" : ", ") + "{\"kernel\": " + json_string(name) +
            ", \"registers\": " + std::to_string(registers) + ", \"local_bytes\": " + std::to_string(local) +
            ", \"static_shared_bytes\": " + std::to_string(shared) + "}";
  }
  cu::driver().cuModuleUnload(module);
  return "[" + rows + "]";
}

} // namespace bench
