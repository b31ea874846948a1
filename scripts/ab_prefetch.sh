#!/usr/bin/env bash
# The prefetch op (issue 14) on the GPU machine, in one call: its GPU tests (the op tests' prefetch
# rows and the kernel library's linear layers on the GPU, each against a double reference, with
# the prefetch on and under TESSERA_AB_PREFETCH=0), then the A/B: Qwen3 decode at batch 1 (random
# weights at Qwen3-0.6B's shapes, scripts/qwen3_weights.py) with TESSERA_AB_PREFETCH=0 and =1
# alternately, twice. Logs under $OUT: prefetch_build.log, prefetch_tests.txt, prefetch_ab.txt.
#   OUT=dir bash scripts/ab_prefetch.sh
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/qwen3_ab_common.sh
source scripts/qwen3_ab_common.sh
qwen3_ab_setup prefetch ops_tests kernels_tests
{
  for ab in 1 0; do
    TESSERA_AB_PREFETCH=$ab TESSERA_TEST_DEVICE=cuda timeout 300 "$build/tests/ops/ops_tests" \
      --gtest_filter='Prefetch*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected'
    echo "ops_tests Prefetch* TESSERA_AB_PREFETCH=$ab rc=${PIPESTATUS[0]}"
    TESSERA_AB_PREFETCH=$ab TESSERA_TEST_DEVICE=cuda timeout 300 "$build/tests/kernels/kernels_tests" \
      --gtest_filter='Linear*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected'
    echo "kernels_tests Linear* TESSERA_AB_PREFETCH=$ab rc=${PIPESTATUS[0]}"
  done
} >"$OUT/prefetch_tests.txt" 2>&1
cat "$OUT/prefetch_tests.txt"
{
  for round in 1 2; do
    for ab in 0 1; do
      echo "== round $round TESSERA_AB_PREFETCH=$ab"
      TESSERA_AB_PREFETCH=$ab timeout 200 "$build/examples/qwen3_tiny" --model "$model" --bench \
        --bandwidth "$bandwidth" --batches 1 2>&1
    done
  done
} >"$OUT/prefetch_ab.txt" 2>&1
cat "$OUT/prefetch_ab.txt"
echo "total $((SECONDS - t0)) s"
