#!/usr/bin/env bash
# Issue 11's GPU call: bench_launch (each row beside the raw driver in the same run, the launch
# call split into its phases and the queueing into the driver's call and the marks) with
# programmatic launch on, then off, then on again (the spread between the two "on" runs is the
# noise). Logs under $OUT; non-zero when a run fails.
#   OUT=dir BUILD_DIR=build-gpu scripts/launch_ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
build=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
  >"$OUT/launch_configure.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target bench_launch >"$OUT/launch_build.log" 2>&1 || {
  echo "build FAILED (see launch_build.log)"
  exit 1
}
failed=0
for run in "1 a" "0 b" "1 c"; do
  set -- $run
  TESSERA_PDL=$1 timeout 60 "$build/bench/bench_launch" >"$OUT/launch_pdl$1$2.txt" 2>&1 || failed=1
  echo "== TESSERA_PDL=$1 ($2)"
  grep -vE "^#" "$OUT/launch_pdl$1$2.txt"
done
exit $failed
