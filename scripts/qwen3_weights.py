#!/usr/bin/env python3
"""Writes a Qwen3 model directory (config.json + model.safetensors) with RANDOM weights.

These are not a trained checkpoint: no trained Qwen3 can be had where this project runs, so the
weights are drawn from a fixed seed at the shapes of a configuration, in bf16 (issue 14, item 3).
`qwen3-0.6b` is Qwen3-0.6B's published architecture (hidden 1024, 28 layers, 16 query heads, 8 KV
heads, head dim 128, intermediate 3072, vocab 151936, tied embeddings, rope theta 1e6, rms eps
1e-6; 1.2 GB); `tiny` is the engine's CI configuration (examples/qwen3/model.hpp, Config::tiny).
The names and layouts are Qwen3ForCausalLM's (linear weights [out, in]; with tied embeddings there
is no lm_head.weight), so transformers and examples/qwen3 load the same file.

The value ranges follow examples/qwen3's own random weights: the embedding uniform in +-0.2 (small
next to the layers' outputs: with the LM head tied, a large embedding makes every step predict the
token it was given), norm weights in [0.8, 1.2], each linear weight uniform in +-sqrt(3 / in) so a
layer keeps its input's variance.

    python3 scripts/qwen3_weights.py --config qwen3-0.6b --out DIR [--seed 2026] [--device cuda]
"""

import argparse
import json
import math
import os
import time

import torch
from safetensors.torch import save_file

ARCHITECTURES = {
    "qwen3-0.6b": dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072,
                       num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8,
                       head_dim=128, max_position_embeddings=40960, max_window_layers=28),
    "tiny": dict(vocab_size=300, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                 max_position_embeddings=64, max_window_layers=2),
}


def config_json(name):
    """config.json in the published Qwen3 format (transformers reads it as Qwen3Config)."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "hidden_act": "silu",
        "initializer_range": 0.02,
        "model_type": "qwen3",
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        **ARCHITECTURES[name],
    }


def weights(cfg, seed, device):
    gen = torch.Generator(device=device).manual_seed(seed)

    def uniform(shape, lo, hi):
        x = torch.rand(shape, generator=gen, device=device, dtype=torch.float32)
        return (x * (hi - lo) + lo).to(torch.bfloat16).cpu()

    def linear(out_features, in_features):
        a = math.sqrt(3.0 / in_features)
        return uniform((out_features, in_features), -a, a)

    h, d = cfg["hidden_size"], cfg["head_dim"]
    q_out = cfg["num_attention_heads"] * d
    kv_out = cfg["num_key_value_heads"] * d
    inter = cfg["intermediate_size"]
    w = {"model.embed_tokens.weight": uniform((cfg["vocab_size"], h), -0.2, 0.2)}
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        w[p + "input_layernorm.weight"] = uniform((h,), 0.8, 1.2)
        w[p + "self_attn.q_proj.weight"] = linear(q_out, h)
        w[p + "self_attn.k_proj.weight"] = linear(kv_out, h)
        w[p + "self_attn.v_proj.weight"] = linear(kv_out, h)
        w[p + "self_attn.q_norm.weight"] = uniform((d,), 0.8, 1.2)
        w[p + "self_attn.k_norm.weight"] = uniform((d,), 0.8, 1.2)
        w[p + "self_attn.o_proj.weight"] = linear(h, q_out)
        w[p + "post_attention_layernorm.weight"] = uniform((h,), 0.8, 1.2)
        w[p + "mlp.gate_proj.weight"] = linear(inter, h)
        w[p + "mlp.up_proj.weight"] = linear(inter, h)
        w[p + "mlp.down_proj.weight"] = linear(h, inter)
    w["model.norm.weight"] = uniform((h,), 0.8, 1.2)
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", choices=sorted(ARCHITECTURES), default="qwen3-0.6b")
    ap.add_argument("--out", required=True, help="the model directory to write")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--layers", type=int, help="fewer layers than the configuration's (a quick run "
                                               "at the real per-layer shapes)")
    ap.add_argument("--vocab", type=int, help="a smaller vocabulary than the configuration's")
    ap.add_argument("--device", default="cpu",
                    help="where the random numbers are drawn (cuda is faster; each device gives "
                         "its own values for a seed)")
    args = ap.parse_args()
    start = time.time()
    cfg = config_json(args.config)
    if args.layers:
        cfg["num_hidden_layers"] = cfg["max_window_layers"] = args.layers
    if args.vocab:
        cfg["vocab_size"] = args.vocab
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    w = weights(cfg, args.seed, args.device)
    save_file(w, os.path.join(args.out, "model.safetensors"),
              metadata={"format": "pt", "note": f"random weights, seed {args.seed}, not trained"})
    count = sum(t.numel() for t in w.values())
    print(f"qwen3_weights: {args.out}: {args.config}, RANDOM weights (seed {args.seed}, drawn on "
          f"{args.device}), {count / 1e6:.1f}M parameters in bf16, {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
