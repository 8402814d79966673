#include "DeviceCodeGenerator.h"

#include "codegen/CodeGen_PTX.h"
#include "ptxjit/RuntimeError.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ptxjit::jit {

namespace {

// The newest capability LLVM 19's NVPTX backend generates code for. PTX for it runs on newer
// devices too: the driver compiles it for them.
constexpr int NewestNVPTXCapability = 90;

} // namespace

Target device_target(const Target &target, int deviceCapability) {
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

namespace {

// PTXJIT_DEBUG_CODEGEN=1: each PTX made is written to <first kernel>.<sm_XX>.ptx in the
// working directory, and ptxas -v (when found) reports each kernel's registers and memory.
void writeForInspection(const std::string &ptx, const std::vector<codegen::KernelRecord> &kernels,
                        const Target &resolved) {
  const char *flag = std::getenv("PTXJIT_DEBUG_CODEGEN");
  if (!flag || std::string(flag) != "1" || kernels.empty())
    return;
  std::string arch = codegen::cuda_arch_name(resolved);
  std::string path = kernels.front().name + "." + arch + ".ptx";
  std::ofstream(path) << ptx;
  std::fprintf(stderr, "ptxjit: wrote %s (kernels:", path.c_str());
  for (const codegen::KernelRecord &k : kernels)
    std::fprintf(stderr, " %s", k.name.c_str());
  std::fprintf(stderr, ")\n");
#ifdef PTXJIT_PTXAS
  std::string command = std::string(PTXJIT_PTXAS) + " -v -arch=" + arch + " -o /dev/null " + path + " 1>&2";
  if (std::system(command.c_str()) != 0)
    std::fprintf(stderr, "ptxjit: ptxas rejected %s\n", path.c_str());
#endif
}

} // namespace

std::string generate_ptx(const std::vector<codegen::KernelRecord> &kernels, const Target &target, int ptxVersion) {
  // A capability past what NVPTX knows (cuda_capability_100, _120) gets the newest it knows.
  const Target resolved = target.cuda_capability() > NewestNVPTXCapability
                              ? target.resolve_cuda_capability(NewestNVPTXCapability / 10, NewestNVPTXCapability % 10)
                              : target;
  llvm::LLVMContext context;
  codegen::CodeGen_PTX generator(context, resolved, ptxVersion);
  for (const codegen::KernelRecord &k : kernels)
    generator.add_kernel(k.nest.as<ir::For>(), k.name, k.closure);
  std::string ptx = generator.compile_to_ptx();
  writeForInspection(ptx, kernels, resolved);
  return ptx;
}

} // namespace ptxjit::jit
