#!/usr/bin/env bash
# Issue 14's decode A/B: the Qwen3 engine's batch-1 graph decode step (Qwen3-0.6B's shapes, RANDOM
# weights, bf16) under code-generation switches, on one machine in one call. Builds qwen3_tiny
# (Release, the machine's compiler) unless QWEN3_EXE names one, writes the weights unless
# QWEN3_DIR has them (scripts/qwen3_weights.py), then runs the engine's bench (prompt 512, 64
# graph steps, batch 1) once per variant per round, the variants interleaved, AB_ROUNDS rounds
# (default 3). All variants share one JIT cache folder (a kernel's cache key is its source, so
# each variant's kernels are its own; the tuner's winners are shared, so the A/B compares code,
# not candidate choices); the first run fills it from cold.
#   AB_VARIANTS: variants separated by ';', each "base" or VAR=value[,VAR=value]; default
#   "base;TESSERA_AB_LOAD_ORDER=0" (load_order.hpp: the loads issued first, or canonical order).
# Writes $OUT/ab_decode.txt (every run's decode line) and prints the median ms a step of each.
#   OUT=dir [QWEN3_EXE=path] [QWEN3_DIR=dir] [AB_VARIANTS=...] [AB_ROUNDS=3] scripts/ab_decode.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
build=${BUILD_DIR:-build-qwen3}
model=${QWEN3_DIR:-/tmp/qwen3-0.6b-random}
py=${PYTHON:-python3}
exe=${QWEN3_EXE:-$build/examples/qwen3_tiny}
if [ -z "${QWEN3_EXE:-}" ]; then
  { [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_TOOLS=OFF; } &&
    cmake --build "$build" -j "$(nproc)" --target qwen3_tiny >"$OUT/ab_decode_build.log" 2>&1 || {
    echo "build FAILED (see ab_decode_build.log)"
    exit 1
  }
fi
[ -f "$model/model.safetensors" ] ||
  "$py" scripts/qwen3_weights.py --config qwen3-0.6b --out "$model" --device cuda >"$OUT/ab_decode_weights.log" 2>&1 || {
  echo "weights FAILED (see ab_decode_weights.log)"
  exit 1
}
export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$build/jit-cache" TESSERA_QUIET=1
IFS=';' read -r -a variants <<<"${AB_VARIANTS:-base;TESSERA_AB_LOAD_ORDER=0}"
log=$OUT/ab_decode.txt
: >"$log"
failed=0
for round in $(seq "${AB_ROUNDS:-3}"); do
  for v in "${variants[@]}"; do
    assignments=()
    [ "$v" = base ] || IFS=',' read -r -a assignments <<<"$v"
    echo "== round $round $v" >>"$log"
    timeout "${AB_RUN_TIMEOUT:-240}" env "${assignments[@]}" "$exe" --model "$model" --bench \
      --prompt 512 --steps 64 --batches 1 --bandwidth "${QWEN3_BANDWIDTH:-4213}" >>"$log" 2>&1
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
    rel = f", {base / med:.3f}x base" if base else ""
    print(f"{v}: median {med:.3f} ms a step over {len(ms)} runs ({', '.join(f'{x:.3f}' for x in ms)}){rel}")
PY
exit $failed
