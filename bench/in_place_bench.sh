#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# in_place_bench.sh: `sketch bloom add` into a large filter file, in place,
# against a `sketch` that rewrites the whole file on every add.
#
# Usage: bench/in_place_bench.sh [BUILD_DIR] [PEER]     (BUILD_DIR: ../build)
#
# PEER is a sketch binary that adds by reading, checking and rewriting the
# whole file, such as one built from release 0.1 or from any commit before
# in-place adds; without it only the in-place rows are measured. Each
# command gets a filter file of its own format, created once. The rounds
# take turns (ROUNDS times): for each command, an add of ADD_ITEMS items
# with the file in the page cache, and one with the file dropped from it
# first (cold: what a cron job on a big file meets), then an add of
# BULK_ITEMS items. The table gives the medians of the wall time (of the
# whole process) and of the peak resident memory (GNU time's %M, which
# counts the pages of a mapped file the process touched), and each time
# over the in-place one's.
#
# Environment: ROUNDS (5), BENCH_DIR (/tmp/sketch-bench), FILTER_ITEMS
# (850000000: a file of about 1 GB at 1%), ADD_ITEMS (3), BULK_ITEMS
# (1000000).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" in_place_bench "${1:-}"
peer=${2:-}

bench_defaults ROUNDS=5 BENCH_DIR=/tmp/sketch-bench FILTER_ITEMS=850000000 ADD_ITEMS=3 \
    BULK_ITEMS=1000000
bench_require_positive ROUNDS FILTER_ITEMS ADD_ITEMS BULK_ITEMS

SKETCH=$build_dir/cli/sketch
bench_require_built sketch_cli="$SKETCH"
[[ -z $peer || -x $peer ]] || { echo "$NAME: peer '$peer' is not executable" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "$NAME: GNU time not found (apt-get install time)" >&2; exit 2; }
bench_require_tools "" python3

mkdir -p "$BENCH_DIR"
work=$(mktemp -d "$BENCH_DIR/in-place.XXXXXX")
trap 'rm -rf "$work"' EXIT

names=(in-place)
binaries=("$SKETCH")
if [[ -n $peer ]]; then
    names+=(rewrite)
    binaries+=("$peer")
fi
for i in "${!names[@]}"; do
    "${binaries[$i]}" bloom create -n "$FILTER_ITEMS" -p 0.01 "$work/${names[$i]}.bloom" > /dev/null
done
awk -v n="$ADD_ITEMS" 'BEGIN { for (i = 0; i < n; i++) print "few-" i }' > "$work/few.txt"
awk -v n="$BULK_ITEMS" 'BEGIN { for (i = 0; i < n; i++) print "bulk-" i }' > "$work/bulk.txt"

drop_cache() { # writes the file back and asks the kernel to drop its pages
    python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}
warm() { cat "$1" > /dev/null; }
measure() { # measure BINARY FILE INPUT: "milliseconds peak-KiB" of one add
    local t0 t1
    now_us t0
    /usr/bin/time -f '%M' -o "$work/time" "$1" bloom add "$2" < "$3"
    now_us t1
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e3 }') $(cat "$work/time")"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bloom add into a large filter file, in place and rewritten, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(df -h "$work" | awk 'NR == 2 { print $1 }')"
echo "filter: $FILTER_ITEMS items at 1%, $(stat -c %s "$work/in-place.bloom") bytes; $ROUNDS rounds"
echo
for round in $(seq "$ROUNDS"); do
    for i in "${!names[@]}"; do
        file=$work/${names[$i]}.bloom
        warm "$file"
        echo "${names[$i]} warm $(measure "${binaries[$i]}" "$file" "$work/few.txt")" >> "$work/results"
        drop_cache "$file"
        echo "${names[$i]} cold $(measure "${binaries[$i]}" "$file" "$work/few.txt")" >> "$work/results"
        warm "$file"
        echo "${names[$i]} bulk $(measure "${binaries[$i]}" "$file" "$work/bulk.txt")" >> "$work/results"
    done
done

printf '%-10s %-34s %10s %12s %12s\n' command "add" "median ms" "peak MiB" "x in-place"
for kind in warm cold bulk; do
    case $kind in
        warm) what="$ADD_ITEMS items, file in page cache" ;;
        cold) what="$ADD_ITEMS items, file not in cache" ;;
        bulk) what="$BULK_ITEMS items, file in page cache" ;;
    esac
    ours=$(awk -v k="$kind" '$1 == "in-place" && $2 == k { print $3 }' "$work/results" | median)
    for name in "${names[@]}"; do
        s=$(awk -v n="$name" -v k="$kind" '$1 == n && $2 == k { print $3 }' "$work/results" | median)
        kib=$(awk -v n="$name" -v k="$kind" '$1 == n && $2 == k { print $4 }' "$work/results" | median)
        printf '%-10s %-34s %10.1f %12.1f %12.1f\n' "$name" "$what" "$s" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" \
            "$(awk -v a="$s" -v b="$ours" 'BEGIN { print (b > 0) ? a / b : 0 }')"
    done
done
"$SKETCH" bloom info --verify "$work/in-place.bloom" | grep -E '^(items|checksums):'
echo "target: $ADD_ITEMS items into a 1 GB filter in well under a second and 50 MB of memory"
