#!/usr/bin/env python3
"""The engine's speed table from scripts/qwen3_gpu.sh's log (qwen3_bench.txt): Tessera beside
PyTorch eager, tokens/s and each decode step's fraction of the bandwidth roofline, as a markdown
table (the form of bench/results), then its plot (scripts/plot_results.py) beside it.

    python3 scripts/qwen3_table.py OUT/qwen3_bench.txt OUT/qwen3_results.md
"""

import os
import re
import subprocess
import sys


def main(log_path, out_path):
    rows = {}  # workload -> {"ours": tokens/s, "torch": ..., "ours_roof": %, "torch_roof": %}
    bandwidth = None
    for line in open(log_path):
        who = "ours" if line.startswith("qwen3 bench") else "torch" if line.startswith(
            "torch_eager") else None
        if who is None:
            continue
        if m := re.search(r"copy bandwidth (\d+) GB/s", line):
            bandwidth = m.group(1)
        elif m := re.search(r"prefill of (\d+) tokens .* = (\d+) tokens/s", line):
            rows.setdefault(f"prefill {m.group(1)} tokens", {})[who] = m.group(2)
        elif m := re.search(r"decode batch (\d+): .* = ([\d.]+) tokens/s", line):
            row = rows.setdefault(f"decode batch {m.group(1)}", {})
            row[who] = m.group(2)
            if r := re.search(r"([\d.]+)% of the (?:bandwidth )?roofline", line):
                row[who + "_roof"] = r.group(1)
        elif m := re.search(r"([\d.]+)% of the bandwidth roofline", line):  # ours: its own line
            rows.setdefault("decode batch 1", {})["ours_roof"] = m.group(1)
    lines = [
        "# Qwen3-0.6B shapes (random weights), bf16: the Tessera engine beside PyTorch eager",
        "",
        f"Decode roofline: weights + the KV cache read per step over the copy bandwidth "
        f"({bandwidth or '?'} GB/s, measured by torch in the same run).",
        "",
        "| workload | Tessera tokens/s | torch eager tokens/s | Tessera / torch | "
        "Tessera % of roof | torch % of roof |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        ratio = (f"{float(r['ours']) / float(r['torch']):.2f}" if r.get("ours") and r.get("torch")
                 else "")
        lines.append(f"| {name} | {r.get('ours', '')} | {r.get('torch', '')} | {ratio} | "
                     f"{r.get('ours_roof', '')} | {r.get('torch_roof', '')} |")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[4:]))
    plot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plot_results.py")
    return subprocess.call([sys.executable, plot, out_path])


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
