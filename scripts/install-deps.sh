#!/usr/bin/env bash
# Installs the Debian packages Holdfast needs to build, test and serve.
# Idempotent: asks dpkg first and runs apt-get only for packages that are missing.
# Usage: scripts/install-deps.sh [build|test|bench|package]   (default: test)
#        scripts/install-deps.sh --list PROFILE       prints the profile's packages, one a line
set -euo pipefail

list_only=false
if [ "${1:-}" = "--list" ]; then
  list_only=true
  shift
fi
profile="${1:-test}"

# What configuring and building the server, the CLI, the client library, the examples and
# holdfast-bench needs (`make serve`, `make build`); scripts/check-build-deps.sh, run by
# `make test`, fails if the build ever needs anything else.
build_pkgs=(
  build-essential cmake ninja-build pkg-config g++
  libboost1.81-dev libboost-json1.81-dev libtomlplusplus-dev libcli11-dev
  libspdlog-dev libre2-dev libssl-dev libpq-dev libmariadb-dev libabsl-dev liblua5.1-0-dev
)
# What the tests add: GoogleTest, the programs they run (tests/CMakeLists.txt names the
# package of each), and clang for the fuzzers and the sanitizer builds.
test_pkgs=(
  libgtest-dev
  clang clang-format libclang-rt-14-dev llvm python3 curl openssl procps psmisc
  redis-tools redis-server postgresql mariadb-server
  etcd-server gnuplot-nox
  python3-redis nodejs chromium tmux
)
# openssl makes the certificates of the TLS tests (and of the benchmark's TLS targets).
# python3-redis and nodejs run the client-library suites (tests/clients/); their npm packages
# are installed below. tmux lets a test type into an interactive redis-cli.
# The smoke run of the benchmark (ctest bench_smoke) starts etcd and draws its charts, so
# etcd-server and gnuplot-nox are test packages; llvm brings llvm-cov for `make coverage`.
# nodejs and chromium run the JavaScript client's tests (tests/js): its suites, and a page in
# headless Chromium; chromium also runs the web page's browser test (tests/ui).
# The full benchmark run needs nothing more.
bench_pkgs=()
# What `make package` adds to the build packages: cpack's Debian generator runs dpkg-shlibdeps
# (dpkg-dev) on the binary, which it finds with `file`.
package_pkgs=(dpkg-dev file)
# What the package's test adds (tests/package): it checks the unit with systemd-analyze, the
# manual page with man, and the zsh completion in zsh; adduser is what the package depends on.
package_test_pkgs=(systemd man-db zsh adduser)

wanted=("${build_pkgs[@]}")
case "$profile" in
  build) ;;
  test) wanted+=("${test_pkgs[@]}" "${package_pkgs[@]}" "${package_test_pkgs[@]}") ;;
  bench) wanted+=("${test_pkgs[@]}" "${package_pkgs[@]}" "${package_test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  package) wanted+=("${package_pkgs[@]}") ;;
  *) echo "install-deps: unknown profile '$profile' (build|test|bench|package)" >&2; exit 2 ;;
esac

if $list_only; then
  printf '%s\n' "${wanted[@]}"
  exit 0
fi

missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$pkg")
done

# Debian's nodejs leaves npm to a package of its own; NodeSource's nodejs brings it along.
if [ "$profile" != build ] && [ "$profile" != package ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
# The npm packages of the tests, at the versions each package-lock.json pins: the Node.js client
# libraries of tests/clients/node, and puppeteer-core for the web page's browser test
# (tests/ui); again only when a lock file changed since the last install.
install_node_modules() {
  local root dir
  root="$(cd "$(dirname "$0")/.." && pwd)"
  case "$profile" in build | package) return 0 ;; esac
  for dir in "$root/tests/clients/node" "$root/tests/ui"; do
    if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
      continue
    fi
    if ! command -v npm >/dev/null; then
      echo "install-deps: npm is missing (Node.js 20 or later with npm is needed for ${dir#"$root"/})" >&2
      exit 1
    fi
    echo "install-deps: npm ci in ${dir#"$root"/}"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  done
}

if [ ${#missing[@]} -eq 0 ]; then
  install_node_modules
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages and not root; install them with: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Package servers started by their postinst are not wanted: tests start their own.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_node_modules
