#!/usr/bin/env python3
"""The reference for examples/qwen3: Hugging Face transformers' own Qwen3 model (Qwen3ForCausalLM,
not a reimplementation of ours) loaded from the same model directory the engine reads.

Check mode writes the logits of a prefill and of greedy decode steps to a safetensors file:
`tokens` (the prompt, then each step's token), `prefill` [prompt, vocab] and `decode` [steps,
vocab], f32. `--tokens OTHER` replays OTHER's tokens (teacher forcing) instead of choosing them, so
two runs (transformers in f32 and in bf16) are compared over one sequence.

    python3 scripts/qwen3_reference.py --model DIR --dtype float32 --out ref_f32.safetensors
    python3 scripts/qwen3_reference.py --model DIR --dtype bfloat16 --tokens ref_f32.safetensors \
        --out ref_bf16.safetensors

Bench mode (--bench): the same model in PyTorch eager on the same GPU, bf16 (sdpa attention,
transformers' dynamic KV cache; no torch.compile, no CUDA graphs): the device-to-device copy
bandwidth, prefill tokens/s, and greedy decode tokens/s at each batch size (--batches, B copies of
the prompt decoded together), the median of 3 timed runs after a warm-up, each step's fraction of
the bandwidth roofline (weights + every sequence's KV cache read per step / the copy bandwidth).
`--copy-bandwidth` prints only that bandwidth (the A/B scripts' roofline on whichever GPU ran them).
"""

import argparse
import inspect
import statistics
import sys
import time

import torch
from safetensors.torch import load_file, save_file
from transformers import Qwen3ForCausalLM

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def prompt_tokens(n, vocab):
    """The engine's prompt (examples/qwen3/bench.cpp uses the same formula)."""
    return [(i * 7919 + 13) % vocab for i in range(n)]


def load(model_dir, dtype, device, attention):
    try:
        model = Qwen3ForCausalLM.from_pretrained(model_dir, dtype=dtype,
                                                 attn_implementation=attention)
    except TypeError:  # transformers before 4.56 names it torch_dtype
        model = Qwen3ForCausalLM.from_pretrained(model_dir, torch_dtype=dtype,
                                                 attn_implementation=attention)
    return model.to(device).eval()


def forward(model, ids, cache):
    """One forward pass continuing `cache` (None: a new sequence); returns (logits, cache).
    Newer transformers name the cache argument `cache`, older ones `past_key_values`."""
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    out = model(input_ids=ids, use_cache=True, **({name: cache} if cache is not None else {}))
    cache = getattr(out, name, None)
    return out.logits, cache if cache is not None else out.past_key_values


@torch.no_grad()
def check(args):
    # f32 means f32: no TF32 in the matrix products.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    model = load(args.model, DTYPES[args.dtype], args.device, "eager")
    vocab = model.config.vocab_size
    forced = None
    if args.tokens:
        other = load_file(args.tokens)
        forced = other["tokens"].tolist()
        args.prompt = other["prefill"].shape[0]
        args.steps = other["decode"].shape[0]
    tokens = forced[: args.prompt] if forced else prompt_tokens(args.prompt, vocab)
    ids = torch.tensor([tokens], device=args.device)
    logits, past = forward(model, ids, None)
    prefill = logits[0].float()
    last = prefill[-1]
    decode = []
    for i in range(args.steps):
        token = forced[args.prompt + i] if forced else int(last.argmax())
        tokens.append(token)
        logits, past = forward(model, torch.tensor([[token]], device=args.device), past)
        last = logits[0, -1].float()
        decode.append(last)
    save_file({"tokens": torch.tensor(tokens, dtype=torch.int32),
               "prefill": prefill.cpu().contiguous(),
               "decode": torch.stack(decode).cpu().contiguous()}, args.out)
    print(f"qwen3_reference: transformers Qwen3ForCausalLM, {args.dtype} on {args.device}: "
          f"prefill of {args.prompt} tokens and {args.steps} decode steps "
          f"({'replaying ' + args.tokens if forced else 'greedy'}) -> {args.out}")
    print(f"qwen3_reference: generated {tokens[args.prompt:]}")


