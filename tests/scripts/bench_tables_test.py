#!/usr/bin/env python3
"""scripts/bench_tables.py and scripts/plot_results.py on a device log written here: each of our
rows lands beside the anchor of the same workload with the right ratio, a row whose anchor is
missing keeps an empty cell, a failed step is named, and an empty log is refused."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                                   "../../scripts")

LOG = """\
===== attention: build-gpu/bench/bench_attention
tessera: compiling flash_attention_fwd for sm_90a (once: later runs load it from the cache)
tessera attention f16 B4 H32 L4096 D128          2.7992 ms      400.0 TFLOP/s
tessera attention f16 causal B4 H32 L4096 D128     1.5821 ms      300.0 TFLOP/s
attention rc=0 (7 s)
===== torch-attention: python3 bench/torch_reference.py --attention
# NVIDIA H200  torch 2.11.0+cu130  triton 3.6.0
torch sdpa cudnn f16 B4 H32 L4096 D128           1.6424 ms      500.0 TFLOP/s
torch sdpa flash f16 B4 H32 L4096 D128           3.2368 ms      250.0 TFLOP/s
torch sdpa cudnn f16 causal B4 H32 L4096 D128     1.0735 ms      600.0 TFLOP/s
torch-attention rc=0 (13 s)
===== gemm: build-gpu/bench/bench_gemm
tessera gemm f16 4096x4096x4096                  0.1847 ms      700.0 TFLOP/s
tessera gemm+bias+relu f16 4096x4096x4096        0.1895 ms      690.0 TFLOP/s
tessera gemm tuned f16 4096x4096x4096 (128x256)     0.1849 ms      710.0 TFLOP/s
tessera gemm f16 (tile 128x128x32) 4096x4096x4096     0.3551 ms      350.0 TFLOP/s
tessera gemm f16 123x456x789                     0.0100 ms       10.0 TFLOP/s
gemm rc=0 (13 s)
===== gemm-splitk: build-gpu/bench/bench_gemm --split-k 4096 4096 4096
tessera gemm split-K 2 128x256x64 f16 4096x4096x4096     0.2000 ms      400.0 TFLOP/s
gemm-splitk rc=0 (20 s)
===== torch-gemm: python3 bench/torch_reference.py --gemm
torch matmul f16 4096x4096x4096                  0.1797 ms      800.0 TFLOP/s
torch matmul+bias+relu f16 4096x4096x4096        0.2909 ms      460.0 TFLOP/s
torch-gemm rc=0 (10 s)
skipped gemm-sm80 (would not fit: 500 s of 540 used)
===== launch: build-gpu/bench/bench_launch
raw launch, back to back                       3.00 us
tessera launch, back to back                   6.00 us  (2.00x raw)
raw graph of 8, replayed (per kernel)          1.00 us
tessera graph of 8, replayed (per kernel)      1.25 us  (1.25x raw)
tessera graph of 8 error-checked (per k.)      2.00 us  (2.00x raw)
launch rc=0 (2 s)
===== rowwise: build-gpu/bench/bench_rowwise --dtype f16 --numerics fast
tessera softmax f16 fast 8192x8192                   0.0676 ms     4000.0 GB/s
rowwise rc=1 (23 s)
===== torch-rowwise: python3 bench/torch_reference.py --rowwise
torch softmax f16 8192x8192                          0.2562 ms     1000.0 GB/s
triton softmax f16 8192x8192                         0.0704 ms     3200.0 GB/s
"""


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True)


def rows_of(text):
    """{first cell: cells} of every table row."""
    out = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| workload"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out[cells[0]] = cells
    return out


class BenchTables(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "bench.txt")
        self.out = os.path.join(self.dir.name, "results.md")
        with open(self.log, "w") as f:
            f.write(LOG)

    def tearDown(self):
        self.dir.cleanup()

    def tables(self):
        r = run(os.path.join(SCRIPTS, "bench_tables.py"), self.log, self.out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.out) as f:
            return f.read()

    def test_each_row_is_beside_its_own_anchor_with_the_ratio(self):
        rows = rows_of(self.tables())
        self.assertEqual(rows["f16 B4 H32 L4096 D128"], ["f16 B4 H32 L4096 D128", "400.0", "500.0",
                                                         "250.0", "0.80"])
        self.assertEqual(rows["f16 causal B4 H32 L4096 D128"][2], "600.0")
        self.assertEqual(rows["f16 causal B4 H32 L4096 D128"][-1], "0.50")
        self.assertEqual(rows["gemm f16 4096x4096x4096"][2:], ["800.0", "0.88"])
        # the fused epilogue is compared with torch's matmul + the same epilogue
        self.assertEqual(rows["gemm+bias+relu f16 4096x4096x4096"][2:], ["460.0", "1.50"])
        self.assertEqual(rows["gemm tuned f16 4096x4096x4096 (128x256)"][2], "800.0")
        # a tile size in parentheses is not taken for the shape
        self.assertEqual(rows["gemm f16 (tile 128x128x32) 4096x4096x4096"][2:], ["800.0", "0.44"])
        # a split-K row's tile is not taken for the shape either
        self.assertEqual(rows["gemm split-K 2 128x256x64 f16 4096x4096x4096"][2:], ["800.0", "0.50"])
        self.assertEqual(rows["softmax f16 fast 8192x8192"][2:], ["3200.0", "1000.0", "1.25"])
        # launch costs are times: the ratio is a speed (raw time / ours), 1.0 = parity
        self.assertEqual(rows["launch, back to back"][1:], ["6.00", "3.00", "0.50"])
        self.assertEqual(rows["graph of 8, replayed (per kernel)"][1:], ["1.25", "1.00", "0.80"])
        # error-checked kernels in a graph beside the raw graph of plain kernels
        self.assertEqual(rows["graph of 8 error-checked (per k.)"][1:], ["2.00", "1.00", "0.50"])

    def test_a_missing_anchor_leaves_an_empty_cell_not_a_missing_row(self):
        self.assertEqual(rows_of(self.tables())["gemm f16 123x456x789"][2:], ["", ""])

    def test_failed_and_skipped_steps_are_named(self):
        text = self.tables()
        self.assertIn("rowwise rc=1", text)
        self.assertIn("skipped gemm-sm80", text)
        self.assertIn("NVIDIA H200", text)

    def test_the_tables_plot(self):
        self.tables()
        r = run(os.path.join(SCRIPTS, "plot_results.py"), self.out)
        self.assertEqual(r.returncode, 0, r.stderr)
        svgs = [l.split()[-1] for l in r.stdout.splitlines() if l.endswith(".svg")]
        self.assertEqual(len(svgs), 5)  # attention, GEMM, split-K GEMM, row-wise, launch
        with open(svgs[0]) as f:
            self.assertIn("<svg", f.read())

    def test_a_log_with_none_of_our_rows_is_refused(self):
        with open(self.log, "w") as f:
            f.write("===== gemm: bench_gemm\nbench_gemm: no GPU\ngemm rc=1 (0 s)\n")
        r = run(os.path.join(SCRIPTS, "bench_tables.py"), self.log, self.out)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("none of our rows", r.stderr)


if __name__ == "__main__":
    unittest.main()
