#ifndef PTXJIT_RUNTIME_CUDA_DEVICECODE_H
#define PTXJIT_RUNTIME_CUDA_DEVICECODE_H

// The kernels of one compiled pipeline, loaded into each context that runs them. PTX is made
// per compute capability on first need (through a generator the JIT supplies, so the runtime
// needs no compiler) and loaded per context; both are cached. Where the JIT gives a binary
// store, the driver's compiled binary is kept there and loaded instead of compiling again. Lookups take a shared lock, so
// launches in different contexts and threads do not wait on each other; loading takes it
// exclusively.

#include "GraphCache.h"

#include <cuda.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace ptxjit::runtime::cuda {

class DeviceCode {
public:
  /// Makes the PTX for a capability (major*10+minor) at a PTX ISA version (e.g. 85).
  using PTXGenerator = std::function<std::string(int capability, int ptxVersion)>;

  struct Kernel {
    std::string name;
    std::vector<uint32_t> argument_bytes; ///< the size of each parameter's value
  };

  /// Where the JIT keeps compiled binaries (cubins) across processes: `find` gives the one
  /// compiled from `ptx` for `target` (the device's architecture, the driver's version and the
  /// optimization level, as text), `keep` stores one. Both or neither.
  struct BinaryStore {
    std::function<std::optional<std::string>(const std::string &ptx, const std::string &target)> find;
    std::function<void(const std::string &ptx, const std::string &target, const std::string &binary)> keep;
  };

  DeviceCode(std::string pipeline, std::vector<Kernel> kernels, PTXGenerator generator, BinaryStore binaries = {});
  ~DeviceCode();
  DeviceCode(const DeviceCode &) = delete;
  DeviceCode &operator=(const DeviceCode &) = delete;

  /// Kernel `index` in `context`, which must be current, allowed `sharedBytes` of dynamic shared
  /// memory (above the 48 KiB every kernel may use, the kernel's attribute is raised once, up to
  /// the device's opt-in limit). Throws RuntimeError.
  CUfunction function(CUcontext context, int index, int32_t sharedBytes = 0);
  /// Unloads what was loaded into `context` (which must still exist); later launches reload.
  void forget(CUcontext context);
  const std::string &pipeline() const { return Pipeline; }
  const std::string &kernel_name(int index) const { return Kernels.at(index).name; }
  const std::vector<uint32_t> &argument_bytes(int index) const { return Kernels.at(index).argument_bytes; }
  /// The CUDA graphs of these kernels in `context` (which must be current); see GraphCache.
  GraphCache &graphs(CUcontext context);
  /// The PTX made so far, by capability (for inspection and tests).
  std::map<int, std::string> ptx() const;

  /// Calls forget(context) on every live DeviceCode.
  static void forget_everywhere(CUcontext context);

private:
  struct Loaded {
    CUmodule Module = nullptr;
    std::vector<CUfunction> Functions;
    std::vector<int32_t> SharedLimits; ///< each function's dynamic shared memory limit so far
    int32_t DeviceSharedLimit = 0;     ///< the most a block may opt in to on this device
    std::unique_ptr<GraphCache> Graphs; ///< destroyed before the module is unloaded
  };
  /// Loads the module into `context`; the caller holds Mutex exclusively.
  std::map<CUcontext, Loaded>::iterator load(CUcontext context);
  /// The driver's binary for `ptx` on the current context's device (cuLink*).
  std::string compileToBinary(const std::string &ptx, int optimization) const;

  std::string Pipeline;
  std::vector<Kernel> Kernels;
  PTXGenerator Generator;
  BinaryStore Binaries;
  mutable std::shared_mutex Mutex; // guards PTX and Modules
  std::map<int, std::string> PTX;
  std::map<CUcontext, Loaded> Modules;
};

/// The PTX ISA version a driver of `driverVersion` (cuDriverGetVersion) accepts at most.
int max_ptx_version_for_driver(int driverVersion);

} // namespace ptxjit::runtime::cuda

#endif
