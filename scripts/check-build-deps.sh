#!/usr/bin/env bash
# Checks that configuring and building the server needs nothing beyond the build packages of
# scripts/install-deps.sh, so that `make serve` works on a machine that never ran `make test`.
# Run by `make test` (and `make check-deps`) after the tests; exits 1 with what is wrong.
#
#   1. The allowed packages: the build list, every package they depend on (recursively,
#      through alternatives and virtual packages), and the essential packages and theirs.
#   2. A PATH of only their programs: a folder of symlinks to every program in /usr/bin,
#      /usr/sbin, /bin and /sbin whose file belongs to an allowed package. CMake is also told
#      to ignore those four folders, so every program it looks up comes from that PATH.
#   3. With that PATH and nothing else in the environment, a tree with the tests off is
#      configured from scratch and the holdfast binary's build graph run in it: every step
#      as the build runs it (generated sources included), except that the compiler only
#      preprocesses (which finds every header and lists it in the step's depfile) and the
#      link only records the libraries it names. This checks what the build needs, not what
#      it makes, at a tenth of a real build's cost; `make test`'s own build makes it.
#   4. Every absolute path in that tree's CMakeCache.txt (headers, libraries, CMake package
#      files, programs), every header a source includes and every library the link names
#      must belong to an allowed package.
#   5. A tree with the tests on, configured with the same PATH, must fail and name the Debian
#      package of each missing test program (tests/test_tools.cmake).
#
# Usage: scripts/check-build-deps.sh WORK_DIR   (kept between runs; `make clean` removes it)
set -euo pipefail
export LC_ALL=C  # one byte order for sort and join

src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:?usage: check-build-deps.sh WORK_DIR}
mkdir -p "$work"
work=$(cd "$work" && pwd)
started=$SECONDS

say() { echo "check-build-deps: $*"; }
fail() {
  echo "check-build-deps: FAILED: $*" >&2
  exit 1
}

# 1. The allowed packages.
mapfile -t build_pkgs < <("$src/scripts/install-deps.sh" --list build)
for pkg in "${build_pkgs[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)" = installed ] ||
    fail "build package $pkg is not installed (run scripts/install-deps.sh build)"
done
dpkg-query -W -f='${db:Status-Status}\t${Package}\t${Essential}\t${Provides}\t${Pre-Depends}, ${Depends}\n' |
  awk -F'\t' -v roots="${build_pkgs[*]}" '
    function bare(name) {  # "libc6 (>= 2.34)", "perl:any" -> "libc6", "perl"
      gsub(/\(.*\)/, "", name); gsub(/[ \t]/, "", name); sub(/:.*/, "", name); return name
    }
    function visit(name,   n, i) {
      if (name in seen) return
      if (name in installed) { seen[name] = 1; queue[++tail] = name }
      n = split(providers[name], p, " ")
      for (i = 1; i <= n; i++) visit(p[i])
    }
    $1 == "installed" {
      installed[$2] = 1; depends[$2] = $5
      if ($3 == "yes") essential[$2] = 1
      n = split($4, provided, ",")
      for (i = 1; i <= n; i++) if (bare(provided[i]) != "") providers[bare(provided[i])] = providers[bare(provided[i])] " " $2
    }
    END {
      n = split(roots, r, " ")
      for (i = 1; i <= n; i++) visit(r[i])
      for (pkg in essential) visit(pkg)
      for (head = 1; head <= tail; head++) {
        nd = split(depends[queue[head]], clauses, ",")
        for (c = 1; c <= nd; c++) {
          na = split(clauses[c], alternatives, "|")
          for (a = 1; a <= na; a++) if (bare(alternatives[a]) != "") visit(bare(alternatives[a]))
        }
      }
      for (pkg in seen) print pkg
    }' | sort >"$work/allowed-packages"
say "$(wc -l <"$work/allowed-packages") allowed packages (${#build_pkgs[@]} build packages, their dependencies, the essential ones)"
# Every file and folder of the allowed packages, with /bin, /lib... also under /usr (merged /usr).
xargs dpkg-query -L <"$work/allowed-packages" 2>/dev/null |
  awk '/^\// { print; if ($0 !~ /^\/usr\//) print "/usr" $0 }' | sort -u >"$work/allowed-files"

# owned PATH: is the file PATH (after symlinks) part of an allowed package?
allowed_file() {
  local real
  real=$(readlink -f -- "$1") || return 1
  grep -qxF -- "$real" "$work/allowed-files"
}

# 2. The PATH of the allowed programs.
rm -rf "$work/bin"
mkdir -p "$work/bin"
find /usr/bin/ /usr/sbin/ /bin/ /sbin/ -mindepth 1 -maxdepth 1 ! -type d -executable -print \
  >"$work/programs"
xargs -d '\n' readlink -f -- <"$work/programs" | paste - "$work/programs" | sort -t $'\t' -k1,1 |
  join -t $'\t' - "$work/allowed-files" |
  while IFS=$'\t' read -r _ program; do
    [ -e "$work/bin/${program##*/}" ] || ln -s "$program" "$work/bin/${program##*/}"
  done
for tool in cmake ninja c++ cc pkg-config ld as ar; do
  [ -e "$work/bin/$tool" ] || fail "$tool is not in the PATH of the build packages"
done
say "$(ls "$work/bin" | wc -l) programs on the PATH"

in_clean_env() {
  env -i PATH="$work/bin" HOME="$work/home" LANG=C.UTF-8 "$@"
}
mkdir -p "$work/home"
ignore_bin_dirs="/usr/bin;/usr/sbin;/bin;/sbin;/usr/local/bin;/usr/local/sbin"

