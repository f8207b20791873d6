#!/usr/bin/env bash
# Runs the sql_fencing example against a throw-away PostgreSQL: starts one on a free loopback
# port in a temporary folder, runs the example, and always stops and deletes the server.
# Usage: run_example.sh SQL_FENCING_BINARY SCRIPTS_DIR
set -euo pipefail
bin=${1:?usage: run_example.sh BINARY SCRIPTS_DIR}
scripts=${2:?usage: run_example.sh BINARY SCRIPTS_DIR}
dir=$(mktemp -d /tmp/holdfast-sql-fencing.XXXXXX)
chmod 755 "$dir"  # the server runs as user 'postgres' when we are root
trap '"$scripts/stop-postgres.sh" "$dir/pg"; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=$("$scripts/start-postgres.sh" "$dir/pg" "$port")
"$bin" "$url"
