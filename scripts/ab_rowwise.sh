#!/usr/bin/env bash
# Issue 12's GPU call: the timeline's GPU tests, an A/B of the row-wise plan's switches at
# AB_SHAPES (rows and columns in pairs) in AB_DTYPES (read by src/backend/cuda/layout.cpp:
# TESSERA_AB_ROW_PERSISTENT=0 / 1, a block per row / a persistent grid; by codegen.cpp:
# TESSERA_AB_ROWWISE_LOADS_FIRST=1, the weight rows loaded before the reduction;
# TESSERA_AB_STREAM_STASH=0, long rows re-read at each pass (at 1024x65536, AB_LONG_SWITCHES);
# TESSERA_AB_EPI_GROUP=G, the epilogue's vectors a step; TESSERA_AB_ROW_RESIDENT=N, a norm's
# resident threads per multiprocessor, its grid as chosen; TESSERA_AB_PER_THREAD=E, elements a
# thread of a reduction; TESSERA_AB_STREAM_GROUP=G, a streamed pass's vectors a step), then the full
# bench_rowwise tables, in its ring and with the L2 flushed before each launch, and torch/Triton
# beside them (do_bench and back to back), and issue 12's verdict over the rings
# (bench/rowwise_verdict.py, verdict.txt), in one GPU call:
#   OUT=dir [BUILD_DIR=build-gpu] [AB_SWITCHES="VAR=value VAR=value,VAR2=value ..."]
#     [AB_SHAPES="8192 8192 32768 4096"] [AB_DTYPES="f16"] [AB_ONLY=1 | AB=0] scripts/ab_rowwise.sh
# AB_ONLY=1 stops after the A/B; AB=0 leaves it out. (The marks A/B was decided in session 16
# and its switch removed: a mark per launch once waits drain the stream, +22 % at 32768x4096.)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
build=${BUILD_DIR:-build-gpu}
B=$build/bench/bench_rowwise
mkdir -p "$OUT"
# The bench and the timeline's tests alone (~30 s on a fresh machine's 16 cores; nothing when up
# to date: a warm machine keeps its build, and a stale binary would time the code before the last
# edit).
{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } &&
  cmake --build "$build" -j "$(nproc)" --target bench_rowwise timeline_gpu_tests \
    >"$OUT/rowwise_build.log" 2>&1 || {
  echo "build FAILED (see rowwise_build.log)"
  exit 1
}
timeout 60 "$build/tests/runtime/timeline_gpu_tests" >"$OUT/timeline_tests.txt" 2>&1
echo "rc=$?" >>"$OUT/timeline_tests.txt"
grep -E "^\[  (PASSED|FAILED) |Failure|^rc=" "$OUT/timeline_tests.txt"
PY=${PY:-/opt/torch/.venv/bin/python3}
command -v "$PY" >/dev/null || PY=python3
export TESSERA_QUIET=1 TESSERA_CACHE_MAX_BYTES=0
# Each entry one variant; VAR=a,VAR2=b sets both. The defaults: RMSNorm on the H200 is 0.91x
# Triton's ring at 8192^2 and 0.97x at 32768x4096 with a block per row (session 17), where the
# persistent grid measured 3954-3965 against 3892-3902 GB/s at 32768x4096 in that call; 8192^2
# untried. A block per row holds 3 blocks (768 threads) a multiprocessor at its 79 registers,
# softmax 4 at 64 (RMSNorm spills 40 bytes a thread there, ptxas -v). So: ROW_PERSISTENT=1 (every
# norm persistent, 768 threads); ROW_RESIDENT=1024 (each norm's own grid, RMSNorm a block per
# row, 1024 threads); both (every norm persistent, 1024 threads). (16 elements a thread, session
# 16's default variant, lost 11-13% on every kernel there: dropped.) Session 18 adds Triton's
# RMSNorm structure: the weight row loaded with the input row, before the reduction
# (TESSERA_AB_ROWWISE_LOADS_FIRST=1, codegen.cpp), at 512 resident threads (RMSNorm 114-117
# registers, no spills; LayerNorm spills 120 bytes there, ptxas sm_90a f16).
# Session 19 (H100): the defaults won for RMSNorm; LayerNorm gained 2-10% from loads first at 512
# threads. Session 19 adds TESSERA_AB_TILE_TID=1 (codegen.cpp: no tile-invariant address
# arithmetic hoisted out of the tile loop; ptxas: RMSNorm 79 -> 64 registers, LayerNorm's 72 B of
# spills gone), alone and with 1024 resident threads (which spilled 40 B before it). Session 20
# (H100): long rows 1.3-1.9x, the rest within 2%: the default since, its switch removed.
# Session 20 (H100): LayerNorm's loads first, 16 elements a thread where 256 threads hold the row
# (TESSERA_AB_PER_THREAD=16 with loads first): 32768x4096 0.207 -> 0.194 ms; with loads first at
# 512 resident threads 8192^2 0.105 -> 0.096: both the default for three-row norms since
# (layout.cpp); TESSERA_AB_ROWWISE_LOADS_FIRST=0 is the old plan's epilogue loads. Still 3-4%
# under Triton's ring at 32768x4096 on the H100, which runs a block per row where ours walks a
# persistent grid: TESSERA_AB_ROW_PERSISTENT=0 is that.
switches=${AB_SWITCHES:-TESSERA_AB_ROWWISE_LOADS_FIRST=0 TESSERA_AB_ROW_PERSISTENT=0 TESSERA_AB_ROWWISE_LOADS_FIRST=1,TESSERA_AB_ROW_RESIDENT=512}
shapes=${AB_SHAPES:-8192 8192 32768 4096}
dtypes=${AB_DTYPES:-f16}
ab() {
  for round in 1 2; do
    for switch in defaults $switches; do
      for t in $dtypes; do
        echo "== round $round $switch $t"
        vars=()
        [ "$switch" = defaults ] || IFS=, read -r -a vars <<<"$switch"
        # shellcheck disable=SC2086 # the shapes are words
        env "${vars[@]}" timeout 40 "$B" --dtype "$t" --numerics fast $shapes 2>&1 | grep -vE "^#"
        echo "rc=${PIPESTATUS[0]}"
      done
    done
    # Long rows (streamed): the row kept in shared memory by its first pass (the default since
    # session 19, Emitter::plan_stash) against a re-read from memory at each pass.
    for switch in defaults ${AB_LONG_SWITCHES-TESSERA_AB_STREAM_STASH=0}; do
      for t in f16 bf16; do
        echo "== round $round long $switch $t"
        vars=()
        [ "$switch" = defaults ] || IFS=, read -r -a vars <<<"$switch"
        env "${vars[@]}" timeout 40 "$B" --dtype "$t" --numerics fast 1024 65536 2>&1 | grep -vE "^#"
        echo "rc=${PIPESTATUS[0]}"
      done
    done
  done
}
if [ "${AB:-1}" = 0 ]; then echo "(AB=0: no A/B)"; else ab; fi >"$OUT/ab.txt" 2>&1
if [ "${AB_ONLY:-0}" = 1 ]; then
  cat "$OUT/ab.txt"
  ! grep -qE "^rc=[1-9]" "$OUT/ab.txt" "$OUT/timeline_tests.txt"
  exit
