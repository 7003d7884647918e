#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that every place that states the project's version states the one
# defined in include/sketch/core.h: the command, the shared library's file
# name and soname, the installed pkg-config file and CMake package, the Redis
# module's MODULE LIST entry (on a real redis-server) and the PostgreSQL
# extension's control file and script name, when the build has the extension.
# Usage: run.sh SOURCE_DIR BUILD_DIR POSTGRES (ON or OFF: SKETCH_POSTGRES)
set -euo pipefail
src=$1
build=$2
postgres=$3
work=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2> /dev/null && wait "$server" 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {   # what, got, expected
    if [ "$2" = "$3" ]; then
        echo "ok: $1: $2"
    else
        echo "FAIL: $1 says '$2', core.h says '$3'"
        failures=$((failures + 1))
    fi
}

part() { sed -n "s/^#define SK_VERSION_$1 \([0-9][0-9]*\)$/\1/p" "$src/include/sketch/core.h"; }
major=$(part MAJOR) minor=$(part MINOR) patch=$(part PATCH)
version=$major.$minor.$patch
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: core.h's version is '$version'"; exit 1; }
echo "core.h: $version"
# Before 1.0 the minor number is the API's major one (src/CMakeLists.txt).
if [ "$major" = 0 ]; then soversion=$major.$minor; else soversion=$major; fi

check "sketch --version" "$("$build/cli/sketch" --version)" "sketch $version"
check "the shared library's file" "$(basename "$(readlink -f "$build/src/libsketch.so")")" \
      "libsketch.so.$version"
check "the shared library's soname" \
      "$(readelf -d "$build/src/libsketch.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" \
      "libsketch.so.$soversion"

cmake --install "$build" --prefix "$work/prefix" > /dev/null
pc=$(find "$work/prefix" -name sketch.pc)
check "pkg-config --modversion" "$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion sketch)" \
      "$version"
config=$(find "$work/prefix" -name sketchConfigVersion.cmake)
check "the CMake package" \
      "$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$config")" "$version"

# MODULE LIST's "ver" is MAJOR * 10000 + MINOR * 100 + PATCH.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# A sanitized build's module needs its runtime preloaded (tests/CMakeLists.txt).
LD_PRELOAD=${SKETCH_SERVER_PRELOAD:-} ASAN_OPTIONS=detect_leaks=0 \
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --logfile "$work/redis.log" --loadmodule "$build/module/sketch.so" &
server=$!
for _ in $(seq 100); do
    redis-cli -p "$port" PING > /dev/null 2>&1 && break
    sleep 0.1
done
check "the Redis module's MODULE LIST ver" \
      "$(redis-cli -p "$port" --raw MODULE LIST | sed -n '/^ver$/{n;p;q}')" \
      "$((major * 10000 + minor * 100 + patch))"

if [ "$postgres" = ON ]; then
    DESTDIR=$work/stage cmake --install "$build" --component postgres > /dev/null
    control=$(find "$work/stage" -name sketch.control)
    check "the PostgreSQL extension's default_version" \
          "$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$control")" "$version"
    # One install script, the rest (sketch--FROM--TO.sql) updates to it.
    check "the PostgreSQL extension's script" \
          "$(cd "$(dirname "$control")" && ls sketch--*.sql | grep -v -- '--.*--')" \
          "sketch--$version.sql"
    check "the PostgreSQL extension's updates end at" \
          "$(cd "$(dirname "$control")" && ls sketch--*--*.sql | sed 's/.*--\(.*\)\.sql$/\1/' |
             sort -u)" "$version"
else
    echo "the PostgreSQL extension is not in this build (SKETCH_POSTGRES=OFF)"
fi

[ "$failures" -eq 0 ] || { echo "$failures of the places disagree"; exit 1; }
echo "every place says $version"
