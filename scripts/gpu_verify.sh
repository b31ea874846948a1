#!/usr/bin/env bash
# The GPU checks the open issues still wait on, in priority order, each in its own folder under
# $OUT/verify and all of it packed into $OUT/verify.tgz at the end (the device tool brings back at
# most 8 files; the scripts below write more):
#   rowwise   issue 12: scripts/ab_rowwise.sh without its A/B (the timeline's GPU tests, the
#             ring's host split, the tables in the ring and flushed, Triton both ways)
#   rowwise-ab
#             issue 12: the timeline's GPU tests and the plan switches' A/B alone (AB_ONLY=1);
#             named only
#   launch    issue 11: scripts/launch_ab.sh (bench_launch with programmatic launch on, off, on)
#   gemm      issue 9 (resolved; named only): memcheck and racecheck over the GEMM GPU tests (the
#             pipelined sm_90a GEMM and its sm_80 lowering), building only their test binary
#   qwen3     issue 14: the engine's logits against transformers' Qwen3 (scripts/qwen3_gpu.sh,
#             check only: its own build, the weights, transformers' references, then the engine's
#             kernels compiled from a cold cache; a call of its own)
#   qwen3-bench
#             issue 14: scripts/qwen3_gpu.sh whole (its build, weights, references, the logits
#             check, PyTorch eager's bench and the engine's at batches 1, 4, 16 and 64, the tuner's
#             log beside it), DLPack example left out; a call of its own (~400-550 s from a cold
#             JIT cache: SESSION_S=595); named only
#   qwen3-ncu issue 14: ncu over each kernel of one batch-1 graph decode step (scripts/qwen3_gpu.sh
#             with QWEN3_NCU=1, no check nor bench; weights from an earlier step kept), then
#             ncu's sections (memory, occupancy, warp stalls) for the first launches of the
#             linear, decode attention and QK-norm/RoPE kernels; named only
#   decode-ab issue 14: scripts/ab_decode.sh: the decode step's kernel tests under each
#             code-generation switch (a switch must not change a result), then the batch-1 decode
#             step under each, two rounds interleaved, one JIT cache; named only, a call of its
#             own (SESSION_S=595)
#   kernels-sanitize
#             issue 14: the kernel library's GPU tests under memcheck and racecheck at once, in
#             gtest shards over the machine's cores (scripts/kernels_sanitize.sh; ~190 s with
#             its build); named only
#   kernels-memcheck, kernels-racecheck
#             the same, one sanitizer each over the whole binary (kernels_tests: ~240 s
#             unsanitized, mostly NVRTC on one core); named only, each a call of its own
# SESSION_S (default 560) bounds the whole; a step that would not fit is skipped and says so.
# Exits non-zero when a step failed (each step's own logs say how).
#   OUT=dir scripts/gpu_verify.sh [step ...]      (rowwise launch when none is named)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
root=$OUT/verify
mkdir -p "$root"
budget=${SESSION_S:-560}
steps=${*:-rowwise launch}
# step <name> <limit s> <command...>: runs it with OUT=$root/<name>, if it fits what is left.
step() {
  local name=$1 limit=$2
  shift 2
  [[ " $steps " == *" $name "* ]] || return 0
  if [ $((SECONDS + limit)) -gt "$budget" ]; then
    echo "skipped $name (would not fit: $SECONDS s of $budget used)" | tee -a "$root/summary.txt"
    return
  fi
  local t0=$SECONDS
  mkdir -p "$root/$name"
  OUT=$root/$name timeout "$limit" "$@" >"$root/$name/run.txt" 2>&1
  local rc=$?
  [ $rc = 0 ] || failed=1
  echo "$name rc=$rc ($((SECONDS - t0)) s)" | tee -a "$root/summary.txt"
}
failed=0
: >"$root/summary.txt"
# gpu_check.sh runs `tessera doctor` first: tessera_cli is built beside the tests. Each test's own
# limit (GPU_TEST_TIMEOUT) stays inside the step's, so its log is written before the step ends.
step gemm 200 env BUILD_TARGETS="tessera_cli gpu_differential_tests" GPU_TEST_TIMEOUT=60 \
  'GPU_TESTS_MATCH=GpuDifferential\..*Gemm|gemm_on_sm80' bash scripts/gpu_check.sh --sanitizers-only
step rowwise 300 env AB=0 bash scripts/ab_rowwise.sh
step rowwise-ab 330 env AB_ONLY=1 bash scripts/ab_rowwise.sh
step launch 150 bash scripts/launch_ab.sh
step qwen3 540 env QWEN3_BENCH=0 QWEN3_TORCH=0 QWEN3_PYTHON_EXAMPLE=0 QWEN3_CHECK_TIMEOUT=360 \
  bash scripts/qwen3_gpu.sh
step qwen3-bench 580 env QWEN3_PYTHON_EXAMPLE=0 QWEN3_CHECK_TIMEOUT=240 QWEN3_TORCH_TIMEOUT=120 \
  QWEN3_BENCH_TIMEOUT=330 bash scripts/qwen3_gpu.sh
step qwen3-ncu 400 env QWEN3_CHECK=0 QWEN3_TORCH=0 QWEN3_BENCH=0 QWEN3_NCU=1 QWEN3_NCU_TIMEOUT=200 \
  QWEN3_PYTHON_EXAMPLE=0 bash scripts/qwen3_gpu.sh
step decode-ab 590 env AB_ROUNDS=2 AB_RUN_TIMEOUT=120 bash scripts/ab_decode.sh
step kernels-sanitize 380 env SHARD_TIMEOUT=300 BUDGET_S=370 bash scripts/kernels_sanitize.sh
for tool in memcheck racecheck; do
  step "kernels-$tool" 550 env BUILD_TARGETS="tessera_cli kernels_tests" \
    GPU_TESTS_MATCH=kernels_tests SANITIZERS=$tool GPU_TEST_TIMEOUT=430 \
    bash scripts/gpu_check.sh --sanitizers-only
done
grep -hE "PASS|FAIL" "$root"/*/summary.txt 2>/dev/null
grep -hE "^(==|tessera)|rc=" "$root"/rowwise/ab.txt 2>/dev/null | head -40
grep -hE "^(==|tessera)|rc=" "$root"/rowwise-ab/ab.txt 2>/dev/null | head -100
grep -hE "rc=|worst|^qwen3: (ok|logits)" "$root"/qwen3/qwen3_check.txt 2>/dev/null
grep -hE "rc=|decode batch|prefill" "$root"/qwen3-bench/qwen3_bench.txt 2>/dev/null
sed -n '/^By kernel/,$p' "$root"/qwen3-ncu/qwen3_ncu.txt 2>/dev/null | head -24
grep -hE "median|kernels_tests .* rc=" "$root"/decode-ab/run.txt 2>/dev/null
tar czf "$OUT/verify.tgz" -C "$OUT" verify && rm -rf "$root"
echo "logs: verify.tgz"
exit $failed
