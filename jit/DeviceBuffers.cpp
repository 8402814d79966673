#include "ptxjit/DeviceBuffers.h"

#include "Handlers.h"
#include "cuda/BufferStaging.h"
#include "cuda/CudaDriver.h"
#include "cuda/ScopedContext.h"
#include "ptxjit/RuntimeError.h"

#include <cstdio>

namespace ptxjit {

namespace {

namespace cu = runtime::cuda;

// Runs `work` with the call's context current and its stream; errors name the buffer.
template <typename Work> void withContext(JITUserContext *context, const std::string &what, Work work) {
  jit::RealizeCall call(context, JITHandlers{});
  try {
    cu::ScopedContext scoped(&call.Runtime);
    work(scoped);
  } catch (const RuntimeError &e) {
    std::string first = call.first_error();
    throw RuntimeError(what + ": " + (first.empty() ? e.what() : first));
  }
}

// Frees a persistent allocation in the context it came from, after work queued there.
std::shared_ptr<void> persistentOwner(CUdeviceptr pointer, CUcontext context) {
  return std::shared_ptr<void>(reinterpret_cast<void *>(pointer), [context](void *p) {
    const cu::DriverApi &api = cu::driver();
    if (api.cuCtxPushCurrent(context) != CUDA_SUCCESS)
      return; // the context is gone, and its memory with it
    api.cuCtxSynchronize();
    CUresult r = api.cuMemFree(reinterpret_cast<CUdeviceptr>(p));
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_CONTEXT_IS_DESTROYED && r != CUDA_ERROR_INVALID_CONTEXT)
      std::fprintf(stderr, "ptxjit: freeing a Buffer's device memory failed: %s\n", cu::describe(r).c_str());
    CUcontext popped;
    api.cuCtxPopCurrent(&popped);
  });
}

} // namespace

void copy_to_device(RawBuffer &buffer, JITUserContext *context) {
  withContext(context, "copy_to_device", [&](cu::ScopedContext &scoped) {
    ptxjit_buffer_t raw = buffer.descriptor();
    size_t bytes = cu::buffer_span_bytes(raw);
    if (!buffer.device()) {
      CUdeviceptr pointer = 0;
      PTXJIT_CUDA_CALL(cuMemAlloc(&pointer, bytes ? bytes : 1), "a Buffer of " + std::to_string(bytes) + " bytes");
      buffer.set_owned_device(pointer, persistentOwner(pointer, scoped.context()));
    }
    if (bytes && buffer.host_bytes())
      PTXJIT_CUDA_CALL(cuMemcpyHtoDAsync(buffer.device(), buffer.host_bytes(), bytes, scoped.stream()),
                       "a Buffer of " + std::to_string(bytes) + " bytes");
    buffer.set_host_dirty(false);
  });
}

void copy_to_host(RawBuffer &buffer, JITUserContext *context) {
  if (!buffer.device_dirty())
    return;
  if (!buffer.host_bytes())
    throw RuntimeError("copy_to_host: the buffer is a device-only view and has no host memory");
  withContext(context, "copy_to_host", [&](cu::ScopedContext &scoped) {
    ptxjit_buffer_t raw = buffer.descriptor();
    size_t bytes = cu::buffer_span_bytes(raw);
    if (bytes)
      PTXJIT_CUDA_CALL(cuMemcpyDtoHAsync(buffer.host_bytes(), buffer.device(), bytes, scoped.stream()),
                       "a Buffer of " + std::to_string(bytes) + " bytes");
    PTXJIT_CUDA_CALL(cuStreamSynchronize(scoped.stream()), "copy_to_host");
    buffer.set_device_dirty(false);
  });
}

void device_sync(JITUserContext *context) {
  withContext(context, "device_sync",
              [&](cu::ScopedContext &scoped) { PTXJIT_CUDA_CALL(cuStreamSynchronize(scoped.stream()), "device_sync"); });
}

void device_free(RawBuffer &buffer, JITUserContext *context) {
  if (!buffer.owns_device())
    return;
  device_sync(context);
  buffer.set_device(0);
}

} // namespace ptxjit
