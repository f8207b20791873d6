#!/usr/bin/env bash
# Stops a server started by scripts/start-postgres.sh DIR (fast shutdown). Quiet if not running.
set -euo pipefail
dir=${1:?usage: stop-postgres.sh DIR}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi
[ -f "$dir/data/postmaster.pid" ] || exit 0
"${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
