#include "RuntimeInterface.h"

#include "BufferStaging.h"
#include "CudaDriver.h"
#include "DeviceCode.h"
#include "GraphRecording.h"
#include "ReportError.h"
#include "Session.h"
#include "ptxjit/RuntimeError.h"

namespace {

using namespace ptxjit::runtime;
using namespace ptxjit::runtime::cuda;

std::string launchShape(int32_t gx, int32_t gy, int32_t gz, int32_t bx, int32_t by, int32_t bz) {
  return "grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" + std::to_string(gz) + ", block " +
         std::to_string(bx) + "x" + std::to_string(by) + "x" + std::to_string(bz);
}

} // namespace

extern "C" {

int32_t ptxjit_cuda_launch(void *context, void *device_code, int32_t kernel, int32_t grid_x, int32_t grid_y,
                           int32_t grid_z, int32_t block_x, int32_t block_y, int32_t block_z, int32_t shared_bytes,
                           void **args, int32_t synchronize) {
  auto *call = static_cast<ptxjit_call_context *>(context);
  auto *code = static_cast<DeviceCode *>(device_code);
  try {
    if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0)
      return 0; // nothing to compute
    SessionUse use(call);
    GraphRecording *recording = use.session().recording();
    if (recording && (synchronize || !use.session().on_opening_thread())) {
      recording->diverge(GraphRecording::Divergence::NotGraphable);
      return -1; // the realize runs again on the stream
    }
    CUfunction f = code->function(use.context(), kernel, shared_bytes);
    if (recording) {
      const uint32_t grid[3] = {uint32_t(grid_x), uint32_t(grid_y), uint32_t(grid_z)};
      const uint32_t block[3] = {uint32_t(block_x), uint32_t(block_y), uint32_t(block_z)};
      return recording->launch(kernel, f, grid, block, uint32_t(shared_bytes), args) ? 0 : -1;
    }
    const DriverApi &api = driver();
    CUresult r = api.cuLaunchKernel(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes, use.stream(),
                                    args, nullptr);
    if (r != CUDA_SUCCESS) {
      std::string limits;
      CUdevice device;
      int maxThreads = 0;
      if (api.cuCtxGetDevice(&device) == CUDA_SUCCESS &&
          api.cuDeviceGetAttribute(&maxThreads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device) == CUDA_SUCCESS &&
          int64_t(block_x) * block_y * block_z > maxThreads)
        limits = "; the block has " + std::to_string(int64_t(block_x) * block_y * block_z) +
                 " threads and the device allows at most " + std::to_string(maxThreads);
      fail("cuLaunchKernel", r,
           "kernel " + code->kernel_name(kernel) + " (" + launchShape(grid_x, grid_y, grid_z, block_x, block_y, block_z) +
               ", " + std::to_string(shared_bytes) + " bytes of shared memory)" + limits);
    }
    if (synchronize) {
      r = api.cuStreamSynchronize(use.stream());
      if (r != CUDA_SUCCESS)
        fail("cuStreamSynchronize", r,
             "kernel " + code->kernel_name(kernel) + " (" + launchShape(grid_x, grid_y, grid_z, block_x, block_y, block_z) +
                 ") failed (debug: the stream is synchronized after each launch)");
    }
    return 0;
  } catch (const std::exception &e) {
    report_error(context, e.what());
    return -1;
  }
}

void *ptxjit_cuda_malloc(void *context, uint64_t bytes, const char *what) {
  auto *call = static_cast<ptxjit_call_context *>(context);
  try {
    SessionUse use(call);
    if (GraphRecording *recording = use.session().recording()) {
      if (!use.session().on_opening_thread()) {
        recording->diverge(GraphRecording::Divergence::NotGraphable);
        return nullptr;
      }
      return reinterpret_cast<void *>(recording->allocate(bytes)); // null once diverged
    }
    CUdeviceptr pointer = 0;
    int r = call->device_malloc(call->user_context, use.context(), use.stream(), bytes, &pointer);
    if (r != 0 || !pointer) {
      CUdevice device = -1;
      driver().cuCtxGetDevice(&device);
      report_error(context, describe_allocation_failure(r, bytes, std::string(what) + " on device " +
                                                                       std::to_string(device) + " (device_malloc)"));
      return nullptr;
    }
    return reinterpret_cast<void *>(pointer);
  } catch (const std::exception &e) {
    report_error(context, e.what());
    return nullptr;
  }
}

void ptxjit_cuda_free(void *context, void *pointer) {
  auto *call = static_cast<ptxjit_call_context *>(context);
  try {
    SessionUse use(call);
    if (GraphRecording *recording = use.session().recording()) {
      if (!use.session().on_opening_thread())
        recording->diverge(GraphRecording::Divergence::NotGraphable);
      else
        recording->free(reinterpret_cast<CUdeviceptr>(pointer));
      return;
    }
    if (int r = call->device_free(call->user_context, use.context(), use.stream(),
                                  reinterpret_cast<CUdeviceptr>(pointer));
        r != 0)
      report_error(context, "device_free failed with " + (r > 0 ? describe(static_cast<CUresult>(r)) : std::to_string(r)));
  } catch (const std::exception &e) {
    report_error(context, e.what());
  }
}

int32_t ptxjit_cuda_copy_to_device(void *context, ptxjit_buffer_t *buffer, const char *name) {
  if (!(buffer->flags & ptxjit_buffer_host_dirty))
    return 0;
  auto *call = static_cast<ptxjit_call_context *>(context);
  try {
    if (!buffer->device)
      throw ptxjit::RuntimeError(std::string("buffer ") + name + " is read on the GPU but has no device memory");
    SessionUse use(call);
    if (GraphRecording *recording = use.session().recording()) {
      recording->diverge(GraphRecording::Divergence::NotGraphable);
      return -1;
    }
    if (size_t bytes = buffer_span_bytes(*buffer))
      PTXJIT_CUDA_CALL(cuMemcpyHtoDAsync(buffer->device, buffer->host, bytes, use.stream()),
                       std::string("the copy of buffer ") + name + " to the device");
    buffer->flags &= ~uint64_t(ptxjit_buffer_host_dirty);
    return 0;
  } catch (const std::exception &e) {
    report_error(context, e.what());
    return -1;
  }
}

int32_t ptxjit_cuda_copy_to_host(void *context, ptxjit_buffer_t *buffer, const char *name) {
  if (!(buffer->flags & ptxjit_buffer_device_dirty))
    return 0;
  auto *call = static_cast<ptxjit_call_context *>(context);
  try {
    if (!buffer->host)
      throw ptxjit::RuntimeError(std::string("buffer ") + name + " is used on the host but has no host memory");
    SessionUse use(call);
    if (GraphRecording *recording = use.session().recording()) {
      recording->diverge(GraphRecording::Divergence::NotGraphable);
      return -1;
    }
    if (size_t bytes = buffer_span_bytes(*buffer))
      PTXJIT_CUDA_CALL(cuMemcpyDtoHAsync(buffer->host, buffer->device, bytes, use.stream()),
                       std::string("the copy of buffer ") + name + " to the host");
    PTXJIT_CUDA_CALL(cuStreamSynchronize(use.stream()), std::string("the kernels that wrote buffer ") + name);
    buffer->flags &= ~uint64_t(ptxjit_buffer_device_dirty);
    return 0;
  } catch (const std::exception &e) {
    report_error(context, e.what());
    return -1;
  }
}

} // extern "C"
