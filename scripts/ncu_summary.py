#!/usr/bin/env python3
"""Summarizes an `ncu --csv --metrics ...` log (one row per kernel launch and metric): the launches
in order with their duration, DRAM traffic and launch shape, then the totals by kernel name, the
largest first. Used by scripts/qwen3_gpu.sh (QWEN3_NCU=1) for a decode step's kernels.

  python3 scripts/ncu_summary.py qwen3_ncu.csv [--order N]   (N: launches listed in order, 40)
"""
import argparse
import csv
import re
import sys
from collections import OrderedDict


def short_name(name):
    """A kernel's name without its parameter list, e.g. 'tsr_linear_rows_rms_whole_3f2a'."""
    return re.sub(r"\(.*$", "", name).strip()


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


unknown = set()  # metrics in a unit read() does not convert


def read(path):
    """{launch id: {'name': ..., metric: value}} in launch order (ncu's long CSV form)."""
    launches = OrderedDict()
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages start with ==
    for row in csv.DictReader(lines):
        launch = launches.setdefault(row["ID"], {"name": short_name(row["Kernel Name"])})
        value = number(row["Metric Value"])
        if value is None:
            continue
        unit = row.get("Metric Unit", "")
        metric = row["Metric Name"]
        # Durations to microseconds and traffic to bytes, whatever unit ncu chose (qwen3_gpu.sh
        # asks for base units: nsecond, byte).
        # (ncu 2025's --print-units base writes "ns".)
        scales = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3,
                  "ms": 1e3, "second": 1e6, "s": 1e6, "byte": 1.0,
                  "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
        if unit in scales:
            value *= scales[unit]
        elif unit and unit not in ("", "%", "register/thread", "thread", "block", "warp"):
            unknown.add(f"{metric} in {unit}")
        launch[metric] = value
    return launches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--order", type=int, default=40)
    args = parser.parse_args()
    launches = read(args.csv)
    if not launches:
        print(f"{args.csv}: no kernel launches in the log", file=sys.stderr)
        return 1
    for what in sorted(unknown):
        print(f"{args.csv}: {what}: a unit this script does not convert (taken as is)",
              file=sys.stderr)
    time_key = "gpu__time_duration.sum"
    total = sum(l.get(time_key, 0.0) for l in launches.values())
    print(f"{len(launches)} launches, {total:.1f} us of kernel time (one at a time, as ncu runs them)")
    print(f"\nThe first {args.order} launches in order:")
    print(f"{'us':>7} {'MB read':>8} {'GB/s':>6} {'grid':>6} {'block':>5} {'regs':>4} {'occ%':>5}  kernel")
    for launch in list(launches.values())[: args.order]:
        t = launch.get(time_key, 0.0)
        read_mb = launch.get("dram__bytes_read.sum", 0.0) / 1e6
        print(f"{t:7.2f} {read_mb:8.2f} {read_mb * 1e3 / t if t else 0:6.0f} "
              f"{launch.get('launch__grid_size', 0):6.0f} {launch.get('launch__block_size', 0):5.0f} "
              f"{launch.get('launch__registers_per_thread', 0):4.0f} "
              f"{launch.get('sm__warps_active.avg.pct_of_peak_sustained_active', 0):5.1f}  "
              f"{launch['name']}")
    by_name = OrderedDict()
    for launch in launches.values():
        s = by_name.setdefault(launch["name"], {"n": 0, "us": 0.0, "read": 0.0})
        s["n"] += 1
        s["us"] += launch.get(time_key, 0.0)
        s["read"] += launch.get("dram__bytes_read.sum", 0.0)
    print("\nBy kernel, the most time first:")
    print(f"{'launches':>8} {'us':>8} {'us each':>8} {'share':>6} {'GB/s':>6}  kernel")
    for name, s in sorted(by_name.items(), key=lambda kv: -kv[1]["us"]):
        print(f"{s['n']:8d} {s['us']:8.1f} {s['us'] / s['n']:8.2f} {100 * s['us'] / total:5.1f}% "
              f"{s['read'] / 1e3 / s['us'] if s['us'] else 0:6.0f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
