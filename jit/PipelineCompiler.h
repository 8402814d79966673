#ifndef PTXJIT_JIT_PIPELINECOMPILER_H
#define PTXJIT_JIT_PIPELINECOMPILER_H

// From a pipeline's Funcs to code a realize runs, through two caches keyed by the pipeline's
// definition key and target (and ptxjit's and LLVM's versions): compiled pipelines alive in this
// process, then the disk cache (DiskCache.h), whose hits skip lowering and code generation. A
// miss lowers, generates and compiles the host code to an object, links it, and stores the
// object; each kernel's PTX (per capability) and the driver's binary (per device and driver)
// are stored when first made. PTXJIT_DEBUG=1 prints one line per compile: where the code came
// from and the time of each phase.

#include "HostJIT.h"
#include "cuda/DeviceCode.h"
#include "lang/DefinitionKey.h"
#include "lower/Lower.h"
#include "ptxjit/Target.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit::jit {

class KernelSource;

/// A pipeline compiled for one target; shared by every Pipeline with the same definition key.
class CompiledPipeline {
public:
  CompiledPipeline(LinkedHostCode linked, std::vector<lower::LoweredArgument> arguments,
                   std::shared_ptr<KernelSource> kernels, std::unique_ptr<runtime::cuda::DeviceCode> device);
  ~CompiledPipeline();

  PipelineFunction function() const { return Linked.function(); }
  /// Null for pipelines without kernels.
  runtime::cuda::DeviceCode *device_code() const { return Device.get(); }
  /// In the order the function takes them; `param` is null (each Pipeline binds its own).
  const std::vector<lower::LoweredArgument> &arguments() const { return Arguments; }
  /// The PTX of the kernels for `target`, which names a capability.
  std::string ptx(const Target &target, int ptxVersion) const;
  /// The target and PTX version ("<target> <version>") whose PTX the compile began making ahead
  /// of a realize (prepareLikelyPTX in PipelineCompiler.cpp); empty if none.
  std::string ptx_prepared_for() const;

private:
  LinkedHostCode Linked;
  std::vector<lower::LoweredArgument> Arguments;
  std::shared_ptr<KernelSource> Kernels;
  /// Declared last, so destroyed first: its modules are unloaded before the host code goes.
  std::unique_ptr<runtime::cuda::DeviceCode> Device;
};

/// The compiled code of `outputs` (whose definition key is `key`) for `target`. `warn` reports
/// that the disk cache cannot be written (once). Throws CompileError for invalid programs.
std::shared_ptr<const CompiledPipeline> compile_pipeline(const lower::Outputs &outputs, const DefinitionKey &key,
                                                         const Target &target,
                                                         const std::function<void(const char *)> &warn);

} // namespace ptxjit::jit

#endif
