#!/usr/bin/env bash
# The runtime's tests under ThreadSanitizer: CPU launches run on a worker pool, and the ordering
# and ownership tests (chains, streams, graphs, reader tracking) exercise that concurrency, so a
# data race in the runtime shows here as a report, and the run fails.
# A build folder of its own (BUILD_DIR, default build-tsan), only the runtime's CPU test binary;
# extra arguments go to it (e.g. --gtest_filter=Chain.*).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-tsan}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTESSERA_WERROR="${TESSERA_WERROR:-OFF}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" >/dev/null
cmake --build "$build" -j "$(nproc)" --target runtime_tests 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
test -x "$build/tests/runtime/runtime_tests"
# halt_on_error: the first race fails the run; second_deadlock_stack names both locks of a
# lock-order inversion.
TESSERA_DEVICE=cpu TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/runtime/runtime_tests" --gtest_brief=1 "$@"
