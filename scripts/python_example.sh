#!/usr/bin/env bash
# Builds the Python DLPack example (examples/python_dlpack: a pybind11 module running a Tessera
# kernel on torch tensors and numpy arrays) and runs its checks: NumPy on the CPU always, PyTorch
# where it is installed (on the GPU too, where there is one). CI runs it with no GPU; on the GPU
# machine, where PyTorch is, run it as it is.
#
# PYTHON (default: python3, or /usr/bin/python3 when that one has numpy and python3 has not) is the
# interpreter the module is built for. pybind11's headers come from that Python's pybind11 package,
# else /usr/include (Debian's pybind11-dev), else PyTorch's own copy; DLPack's header from
# /usr/include (libdlpack-dev), else PyTorch's copy. BUILD_DIR (default build) names the main build;
# this one is <build>-python.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
TESSERA_NEED_PYTHON=1 bash scripts/deps.sh || echo "python_example: going on; the build says what is missing"
py=${PYTHON:-python3}
if [ -z "${PYTHON:-}" ] && ! python3 -c 'import numpy' 2>/dev/null &&
  /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  py=/usr/bin/python3
fi
build=${BUILD_DIR:-build}-python
case $build in /*) ;; *) build=$root/$build ;; esac
torch_include=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))' 2>/dev/null || true)

pybind11_include=$("$py" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || true)
if [ -z "$pybind11_include" ] && [ -f /usr/include/pybind11/pybind11.h ]; then pybind11_include=/usr/include; fi
if [ -z "$pybind11_include" ] && [ -f "$torch_include/pybind11/pybind11.h" ]; then pybind11_include=$torch_include; fi
[ -n "$pybind11_include" ] || { echo "python_example: pybind11's headers not found (apt-get install pybind11-dev, or pip install pybind11)" >&2; exit 1; }

args=()
if [ ! -f /usr/include/dlpack/dlpack.h ]; then
  if [ -f "$torch_include/dlpack/dlpack.h" ]; then
    args+=(-DTESSERA_DLPACK_INCLUDE_DIR="$torch_include")
  elif [ -f "$torch_include/ATen/dlpack.h" ]; then
    # PyTorch's copy of DLPack's header, under its own name: a one-line header that includes it
    # gives Tessera <dlpack/dlpack.h> (the same C ABI; nothing is copied).
    mkdir -p "$build/dlpack-include/dlpack"
    echo "#include \"$torch_include/ATen/dlpack.h\"" >"$build/dlpack-include/dlpack/dlpack.h"
    args+=(-DTESSERA_DLPACK_INCLUDE_DIR="$build/dlpack-include")
  fi
fi
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
mkdir -p "$build"
log=$build/python_example.log
start=$SECONDS
if ! { cmake -S examples/python_dlpack -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$(command -v "$py")" -DPYBIND11_INCLUDE_DIR="$pybind11_include" \
  ${args[@]+"${args[@]}"} && cmake --build "$build" -j "$(nproc)"; } >"$log" 2>&1; then
  cat "$log"
  echo "python_example: build FAILED (log above)"
  exit 1
fi
echo "python_example: built the module in $((SECONDS - start)) s ($py)"
PYTHONPATH=$build "$py" examples/python_dlpack/test_example.py
