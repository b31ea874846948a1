#!/usr/bin/env bash
# The session's closing device calls, in two phases so each fits one call (the build stays on the
# warm machine between them):
#   tests  the README's test command on the GPU machine's own image (Ubuntu 24.04, g++ 13),
#          warnings as errors: scripts/test.sh builds from source and runs the whole CPU suite;
#          then every GPU test and example (gpu_check --quick) on the same build.
#   bench  the benchmarks side by side with PyTorch (cuBLAS, cuDNN, Triton) in the same run:
#          attention, GEMM (Hopper, the autotuned GEMM, and the Ampere lowering run as sm_80
#          code), row-wise (f16, fast numerics) and launch costs; then the results tables
#          (scripts/bench_tables.py: each row beside its anchor, with the ratio) and their plots
#          (scripts/plot_results.py).
# Logs under $OUT in few files (the device tool brings back a limited number): cpu_suite.txt,
# gpu_check's own (build.log, tests.log, summary.txt, gpu_check.txt), bench.txt, results.md and
# its SVGs. Each bench step has its own time limit; SESSION_S (default 540) bounds the phase, and
# a step that would not fit is skipped and says so; BENCHES="attention launch ..." runs only the
# bench steps it names.
#   OUT=dir scripts/gpu_session.sh [tests] [bench]      (both when none is named)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build-gpu}
budget=${SESSION_S:-540}
phases=${*:-tests bench}

if [[ " $phases " == *" tests "* ]]; then
  t0=$SECONDS
  BUILD_TYPE=Release TESSERA_WERROR=ON timeout 300 bash scripts/test.sh \
    >"$OUT/cpu_suite.txt" 2>&1
  rc=$?  # before any other command (a $(...) in the line below would reset $?)
  echo "cpu suite (scripts/test.sh, g++ $(g++ -dumpversion), -Werror) rc=$rc ($((SECONDS - t0)) s)" |
    tee -a "$OUT/cpu_suite.txt"
  grep -E "tests passed|tests failed|Total Test" "$OUT/cpu_suite.txt" | tail -2
  # What is left of SESSION_S (gpu_check's progress.txt lists each test as it finishes).
  timeout "${GPU_CHECK_S:-$((budget - SECONDS))}" bash scripts/gpu_check.sh --quick >"$OUT/gpu_check.txt" 2>&1
  cat "$OUT/summary.txt"
fi

if [[ " $phases " == *" bench "* ]]; then
  export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$BUILD_DIR/jit-cache"
  b=$BUILD_DIR/bench
  # bench <limit seconds> <name> <command...>: runs it into bench.txt when it fits the budget.
  bench() {
    local limit=$1 name=$2
    shift 2
    [[ -z ${BENCHES:-} || " $BENCHES " == *" $name "* ]] || return 0
    if [ $((SECONDS + limit)) -gt "$budget" ]; then
      echo "skipped $name (would not fit: $SECONDS s of $budget used)" | tee -a "$OUT/bench.txt"
      return
    fi
    local t0=$SECONDS
    echo "===== $name: $*" >>"$OUT/bench.txt"
    timeout "$limit" "$@" >>"$OUT/bench.txt" 2>&1
    echo "$name rc=$? ($((SECONDS - t0)) s)" | tee -a "$OUT/bench.txt"
  }
  : >"$OUT/bench.txt"
  [ -x "$b/bench_gemm" ] || cmake --build "$BUILD_DIR" -j "$(nproc)" >"$OUT/bench_build.log" 2>&1
  bench 60 attention "$b/bench_attention"
  bench 60 torch-attention python3 bench/torch_reference.py --attention
  bench 100 gemm env TESSERA_LOG=tune "$b/bench_gemm" --tune 4000 3000 2000 4096 4096 4096 8192 8192 8192
  bench 60 torch-gemm python3 bench/torch_reference.py --gemm
  bench 60 gemm-splitk "$b/bench_gemm" --split-k 4000 3000 2000
  bench 40 gemm-sm80 env TESSERA_TARGET_ARCH=sm_80 "$b/bench_gemm" 4096 4096 4096 8192 8192 8192
  bench 30 launch "$b/bench_launch"
  bench 60 rowwise "$b/bench_rowwise" --dtype f16 --numerics fast
  bench 60 torch-rowwise python3 bench/torch_reference.py --rowwise
  python3 scripts/bench_tables.py "$OUT/bench.txt" "$OUT/results.md" \
      --title "Benchmarks, $(date -u +%F), commit ${TESSERA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}" &&
    python3 scripts/plot_results.py "$OUT/results.md"
fi
