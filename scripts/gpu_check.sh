#!/usr/bin/env bash
# Everything that needs a GPU, in one run on a GPU machine: `tessera doctor`, the GPU tests (CTest
# label gpu), every example on the GPU, compute-sanitizer memcheck and racecheck over the GPU
# tests, and the benchmarks side by side with PyTorch and Triton. Logs go to $OUT
# (default ./gpu-logs), a few files only; the summary is printed last.
#
#   scripts/gpu_check.sh                   builds here (needs cmake, ninja, g++, gtest), then runs
#   scripts/gpu_check.sh --prebuilt DIR    runs what scripts/pack_for_gpu.sh packed into DIR
#   add --quick to skip the sanitizers and the benchmarks
#   add --sanitizers-only to run only the sanitizers (e.g. a second call on a machine that kept
#     the build of the first); GPU_TESTS_MATCH=REGEX keeps only the tests whose name matches;
#     BUILD_TARGETS="t ..." builds only those targets
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
quick=0
sanitizers_only=0
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --sanitizers-only) sanitizers_only=1 ;;
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

# TESSERA_COMMIT: the commit the tree was copied from, where the GPU machine's copy of .git is not
# that tree's (the device tool copies the working tree, not the repository's history).
commit=${TESSERA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}
[ -n "$bin" ] && [ -f "$bin/commit.txt" ] && commit="$(cat "$bin/commit.txt") (packed binaries)"
note "# gpu_check $(date -u +%FT%TZ) commit $commit"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >>"$summary" 2>&1

if [ -z "$bin" ]; then
  build=${BUILD_DIR:-build-gpu}
  step "configure" "$OUT/build.log" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  # -k 0: one target that fails to build does not keep the others (and their tests) from running.
  # BUILD_TARGETS="a b": only those (with GPU_TESTS_MATCH naming tests they hold; tessera_cli for
  # the doctor step above the tests), e.g. scripts/gpu_verify.sh's GEMM step: BUILD_TARGETS=
  # "tessera_cli gpu_differential_tests" GPU_TESTS_MATCH='GpuDifferential\..*Gemm|gemm_on_sm80'.
  # shellcheck disable=SC2086
  step "build" "$OUT/build.log" cmake --build "$build" -j "$(nproc)" \
    ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0
  ctest --test-dir "$build" -L gpu --show-only=json-v1 | python3 scripts/list_gpu_tests.py >"$build/gpu_tests.txt"
  bin=$build
fi

export TESSERA_DEVICE=cuda
export TESSERA_CACHE_DIR="$PWD/$bin/jit-cache"
step "tessera doctor" "$OUT/tests.log" "$bin/tools/tessera" doctor

# Runs the GPU tests, one process each (as CTest runs them), a few at a time (they check results,
# not speed, and most of their time is NVRTC compiling on the host's cores), each under `wrapper`
# (empty, or a compute-sanitizer command); appends their output to `log` and notes the tally.
#   run_gpu_tests <label> <log> <skip: a regex of test commands to leave out, or ''> [wrapper...]
run_gpu_tests() {
  local label=$1 log=$2 skip=$3
  shift 3
  local wrapper="$*" results i=0 passed=0 failed=0 name cmd run
  results=$(mktemp -d)
  while IFS=$'\t' read -r name cmd; do
    i=$((i + 1))
    [ -n "$skip" ] && [[ $cmd =~ $skip ]] && continue
    [ -n "${GPU_TESTS_MATCH:-}" ] && ! [[ $name =~ $GPU_TESTS_MATCH ]] && continue
    # The wrapper goes after the command's `env K=V ...` prefix, right before the program.
    if [[ $cmd =~ ^(env( [A-Za-z_][A-Za-z0-9_]*=[^ ]*)+ )(.*)$ ]]; then
      run="${BASH_REMATCH[1]}$wrapper ${BASH_REMATCH[3]}"
    else
      run="$wrapper $cmd"
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    ( t0=$SECONDS
      if timeout "${GPU_TEST_TIMEOUT:-400}" bash -c "$run" >"$results/$i.log" 2>&1; then s=PASS; else s=FAIL; fi
      echo "$s $((SECONDS - t0)) s" >"$results/$i.rc"
      # As each finishes, so a run cut short by a time limit still shows what passed.
      echo "$s $((SECONDS - t0)) s  $label: $name" >>"$OUT/progress.txt" ) &
  done <"$bin/gpu_tests.txt"
  wait
  i=0
  while IFS=$'\t' read -r name cmd; do
    i=$((i + 1))
    [ -n "$skip" ] && [[ $cmd =~ $skip ]] && continue
    [ -n "${GPU_TESTS_MATCH:-}" ] && ! [[ $name =~ $GPU_TESTS_MATCH ]] && continue
    [ -f "$results/$i.rc" ] || echo "FAIL (no result: the job died)" >"$results/$i.rc"
    { echo "===== $label: $name ($(cat "$results/$i.rc")): $cmd"; cat "$results/$i.log" 2>/dev/null; } >>"$log"
    if grep -q '^PASS' "$results/$i.rc"; then passed=$((passed + 1)); else failed=$((failed + 1)); note "FAIL  $label: $name"; fi
  done <"$bin/gpu_tests.txt"
  rm -rf "$results"
  # None run is a failure too: a filter or a partial build that selects nothing proves nothing.
  note "$( [ $failed = 0 ] && [ $passed -gt 0 ] && echo PASS || echo FAIL)  $label: $passed passed, $failed failed"
}
jobs_max=$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))
if [ $sanitizers_only = 0 ]; then
  run_gpu_tests "gpu tests" "$OUT/tests.log" ''
  for ex in hello_world add saxpy softmax gemm simt_vecadd simt_gemm simt_row_reduce; do
    exe=$(find "$bin/examples" -maxdepth 2 -type f -name "$ex" | head -1)
    [ -n "$exe" ] && step "example $ex (GPU)" "$OUT/tests.log" "$exe"
  done
