#!/usr/bin/env bash
# A/B of the stream timeline's mark per launch after an overshooting wait (src/runtime/
# gpu_timeline.cpp, StreamTimeline::covering): bench_rowwise's ring (three launches in flight,
# each step waiting for the oldest) with TESSERA_AB_DENSE_MARKS=0 (a mark every 4 launches only)
# and without, side by side, after the timeline's GPU tests. Logs under $OUT.
#   OUT=dir BUILD_DIR=build-gpu scripts/ab_marks.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
build=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
  >"$OUT/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target bench_rowwise timeline_gpu_tests >"$OUT/build.log" 2>&1
echo "build rc=$?"
timeout 60 "$build/tests/runtime/timeline_gpu_tests" >"$OUT/timeline_tests.txt" 2>&1
echo "timeline_gpu_tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/timeline_tests.txt"
export TESSERA_QUIET=1
for round in 1 2; do
  for dense in 0 1; do
    echo "== round $round TESSERA_AB_DENSE_MARKS=$dense"
    TESSERA_AB_DENSE_MARKS=$dense timeout 40 "$build/bench/bench_rowwise" --dtype f16 \
      --numerics fast 32768 4096 8192 8192 2>&1 | grep -vE "^#"
  done
done | tee "$OUT/ab_marks.txt"
