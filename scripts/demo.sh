#!/usr/bin/env bash
# Builds ptxjit (release) and runs the demo. Arguments are passed to the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
ptxjit_setup
cmake --preset release >/dev/null
cmake --build --preset release --target ptxjit_demo
exec build/release/apps/demo/demo "$@"
