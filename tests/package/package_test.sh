#!/usr/bin/env bash
# The Debian package end to end, on this machine (as root; skipped otherwise):
#
#   1. cpack builds the .deb from this build dir (packaging/CMakeLists.txt); its control
#      fields, conffiles and contents are what the package promises, and its Depends name
#      the package of every library the binary links (dpkg-shlibdeps' work).
#   2. dpkg -i installs it: the files, the holdfast system user, the state dir, the unit
#      enabled; systemd-analyze verifies the unit and scores its hardening.
#   3. The packaged server runs: under systemd when systemd is the init here (the unit's own
#      start, whose status is the ready line that READY=1 brought; a reload; a stop),
#      otherwise as the unit would run it (its ExecStart line, as the holdfast user) on free
#      ports; as holdfast either way, it answers PING, grants the packaged client a lock, and
#      what it writes in /var/lib/holdfast is holdfast's.
#   4. holdfast(1) is found by man and lists every command and option `holdfast --help`
#      lists; the bash completion completes commands, options and values; the zsh one passes
#      zsh -n and completes in an interactive zsh (driven through tmux).
#   5. dpkg -r removes the files but keeps the configuration, the state and the user;
#      dpkg -P removes those too.
#
# Whatever happens, the machine is left as it was: the trap stops what the test started and
# purges the package. The test skips where a holdfast package, user or directory already
# exists (it would remove them), runs one at a time on a machine (a lock in /run/lock), and
# waits for another process's dpkg lock.
#
# Usage: package_test.sh BUILD_DIR CPACK REDIS_CLI
set -euo pipefail # (so no pipeline here may stop reading early: a writer's SIGPIPE fails it)
build=$(cd "$1" && pwd)
cpack=$2
redis_cli=$3

