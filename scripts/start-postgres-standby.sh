#!/usr/bin/env bash
# Starts a throw-away PostgreSQL standby of a server started by scripts/start-postgres.sh, for
# failover tests.
# Usage: scripts/start-postgres-standby.sh DIR PORT PRIMARY_PORT NAME
#   DIR           the standby's folder; a cluster already there is removed first
#   PORT          its TCP port on 127.0.0.1
#   PRIMARY_PORT  the primary's port on 127.0.0.1
#   NAME          its name as a standby (cluster_name, so the application_name the primary
#                 sees): what the primary's synchronous_standby_names must list
# It is a copy of the primary (pg_basebackup -R) streaming from it. Once promoted it does not
# wait for a standby of its own (synchronous_standby_names '', as an HA agent leaves a lone
# primary) until an ALTER SYSTEM says otherwise. Prints its connection URL on success. Stop it
# with scripts/stop-postgres.sh DIR. Runs as the 'postgres' user when root.
set -euo pipefail
dir=${1:?usage: start-postgres-standby.sh DIR PORT PRIMARY_PORT NAME}
port=${2:?usage: start-postgres-standby.sh DIR PORT PRIMARY_PORT NAME}
primary_port=${3:?usage: start-postgres-standby.sh DIR PORT PRIMARY_PORT NAME}
name=${4:?usage: start-postgres-standby.sh DIR PORT PRIMARY_PORT NAME}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bindir/pg_basebackup" ] || { echo "start-postgres-standby: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/data"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
"${as_pg[@]}" "$bindir/pg_basebackup" -D "$dir/data" -h 127.0.0.1 -p "$primary_port" -U postgres \
  -R -X stream -c fast --no-sync >"$dir/basebackup.log" 2>&1 \
  || { cat "$dir/basebackup.log" >&2; exit 1; }
# Later lines win: the primary's own synchronous_standby_names came along in the copy.
echo "synchronous_standby_names = ''" >>"$dir/data/postgresql.auto.conf"
opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=300 -c cluster_name=$name"
"${as_pg[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null \
  || { cat "$dir/server.log" >&2; exit 1; }
echo "postgresql://postgres@127.0.0.1:$port/postgres"
