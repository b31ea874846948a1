"""Reference timings on the same GPU, in the same run as Tessera's: PyTorch eager and a Triton
fused softmax (--gemm: cuBLAS; --attention: SDPA's cuDNN and flash backends). Prints one table row
per workload: name, milliseconds (median), GB/s (TFLOP/s for --gemm and --attention).

Bytes are counted as each input read once plus each output written once (METHOD.md)."""
import argparse
import sys
import time

import torch

try:
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except Exception:  # pragma: no cover - Triton missing: torch only
    triton = None

    def do_bench(fn, warmup=25, rep=100, return_mode="median"):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(10):
            fn()
        times = []
        for _ in range(50):
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        return times[len(times) // 2]


def ring_ms(fn, xs, outs, launches=20, rounds=7):
    """Median ms per launch as bench/rowwise's ring times Tessera: len(outs) launches in flight,
    each new launch after a host wait for the oldest (its event), inputs taken in turn from `xs`,
    the host's clock around `launches` launches, rounds running into each other, no L2 flush.
    (do_bench instead flushes L2 and times each launch alone with events.)"""
    events = [torch.cuda.Event() for _ in outs]
    n = 0

    def step():
        nonlocal n
        j = n % len(outs)
        events[j].synchronize()
        fn(xs[n % len(xs)], outs[j])
        events[j].record()
        n += 1

    for _ in range(2 * len(outs)):
        step()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            step()
        times.append((time.perf_counter() - t0) * 1e3 / launches)
    torch.cuda.synchronize()
    times.sort()
    return times[len(times) // 2]


def row(name, ms, nbytes):
    print(f"{name:<48} {ms:10.4f} ms {nbytes / ms / 1e6:10.1f} GB/s", flush=True)


def bench_elementwise(n):
    for dtype, tag in ((torch.float32, "f32"), (torch.float16, "f16")):
        x = torch.randn(n, device="cuda", dtype=dtype)
        y = torch.randn(n, device="cuda", dtype=dtype)
        z = torch.empty_like(x)
        esz = x.element_size()
        row(f"torch add {tag} n=2^{n.bit_length() - 1}",
            do_bench(lambda: torch.add(x, y, out=z), warmup=50, rep=300, return_mode="median"),
            3 * n * esz)
        row(f"torch saxpy {tag} n=2^{n.bit_length() - 1}",
            do_bench(lambda: torch.add(y, x, alpha=2.0, out=z), warmup=50, rep=300,
                     return_mode="median"),
            3 * n * esz)
        row(f"torch copy {tag} n=2^{n.bit_length() - 1}",
            do_bench(lambda: z.copy_(x), warmup=50, rep=300, return_mode="median"), 2 * n * esz)


if triton is not None:

    @triton.jit
    def _softmax_rows(out_ptr, in_ptr, n_cols, in_stride, out_stride, BLOCK: tl.constexpr):
        # One program per row; the row is held whole in registers.
        r = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + r * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)

    def triton_softmax(x, out):
        rows, cols = x.shape
        block = triton.next_power_of_2(cols)
        warps = 8 if block <= 8192 else 16
        _softmax_rows[(rows,)](out, x, cols, x.stride(0), out.stride(0), BLOCK=block,
                               num_warps=warps)


if triton is not None:

    @triton.jit
    def _rmsnorm_rows(out_ptr, in_ptr, w_ptr, n_cols, in_stride, out_stride, eps,
                      BLOCK: tl.constexpr):
        r = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(out_ptr + r * out_stride + cols, (x * rstd * w).to(out_ptr.dtype.element_ty),
                 mask=mask)

    @triton.jit
    def _layernorm_rows(out_ptr, in_ptr, w_ptr, b_ptr, n_cols, in_stride, out_stride, eps,
                        BLOCK: tl.constexpr):
        r = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        mean = tl.sum(x, axis=0) / n_cols
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
        tl.store(out_ptr + r * out_stride + cols, (d * rstd * w + b).to(out_ptr.dtype.element_ty),
                 mask=mask)

    # Rows longer than one program holds well (more than LOOP_FROM columns): the row is walked
    # in chunks of CHUNK columns, a pass for each statistic and one for the output, as a Triton
    # user writes a long-row norm (the row comes back from L2 at the later passes).
    @triton.jit
    def _rmsnorm_rows_looped(out_ptr, in_ptr, w_ptr, n_cols, in_stride, out_stride, eps,
                             CHUNK: tl.constexpr):
        r = tl.program_id(0)
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for start in range(0, n_cols, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            x = tl.load(in_ptr + r * in_stride + cols, mask=cols < n_cols, other=0.0)
            x = x.to(tl.float32)
            acc += x * x
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            mask = cols < n_cols
            x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            tl.store(out_ptr + r * out_stride + cols, (x * rstd * w).to(out_ptr.dtype.element_ty),
                     mask=mask)

    @triton.jit
    def _layernorm_rows_looped(out_ptr, in_ptr, w_ptr, b_ptr, n_cols, in_stride, out_stride, eps,
                               CHUNK: tl.constexpr):
        r = tl.program_id(0)
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for start in range(0, n_cols, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            acc += tl.load(in_ptr + r * in_stride + cols, mask=cols < n_cols,
                           other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for start in range(0, n_cols, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            mask = cols < n_cols
            x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=0.0).to(tl.float32)
            d = tl.where(mask, x - mean, 0.0)
            acc += d * d
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            mask = cols < n_cols
            x = tl.load(in_ptr + r * in_stride + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            b = tl.load(b_ptr + cols, mask=mask, other=0.0)
            tl.store(out_ptr + r * out_stride + cols,
                     ((x - mean) * rstd * w + b).to(out_ptr.dtype.element_ty), mask=mask)

    LOOP_FROM, CHUNK = 16384, 4096

    def _warps(block):
        return 8 if block <= 8192 else 16

    def triton_rmsnorm(x, w, out, eps):
        if x.shape[1] > LOOP_FROM:
            _rmsnorm_rows_looped[(x.shape[0],)](out, x, w, x.shape[1], x.stride(0), out.stride(0),
                                                eps, CHUNK=CHUNK, num_warps=8)
            return
        block = triton.next_power_of_2(x.shape[1])
        _rmsnorm_rows[(x.shape[0],)](out, x, w, x.shape[1], x.stride(0), out.stride(0), eps,
                                     BLOCK=block, num_warps=_warps(block))

    def triton_layernorm(x, w, b, out, eps):
        if x.shape[1] > LOOP_FROM:
            _layernorm_rows_looped[(x.shape[0],)](out, x, w, b, x.shape[1], x.stride(0),
                                                  out.stride(0), eps, CHUNK=CHUNK, num_warps=8)
            return
        block = triton.next_power_of_2(x.shape[1])
        _layernorm_rows[(x.shape[0],)](out, x, w, b, x.shape[1], x.stride(0), out.stride(0), eps,
                                       BLOCK=block, num_warps=_warps(block))


ROWWISE_SHAPES = [(8192, 8192), (32768, 4096), (1024, 65536)]


def bench_rowwise(shapes, back_to_back=False):
    """bench/rowwise's workloads: softmax, RMSNorm, LayerNorm in f16 and bf16, torch eager and
    Triton (one program per row; the norms walk rows over 16384 columns in chunks of 4096). Each
    Triton result is checked against torch in f32.
    back_to_back: each Triton row again, timed as bench/rowwise times Tessera (triton-ring rows)."""
    eps = 1e-5
    for rows, cols in shapes:
        for dtype, tag in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            x = torch.randn(rows, cols, device="cuda", dtype=dtype)
            w = torch.randn(cols, device="cuda", dtype=torch.float32)
            b = torch.randn(cols, device="cuda", dtype=torch.float32)
            out = torch.empty_like(x)
            nbytes = 2 * x.numel() * x.element_size()
            shape = f"{rows}x{cols}"
            xf = x.float()
            refs = {
                "softmax": torch.softmax(xf, dim=-1),
                "rmsnorm": xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w,
                "layernorm": torch.nn.functional.layer_norm(xf, (cols,), w, b, eps),
            }
            runs = {
                "softmax": (lambda: torch.softmax(x, dim=-1),
                            triton and (lambda xi, o: triton_softmax(xi, o))),
                "rmsnorm": (lambda: torch.nn.functional.rms_norm(x, (cols,), w.to(dtype), eps),
                            triton and (lambda xi, o: triton_rmsnorm(xi, w, o, eps))),
                "layernorm": (lambda: torch.nn.functional.layer_norm(x, (cols,), w.to(dtype),
                                                                     b.to(dtype), eps),
                              triton and (lambda xi, o: triton_layernorm(xi, w, b, o, eps))),
            }
            for op, (eager, fused_into) in runs.items():
                row(f"torch {op} {tag} {shape}",
                    do_bench(eager, warmup=25, rep=200, return_mode="median"), nbytes)
                if not fused_into:
                    continue
                fused = lambda: fused_into(x, out)  # noqa: E731
                fused()
                ref = refs[op]
                err = ((out.float() - ref).norm() / ref.norm()).item()
                if not err < 1e-2:
                    print(f"triton {op} {tag} {shape} wrong: rel err {err}", file=sys.stderr)
                    sys.exit(1)
                row(f"triton {op} {tag} {shape}",
                    do_bench(fused, warmup=25, rep=200, return_mode="median"), nbytes)
                if back_to_back:
                    xs = [x, x.clone(), x.clone()]
                    outs = [out] + [torch.empty_like(x) for _ in range(2)]
                    row(f"triton-ring {op} {tag} {shape}", ring_ms(fused_into, xs, outs), nbytes)


def bench_softmax(shapes):
    for rows, cols in shapes:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
        out = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        row(f"torch softmax f16 {rows}x{cols}",
            do_bench(lambda: torch.softmax(x, dim=-1),
                     warmup=25, rep=200, return_mode="median"), nbytes)
        if triton is not None:
            triton_softmax(x, out)
            ref = torch.softmax(x.float(), dim=-1)
            err = ((out.float() - ref).norm() / ref.norm()).item()
            if not err < 1e-2:
                print(f"triton softmax wrong: rel err {err}", file=sys.stderr)
                sys.exit(1)
            row(f"triton softmax f16 {rows}x{cols}",
                do_bench(lambda: triton_softmax(x, out), warmup=25, rep=200, return_mode="median"),
                nbytes)


GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (4096, 14336, 4096),
               (16, 14336, 4096), (4000, 3000, 2000)]


def tflops_row(name, ms, flop):
    print(f"{name:<44} {ms:10.4f} ms {flop / ms / 1e9:10.1f} TFLOP/s", flush=True)


def bench_gemm(shapes):
    """torch.matmul (cuBLAS) on the shapes and dtypes of bench/gemm, and the same GEMM followed by
    the epilogue bench/gemm fuses (bias row + relu), as torch eager runs it."""
    for m, n, k in shapes:
        for dtype, tag in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
            b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
            bias = torch.rand(n, device="cuda", dtype=torch.float32) * 2 - 1
            c = torch.empty(m, n, device="cuda", dtype=dtype)
            flop = 2 * m * n * k
            tflops_row(f"torch matmul {tag} {m}x{n}x{k}",
                       do_bench(lambda: torch.matmul(a, b, out=c), warmup=25, rep=200,
                                return_mode="median"), flop)
            tflops_row(f"torch matmul+bias+relu {tag} {m}x{n}x{k}",
                       do_bench(lambda: torch.relu(torch.matmul(a, b) + bias), warmup=25, rep=200,
                                return_mode="median"), flop)


ATTENTION_SHAPES = [(4, 32, 4096, 128)]


def bench_attention(shapes):
    """bench/attention's workloads: scaled_dot_product_attention forced to the cuDNN backend and
    to the flash backend (FlashAttention-2), f16 and bf16, causal and not. The tensors have
    bench/attention's memory layout ([B, L, H, D], viewed as SDPA's [B, H, L, D]). FLOPs:
    4*B*H*L*L*D, halved for causal. The cuDNN result is checked against the flash one."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    backends = (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION))
    for b, h, l, d in shapes:
        for dtype, tag in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            q, k, v = ((torch.rand(b, l, h, d, device="cuda", dtype=dtype) * 2 - 1).transpose(1, 2)
                       for _ in range(3))
            for causal in (False, True):
                flop = 4 * b * h * l * l * d / (2 if causal else 1)
                outs = {}
                for name, backend in backends:
                    try:
                        with sdpa_kernel(backend):
                            fn = lambda: sdpa(q, k, v, is_causal=causal)
                            outs[name] = fn()
                            ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
                    except RuntimeError as e:
                        print(f"# torch sdpa {name}: unavailable ({str(e).splitlines()[0]})",
                              flush=True)
                        continue
                    tflops_row(f"torch sdpa {name} {tag}{' causal' if causal else ''} "
                               f"B{b} H{h} L{l} D{d}", ms, flop)
                if len(outs) == 2:
                    ref = outs["flash"].float()
                    err = ((outs["cudnn"].float() - ref).norm() / ref.norm()).item()
                    if not err < 1e-2:
                        print(f"sdpa cudnn and flash disagree: rel err {err}", file=sys.stderr)
                        sys.exit(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=28)
    p.add_argument("--gemm", action="store_true", help="only the GEMM rows")
    p.add_argument("--rowwise", action="store_true", help="only bench/rowwise's rows")
    p.add_argument("--back-to-back", action="store_true",
                   help="with --rowwise: Triton also timed as bench/rowwise times Tessera "
                        "(a ring of 3 launches, a host wait for the oldest, 3 inputs in turn)")
    p.add_argument("--attention", action="store_true", help="only bench/attention's rows")
    args = p.parse_args()
    if args.back_to_back and not args.rowwise:
        p.error("--back-to-back goes with --rowwise")
    print(f"# {torch.cuda.get_device_name()}  torch {torch.__version__}  triton "
          f"{triton.__version__ if triton else 'absent'}")
    if args.gemm:
        bench_gemm(GEMM_SHAPES)
        return
    if args.rowwise:
        bench_rowwise(ROWWISE_SHAPES, args.back_to_back)
        return
    if args.attention:
        bench_attention(ATTENTION_SHAPES)
        return
    bench_elementwise(1 << args.log2n)
    bench_softmax([(8192, 8192), (32768, 4096)])


if __name__ == "__main__":
    main()
