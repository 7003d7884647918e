#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# top_bench.sh: times `sketch top -k 10` against the exact ways to find the
# 10 most frequent lines of a big file, in alternating rounds, and checks
# each answer's top 10 against the exact one.
#
# Usage: bench/top_bench.sh [BUILD_DIR]        (default: ../build from here)
#
# BUILD_DIR (a Release build) must hold cli/sketch and bench/gen_zipf.
# Needs sort, uniq, head, python3; DuckDB from npm (@duckdb/node-api, the
# version of bench/duckdb/package.json) installed with `npm ci` into
# DUCKDB_DIR, outside the sources; without it the DuckDB row says why.
#
# Environment:
#   ROUNDS=3           rounds; each runs every tool once, in turn (medians shown)
#   TOP_ROWS=40000000  lines of the file, Zipf(1.0) over TOP_ITEMS values
#   TOP_ITEMS=1000000
#   BENCH_DIR=/tmp/sketch-bench  where the generated file is cached
#   DUCKDB_DIR=/tmp/sketch-bench/duckdb-node
#
# Wall clock, file in the page cache, 2 threads where a tool takes them
# (sketch's default: one per core). Recall: of the tool's 10 lines, how
# many are in the exact top 10 (a line tied with the exact 10th counts).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" top_bench "${1:-}"

bench_defaults ROUNDS=3 TOP_ROWS=40000000 TOP_ITEMS=1000000 BENCH_DIR=/tmp/sketch-bench \
    DUCKDB_DIR=/tmp/sketch-bench/duckdb-node
bench_require_positive ROUNDS TOP_ROWS TOP_ITEMS

SKETCH=$build_dir/cli/sketch
GEN=$build_dir/bench/gen_zipf
bench_require_built sketch_cli="$SKETCH" gen_zipf="$GEN"
bench_require_tools "" sort uniq head python3

mkdir -p "$BENCH_DIR"
file=$BENCH_DIR/zipf-n$TOP_ROWS-u$TOP_ITEMS.txt
if [[ ! -f $file ]]; then
    echo "generating $file..." >&2
    "$GEN" -n "$TOP_ROWS" -u "$TOP_ITEMS" "$file.tmp.$$"
    mv "$file.tmp.$$" "$file"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/top_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

duck_note=""
if command -v node > /dev/null && command -v npm > /dev/null; then
    if [[ ! -d $DUCKDB_DIR/node_modules/@duckdb/node-api ]]; then
        mkdir -p "$DUCKDB_DIR"
        cp "$script_dir/duckdb/package.json" "$script_dir/duckdb/package-lock.json" "$DUCKDB_DIR/"
        (cd "$DUCKDB_DIR" && npm ci --no-audit --no-fund > "$work/npm.log" 2>&1) ||
            duck_note="npm ci of @duckdb/node-api failed: $(tail -1 "$work/npm.log")"
    fi
else
    duck_note="no node or npm on PATH"
fi
if [[ -z $duck_note ]]; then
    cat > "$DUCKDB_DIR/top.mjs" <<'JS'
// The 10 most frequent lines of a file, as "count line", by DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';
const file = process.argv[2].replaceAll("'", "''");
const sql = `SELECT line, count(*) AS n FROM read_csv('${file}', header = false, delim = '\t',
             quote = '', escape = '', columns = {'line': 'VARCHAR'}) GROUP BY 1
             ORDER BY 2 DESC LIMIT 10`;
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
const reader = await connection.runAndReadAll(sql);
process.stdout.write(reader.getRows().map(([line, n]) => `${n} ${line}\n`).join(''));
JS
fi

tools=(sketch sort sort_c)
[[ -z $duck_note ]] && tools+=(duckdb)
run_tool() {
    case $1 in
    sketch) "$SKETCH" top -k 10 "$file" ;;
    # head closes the pipe early: sort -rn's SIGPIPE is no failure
    sort) (set +o pipefail; sort "$file" | uniq -c | sort -rn | head) ;;
    sort_c) (set +o pipefail; LC_ALL=C sort "$file" | LC_ALL=C uniq -c | LC_ALL=C sort -rn | head) ;;
    duckdb) node "$DUCKDB_DIR/top.mjs" "$file" ;;
    esac
}
label() {
    case $1 in
    sketch) echo "sketch top -k 10" ;;
    sort) echo "sort \| uniq -c \| sort -rn \| head (locale ${LC_ALL:-${LANG:-POSIX}})" ;;
    sort_c) echo "LC_ALL=C sort \| uniq -c \| sort -rn \| head" ;;
    duckdb) echo "DuckDB GROUP BY ... ORDER BY 2 DESC LIMIT 10" ;;
    esac
}

cat "$file" > /dev/null
for ((r = 0; r < ROUNDS; r++)); do
    for tool in "${tools[@]}"; do
        now_us t0
        run_tool "$tool" > "$work/$tool.out"
        now_us t1
        echo $((t1 - t0)) >> "$work/$tool.times"
        echo "round $((r + 1)): $tool $(((t1 - t0) / 1000)) ms" >&2
    done
done

median() { sort -n "$work/$1.times" | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)] / 1e6}'; }
# The exact answer is LC_ALL=C sort's; recall against its counts.
recall() {
    python3 - "$work/$1.out" "$work/sort_c.out" <<'PY'
import sys
def read(path):
    out = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        count, _, item = line.strip().partition(" ")
        out.append((item.strip(), int(count)))
    return out
got, exact = read(sys.argv[1]), read(sys.argv[2])
tenth = exact[-1][1]
exact_counts = dict(exact)
hits = sum(1 for item, _ in got if exact_counts.get(item, 0) >= tenth)
print(f"{hits / len(exact):.1f}")
PY
}

t_sketch=$(median sketch)
echo "| tool | median seconds | ratio to sketch | recall of the top 10 |"
echo "|---|---|---|---|"
for tool in "${tools[@]}"; do
    t=$(median "$tool")
    ratio=$(awk -v t="$t" -v s="$t_sketch" 'BEGIN {printf "%.1fx", t / s}')
    echo "| $(label "$tool") | $t | $ratio | $(recall "$tool") |"
done
[[ -z $duck_note ]] || echo "| DuckDB | not run: $duck_note | | |"
echo
echo "$TOP_ROWS lines, Zipf(1.0) over $TOP_ITEMS values; medians of $ROUNDS alternating" \
     "rounds; ratio: the tool's time over sketch's; recall against LC_ALL=C sort's exact counts."
