#!/usr/bin/env bash
# Builds and runs the tests. Usage: scripts/test.sh [dev|release|asan] [extra ctest arguments]
# dev (default) runs every suite; [gpu] tests skip with a reason where there is no GPU.
# asan runs the unit, cpu and ptx suites under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
shift || true
source scripts/setup.sh
ptxjit_setup
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" "$@"
