"""Checks the tessera_dlpack_example module (module.cpp) on NumPy arrays (CPU) and, where PyTorch
is installed, on torch tensors: on the CPU, and on the GPU against torch's own result.

Run by scripts/python_example.sh (PYTHONPATH names the folder holding the built module). Exits
non-zero when a check fails; prints one line per check.
"""

import sys

import tessera_dlpack_example as ext

try:
    import numpy as np
except ImportError:
    np = None
try:
    import torch
except ImportError:
    torch = None

checks = []


def check(fn):
    checks.append(fn)
    return fn


def expect_error(kind, text, fn):
    try:
        fn()
    except kind as e:
        assert text in str(e), f"the message {str(e)!r} does not say {text!r}"
        return
    raise AssertionError(f"no {kind.__name__} was raised")


def current_stream(t):
    """torch's current stream on t's GPU as a CUstream int (None on the CPU)."""
    return torch.cuda.current_stream(t.device).cuda_stream if t.is_cuda else None


def torch_add(x, y):
    """x + y by Tessera on torch tensors, queued on torch's current stream: ordered after torch's
    work before it and before torch's work after it by the stream alone (no synchronization, no
    copy). torch.from_dlpack passes its current stream to the result's __dlpack__."""
    return torch.from_dlpack(ext.add(x, y, stream=current_stream(x)))


def torch_add_into(out, x, y):
    ext.add_into(out, x, y, stream=current_stream(out))


# ---- NumPy, on the CPU -------------------------------------------------------------------------


@check
def numpy_add_returns_a_tessera_array_numpy_reads_in_place():
    x = np.arange(3000, dtype=np.float32)
    y = np.full(3000, 0.5, dtype=np.float32)
    result = ext.add(x, y)
    z = np.from_dlpack(result)
    np.testing.assert_array_equal(z, x + y)
    # A second view of the result is the same memory (numpy's views of it are read-only): Tessera's
    # own, not a copy made on the way out.
    assert np.from_dlpack(result).ctypes.data == z.ctypes.data


@check
def numpy_add_into_writes_the_callers_array_in_place():
    x = np.arange(2049, dtype=np.float32)
    y = np.ones(2049, dtype=np.float32)
    out = np.zeros(2049, dtype=np.float32)
    ext.add_into(out, x, y)
    np.testing.assert_array_equal(out, x + 1.0)


@check
def numpy_inputs_are_released_when_the_call_returns():
    x = np.arange(100, dtype=np.float32)
    y = np.arange(100, dtype=np.float32)
    before = sys.getrefcount(x), sys.getrefcount(y)
    for _ in range(3):
        ext.add(x, y)
    assert (sys.getrefcount(x), sys.getrefcount(y)) == before, "a DLPack deleter did not run"


@check
def numpy_wrong_dtype_is_refused_naming_the_type():
    x = np.arange(8, dtype=np.float64)
    expect_error(RuntimeError, "the DLPack tensor holds f64 elements, not f32",
                 lambda: ext.add(x, x))


@check
def numpy_output_that_is_also_an_input_is_refused():
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    expect_error(RuntimeError, "argument 1 ('z', Out) overlaps argument 2 ('x', In) in memory",
                 lambda: ext.add_into(x, x, y))
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32))  # untouched
    ext.add_into(np.zeros(8, dtype=np.float32), x, y)  # the twin: a separate output runs


@check
def numpy_mismatched_lengths_are_refused():
    expect_error(ValueError, "add: x has 4 elements but y has 5; pass arrays of one length",
                 lambda: ext.add(np.zeros(4, np.float32), np.zeros(5, np.float32)))


# ---- PyTorch ------------------------------------------------------------------------------------


@check
def torch_cpu_add_matches_torch():
    x = torch.randn(5000)
    y = torch.randn(5000)
    torch.testing.assert_close(torch_add(x, y), x + y, rtol=0, atol=0)
    out = torch.empty(5000)
    torch_add_into(out, x, y)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def gpu_chain_on_torchs_stream():
    """Torch writes the inputs, Tessera adds on torch's current stream, torch goes on using the
    results, with no synchronization in between: the stream alone orders them. Checked once, after
    torch.cuda.synchronize()."""
    n = (1 << 22) + 3  # a ragged last tile
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    want_z = x * 3.0 + y  # torch's own result, from the same inputs
    x.mul_(3.0)  # pending torch work the kernel must follow
    z = torch_add(x, y)
    w = z * 2.0  # torch work after the kernel
    out = torch.empty(n, device="cuda").fill_(7.0)
    torch_add_into(out, z, y)
    out.add_(1.0)
    del x  # handed back to torch already; torch may reuse it, in its stream's order
    reuse = torch.full((n,), -1.0, device="cuda")
    torch.cuda.synchronize()
    torch.testing.assert_close(z, want_z, rtol=0, atol=0)
    torch.testing.assert_close(w, want_z * 2.0, rtol=0, atol=0)
    torch.testing.assert_close(out, want_z + y + 1.0, rtol=0, atol=0)
    assert bool((reuse == -1.0).all())


@check
def torch_gpu_add_on_the_default_stream_needs_no_synchronize():
    if not torch.cuda.is_available():
        return "skipped: no GPU"
    x = torch.randn(1000, device="cuda")
    y = torch.randn(1000, device="cuda")
    x.mul_(3.0)
    z = torch_add(x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    gpu_chain_on_torchs_stream()


@check
def torch_gpu_add_on_a_side_stream_needs_no_synchronize():
    if not torch.cuda.is_available():
        return "skipped: no GPU"
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # the inputs are made, and the results used, on a side stream
        x = torch.randn((1 << 22) + 3, device="cuda")
        y = torch.randn((1 << 22) + 3, device="cuda")
        x.mul_(3.0)
        z = torch_add(x, y)
        out = torch.zeros_like(x)
        torch_add_into(out, x, y)
        gpu_chain_on_torchs_stream()
    torch.cuda.synchronize()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


def main():
    failed = 0
    for fn in checks:
        name = fn.__name__
        if name.startswith("numpy") and np is None:
            print(f"python_dlpack: {name}: skipped (numpy is not installed)")
            continue
        if name.startswith("torch") and torch is None:
            print(f"python_dlpack: {name}: skipped (torch is not installed)")
            continue
        try:
            note = fn()
        except Exception as e:  # noqa: BLE001 - report every failing check
            failed += 1
            print(f"python_dlpack: {name}: FAILED: {type(e).__name__}: {e}")
            continue
        print(f"python_dlpack: {name}: {note or 'ok'}")
    print(f"python_dlpack: Tessera device {ext.device()}; {len(checks)} checks, {failed} failing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
