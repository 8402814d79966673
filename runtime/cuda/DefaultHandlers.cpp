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
} // namespace

int choose_device(int requested) {
  if (requested >= 0)
    return requested;
  const char *env = std::getenv("PTXJIT_DEVICE");
  return env && *env ? std::atoi(env) : 0;
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
