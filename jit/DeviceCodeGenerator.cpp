#include "DeviceCodeGenerator.h"

#include "codegen/CodeGen_PTX.h"
#include "ptxjit/RuntimeError.h"

#include <algorithm>

namespace ptxjit::jit {

Target device_target(const Target &target, int deviceCapability) {
  constexpr int NewestNVPTXCapability = 90;
  if (int fixed = target.cuda_capability(); fixed != 0) {
    if (fixed > deviceCapability)
      throw RuntimeError("target " + target.to_string() + " needs compute capability " + std::to_string(fixed / 10) +
                         "." + std::to_string(fixed % 10) + ", but the device has " +
                         std::to_string(deviceCapability / 10) + "." + std::to_string(deviceCapability % 10));
    return target;
  }
  int capability = std::min(deviceCapability, NewestNVPTXCapability);
  return target.resolve_cuda_capability(capability / 10, capability % 10);
}

std::string generate_ptx(const std::vector<codegen::KernelRecord> &kernels, const Target &resolved, int ptxVersion) {
  llvm::LLVMContext context;
  codegen::CodeGen_PTX generator(context, resolved, ptxVersion);
  for (const codegen::KernelRecord &k : kernels)
    generator.add_kernel(k.nest.as<ir::For>(), k.name, k.closure);
  return generator.compile_to_ptx();
}

} // namespace ptxjit::jit
