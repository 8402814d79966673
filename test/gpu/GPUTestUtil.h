#ifndef PTXJIT_TEST_GPU_GPUTESTUTIL_H
#define PTXJIT_TEST_GPU_GPUTESTUTIL_H

// What the [gpu] tests share: skipping without a device, a user context that counts handler
// calls, a context of the user's own, and a blur with its reference.

#include "TestUtil.h"
#include "cuda/CudaDriver.h"
#include "cuda/DevicePools.h"
#include "ptxjit.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#define PTXJIT_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    std::string why_;                                                                              \
    if (!host_supports_target_device(Target("host-cuda"), &why_)) {                                \
      WARN("[gpu] test skipped: " << why_);                                                        \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

#define CU_CHECK(call) REQUIRE(cu::driver().call == CUDA_SUCCESS)

namespace ptxjit::test {

namespace cu = ptxjit::runtime::cuda;

// Makes device 0's first pool allocations and waits for them, for tests of what the pools
// themselves do: until then a process's allocations are bridged through cuMemAlloc.
inline void warmDevicePools() {
  CUdevice d;
  CUcontext primary;
  REQUIRE(cu::driver().cuDeviceGet(&d, 0) == CUDA_SUCCESS);
  REQUIRE(cu::driver().cuDevicePrimaryCtxRetain(&primary, d) == CUDA_SUCCESS);
  REQUIRE(cu::driver().cuCtxPushCurrent(primary) == CUDA_SUCCESS);
  cu::warm_pools(0);
  CUcontext popped;
  cu::driver().cuCtxPopCurrent(&popped);
  cu::driver().cuDevicePrimaryCtxRelease(d);
}

inline int deviceCount() {
  int n = 0;
  cu::driver().cuDeviceGetCount(&n);
  return n;
}

inline bool primaryContextActive(int ordinal) {
  CUdevice device;
  unsigned flags = 0;
  int active = 0;
  cu::driver().cuDeviceGet(&device, ordinal);
  cu::driver().cuDevicePrimaryCtxGetState(device, &flags, &active);
  return active != 0;
}

inline bool anyPrimaryContextActive() {
  for (int d = 0; d < deviceCount(); ++d)
    if (primaryContextActive(d))
      return true;
  return false;
}

// Frees of Buffer-owned memory reach device_free without a JITUserContext.
inline std::atomic<int> FreesWithoutUserContext{0};

// A user context carrying its own CUDA context and stream, and counting handler calls.
struct CountingContext : JITUserContext {
  CUcontext Context = nullptr;
  CUstream Stream = nullptr;
  std::atomic<int> Acquires{0}, Releases{0}, StreamCalls{0}, Mallocs{0}, Frees{0};
  std::mutex ThreadsMutex;
  std::set<std::thread::id> Threads;
  bool FailMalloc = false;
  CUresult MallocError = CUDA_ERROR_OUT_OF_MEMORY;

  CountingContext() {
    handlers.acquire_context = [](JITUserContext *u, CUcontext *out, bool) {
      auto *c = static_cast<CountingContext *>(u);
      ++c->Acquires;
      std::lock_guard<std::mutex> lock(c->ThreadsMutex);
      c->Threads.insert(std::this_thread::get_id());
      *out = c->Context;
      return 0;
    };
    handlers.release_context = [](JITUserContext *u) {
      ++static_cast<CountingContext *>(u)->Releases;
      return 0;
    };
    handlers.get_stream = [](JITUserContext *u, CUcontext, CUstream *out) {
      auto *c = static_cast<CountingContext *>(u);
      ++c->StreamCalls;
      *out = c->Stream;
      return 0;
    };
    handlers.device_malloc = [](JITUserContext *u, CUcontext, CUstream stream, size_t bytes, CUdeviceptr *out) {
      auto *c = static_cast<CountingContext *>(u);
      ++c->Mallocs;
      if (c->FailMalloc)
        return int(c->MallocError);
      return int(cu::driver().cuMemAllocAsync(out, bytes, stream));
    };
    handlers.device_free = [](JITUserContext *u, CUcontext, CUstream stream, CUdeviceptr p) {
      ++(u ? static_cast<CountingContext *>(u)->Frees : FreesWithoutUserContext);
      return int(cu::driver().cuMemFreeAsync(p, stream));
    };
  }
};

// A context of the user's own (not the primary one) and a stream in it; destroyed at scope exit.
struct OwnContext {
  CUcontext Context = nullptr;
  CUstream Stream = nullptr;
  explicit OwnContext(int device) {
    CUdevice d;
    CU_CHECK(cuDeviceGet(&d, device));
    CU_CHECK(cuCtxCreate(&Context, nullptr, 0, d));
    CU_CHECK(cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING));
    CUcontext popped;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  ~OwnContext() {
    JIT::forget_context(Context);
    cu::driver().cuCtxPushCurrent(Context);
    cu::driver().cuStreamDestroy(Stream);
    CUcontext popped;
    cu::driver().cuCtxPopCurrent(&popped);
    cu::driver().cuCtxDestroy(Context);
  }
};

// A pipeline compiled for the GPU the call's context is on.
inline Pipeline onGPU(const Func &f, const Target &target = Target("host-cuda")) {
  Pipeline p(f);
  p.compile_jit(target);
  return p;
}

struct Blur {
  ImageParam in{Float(32), 2, "in"};
  Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
  Func bx{"blur_x"}, by{"blur_y"};
  explicit Blur(TailStrategy tail = TailStrategy::Auto) {
    bx(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
    by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 9.0f;
    by.gpu_tile(x, y, xi, yi, 32, 8, tail);
  }
  Buffer<float> input(int w, int h, uint32_t seed) {
    Buffer<float> b(w + 2, h + 2);
    b.set_min({-1, -1});
    fill_random(b, seed);
    in.set(b);
    return b;
  }
  static float reference(const Buffer<float> &b, int i, int j) {
    float s = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        s += b(i + dx, j + dy);
    return s / 9.0f;
  }
};

} // namespace ptxjit::test

#endif
