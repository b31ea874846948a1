#!/usr/bin/env bash
# Builds here (Release, libstdc++ linked in, stripped) and packs what the GPU machine runs into
# .devbin/: the GPU tests, examples, benchmarks and tools, plus gpu_tests.txt (the command of each
# CTest test labelled gpu, one a line). Then, on the GPU machine: OUT=... scripts/gpu_check.sh --prebuilt .devbin
# Building here saves the GPU machine's time; its own compiler is never needed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-dev}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_STATIC_RUNTIME=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
rm -rf .devbin && mkdir -p .devbin
# The list of GPU tests as commands (scripts/list_gpu_tests.py).
ctest --test-dir "$build" -L gpu --show-only=json-v1 |
  python3 scripts/list_gpu_tests.py --relocate "$(cd "$build" && pwd)" .devbin >.devbin/gpu_tests.txt
# What those commands run, and every example, benchmark and tool (the CPU-only test programs stay:
# the run carries at most 64 MiB).
{
  grep -o '\.devbin/[^ ]*' .devbin/gpu_tests.txt | sed "s|^\.devbin/|$build/|"
  for dir in examples bench tools; do
    if [ -d "$build/$dir" ]; then
      find "$build/$dir" -type f -perm -u+x ! -name '*.cmake' ! -name '*.sh'
    fi
  done
} | sort -u | while read -r exe; do
  rel=${exe#"$build"/}
  mkdir -p ".devbin/$(dirname "$rel")"
  cp "$exe" ".devbin/$rel"
done
# What was built, for the logs of the run (the GPU machine's copy of .git may be older).
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!.devbin' || echo '+uncommitted changes')" \
  >.devbin/commit.txt
echo "packed $(find .devbin -type f | wc -l) files, $(du -sh .devbin | cut -f1), $(wc -l <.devbin/gpu_tests.txt) GPU tests"
