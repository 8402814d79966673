#ifndef PTXJIT_APPS_BENCH_FIRSTREALIZE_H
#define PTXJIT_APPS_BENCH_FIRSTREALIZE_H

// The first realize of a process: definition, compile_jit and the first realize of a blur, each
// in a fresh child process of the benchmark (nothing warm by accident), with an empty compile
// cache (cold) and with one an earlier child filled (warm), on the CPU and, where there is one,
// on the GPU (timed after the context exists, as a program beside PyTorch finds it).

#include <string>

namespace bench {

/// What the parent measures, as a JSON object.
std::string first_realize_benchmarks(bool gpu);

/// The child's side: `mode` is "cpu", "gpu" or "gpu_device_buffers"; prints {"compile_ms": ..., "first_realize_ms": ...}.
int first_realize_child(const std::string &mode);

} // namespace bench

#endif
