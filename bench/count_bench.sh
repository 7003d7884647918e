#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# count_bench.sh: times `sketch count` against other ways of counting the
# distinct lines of a big file, side by side, on one file whose exact number
# of distinct lines is known by construction.
#
# Usage: bench/count_bench.sh [BUILD_DIR]        (default: ../build from here)
#
# BUILD_DIR must hold cli/sketch, bench/gen_lines and bench/resp_pfadd
# (cmake --build BUILD_DIR builds them). Needs bash >= 4, wc, sort, awk,
# redis-server and redis-cli on PATH.
#
# Environment:
#   RUNS=3            timed runs of wc -l, sketch count and Redis (median shown)
#   SLOW_RUNS=1       timed runs of sort -u and awk (they take ~30-80 s each)
#   SKIP_SLOW=1       skip sort -u and awk
#   SKIP_REDIS=1      skip Redis
#   BENCH_DIR=/tmp/sketch-bench   where the generated file is cached
#   BENCH_LINES=40000000 BENCH_DISTINCT=10000000 BENCH_SEED=1
#                     shape of the generated file (~40.5 bytes a line)
#   BENCH_FILE=...    its path (default: derived from the three above, so a
#                     file is generated once and reused while it matches)
#   PFADD_BATCH=1000  elements per PFADD command sent to Redis
#
# What is timed (wall clock; the file is in the page cache, warmed with cat
# before each tool):
#   wc -l                      the floor: one pass over the bytes
#   sketch count [-p 18]       HyperLogLog, one thread per core (default)
#   sketch count -j 1          the same on one thread, for reference
#   LC_ALL=C sort -u -S 50% --parallel=2 | wc -l     exact
#   awk '!seen[$0]++' | wc -l                        exact (whichever awk is)
#   resp_pfadd | redis-cli --pipe, then PFCOUNT      Redis's HyperLogLog, on a
#       private redis-server on a free loopback port without persistence
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" count_bench "${1:-}"

bench_defaults RUNS=3 SLOW_RUNS=1 SKIP_SLOW=0 SKIP_REDIS=0 BENCH_DIR=/tmp/sketch-bench \
    BENCH_LINES=40000000 BENCH_DISTINCT=10000000 BENCH_SEED=1 PFADD_BATCH=1000
BENCH_FILE=${BENCH_FILE:-$BENCH_DIR/lines-n$BENCH_LINES-d$BENCH_DISTINCT-s$BENCH_SEED.txt}

bench_require_positive RUNS SLOW_RUNS BENCH_LINES BENCH_DISTINCT PFADD_BATCH
bench_require_seed

SKETCH=$build_dir/cli/sketch
GEN=$build_dir/bench/gen_lines
RESP=$build_dir/bench/resp_pfadd
bench_require_built sketch_cli="$SKETCH" gen_lines="$GEN" resp_pfadd="$RESP"
needed=(wc sort awk cat)
[[ $SKIP_REDIS == 1 ]] || needed+=(redis-server redis-cli)
bench_require_tools "SKIP_REDIS=1 skips Redis" "${needed[@]}"

# ---- scratch space and cleanup ----------------------------------------------

mkdir -p "$BENCH_DIR"
work=$(mktemp -d "${TMPDIR:-/tmp}/count_bench.XXXXXX")
REDIS_PID=
REDIS_PORT=
gen_tmp=

