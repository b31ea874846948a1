# Sourced by the Qwen3 decode A/B scripts (ab_pdl.sh, ab_decode.sh): what each needs before its
# own tests and rounds.
#   qwen3_ab_setup NAME TARGET...   builds TARGET... (and qwen3_tiny) in $build, makes the random
#                                   Qwen3-0.6B weights in $model unless there, measures the copy
#                                   bandwidth ($bandwidth, GB/s) for the roofline; logs to
#                                   $OUT/NAME_build.log
# Sets: OUT, build (BUILD_DIR, default build-NAME), model (QWEN3_DIR), py (PYTHON), t0.
# shellcheck shell=bash
qwen3_ab_setup() {
  local name=$1
  shift
  OUT=${OUT:-$PWD/gpu-logs}
  mkdir -p "$OUT"
  build=${BUILD_DIR:-build-$name}
  model=${QWEN3_DIR:-/tmp/qwen3-0.6b-random}
  py=${PYTHON:-python3}
  t0=$SECONDS
  local log="$OUT/${name}_build.log"
  { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" -j "$(nproc)" --target qwen3_tiny "$@"; } >"$log" 2>&1
  echo "build rc=$? ($((SECONDS - t0)) s)"
  export TESSERA_DEVICE=cuda TESSERA_CACHE_DIR="$PWD/$build/jit-cache"
  [ -f "$model/config.json" ] ||
    "$py" scripts/qwen3_weights.py --config qwen3-0.6b --out "$model" --device cuda >>"$log" 2>&1
  # The roofline at this GPU's own copy bandwidth (an H100's is ~20% below an H200's).
  bandwidth=$("$py" scripts/qwen3_reference.py --copy-bandwidth --device cuda 2>>"$log" |
    sed -n 's/^torch_eager: copy bandwidth \([0-9]*\) GB\/s.*/\1/p')
  if [ -z "$bandwidth" ]; then
    bandwidth=${QWEN3_BANDWIDTH:-4213}
    echo "copy bandwidth not measured (see $log): the roofline uses $bandwidth GB/s"
  else
    echo "copy bandwidth $bandwidth GB/s"
  fi
}
