#include "DeviceCode.h"

#include "CudaDriver.h"
#include "ptxjit/RuntimeError.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <mutex>
#include <set>

namespace ptxjit::runtime::cuda {

namespace {
std::mutex RegistryMutex; // guards Registry
std::set<DeviceCode *> Registry;
} // namespace

int max_ptx_version_for_driver(int driverVersion) {
  int major = driverVersion / 1000, minor = driverVersion % 1000 / 10;
  if (major >= 13)
    return 90 + minor;
  if (major == 12)
    return 80 + std::min(minor, 9);
  if (major == 11)
    return 70 + std::min(minor, 8);
  return 60;
}

DeviceCode::DeviceCode(std::string pipeline, std::vector<Kernel> kernels, PTXGenerator generator, BinaryStore binaries)
    : Pipeline(std::move(pipeline)), Kernels(std::move(kernels)), Generator(std::move(generator)),
      Binaries(std::move(binaries)) {
  std::lock_guard<std::mutex> lock(RegistryMutex);
  Registry.insert(this);
}

DeviceCode::~DeviceCode() {
  {
    std::lock_guard<std::mutex> lock(RegistryMutex);
    Registry.erase(this);
  }
  std::string why;
  const DriverApi *api = try_driver(&why);
  for (auto &[context, loaded] : Modules) {
    loaded.Graphs.reset();
    if (!api || api->cuCtxPushCurrent(context) != CUDA_SUCCESS)
      continue;
    if (CUresult r = api->cuModuleUnload(loaded.Module); r != CUDA_SUCCESS)
      std::fprintf(stderr, "ptxjit: cuModuleUnload for %s failed with %s\n", Pipeline.c_str(), describe(r).c_str());
    CUcontext popped;
    api->cuCtxPopCurrent(&popped);
  }
}

namespace {
constexpr int32_t DefaultSharedLimit = 48 * 1024; // what every kernel may use without opting in
} // namespace

CUfunction DeviceCode::function(CUcontext context, int index, int32_t sharedBytes) {
  {
    std::shared_lock<std::shared_mutex> lock(Mutex);
    if (auto it = Modules.find(context); it != Modules.end() && sharedBytes <= it->second.SharedLimits[index])
      return it->second.Functions[index];
  }
  std::unique_lock<std::shared_mutex> lock(Mutex);
  auto it = Modules.find(context);
  if (it == Modules.end())
    it = load(context);
  Loaded &loaded = it->second;
  if (sharedBytes > loaded.SharedLimits[index]) {
    if (sharedBytes > loaded.DeviceSharedLimit)
      throw RuntimeError("kernel " + Kernels[index].name + " of " + Pipeline + " needs " + std::to_string(sharedBytes) +
                         " bytes of shared memory per block; this device allows at most " +
                         std::to_string(loaded.DeviceSharedLimit) + "; use smaller tiles");
    PTXJIT_CUDA_CALL(cuFuncSetAttribute(loaded.Functions[index], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes),
                     "kernel " + Kernels[index].name + " of " + Pipeline + ", " + std::to_string(sharedBytes) +
                         " bytes of dynamic shared memory");
    loaded.SharedLimits[index] = sharedBytes;
  }
  return loaded.Functions[index];
}

std::string DeviceCode::compileToBinary(const std::string &ptx, int optimization) const {
  const DriverApi &api = driver();
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)), reinterpret_cast<void *>(static_cast<uintptr_t>(optimization))};
  CUlinkState link = nullptr;
  PTXJIT_CUDA_CALL(cuLinkCreate(3, options, values, &link), "the kernels of " + Pipeline);
  std::string binary;
  CUresult r = api.cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char *>(ptx.c_str()), ptx.size() + 1,
                                 Pipeline.c_str(), 0, nullptr, nullptr);
  const char *failed = "cuLinkAddData";
  if (r == CUDA_SUCCESS) {
    void *cubin = nullptr;
    size_t bytes = 0;
    r = api.cuLinkComplete(link, &cubin, &bytes);
    failed = "cuLinkComplete";
    if (r == CUDA_SUCCESS)
      binary.assign(static_cast<const char *>(cubin), bytes); // the link state owns cubin
  }
  api.cuLinkDestroy(link);
  if (r != CUDA_SUCCESS)
    fail(failed, r, "the kernels of " + Pipeline + (log[0] ? std::string(": ") + log : ""));
  return binary;
}