cleanup() {
    local status=$? _
    set +e
    trap '' INT TERM
    if [[ -n $REDIS_PID ]]; then
        # SIGTERM makes redis-server shut down; it has nothing to save.
        kill -TERM "$REDIS_PID" 2>/dev/null
        for _ in $(seq 1 100); do
            kill -0 "$REDIS_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$REDIS_PID" 2>/dev/null
        wait "$REDIS_PID" 2>/dev/null
    fi
    [[ -z $gen_tmp ]] || rm -f "$gen_tmp"
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


# ---- the input file, generated once -------------------------------------------

meta_file=$BENCH_FILE.meta
want_meta="lines=$BENCH_LINES distinct=$BENCH_DISTINCT"
file_ok=0
if [[ -f $BENCH_FILE && -f $meta_file ]]; then
    meta=$(cat "$meta_file")
    bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$meta")
    if [[ $meta == "$want_meta bytes="*" seed=$BENCH_SEED" &&
          $(stat -c %s "$BENCH_FILE") == "$bytes" ]]; then
        file_ok=1
    fi
fi
if [[ $file_ok == 0 && -e $BENCH_FILE && ! -f $meta_file ]]; then
    # Not a file this script generated: never overwrite it.
    echo "count_bench: $BENCH_FILE exists but has no $meta_file; not overwriting it" >&2
    exit 2
fi
if [[ $file_ok == 0 ]]; then
    echo "generating $BENCH_FILE ($BENCH_LINES lines, $BENCH_DISTINCT distinct)..." >&2
    gen_tmp=$BENCH_FILE.tmp.$$
    g0=0 g1=0
    now_us g0
    "$GEN" -n "$BENCH_LINES" -d "$BENCH_DISTINCT" -s "$BENCH_SEED" "$gen_tmp" >"$work/gen.out"
    now_us g1
    mv "$gen_tmp" "$BENCH_FILE"
    gen_tmp=
    cp "$work/gen.out" "$meta_file"
    echo "generated in $(( (g1 - g0) / 1000 )) ms: $(cat "$meta_file")" >&2
fi
meta=$(cat "$meta_file")
TRUTH=$(sed -n 's/.*distinct=\([0-9]*\).*/\1/p' <<<"$meta")
FILE_LINES=$(sed -n 's/.*lines=\([0-9]*\).*/\1/p' <<<"$meta")
FILE_BYTES=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$meta")

warm() { cat "$BENCH_FILE" >/dev/null; }

# ---- Redis ------------------------------------------------------------------

port_in_use() { (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_redis() {
    local pid_seen
    for _ in $(seq 1 20); do
        REDIS_PORT=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        port_in_use "$REDIS_PORT" && continue
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes \
            --save '' --appendonly no --daemonize no --dir "$work" \
            --logfile "$work/redis.log" >/dev/null 2>&1 &
        REDIS_PID=$!
        for _ in $(seq 1 200); do
            if ! kill -0 "$REDIS_PID" 2>/dev/null; then
                break # could not bind: try another port
            fi
            pid_seen=$(redis-cli -p "$REDIS_PORT" info server 2>/dev/null |
                       sed -n 's/^process_id:\([0-9]*\).*/\1/p' || true)
            if [[ $pid_seen == "$REDIS_PID" ]]; then
                return 0
            fi
            sleep 0.05
        done
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
        REDIS_PID=
    done
    echo "count_bench: could not start redis-server on a free port; its log:" >&2
    tail -n 5 "$work/redis.log" >&2 2>/dev/null || true
    return 1
}

# ---- the contenders: each prints its count on stdout ------------------------------

t_wc() { wc -l <"$BENCH_FILE"; }
t_sketch() { "$SKETCH" count "$BENCH_FILE"; }
t_sketch18() { "$SKETCH" count -p 18 "$BENCH_FILE"; }
t_sketch_j1() { "$SKETCH" count -j 1 "$BENCH_FILE"; }
t_sort() { LC_ALL=C sort -u -S 50% --parallel=2 -T "$BENCH_DIR" "$BENCH_FILE" | wc -l; }
t_awk() { awk '!seen[$0]++' "$BENCH_FILE" | wc -l; }
t_redis() {
    redis-cli -p "$REDIS_PORT" del bench:hll >/dev/null
    "$RESP" -b "$PFADD_BATCH" bench:hll <"$BENCH_FILE" 2>"$work/resp.err" |
        redis-cli -p "$REDIS_PORT" --pipe >"$work/pipe.out"
    if ! grep -q '^errors: 0, replies: ' "$work/pipe.out"; then
        echo "count_bench: redis-cli --pipe reported errors:" >&2
        cat "$work/pipe.out" >&2
        return 1
    fi
    redis-cli -p "$REDIS_PORT" pfcount bench:hll
}

declare -A label times result
order=()
add_tool() { # key label
    order+=("$1")
    label[$1]=$2
    times[$1]=
    result[$1]=
}
add_tool wc "wc -l"
add_tool sketch "sketch count"
add_tool sketch18 "sketch count -p 18"
add_tool sketch_j1 "sketch count -j 1"
if [[ $SKIP_REDIS != 1 ]]; then
    add_tool redis "redis PFADD (--pipe) + PFCOUNT"
fi
if [[ $SKIP_SLOW != 1 ]]; then
    add_tool sort "sort -u | wc -l"
    add_tool awk "awk '!seen[\$0]++' | wc -l"
fi

time_one() { # key
    local key=$1 t0 t1 out
    now_us t0
    "t_$key" >"$work/out"
    now_us t1
    out=$(tr -d ' \t\n' <"$work/out")
    if [[ -n ${result[$key]} && ${result[$key]} != "$out" ]]; then
        echo "count_bench: warning: ${label[$key]} gave ${result[$key]}, then $out" >&2
    fi
    result[$key]=$out
    times[$key]+="$((t1 - t0)) "
    printf '  %-32s run %d: %d.%03d s -> %s\n' "${label[$key]}" \
        "$(wc -w <<<"${times[$key]}")" $(( (t1 - t0) / 1000000 )) \
        $(( (t1 - t0) / 1000 % 1000 )) "$out" >&2
}

# ---- header ------------------------------------------------------------------------

cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1 || true)
awk_version=$(awk -W version 2>&1 </dev/null | head -n 1 || true)
echo "count_bench: distinct lines of one file, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "file:    $BENCH_FILE"
echo "         $FILE_LINES lines, $FILE_BYTES bytes, exactly $TRUTH distinct (by construction)"
echo "machine: ${cpu:-unknown CPU}, $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM"
echo "tools:   $("$SKETCH" --version 2>&1 | head -n 1); $(wc --version | head -n 1); $(sort --version | head -n 1)"
echo "         awk = $awk_version"
if [[ $SKIP_REDIS != 1 ]]; then
    echo "         $(redis-server --version | cut -d' ' -f1-3), PFADD batches of $PFADD_BATCH"
fi
echo "runs:    RUNS=$RUNS (wc, sketch, redis), SLOW_RUNS=$SLOW_RUNS (sort, awk); median shown"
echo

# ---- timing --------------------------------------------------------------------

echo "warming the page cache..." >&2
warm
[[ $SKIP_REDIS == 1 ]] || start_redis

# The fast tools are interleaved run by run, so that a noisy moment of the
# machine does not land on one tool's runs only.
for ((r = 1; r <= RUNS; r++)); do
    for key in wc sketch sketch18 sketch_j1 ${label[redis]:+redis}; do
        warm
        time_one "$key"
    done
done
if [[ $SKIP_SLOW != 1 ]]; then
    for key in sort awk; do
        for ((r = 1; r <= SLOW_RUNS; r++)); do
            warm
            time_one "$key"
        done
    done
fi

# ---- the table ---------------------------------------------------------------------

median_us() { # list of integers
    tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
        awk '{v[NR] = $1} END {printf "%d\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

wc_median=$(median_us "${times[wc]}")
{
    for key in "${order[@]}"; do
        printf '%s\t%s\t%s\t%s\n' "${label[$key]}" "$(median_us "${times[$key]}")" \
            "${result[$key]}" "${times[$key]}"
    done
} | awk -F '\t' -v wc="$wc_median" -v truth="$TRUTH" -v lines="$FILE_LINES" '
    BEGIN {
        fmt = "%-32s | %4s | %10s | %9s | %10s | %-14s | %s\n"
        printf fmt, "tool", "runs", "median s", "x wc -l", "result", "rel. error", "all runs (s)"
        printf fmt, "--------------------------------", "----", "----------", "---------",
               "----------", "--------------", "------------"
    }
    {
        n = split($4, all, " ")
        runs = ""
        for (i = 1; i <= n; i++) runs = runs sprintf("%s%.3f", i > 1 ? " " : "", all[i] / 1e6)
        if ($1 == "wc -l")
            err = ($3 == lines) ? "(line count)" : "WRONG lines"
        else if ($3 == truth)
            err = "0 (exact)"
        else
            err = sprintf("%+.3f%%", ($3 - truth) * 100 / truth)
        printf fmt, $1, n, sprintf("%.3f", $2 / 1e6), sprintf("%.2f", $2 / wc), $3, err, runs
    }'
echo
echo "truth: $TRUTH distinct lines; rel. error = (result - truth) / truth."
echo "sketch count uses one thread per core ($(nproc)) unless -j is given; wc -l is one thread."
echo "HyperLogLog standard error: 0.81% at p = 14 (sketch, Redis), 0.20% at p = 18."
if [[ -n ${result[redis]:-} ]]; then
    if [[ ${result[redis]} == "${result[sketch]}" ]]; then
        echo "sketch count (p = 14) and Redis PFCOUNT agree exactly: ${result[sketch]}."
    else
        echo "NOTE: sketch count (p = 14) gave ${result[sketch]}, Redis PFCOUNT ${result[redis]}."
    fi
fi
