#!/usr/bin/env bash
# Line coverage of every test: a clang build with source-based coverage, the whole ctest suite
# (servers the tests start inherit LLVM_PROFILE_FILE, so their runs count too), one merged
# profile, and a per-file report of src/ with the least covered files last.
# Usage: scripts/coverage.sh [BUILD_DIR]   (default build-coverage; about 15 minutes on 2 cores)
# `llvm-cov show -instr-profile=BUILD_DIR/coverage.profdata BUILD_DIR/holdfast -object ... FILE`
# then shows which lines of FILE no test ran. Code that runs in a forked child which leaves
# with _exit() (the snapshot encoder) is never counted.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-coverage}
flags="-fprofile-instr-generate -fcoverage-mapping"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_FLAGS="$flags -O1" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fprofile-instr-generate" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fprofile-instr-generate" >/dev/null
cmake --build "$dir"
raw="$dir/profraw"
rm -rf "$raw"
mkdir -p "$raw"
(cd "$dir" && LLVM_PROFILE_FILE="$PWD/profraw/%p-%m.profraw" ctest -j 2 --timeout 600 --output-on-failure)
llvm-profdata merge -sparse "$raw"/*.profraw -o "$dir/coverage.profdata"
rm -rf "$raw"
objects=()
for bin in "$dir"/tests/*/*_tests "$dir"/holdfast-bench; do
  [ -x "$bin" ] && objects+=(-object "$bin")
done
llvm-cov report "$dir/holdfast" "${objects[@]}" -instr-profile="$dir/coverage.profdata" \
  -ignore-filename-regex='(/usr/|tests/|bench/|fuzz/|examples/)' \
  | awk 'NR <= 2 || /^TOTAL/ || /^-/ { next } { print $10, $1 }' | sort -rn | awk '{ printf "%8s  %s\n", $1, $2 }'
llvm-cov report "$dir/holdfast" "${objects[@]}" -instr-profile="$dir/coverage.profdata" \
  -ignore-filename-regex='(/usr/|tests/|bench/|fuzz/|examples/)' | tail -n 1
