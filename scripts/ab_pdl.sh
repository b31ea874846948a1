#!/usr/bin/env bash
# Programmatic dependent launch on the GPU machine, in one call: its GPU tests (chains, a replayed
# graph and a SIMT kernel between tile kernels, each against the CPU backend or a host reference,
# with PDL on and under TESSERA_PDL=0), the graph and chain tests it touches, then the A/B: Qwen3
# decode at batch 1 (random weights at Qwen3-0.6B's shapes, scripts/qwen3_weights.py) and
# bench_launch, each run with TESSERA_PDL=0 and =1 alternately, twice. One graph build is logged
# (TESSERA_LOG=graph) to show its programmatic edges. Logs under $OUT: pdl_build.log,
# pdl_tests.txt, pdl_ab.txt.
#   OUT=dir bash scripts/ab_pdl.sh
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/qwen3_ab_common.sh
source scripts/qwen3_ab_common.sh
qwen3_ab_setup pdl bench_launch pdl_gpu_tests graph_gpu_tests chain_gpu_tests
{
  for t in pdl_gpu_tests graph_gpu_tests chain_gpu_tests; do
    timeout 300 "$build/tests/runtime/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|Which is'
    echo "$t rc=${PIPESTATUS[0]}"
  done
  TESSERA_PDL=0 timeout 300 "$build/tests/runtime/pdl_gpu_tests" 2>&1 | grep -E '^\[  (PASSED|FAILED) |Failure'
  echo "pdl_gpu_tests under TESSERA_PDL=0 rc=${PIPESTATUS[0]}"
} >"$OUT/pdl_tests.txt" 2>&1
cat "$OUT/pdl_tests.txt"
{
  TESSERA_LOG=graph timeout 200 "$build/examples/qwen3_tiny" --model "$model" --bench --batches 1 \
    2>&1 | grep -m 3 'tessera: graph'
  for round in 1 2; do
    for pdl in 0 1; do
      echo "== round $round TESSERA_PDL=$pdl"
      TESSERA_PDL=$pdl timeout 200 "$build/examples/qwen3_tiny" --model "$model" --bench \
        --bandwidth "$bandwidth" --batches 1 2>&1
      TESSERA_PDL=$pdl timeout 120 "$build/bench/bench_launch" 2>&1
    done
  done
} >"$OUT/pdl_ab.txt" 2>&1
cat "$OUT/pdl_ab.txt"
echo "total $((SECONDS - t0)) s"
