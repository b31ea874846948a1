#!/usr/bin/env python3
"""Issue 12's criterion from one GPU call's logs (scripts/ab_rowwise.sh writes them).

Reads bench_rowwise's ring tables (full_f16.txt, full_bf16.txt) and torch_reference.py's
(torch.txt) from a folder, and prints, per op, shape and dtype, Triton's ring time over Tessera's
(>= 1: Tessera at least as fast) and torch's; then whether every op at both main shapes in f16 and
bf16 is at or above 1.0x Triton's ring (naming those within 0.5% of it, the runs' noise). Exit
status: 0 when the criterion holds, 1 when it does not, 2 when it cannot be decided: a main
shape's row is missing, or a run failed (an rc= line other than 0, or a bench's WRONG line: it
still prints its time after a wrong result).

  bench/rowwise_verdict.py <folder with full_*.txt and torch.txt>
"""
import pathlib
import re
import sys

OPS = ("softmax", "rmsnorm", "layernorm")
DTYPES = ("f16", "bf16")
MAIN_SHAPES = ("8192x8192", "32768x4096")
LONG_SHAPE = "1024x65536"

TESSERA = re.compile(r"tessera (\w+) (\w+) fast (\d+x\d+)\s+([\d.]+) ms")
REFERENCE = re.compile(r"(triton-ring|triton|torch) (\w+) (\w+) (\d+x\d+)\s+([\d.]+) ms")


FAILED = re.compile(r"^rc=[1-9]|WRONG")


def read(folder):
    """Tessera's and the references' times, and the logs that say a run failed."""
    ours, theirs, failed = {}, {}, []
    for name in [f"full_{dtype}.txt" for dtype in DTYPES] + ["torch.txt"]:
        path = folder / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if FAILED.search(line):
                failed.append(f"{name}: {line.strip()}")
            m = TESSERA.match(line)
            if m:
                ours[(m[1], m[2], m[3])] = float(m[4])
            m = REFERENCE.match(line)
            if m:
                theirs[(m[1], m[2], m[3], m[4])] = float(m[5])
    return ours, theirs, failed


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    folder = pathlib.Path(argv[1])
    ours, theirs, failed = read(folder)
    print("| shape | op | dtype | Tessera ms | Triton ring ms | Triton / Tessera | torch / Tessera |")
    print("|---|---|---|---|---|---|---|")
    missing, below, level = [], [], []
    for shape in MAIN_SHAPES + (LONG_SHAPE,):
        for dtype in DTYPES:
            for op in OPS:
                mine = ours.get((op, dtype, shape))
                ring = theirs.get(("triton-ring", op, dtype, shape))
                torch = theirs.get(("torch", op, dtype, shape))
                if mine is None or ring is None:
                    if shape in MAIN_SHAPES:
                        which = "Tessera's" if mine is None else "Triton's ring"
                        missing.append(f"{op} {dtype} {shape} ({which})")
                    continue
                ratio = ring / mine
                if shape in MAIN_SHAPES and ratio < 1.0:
                    below.append(f"{op} {dtype} {shape} ({ratio:.3f}x)")
                elif shape in MAIN_SHAPES and ratio < 1.005:
                    level.append(f"{op} {dtype} {shape} ({ratio:.3f}x)")
                torch_ratio = f"{torch / mine:.2f}" if torch else "-"
                print(f"| {shape} | {op} | {dtype} | {mine:.4f} | {ring:.4f} | {ratio:.3f} | "
                      f"{torch_ratio} |")
    if failed:
        print("criterion not decided: a run failed: " + "; ".join(failed))
        return 2
    if missing:
        print("criterion not decided: no time for " + ", ".join(missing))
        return 2
    if below:
        print("criterion NOT met (>= 1.0x Triton's ring at both main shapes, f16 and bf16): "
              + ", ".join(below))
        return 1
    print("criterion met: every op at both main shapes in f16 and bf16 is at or above 1.0x "
          "Triton's ring")
    if level:
        print("within 0.5% of Triton's ring (the runs' noise): " + ", ".join(level))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
