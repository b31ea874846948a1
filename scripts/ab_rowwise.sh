#!/usr/bin/env bash
# A/B of the row-wise plan switches (LayoutPlan; read by src/backend/cuda/layout.cpp), then the
# full bench_rowwise table and torch/Triton, in one GPU call:
#   OUT=dir BUILD_DIR=build-gpu scripts/ab_rowwise.sh
# Switches: TESSERA_AB_STREAM_GROUP=G (a streamed pass loads G vectors a step), TESSERA_AB_ROW_
# RESIDENT=N (a norm's resident threads per multiprocessor), TESSERA_AB_PER_THREAD=E (elements a
# thread of a reduction), TESSERA_AB_ROW_PERSISTENT=0 (a block per row), TESSERA_AB_EPI_GROUP=G.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
build=${BUILD_DIR:-build-gpu}
B=$build/bench/bench_rowwise
mkdir -p "$OUT"
# The bench alone (~30 s on a fresh machine's 16 cores; nothing when it is up to date: a warm
# machine keeps its build, and a stale binary would time the code before the last edit).
{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } &&
  cmake --build "$build" -j "$(nproc)" --target bench_rowwise >"$OUT/rowwise_build.log" 2>&1
echo "bench_rowwise build rc=$?"
PY=${PY:-/opt/torch/.venv/bin/python3}
export TESSERA_QUIET=1 TESSERA_CACHE_MAX_BYTES=0
ab() {
  echo "== $1 | $2"
  env $1 timeout 25 "$B" $2 >"$OUT/ab.o" 2>&1
  local r=$?
  grep -vE "^#|^$" "$OUT/ab.o"
  echo "rc=$r"
}
{
  # Session 14 (H200): 32768x4096 ran 18% below session 10 (softmax 3330 vs 4077 GB/s, RMSNorm
  # 3213 vs 3917) while 8192^2 gained 9-11%. Session 15 (H100): programmatic launch is not it
  # (off, on, its trigger after the tiles: within 1%); the persistent grid costs RMSNorm 7%.
  for v in "TESSERA_PDL=0" "TESSERA_PDL=1" "TESSERA_PDL=1 TESSERA_AB_ROW_PERSISTENT=0"; do
    ab "$v" "--dtype f16 --numerics fast 32768 4096 8192 8192"
  done
  # The streamed default (4 vectors a step) against one and two.
  for g in 1 2 4; do ab "TESSERA_AB_STREAM_GROUP=$g" "--dtype f16 --numerics fast 1024 65536"; done
} >"$OUT/ab.txt" 2>&1
# Where RMSNorm's time goes at 32768x4096 (Triton's at 8192^2 is in scripts/profile_rowwise.sh).
timeout 60 ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats --section MemoryWorkloadAnalysis -k regex:tessera_rmsnorm_rows \
  --launch-skip 5 -c 1 "$B" --op rmsnorm --dtype f16 --numerics fast 32768 4096 \
  >"$OUT/profile_rmsnorm_32768x4096.txt" 2>&1
for t in f16 bf16; do
  timeout 30 "$B" --dtype "$t" --numerics fast 8192 8192 32768 4096 1024 65536 >"$OUT/full_$t.txt" 2>&1
  echo "rc=$?" >>"$OUT/full_$t.txt"
done
PYTHONUNBUFFERED=1 timeout 50 "$PY" bench/torch_reference.py --rowwise >"$OUT/torch.txt" 2>&1
echo "rc=$?" >>"$OUT/torch.txt"
rm -f "$OUT/ab.o"
cat "$OUT/ab.txt"
grep -hE "softmax|rmsnorm|layernorm|rc=" "$OUT"/full_*.txt
grep -E "triton|torch" "$OUT/torch.txt" | grep -v copy
