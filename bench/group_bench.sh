#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# group_bench.sh: times `sketch count --by` against the other ways to count
# distinct items per group of a big file, side by side, and measures each
# approximate answer's per-group error against the exact one.
#
# Usage: bench/group_bench.sh [BUILD_DIR]        (default: ../build from here)
#
# BUILD_DIR must hold cli/sketch and bench/gen_groups. Needs node and npm
# (DuckDB comes from npm: `npm ci` in bench/duckdb, run here when
# node_modules is missing), GNU datamash (Debian: datamash), sort, cut,
# uniq, python3 and GNU time (/usr/bin/time).
#
# Environment:
#   RUNS=3             timed runs of sketch and DuckDB (median shown)
#   SLOW_RUNS=1        timed runs of datamash and sort | uniq -c
#   GROUP_ROWS=40000000  rows per file
#   GROUP_COUNTS="1000 1000000"  groups of each file (one file each)
#   BENCH_DIR=/tmp/sketch-bench  where the generated files are cached
#
# Each file has rows "/page/G<TAB>userU", G log-uniform over the groups (a
# few large groups and a long tail, as gen_groups.c explains) and U uniform
# over 10M users. What is timed (wall clock, file in the page cache, GNU
# time's maximum resident set as peak memory):
#   sketch count --by 1 -f 2              HyperLogLog per group, p = 14, all cores
#   DuckDB approx_count_distinct GROUP BY  (@duckdb/node-api, all cores)
#   DuckDB count(DISTINCT) GROUP BY        exact; its answer is the truth
#   datamash -s -g1 countunique 2          exact, sorts first
#   LC_ALL=C sort -u | cut -f1 | uniq -c   exact
# Errors are |estimate - exact| / exact per group, over the groups with at
# least 1000 distinct items (smaller ones are near-exact for both): their
# median, 95th percentile and maximum, and the share within 1.6% (two
# standard errors at p = 14).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" group_bench "${1:-}"

bench_defaults RUNS=3 SLOW_RUNS=1 GROUP_ROWS=40000000 GROUP_COUNTS="1000 1000000" \
    BENCH_DIR=/tmp/sketch-bench
bench_require_positive RUNS SLOW_RUNS GROUP_ROWS

SKETCH=$build_dir/cli/sketch
GEN=$build_dir/bench/gen_groups
bench_require_built sketch_cli="$SKETCH" gen_groups="$GEN"
bench_require_tools "" node npm datamash sort cut uniq python3 /usr/bin/time
duck=$script_dir/duckdb
if [[ ! -d $duck/node_modules/@duckdb/node-api ]]; then
    echo "installing DuckDB in $duck (npm ci)..." >&2
    (cd "$duck" && npm ci --no-audit --no-fund >&2)
fi

mkdir -p "$BENCH_DIR"
work=$(mktemp -d "${TMPDIR:-/tmp}/group_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# runs NAME N COMMAND...: N timed runs with stdout to $work/NAME.out; prints
# "median_seconds peak_kb" of the runs.
runs() {
    local name=$1 n=$2 times=() mems=() i
    shift 2
    for ((i = 0; i < n; i++)); do
        cat "$file" > /dev/null
        /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
            { echo "group_bench: $name failed: $(tail -3 "$work/$name.err")" >&2; exit 1; }
        read -r t m < <(tail -1 "$work/time")
        times+=("$t")
        mems+=("$m")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {printf "%s ", a[int((NR + 1) / 2)]}'
    printf '%s\n' "${mems[@]}" | sort -g | tail -1
}

# errors NAME: the per-group error of $work/NAME.out against $work/exact.out.
errors() {
    python3 - "$work/$1.out" "$work/exact.out" <<'EOF'
import sys
def read(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        parts = line.rstrip("\n").split()
        if len(parts) == 2 and parts[1].isdigit():   # group count
            out[parts[0]] = int(parts[1])
        elif len(parts) == 2 and parts[0].isdigit(): # uniq -c: count group
            out[parts[1]] = int(parts[0])
    return out
got, exact = read(sys.argv[1]), read(sys.argv[2])
if set(got) != set(exact):
    print(f"groups differ: {len(got)} against {len(exact)}")
    sys.exit(0)
errs = sorted(abs(got[g] - n) / n for g, n in exact.items() if n >= 1000)
if not errs:
    print("no group of 1000 items or more")
    sys.exit(0)
q = lambda f: errs[min(len(errs) - 1, int(f * len(errs)))]
within = sum(e <= 0.016 for e in errs) / len(errs)
print(f"{len(errs)} groups: median {100 * q(0.5):.2f}%, p95 {100 * q(0.95):.2f}%, "
      f"max {100 * errs[-1]:.2f}%, {100 * within:.1f}% within 1.6%")
EOF
}

printf '%-8s %-44s %9s %9s %8s  %s\n' groups tool "median s" "peak MB" "x sketch" "per-group error"
for groups in $GROUP_COUNTS; do
    file=$BENCH_DIR/groups-n$GROUP_ROWS-g$groups.tsv
    if [[ ! -f $file ]]; then
        echo "generating $file..." >&2
        "$GEN" -n "$GROUP_ROWS" -g "$groups" "$file.tmp.$$"
        mv "$file.tmp.$$" "$file"
    fi
    read -r t_exact m_exact < <(runs exact "$SLOW_RUNS" node "$duck/group_count.mjs" exact "$file")
    read -r t_sketch m_sketch < <(runs sketch "$RUNS" "$SKETCH" count --by 1 -f 2 "$file")
    read -r t_approx m_approx < <(runs duck_approx "$RUNS" node "$duck/group_count.mjs" approx "$file")
    read -r t_datamash m_datamash < <(runs datamash "$SLOW_RUNS" sh -c \
        'LC_ALL=C datamash -s -g1 countunique 2 < "$1"' sh "$file")
    read -r t_sort m_sort < <(runs sort "$SLOW_RUNS" sh -c \
        'LC_ALL=C sort -u -S 50% --parallel=2 "$1" | cut -f1 | uniq -c' sh "$file")
    for v in "$t_exact" "$t_sketch" "$t_approx" "$t_datamash" "$t_sort"; do
        [[ -n $v ]] || exit 1 # a run failed, and said why
    done
    row() { # tool seconds kb error
        awk -v g="$groups" -v tool="$1" -v t="$2" -v m="$3" -v s="$t_sketch" -v e="$4" \
            'BEGIN {printf "%-8s %-44s %9.2f %9.0f %7.1fx  %s\n", g, tool, t, m / 1024, t / s, e}'
    }
    row "sketch count --by 1 -f 2" "$t_sketch" "$m_sketch" "$(errors sketch)"
    row "DuckDB approx_count_distinct GROUP BY" "$t_approx" "$m_approx" "$(errors duck_approx)"
    row "DuckDB count(DISTINCT) GROUP BY (exact)" "$t_exact" "$m_exact" "exact"
    row "datamash -s -g1 countunique 2 (exact)" "$t_datamash" "$m_datamash" "$(errors datamash)"
    row "sort -u | cut -f1 | uniq -c (exact)" "$t_sort" "$m_sort" "$(errors sort)"
done
echo
echo "$GROUP_ROWS rows per file; medians of $RUNS runs (exact tools: $SLOW_RUNS); x sketch:" \
     "the tool's time over sketch's."
