#!/usr/bin/env bash
# Is the row-wise gap to Triton at 32768x4096 the kernel or how each side is timed? One GPU call:
# bench_rowwise in its ring (launches back to back, no flush) and with --flush-l2 (as do_bench
# times Triton), Triton both ways (torch_reference.py --rowwise --back-to-back), ncu's duration of
# 8 launches in a row with neither clocks locked nor caches flushed, and bench_launch with
# programmatic launch on and off (issue 11's back-to-back cost). Logs packed into
# $OUT/rowwise_timing.tgz (the device tool brings back at most 8 files).
#   OUT=dir BUILD_DIR=build-gpu scripts/rowwise_timing.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}/rowwise_timing
build=${BUILD_DIR:-build-gpu}
PY=${PY:-/opt/torch/.venv/bin/python3}
command -v "$PY" >/dev/null || PY=python3
mkdir -p "$OUT"
export TESSERA_QUIET=1
# Triton on the GPU while the benches build on the CPUs.
(timeout 200 "$PY" bench/torch_reference.py --rowwise --back-to-back >"$OUT/triton.txt" 2>&1
  echo "rc=$?" >>"$OUT/triton.txt") &
{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
  >"$OUT/configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target bench_rowwise bench_launch >"$OUT/build.log" 2>&1
build_rc=$?
wait
[ $build_rc = 0 ] || {
  echo "build FAILED (see build.log)"
  exit 1
}
B=$build/bench/bench_rowwise
shapes="32768 4096 8192 8192"
for dtype in f16 bf16; do
  timeout 60 "$B" --dtype "$dtype" --numerics fast $shapes >"$OUT/ring_$dtype.txt" 2>&1
  echo "rc=$?" >>"$OUT/ring_$dtype.txt"
  timeout 90 "$B" --flush-l2 --dtype "$dtype" --numerics fast $shapes >"$OUT/flushed_$dtype.txt" 2>&1
  echo "rc=$?" >>"$OUT/flushed_$dtype.txt"
done
for op in rmsnorm softmax; do
  timeout 60 ncu --clock-control none --cache-control none -k "regex:$op" -c 8 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$B" --op "$op" --dtype f16 --numerics fast 32768 4096 >"$OUT/ncu_$op.txt" 2>&1
  echo "rc=$?" >>"$OUT/ncu_$op.txt"
done
for pdl in 1 0; do
  TESSERA_PDL=$pdl timeout 60 "$build/bench/bench_launch" >"$OUT/launch_pdl$pdl.txt" 2>&1
  echo "rc=$?" >>"$OUT/launch_pdl$pdl.txt"
done
grep -hE "32768|8192x8192|rc=" "$OUT"/triton.txt "$OUT"/ring_*.txt "$OUT"/flushed_*.txt
grep -hE "duration|dram__bytes" "$OUT"/ncu_*.txt
grep -hE "x raw|µs|us " "$OUT"/launch_pdl*.txt | head -30
# Non-zero when a bench's own check failed (it exits 1 on a wrong element) or a run timed out.
failed=0
grep -qE "^rc=[1-9]" "$OUT"/*.txt && failed=1
tar czf "$OUT.tgz" -C "$(dirname "$OUT")" rowwise_timing && rm -rf "$OUT"
exit $failed
