#!/usr/bin/env bash
# Runs a test binary with every ServerProcess as a scale-out node over a throw-away
# PostgreSQL: starts the server (scripts/start-postgres.sh) in a fresh /tmp folder on a free
# port, exports HOLDFAST_TEST_STORE_URL (each ServerProcess then makes its own schema in it),
# runs the binary, and stops and deletes the server whatever the outcome.
# Usage: run_with_postgres.sh SCRIPTS_DIR TEST_BINARY [ARGS...]
set -euo pipefail
scripts=${1:?usage: run_with_postgres.sh SCRIPTS_DIR TEST_BINARY [ARGS...]}
shift
dir=$(mktemp -d /tmp/holdfast-bbpg-XXXXXX)
chmod 755 "$dir"  # the server runs as user 'postgres' when we are root
cleanup() {
  "$scripts/stop-postgres.sh" "$dir/pg" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
url=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))  # taken by someone else? the next attempt picks another
  # Without fsync (a throw-away server need not survive a power loss), commits cost no disk
  # flush: most of what a node's start and each statement cost on a machine busy with builds.
  if url=$("$scripts/start-postgres.sh" "$dir/pg" "$port" fsync=off 2>"$dir/start.err"); then break; fi
  url=""
done
if [ -z "$url" ]; then
  echo "run_with_postgres: PostgreSQL did not start:" >&2
  cat "$dir/start.err" >&2
  exit 1
fi
HOLDFAST_TEST_STORE_URL="$url" "$@"
