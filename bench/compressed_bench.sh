#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compressed_bench.sh: `sketch count` of gzip, zstd and xz files against the
# decompressors themselves, side by side in one run.
#
# Usage: bench/compressed_bench.sh [BUILD_DIR]     (default: ../build from here)
#
# For each codec, the rounds take turns (ROUNDS times, so that a busy moment
# of a shared machine falls on all of them):
#   the fastest decompressor found, writing to /dev/null   the floor
#   the usual pipe: zcat | wc -l, zstdcat | wc -l, xzcat | wc -l
#   sketch count FILE
# and the table gives medians and the ratio of sketch count to the floor
# (target: at most 1.2). gzip's floor is the fastest of igzip, pigz and gzip
# that is installed (Debian's isal, pigz, gzip); zstd's is zstd -d; xz's is
# xz -d -T0, which decodes files of several blocks on every core.
#
# Environment: ROUNDS (5), BENCH_DIR (/tmp/sketch-bench), BENCH_LINES
# (10000000), BENCH_DISTINCT (2500000), BENCH_SEED (1).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" compressed_bench "${1:-}"

bench_defaults ROUNDS=5 BENCH_DIR=/tmp/sketch-bench BENCH_LINES=10000000 \
    BENCH_DISTINCT=2500000 BENCH_SEED=1
bench_require_positive ROUNDS BENCH_LINES BENCH_DISTINCT
bench_require_seed

SKETCH=$build_dir/cli/sketch
GEN=$build_dir/bench/gen_lines
bench_require_built sketch_cli="$SKETCH" gen_lines="$GEN"
bench_require_tools "" gzip zstd xz wc

mkdir -p "$BENCH_DIR"
base=$BENCH_DIR/compressed-n$BENCH_LINES-d$BENCH_DISTINCT-s$BENCH_SEED.txt
[[ -f $base ]] || "$GEN" -n "$BENCH_LINES" -d "$BENCH_DISTINCT" -s "$BENCH_SEED" "$base" >&2
# Compressed at each tool's default level, xz with blocks for threads.
[[ -f $base.gz ]] || gzip -k -c "$base" > "$base.gz"
[[ -f $base.zst ]] || zstd -q -k -c "$base" > "$base.zst"
[[ -f $base.xz ]] || xz -T0 -k -c "$base" > "$base.xz"

gzip_floor=gzip
for tool in pigz igzip; do command -v "$tool" > /dev/null && gzip_floor=$tool; done
[[ $gzip_floor == pigz ]] && command -v igzip > /dev/null && gzip_floor=igzip

seconds() { # seconds CMD...: wall time of one run, output discarded
    local t0 t1
    now_us t0
    "$@" > /dev/null
    now_us t1
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "sketch count of compressed files against their decompressors, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "file: $BENCH_LINES lines, $BENCH_DISTINCT distinct, $(stat -c %s "$base") bytes; $ROUNDS rounds, in the page cache"
echo
printf '%-6s %-34s %12s %12s %10s\n' codec "command" "bytes" "median s" "x floor"
for codec in gz zst xz; do
    file=$base.$codec
    case $codec in
        gz) floor=("$gzip_floor" -d -c "$file"); pipe="zcat | wc -l"; cat_cmd=(gzip -d -c "$file") ;;
        zst) floor=(zstd -q -d -c "$file"); pipe="zstdcat | wc -l"; cat_cmd=(zstd -q -d -c "$file") ;;
        xz) floor=(xz -d -T0 -c "$file"); pipe="xzcat | wc -l"; cat_cmd=(xz -d -c "$file") ;;
    esac
    cat "$file" > /dev/null
    : > "$work/$codec"
    for _ in $(seq "$ROUNDS"); do
        f=$(seconds "${floor[@]}")
        p=$(seconds bash -c '"$@" | wc -l' _ "${cat_cmd[@]}")
        s=$(seconds "$SKETCH" count "$file")
        echo "$f $p $s" >> "$work/$codec"
    done
    col() { awk -v c="$1" '{ print $c }' "$work/$codec" | median; }
    ratio() { awk '{ print $3 / $1 }' "$work/$codec" | median; }
    size=$(stat -c %s "$file")
    printf '%-6s %-34s %12s %12s %10s\n' "$codec" "${floor[0]} -d > /dev/null (floor)" "$size" "$(col 1)" "1.00"
    printf '%-6s %-34s %12s %12s %10.2f\n' "$codec" "$pipe" "$size" "$(col 2)" "$(awk '{ print $2 / $1 }' "$work/$codec" | median)"
    printf '%-6s %-34s %12s %12s %10.2f\n' "$codec" "sketch count" "$size" "$(col 3)" "$(ratio)"
done
echo "count: $("$SKETCH" count "$base.gz") (of $BENCH_DISTINCT distinct)"
echo "target: sketch count within 1.2x of the floor"
