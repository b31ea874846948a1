#!/usr/bin/env bash
# One device call per session: build from source with the GPU machine's compiler and run every GPU
# test and example (gpu_check --quick), the sanitizers on the suites this session changed, and the
# row-wise benchmark beside torch and Triton. Logs under $OUT, in few files (the device tool brings
# back a limited number): gpu_check's own (build.log, tests.log, summary.txt, gpu_check.txt),
# sanitizers.txt and bench.txt.
#   OUT=dir scripts/gpu_session.sh [test binaries for the sanitizers...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build-gpu}
timeout 330 bash scripts/gpu_check.sh --quick >"$OUT/gpu_check.txt" 2>&1
cat "$OUT/summary.txt"
export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$BUILD_DIR/jit-cache"
: >"$OUT/sanitizers.txt"
for t in "$@"; do
  for tool in memcheck racecheck; do
    log=$(mktemp)
    # Tests too large for the sanitizers' pace (2^29 blocks) run only in gpu_check.
    GTEST_FILTER=${SANITIZER_GTEST_FILTER:--GpuTileCoordinates.*} \
      timeout 60 compute-sanitizer --tool "$tool" --error-exitcode 1 "$BUILD_DIR/$t" >"$log" 2>&1
    rc=$?
    { echo "===== $tool $t: rc=$rc"; cat "$log"; } >>"$OUT/sanitizers.txt"
    echo "$tool $(basename "$t"): rc=$rc $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log")"
  done
done
{
  timeout 100 "$BUILD_DIR/bench/bench_rowwise" 2>&1
  echo "bench_rowwise rc=$?"
  timeout 80 python3 bench/torch_reference.py --rowwise 2>&1
  echo "torch_reference rc=$?"
} >"$OUT/bench.txt"
grep -E "rc=" "$OUT/bench.txt"
