#!/usr/bin/env bash
# Installs the build dependencies with apt-get when they are missing and we are root.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
# clang-tidy 16 or newer understands std::source_location with this libstdc++ (14 does not).
if [ "${TESSERA_NEED_TIDY:-0}" = 1 ]; then command -v clang-tidy-16 >/dev/null || need+=(clang-tidy-16); fi
# CI's second compiler (scripts/clang_check.sh): clang 16 or newer (older ones cannot compile
# std::source_location from libstdc++). Debian 12 and Ubuntu 24.04 both package clang-16.
if [ "${TESSERA_NEED_CLANG:-0}" = 1 ] && ! bash "$(dirname "$0")/find_clang.sh" >/dev/null; then
  need+=(clang-16)
fi
# The Python DLPack example (scripts/python_example.sh): pybind11, NumPy and Python's headers.
if [ "${TESSERA_NEED_PYTHON:-0}" = 1 ]; then
  [ -f /usr/include/pybind11/pybind11.h ] || need+=(pybind11-dev)
  /usr/bin/python3 -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
  [ -n "$(ls /usr/include/python3*/Python.h 2>/dev/null)" ] || need+=(python3-dev)
fi
# DLPack's header (from_dlpack/to_dlpack): wanted, not needed. Without it the library builds
# without DLPack interop, so a machine with no package mirror (the GPU machine) still builds.
if [ ! -f /usr/include/dlpack/dlpack.h ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "scripts/deps.sh: installing libdlpack-dev (DLPack interop)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libdlpack-dev; } \
    >/dev/null 2>&1 || echo "scripts/deps.sh: libdlpack-dev could not be installed; DLPack interop off"
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "scripts/deps.sh: installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "scripts/deps.sh: missing ${need[*]}; install them (as root: apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
