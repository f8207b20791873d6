#!/bin/sh
# Installs the client component of the main build into a temporary prefix, then builds and
# runs the consumer in this folder twice: with find_package(holdfast) and with pkg-config.
# Usage: run.sh CMAKE MAIN_BUILD_DIR THIS_DIR WORK_DIR PKG_CONFIG CXX
set -eu
cmake=$1 build=$2 src=$3 work=$4 pkgconfig=$5 cxx=$6
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

"$cmake" --install "$build" --prefix "$prefix" --component client
test -f "$prefix/include/holdfast/client.h"

echo "== find_package(holdfast)"
"$cmake" -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx"
"$cmake" --build "$work/build"
"$work/build/consumer"

echo "== pkg-config holdfast"
pc=$(find "$prefix" -name holdfast.pc)
test -n "$pc"
export PKG_CONFIG_PATH="$(dirname "$pc")"
"$pkgconfig" --modversion holdfast
# shellcheck disable=SC2046 # the flags are meant to split into words
"$cxx" "$src/main.cc" $("$pkgconfig" --cflags holdfast) -o "$work/consumer-pc" $("$pkgconfig" --libs holdfast)
"$work/consumer-pc"
