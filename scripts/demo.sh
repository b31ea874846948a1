#!/usr/bin/env bash
# Builds Tessera and runs every example: on a GPU when one is usable, else on the CPU backend (the
# library chooses; TESSERA_DEVICE=cpu|cuda|cuda:N overrides). Installs missing build
# dependencies with apt-get when run as root. Prints one line per example and exits non-zero if
# any example fails. BUILD_DIR (default build) selects the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# examples/CMakeLists.txt writes the list, so it is kept in one place.
mapfile -t examples < "$build/examples/examples.txt"
cmake --build "$build" -j "$(nproc)" --target "${examples[@]}"

logs="$build/examples/logs"
mkdir -p "$logs"
failed=()
for example in "${examples[@]}"; do
  log="$logs/$example.txt"
  start=${EPOCHREALTIME//[.,]/}  # microseconds
  if "$build/examples/$example" >"$log" 2>&1; then status=ok; else status=FAILED; failed+=("$example"); fi
  ms=$(((${EPOCHREALTIME//[.,]/} - start) / 1000))
  # The example's own last line says what it checked and on which device.
  printf '%-6s %-12s %5d ms  %s\n' "$status" "$example" "$ms" "$(tail -n 1 "$log")"
  if [ "$status" != ok ]; then sed 's/^/    /' "$log" | tail -n 20; fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "demo: ${#failed[@]} of ${#examples[@]} examples failed: ${failed[*]} (output in $logs)" >&2
  exit 1
fi
echo "demo: all ${#examples[@]} examples passed (output in $logs)"
