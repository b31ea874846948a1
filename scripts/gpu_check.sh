#!/usr/bin/env bash
# Everything that needs a GPU, in one run on a GPU machine: `tessera doctor`, the GPU tests (CTest
# label gpu), every example on the GPU, compute-sanitizer memcheck and racecheck over the GPU
# differential tests, and the benchmarks side by side with PyTorch and Triton. Logs go to $OUT
# (default ./gpu-logs), a few files only; the summary is printed last.
#
#   scripts/gpu_check.sh                   builds here (needs cmake, ninja, g++, gtest), then runs
#   scripts/gpu_check.sh --prebuilt DIR    runs what scripts/pack_for_gpu.sh packed into DIR
#   add --quick to skip the sanitizers and the benchmarks
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
quick=0
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --prebuilt) bin=$2; shift ;;
  esac
  shift
done
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

if [ -z "$bin" ]; then
  build=${BUILD_DIR:-build-gpu}
  step "configure" "$OUT/build.log" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  step "build" "$OUT/build.log" cmake --build "$build" -j "$(nproc)"
  ctest --test-dir "$build" -L gpu --show-only=json-v1 | python3 -c '
import json, sys, shlex
for t in json.load(sys.stdin)["tests"]:
    print(t["name"] + "\t" + shlex.join(t["command"]))' >"$build/gpu_tests.txt"
  bin=$build
fi

export TESSERA_DEVICE=cuda
export TESSERA_CACHE_DIR="$PWD/$bin/jit-cache"
step "tessera doctor" "$OUT/tests.log" "$bin/tools/tessera" doctor

# The GPU tests, one process each (as CTest runs them).
passed=0 failed=0
while IFS=$'\t' read -r name cmd; do
  echo "===== $name" >>"$OUT/tests.log"
  if timeout 300 bash -c "$cmd" >>"$OUT/tests.log" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); note "FAIL  gpu test $name"; fi
done <"$bin/gpu_tests.txt"
note "$( [ $failed = 0 ] && echo PASS || echo FAIL)  gpu tests: $passed passed, $failed failed"

for ex in hello_world add saxpy softmax gemm simt_vecadd simt_gemm simt_row_reduce; do
  exe=$(find "$bin/examples" -maxdepth 2 -type f -name "$ex" | head -1)
  [ -n "$exe" ] && step "example $ex (GPU)" "$OUT/tests.log" "$exe"
done

if [ $quick = 0 ]; then
  for t in "$bin/tests/gpu/gpu_differential_tests"; do
    [ -x "$t" ] || continue
    step "memcheck $(basename "$t")" "$OUT/sanitizer.log" compute-sanitizer --tool memcheck --error-exitcode 1 "$t"
    step "racecheck $(basename "$t")" "$OUT/sanitizer.log" compute-sanitizer --tool racecheck --error-exitcode 1 "$t"
  done
  rm -rf "$TESSERA_CACHE_DIR.bench"
  step "bench elementwise (cold cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$bin/bench/bench_elementwise"
  step "bench elementwise (disk cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$bin/bench/bench_elementwise" 28 8192 10
  [ -x "$bin/bench/bench_softmax" ] && step "bench softmax" "$OUT/bench.log" "$bin/bench/bench_softmax"
  step "bench torch/triton reference" "$OUT/bench.log" python3 bench/torch_reference.py
fi
echo
cat "$summary"
grep -hE "GB/s|TFLOP/s|first launch|new size|jit" "$OUT/bench.log" 2>/dev/null | head -60
! grep -q '^FAIL' "$summary"
