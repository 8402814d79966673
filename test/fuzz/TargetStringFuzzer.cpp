// libFuzzer target for target strings (preset `target-fuzzer`, built with clang): every input
// either parses or throws TargetError, never anything else or a crash, and a parsed target's
// canonical spelling parses back to the same target.
//   cmake --preset target-fuzzer && cmake --build --preset target-fuzzer
//   mkdir -p /tmp/corpus
//   build/target-fuzzer/test/ptxjit_target_fuzzer -max_total_time=60 /tmp/corpus test/fuzz/target_corpus

#include "ptxjit/Target.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view spelling(reinterpret_cast<const char *>(data), size);
  try {
    ptxjit::Target target(spelling);
    const std::string canonical = target.to_string();
    const ptxjit::Target reparsed(canonical);
    if (!(reparsed == target) || reparsed.to_string() != canonical)
      std::abort(); // the canonical spelling must parse back to the same target
  } catch (const ptxjit::TargetError &) {
    // A malformed string: the one allowed failure.
  }
  return 0;
}
