#!/usr/bin/env bash
# The static checks of .clang-tidy (use-after-move of a tensor handle is an error) over the
# library, the examples and the tests. Needs a configured build folder (compile_commands.json).
#   scripts/tidy.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
TESSERA_NEED_TIDY=1 bash scripts/deps.sh
tidy=$(command -v clang-tidy-16 || command -v clang-tidy)

# First prove the check is live: this file moves a tensor and uses it again.
if "$tidy" -p "$build" --quiet scripts/tidy_probe/use_after_move.cpp >/tmp/tidy_probe.log 2>&1 ||
   ! grep -q "bugprone-use-after-move" /tmp/tidy_probe.log; then
  echo "tidy.sh: clang-tidy did not flag the use-after-move probe; the check is not working" >&2
  cat /tmp/tidy_probe.log >&2
  exit 1
fi

files=$(git ls-files 'src/*.cpp' 'examples/*.cpp' 'tests/*.cpp' 'tools/*.cpp' 'bench/*.cpp' | grep -v '/compile_fail/')
log=$(mktemp)
echo "$files" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet >"$log" 2>&1 || true
# Only the checks of .clang-tidy gate: the project is built by GCC, and clang's own diagnostics
# (e.g. C++20 reversed-operator notes) are not what this step is for.
if grep -E "\[(bugprone|performance)-" "$log"; then
  echo "tidy.sh: clang-tidy found problems (above)" >&2
  exit 1
fi
echo "tidy.sh: clean ($(echo "$files" | wc -l) files)"
