#!/usr/bin/env python3
"""Turns the raw log of a device run of the benchmarks (scripts/gpu_session.sh's bench.txt: our
benches and bench/torch_reference.py, each under a "===== NAME: command" line) into the results
tables of bench/results/: each of our rows beside its anchor measured in the same run, with the
ratio, so scripts/plot_results.py can draw them.

    python3 scripts/bench_tables.py bench.txt results.md [--title "..."]

Pairs (ours -> anchor): attention -> SDPA on cuDNN (and flash), GEMM -> torch.matmul (cuBLAS),
the GEMM run as sm_80 code -> the same cuBLAS rows, row-wise -> Triton (and torch), launch costs ->
the raw driver. A row with no anchor in the log keeps an empty anchor cell rather than vanishing,
so a missing anchor shows. Exits non-zero when the log holds none of our rows (a run that failed).
"""

import argparse
import re
import sys

# "tessera gemm f16 4096x4096x4096     0.1847 ms      744.2 TFLOP/s"
TIMED = re.compile(r"^(tessera|torch|triton) (.+?)\s+([0-9.]+) ms\s+([0-9.]+) (TFLOP/s|GB/s)\s*$")
# "tessera launch, back to back      8.99 us  (2.62x raw)" and "raw launch, back to back  3.44 us"
LAUNCH = re.compile(r"^(tessera|raw) (launch \+ sync|launch, back to back|chain of 8, one sync "
                    r"\(per kernel\)|graph of 8, replayed \(per kernel\)|graph of 8 error-checked "
                    r"\(per k\.\))\s+([0-9.]+) us")
# A row whose raw anchor is another row's: a graph of kernels that check their accesses beside
# the raw graph of plain kernels (the driver has no error reports to copy).
LAUNCH_ANCHOR = {"graph of 8 error-checked (per k.)": "graph of 8, replayed (per kernel)"}


def sections(lines):
    """{section name: [lines]} from the "===== name: command" markers."""
    out, name = {}, None
    for line in lines:
        m = re.match(r"^===== ([^:]+):", line)
        if m:
            name = m.group(1).strip()
            out.setdefault(name, [])
        elif name is not None:
            out[name].append(line.rstrip("\n"))
    return out


def timed_rows(lines):
    """[(who, name, value, unit)] of the timed rows in a section."""
    rows = []
    for line in lines:
        m = TIMED.match(line.strip())
        if m:
            rows.append((m.group(1), re.sub(r"\s+", " ", m.group(2)), float(m.group(4)),
                         m.group(5)))
    return rows


def fmt(v):
    return "" if v is None else f"{v:.1f}"


def ratio(a, b):
    return "" if a is None or not b else f"{a / b:.2f}"


def table(title, unit, ours_name, anchors, rows):
    """A markdown table: workload, ours, each anchor, ours / first anchor."""
    head = ["workload", f"{ours_name} {unit}"] + [f"{a} {unit}" for a in anchors]
    head.append(f"{ours_name} / {anchors[0]}")
    out = [f"### {title}", "", "| " + " | ".join(head) + " |",
           "|" + "---|" * len(head)]
    for label, ours, values in rows:
        cells = [label, fmt(ours)] + [fmt(v) for v in values] + [ratio(ours, values[0])]
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def attention(secs):
    ours = [r for r in timed_rows(secs.get("attention", [])) if r[0] == "tessera"]
    ref = {r[1]: r[2] for r in timed_rows(secs.get("torch-attention", []))}
    rows = []
    for _, name, value, _ in ours:
        shape = name.removeprefix("attention ")
        rows.append((shape, value, [ref.get("sdpa cudnn " + shape), ref.get("sdpa flash " + shape)]))
    return table("Attention forward (TFLOP/s, causal counts half the FLOPs)", "TFLOP/s",
                 "Tessera", ["cuDNN", "FA2 (SDPA flash)"], rows) if rows else []


