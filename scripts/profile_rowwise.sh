#!/usr/bin/env bash
# Profiles one row-wise kernel of ours beside Triton's under Nsight Compute, on the GPU machine,
# after gpu_check.sh (or any build) has built bench_rowwise:
#   OUT=dir scripts/profile_rowwise.sh [op] [rows] [cols] [dtype] [numerics]
# Writes $OUT/profile.txt: speed of light, occupancy, launch statistics, warp states, instruction
# mix, for `tessera_<op>_rows` and Triton's `_<op>_rows` on the same shape.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
BUILD_DIR=${BUILD_DIR:-build-gpu}
op=${1:-softmax} rows=${2:-8192} cols=${3:-8192} dtype=${4:-f16} numerics=${5:-fast}
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
  --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis"
{
  echo "===== tessera $op $dtype $numerics ${rows}x${cols}"
  timeout 120 ncu $sections -k "regex:tessera_${op}_rows" --launch-skip 5 -c 1 \
    "$BUILD_DIR/bench/bench_rowwise" --op "$op" --dtype "$dtype" --numerics "$numerics" \
    "$rows" "$cols" 2>&1 | grep -v "^==PROF==" | tail -n 200
  echo "===== triton $op (the first shape of torch_reference --rowwise: 8192x8192 f16)"
  timeout 150 ncu $sections -k "regex:_${op}_rows" --launch-skip 3 -c 1 \
    python3 bench/torch_reference.py --rowwise 2>&1 | grep -v "^==PROF==" | tail -n 200
} >"$OUT/profile.txt" 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|DRAM Throughput|Executed Ipc" "$OUT/profile.txt"
