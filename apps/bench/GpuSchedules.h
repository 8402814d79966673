#ifndef PTXJIT_APPS_BENCH_GPUSCHEDULES_H
#define PTXJIT_APPS_BENCH_GPUSCHEDULES_H

// Kernels against what the hardware and hand-written code reach, in the same run: the blur
// against a hand-written CUDA blur compiled by nvcc, SGEMM against cuBLAS (loaded at run time;
// skipped with a reason where absent), a transpose against a device-to-device copy.

#include "GpuTiming.h"

#include <string>
#include <vector>

namespace bench {

/// JSON fields ("name": value) for each benchmark. `copyTBs` is the copy bandwidth of this run;
/// `handwrittenBlurTBs` receives the hand-written blur's bandwidth (NaN where it did not run).
std::vector<std::string> schedule_benchmarks(BenchContext &context, double copyTBs, int reps, bool quick,
                                             double *handwrittenBlurTBs);

} // namespace bench

#endif
