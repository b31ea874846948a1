#!/usr/bin/env bash
# Issue 11's GPU call: bench_launch (each row beside the raw driver in the same run, the launch
# call split into its phases and the queueing into the driver's call and the marks) once per
# variant, the variants in turn (the spread between two runs of one variant is the noise). The
# default: the stream counter (host memory each mark has the stream write, gpu_timeline.hpp) on,
# off, on, off. Logs under $OUT; non-zero when a run fails.
#   OUT=dir BUILD_DIR=build-gpu [LAUNCH_VARIANTS="base VAR=value ..."] scripts/launch_ab.sh
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
n=0
for variant in ${LAUNCH_VARIANTS:-base TESSERA_AB_STREAM_COUNTER=0 base TESSERA_AB_STREAM_COUNTER=0}; do
  n=$((n + 1))
  log="$OUT/launch_$n.txt"
  if [ "$variant" = base ]; then
    timeout 60 "$build/bench/bench_launch" >"$log" 2>&1 || failed=1
  else
    env "$variant" timeout 60 "$build/bench/bench_launch" >"$log" 2>&1 || failed=1
  fi
  echo "== run $n: $variant"
  grep -vE "^#" "$log"
done
exit $failed