fi

if [ $quick = 0 ] || [ $sanitizers_only = 1 ]; then
  # Every GPU test under both sanitizers, except the ones that make a kernel fault on purpose and
  # the examples (they time 4096^3 GEMMs: hours under racecheck; their kernels have tests here).
  # racecheck also leaves out the tests that launch from many host threads at once: it cannot
  # track those launches ("Internal Sanitizer Error"); memcheck covers them.
  # SANITIZERS="memcheck" (or "racecheck") runs one of the two, e.g. over a long test binary.
  [[ " ${SANITIZERS:-memcheck racecheck} " == *" memcheck "* ]] &&
    run_gpu_tests memcheck "$OUT/sanitizer.log" '_fault_tests|/examples/' \
      compute-sanitizer --tool memcheck --error-exitcode 1 --print-limit 20
  [[ " ${SANITIZERS:-memcheck racecheck} " == *" racecheck "* ]] &&
    run_gpu_tests racecheck "$OUT/sanitizer.log" '_fault_tests|/examples/|cuda_concurrency_tests' \
      compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 20
fi
if [ $quick = 0 ] && [ $sanitizers_only = 0 ]; then
  rm -rf "$TESSERA_CACHE_DIR.bench"
  step "bench elementwise (cold cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$bin/bench/bench_elementwise" 28 8192,4096,16384
  step "bench elementwise (disk cache)" "$OUT/bench.log" env TESSERA_CACHE_DIR="$TESSERA_CACHE_DIR.bench" TESSERA_LOG=jit "$bin/bench/bench_elementwise" 28 8192 10
  [ -x "$bin/bench/bench_softmax" ] && step "bench softmax" "$OUT/bench.log" "$bin/bench/bench_softmax"
  [ -x "$bin/bench/bench_rowwise" ] && step "bench rowwise" "$OUT/bench.log" "$bin/bench/bench_rowwise"
  step "bench torch/triton rowwise reference" "$OUT/bench.log" python3 bench/torch_reference.py --rowwise
  step "bench launch overhead" "$OUT/bench.log" "$bin/bench/bench_launch"
  step "bench gemm" "$OUT/bench.log" "$bin/bench/bench_gemm"
  step "bench torch gemm reference" "$OUT/bench.log" python3 bench/torch_reference.py --gemm
  # The Ampere lowering (sm_80 code, loaded as PTX) on this GPU, for comparison.
  step "bench gemm (sm_80 code)" "$OUT/bench.log" env TESSERA_TARGET_ARCH=sm_80 "$bin/bench/bench_gemm" 4096 4096 4096 4000 3000 2000
  [ -x "$bin/bench/bench_simt_vs_tile" ] && step "bench simt vs tile" "$OUT/bench.log" "$bin/bench/bench_simt_vs_tile"
  step "bench torch/triton reference" "$OUT/bench.log" python3 bench/torch_reference.py
fi
echo
cat "$summary"
grep -hE "GB/s|FLOP/s| us|first launch|new size|jit" "$OUT/bench.log" 2>/dev/null | head -80
! grep -q '^FAIL' "$summary"
