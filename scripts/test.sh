#!/usr/bin/env bash
# Builds Tessera and runs the whole CPU test suite through CTest (no GPU needed).
# BUILD_DIR (default build) selects the build folder, BUILD_TYPE (default RelWithDebInfo) its
# CMake build type; extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
# TESSERA_WERROR=ON (CI sets it) makes warnings errors; off by default, so that a newer compiler's
# new warnings do not stop a user's build.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DTESSERA_WERROR="${TESSERA_WERROR:-OFF}" >/dev/null
# The build's step lines go to $build/build.log; warnings and errors are printed.
set +e
cmake --build "$build" -j "$(nproc)" 2>&1 | tee "$build/build.log" | grep -vE '^\[[0-9]+/[0-9]+\] '
status=${PIPESTATUS[0]}
set -e
[ "$status" = 0 ] || exit "$status"
# The CPU suite: everything but the tests that need a GPU. A passing test prints nothing here (its
# line is in $build/ctest-cpu.log); a failing one prints its whole output, then CTest's summary.
log="$build/ctest-cpu.log"
set +e
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE gpu "$@" 2>&1 | tee "$log" |
  grep -vE '^ +Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec$'
status=${PIPESTATUS[0]}
set -e
gpu=$(ctest --test-dir "$build" -N -L gpu | sed -n 's/^Total Tests: //p')
echo "test.sh: ${gpu:-0} GPU tests (label gpu) left out; on a GPU machine run them with" \
  "ctest --test-dir $build -L gpu, or all GPU checks with scripts/gpu_check.sh. Full log: $log"
exit "$status"
