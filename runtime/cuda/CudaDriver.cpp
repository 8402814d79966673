#include "CudaDriver.h"

#include "ptxjit/RuntimeError.h"

#include <dlfcn.h>
#include <mutex>

namespace ptxjit::runtime::cuda {

namespace {

struct Loaded {
  DriverApi Api;
  std::string Error; // empty when loaded
};

Loaded load() {
  Loaded l;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    l.Error = std::string("CUDA driver not found: dlopen(libcuda.so.1) failed: ") + (why ? why : "unknown reason");
    return l;
  }
  using GetProcAddress = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  auto getProcAddress = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!getProcAddress) {
    l.Error = "CUDA driver too old: libcuda.so.1 has no cuGetProcAddress_v2 (CUDA 12 or newer is needed)";
    return l;
  }
  auto resolve = [&](const char *name, void **slot, int version) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = getProcAddress(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*slot) {
      if (l.Error.empty())
        l.Error = std::string("CUDA driver too old: it has no ") + name + " for CUDA " +
                  std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
    }
  };
#define PTXJIT_CUDA_FUNCTION(name) resolve(#name, reinterpret_cast<void **>(&l.Api.name), CUDA_VERSION);
#define PTXJIT_CUDA_FUNCTION_AT(name, version) resolve(#name, reinterpret_cast<void **>(&l.Api.name), version);
#include "CudaFunctions.def"
#undef PTXJIT_CUDA_FUNCTION
#undef PTXJIT_CUDA_FUNCTION_AT
  if (!l.Error.empty())
    return l;
  CUresult r = l.Api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    l.Api.cuGetErrorName(r, &name);
    l.Error = std::string("CUDA driver present but cuInit(0) failed: ") + (name ? name : "unknown error");
    return l;
  }
  l.Api.cuDriverGetVersion(&l.Api.version);
  return l;
}

// Loaded once; the library stays open for the life of the process.
const Loaded &loaded() {
  static const Loaded instance = load();
  return instance;
}

} // namespace

const DriverApi *try_driver(std::string *why) {
  const Loaded &l = loaded();
  if (!l.Error.empty()) {
    if (why)
      *why = l.Error;
    return nullptr;
  }
  return &l.Api;
}

const DriverApi *initialized_driver() {
  // The library already in the process (RTLD_NOLOAD), asked whether it is initialized: before
  // cuInit, cuCtxGetCurrent answers CUDA_ERROR_NOT_INITIALIZED. Once it is, loading ptxjit's table
  // of it calls cuInit again, which does nothing.
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!library)
    return nullptr;
  bool initialized = false;
  using GetProcAddress = CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  if (auto getProcAddress = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"))) {
    void *getCurrent = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (getProcAddress("cuCtxGetCurrent", &getCurrent, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) ==
            CUDA_SUCCESS &&
        status == CU_GET_PROC_ADDRESS_SUCCESS && getCurrent) {
      CUcontext current = nullptr;
      initialized = reinterpret_cast<decltype(&::cuCtxGetCurrent)>(getCurrent)(&current) != CUDA_ERROR_NOT_INITIALIZED;
    }
  }
  dlclose(library);
  return initialized ? try_driver(nullptr) : nullptr;
}

int device_capability(const DriverApi &api, int ordinal) {
  CUdevice device = 0;
  int major = 0, minor = 0;
  if (api.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) != CUDA_SUCCESS)
    return 0;
  return major * 10 + minor;
}

const DriverApi &driver() {
  std::string why;
  const DriverApi *api = try_driver(&why);
  if (!api)
    throw RuntimeError(why);
  return *api;
}

std::string describe_allocation_failure(int result, uint64_t bytes, const std::string &what) {
  const std::string code = result > 0 ? describe(static_cast<CUresult>(result)) : std::to_string(result);
  switch (result) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
    return "the context is unusable: an earlier kernel faulted (" + code + "), so allocating " +
           std::to_string(bytes) + " bytes for " + what + " failed; the process must create a new context";
  case CUDA_ERROR_OUT_OF_MEMORY:
  default:
    return "out of device memory allocating " + std::to_string(bytes) + " bytes for " + what + ": " + code;
  }
}

std::string describe(CUresult result) {
  std::string why;
  const DriverApi *api = try_driver(&why);
  const char *name = nullptr, *text = nullptr;
  if (api) {
    api->cuGetErrorName(result, &name);
    api->cuGetErrorString(result, &text);
  }
  return std::string(name ? name : "CUDA error " + std::to_string(result)) + " (" + (text ? text : "no description") + ")";
}

void fail(const char *call, CUresult result, const std::string &what) {
  throw RuntimeError(std::string(call) + " failed with " + describe(result) + (what.empty() ? "" : " for " + what));
}

} // namespace ptxjit::runtime::cuda