say() { echo "package_test: [${SECONDS} s] $*"; }
fail() {
  echo "package_test: FAILED: $*" >&2
  exit 1
}
skip() {
  echo "package_test: skipped: $*"
  exit 77
}
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() { [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"; }
expect_file() { [ -e "$1" ] || fail "$1 is missing"; }
expect_gone() { [ ! -e "$1" ] && [ ! -L "$1" ] || fail "$1 is still there"; }
# dpkg_run LOG ARGS...: dpkg ARGS with its output in LOG. Another dpkg or apt on this machine
# holds dpkg's lock while it works: wait for it (up to 2 minutes) rather than fail.
dpkg_run() {
  local log=$1 attempt
  shift
  for attempt in $(seq 120); do
    dpkg "$@" >"$log" 2>&1 && return 0
    grep -q "locked by another process" "$log" || return 1
    [ "$attempt" -gt 1 ] || echo "package_test: dpkg waits for another process's dpkg lock"
    sleep 1
  done
  return 1
}
package_status() { dpkg-query -W -f='${db:Status-Status}' holdfast 2>/dev/null || echo not-installed; }

[ "$(id -u)" -eq 0 ] || skip "installing a package needs root"
# One run at a time on this machine, from whichever build dir (the lock ends with the process).
exec 9>/run/lock/holdfast-package-test.lock
flock -w 240 9 || fail "another package test held /run/lock/holdfast-package-test.lock for 4 minutes"
[ "$(package_status)" = not-installed ] ||
  skip "a holdfast package is on this machine ($(package_status)); the test would remove it"
! getent passwd holdfast >/dev/null || skip "a holdfast user exists; purging the package would remove it"
! getent group holdfast >/dev/null || skip "a holdfast group exists; purging the package would remove it"
for path in /var/lib/holdfast /etc/holdfast; do
  [ ! -e "$path" ] || skip "$path exists; purging the package would remove it"
done

work=$(mktemp -d /tmp/holdfast-package-test.XXXXXX)
server_pid=
tmux_socket="$work/tmux.sock"
cleanup() {
  local status=$?
  set +e # every step below runs, whatever the one before it did
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  [ -S "$tmux_socket" ] && tmux -S "$tmux_socket" kill-server 2>/dev/null
  if [ "$(package_status)" != not-installed ]; then
    [ -d /run/systemd/system ] && systemctl stop holdfast.service 2>/dev/null
    dpkg_run "$work/cleanup-purge.log" -P holdfast || cat "$work/cleanup-purge.log" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 1. Build and inspect the package.
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/cpack" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed (above)"; }
debs=("$work"/cpack/holdfast_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single holdfast_*.deb: ${debs[*]}"
deb=${debs[0]}
arch=$(dpkg --print-architecture)
expect_eq "package file" "holdfast_$(dpkg-deb -f "$deb" Version)_$arch.deb" "${deb##*/}"
expect_eq Package holdfast "$(dpkg-deb -f "$deb" Package)"
expect_eq Architecture "$arch" "$(dpkg-deb -f "$deb" Architecture)"
expect_eq Section net "$(dpkg-deb -f "$deb" Section)"
[ -n "$(dpkg-deb -f "$deb" Maintainer)" ] || fail "no Maintainer"
description=$(dpkg-deb -f "$deb" Description)
[[ ${description%%$'\n'*} == *"lock service"* ]] || fail "Description: $description"
depends=$(dpkg-deb -f "$deb" Depends)
depends_names=" $(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/[[:space:]]//g' | tr '\n' ' ') "
[[ $depends_names == *" adduser "* ]] || fail "Depends has no adduser: $depends"
# dpkg-shlibdeps' work: every library the binary links (its NEEDED entries) comes with a
# package in Depends, the one that owns it or a name that package provides (libspdlog1.10
# provides libspdlog1.10-fmt9).
ldd "$build/holdfast" >"$work/ldd"
while read -r soname; do
  # "libx.so.1 => /path (0x...)", or for the dynamic loader "/path/ld-linux.so.2 (0x...)".
  library=$(awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 } $1 ~ "/" s "$" { print $1 }' "$work/ldd")
  [ -n "$library" ] || fail "ldd does not find $soname, which holdfast needs"
  owner=
  for candidate in "$library" "/usr$library" "${library#/usr}" "$(readlink -f "$library")"; do
    owner=$(dpkg-query -S "$candidate" 2>/dev/null) && owner=${owner%%:*} && [ -n "$owner" ] && break
  done
  [ -n "$owner" ] || fail "no package owns $library, which holdfast loads"
  found=
  for name in "$owner" $(dpkg-query -W -f='${Provides}' "$owner" | tr ',' '\n' | sed 's/(.*//'); do
    [[ $depends_names == *" $name "* ]] && found=$name
  done
  [ -n "$found" ] || fail "Depends lacks $owner (for $library): $depends"
done < <(readelf -d "$build/holdfast" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
say "control: $(dpkg-deb -f "$deb" Package Version Architecture Section | tr '\n' ' ')"
say "Depends: $depends"

dpkg-deb -c "$deb" >"$work/contents"
for path in ./usr/bin/holdfast ./lib/systemd/system/holdfast.service ./etc/holdfast/holdfast.toml \
  ./usr/share/man/man1/holdfast.1.gz ./usr/share/bash-completion/completions/holdfast \
  ./usr/share/zsh/vendor-completions/_holdfast ./usr/share/doc/holdfast/copyright \
  ./usr/share/doc/holdfast/changelog.Debian.gz; do
  grep -q " $path\$" "$work/contents" || fail "the package has no $path:$(printf '\n%s' "$(cat "$work/contents")")"
done
! grep -E ' \./usr/(include|lib)/' "$work/contents" || fail "the client library or headers are in the server package (above)"
! grep -v ' root/root ' "$work/contents" || fail "files not owned by root (above)"
grep -q '^-rwxr-xr-x .* \./usr/bin/holdfast$' "$work/contents" || fail "/usr/bin/holdfast is not 0755"
dpkg-deb -e "$deb" "$work/control"
expect_eq conffiles /etc/holdfast/holdfast.toml "$(cat "$work/control/conffiles")"
for script in postinst prerm postrm; do
  [ -x "$work/control/$script" ] || fail "the $script script is missing or not executable"
done
# Stripped: no debug sections in the packaged binary.
dpkg-deb -x "$deb" "$work/root"
readelf -S "$work/root/usr/bin/holdfast" >"$work/sections"
! grep '\.debug_' "$work/sections" || fail "the packaged binary has debug sections (above)"
say "contents: $(wc -l <"$work/contents") entries, conffile, maintainer scripts"

# 2. Install.
dpkg_run "$work/install.log" -i "$deb" || { cat "$work/install.log" >&2; fail "dpkg -i failed (above)"; }
expect_eq "status after dpkg -i" installed "$(package_status)"
for path in /usr/bin/holdfast /lib/systemd/system/holdfast.service /etc/holdfast/holdfast.toml \
  /usr/share/man/man1/holdfast.1.gz /usr/share/bash-completion/completions/holdfast \
  /usr/share/zsh/vendor-completions/_holdfast /usr/share/doc/holdfast/copyright; do
  expect_file "$path"
done
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd holdfast) || fail "no holdfast user after dpkg -i"
expect_eq "holdfast's home" /var/lib/holdfast "$home"
expect_eq "holdfast's shell" /usr/sbin/nologin "$shell"
[ "$uid" -lt 1000 ] || fail "holdfast is not a system user (uid $uid)"
expect_eq "holdfast's group" holdfast "$(getent group "$gid" | cut -d: -f1)"
expect_eq "/var/lib/holdfast" "holdfast:holdfast 750" "$(stat -c '%U:%G %a' /var/lib/holdfast)"
if command -v deb-systemd-helper >/dev/null; then
  expect_eq "the unit enabled" /lib/systemd/system/holdfast.service \
    "$(readlink /etc/systemd/system/multi-user.target.wants/holdfast.service)"
fi
say "installed: $(/usr/bin/holdfast --version), user holdfast ($uid), /var/lib/holdfast"

systemd-analyze verify /lib/systemd/system/holdfast.service >"$work/verify.log" 2>&1 ||
  { cat "$work/verify.log" >&2; fail "systemd-analyze verify failed (above)"; }
! grep holdfast "$work/verify.log" || fail "systemd-analyze verify warns about the unit (above)"
systemd-analyze security --offline=true /lib/systemd/system/holdfast.service >"$work/security.log" 2>&1 ||
  true # it exits non-zero when any setting could be tighter
exposure=$(sed -n 's/.*Overall exposure level for holdfast.service: \([0-9.]*\).*/\1/p' "$work/security.log")
[ -n "$exposure" ] || { cat "$work/security.log" >&2; fail "systemd-analyze security gave no exposure level"; }
# 10 is no hardening at all; the unit's settings bring it to about 1. Above 2, a setting was lost.
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || { cat "$work/security.log" >&2; fail "exposure level $exposure (above 2.0)"; }
say "systemd-analyze verify: clean; security: exposure $exposure"

# 3. The packaged server.
if [ -d /run/systemd/system ]; then
  # postinst started it (unless a policy-rc.d said no); start it if not.
  systemctl start holdfast.service ||
    { journalctl -u holdfast --no-pager | tail -n 20 >&2; fail "systemctl start holdfast failed"; }
  expect_eq "holdfast.service" active "$(systemctl is-active holdfast.service)"
  expect_eq "the unit's type" notify "$(systemctl show -p Type --value holdfast.service)"
  # `systemctl start` returned, so READY=1 came; its STATUS= is the ready line.
  ready=$(systemctl show -p StatusText --value holdfast.service)
  server_pid=$(systemctl show -p MainPID --value holdfast.service)
  how="holdfast.service under systemd"
else
  # No systemd here: what the unit runs, as the user it runs as, on free ports.
  exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/holdfast.service)
  read -r -a command <<<"$exec_start"
  setpriv --reuid holdfast --regid holdfast --init-groups --inh-caps=-all \
    "${command[@]}" --listen 127.0.0.1:0 --http 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" 9>&- &
  server_pid=$!
  for _ in $(seq 600); do # at most a minute, against a hang; it is ready long before
    grep -q '^holdfast ready ' "$work/serve.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  ready=$(head -n 1 "$work/serve.out")
  how="no systemd here: '$exec_start' as holdfast"
fi
[[ $ready == "holdfast ready resp=127.0.0.1:"*" unix=/var/lib/holdfast/holdfast.sock "*" mode=open" ]] ||
  { cat "$work/serve.err" 2>/dev/null >&2; fail "no ready line from the server: '$ready'"; }
port=$(sed -n 's/.*resp=127\.0\.0\.1:\([0-9]*\).*/\1/p' <<<"$ready")
expect_eq "the server's user" holdfast "$(ps -o user= -p "$server_pid")"
expect_eq "PING over TCP" PONG "$("$redis_cli" -p "$port" PING 2>&1)"
expect_eq "PING over the socket" PONG "$("$redis_cli" -s /var/lib/holdfast/holdfast.sock PING 2>&1)"
/usr/bin/holdfast locks acquire package-test --ttl 60000 --server "127.0.0.1:$port" >/dev/null ||
  fail "the packaged client could not take a lock from the packaged server"
if [ -d /run/systemd/system ]; then
  systemctl reload holdfast.service
  expect_eq "PING after a reload" PONG "$("$redis_cli" -p "$port" PING 2>&1)"
  systemctl stop holdfast.service
  expect_eq "holdfast.service after a stop" inactive "$(systemctl is-active holdfast.service || true)"
else
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "the server exited with $? on SIGTERM"
fi
server_pid=
owners=$(find /var/lib/holdfast -mindepth 1 -printf '%u:%g\n' | sort -u)
[ -n "$owners" ] || fail "the server wrote nothing in /var/lib/holdfast"
expect_eq "owner of what the server wrote" holdfast:holdfast "$owners"
say "$how: ready on port $port, PING, a lock from the packaged client, stopped"

# 4. The manual page and the completions.
expect_eq "man -w holdfast" /usr/share/man/man1/holdfast.1.gz "$(man -w holdfast)"
MANWIDTH=100 man --warnings holdfast 2>"$work/man.err" | col -b >"$work/man.txt"
[ ! -s "$work/man.err" ] || { cat "$work/man.err" >&2; fail "man warns about holdfast(1) (above)"; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS ENVIRONMENT FILES "EXIT STATUS" "SEE ALSO"; do
  grep -q "^$section\$" "$work/man.txt" || fail "holdfast(1) has no $section section"
done
grep -q "HOLDFAST_TOKEN" "$work/man.txt" || fail "holdfast(1) does not name HOLDFAST_TOKEN"
# Every command and option that --help shows is in the page.
/usr/bin/holdfast --help >"$work/help.txt"
commands=$(sed -n 's/^\(holdfast [a-z -]*\): .*/\1/p' "$work/help.txt")
[ "$(wc -l <<<"$commands")" -ge 15 ] || fail "found only these commands in --help: $commands"
while read -r cmd; do
  grep -q "^   $cmd\$" "$work/man.txt" || fail "holdfast(1) has no subsection for '$cmd'"
done <<<"$commands"
options=$(grep -oE '^ +(-[a-zA-Z],)?--[a-z][a-z-]*' "$work/help.txt" | grep -oE -- '--[a-z-]+' | sort -u)
while read -r option; do
  grep -qF -- "$option" "$work/man.txt" || fail "holdfast(1) does not mention $option"
done <<<"$options"
say "holdfast(1): $(wc -l <<<"$commands") commands, $(wc -l <<<"$options") options, as --help lists them"

# complete LINE: what the bash completion offers for LINE (the cursor at its end), sorted.
bash_complete() {
  bash --norc --noprofile -c '
    source /usr/share/bash-completion/completions/holdfast
    read -r -a COMP_WORDS <<<"$1"
    [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _holdfast 2>/dev/null
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$1"
}
expect_eq "bash: holdfast" "auth locks rules serve " "$(bash_complete "holdfast ")"
expect_eq "bash: holdfast locks ac" "acquire " "$(bash_complete "holdfast locks ac")"
expect_eq "bash: holdfast serve --fs" "--fsync " "$(bash_complete "holdfast serve --fs")"
expect_eq "bash: holdfast serve --fsync" "always horizon never " "$(bash_complete "holdfast serve --fsync ")"
expect_eq "bash: holdfast serve --fsync=h" "horizon " "$(bash_complete "holdfast serve --fsync = h")"
expect_eq "bash: holdfast serve --config /etc/holdfast/h" "/etc/holdfast/holdfast.toml " \
  "$(bash_complete "holdfast serve --config /etc/holdfast/h")"
expect_eq "bash: holdfast locks acquire K --js (an option of locks)" "--json " \
  "$(bash_complete "holdfast locks acquire K --js")"
expect_eq "bash: holdfast locks acquire --ttl 5 --se" "--server --session " \
  "$(bash_complete "holdfast locks acquire --ttl 5 --se")"
[[ " $(bash_complete "holdfast locks run K -- ech") " == *" echo "* ]] ||
  fail "bash: holdfast locks run K -- ech does not offer echo"
say "bash completion: commands, options, choices, files, a command after --"

zsh -n /usr/share/zsh/vendor-completions/_holdfast || fail "zsh -n rejects _holdfast"
# An interactive zsh finds _holdfast through its default fpath, as a user's shell would.
tmux -S "$tmux_socket" new-session -d -x 150 -y 40 "env -i HOME=$work TERM=xterm PATH=$PATH zsh -f"
tmux -S "$tmux_socket" send-keys 'autoload -Uz compinit && compinit -u -D && PS1="zsh> "' Enter
# zsh_screen_shows TEXT: waits (a minute at most, against a hang) until the pane shows TEXT.
# (capture-pane drops the blanks at the end of a line.)
zsh_screen_shows() {
  for _ in $(seq 600); do
    tmux -S "$tmux_socket" capture-pane -p >"$work/pane.txt"
    grep -qF -- "$1" "$work/pane.txt" && return 0
    sleep 0.1
  done
  cat "$work/pane.txt" >&2
  return 1
}
zsh_screen_shows "zsh> " || fail "zsh did not start"
tmux -S "$tmux_socket" send-keys 'holdfast locks acq' Tab
zsh_screen_shows "zsh> holdfast locks acquire" || fail "zsh: holdfast locks acq did not complete to acquire"
tmux -S "$tmux_socket" send-keys C-u 'holdfast serve --fsync ' Tab
zsh_screen_shows "horizon" || fail "zsh: holdfast serve --fsync offers no choices"
grep -q "always" "$work/pane.txt" && grep -q "never" "$work/pane.txt" || fail "zsh: --fsync's choices are not all offered"
tmux -S "$tmux_socket" send-keys C-u C-l 'holdfast ' Tab
zsh_screen_shows "Run the lock server" || fail "zsh: holdfast offers no described commands"
tmux -S "$tmux_socket" kill-server
say "zsh completion: passes zsh -n; completes commands with descriptions and --fsync's choices"

# 5. Remove, then purge.
dpkg_run "$work/remove.log" -r holdfast || { cat "$work/remove.log" >&2; fail "dpkg -r failed (above)"; }
expect_eq "status after dpkg -r" config-files "$(package_status)"
for path in /usr/bin/holdfast /lib/systemd/system/holdfast.service /usr/share/man/man1/holdfast.1.gz \
  /usr/share/bash-completion/completions/holdfast /usr/share/zsh/vendor-completions/_holdfast; do
  expect_gone "$path"
done
expect_file /etc/holdfast/holdfast.toml
expect_file /var/lib/holdfast
getent passwd holdfast >/dev/null || fail "dpkg -r removed the holdfast user; only a purge should"
say "dpkg -r: files gone; configuration, state and user kept"

dpkg_run "$work/purge.log" -P holdfast || { cat "$work/purge.log" >&2; fail "dpkg -P failed (above)"; }
expect_eq "status after dpkg -P" not-installed "$(package_status)"
for path in /etc/holdfast /var/lib/holdfast /etc/systemd/system/multi-user.target.wants/holdfast.service \
  /etc/systemd/system/holdfast.service; do
  expect_gone "$path"
done
! getent passwd holdfast >/dev/null || fail "dpkg -P left the holdfast user"
! getent group holdfast >/dev/null || fail "dpkg -P left the holdfast group"
say "dpkg -P: configuration, state, user and group gone"
say "passed"
