#ifndef PTXJIT_JIT_DEVICECODEGENERATOR_H
#define PTXJIT_JIT_DEVICECODEGENERATOR_H

// PTX for a pipeline's kernels at one compute capability.

#include "codegen/CodeGen_Host.h"
#include "ptxjit/Target.h"

#include <string>
#include <vector>

namespace ptxjit::jit {

/// The target the kernels are compiled for on a device of `deviceCapability` (major*10+minor):
/// the target's own capability when it names one (a RuntimeError if the device is older),
/// else the device's, rounded down to what LLVM's NVPTX backend knows (sm_90).
Target device_target(const Target &target, int deviceCapability);

/// The PTX of `kernels` for `target`'s capability; one newer than LLVM's NVPTX backend knows
/// gets PTX for the newest it knows (sm_90), which the driver compiles for the newer device.
std::string generate_ptx(const std::vector<codegen::KernelRecord> &kernels, const Target &target, int ptxVersion);

} // namespace ptxjit::jit

#endif
