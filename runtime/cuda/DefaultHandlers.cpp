#include "DefaultHandlers.h"

#include "CudaDriver.h"
#include "DevicePools.h"

#include <cstdlib>
#include <map>
#include <mutex>

namespace ptxjit::runtime::cuda {

namespace {
std::mutex PrimaryMutex;                       // guards Primary
std::map<int, CUcontext> Primary;              // retained primary contexts by device ordinal
/// The number of CUDA devices, asked once: it does not change while a process runs.
int device_count(const DriverApi &api) {
  static const int count = [&api] {
    int n = 0;
    return api.cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
  }();
  return count;
}

} // namespace

int choose_device(int requested, CUdeviceptr buffer) {
  if (requested >= 0)
    return requested;
  if (const DriverApi *api = try_driver(nullptr); api && device_count(*api) > 1) {
    int ordinal = -1;
    if (buffer && api->cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, buffer) == CUDA_SUCCESS &&
        ordinal >= 0)
      return ordinal;
    CUcontext current = nullptr;
    CUdevice device = 0;
    if (api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current && api->cuCtxGetDevice(&device) == CUDA_SUCCESS)
      return static_cast<int>(device);
  }
  for (const char *variable : {"PTXJIT_DEVICE", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *value = std::getenv(variable); value && *value)
      return std::atoi(value);
  return 0;
}

int likely_device_capability() {
  const DriverApi *api = initialized_driver();
  return api ? device_capability(*api, choose_device(-1, 0)) : 0;
}

int default_acquire_context(int device, CUcontext *out, bool create, std::string *why) {
  std::string loadError;
  const DriverApi *api = try_driver(&loadError);
  if (!api) {
    *why = loadError;
    return -1;
  }
  std::lock_guard<std::mutex> lock(PrimaryMutex);
  if (auto it = Primary.find(device); it != Primary.end()) {
    *out = it->second;
    return 0;
  }
  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != CUDA_SUCCESS || device < 0 || device >= count) {
    *why = "no CUDA device " + std::to_string(device) + " (this machine has " + std::to_string(count) + ")";
    return r != CUDA_SUCCESS ? r : -1;
  }
  CUdevice handle = 0;
  if (CUresult r = api->cuDeviceGet(&handle, device); r != CUDA_SUCCESS) {
    *why = "cuDeviceGet(" + std::to_string(device) + ") failed with " + describe(r);
    return r;
  }
  if (!create) {
    unsigned flags = 0;
    int active = 0;
    api->cuDevicePrimaryCtxGetState(handle, &flags, &active);
    if (!active) {
      *why = "the primary context of device " + std::to_string(device) + " is not active and creation was not allowed";
      return -1;
    }
  }
  CUcontext context = nullptr;
  if (CUresult r = api->cuDevicePrimaryCtxRetain(&context, handle); r != CUDA_SUCCESS) {
    *why = "cuDevicePrimaryCtxRetain(device " + std::to_string(device) + ") failed with " + describe(r);
    return r;
  }
  Primary[device] = context;
  *out = context;
  return 0;
}

int default_release_context() { return 0; }

int default_get_stream(CUcontext, CUstream *out) {
  *out = nullptr;
  return 0;
}

int default_device_malloc(CUcontext, CUstream stream, size_t bytes, CUdeviceptr *out) {
  return pool_malloc(PoolKind::Transient, stream, bytes, out);
}

int default_device_free(CUcontext, CUstream stream, CUdeviceptr pointer) { return pool_free(PoolKind::Transient, stream, pointer); }

} // namespace ptxjit::runtime::cuda
