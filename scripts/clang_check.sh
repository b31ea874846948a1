#!/usr/bin/env bash
# CI's second compiler. Builds the library, the examples and the CLI with clang (16 or newer),
# warnings as errors, so a change that only GCC accepts does not land; then runs each example on
# the CPU backend from both builds and checks that clang and GCC traced every kernel into the same
# IR (TESSERA_DUMP=ir): C++ leaves the order of call arguments to the compiler, and the IR, the
# generated CUDA C++ and so the JIT cache key must not depend on it. The tests run once, with GCC
# (scripts/test.sh), to stay within CI's time.
#   scripts/clang_check.sh [gcc-build-dir]   (default: $BUILD_DIR or build, already built)
set -euo pipefail
cd "$(dirname "$0")/.."
gcc_build=${1:-${BUILD_DIR:-build}}
TESSERA_NEED_CLANG=1 bash scripts/deps.sh
clang=$(bash scripts/find_clang.sh) || { echo "clang_check.sh: no clang++ 16 or newer" >&2; exit 1; }
build=${CLANG_BUILD_DIR:-build-clang}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
  "${launcher[@]}" -DTESSERA_WERROR=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF >/dev/null
mapfile -t examples < "$build/examples/examples.txt"
cmake --build "$build" -j "$(nproc)" --target tessera_runtime tessera_cli "${examples[@]}"

# The IR of every kernel an example compiles, as each build traced it.
ir_of() {
  TESSERA_DEVICE=cpu TESSERA_DUMP=ir "$1" 2>&1 >/dev/null |
    awk '/^\/\/ ---- ir ----$/ { on = 1; next } on { print } /^}$/ { on = 0 }'
}
different=0
kernels=0
for example in "${examples[@]}"; do
  ir_of "$gcc_build/examples/$example" >"$build/ir-$example.gcc"
  ir_of "$build/examples/$example" >"$build/ir-$example.clang"
  kernels=$((kernels + $(grep -c '^kernel @' "$build/ir-$example.gcc" || true)))
  if ! diff "$build/ir-$example.gcc" "$build/ir-$example.clang" >"$build/ir-$example.diff"; then
    echo "clang_check.sh: $example: GCC and clang traced different IR:" >&2
    head -n 40 "$build/ir-$example.diff" >&2
    different=1
  fi
done
[ "$different" = 0 ] || exit 1
if [ "$kernels" = 0 ]; then
  echo "clang_check.sh: no example dumped any IR; nothing was compared" >&2
  exit 1
fi
echo "clang_check.sh: $("$clang" --version | head -n 1): the library, the CLI and" \
  "${#examples[@]} examples build warning-free, and their $kernels kernels trace the same IR as" \
  "with GCC"
