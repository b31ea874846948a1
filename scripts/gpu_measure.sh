#!/usr/bin/env bash
# The measurements that need a GPU but not the whole gpu_check: builds only what they run (with the
# GPU machine's own compiler), then the SIMT checked/raw comparison (bench/simt_vs_tile), the launch
# costs (bench/launch), the Python DLPack example on torch tensors, and compute-sanitizer memcheck
# and racecheck over the given test binaries (each under a filter: TEST=binary[:gtest filter]).
# Logs under $OUT, one file each.
#   OUT=dir scripts/gpu_measure.sh [test[:filter] ...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
build=${BUILD_DIR:-build-measure}
targets=(bench_simt_vs_tile bench_launch tessera)
for t in "$@"; do targets+=("${t%%:*}"); done
t0=$SECONDS
{ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"; } >"$OUT/build.log" 2>&1
echo "build rc=$? ($((SECONDS - t0)) s, $(g++ --version | head -1))"
export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$build/jit-cache"
timeout 120 "$build/bench/bench_simt_vs_tile" 5 >"$OUT/simt_vs_tile.txt" 2>&1
echo "simt_vs_tile rc=$?"
timeout 60 "$build/bench/bench_launch" >"$OUT/launch.txt" 2>&1
echo "launch rc=$?"
BUILD_DIR=$build timeout 150 bash scripts/python_example.sh >"$OUT/python_example.txt" 2>&1
echo "python_example rc=$? $(grep -c -i pass "$OUT/python_example.txt") lines saying pass"
: >"$OUT/sanitizers.txt"
for spec in "$@"; do
  t=${spec%%:*}
  filter=-GpuTileCoordinates.*
  [ "$spec" != "$t" ] && filter=${spec#*:}
  exe=$(find "$build" -name "$t" -type f -perm -u+x | head -1)
  for tool in memcheck racecheck; do
    log=$(mktemp)
    GTEST_FILTER=$filter TESSERA_TEST_DEVICE=cuda timeout 120 \
      compute-sanitizer --tool "$tool" --error-exitcode 1 "$exe" >"$log" 2>&1
    rc=$?
    { echo "===== $tool $t ($filter): rc=$rc"; cat "$log"; } >>"$OUT/sanitizers.txt"
    echo "$tool $t: rc=$rc $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log") $(grep -m1 -E '^\[  (PASSED|FAILED) ' "$log")"
  done
done
