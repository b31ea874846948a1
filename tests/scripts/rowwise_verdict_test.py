#!/usr/bin/env python3
"""bench/rowwise_verdict.py on logs written here: Triton's ring over Tessera's is computed per op,
shape and dtype; the criterion holds (exit 0) when every op at both main shapes in f16 and bf16 is
at or above 1.0x (naming those within 0.5%), fails (exit 1) naming each case under it, and is
undecided (exit 2) when a main shape's row is missing or a run failed."""

import os
import subprocess
import sys
import tempfile
import unittest

BENCH = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                                 "../../bench")
OPS = ("softmax", "rmsnorm", "layernorm")
SHAPES = ("8192x8192", "32768x4096", "1024x65536")


def write_logs(folder, ours_ms, ring_ms, skip=(), f16_tail="rc=0\n"):
    """Every op, shape and dtype at ours_ms (Tessera) and ring_ms (Triton's ring), torch at 2x ours;
    `skip`: (op, dtype, shape) rows left out of Tessera's log; `f16_tail`: the end of its f16 log."""
    for dtype in ("f16", "bf16"):
        with open(os.path.join(folder, f"full_{dtype}.txt"), "w") as f:
            f.write("# tessera rowwise on cuda:0\n")
            for shape in SHAPES:
                for op in OPS:
                    if (op, dtype, shape) in skip:
                        continue
                    ms = ours_ms(op, dtype, shape)
                    f.write(f"tessera {op} {dtype} fast {shape}      {ms:.4f} ms     1.0 GB/s\n")
            f.write(f16_tail if dtype == "f16" else "rc=0\n")
    with open(os.path.join(folder, "torch.txt"), "w") as f:
        f.write("# NVIDIA H200  torch 2.11.0+cu130  triton 3.6.0\n")
        for shape in SHAPES:
            for dtype in ("f16", "bf16"):
                for op in OPS:
                    ms = ours_ms(op, dtype, shape)
                    f.write(f"torch {op} {dtype} {shape}      {2 * ms:.4f} ms     1.0 GB/s\n")
                    f.write(f"triton {op} {dtype} {shape}      {ms:.4f} ms     1.0 GB/s\n")
                    f.write(f"triton-ring {op} {dtype} {shape}      "
                            f"{ring_ms(op, dtype, shape):.4f} ms     1.0 GB/s\n")
        f.write("rc=0\n")


def verdict(folder):
    r = subprocess.run([sys.executable, os.path.join(BENCH, "rowwise_verdict.py"), folder],
                       capture_output=True, text=True)
    return r.returncode, r.stdout


class RowwiseVerdict(unittest.TestCase):
    def test_every_case_at_or_above_triton_meets_the_criterion(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, lambda *k: 0.1000, lambda *k: 0.1000)
            rc, out = verdict(d)
            self.assertEqual(rc, 0, out)
            self.assertIn("criterion met", out)
            self.assertIn("| 32768x4096 | layernorm | bf16 | 0.1000 | 0.1000 | 1.000 | 2.00 |", out)
            self.assertIn("within 0.5% of Triton's ring (the runs' noise): softmax f16 8192x8192",
                          out)

    def test_one_case_under_triton_fails_it_and_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            slow = ("rmsnorm", "bf16", "8192x8192")
            write_logs(d, lambda *k: 0.1000 if k != slow else 0.1100, lambda *k: 0.1000)
            rc, out = verdict(d)
            self.assertEqual(rc, 1, out)
            self.assertIn("NOT met", out)
            self.assertIn("rmsnorm bf16 8192x8192 (0.909x)", out)

    def test_a_slow_long_row_does_not_count(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, lambda op, dt, shape: 0.2 if shape == "1024x65536" else 0.1,
                       lambda *k: 0.1000)
            rc, out = verdict(d)
            self.assertEqual(rc, 0, out)
            self.assertIn("| 1024x65536 | softmax | f16 | 0.2000 | 0.1000 | 0.500 |", out)

    def test_a_missing_main_shape_row_leaves_it_undecided(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, lambda *k: 0.1, lambda *k: 0.2, skip={("layernorm", "f16", "32768x4096")})
            rc, out = verdict(d)
            self.assertEqual(rc, 2, out)
            self.assertIn("no time for layernorm f16 32768x4096 (Tessera's)", out)

    def test_a_failed_run_leaves_it_undecided_though_its_times_are_fast(self):
        with tempfile.TemporaryDirectory() as d:
            write_logs(d, lambda *k: 0.1, lambda *k: 0.2,
                       f16_tail="WRONG softmax 8192x8192: [3][5] = 1, reference 2\nrc=1\n")
            rc, out = verdict(d)
            self.assertEqual(rc, 2, out)
            self.assertIn("a run failed: full_f16.txt: WRONG softmax", out)
            self.assertIn("full_f16.txt: rc=1", out)


if __name__ == "__main__":
    unittest.main()
