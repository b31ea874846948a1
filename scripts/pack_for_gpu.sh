#!/usr/bin/env bash
# Builds here (Release, libstdc++ linked in, stripped) and packs what the GPU machine runs into
# .devbin/: every executable, plus gpu_tests.txt (the command of each CTest test labelled gpu,
# one a line). Then, on the GPU machine: OUT=... scripts/gpu_check.sh --prebuilt .devbin
# Building here saves the GPU machine's time; its own compiler is never needed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-dev}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_STATIC_RUNTIME=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
rm -rf .devbin && mkdir -p .devbin
for dir in tests examples bench tools; do
  [ -d "$build/$dir" ] || continue
  find "$build/$dir" -type f -perm -u+x ! -name '*.cmake' ! -name '*.sh' | while read -r exe; do
    rel=${exe#"$build"/}
    mkdir -p ".devbin/$(dirname "$rel")"
    cp "$exe" ".devbin/$rel"
  done
done
# Every example's data files (none yet) and the list of GPU tests as commands.
ctest --test-dir "$build" -L gpu --show-only=json-v1 | python3 -c '
import json, sys, shlex
build = sys.argv[1]
for t in json.load(sys.stdin)["tests"]:
    cmd = [c.replace(build + "/", ".devbin/") for c in t["command"]]
    print(t["name"] + "\t" + shlex.join(cmd))
' "$(cd "$build" && pwd)" >.devbin/gpu_tests.txt
echo "packed $(find .devbin -type f | wc -l) files, $(du -sh .devbin | cut -f1), $(wc -l <.devbin/gpu_tests.txt) GPU tests"
