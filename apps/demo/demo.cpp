// The README's first command runs this: it shows what ptxjit does today, end to end.
// For now: target strings, parsed and printed in canonical form, with lazy CUDA capabilities.

#include "ptxjit/Target.h"

#include <cstdio>

using namespace ptxjit;

int main(int argc, char **argv) {
  const char *defaults[] = {"host", "host-cuda", "x86-64-linux-cuda-cuda_capability_80",
                            "x86-64-linux-cuda_capability_90a-strict_float", "host-cuda-cuda_capabilty_80"};
  int failures = 0;
  auto show = [&](const char *spelling) {
    try {
      Target t(spelling);
      std::printf("%-48s -> %s", spelling, t.to_string().c_str());
      if (t.has_gpu_feature() && t.cuda_capability() == 0)
        std::printf("  (capability resolved at lowering, e.g. H200 -> %s)",
                    t.resolve_cuda_capability(9, 0).to_string().c_str());
      std::printf("\n");
    } catch (const TargetError &e) {
      std::printf("%-48s -> error: %s\n", spelling, e.what());
      ++failures;
    }
  };
  std::printf("JIT target from PTXJIT_TARGET: %s\n\n", get_jit_target_from_environment().to_string().c_str());
  if (argc > 1) {
    for (int i = 1; i < argc; ++i)
      show(argv[i]);
    return failures == 0 ? 0 : 1;
  }
  for (const char *spelling : defaults)
    show(spelling);
  return 0;
}
