#!/bin/sh
# Installs the client component of the main build into a temporary prefix, then builds and
# runs the consumer in this folder twice: with find_package(holdfast) and with pkg-config.
# Then docs/client.md's fenced update, copied from the page, built against the installed
# holdfast::client and holdfast::sql and run against the main build's server (with
# credentials) and a throw-away PostgreSQL.
# Usage: run.sh CMAKE MAIN_BUILD_DIR THIS_DIR WORK_DIR PKG_CONFIG CXX SCRIPTS_DIR CLIENT_DOC
set -eu
cmake=$1 build=$2 src=$3 work=$4 pkgconfig=$5 cxx=$6 scripts=$7 doc=$8
rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"  # the PostgreSQL server runs as user 'postgres' when we are root
prefix="$work/prefix"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  "$scripts/stop-postgres.sh" "$work/pg" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$cmake" --install "$build" --prefix "$prefix" --component client
for header in client.h sql/advisory_lock.h sql/fencing.h; do
  test -f "$prefix/include/holdfast/$header" || { echo "not installed: holdfast/$header" >&2; exit 1; }
done

# The page's code block that makes the fenced update, with this server's address.
awk '/^```cpp/ { inside = 1; block = ""; next }
     /^```/ && inside { inside = 0; if (block ~ /fenced_update\(db/) printf "%s", block; next }
     inside { block = block $0 "\n" }' "$doc" > "$work/doc_example.inc"
grep -q 'fenced_update(db' "$work/doc_example.inc" || { echo "no fenced_update example in $doc" >&2; exit 1; }

echo "== a server with credentials, and PostgreSQL"
url=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))  # taken? the next attempt picks another
  if url=$("$scripts/start-postgres.sh" "$work/pg" "$port" 2>"$work/pg-start.err"); then break; fi
  url=""
done
[ -n "$url" ] || { cat "$work/pg-start.err" >&2; exit 1; }

mkdir -p "$work/server"
alice=$("$build/holdfast" auth new-token)
bob=$("$build/holdfast" auth new-token)
{
  printf '[[member]]\nuserId = "alice"\ntokenSha256 = "%s"\n\n' "$(echo "$alice" | awk '/^tokenSha256/ { print $2 }')"
  printf '[[member]]\nuserId = "bob"\ntokenSha256 = "%s"\n' "$(echo "$bob" | awk '/^tokenSha256/ { print $2 }')"
} > "$work/server/credentials.toml"
printf '[auth]\ncredentials = "credentials.toml"\n' > "$work/server/holdfast.toml"
"$build/holdfast" serve --config "$work/server/holdfast.toml" --data-dir "$work/server/data" \
  --listen 127.0.0.1:0 --http "" > "$work/server/ready" 2> "$work/server/log" &
server_pid=$!
# The ready line names the port the server bound (it prints it once every listener is up).
for _ in $(seq 300); do
  grep -q '^holdfast ready' "$work/server/ready" && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
address=$(sed -n 's/^holdfast ready resp=\([^ ]*\).*/\1/p' "$work/server/ready")
[ -n "$address" ] || { echo "the server did not get ready:" >&2; cat "$work/server/log" >&2; exit 1; }

mkdir -p "$work/example"
sed "s/127\.0\.0\.1:7420/$address/g" "$work/doc_example.inc" > "$work/example/doc_example.inc"

echo "== find_package(holdfast COMPONENTS sql)"
"$cmake" -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DHOLDFAST_EXAMPLE_DIR="$work/example"
"$cmake" --build "$work/build"
"$work/build/consumer"

echo "== pkg-config holdfast, holdfast-sql"
pc=$(find "$prefix" -name holdfast.pc)
test -n "$pc"
export PKG_CONFIG_PATH="$(dirname "$pc")"
"$pkgconfig" --modversion holdfast holdfast-sql
# shellcheck disable=SC2046 # the flags are meant to split into words
"$cxx" "$src/main.cc" $("$pkgconfig" --cflags holdfast) -o "$work/consumer-pc" $("$pkgconfig" --libs holdfast)
"$work/consumer-pc"
# shellcheck disable=SC2046
"$cxx" "$src/fenced_update.cc" -I"$work/example" $("$pkgconfig" --cflags holdfast holdfast-sql) \
  -o "$work/fenced-update-pc" $("$pkgconfig" --libs holdfast holdfast-sql)

echo "== docs/client.md's fenced update, built each way"
alice_token=$(echo "$alice" | awk '/^token / { print $2 }')
bob_token=$(echo "$bob" | awk '/^token / { print $2 }')
"$work/build/fenced_update" "$alice_token" "$bob_token" "$address" "$url"
"$work/fenced-update-pc" "$alice_token" "$bob_token" "$address" "$url"
