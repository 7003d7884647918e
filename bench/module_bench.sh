#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# module_bench.sh: sketch.so against Redis's own commands on the same server,
# side by side in one run:
#   - BF.ADD and BF.EXISTS on a 10M-capacity 1% filter against PFADD, with
#     redis-benchmark (same clients and pipelining), and BF.EXISTS on a
#     1000-item filter, which stays in cache: the gap between the two
#     BF.EXISTS rows is the filter's memory access, the rest of the gap to
#     PFADD (whose 12 KB key stays in cache) is the module call itself;
#   - HLL.COUNT of three keys against PFCOUNT of three keys holding the same
#     items, in server time per call (INFO commandstats);
#   - MEMORY USAGE of a filter against a Redis SET of the same items.
# Usage: bench/module_bench.sh [BUILD_DIR]   (default: ../build from here)
# Environment: CLIENTS (8), PIPELINE (32), REQUESTS (1000000), ROUNDS (5),
# SET_ITEMS (1000000).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
module=$build/module/sketch.so
clients=${CLIENTS:-8}
pipeline=${PIPELINE:-32}
requests=${REQUESTS:-1000000}
rounds=${ROUNDS:-5}
set_items=${SET_ITEMS:-1000000}
[ -f "$module" ] || { echo "module_bench: $module not found; build first" >&2; exit 2; }

work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
    redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no \
    --loadmodule "$module" --daemonize yes --logfile "$work/redis.log"
for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }

# Requests per second of one command, from redis-benchmark's CSV line.
rps() {
    redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$requests" -r 10000000 \
        --csv "$@" 2> /dev/null | awk -F'"' 'NR == 2 { print $4 }'
}

cli BF.RESERVE bf 0.01 10000000 > /dev/null
cli BF.RESERVE small 0.01 1000 > /dev/null
echo "sketch.so against Redis's own commands, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "server:  $(redis-server --version | cut -d' ' -f1-3), module $module"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "load:    redis-benchmark -c $clients -P $pipeline -n $requests -r 10000000, $rounds rounds"
echo
# The four commands take turns, ROUNDS times, so that a busy moment of a
# shared machine falls on all of them; the ratios are the medians of each
# round's ratio to the PFADD run beside it.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$work/rounds"
for round in $(seq "$rounds"); do
    add=$(rps BF.ADD bf __rand_int__)
    pfadd=$(rps PFADD hll __rand_int__)
    exists=$(rps BF.EXISTS bf __rand_int__)
    small=$(rps BF.EXISTS small __rand_int__)
    echo "$add $pfadd $exists $small" >> "$work/rounds"
    echo "round $round/$rounds: BF.ADD $add, PFADD $pfadd, BF.EXISTS $exists, in cache $small requests/s" >&2
done
col() { awk -v c="$1" '{ print $c }' "$work/rounds" | median; }
ratio() { awk -v a="$1" '{ print $a / $2 }' "$work/rounds" | median; }
printf '%-26s %18s %20s\n' "command ($rounds rounds)" "median requests/s" "median x PFADD"
printf '%-26s %18.0f %20s\n' "PFADD hll <rand>" "$(col 2)" "1.00"
printf '%-26s %18.0f %20.2f\n' "BF.ADD bf <rand>" "$(col 1)" "$(ratio 1)"
printf '%-26s %18.0f %20.2f\n' "BF.EXISTS bf <rand>" "$(col 3)" "$(ratio 3)"
printf '%-26s %18.0f %20.2f\n' "BF.EXISTS small <rand>" "$(col 4)" "$(ratio 4)"
echo "target: BF.ADD and BF.EXISTS >= 0.8x PFADD"
echo

# Three sketches and three native keys of the same 1M items each.
/usr/bin/python3 - "$port" << 'EOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
for k in range(3):
    items = [f"user-{k}-{i}" for i in range(1_000_000)]
    for i in range(0, len(items), 10000):
        batch = items[i:i + 10000]
        r.execute_command("HLL.ADD", f"{{u}}:sk{k}", *batch)
        r.pfadd(f"{{u}}:pf{k}", *batch)
EOF
cli CONFIG RESETSTAT > /dev/null
redis-benchmark -p "$port" -c 1 -n 20000 HLL.COUNT '{u}:sk0' '{u}:sk1' '{u}:sk2' > /dev/null 2>&1
redis-benchmark -p "$port" -c 1 -n 20000 PFCOUNT '{u}:pf0' '{u}:pf1' '{u}:pf2' > /dev/null 2>&1
usec() { # usec_per_call of a command
    cli INFO commandstats | tr -d '\r' |
        awk -F'[=,]' -v c="cmdstat_$1:calls" 'tolower($1) == c { print $6 }'
}
hll_usec=$(usec hll.count)
pf_usec=$(usec pfcount)
printf '%-40s %14s %14s\n' "union count of three 1M-item keys" "usec per call" "count"
printf '%-40s %14s %14s\n' "PFCOUNT {u}:pf0 {u}:pf1 {u}:pf2" "$pf_usec" "$(cli PFCOUNT '{u}:pf0' '{u}:pf1' '{u}:pf2')"
printf '%-40s %14s %14s\n' "HLL.COUNT {u}:sk0 {u}:sk1 {u}:sk2" "$hll_usec" "$(cli HLL.COUNT '{u}:sk0' '{u}:sk1' '{u}:sk2')"
awk -v a="$pf_usec" -v b="$hll_usec" 'BEGIN { printf "HLL.COUNT is %.1fx faster (target >= 10x)\n", a / b }'
echo

# Memory: a filter sized for the items against a SET holding them.
cli BF.RESERVE members 0.01 "$set_items" > /dev/null
/usr/bin/python3 - "$port" "$set_items" << 'EOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2])
pipe = r.pipeline(transaction=False)
for i in range(0, n, 10000):
    batch = [f"member-{j}" for j in range(i, min(n, i + 10000))]
    pipe.execute_command("BF.MADD", "members", *batch)
    pipe.sadd("set", *batch)
    if i % 200000 == 0:
        pipe.execute()
pipe.execute()
EOF
bf_bytes=$(cli MEMORY USAGE members)
set_bytes=$(cli MEMORY USAGE set SAMPLES 0)
big_bytes=$(cli BF.INFO bf SIZE | tail -1)
printf '%-44s %14s %14s\n' "memory" "bytes" "bits/item"
awk -v b="$big_bytes" 'BEGIN { printf "%-44s %14s %14.2f\n", "BF.RESERVE bf 0.01 10000000 (BF.INFO SIZE)", b, b * 8 / 10000000 }'
awk -v b="$bf_bytes" -v n="$set_items" 'BEGIN { printf "%-44s %14s %14.2f\n", "filter of " n " items at 1% (MEMORY USAGE)", b, b * 8 / n }'
awk -v b="$set_bytes" -v n="$set_items" 'BEGIN { printf "%-44s %14s %14.2f\n", "SET of the same " n " items", b, b * 8 / n }'
echo "RedisBloom 2.6, measured on this machine kind: 13.8 MB for a 10M-capacity 1% filter"
