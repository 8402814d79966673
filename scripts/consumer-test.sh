#!/usr/bin/env bash
# ptxjit as a user's project sees it (CI runs this). Installs the static library (built by the
# preset given, dev by default) and the shared one (preset shared) into temporary prefixes, then:
# - compiles every installed public header on its own, and checks that none includes CUDA's;
# - checks that libptxjit.so exports ptxjit's API and nothing else;
# - builds and runs test/consumer/find_package against each prefix, and
#   test/consumer/add_subdirectory against these sources;
# - installs the Python package with pip from these sources, builds the Python module against
#   the installed libptxjit.so, and runs the pytest suite against each.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
ptxjit_setup
static_preset=${1:-dev}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for preset in "$static_preset" shared; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --target ptxjit
done
cmake --install "build/$static_preset" --prefix "$work/static" >/dev/null
cmake --install build/shared --prefix "$work/shared" >/dev/null

# This machine may have CUDA's headers on the default include path (/usr/local/include), so
# the check is that no file of the preprocessed headers comes from the CUDA toolkit.
for header in "$work"/static/include/ptxjit.h "$work"/static/include/ptxjit/*.h; do
  echo "#include \"$header\"" > "$work/header.cpp"
  g++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$work/static/include" "$work/header.cpp" ||
    { echo "consumer-test: $header does not compile on its own" >&2; exit 1; }
  if g++ -std=c++20 -M -I"$work/static/include" "$work/header.cpp" | tr ' ' '\n' | grep -q -E 'cuda[^/]*\.h$|/cuda'; then
    echo "consumer-test: $header includes CUDA's headers" >&2
    exit 1
  fi
done

library=$(readlink -f "$work"/shared/lib/libptxjit.so)
foreign=$(nm -D --defined-only -C "$library" | grep -v -E ' (ptxjit::|typeinfo for ptxjit::|typeinfo name for ptxjit::|vtable for ptxjit::)' || true)
if [[ -n $foreign ]]; then
  echo "consumer-test: libptxjit.so exports symbols outside ptxjit's API:" >&2
  echo "$foreign" | head -20 >&2
  exit 1
fi

for kind in static shared; do
  cmake -S test/consumer/find_package -B "$work/find_package_$kind" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/$kind" >/dev/null
  cmake --build "$work/find_package_$kind" >/dev/null
  "$work/find_package_$kind/demo"
done
cmake -S test/consumer/add_subdirectory -B "$work/add_subdirectory" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPTXJIT_SOURCE_DIR="$PWD" -DCUDAToolkit_ROOT="${CUDAToolkit_ROOT:-/usr/local/cuda}" >/dev/null
cmake --build "$work/add_subdirectory" --target demo bench >/dev/null
"$work/add_subdirectory/demo"
"$work/add_subdirectory/bench"

# Python: `pip install .` as a user runs it (into a fresh virtual environment), and the module
# built on its own against the installed libptxjit.so; the pytest suite against each. The
# module exports its init function only (python/exports.map).
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check . pytest
(cd "$work" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests")
ptxjit_python_setup # build/venv: nanobind and pytest
cmake -S python -B "$work/python" -G Ninja -DCMAKE_BUILD_TYPE=Release -Dptxjit_DIR="$work/shared/lib/cmake/ptxjit" \
  -DPython_EXECUTABLE="$PWD/build/venv/bin/python" >/dev/null
cmake --build "$work/python" >/dev/null
PYTHONPATH="$work/python" build/venv/bin/python -m pytest -q -p no:cacheprovider python/tests
exported=$(nm -D --defined-only "$work"/python/ptxjit/_ptxjit*.so | awk '{print $3}' | grep -v -x PyInit__ptxjit || true)
if [[ -n $exported ]]; then
  echo "consumer-test: the Python module exports more than PyInit__ptxjit:" >&2
  echo "$exported" | head -20 >&2
  exit 1
fi

echo "consumer-test: passed. Sizes: libptxjit.a ($static_preset) $(du -h "$work"/static/lib/libptxjit.a | cut -f1)," \
     "libptxjit.so $(du -h "$library" | cut -f1), a consumer linking it statically" \
     "$(du -h "$work/find_package_static/demo" | cut -f1), dynamically $(du -h "$work/find_package_shared/demo" | cut -f1)"
