#!/usr/bin/env bash
# The JavaScript client's checks, as ctest runs them (tests/js/CMakeLists.txt). They run in a
# copy of clients/js inside the build tree, so node_modules and compiled files stay out of the
# source tree; npm's download cache lives beside it, so a second run needs no network.
#
#   ctest.sh setup SRC WORK   copy SRC to WORK, npm ci (only when the lock file changed), compile
#   ctest.sh suites WORK      the node --test suites against a real server (HOLDFAST_BIN)
#   ctest.sh browser WORK     the headless Chromium test (HOLDFAST_BIN)
#   ctest.sh types WORK       tsc --noEmit over the example project, with and without Node types
set -euo pipefail
cmd=${1:?usage: ctest.sh setup SRC WORK | suites WORK | browser WORK | types WORK}
case "$cmd" in
  setup)
    src=${2:?source folder}
    work=${3:?work folder}
    mkdir -p "$work"
    rm -rf "$work/src" "$work/test" "$work/examples" "$work/dist" "$work/build-test"
    cp -R "$src/src" "$src/test" "$src/examples" "$src/package.json" "$src/package-lock.json" \
      "$src/tsconfig.json" "$src/README.md" "$work/"
    if ! cmp -s "$work/package-lock.json" "$work/node_modules/.installed-from-lock"; then
      (cd "$work" && npm ci --cache "$work/../npm-cache" --prefer-offline --no-audit --no-fund --ignore-scripts)
      cp "$work/package-lock.json" "$work/node_modules/.installed-from-lock"
    fi
    cd "$work"
    npx --no-install tsc -p tsconfig.json
    npx --no-install tsc -p test/tsconfig.json
    ;;
  suites)
    cd "${2:?work folder}"
    exec node --test build-test/test/*.test.js
    ;;
  browser)
    cd "${2:?work folder}"
    exec node --test build-test/test/browser/*.test.js
    ;;
  types)
    cd "${2:?work folder}"
    npx --no-install tsc -p examples/tsconfig.json
    npx --no-install tsc -p examples/tsconfig.browser.json
    echo "types: the example project type-checks against dist/index.d.ts (with and without Node types)"
    ;;
  *)
    echo "ctest.sh: unknown command '$cmd'" >&2
    exit 2
    ;;
esac
