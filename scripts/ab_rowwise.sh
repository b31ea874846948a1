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
B=${BUILD_DIR:-build-gpu}/bench/bench_rowwise
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
  for g in 1 2 4; do ab "TESSERA_AB_STREAM_GROUP=$g" "--dtype bf16 --numerics fast 1024 65536"; done
  for g in 1 2; do ab "TESSERA_AB_STREAM_GROUP=$g" "--dtype f16 --numerics fast 1024 65536"; done
  for v in "X=0" "TESSERA_AB_ROW_RESIDENT=1024" \
    "TESSERA_AB_PER_THREAD=16 TESSERA_AB_ROW_RESIDENT=1024" "TESSERA_AB_ROW_PERSISTENT=0"; do
    ab "$v" "--op rmsnorm --dtype f16 --numerics fast 8192 8192 32768 4096"
  done
} >"$OUT/ab.txt" 2>&1
for t in f16 bf16; do
  timeout 30 "$B" --dtype "$t" --numerics fast 8192 8192 32768 4096 1024 65536 >"$OUT/full_$t.txt" 2>&1
  echo "rc=$?" >>"$OUT/full_$t.txt"
done
PYTHONUNBUFFERED=1 timeout 50 "$PY" bench/torch_reference.py --rowwise >"$OUT/torch.txt" 2>&1
echo "rc=$?" >>"$OUT/torch.txt"
cat "$OUT/ab.txt"
grep -hE "softmax|rmsnorm|layernorm|rc=" "$OUT"/full_*.txt
grep -E "triton|torch" "$OUT/torch.txt" | grep -v copy
