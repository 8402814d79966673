#ifndef PTXJIT_APPS_BENCH_BLURPIPELINES_H
#define PTXJIT_APPS_BENCH_BLURPIPELINES_H

// The pipelines the benchmark measures, each built under fresh names so that compiling it
// measures the whole path from definition to callable (the compile cache keys on names too).

#include "ptxjit.h"

#include <string>

namespace bench {

struct BuiltPipeline {
  ptxjit::ImageParam Input;
  ptxjit::Func Output;
};

/// 3x3 box blur, separable, blur_x computed per tile of blur_y, vectorized and parallel.
BuiltPipeline make_blur(const std::string &suffix);
/// Pointwise math over a float image.
BuiltPipeline make_pointwise(const std::string &suffix);
/// 256-bin histogram of a uint8 image.
BuiltPipeline make_histogram(const std::string &suffix);
/// Gamma correction of a uint8 image, pow per pixel: vector math (halide_peer's gamma is the same).
BuiltPipeline make_gamma(const std::string &suffix);
/// The exponent make_gamma uses.
constexpr float GammaExponent = 1.0f / 2.2f;

} // namespace bench

#endif
