#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build in BUILD_DIR into a temporary prefix, builds the consumer
# project against it with find_package and pkg-config, and runs each program.
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
test -x "$work/prefix/bin/sketch"
test -f "$work/prefix/include/sketch.h"
# the man page and the bash completion
test -s "$work/prefix/share/man/man1/sketch.1"
test -s "$work/prefix/share/bash-completion/completions/sketch"
man -l "$work/prefix/share/man/man1/sketch.1" > "$work/man.txt" 2> /dev/null
grep -q "SKETCH BLOOM ADD" "$work/man.txt"

version=$(sed -n 's/^#define SK_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
          "$here/../../include/sketch/core.h" | paste -sd.)
libdir=$(dirname "$(find "$work/prefix" -name sketch.pc)")
# pkgconf reads the SPDX licence field; older pkg-config passes over it.
license=$(sed -n 's/^License: //p' "$libdir/sketch.pc")
if [ "$license" != "BSD-3-Clause" ]; then
    echo "FAIL: sketch.pc names the licence '$license'"
    exit 1
fi
PKG_CONFIG_PATH=$libdir pkg-config --validate sketch
# Every installed header stands alone: a program may include any one of them.
for header in "$work/prefix/include/sketch.h" "$work/prefix/include/sketch"/*.h; do
    name=${header#"$work/prefix/include/"}
    if ! printf '#include <%s>\n' "$name" |
         cc -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$work/prefix/include" -x c -; then
        echo "FAIL: $name does not compile on its own"
        exit 1
    fi
    echo "ok: $name compiles on its own"
done
PKG_CONFIG_PATH=$libdir cmake -S "$here" -B "$work/build" \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DSKETCH_VERSION="$version" > /dev/null
cmake --build "$work/build" > /dev/null

for program in consumer_cmake consumer_static consumer_pkgconfig; do
    out=$(LD_LIBRARY_PATH=$work/prefix/lib:$libdir "$work/build/$program" a b a c)
    if [ "$out" != "3 $version" ]; then
        echo "FAIL: $program printed '$out'"
        exit 1
    fi
    echo "ok: $program: $out"
done
echo "ok: installed sketch: $("$work/prefix/bin/sketch" --version)"
