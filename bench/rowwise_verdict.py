#!/usr/bin/env python3
"""Issue 12's criterion from one GPU call's logs (scripts/ab_rowwise.sh writes them).

Reads bench_rowwise's ring tables (full_f16.txt, full_bf16.txt) and torch_reference.py's
(torch.txt) from a folder, and prints, per op, shape and dtype, Triton's ring time over Tessera's
(>= 1: Tessera at least as fast) and torch's; then whether every op at both main shapes in f16 and
bf16 is at or above 1.0x Triton's ring. Exit status: 0 when the criterion holds, 1 when it does
not, 2 when a row is missing (a run failed or was not made).

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


def read(folder):
    ours, theirs = {}, {}
    for dtype in DTYPES:
        path = folder / f"full_{dtype}.txt"
        if path.exists():
            for line in path.read_text().splitlines():
                m = TESSERA.match(line)
                if m:
                    ours[(m[1], m[2], m[3])] = float(m[4])
    path = folder / "torch.txt"
    if path.exists():
        for line in path.read_text().splitlines():
            m = REFERENCE.match(line)
            if m:
                theirs[(m[1], m[2], m[3], m[4])] = float(m[5])
    return ours, theirs


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    folder = pathlib.Path(argv[1])
    ours, theirs = read(folder)
    print("| shape | op | dtype | Tessera ms | Triton ring ms | Triton / Tessera | torch / Tessera |")
    print("|---|---|---|---|---|---|---|")
    missing, below = [], []
    for shape in MAIN_SHAPES + (LONG_SHAPE,):
        for dtype in DTYPES:
            for op in OPS:
                mine = ours.get((op, dtype, shape))
                ring = theirs.get(("triton-ring", op, dtype, shape))
                torch = theirs.get(("torch", op, dtype, shape))
                if mine is None or ring is None:
                    if shape in MAIN_SHAPES:
                        missing.append(f"{op} {dtype} {shape}")
                    continue
                ratio = ring / mine
                if shape in MAIN_SHAPES and ratio < 1.0:
                    below.append(f"{op} {dtype} {shape} ({ratio:.3f}x)")
                torch_ratio = f"{torch / mine:.2f}" if torch else "-"
                print(f"| {shape} | {op} | {dtype} | {mine:.4f} | {ring:.4f} | {ratio:.3f} | "
                      f"{torch_ratio} |")
    if missing:
        print("criterion not decided: no ring time for " + ", ".join(missing))
        return 2
    if below:
        print("criterion NOT met (>= 1.0x Triton's ring at both main shapes, f16 and bf16): "
              + ", ".join(below))
        return 1
    print("criterion met: every op at both main shapes in f16 and bf16 is at or above 1.0x "
          "Triton's ring")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