# 3. Configure from scratch with the tests off, and run the server's build graph with a
#    compiler that only preprocesses and a link that only records (launchers, below).
tree="$work/tests-off"
rm -rf "$tree"
in_clean_env c++ -c -x c++ /dev/null -o "$work/empty.o" || fail "c++ cannot compile an empty file"
# Compile steps: preprocessing only (-E, output discarded); the depfile (-MD -MF) lists every
# header, and an empty object stands where the step's object goes, for `ar` and the link.
cat >"$work/preprocess" <<LAUNCHER
#!/bin/bash
args=() out=
while [ \$# -gt 0 ]; do
  case "\$1" in
    -o) out=\$2; args+=(-o /dev/null); shift 2 ;;
    -c) args+=(-E); shift ;;
    *) args+=("\$1"); shift ;;
  esac
done
"\${args[@]}" && cp "$work/empty.o" "\$out"
LAUNCHER
# Link steps: the absolute paths the link names, recorded; an empty file as the binary.
cat >"$work/link" <<LAUNCHER
#!/bin/bash
out=
while [ \$# -gt 0 ]; do
  case "\$1" in
    -o) out=\$2; shift ;;
    /*) echo "\$1" >>"$work/linked" ;;
  esac
  shift
done
: >"\$out"
LAUNCHER
chmod +x "$work/preprocess" "$work/link"
: >"$work/linked"
t=$SECONDS
in_clean_env cmake -S "$src" -B "$tree" -G Ninja -DHOLDFAST_TESTS=OFF \
  -DCMAKE_C_COMPILER_LAUNCHER="$work/preprocess" -DCMAKE_CXX_COMPILER_LAUNCHER="$work/preprocess" \
  -DCMAKE_CXX_LINKER_LAUNCHER="$work/link" -DCMAKE_C_LINKER_LAUNCHER="$work/link" \
  -DCMAKE_IGNORE_PATH="$ignore_bin_dirs" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; fail "configuring with only the build packages failed (above)"; }
say "configured with the tests off in $((SECONDS - t)) s"
t=$SECONDS
in_clean_env cmake --build "$tree" --target holdfast >"$work/build.log" 2>&1 ||
  { tail -n 50 "$work/build.log" >&2; fail "the holdfast build steps with only the build packages failed (above)"; }
[ -s "$work/linked" ] || fail "the holdfast build steps ran no link (the link launcher was not used)"
say "ran the holdfast build steps (preprocessing, generated sources, the link's inputs) in $((SECONDS - t)) s"

# 4. Everything the configuration found belongs to an allowed package.
outside=()
while read -r path; do
  case "$path" in "$src" | "$src"/* | "$work" | "$work"/* | /tmp/* | /proc/*) continue ;; esac
  [ -e "$path" ] || continue
  allowed_file "$path" || outside+=("$path ($(dpkg -S "$(readlink -f -- "$path")" 2>/dev/null | cut -d: -f1 || echo 'no package'))")
done < <(grep -Ev '^((_GNUInstallDirs_LAST_)?CMAKE_INSTALL_|CMAKE_IGNORE_PATH)' "$tree/CMakeCache.txt" |
  # (where to install and what to ignore are not things the configuration found)
  sed -n 's/^[A-Za-z0-9_.+-]*:[A-Z]*=//p' | tr ';' '\n' | grep -o '^/[^ ]*' | sort -u)
if [ ${#outside[@]} -gt 0 ]; then
  printf '  %s\n' "${outside[@]}" >&2
  fail "the build configuration uses files outside the build packages (above): add their package to build_pkgs in scripts/install-deps.sh, or stop using them"
fi
say "every path in CMakeCache.txt belongs to an allowed package"
# Headers (from the depfiles, which ninja keeps in its log) and the libraries the link named,
# outside the project's trees.
in_clean_env ninja -C "$tree" -t deps | sed -n 's|^    \(/.*\)|\1|p' |
  cat - "$work/linked" | grep -v -e "^$src/" -e "^$work/" | sort -u >"$work/used"
grep -q '^/usr/include/boost/' "$work/used" || fail "the depfiles name no Boost header: the check sees no headers"
xargs -d '\n' readlink -f -- <"$work/used" | paste - "$work/used" | sort -t $'\t' -k1,1 |
  join -t $'\t' -v 1 - "$work/allowed-files" | cut -f 2 >"$work/used-outside"
if [ -s "$work/used-outside" ]; then
  while read -r path; do
    echo "  $path ($(dpkg -S "$(readlink -f -- "$path")" 2>/dev/null | cut -d: -f1 || echo 'no package'))" >&2
  done <"$work/used-outside"
  fail "building holdfast uses headers or libraries outside the build packages (above): add their package to build_pkgs in scripts/install-deps.sh, or stop using them"
fi
say "all $(wc -l <"$work/used") headers and libraries the build uses belong to allowed packages"

# 5. With the tests on, a missing test program is named with its package.
rm -rf "$work/tests-on"
if in_clean_env cmake -S "$src" -B "$work/tests-on" -G Ninja -DHOLDFAST_TESTS=ON \
  -DCMAKE_IGNORE_PATH="$ignore_bin_dirs" >"$work/configure-tests.log" 2>&1; then
  fail "configuring the tests without their programs succeeded; tests/test_tools.cmake no longer checks them"
fi
grep -q "redis-cli (redis-tools)" "$work/configure-tests.log" ||
  { cat "$work/configure-tests.log" >&2; fail "configuring the tests without redis-cli did not name its package (above)"; }
rm -rf "$work/tests-on"
say "configuring the tests without their programs names their packages"
say "passed in $((SECONDS - started)) s"
