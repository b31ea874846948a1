#!/usr/bin/env bash
# Profiles one kernel of a program with Nsight Compute on the GPU machine and writes text a reader
# can study elsewhere: the details page (throughput, occupancy, warp stall reasons) and the SASS
# with per-instruction stall samples (CSV). Clocks are left alone (--clock-control none).
#
#   OUT=dir scripts/gpu_profile.sh NAME KERNEL_REGEX SKIP -- program args...
# NAME prefixes the files written under $OUT; SKIP launches of the kernel are let through first
# (warm-up), the next one is profiled.
set -euo pipefail
name=$1 kernel=$2 skip=$3
shift 3
[ "$1" = "--" ] && shift
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
rep=$(mktemp -d)/$name
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
  --set full --import-source no -o "$rep" "$@" >"$OUT/$name.details.txt" 2>&1 || { tail -20 "$OUT/$name.details.txt"; exit 1; }
ncu -i "$rep.ncu-rep" --page details --print-details all >>"$OUT/$name.details.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --print-source sass --csv >"$OUT/$name.sass.csv" 2>&1 || true
echo "profiled $kernel: $(grep -m1 -E 'Duration' "$OUT/$name.details.txt" || true)"
