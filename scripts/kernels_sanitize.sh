#!/usr/bin/env bash
# Issue 14: the kernel library's GPU tests (kernels_tests, one binary) under memcheck and racecheck
# in one call. Run whole, the binary takes ~240 s unsanitized, mostly NVRTC on one host core; here
# it is split into SHARDS gtest shards per tool, all run at once over the machine's cores, sharing
# one kernel cache. Each shard's log is under $OUT, with a tally in $OUT/summary.txt. Exits non-zero
# when the build fails, a shard fails or times out, a shard ran no test, or a sanitizer reports an
# error or a hazard.
# BUDGET_S: the whole run's limit (the caller's); each shard's limit is then cut to what is left
# after the build, so that no shard outlives the caller's own timeout (which would not kill them).
#   OUT=dir [SHARDS=6] [SHARD_TIMEOUT=420] [BUDGET_S=s] scripts/kernels_sanitize.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
build=${BUILD_DIR:-build-gpu}
shards=${SHARDS:-6}
limit=${SHARD_TIMEOUT:-420}
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

t0=$SECONDS
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$build" -j "$(nproc)" --target kernels_tests; } >"$OUT/build.log" 2>&1; then
  note "FAIL  build (see build.log)"
  exit 1
fi
note "PASS  build ($((SECONDS - t0)) s)"

if [ -n "${BUDGET_S:-}" ] && [ $((BUDGET_S - SECONDS - 15)) -lt "$limit" ]; then
  limit=$((BUDGET_S - SECONDS - 15))
  [ "$limit" -gt 0 ] || { note "FAIL  no time left for the shards after the build"; exit 1; }
fi
case $build in /*) cache=$build/jit-cache ;; *) cache=$PWD/$build/jit-cache ;; esac
export TESSERA_DEVICE=cuda TESSERA_TEST_DEVICE=cuda TESSERA_CACHE_DIR=$cache
tests=$build/tests/kernels/kernels_tests
t0=$SECONDS
for tool in memcheck racecheck; do
  for ((i = 0; i < shards; i++)); do
    (env GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" timeout -k 10 "$limit" \
      compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 20 "$tests" \
      >"$OUT/$tool.$i.log" 2>&1
     echo "rc=$?" >>"$OUT/$tool.$i.log") &
  done
done
wait

failed=0
for tool in memcheck racecheck; do
  passed=0 bad=0
  for ((i = 0; i < shards; i++)); do
    log=$OUT/$tool.$i.log
    n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    # A clean run says so itself: memcheck "0 errors", racecheck "0 hazards" (warnings too).
    if [ $tool = memcheck ]; then said="ERROR SUMMARY: 0 errors"; else said="RACECHECK SUMMARY: 0 hazards"; fi
    clean=$(grep -c "$said" "$log")
    dirty=$(grep -cE "SUMMARY: [1-9]" "$log")
    if grep -q '^rc=0$' "$log" && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$clean" -gt 0 ] &&
      [ "$dirty" = 0 ]; then
      passed=$((passed + n))
    else
      bad=$((bad + 1))
      note "FAIL  $tool shard $i: $(grep -E '^rc=|SUMMARY' "$log" | tr '\n' ' ')"
    fi
  done
  [ $bad = 0 ] || failed=1
  note "$([ $bad = 0 ] && echo PASS || echo FAIL)  kernels_tests under $tool: $passed tests passed in the $((shards - bad)) clean shard(s) of $shards, $bad shard(s) failed ($((SECONDS - t0)) s for both tools)"
done
exit $failed
