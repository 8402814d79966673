#ifndef PTXJIT_APPS_BENCH_GPUBENCHMARKS_H
#define PTXJIT_APPS_BENCH_GPUBENCHMARKS_H

#include <string>

namespace bench {

/// The GPU half of the benchmark, as a JSON object: device-to-device copy bandwidth (the
/// baseline), the blur and axpy kernels in TB/s on device-resident buffers, one-kernel realize
/// host overhead against raw cuLaunchKernel, and first-realize latency. Without a GPU:
/// {"skipped": "<reason>"}.
std::string gpu_benchmarks(bool quick);

} // namespace bench

#endif
