#include "ptxjit/DeviceBuffers.h"

#include "Handlers.h"
#include "cuda/BufferStaging.h"
#include "cuda/CudaDriver.h"
#include "cuda/DevicePools.h"
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
    work(call, scoped);
  } catch (const RuntimeError &e) {
    std::string first = call.first_error();
    throw RuntimeError(what + ": " + (first.empty() ? e.what() : first));
  }
}

using DeviceFree = int (*)(JITUserContext *, CUcontext, CUstream, CUdeviceptr);

// Frees a Buffer's device memory once the context it came from has finished its work: through
// the device_free handler it was allocated with (`free`), else to the built-in buffer pool. The
// last Buffer holding it may go in a destructor, so no call's JITUserContext or stream is
// around: the handler gets none, and the context's legacy stream.
std::shared_ptr<void> bufferMemoryOwner(CUdeviceptr pointer, CUcontext context, DeviceFree free) {
  return std::shared_ptr<void>(reinterpret_cast<void *>(pointer), [context, free](void *p) {
    const cu::DriverApi &api = cu::driver();
    if (api.cuCtxPushCurrent(context) != CUDA_SUCCESS)
      return; // the context is gone, and its memory with it
    CUresult synced = api.cuCtxSynchronize();
    CUdeviceptr address = reinterpret_cast<CUdeviceptr>(p);
    int r = synced != CUDA_SUCCESS ? int(synced)
            : free                 ? free(nullptr, context, nullptr, address)
                                   : cu::pool_free(cu::PoolKind::Buffer, nullptr, address);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_CONTEXT_IS_DESTROYED && r != CUDA_ERROR_INVALID_CONTEXT)
      std::fprintf(stderr, "ptxjit: freeing a Buffer's device memory failed: %s\n",
                   r > 0 ? cu::describe(CUresult(r)).c_str() : std::to_string(r).c_str());
    CUcontext popped;
    api.cuCtxPopCurrent(&popped);
  });
}

} // namespace

void copy_to_device(RawBuffer &buffer, JITUserContext *context) {
  withContext(context, "copy_to_device", [&](jit::RealizeCall &call, cu::ScopedContext &scoped) {
    ptxjit_buffer_t raw = buffer.descriptor();
    size_t bytes = cu::buffer_span_bytes(raw);
    if (!buffer.device()) {
      CUdeviceptr pointer = 0;
      size_t request = bytes ? bytes : 1;
      int r = call.Handlers.device_malloc
                  ? call.Handlers.device_malloc(call.User, scoped.context(), scoped.stream(), request, &pointer)
                  : cu::pool_malloc(cu::PoolKind::Buffer, scoped.stream(), request, &pointer);
      if (r != 0) {
        CUdevice device = -1;
        cu::driver().cuCtxGetDevice(&device);
        throw RuntimeError(cu::describe_allocation_failure(
            r, request, "a Buffer on device " + std::to_string(device) +
                            (call.Handlers.device_malloc ? " (device_malloc)" : "")));
      }
      buffer.set_owned_device(pointer, bufferMemoryOwner(pointer, scoped.context(), call.Handlers.device_free));
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
  withContext(context, "copy_to_host", [&](jit::RealizeCall &, cu::ScopedContext &scoped) {
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
              [&](jit::RealizeCall &, cu::ScopedContext &scoped) { PTXJIT_CUDA_CALL(cuStreamSynchronize(scoped.stream()), "device_sync"); });
}

void device_free(RawBuffer &buffer, JITUserContext *context) {
  if (!buffer.owns_device())
    return;
  device_sync(context);
  buffer.set_device(0);
}

} // namespace ptxjit
