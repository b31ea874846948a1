#!/usr/bin/env bash
# Prints the path of a clang++ that can build Tessera (16 or newer), newest first; exits 1 if none.
set -euo pipefail
for c in clang++-20 clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
  path=$(command -v "$c" 2>/dev/null) || continue
  major=$("$path" -dumpversion 2>/dev/null | cut -d. -f1)
  if [ -n "$major" ] && [ "$major" -ge 16 ]; then
    echo "$path"
    exit 0
  fi
done
exit 1
