#ifndef PTXJIT_APPS_BENCH_PEERS_H
#define PTXJIT_APPS_BENCH_PEERS_H

// Peer programs (Halide 14, built only where libhalide14-0-dev exists) run beside the benchmark
// and print one JSON object each. They are found next to the bench executable, so the staged
// copies on the GPU machine find each other too.

#include <optional>
#include <string>

namespace bench {

/// Runs `program` (a file name next to this executable) with `arguments`; its JSON output, or
/// nothing when it is absent or fails.
std::optional<std::string> run_peer(const std::string &program, const std::string &arguments);

} // namespace bench

#endif
