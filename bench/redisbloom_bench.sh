#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# redisbloom_bench.sh: the CMS.*, TOPK.*, CF.* and TDIGEST.* commands of sketch.so, and BF.*
# on filters of RedisBloom's type (MBbloom--, as loaded from RedisBloom), against
# RedisBloom 2.6.28's, in server time per call (INFO commandstats
# usec_per_call), two servers side by side under the same load. In every round each command runs
# on both servers in turn (which goes first alternates), so that a busy
# moment of a shared machine falls on both; the table gives each server's
# median and the median of the rounds' ratios.
# Usage: bench/redisbloom_bench.sh BUILD_DIR REDISBLOOM_SO
#   REDISBLOOM_SO: RedisBloom v2.6.28's redisbloom.so, built beside the
#   project as ../shared/reference/redisbloom-build.md says.
# Environment: CLIENTS (8), PIPELINE (32), REQUESTS (500000), ROUNDS (5),
#   FAMILIES ("cms topk cf tdigest bf": the commands' families to time).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
module=$build/module/sketch.so
redisbloom=${2:-${REDISBLOOM_SO:-}}
clients=${CLIENTS:-8}
pipeline=${PIPELINE:-32}
requests=${REQUESTS:-500000}
rounds=${ROUNDS:-5}
families=" ${FAMILIES:-cms topk cf tdigest bf} "
[ -f "$module" ] || { echo "redisbloom_bench: $module not found; build first" >&2; exit 2; }
[ -f "$redisbloom" ] || { echo "redisbloom_bench: give RedisBloom's redisbloom.so" >&2; exit 2; }

