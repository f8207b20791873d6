#!/usr/bin/env bash
# Stops a server started by scripts/start-mariadb.sh DIR. Quiet if not running.
set -euo pipefail
dir=${1:?usage: stop-mariadb.sh DIR}
[ -f "$dir/mysqld.pid" ] || exit 0
pid=$(cat "$dir/mysqld.pid")
kill "$pid" 2>/dev/null || exit 0
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
kill -9 "$pid" 2>/dev/null || true