fi
# Where a ring step's host time goes (waiting for the oldest launch, launching).
timeout 40 "$B" --host-split --dtype f16 --numerics fast 32768 4096 8192 8192 \
  >"$OUT/host_split.txt" 2>&1
echo "rc=$?" >>"$OUT/host_split.txt"
for t in f16 bf16; do
  timeout 40 "$B" --dtype "$t" --numerics fast 8192 8192 32768 4096 1024 65536 >"$OUT/full_$t.txt" 2>&1
  echo "rc=$?" >>"$OUT/full_$t.txt"
  timeout 50 "$B" --flush-l2 --dtype "$t" --numerics fast 8192 8192 32768 4096 \
    >"$OUT/flushed_$t.txt" 2>&1
  echo "rc=$?" >>"$OUT/flushed_$t.txt"
done
PYTHONUNBUFFERED=1 timeout 90 "$PY" bench/torch_reference.py --rowwise --back-to-back \
  >"$OUT/torch.txt" 2>&1
echo "rc=$?" >>"$OUT/torch.txt"
cat "$OUT/ab.txt"
grep -vE "^#" "$OUT/host_split.txt"
grep -hE "softmax|rmsnorm|layernorm|rc=" "$OUT"/full_*.txt "$OUT"/flushed_*.txt
grep -E "triton|torch|rc=" "$OUT/torch.txt"
# Issue 12's criterion over the rings above (bench/rowwise_verdict.py: the table, then whether
# every op at both main shapes in f16 and bf16 is at or above 1.0x Triton's ring).
python3 bench/rowwise_verdict.py "$OUT" | tee "$OUT/verdict.txt"
# Non-zero when a bench's own check failed (it exits 1 on a wrong element), a run timed out or a
# test failed or crashed.
! grep -qE "^rc=[1-9]" "$OUT"/ab.txt "$OUT"/host_split.txt "$OUT"/full_*.txt "$OUT"/flushed_*.txt "$OUT/torch.txt" \
  "$OUT/timeline_tests.txt"
