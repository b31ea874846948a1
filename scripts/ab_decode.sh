#!/usr/bin/env bash
# Issue 14's decode A/B on the GPU machine, in one call: the kernel library's GPU tests of the
# decode step's kernels under each variant (each result against a double-precision reference,
# and the error messages of their unpadded loads),
# then the Qwen3 engine's batch-1 graph decode step
# (random weights at Qwen3-0.6B's shapes, bf16, prompt 512, 64 steps) once per variant per round,
# the variants interleaved, AB_ROUNDS rounds (default 3). All variants share one JIT cache folder
# (a kernel's cache key is its source, so each variant's kernels are its own; the tuner's winners
# are shared, so the A/B compares code, not candidate choices).
#   AB_VARIANTS: variants separated by ';', each "base" or VAR=value[,VAR=value]; default
#   "base;TESSERA_AB_LOOP_RESIDENT=384;TESSERA_AB_LOOP_RESIDENT=512;TESSERA_AB_COMBINE_SPLIT=4":
#   decode attention's chunk kernel at three or four blocks a multiprocessor instead of two, so
#   that its 272-304 blocks run in one wave on an H100 (the switch also reaches the linear
#   layers' K-loop candidates if the tuner picked one, and a combine over more than 32 chunks;
#   layout.cpp); the combine's blocks a quarter of a head's columns each, at batch 1 64 one-warp
#   blocks for Qwen3-0.6B's 16 heads instead of 16 of four warps, the paged cache's combine too
#   (kernels/src/decode_attention.cpp).
#   Earlier: session 19's A/B on an H100 made the linear layers' L2 prefetch the default, and
#   TESSERA_AB_LOAD_ORDER=0, canonical order, lost 0.9%; session 20's thread index re-derived in
#   each tile won 1.3% and is the default (codegen.cpp); session 21's: the linear layers at 1024
#   resident threads won 1.9% and are the default, the QK-norm/RoPE/append kernel at 128 threads
#   a block lost 1.0% and its switch is gone, TESSERA_AB_PREFETCH=0 lost 2.5%.
# Logs under $OUT: decode_build.log, decode_tests.txt, ab_decode.txt; prints the median ms a step
# of each variant.
#   OUT=dir [AB_VARIANTS=...] [AB_ROUNDS=3] [AB_TESTS=0: no tests] scripts/ab_decode.sh
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/qwen3_ab_common.sh
source scripts/qwen3_ab_common.sh
if [ "${AB_TESTS:-1}" = 0 ]; then qwen3_ab_setup decode; else qwen3_ab_setup decode kernels_tests; fi
export TESSERA_QUIET=1
IFS=';' read -r -a variants <<<"${AB_VARIANTS:-base;TESSERA_AB_LOOP_RESIDENT=384;TESSERA_AB_LOOP_RESIDENT=512;TESSERA_AB_COMBINE_SPLIT=4}"
# The assignments of variant $1, one a line (none for base).
assignments() { [ "$1" = base ] || tr ',' '\n' <<<"$1"; }
failed=0
# The tests once per variant: a switch that changes a kernel's plan must not change its results.
[ "${AB_TESTS:-1}" = 0 ] || for v in "${variants[@]}"; do
  mapfile -t set_vars < <(assignments "$v")
  env "${set_vars[@]}" TESSERA_TEST_DEVICE=cuda timeout 300 "$build/tests/kernels/kernels_tests" \
    --gtest_filter='Decode*:Linear*:Rope*:Norm*:Lookup*' 2>&1 |
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected'
  rc=${PIPESTATUS[0]}
  echo "kernels_tests Decode*:Linear*:Rope*:Norm*:Lookup* under $v: rc=$rc"
  [ "$rc" = 0 ] || failed=1
done >"$OUT/decode_tests.txt" 2>&1
[ "${AB_TESTS:-1}" = 0 ] || cat "$OUT/decode_tests.txt"
log=$OUT/ab_decode.txt
: >"$log"
for round in $(seq "${AB_ROUNDS:-3}"); do
  for v in "${variants[@]}"; do
    mapfile -t set_vars < <(assignments "$v")
    echo "== round $round $v" >>"$log"
    env "${set_vars[@]}" timeout "${AB_RUN_TIMEOUT:-240}" "$build/examples/qwen3_tiny" \
      --model "$model" --bench --prompt 512 --steps 64 --batches 1 --bandwidth "$bandwidth" >>"$log" 2>&1
    rc=$?
    echo "rc=$rc" >>"$log"
    [ $rc = 0 ] || failed=1
  done
done
# The median of each variant's "decode batch 1: ..., X ms a step" lines.
"$py" - "$log" <<'PY'
import re, statistics, sys
runs, variant = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"== round \d+ (.*)", line)
    if m:
        variant = m.group(1).strip()
        continue
    m = re.search(r"decode batch 1: \d+ steps, ([\d.]+) ms a step", line)
    if m and variant:
        runs.setdefault(variant, []).append(float(m.group(1)))
base = statistics.median(runs["base"]) if runs.get("base") else None
for v, ms in runs.items():
    med = statistics.median(ms)
    rel = f", {base / med:.3f}x base's speed" if base else ""
    print(f"{v}: median {med:.3f} ms a step over {len(ms)} runs "
          f"({', '.join(f'{x:.3f}' for x in ms)}){rel}")
PY
echo "total $((SECONDS - t0)) s"
exit $failed
