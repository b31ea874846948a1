#!/usr/bin/env bash
# Instructions a launch and a sync cost on the host (CPU backend, bench_launch_host under
# callgrind): the inclusive instruction counts of launch_chained() / sync_finished() and of the
# launch's phases, each over its call count. Instruction counts hold still on a shared machine,
# where wall time does not. Usage: scripts/launch_instructions.sh [build dir=build] [launches=640]
set -euo pipefail
build=${1:-build}
calls=${2:-640}
out=$(mktemp -d)
TESSERA_DEVICE=cpu valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
  "$build/bench/bench_launch_host" "$calls" >"$out/log" 2>&1
# Per function: inclusive Ir and calls, from the callgrind file's call records.
callgrind_annotate --inclusive=yes --tree=caller --threshold=100 --auto=no "$out/cg" 2>/dev/null >"$out/tree"
python3 - "$out/tree" <<'PY'
import re, sys
rows = {}
cur = None
# In --tree=caller output, a function's own line is unindented ("Ir  * file:function"), its
# callers' lines above it are "Ir < file:caller (Nx)".
calls = {}
pending = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?<\s+.*\(([\d,]+)x\)", line)
    if m:
        pending.append(int(m.group(2).replace(",", "")))
        continue
    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?\*\s+(.*?)\s*(\[[^\]]*\])?$", line)
    if m:
        rows[m.group(2).strip()] = (int(m.group(1).replace(",", "")), sum(pending))
        pending = []
        continue
    if not line.strip():
        pending = []
wanted = [("launch (launch_chained)", "launch_chained"),
          ("sync of a finished launch (sync_finished)", "sync_finished"),
          ("  check_launch", "tessera::runtime::check_launch("),
          ("  CheckedLaunch::start", "tessera::runtime::CheckedLaunch::start()"),
          ("    PendingAccess::predecessors", "PendingAccess::predecessors(std::vector<tessera::runtime::StorageUse"),
          ("    PendingAccess::record", "PendingAccess::record("),
          ("    CpuBackend start (queueing)", "start(tessera::backend::LaunchToStart"),
          ("  Completion::wait", "tessera::runtime::Completion::wait()"),
         ]
for label, key in wanted:
    hits = [(k, v) for k, v in rows.items() if key in k and v[1] > 0]
    if not hits:
        print(f"{label:45s} (not found)")
        continue
    k, (ir, n) = max(hits, key=lambda kv: kv[1][0])
    print(f"{label:45s} {ir / n:10.0f} instructions a call ({n} calls)")
PY
rm -rf "$out"
