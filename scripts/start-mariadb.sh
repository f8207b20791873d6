#!/usr/bin/env bash
# Starts a throw-away MariaDB server for tests and benchmarks.
# Usage: scripts/start-mariadb.sh DIR PORT
# Root may connect over 127.0.0.1:PORT with an empty password. Prints
# mysql://root@127.0.0.1:PORT on success. Stop it with scripts/stop-mariadb.sh DIR.
set -euo pipefail
dir=${1:?usage: start-mariadb.sh DIR PORT}
port=${2:?usage: start-mariadb.sh DIR PORT}
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] \
  || { echo "start-mariadb: mariadbd not found (apt-get install mariadb-server)" >&2; exit 1; }
PATH="$PATH:/usr/sbin"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
user_opt=()
if [ "$(id -u)" -eq 0 ]; then user_opt=(--user=root); fi
if [ ! -d "$dir/data/mysql" ]; then
  mariadb-install-db --no-defaults --datadir="$dir/data" "${user_opt[@]}" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; exit 1; }
fi
mariadbd --no-defaults --datadir="$dir/data" "${user_opt[@]}" --port="$port" --bind-address=127.0.0.1 \
  --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --skip-log-bin \
  --innodb-buffer-pool-size=64M --max-connections=300 >"$dir/server.log" 2>&1 &
for _ in $(seq 1 300); do
  if mariadb-admin --no-defaults -h 127.0.0.1 -P "$port" -u root ping >/dev/null 2>&1; then
    echo "mysql://root@127.0.0.1:$port"
    exit 0
  fi
  if ! kill -0 $! 2>/dev/null; then cat "$dir/server.log" >&2; exit 1; fi
  sleep 0.1
done
echo "start-mariadb: server did not answer within 30 s" >&2
cat "$dir/server.log" >&2
exit 1
