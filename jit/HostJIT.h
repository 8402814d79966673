#ifndef PTXJIT_JIT_HOSTJIT_H
#define PTXJIT_JIT_HOSTJIT_H

// The process's ORC JIT for host code. Compiled pipelines live in it until the last user of
// their CompiledHostCode releases it. LLJIT is thread-safe; creating it happens once.

#include "codegen/CodeGen_Host.h"
#include "cuda/DeviceCode.h"
#include "lower/Lower.h"
#include "ptxjit/Target.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ptxjit::jit {

using PipelineFunction = int32_t (*)(void *context, void **args);

/// Host machine code for one lowered pipeline, and on CUDA targets its kernels. Removed from
/// the JIT on destruction.
class CompiledHostCode {
public:
  CompiledHostCode(PipelineFunction function, std::shared_ptr<void> resources, double compileMs,
                   std::vector<codegen::KernelRecord> kernels, std::unique_ptr<runtime::cuda::DeviceCode> device)
      : Function(function), Resources(std::move(resources)), CompileMilliseconds(compileMs),
        Kernels(std::move(kernels)), Device(std::move(device)) {}
  PipelineFunction function() const { return Function; }
  double compile_milliseconds() const { return CompileMilliseconds; }
  const std::vector<codegen::KernelRecord> &kernels() const { return Kernels; }
  /// Null for host-only pipelines.
  runtime::cuda::DeviceCode *device_code() const { return Device.get(); }

private:
  PipelineFunction Function;
  std::shared_ptr<void> Resources;
  double CompileMilliseconds;
  std::vector<codegen::KernelRecord> Kernels;
  std::unique_ptr<runtime::cuda::DeviceCode> Device;
};

/// Generates, optimizes and JIT-compiles host code for `pipeline`.
std::shared_ptr<CompiledHostCode> compile_host(const lower::LoweredPipeline &pipeline, const Target &target);

} // namespace ptxjit::jit

#endif