def gemm(secs, section, title):
    ours = [r for r in timed_rows(secs.get(section, [])) if r[0] == "tessera"]
    ref = {r[1]: r[2] for r in timed_rows(secs.get("torch-gemm", []))}
    rows = []
    for _, name, value, _ in ours:
        # "gemm+bias+relu bf16 4096x4096x4096", "gemm tuned f16 4000x3000x2000 (128x256)",
        # "gemm f16 (tile 128x128x32) 4096x4096x4096"
        # (the shape is the one outside parentheses: a tile "(tile 128x128x32)" is not a shape)
        m = re.match(r"^gemm(\+\S+)?(?: tuned| split-K \d+ \d+x\d+x\d+)? (f16|bf16|f32|tf32) "
                     r"(?:.* )?(\d+x\d+x\d+)\s*$",
                     re.sub(r"\([^)]*\)", "", name).strip())
        if not m:
            continue
        anchor = f"matmul{m.group(1) or ''} {m.group(2)} {m.group(3)}"
        rows.append((name, value, [ref.get(anchor)]))
    return table(title, "TFLOP/s", "Tessera", ["cuBLAS"], rows) if rows else []


def rowwise(secs):
    ours = [r for r in timed_rows(secs.get("rowwise", [])) if r[0] == "tessera"]
    ref = {(r[0], r[1]): r[2] for r in timed_rows(secs.get("torch-rowwise", []))}
    rows = []
    for _, name, value, _ in ours:
        # "softmax f16 fast 8192x8192" against "triton softmax f16 8192x8192"
        words = name.split()
        key = " ".join(w for w in words if w not in ("fast", "exact"))
        rows.append((name, value, [ref.get(("triton", key)), ref.get(("torch", key))]))
    return table("Row-wise (GB/s, bytes read + written once)", "GB/s", "Tessera",
                 ["Triton", "torch"], rows) if rows else []


def launch(secs):
    got = {}
    for line in secs.get("launch", []):
        m = LAUNCH.match(line.strip())
        if m:
            got[(m.group(1), m.group(2))] = float(m.group(3))
    rows = []
    for what in ("launch + sync", "launch, back to back", "chain of 8, one sync (per kernel)",
                 "graph of 8, replayed (per kernel)", "graph of 8 error-checked (per k.)"):
        ours, raw = got.get(("tessera", what)), got.get(("raw", LAUNCH_ANCHOR.get(what, what)))
        if ours is None:
            continue
        # As a speed ratio (raw time / ours), so 1.0 is parity and more is better, like the others.
        rows.append((what, ours, raw, "" if raw is None else f"{raw / ours:.2f}"))
    if not rows:
        return []
    out = ["### Launch cost (us per kernel, 1024 floats)", "",
           "| workload | Tessera us | raw driver us | Tessera / raw (speed: raw time / ours) |",
           "|---|---|---|---|"]
    out += [f"| {w} | {o:.2f} | {fmt(r) if r is None else f'{r:.2f}'} | {s} |" for w, o, r, s in rows]
    return out + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log")
    ap.add_argument("out")
    ap.add_argument("--title", default="Benchmarks beside their anchors, one device run")
    args = ap.parse_args()
    with open(args.log) as f:
        lines = f.read().splitlines()
    secs = sections(lines)
    device = next((l[2:].strip() for l in lines if l.startswith("# NVIDIA")), "unknown GPU")
    body = (attention(secs) + gemm(secs, "gemm", "GEMM, Hopper lowering (TFLOP/s)") +
            gemm(secs, "gemm-splitk", "GEMM, split-K into an Accum f32 sum, then a cast (TFLOP/s)") +
            gemm(secs, "gemm-sm80", "GEMM, the Ampere lowering run as sm_80 code (TFLOP/s)") +
            rowwise(secs) + launch(secs))
    if not body:
        print(f"bench_tables: {args.log}: none of our rows found", file=sys.stderr)
        return 1
    skipped = [l for l in lines if l.startswith("skipped ") or re.search(r" rc=[1-9]", l)]
    with open(args.out, "w") as f:
        f.write(f"## {args.title}\n\n{device}. Generated by scripts/bench_tables.py from "
                f"{args.log}.\n\n")
        if skipped:
            f.write("Not measured or failed in this run: " + "; ".join(skipped) + "\n\n")
        f.write("\n".join(body) + "\n")
    print(f"bench_tables: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