work=$(mktemp -d)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
sk_port=$(free_port)
rb_port=$(free_port)
cleanup() {
    for p in "$sk_port" "$rb_port"; do redis-cli -p "$p" shutdown nosave > /dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
start() { # port module name
    mkdir -p "$work/$3"
    redis-server --port "$1" --bind 127.0.0.1 --dir "$work/$3" --save '' --appendonly no \
        --loadmodule "$2" --daemonize yes --logfile "$work/$3/redis.log"
    for _ in $(seq 50); do redis-cli -p "$1" ping > /dev/null 2>&1 && break; sleep 0.1; done
}
start "$sk_port" "$module" sketch
start "$rb_port" "$redisbloom" redisbloom

# The keys, the same on both: a 2000 x 7 sketch (CMS.INITBYPROB 0.001 0.01)
# to count into, and three of its size to merge, the sources with the same
# 200,000 increments on both servers; top-k sketches of RedisBloom's default
# dimensions (8 x 7, where items collide and decay) and of 50 in 2000 x 7,
# with the same 200,000 items. Bloom filters of RedisBloom's type on both
# (sketch.so makes them with redisbloom-types 1): one of 1,000,000 at 1% to
# add to, one holding 1,000,000 items to query.
redis-cli -p "$sk_port" CONFIG SET sketch.redisbloom-types 1 > /dev/null
for p in "$sk_port" "$rb_port"; do
    redis-cli -p "$p" BF.RESERVE bf 0.01 1000000 > /dev/null
    redis-cli -p "$p" BF.RESERVE bfq 0.01 1000000 > /dev/null
    redis-cli -p "$p" CMS.INITBYPROB hits 0.001 0.01 > /dev/null
    for k in a b dst; do redis-cli -p "$p" CMS.INITBYDIM "$k" 2000 7 > /dev/null; done
    redis-cli -p "$p" TOPK.RESERVE top 10 > /dev/null
    redis-cli -p "$p" TOPK.RESERVE top50 50 2000 7 0.9 > /dev/null
    redis-cli -p "$p" CF.RESERVE cf 8000000 > /dev/null
    redis-cli -p "$p" CF.RESERVE cfq 2000000 > /dev/null
    for k in td tdq tdm; do redis-cli -p "$p" TDIGEST.CREATE "$k" > /dev/null; done
    /usr/bin/python3 - "$p" << 'PY'
import random, sys, redis
r = redis.Redis(port=int(sys.argv[1]))
rng = random.Random(1)
for key in ("a", "b"):
    for _ in range(200):
        args = []
        for _ in range(1000):
            args += ["item%d" % int(1000000 * rng.random() ** 2), 1]
        r.execute_command("CMS.INCRBY", key, *args)
        r.execute_command("TOPK.ADD", "top", *args[0::2])
        r.execute_command("TOPK.ADD", "top50", *args[0::2])
for i in range(0, 1000000, 1000):
    r.execute_command("CF.INSERT", "cfq", "ITEMS", *("item%d" % (2 * j) for j in range(i, i + 1000)))
    r.execute_command("BF.MADD", "bfq", *("item%d" % (2 * j) for j in range(i, i + 1000)))
for _ in range(1000):
    r.execute_command("TDIGEST.ADD", "tdq", *(rng.expovariate(0.001) for _ in range(1000)))
r.execute_command("TDIGEST.QUANTILE", "tdq", 0.5)  # compressed, on both, before the reads
PY
done
same=$(/usr/bin/python3 - "$sk_port" "$rb_port" << 'PY'
import sys, redis
a, b = (redis.Redis(port=int(p)) for p in sys.argv[1:])
probe = ["item%d" % i for i in range(0, 1000000, 997)]
print("yes" if all(a.execute_command("CMS.QUERY", k, *probe) == b.execute_command("CMS.QUERY", k, *probe)
                   and a.execute_command("CMS.INFO", k) == b.execute_command("CMS.INFO", k)
                   for k in ("a", "b")) else "NO")
def dump(r, family, key):
    pieces, it = [], 0
    while True:
        it, data = r.execute_command(family + ".SCANDUMP", key, it)
        if it == 0:
            return pieces
        pieces.append(data)
print("yes" if dump(a, "CF", "cfq") == dump(b, "CF", "cfq") else "NO")
q = [i / 100 for i in range(101)]
print("yes" if a.execute_command("TDIGEST.QUANTILE", "tdq", *q) ==
      b.execute_command("TDIGEST.QUANTILE", "tdq", *q) else "NO")
print("yes" if dump(a, "BF", "bfq") == dump(b, "BF", "bfq") and a.type("bfq") == b"MBbloom--"
      else "NO")
PY
)

# usec_per_call of one command after a run of it alone.
usec() { # port requests name args...
    local p=$1 n=$2 name=$3
    shift 3
    redis-cli -p "$p" CONFIG RESETSTAT > /dev/null
    redis-benchmark -p "$p" -c "$clients" -P "$pipeline" -n "$n" -r 1000000 "$@" > /dev/null 2>&1
    redis-cli -p "$p" INFO commandstats | tr -d '\r' |
        awk -F'[=,]' -v c="cmdstat_$name:calls" 'tolower($1) == c { print $6 }'
}
ten() { for _ in $(seq 10); do printf '%s ' "$@"; done; }
# name | requests | arguments
benches=(
    "cms.incrby|$requests|CMS.INCRBY hits __rand_int__ 1"
    "cms.incrby|$((requests / 5))|CMS.INCRBY hits $(ten __rand_int__ 1)"
    "cms.query|$requests|CMS.QUERY hits __rand_int__"
    "cms.query|$((requests / 5))|CMS.QUERY hits $(ten __rand_int__)"
    "cms.info|$requests|CMS.INFO hits"
    "cms.merge|$((requests / 50))|CMS.MERGE dst 2 a b"
    "topk.add|$requests|TOPK.ADD top item__rand_int__"
    "topk.add|$((requests / 5))|TOPK.ADD top $(ten item__rand_int__)"
    "topk.add|$requests|TOPK.ADD top50 item__rand_int__"
    "topk.query|$requests|TOPK.QUERY top50 item__rand_int__"
    "topk.list|$((requests / 5))|TOPK.LIST top50 WITHCOUNT"
    "cf.add|$requests|CF.ADD cf item__rand_int__"
    "cf.insert|$((requests / 5))|CF.INSERT cf ITEMS $(ten item__rand_int__)"
    "cf.exists|$requests|CF.EXISTS cfq item__rand_int__"
    "cf.mexists|$((requests / 5))|CF.MEXISTS cfq $(ten item__rand_int__)"
    "cf.count|$requests|CF.COUNT cfq item__rand_int__"
    "cf.del|$requests|CF.DEL cfq item__rand_int__"
    "cf.info|$requests|CF.INFO cfq"
    "tdigest.add|$requests|TDIGEST.ADD td __rand_int__"
    "tdigest.add|$((requests / 5))|TDIGEST.ADD td $(ten __rand_int__)"
    "tdigest.quantile|$requests|TDIGEST.QUANTILE tdq 0.5 0.99"
    "tdigest.cdf|$requests|TDIGEST.CDF tdq __rand_int__"
    "tdigest.rank|$requests|TDIGEST.RANK tdq __rand_int__"
    "tdigest.byrank|$requests|TDIGEST.BYRANK tdq __rand_int__"
    "tdigest.trimmed_mean|$requests|TDIGEST.TRIMMED_MEAN tdq 0.1 0.9"
    "tdigest.min|$requests|TDIGEST.MIN tdq"
    "tdigest.info|$requests|TDIGEST.INFO tdq"
    "tdigest.merge|$((requests / 50))|TDIGEST.MERGE tdm 1 tdq OVERRIDE"
    "bf.add|$requests|BF.ADD bf item__rand_int__"
    "bf.madd|$((requests / 5))|BF.MADD bf $(ten item__rand_int__)"
    "bf.exists|$requests|BF.EXISTS bfq item__rand_int__"
    "bf.mexists|$((requests / 5))|BF.MEXISTS bfq $(ten item__rand_int__)"
    "bf.info|$requests|BF.INFO bfq"
)
labels=("CMS.INCRBY, 1 item" "CMS.INCRBY, 10 items" "CMS.QUERY, 1 item" "CMS.QUERY, 10 items"
        "CMS.INFO" "CMS.MERGE of 2 (2000x7)" "TOPK.ADD, 1 item (8x7)" "TOPK.ADD, 10 items (8x7)"
        "TOPK.ADD, 1 item (k 50)" "TOPK.QUERY, 1 item (k 50)" "TOPK.LIST WITHCOUNT (k 50)"
        "CF.ADD, 1 item" "CF.INSERT, 10 items" "CF.EXISTS, 1 item" "CF.MEXISTS, 10 items"
        "CF.COUNT, 1 item" "CF.DEL, 1 item" "CF.INFO" "TDIGEST.ADD, 1 value"
        "TDIGEST.ADD, 10 values" "TDIGEST.QUANTILE, 2 (1M values)" "TDIGEST.CDF, 1 value"
        "TDIGEST.RANK, 1 value" "TDIGEST.BYRANK, 1 rank" "TDIGEST.TRIMMED_MEAN"
        "TDIGEST.MIN" "TDIGEST.INFO" "TDIGEST.MERGE of 1, OVERRIDE"
        "BF.ADD, 1 item (MBbloom--)" "BF.MADD, 10 items (MBbloom--)"
        "BF.EXISTS, 1 item (MBbloom--)" "BF.MEXISTS, 10 items (MBbloom--)" "BF.INFO (MBbloom--)")

echo "sketch.so against RedisBloom 2.6.28, CMS.*, TOPK.*, CF.*, TDIGEST.* and BF.* of MBbloom--, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "server:  $(redis-server --version | cut -d' ' -f1-3)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "load:    redis-benchmark -c $clients -P $pipeline -r 1000000, $rounds rounds, servers alternating"
echo
: > "$work/rounds"
timed() { [[ $families == *" ${1%%.*} "* ]]; }
for round in $(seq "$rounds"); do
    for i in "${!benches[@]}"; do
        IFS='|' read -r name n args <<< "${benches[$i]}"
        timed "$name" || continue
        # shellcheck disable=SC2086
        if [ $((round % 2)) = 1 ]; then
            sk=$(usec "$sk_port" "$n" "$name" $args)
            rb=$(usec "$rb_port" "$n" "$name" $args)
        else
            rb=$(usec "$rb_port" "$n" "$name" $args)
            sk=$(usec "$sk_port" "$n" "$name" $args)
        fi
        echo "$i $sk $rb" >> "$work/rounds"
        echo "round $round/$rounds: ${labels[$i]}: sketch $sk, RedisBloom $rb usec" >&2
    done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-28s %14s %16s %22s\n' "command" "sketch usec" "RedisBloom usec" "median sketch/RB"
for i in "${!benches[@]}"; do
    timed "${benches[$i]%%|*}" || continue
    sk=$(awk -v i="$i" '$1 == i { print $2 }' "$work/rounds" | median)
    rb=$(awk -v i="$i" '$1 == i { print $3 }' "$work/rounds" | median)
    ratio=$(awk -v i="$i" '$1 == i { print $2 / $3 }' "$work/rounds" | median)
    printf '%-28s %14.3f %16.3f %22.2f\n' "${labels[$i]}" "$sk" "$rb" "$ratio"
done
echo "the merge sources answer alike on both servers (1,004 queries and CMS.INFO): ${same%%$'\n'*}"
echo "the Cuckoo filter of 1,000,000 items dumps the same bytes on both servers: $(sed -n 2p <<< "$same")"
echo "the t-digest of 1,000,000 values answers 101 quantiles alike on both servers: $(sed -n 3p <<< "$same")"
echo "the Bloom filter of 1,000,000 items (MBbloom-- on both) dumps the same bytes: $(sed -n 4p <<< "$same")"
echo "target: every command's server time no more than RedisBloom's (ratio <= 1.00)"
