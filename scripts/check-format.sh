#!/usr/bin/env bash
# Checks that every C++ file of the project is formatted as .clang-format says (part of
# `make test`; `make format` rewrites them). Prints the files that differ and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is missing (Debian package clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -- '*.h' '*.cc' | grep -v '^fuzz/corpus/')
bad=()
# Compares clang-format's output with the file rather than using --dry-run, which clang-format
# 14 gets wrong for `namespace a::inline b` (it reports a change that changes nothing).
for f in "${files[@]}"; do
  if ! clang-format "$f" | cmp -s - "$f"; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (run: make format):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
