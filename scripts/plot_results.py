#!/usr/bin/env python3
"""Plots a benchmark results table (bench/results/*.md, or a table a device script writes): for
each table with a ratio column ("ours / anchor" in its header), an SVG beside the file with
  - each workload's ratio to its anchor (a bar; the line at 1 is parity), and
  - a roofline: each workload's throughput (the ratio's numerator column) as a fraction of the
    machine's roof (--peak-gbs for GB/s tables, --peak-tflops for TFLOP/s tables; the unit is
    read from the table's header or the lines just above it), or, where the table has one, the
    column "<ours> % of roof" as it is (a decode step's bytes over the bandwidth, say).
The SVG is written by hand (no plotting package), so the same picture comes out on every machine.

    python3 scripts/plot_results.py bench/results/FILE.md [--peak-gbs 4300] [--peak-tflops 989]
writes FILE.1.svg, FILE.2.svg, ... (one per table) and prints their names.
"""

import argparse
import html
import os
import re
import sys


def tables(lines):
    """(context lines above, header cells, rows of cells) for each markdown table."""
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$",
                                                                       lines[i + 1].strip()):
            cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]
            header, rows, j = cells(lines[i]), [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(cells(lines[j]))
                j += 1
            yield lines[max(0, i - 4):i], header, rows
            i = j
        else:
            i += 1


def number(cell):
    m = re.match(r"^[~≈]?\s*([0-9]+(?:\.[0-9]+)?)", cell.replace(",", ""))
    return float(m.group(1)) if m else None


def find_column(header, name):
    name = name.strip().lower()
    for k, h in enumerate(header):
        if h.lower() == name:
            return k
    for k, h in enumerate(header):
        if name in h.lower():
            return k
    return None


def bars(title, labels, values, line_at, line_label, x_max, fmt):
    """One horizontal bar chart as SVG elements, and its height."""
    row, left, width = 18, 260, 420
    out = [f'<text x="10" y="16" font-weight="bold">{html.escape(title)}</text>']
    y0 = 28
    for k, (label, v) in enumerate(zip(labels, values)):
        y = y0 + k * row
        out.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{html.escape(label)}</text>')
        if v is None:
            continue
        w = max(1.0, min(v, x_max) / x_max * width)
        color = "#2b8a3e" if v >= line_at else "#c92a2a"
        out.append(f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{row - 5}" fill="{color}"/>')
        out.append(f'<text x="{left + w + 4:.1f}" y="{y + 13}">{fmt(v)}</text>')
    x = left + line_at / x_max * width
    bottom = y0 + len(labels) * row
    out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{bottom}" stroke="black" '
               f'stroke-dasharray="4,3"/>')
    out.append(f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">'
               f'{html.escape(line_label)}</text>')
    return out, bottom + 24


def plot(context, header, rows, peaks):
    ratio_col = next((k for k, h in enumerate(header) if " / " in h), None)
    if ratio_col is None or not rows:
        return None
    ours_name, anchor_name = [s.strip() for s in header[ratio_col].split(" / ", 1)]
    ours_col = find_column(header, ours_name)
    labels = [r[0] for r in rows]
    ratios = [number(r[ratio_col]) if ratio_col < len(r) else None for r in rows]
    text = " ".join(header) + " " + " ".join(context)
    unit = "GB/s" if "GB/s" in text else "TFLOP/s" if "TFLOP" in text else None
    parts, height = bars(f"{header[ratio_col]}: ratio to the anchor ({anchor_name})", labels,
                         ratios, 1.0, "parity (1.0)",
                         max([1.2] + [v * 1.15 for v in ratios if v]), lambda v: f"{v:.2f}")
    roof_col = next((k for k, h in enumerate(header)
                     if "% of roof" in h and ours_name.lower() in h.lower()), None)
    if roof_col is not None:
        fractions = [number(r[roof_col]) / 100 if roof_col < len(r) and number(r[roof_col])
                     is not None else None for r in rows]
        more, h2 = bars(header[roof_col], labels, fractions, 1.0, "roof (100%)", 1.15,
                        lambda v: f"{100 * v:.1f}%")
        parts.append(f'<g transform="translate(0,{height})">')
        parts += more
        parts.append("</g>")
        height += h2
    elif ours_col is not None and unit in peaks:
        peak = peaks[unit]
        fractions = [number(r[ours_col]) / peak if ours_col < len(r) and number(r[ours_col])
                     else None for r in rows]
        more, h2 = bars(f"{header[ours_col]} against the roof ({peak:g} {unit})", labels,
                        fractions, 1.0, f"roof: {peak:g} {unit}", 1.15,
                        lambda v: f"{100 * v:.0f}%")
        parts.append(f'<g transform="translate(0,{height})">')
        parts += more
        parts.append("</g>")
        height += h2
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="760" height="%d" '
            'font-family="sans-serif" font-size="11">\n<rect width="100%%" height="100%%" '
            'fill="white"/>\n%s\n</svg>\n' % (height + 10, "\n".join(parts)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--peak-gbs", type=float, default=4300,
                    help="the memory roof, GB/s (default: the H200's measured copy bandwidth)")
    ap.add_argument("--peak-tflops", type=float, default=989,
                    help="the compute roof, TFLOP/s (default: the H200's dense bf16 peak)")
    args = ap.parse_args()
    peaks = {"GB/s": args.peak_gbs, "TFLOP/s": args.peak_tflops}
    for path in args.files:
        with open(path) as f:
            lines = f.read().splitlines()
        n = 0
        for context, header, rows in tables(lines):
            svg = plot(context, header, rows, peaks)
            if svg is None:
                continue
            n += 1
            out = f"{os.path.splitext(path)[0]}.{n}.svg"
            with open(out, "w") as f:
                f.write(svg)
            print(f"plot_results: {out}")
        if n == 0:
            print(f"plot_results: {path}: no table with an 'ours / anchor' column")
    return 0


if __name__ == "__main__":
    sys.exit(main())
