#!/usr/bin/env bash
# The test phase of `make test`, once the gcc tree is built: ctest there, and beside it the
# clang build of the fuzzers. The tests spend most of their time waiting on servers, sockets
# and deadlines, so the compiler uses cores that would otherwise idle; it runs at a lower CPU
# priority (nice 10), so a test's server is never starved by it. No test's verdict depends
# on speed (tests/support/eventually.h), so sharing the machine changes only how long ctest
# takes. Once ctest is done, the build still running gets the normal priority back (as root):
# beside another build on the machine, nice 10 would leave it a tenth of a core. The fuzzers
# themselves run after ctest, alone.
#
# The fuzz build's output goes to BUILD_DIR/side-checks/fuzz-build.log, printed when it failed.
# Exits non-zero when ctest, the fuzz build or a fuzzer failed, after all of them finished.
#
# Usage: scripts/test-beside.sh BUILD_DIR FUZZ_DIR CTEST_JOBS
set -uo pipefail

build=${1:?usage: test-beside.sh BUILD_DIR FUZZ_DIR CTEST_JOBS}
fuzz=${2:?usage: test-beside.sh BUILD_DIR FUZZ_DIR CTEST_JOBS}
jobs=${3:?usage: test-beside.sh BUILD_DIR FUZZ_DIR CTEST_JOBS}
src=$(cd "$(dirname "$0")/.." && pwd)
logs=$build/side-checks
mkdir -p "$logs"
started=$SECONDS

say() { echo "test-beside: $* ($((SECONDS - started)) s)"; }

# Gives process $1 and its descendants nice 0 (parents first, so what they start later inherits
# it); quietly does nothing where lowering the niceness is not allowed.
renice_tree() {
  renice -n 0 -p "$1" >/dev/null 2>&1 || return 0
  local child
  for child in $(pgrep -P "$1"); do renice_tree "$child"; done
}

nice -n 10 make -C "$src" --no-print-directory fuzz-build FUZZ_DIR="$fuzz" >"$logs/fuzz-build.log" 2>&1 &
fuzz_pid=$!
say "building the fuzzers beside the tests (pid $fuzz_pid; log in $logs)"

(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)
ctest_rc=$?
say "ctest exited $ctest_rc"
renice_tree "$fuzz_pid"

failed=0
[ "$ctest_rc" -eq 0 ] || failed=1
if wait "$fuzz_pid"; then
  say "fuzzers built"
  (cd "$fuzz" && ctest --output-on-failure -j "$jobs") || failed=1
else
  tail -n 60 "$logs/fuzz-build.log"
  say "building the fuzzers FAILED (above; the whole log: $logs/fuzz-build.log)"
  failed=1
fi
say "done"
exit "$failed"
