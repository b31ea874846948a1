#!/usr/bin/env bash
# Everything that needs a GPU, in one run on a GPU machine: build, `tessera doctor`, the GPU tests
# (CTest label gpu), every example on the GPU, compute-sanitizer memcheck and racecheck over the
# GPU tests, and the benchmarks side by side with PyTorch and Triton. Logs go to $OUT (default
# ./gpu-logs), a few files only; the summary is printed last.
#
#   OUT=/tmp/logs scripts/gpu_check.sh [--quick]     (--quick: skip sanitizers and benchmarks)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
quick=0
[ "${1:-}" = "--quick" ] && quick=1
build=${BUILD_DIR:-build-gpu}
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() {  # step <name> <log> <command...>: runs it, records pass/fail and the time taken
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  echo "===== $name: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then note "PASS  $name ($((SECONDS - t0)) s)"; else note "FAIL  $name ($((SECONDS - t0)) s, see $(basename "$log"))"; fi
}

note "# gpu_check $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >>"$summary" 2>&1

step "configure" "$OUT/build.log" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
step "build" "$OUT/build.log" cmake --build "$build" -j "$(nproc)"
export PATH="$PWD/$build/tools:$PATH"
step "tessera doctor" "$OUT/tests.log" "$build/tools/tessera" doctor

export TESSERA_DEVICE=cuda
export TESSERA_CACHE_DIR="$PWD/$build/jit-cache"
step "ctest -L gpu" "$OUT/tests.log" ctest --test-dir "$build" -L gpu --output-on-failure -j 4
for ex in hello_world add saxpy softmax gemm simt_vecadd simt_gemm simt_row_reduce; do
  exe=$(find "$build/examples" -maxdepth 2 -type f -name "$ex" -perm -u+x | head -1)
  [ -n "$exe" ] && step "example $ex" "$OUT/tests.log" "$exe"
done
# The CPU suite too, so that one run shows both.
step "ctest -LE gpu (cpu suite)" "$OUT/tests.log" env TESSERA_DEVICE=cpu ctest --test-dir "$build" -LE gpu -j 8

if [ $quick = 0 ]; then
  gpu_tests=$(find "$build/tests" -type f -perm -u+x -name '*gpu*')
  for t in $gpu_tests; do
    step "memcheck $(basename "$t")" "$OUT/sanitizer.log" compute-sanitizer --tool memcheck --error-exitcode 1 "$t"
    step "racecheck $(basename "$t")" "$OUT/sanitizer.log" compute-sanitizer --tool racecheck --error-exitcode 1 "$t"
  done
  rm -rf "$TESSERA_CACHE_DIR.bench"
  step "bench elementwise (cold cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$build/bench/bench_elementwise"
  step "bench elementwise (warm disk cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$build/bench/bench_elementwise" 28 8192 10
  [ -x "$build/bench/bench_softmax" ] && step "bench softmax" "$OUT/bench.log" "$build/bench/bench_softmax"
  step "bench torch/triton reference" "$OUT/bench.log" python3 bench/torch_reference.py
fi
echo
cat "$summary"
grep -E "GB/s|TFLOP/s|first launch|new size" "$OUT/bench.log" 2>/dev/null
! grep -q '^FAIL' "$summary"
