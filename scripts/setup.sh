#!/usr/bin/env bash
# Sourced by demo.sh and test.sh: installs what the build needs, or says exactly what is missing.
# Debian 12 with the CUDA toolkit under /usr/local/cuda (or CUDAToolkit_ROOT) is assumed.

PTXJIT_PACKAGES=(cmake ninja-build g++ llvm-19-dev catch2 libdlpack-dev zlib1g-dev libzstd-dev xz-utils
                 python3-dev python3-venv)

ptxjit_setup() {
  local missing=()
  for package in "${PTXJIT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$package")
  done
  if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]]; then
      echo "ptxjit: installing ${missing[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
      echo "ptxjit: missing packages. Install them with:" >&2
      echo "  sudo apt-get install -y ${missing[*]}" >&2
      return 1
    fi
  fi
  local cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
  if [[ ! -x $cuda_root/bin/nvcc || ! -f $cuda_root/nvvm/libdevice/libdevice.10.bc ]]; then
    echo "ptxjit: the CUDA toolkit (nvcc, ptxas, nvvm/libdevice) was not found under $cuda_root." >&2
    echo "  Install the CUDA toolkit there, or set CUDAToolkit_ROOT to its location." >&2
    return 1
  fi
}

# build/venv: the Python that builds and tests the extension module (the dev preset's
# Python_EXECUTABLE), with python/requirements-dev.txt installed from PyPI. Remade when the
# requirements change.
ptxjit_python_setup() {
  local root venv requirements stamp
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv=$root/build/venv
  requirements=$root/python/requirements-dev.txt
  stamp=$venv/requirements-dev.txt
  if [[ -x $venv/bin/python && -f $stamp ]] && cmp -s "$requirements" "$stamp"; then
    return 0
  fi
  echo "ptxjit: making $venv (python/requirements-dev.txt)"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" &&
    cp "$requirements" "$stamp"
}
