#!/usr/bin/env bash
# examples/qwen3 against Hugging Face transformers' own Qwen3 in the tiny configuration, on the
# CPU: writes a model directory with random weights (scripts/qwen3_weights.py --config tiny), runs
# transformers on it in f32 and bf16 (scripts/qwen3_reference.py, prefill + 32 decode steps) and
# the engine over the same tokens. Needs a Python with torch, transformers and safetensors
# (PYTHON, default python3); exits 77 (CTest's skip) without them.
#   scripts/qwen3_tiny_check.sh path/to/qwen3_tiny
set -euo pipefail
cd "$(dirname "$0")/.."
exe=$1
py=${PYTHON:-python3}
if ! "$py" -c 'import torch, transformers, safetensors' 2>/dev/null; then
  echo "qwen3_tiny_check: skipped: $py lacks torch, transformers or safetensors"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$py" scripts/qwen3_weights.py --config tiny --out "$dir"
"$py" scripts/qwen3_reference.py --model "$dir" --device cpu --dtype float32 \
  --out "$dir/ref_f32.safetensors" 2>/dev/null
"$py" scripts/qwen3_reference.py --model "$dir" --device cpu --dtype bfloat16 \
  --tokens "$dir/ref_f32.safetensors" --out "$dir/ref_bf16.safetensors" 2>/dev/null
TESSERA_DEVICE=${TESSERA_DEVICE:-cpu} "$exe" --model "$dir" --reference "$dir/ref_f32.safetensors" \
  --reference-bf16 "$dir/ref_bf16.safetensors"
