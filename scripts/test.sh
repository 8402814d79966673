#!/usr/bin/env bash
# Builds and runs the tests. Usage: scripts/test.sh [dev|release|asan|tsan] [extra ctest arguments]
# dev (default) runs every suite, the Python module's pytest suite included; [gpu] tests skip with
# a reason where there is no GPU.
# asan runs the unit, cpu and ptx suites under AddressSanitizer + UndefinedBehaviorSanitizer;
# tsan the unit and cpu suites under ThreadSanitizer, all but the long differential test and
# Halide's apps (single large compiles, 100 s and more each there; the stencil chain's run went
# past 15 GB under TSan and was killed).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
shift || true
source scripts/setup.sh
ptxjit_setup
if [[ $preset == dev ]]; then
  ptxjit_python_setup
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" "$@"