std::map<CUcontext, DeviceCode::Loaded>::iterator DeviceCode::load(CUcontext context) {
  const DriverApi &api = driver();
  CUdevice device = 0;
  PTXJIT_CUDA_CALL(cuCtxGetDevice(&device), "pipeline " + Pipeline);
  int major = 0, minor = 0;
  PTXJIT_CUDA_CALL(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device), Pipeline);
  PTXJIT_CUDA_CALL(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device), Pipeline);
  int capability = major * 10 + minor;
  int optIn = 0;
  PTXJIT_CUDA_CALL(cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device), Pipeline);
  auto ptx = PTX.find(capability);
  if (ptx == PTX.end())
    ptx = PTX.emplace(capability, Generator(capability, max_ptx_version_for_driver(api.version))).first;

  // PTXJIT_DEVICE_OPT_LEVEL (0-4, the driver's default 4) tells a fault of the driver's PTX
  // compiler from one of ptxjit's: a result that changes with it is not ptxjit's doing.
  int optimization = 4;
  if (const char *level = std::getenv("PTXJIT_DEVICE_OPT_LEVEL")) {
    if (level[0] < '0' || level[0] > '4' || level[1])
      throw RuntimeError(std::string("PTXJIT_DEVICE_OPT_LEVEL must be 0, 1, 2, 3 or 4, not '") + level + "'");
    optimization = level[0] - '0';
  }
  Loaded loaded;
  if (Binaries.find) {
    // The binary the driver compiled this PTX to, kept across processes: a load takes
    // microseconds where compiling took milliseconds.
    const std::string target = "sm_" + std::to_string(capability) + ", driver " + std::to_string(api.version) +
                               ", -O" + std::to_string(optimization);
    if (std::optional<std::string> binary = Binaries.find(ptx->second, target))
      if (api.cuModuleLoadData(&loaded.Module, binary->data()) != CUDA_SUCCESS)
        loaded.Module = nullptr; // one the driver refuses is compiled again
    if (!loaded.Module) {
      std::string binary = compileToBinary(ptx->second, optimization);
      PTXJIT_CUDA_CALL(cuModuleLoadData(&loaded.Module, binary.data()), "the compiled kernels of " + Pipeline);
      Binaries.keep(ptx->second, target, binary);
    }
  } else {
    char log[8192] = {0};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                      reinterpret_cast<void *>(static_cast<uintptr_t>(optimization))};
    CUresult r = api.cuModuleLoadDataEx(&loaded.Module, ptx->second.c_str(), 3, options, values);
    if (r != CUDA_SUCCESS)
      fail("cuModuleLoadDataEx", r, "the kernels of " + Pipeline + (log[0] ? std::string(": ") + log : ""));
  }
  for (const Kernel &kernel : Kernels) {
    CUfunction f = nullptr;
    if (CUresult e = api.cuModuleGetFunction(&f, loaded.Module, kernel.name.c_str()); e != CUDA_SUCCESS) {
      api.cuModuleUnload(loaded.Module);
      fail("cuModuleGetFunction", e, "kernel " + kernel.name + " of " + Pipeline);
    }
    loaded.Functions.push_back(f);
  }
  loaded.SharedLimits.assign(Kernels.size(), DefaultSharedLimit);
  loaded.DeviceSharedLimit = std::max(optIn, DefaultSharedLimit);
  loaded.Graphs = std::make_unique<GraphCache>();
  return Modules.emplace(context, std::move(loaded)).first;
}

void DeviceCode::forget(CUcontext context) {
  std::unique_lock<std::shared_mutex> lock(Mutex);
  auto it = Modules.find(context);
  if (it == Modules.end())
    return;
  it->second.Graphs.reset();
  const DriverApi &api = driver();
  if (api.cuCtxPushCurrent(context) == CUDA_SUCCESS) {
    api.cuModuleUnload(it->second.Module);
    CUcontext popped;
    api.cuCtxPopCurrent(&popped);
  }
  Modules.erase(it);
}

GraphCache &DeviceCode::graphs(CUcontext context) {
  {
    std::shared_lock<std::shared_mutex> lock(Mutex);
    if (auto it = Modules.find(context); it != Modules.end())
      return *it->second.Graphs;
  }
  std::unique_lock<std::shared_mutex> lock(Mutex);
  auto it = Modules.find(context);
  if (it == Modules.end())
    it = load(context);
  return *it->second.Graphs;
}

std::map<int, std::string> DeviceCode::ptx() const {
  std::shared_lock<std::shared_mutex> lock(Mutex);
  return PTX;
}

void DeviceCode::forget_everywhere(CUcontext context) {
  std::lock_guard<std::mutex> lock(RegistryMutex);
  for (DeviceCode *code : Registry)
    code->forget(context);
}

} // namespace ptxjit::runtime::cuda
