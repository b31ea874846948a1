#!/usr/bin/env bash
# Builds Tessera and runs the whole CPU test suite through CTest (no GPU needed).
# BUILD_DIR (default build) selects the build folder; extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
# The CPU suite: everything but the tests that need a GPU.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE gpu "$@"
