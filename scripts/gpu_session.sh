#!/usr/bin/env bash
# The session's closing device call: build from source with the GPU machine's compiler and run
# every GPU test and example (gpu_check --quick), then the benchmarks side by side with PyTorch
# (cuBLAS, cuDNN, Triton) in the same run: attention, GEMM (Hopper, the autotuned GEMM, and the
# Ampere lowering run as sm_80 code), row-wise (f16, fast numerics) and launch costs. Logs under
# $OUT in few files (the device tool brings back a limited number): gpu_check's own (build.log,
# tests.log, summary.txt, gpu_check.txt) and bench.txt. Each step has its own time limit; SESSION_S
# (default 540) bounds the whole, and a step that would not fit is skipped and says so.
#   OUT=dir scripts/gpu_session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-build-gpu}
budget=${SESSION_S:-540}
timeout 330 bash scripts/gpu_check.sh --quick >"$OUT/gpu_check.txt" 2>&1
cat "$OUT/summary.txt"
export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$BUILD_DIR/jit-cache"
b=$BUILD_DIR/bench
# bench <limit seconds> <name> <command...>: runs it into bench.txt when it fits the budget.
bench() {
  local limit=$1 name=$2
  shift 2
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
bench 60 attention "$b/bench_attention"
bench 60 torch-attention python3 bench/torch_reference.py --attention
bench 100 gemm env TESSERA_LOG=tune "$b/bench_gemm" --tune 4000 3000 2000 4096 4096 4096 8192 8192 8192
bench 60 torch-gemm python3 bench/torch_reference.py --gemm
bench 40 gemm-sm80 env TESSERA_TARGET_ARCH=sm_80 "$b/bench_gemm" 4096 4096 4096 8192 8192 8192
bench 30 launch "$b/bench_launch"
bench 60 rowwise "$b/bench_rowwise" --dtype f16 --numerics fast
bench 60 torch-rowwise python3 bench/torch_reference.py --rowwise
