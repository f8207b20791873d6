#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server for tests and benchmarks.
# Usage: scripts/start-postgres.sh DIR PORT [extra postgres -c settings...]
#   DIR   an empty or missing folder; the cluster, its socket and its log live there
#   PORT  the TCP port on 127.0.0.1
# Prints the connection URL (postgresql://postgres@127.0.0.1:PORT/postgres) on success.
# Stop it with scripts/stop-postgres.sh DIR. Runs the server as the 'postgres' user when root
# (PostgreSQL refuses to run as root).
set -euo pipefail
dir=${1:?usage: start-postgres.sh DIR PORT}
port=${2:?usage: start-postgres.sh DIR PORT}
shift 2
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bindir/initdb" ] || { echo "start-postgres: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$(id -u)" -eq 0 ]; then
  chown postgres: "$dir"
  # A private parent (mktemp -d makes 0700 folders) stops the postgres user before initdb does.
  "${as_pg[@]}" test -x "$dir" -a -w "$dir" \
    || { echo "start-postgres: user 'postgres' cannot reach $dir; make its parent folders traversable (chmod o+x)" >&2; exit 1; }
fi
if [ ! -f "$dir/data/PG_VERSION" ]; then
  "${as_pg[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
fi
opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=300"
for extra in "$@"; do opts="$opts -c $extra"; done
"${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null \
  || { cat "$dir/server.log" >&2; exit 1; }
echo "postgresql://postgres@127.0.0.1:$port/postgres"