def drain():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn, repeats):
    """The median wall time of fn() over `repeats` runs, after one warm-up, the GPU drained."""
    fn()
    drain()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        drain()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@torch.no_grad()
def copy_bandwidth(dev):
    """The bandwidth the roofline uses: bytes read + written by a 2 GiB device copy (printed)."""
    src = torch.empty(1 << 30 if dev == "cuda" else 1 << 24, dtype=torch.int16, device=dev)
    dst = torch.empty_like(src)
    bandwidth = 2 * src.numel() * 2 / timed(lambda: dst.copy_(src), 10) / 1e9
    print(f"torch_eager: copy bandwidth {bandwidth:.0f} GB/s (read + write, "
          f"{src.numel() * 2 / 2**30:g} GiB)")
    return bandwidth


@torch.no_grad()
def bench(args):
    dev = args.device
    bandwidth = copy_bandwidth(dev)
    model = load(args.model, torch.bfloat16, dev, "sdpa")
    cfg = model.config
    vocab, layers = cfg.vocab_size, cfg.num_hidden_layers
    # Tied: parameters() holds the embedding once, read whole as the LM head, plus the row each
    # step looks up.
    weights = 2 * (sum(p.numel() for p in model.parameters()) + cfg.hidden_size)
    prompt = prompt_tokens(args.prompt, vocab)

    def prefill(batch):
        return forward(model, torch.tensor([prompt] * batch, device=dev), None)

    t = timed(lambda: prefill(1), 3)
    print(f"torch_eager bf16: prefill of {args.prompt} tokens in {t * 1e3:.2f} ms = "
          f"{args.prompt / t:.0f} tokens/s")
    for batch in args.batches:
        def decode():
            logits, past = prefill(batch)
            token = logits[:, -1].argmax(-1, keepdim=True)
            drain()
            start = time.perf_counter()
            for _ in range(args.steps):
                logits, past = forward(model, token, past)
                token = logits[:, -1].argmax(-1, keepdim=True)
            drain()
            return time.perf_counter() - start

        decode()  # warm-up
        per_step = statistics.median(decode() for _ in range(3)) / args.steps
        context = args.prompt + args.steps / 2
        kv = 2 * 2 * layers * cfg.num_key_value_heads * cfg.head_dim * context * batch
        roofline = (weights + kv) / (bandwidth * 1e9)
        print(f"torch_eager bf16: decode batch {batch}: {per_step * 1e3:.3f} ms a step = "
              f"{batch / per_step:.1f} tokens/s; reads {weights / 1e6:.1f} MB of weights + "
              f"{kv / 1e6:.1f} MB of KV cache: {100 * roofline / per_step:.1f}% of the roofline")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a directory: config.json, model.safetensors")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--prompt", type=int, default=16, help="prompt tokens")
    ap.add_argument("--steps", type=int, default=32, help="decode steps")
    ap.add_argument("--tokens", help="replay this earlier output's tokens")
    ap.add_argument("--out", help="the logits file to write (check mode)")
    ap.add_argument("--bench", action="store_true", help="time PyTorch eager instead")
    ap.add_argument("--copy-bandwidth", action="store_true",
                    help="only print the device's copy bandwidth (no model)")
    ap.add_argument("--batches", type=lambda s: [int(b) for b in s.split(",")], default=[1, 4, 16, 64])
    args = ap.parse_args()
    if args.copy_bandwidth:
        copy_bandwidth(args.device)
        return 0
    if not args.model:
        ap.error("--model is needed to check or to bench")
    if args.bench:
        if args.prompt == 16:
            args.prompt = 512
        if args.steps == 32:
            args.steps = 64
        bench(args)
    else:
        if not args.out:
            ap.error("--out is needed in check mode")
        check(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
