#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# report.sh: runs every benchmark of bench/ side by side in one run and writes
# one markdown report: the machine, the sizes, a summary of the key ratios, and
# each tool's own table verbatim.
#
#     bench/report.sh          # full sizes (about 50-65 minutes on 2 cores)
#                              #   -> docs/benchmarks.md
#     bench/report.sh -q       # quick smoke run with small sizes (a few minutes)
#                              #   -> build-report/benchmarks.md
#
# Sections, in the order they run, and their sizes (full / quick):
#   hll      bench/hll_bench: add, count and merge of the library, medians of
#            9 / 7 runs
#   bloom    bench/bloom_bench against libbloom: 8-byte keys, n = 10M,100M / 1M,4M items,
#            10M / 1M absent queries; medians of 5 runs (3 from 50M items on) /
#            3 runs (1)
#   groups   bench/group_bench.sh: sketch count --by against DuckDB, datamash and
#            sort | uniq -c on 40M / 2M rows with 1,000 and 1,000,000 / 100,000
#            groups; medians of 3 runs (exact tools: 1)
#   count    bench/count_bench.sh: sketch count against wc -l, sort -u, awk and
#            Redis PFADD/PFCOUNT on 40M lines with 10M distinct / 2M with 500K;
#            medians of 3 runs (sort and awk: 1)
#   bloomcli bench/bloom_cli_bench.sh against DCSO's bloom: 3.3M / 200K lines,
#            medians of 5 / 3 runs
#   module   bench/module_bench.sh, the Redis module against PFADD, PFCOUNT
#            and a SET: 1M / 200K requests a command, 5 / 2 rounds (median)
#   cms      bench/cms_bench, topk_bench, cuckoo_bench and tdigest_bench (the
#            count-min sketch's, top-k's, Cuckoo filter's and t-digest's
#            operations in ns, medians of 7 / 3 rounds) and
#            bench/redisbloom_bench.sh (CMS.*, TOPK.*, CF.* and TDIGEST.*
#            server time per call against RedisBloom 2.6.28, the
#            module PEER_MODULE names, built outside the project: 500K / 100K
#            requests, 7 / 3 alternated rounds; left out without PEER_MODULE)
#   modmem   bench/module_memory.sh: used_memory of a default BF.ADD key, for
#            sketch.so and, beside it, the module PEER_MODULE names if set
#            (RedisBloom 2.6.28, built outside the project); 20K keys, 3 rounds
#   compressed  bench/compressed_bench.sh: sketch count of gzip, zstd and xz
#            files against the fastest decompressors: 10M / 1M lines, 5 / 3
#            rounds (median)
#   inplace  bench/in_place_bench.sh: bloom add into a filter for 850M / 100M
#            items (1 GB / 120 MB), in place against the command of
#            INPLACE_PEER_REF (a commit whose bloom add rewrites the whole
#            file, built from this repository's history), 3 and 1M / 100K
#            items, 5 / 3 rounds (median)
#
#   postgres bench/pg_bench.py: the PostgreSQL extension's hll_agg against
#            postgresql-hll, count(DISTINCT) and count(v) on 10M and 100M / 1M
#            rows, without GROUP BY and with 1,000 and 100,000 / 10,000 groups,
#            serial and with 2 workers; medians of 3 rounds (count(DISTINCT)
#            on over 20M rows: 1)
#   instr    bench/path_instructions.sh: instructions per operation of every
#            library path (valgrind's callgrind), the library of
#            INSTR_OLD_REF (a commit of this repository's history) against
#            this tree's; the same in both modes
#
# Options:
#   -q              quick sizes (above); output build-report/benchmarks.md
#   -o FILE         write the report to FILE
#   -s LIST         only these sections, comma-separated (default: all twelve)
#   -n              install nothing: sections whose peers are missing are
#                   skipped with a note (by default, as root on Debian, missing
#                   peers are installed with apt-get: libbloom-dev,
#                   golang-github-dcso-bloom-cli, redis-server, redis-tools,
#                   python3-redis, postgresql-15, postgresql-server-dev-15,
#                   postgresql-15-hll, python3-psycopg, valgrind)
#   -B N[,N]...     bloom_bench item counts        -A N  bloom_bench absent keys
#   -L N            count_bench lines              -D N  count_bench distinct lines
#   -S N            count_bench runs of sort -u and awk (SLOW_RUNS)
#   -C N            bloom_cli_bench lines          -M N  module_bench requests
#   -R N            runs (rounds for module_bench) of every section that has them
#
# Builds everything in build-report/ (Release). Raw outputs are kept in
# build-report/out/. A section that fails is reported as failed, with the end
# of its error output, and the others still run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build-report
raw=$build/out
quick=0
install=1
sections=hll,bloom,count,groups,bloomcli,module,cms,modmem,compressed,inplace,postgres,instr
# The last commit whose `bloom add` rewrote the whole file: the peer of inplace.
INPLACE_PEER_REF=${INPLACE_PEER_REF:-15d097a}
# The library before the API of 0.3: the old build of instr.
INSTR_OLD_REF=${INSTR_OLD_REF:-293b3d0}
report=
opt_bloom_ns= opt_absent= opt_lines= opt_distinct= opt_slow= opt_cli= opt_requests= opt_runs=

usage() { sed -n '2,68p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while getopts "qo:s:nB:A:L:D:S:C:M:R:h" opt; do
    case $opt in
    q) quick=1 ;;
    o) report=$OPTARG ;;
    s) sections=$OPTARG ;;
    n) install=0 ;;
    B) opt_bloom_ns=$OPTARG ;;
    A) opt_absent=$OPTARG ;;
    L) opt_lines=$OPTARG ;;
    D) opt_distinct=$OPTARG ;;
    S) opt_slow=$OPTARG ;;
    C) opt_cli=$OPTARG ;;
    M) opt_requests=$OPTARG ;;
    R) opt_runs=$OPTARG ;;
    *) usage ;;
    esac
done

# The sizes of the sections: each setting, its quick value | its full one.
while IFS='|' read -r name small full; do
    read -r name <<< "$name"
    if ((quick)); then read -r value <<< "$small"; else read -r value <<< "$full"; fi
    printf -v "$name" '%s' "$value"
done <<'SIZES'
hll_runs          | 7               | 9
bloom_ns          | 1000000,4000000 | 10000000,100000000
bloom_absent      | 1000000         | 10000000
bloom_runs        | 3               | 5
bloom_runs_large  | 1               | 3
count_lines       | 2000000         | 40000000
count_distinct    | 500000          | 10000000
count_runs        | 3               | 3
count_slow        | 1               | 1
group_rows        | 2000000         | 40000000
group_counts      | 1000 100000     | 1000 1000000
group_runs        | 3               | 3
cli_items         | 200000          | 3300000
cli_runs          | 3               | 5
module_requests   | 200000          | 1000000
module_rounds     | 2               | 5
module_set        | 100000          | 1000000
cms_rounds        | 3               | 7
cms_requests      | 100000          | 500000
compressed_lines  | 1000000         | 10000000
compressed_rounds | 3               | 5
inplace_items     | 100000000       | 850000000
inplace_bulk      | 100000          | 1000000
inplace_rounds    | 3               | 5
pg_rows           | 1000000         | 10000000 100000000
pg_groups         | 1000 10000      | 1000 100000
pg_runs           | 3               | 3
SIZES
if ((quick)); then
    mode="quick (small sizes: a smoke run, not a measurement)"
    [[ -n $report ]] || report=$build/benchmarks.md
else
    mode="full"
    [[ -n $report ]] || report=$root/docs/benchmarks.md
fi
bloom_ns=${opt_bloom_ns:-$bloom_ns}
bloom_absent=${opt_absent:-$bloom_absent}
count_lines=${opt_lines:-$count_lines}
count_distinct=${opt_distinct:-$count_distinct}
count_slow=${opt_slow:-$count_slow}
cli_items=${opt_cli:-$cli_items}
module_requests=${opt_requests:-$module_requests}
if [[ -n $opt_runs ]]; then
    hll_runs=$((opt_runs < 7 ? 7 : opt_runs)) bloom_runs=$((opt_runs < 3 ? 3 : opt_runs))
    bloom_runs_large=$opt_runs count_runs=$opt_runs cli_runs=$opt_runs module_rounds=$opt_runs
    cms_rounds=$opt_runs
    compressed_rounds=$opt_runs inplace_rounds=$opt_runs pg_runs=$opt_runs
fi
want() { [[ ,$sections, == *,$1,* ]]; }

mkdir -p "$raw"
log() { echo "report: $*" >&2; }

# ---- peers ---------------------------------------------------------------------
have_libbloom() { [[ -f /usr/include/bloom.h ]] && ls /usr/lib/*/libbloom.so* > /dev/null 2>&1; }
have_dcso() { command -v bloom > /dev/null && bloom --help 2>&1 | grep -i 'bloom filter' > /dev/null; }
have_redis() { command -v redis-server > /dev/null && command -v redis-cli > /dev/null; }
have_redis_bench() { have_redis && command -v redis-benchmark > /dev/null && /usr/bin/python3 -c 'import redis' 2> /dev/null; }
missing=()
want bloom && ! have_libbloom && missing+=(libbloom-dev)
want bloomcli && ! have_dcso && missing+=(golang-github-dcso-bloom-cli)
{ want count || want module; } && ! have_redis && missing+=(redis-server redis-tools)
want module && ! /usr/bin/python3 -c 'import redis' 2> /dev/null && missing+=(python3-redis)
want groups && ! command -v datamash > /dev/null && missing+=(datamash)
want groups && ! command -v npm > /dev/null && missing+=(npm)
# The fastest gzip decompressors, the floor of compressed_bench.
want compressed && ! command -v igzip > /dev/null && missing+=(isal)
want compressed && ! command -v pigz > /dev/null && missing+=(pigz)
want compressed && ! command -v zstd > /dev/null && missing+=(zstd)
# PostgreSQL 15 with its server headers (to build the extension) and the peer.
if want postgres; then
    [[ -x /usr/lib/postgresql/15/bin/postgres ]] || missing+=(postgresql-15)
    [[ -f /usr/include/postgresql/15/server/postgres.h ]] || missing+=(postgresql-server-dev-15)
    [[ -f /usr/share/postgresql/15/extension/hll.control ]] || missing+=(postgresql-15-hll)
    /usr/bin/python3 -c 'import psycopg' 2> /dev/null || missing+=(python3-psycopg)
fi
for tool in cmake cc; do command -v $tool > /dev/null || missing+=("$([[ $tool == cc ]] && echo gcc || echo $tool)"); done
[[ -f /usr/include/xxhash.h ]] || missing+=(libxxhash-dev)
want instr && ! command -v valgrind > /dev/null && missing+=(valgrind)
if ((${#missing[@]})); then
    if ((install)) && [[ $(id -u) -eq 0 ]] && command -v apt-get > /dev/null; then
        log "installing ${missing[*]}"
        apt-get update -qq > /dev/null && apt-get install -y -qq "${missing[@]}" > /dev/null ||
            log "apt-get could not install everything; sections without their peers are skipped"
    else
        log "missing: ${missing[*]}; the sections that need them are skipped"
    fi
fi

# ---- build -----------------------------------------------------------------------
log "building in $build (Release)"
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSKETCH_BUILD_TESTS=OFF \
        > "$raw/cmake.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" > "$raw/build.log" 2>&1; then
    cat "$raw/cmake.log" "$raw/build.log" >&2 2> /dev/null
    log "build failed"
    exit 1
fi

# ---- machine -----------------------------------------------------------------------
lscpu_field() { LC_ALL=C lscpu 2> /dev/null | sed -n "s/^$1:[[:space:]]*//p" | head -n 1; }
cpu_model=$(lscpu_field 'Model name')
[[ -n $cpu_model ]] || cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
machine_rows=$(
    echo "| CPU | ${cpu_model:-unknown} |"
    echo "| CPUs | $(nproc) online; $(lscpu_field 'Socket(s)') socket(s), $(lscpu_field 'Core(s) per socket') core(s) per socket, $(lscpu_field 'Thread(s) per core') thread(s) per core |"
    hv=$(lscpu_field 'Hypervisor vendor'); [[ -n $hv ]] && echo "| virtualization | $hv ($(lscpu_field 'Virtualization type')) |"
    echo "| caches | L1d $(lscpu_field 'L1d cache'), L2 $(lscpu_field 'L2 cache'), L3 $(lscpu_field 'L3 cache') |"
    echo "| memory | $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null || echo unknown) |"
    echo "| kernel | $(uname -srm) |"
    echo "| system | $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME") |"
    echo "| compiler | $(cc --version | head -n 1), CMake $(cmake --version | head -n 1 | awk '{print $3}'), Release: $(sed -n 's/^CMAKE_C_FLAGS_RELEASE:STRING=//p' "$build/CMakeCache.txt") |"
    echo "| source | $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2> /dev/null || echo ' with uncommitted changes') |"
)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
t_start=$SECONDS

# ---- sections -----------------------------------------------------------------------
declare -A status seconds
run_section() { # name command...
    local name=$1 t0=$SECONDS
    shift
    log "section $name: $*"
    "$@" > "$raw/$name.out" 2> "$raw/$name.err"
    local rc=$?
    seconds[$name]=$((SECONDS - t0))
    if ((rc == 0)); then status[$name]=ok; else status[$name]="failed (exit $rc)"; fi
    log "section $name: ${status[$name]} in ${seconds[$name]} s"
}
skip() { status[$1]="skipped: $2"; log "section $1 skipped: $2"; }

if want hll; then
    run_section hll "$build/bench/hll_bench" -r "$hll_runs"
fi
if want bloom; then
    if [[ -x $build/bench/bloom_bench ]]; then
        run_section bloom "$build/bench/bloom_bench" -n "$bloom_ns" -a "$bloom_absent" \
            -r "$bloom_runs" -R "$bloom_runs_large" -k 8
    else
        skip bloom "libbloom is not installed (Debian: libbloom-dev), so bloom_bench was not built"
    fi
fi
if want groups; then
    run_section groups env RUNS="$group_runs" SLOW_RUNS=1 GROUP_ROWS="$group_rows" \
        GROUP_COUNTS="$group_counts" bash "$here/group_bench.sh" "$build"
fi
if want count; then
    count_env=(RUNS="$count_runs" SLOW_RUNS="$count_slow" BENCH_LINES="$count_lines"
               BENCH_DISTINCT="$count_distinct")
    have_redis || count_env+=(SKIP_REDIS=1)
    run_section count env "${count_env[@]}" bash "$here/count_bench.sh" "$build"
fi
if want bloomcli; then
    if have_dcso; then
        run_section bloomcli env RUNS="$cli_runs" BENCH_ITEMS="$cli_items" \
            bash "$here/bloom_cli_bench.sh" "$build"
    else
        skip bloomcli "DCSO's bloom is not installed (Debian: golang-github-dcso-bloom-cli)"
    fi
fi
if want module; then
    if have_redis_bench; then
        run_section module env REQUESTS="$module_requests" ROUNDS="$module_rounds" \
            SET_ITEMS="$module_set" bash "$here/module_bench.sh" "$build"
    else
        skip module "redis-server, redis-benchmark (redis-tools) or python3-redis is missing"
    fi
fi
if want cms; then
    libs='"$1/cms_bench" -r "$2" && echo && "$1/topk_bench" -r "$2" && echo &&
          "$1/cuckoo_bench" -r "$2" && echo && "$1/tdigest_bench" -r "$2"'
    cms_cmd=(bash -c "$libs" cms "$build/bench" "$cms_rounds")
    if have_redis_bench && [[ -n ${PEER_MODULE:-} ]]; then
        cms_cmd=(bash -c "$libs"' && echo && ROUNDS=$2 REQUESTS=$3 bash "$4" "$5" "$6"' cms
                 "$build/bench" "$cms_rounds" "$cms_requests"
                 "$here/redisbloom_bench.sh" "$build" "$PEER_MODULE")
    else
        log "section cms: the library alone (no PEER_MODULE, or no redis-benchmark)"
    fi
    run_section cms "${cms_cmd[@]}"
fi
if want modmem; then
    if have_redis && /usr/bin/python3 -c 'import redis' 2> /dev/null; then
        peer=()
        if [[ -n ${PEER_MODULE:-} ]]; then peer=("$PEER_MODULE"); fi
        run_section modmem bash "$here/module_memory.sh" "${peer[@]}" "$build/module/sketch.so"
    else
        skip modmem "redis-server or python3-redis is missing"
    fi
fi
if want compressed; then
    run_section compressed env ROUNDS="$compressed_rounds" BENCH_LINES="$compressed_lines" \
        BENCH_DISTINCT="$((compressed_lines / 4))" bash "$here/compressed_bench.sh" "$build"
fi
if want inplace; then
    # The peer: this repository's command as of INPLACE_PEER_REF.
    peer_bin=
    if git -C "$root" cat-file -e "$INPLACE_PEER_REF^{commit}" 2> /dev/null; then
        rm -rf "$build/peer-src" && mkdir -p "$build/peer-src" &&
            git -C "$root" archive "$INPLACE_PEER_REF" | tar -x -C "$build/peer-src" &&
            cmake -S "$build/peer-src" -B "$build/peer" -DCMAKE_BUILD_TYPE=Release \
                -DSKETCH_BUILD_TESTS=OFF -DSKETCH_BUILD_BENCH=OFF > "$raw/peer.log" 2>&1 &&
            cmake --build "$build/peer" -j "$(nproc)" --target sketch_cli >> "$raw/peer.log" 2>&1 &&
            peer_bin=$build/peer/cli/sketch
    fi
    [[ -n $peer_bin ]] || log "section inplace: no peer (commit $INPLACE_PEER_REF not built)"
    run_section inplace env ROUNDS="$inplace_rounds" FILTER_ITEMS="$inplace_items" \
        BULK_ITEMS="$inplace_bulk" bash "$here/in_place_bench.sh" "$build" $peer_bin
fi
if want instr; then
    if command -v valgrind > /dev/null; then
        run_section instr bash "$here/path_instructions.sh" "$INSTR_OLD_REF"
    else
        skip instr "valgrind is missing"
    fi
fi
if want postgres; then
    if [[ -f $build/postgres/sketch.so ]]; then
        run_section postgres env PG_ROWS="$pg_rows" PG_GROUPS="$pg_groups" RUNS="$pg_runs" \
            EXACT_RUNS=1 /usr/bin/python3 "$here/pg_bench.py" "$build"
    else
        skip postgres "the extension was not built (PostgreSQL 15's server headers: postgresql-server-dev-15)"
    fi
fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
total_min=$(( (SECONDS - t_start + 30) / 60 ))

# ---- summary ------------------------------------------------------------------------
ok() { [[ ${status[$1]:-} == ok ]]; }
summary=$(
    if ok hll; then
        # The median follows the unit column (ns/op, us/op); p precedes it.
        awk '{ for (i = 2; i < NF; i++) if ($i ~ /^[nu]s\/op$/ && $(i-1) == 14) {
                   unit = $i == "us/op" ? "µs" : "ns"
                   if ($0 ~ /^add precomputed hash/) what = "add a precomputed 64-bit hash, p = 14 (hll_bench)"
                   else if ($0 ~ /^add 16-byte item/) what = "add a 16-byte item, hashing included, p = 14"
                   else if ($0 ~ /^count, dense/) what = "count a dense p = 14 sketch"
                   else if ($0 ~ /^merge two dense/) what = "merge two dense p = 14 sketches"
                   else next
                   printf "| HyperLogLog library | %s | %s %s | | |\n", what, $(i+1), unit
               } }' \
            "$raw/hll.out"
    fi
    if ok bloom; then
        # Fixed columns: n, implementation, then the operation (timing table)
        # or the layout (false-positive table, after "Filters after n adds").
        awk '/^Filters after n adds/ { fp = 1 }
             !/^[0-9]+ / { next }
             { impl = substr($0, 12, 15); sub(/ +$/, "", impl) }
             !fp {
                 op = substr($0, 28, 20); sub(/ +$/, "", op)
                 split(substr($0, 49), f, " ")
                 if (impl == "libbloom") { lib[$1, op] = f[2]; next }
                 if (impl != "sketch blocked" && impl != "sketch split") next
                 if (op ~ /64/) next # the summary keeps batches of 1024
                 base = op ~ /^add/ ? "add" : op ~ /^present/ ? "present query" : "absent query"
                 printf "| Bloom filter, n = %s | %s: %s, against libbloom (bloom_bench) | %s ns | %s ns | **%s** |\n", $1, impl, op, f[2], lib[$1, base], f[6]
             }
             fp {
                 split(substr($0, 28), g, " ")
                 printf "| Bloom filter, n = %s | false-positive rate at p = 1%%: %s (%s bits/item, k = %s) | %s | expected %s | |\n", $1, impl, g[5], g[3], g[7], g[8]
             }' "$raw/bloom.out"
    fi
    if ok groups; then
        # Fixed columns: groups (9), tool (45), then median s, peak MB, x sketch, error.
        awk '/^[0-9]+ / {
                 g = $1; tool = substr($0, 10, 44); sub(/ +$/, "", tool)
                 split(substr($0, 55), f, " ")
                 if (f[1] !~ /^[0-9.]+$/) next # the note under the table
                 t[g, tool] = f[1]; m[g, tool] = f[2]
                 e = substr($0, 55); sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", e); err[g, tool] = e
                 if (!(g in seen)) { seen[g] = 1; order[++n] = g } }
             END {
                 for (i = 1; i <= n; i++) {
                     g = order[i]; s = "sketch count --by 1 -f 2"
                     for (k in t) {
                         split(k, kk, SUBSEP)
                         if (kk[1] != g || kk[2] == s) continue
                         name = kk[2]; gsub(/[|]/, "\\|", name) # a pipe is a cell border
                         r = t[k] / t[g, s]
                         printf "| distinct per group, %s groups | sketch count --by against %s | %s s, %s MB | %s s, %s MB | %s |\n", g, name, t[g, s], m[g, s], t[k], m[k], (r >= 1 ? sprintf("**%.1fx** faster", r) : sprintf("%.1fx (slower)", r))
                     }
                     printf "| distinct per group, %s groups | per-group error: sketch; DuckDB approx_count_distinct | %s | %s | |\n", g, err[g, s], err[g, "DuckDB approx_count_distinct GROUP BY"]
                 } }' "$raw/groups.out"
    fi
    if ok count; then
        # The tool name (32 columns) may itself hold a "|"; the rest is split on " | ".
        awk '{ name = substr($0, 1, 32); sub(/ +$/, "", name); n = split(substr($0, 36), f, / *[|] */)
               if (n < 5 || f[2] !~ /^ *[0-9.]+$/) next
               gsub(/ /, "", f[2]); gsub(/ /, "", f[4]); gsub(/ /, "", f[5])
               t[name] = f[2]; r[name] = f[4]; e[name] = f[5] }
            END {
                s = t["sketch count"]
                if (s == "") exit
                printf "| count distinct lines | sketch count against wc -l (the cost of reading the file) | %s s | %s s | %.2fx the time |\n", s, t["wc -l"], s / t["wc -l"]
                for (k in t) if (k ~ /^sort/) printf "| count distinct lines | sketch count against sort -u \\| wc -l (exact) | %s s | %s s | **%.1fx** faster |\n", s, t[k], t[k] / s
                for (k in t) if (k ~ /^awk/) printf "| count distinct lines | sketch count against awk !seen (exact) | %s s | %s s | **%.1fx** faster |\n", s, t[k], t[k] / s
                for (k in t) if (k ~ /^redis/) printf "| count distinct lines | sketch count against Redis PFADD via redis-cli --pipe, then PFCOUNT | %s s | %s s | **%.1fx** faster |\n", s, t[k], t[k] / s
                printf "| count distinct lines | sketch count: result (relative error) | %s (%s) | | |\n", r["sketch count"], e["sketch count"]
            }' "$raw/count.out"
    fi
    if ok compressed; then
        awk '/^(gz|zst|xz) / { c = $1 }
             / \(floor\)/ { floor[c] = $(NF-1); tool[c] = $2 }
             /^(gz|zst|xz) +sketch count/ {
                 printf "| compressed input | sketch count of a .%s file against %s -d > /dev/null | %s s | %s s | %sx the time |\n", c, tool[c], $(NF-1), floor[c], $NF }' \
            "$raw/compressed.out"
    fi
    if ok inplace; then
        # name (10 columns), what (34), then median ms, peak MiB, x in-place.
        awk '/^filter: / { bytes = $6 }
             /^(in-place|rewrite) / { what = substr($0, 12, 34); sub(/ +$/, "", what)
                 ms[$1, what] = $(NF-2); mib[$1, what] = $(NF-1); x[$1, what] = $NF
                 if ($1 == "in-place") order[++n] = what }
             END { for (i = 1; i <= n; i++) { w = order[i]
                       if (("rewrite", w) in ms)
                           printf "| adds in place | bloom add of %s, into a %s-byte filter: in place against a rewrite of the file | %s ms, %s MiB | %s ms, %s MiB | **%sx** faster |\n", w, bytes, ms["in-place", w], mib["in-place", w], ms["rewrite", w], mib["rewrite", w], x["rewrite", w]
                       else
                           printf "| adds in place | bloom add of %s, into a %s-byte filter | %s ms, %s MiB | | |\n", w, bytes, ms["in-place", w], mib["in-place", w] } }' \
            "$raw/inplace.out"
    fi
    if ok bloomcli; then
        awk -F' *[|] *' 'NF >= 8 && $4 ~ /^[0-9.]+$/ {
                if ($2 ~ /^dcso/) d[$1] = $4
                else if ($2 ~ /^sketch bloom (create \+ add|check)$/) { s[$1] = $4; r[$1] = $6; o[++n] = $1 }
            }
            END { for (i = 1; i <= n; i++) printf "| Bloom command | %s: sketch bloom against DCSO bloom | %s s | %s s | **%s** |\n", o[i], s[o[i]], d[o[i]], r[o[i]] }' \
            "$raw/bloomcli.out"
    fi
    if ok postgres; then
        # Fixed columns (pg_bench.py's format): rows 1-10, groups 12-18, query
        # 20-46, workers 48-54, median s 56-64, x floor 66-73, speedup 75-82,
        # x exact 84-91, bytes 93-101, error 103-112.
        awk 'function f(a, b) { v = substr($0, a, b); gsub(/ /, "", v); return v }
             /^[0-9]+ / { q = substr($0, 20, 27); sub(/ +$/, "", q); r = f(1, 10); g = f(12, 7); w = f(48, 7)
                 k = r SUBSEP g SUBSEP q SUBSEP w
                 t[k] = f(56, 9); sp[k] = f(75, 8); x[k] = f(84, 8); b[k] = f(93, 9); e[k] = f(103, 10)
                 if (q == "count(v)" && w == "0") order[++n] = r SUBSEP g }
             END { s = "sketch hll_agg(v)"; p = "postgresql-hll hll_add_agg"; fl = "count(v)"
                 for (i = 1; i <= n; i++) { split(order[i], rg, SUBSEP); r = rg[1]; g = rg[2]
                     where = sprintf("PostgreSQL, %d M rows%s", r / 1000000, g == "-" ? "" : sprintf(", GROUP BY of %s groups", g))
                     ks = order[i] SUBSEP s SUBSEP "0"; kp = order[i] SUBSEP p SUBSEP "0"; kf = order[i] SUBSEP fl SUBSEP "0"
                     ks2 = order[i] SUBSEP s SUBSEP "2"; kp2 = order[i] SUBSEP p SUBSEP "2"
                     printf "| %s | hll_agg(v) against count(v), the scan and one aggregate call a row (the floor), serial | %s s | %s s | %.2fx the time |\n", where, t[ks], t[kf], t[ks] / t[kf]
                     printf "| %s | hll_agg(v) against postgresql-hll hll_add_agg(hll_hash_text(v), 14), serial | %s s | %s s | **%.2fx** faster |\n", where, t[ks], t[kp], t[kp] / t[ks]
                     printf "| %s | the same with 2 parallel workers | %s s | %s s | **%.2fx** faster |\n", where, t[ks2], t[kp2], t[kp2] / t[ks2]
                     printf "| %s | parallel speedup with 2 workers: sketch; postgresql-hll | %s | %s | |\n", where, sp[ks2], sp[kp2]
                     printf "| %s | hll_agg(v) against exact count(DISTINCT v), serial | %s s | | **%s** faster |\n", where, t[ks], x[ks]
                     printf "| %s | error against exact (RMS over groups); bytes a sketch: sketch; postgresql-hll | %s, %s B | %s, %s B | |\n", where, e[ks], b[ks], e[kp], b[kp] } }' \
            "$raw/postgres.out"
    fi
    if ok module; then
        awk '/^PFADD hll <rand>/ { pf = $(NF-1) }
             /^BF.ADD bf <rand>/ { printf "| Redis module | BF.ADD against PFADD (requests/s, median of rounds) | %s | %s | **%sx** |\n", $(NF-1), pf, $NF }
             /^BF.EXISTS bf <rand>/ { printf "| Redis module | BF.EXISTS against PFADD | %s | %s | **%sx** |\n", $(NF-1), pf, $NF }
             /^BF.EXISTS small <rand>/ { printf "| Redis module | BF.EXISTS on a 1000-item filter (in cache) against PFADD | %s | %s | **%sx** |\n", $(NF-1), pf, $NF }
             /^PFCOUNT \{u\}/ { pfc = $(NF-1) }
             /^HLL.COUNT \{u\}/ { printf "| Redis module | HLL.COUNT against PFCOUNT of three 1M-item keys (µs per call) | %s µs | %s µs | **%.1fx** faster |\n", $(NF-1), pfc, pfc / $(NF-1) }
             /^filter of [0-9]+ items/ { fb = $(NF-1); fn = $3 }
             /^SET of the same/ { printf "| Redis module | memory of %s items at 1%%: filter against a SET | %.2f MB | %.2f MB | **%.0fx** less |\n", fn, fb / 1e6, $(NF-1) / 1e6, $(NF-1) / fb }' \
            "$raw/module.out"
    fi
    if ok cms; then
        awk '/^(add|count), 2000 x 7/ { printf "| Count-min library | %s, 8-byte items (cms_bench) | %s ns | | |\n", $1 " " $2 " " $3 " " $4, $NF }
             /^(add|count), 2\^22 x 7/ { printf "| Count-min library | %s, 8-byte items, out of cache | %s ns | | |\n", $1 " " $2 " " $3 " " $4, $NF }
             /^(add|contains, present|contains, absent) +[0-9.]+ +[0-9.]+$/ { printf "| Cuckoo filter library | %s, 8-byte items, half full (cuckoo_bench) | %s ns | | |\n", $1 == "add" ? "add" : $1 " " $2, $(NF-1) }
             /^(add, compression|quantile, 1 of|cdf, 1 of)/ { n = split($0, f, /  +/); printf "| t-digest library | %s (tdigest_bench) | %s ns | | |\n", f[1], f[2] }
             /^(CMS|TOPK|CF|TDIGEST)\./ { n = split($0, f, /  +/); printf "| RedisBloom families | %s against RedisBloom 2.6.28 (µs per call, median of alternated rounds) | %s µs | %s µs | **%.2fx** |\n", f[1], f[2], f[3], 1 / f[4] }' \
            "$raw/cms.out"
    fi
)

# ---- report -----------------------------------------------------------------------
section_md() { # name title what
    local name=$1 title=$2 what=$3
    echo "## $title"
    echo
    echo "$what"
    echo
    case ${status[$name]:-not run} in
    ok)
        echo "Output (${seconds[$name]} s), verbatim:"
        echo
        echo '```'
        cat "$raw/$name.out"
        echo '```'
        ;;
    failed*)
        echo "**This section failed: ${status[$name]}.** The end of its error output:"
        echo
        echo '```'
        tail -n 20 "$raw/$name.err"
        echo '```'
        ;;
    *)
        echo "**Not run: ${status[$name]:-not selected}.**"
        ;;
    esac
    echo
}

mkdir -p "$(dirname "$report")"
{
    echo "# Benchmarks"
    echo
    echo "Every comparison of \`bench/\`, run side by side in one run by \`bench/report.sh\`"
    echo "(mode: $mode), $date_start, $total_min min in all. To regenerate this file:"
    echo
    echo '```sh'
    echo "bench/report.sh            # full sizes, writes docs/benchmarks.md"
    echo "bench/report.sh -q         # quick smoke run, writes build-report/benchmarks.md"
    echo '```'
    echo
    echo "Times are medians of repeated runs (each tool says how many). The machine is a"
    echo "small shared VM: other jobs may run beside the benchmarks, so absolute times move"
    echo "from run to run by 10-30%; compare the ratios, which are measured side by side."
    echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $load_end."
    echo
    echo "## Machine"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "$machine_rows"
    echo
    echo "## Sizes"
    echo
    echo "| section | sizes | status |"
    echo "|---|---|---|"
    want hll && echo "| hll | hll_bench -r $hll_runs (medians of $hll_runs runs) | ${status[hll]:-} |"
    want bloom && echo "| bloom | bloom_bench -n $bloom_ns -a $bloom_absent -r $bloom_runs -R $bloom_runs_large -k 8 | ${status[bloom]:-} |"
    want count && echo "| count | count_bench.sh: $count_lines lines, $count_distinct distinct; RUNS=$count_runs, SLOW_RUNS=$count_slow | ${status[count]:-} |"
    want bloomcli && echo "| bloomcli | bloom_cli_bench.sh: BENCH_ITEMS=$cli_items, RUNS=$cli_runs | ${status[bloomcli]:-} |"
    want module && echo "| module | module_bench.sh: REQUESTS=$module_requests, ROUNDS=$module_rounds, SET_ITEMS=$module_set | ${status[module]:-} |"
    want groups && echo "| groups | group_bench.sh: GROUP_ROWS=$group_rows, GROUP_COUNTS=$group_counts, RUNS=$group_runs, SLOW_RUNS=1 | ${status[groups]:-} |"
    want cms && echo "| cms | cms_bench, topk_bench and cuckoo_bench -r $cms_rounds; redisbloom_bench.sh: REQUESTS=$cms_requests, ROUNDS=$cms_rounds, peer: ${PEER_MODULE:-none} | ${status[cms]:-} |"
    want modmem && echo "| modmem | module_memory.sh: N=20000, ROUNDS=3, peer: ${PEER_MODULE:-none} | ${status[modmem]:-} |"
    want compressed && echo "| compressed | compressed_bench.sh: BENCH_LINES=$compressed_lines, ROUNDS=$compressed_rounds | ${status[compressed]:-} |"
    want postgres && echo "| postgres | pg_bench.py: PG_ROWS=$pg_rows, PG_GROUPS=$pg_groups, RUNS=$pg_runs, EXACT_RUNS=1 | ${status[postgres]:-} |"
    want instr && echo "| instr | path_instructions.sh $INSTR_OLD_REF | ${status[instr]:-} |"
    want inplace && echo "| inplace | in_place_bench.sh: FILTER_ITEMS=$inplace_items, BULK_ITEMS=$inplace_bulk, ROUNDS=$inplace_rounds, peer: $INPLACE_PEER_REF | ${status[inplace]:-} |"
    echo
    echo "## Summary"
    echo
    echo "Taken from the tables below. Ratios are sketch's speed over the other's (above 1:"
    echo "sketch is faster), each from the medians of the same run."
    echo
    echo "| area | comparison | sketch | other | ratio |"
    echo "|---|---|--:|--:|--:|"
    if [[ -n $summary ]]; then echo "$summary"; else echo "| | no section produced results | | | |"; fi
    echo
    section_md hll "HyperLogLog library: bench/hll_bench" \
        "Micro-benchmarks of the library's hot paths, single thread."
    section_md bloom "Bloom filters against libbloom: bench/bloom_bench" \
        "The library's blocked, classic and split filters against Debian's libbloom and against the floor (one random 64-byte line per item), 8-byte keys, p = 1%, one thread. \`x libbloom\` is libbloom's median time over sketch's; the indented lines give each blocked and split row over the faster floor of its operation."
    section_md count "Counting distinct lines: bench/count_bench.sh" \
        "\`sketch count\` against \`wc -l\` (the cost of reading the file), \`sort -u\`, \`awk\` and Redis, on one generated file whose number of distinct lines is known."
    section_md groups "Distinct counts per group: bench/group_bench.sh" \
        "\`sketch count --by 1 -f 2\` against DuckDB's approx_count_distinct and count(DISTINCT) GROUP BY (npm @duckdb/node-api), datamash and sort | uniq -c, on generated rows with 1,000 and 1,000,000 groups of log-uniform sizes; per-group errors against DuckDB's exact answer, over the groups of at least 1,000 items."
    section_md bloomcli "Bloom filter commands against DCSO's bloom: bench/bloom_cli_bench.sh" \
        "\`sketch bloom\` against DCSO's \`bloom\` command (Debian: golang-github-dcso-bloom-cli), building a filter from a file of lines and checking lines."
    section_md module "Redis module against Redis's own commands: bench/module_bench.sh" \
        "sketch.so's commands against PFADD, PFCOUNT and a SET on the same server, with redis-benchmark."
    section_md cms "Count-min sketches, top-k and Cuckoo filters: bench/cms_bench, topk_bench, cuckoo_bench and redisbloom_bench.sh" \
        "The library's add and count of 8-byte items on a sketch that stays in cache (2000 x 7, what CMS.INITBYPROB 0.001 0.01 makes) and on one that does not, and merges per counter; top-k's add, query, count and list on a Zipf stream; the Cuckoo filter's add, lookups and deletes in cache and out of it, and how full each bucket size gets; then the CMS.*, TOPK.* and CF.* commands of sketch.so against RedisBloom 2.6.28's (PEER_MODULE, built outside the project), two servers under the same redis-benchmark load, which goes first alternating by round, in server time per call (INFO commandstats). The ratio is the median of the rounds' ratios; below 1, sketch takes less time."
    section_md modmem "Redis module memory per key: bench/module_memory.sh" \
        "The used_memory that a default \`BF.ADD key item\` key adds to Redis, a fresh server per measurement, the modules' rounds interleaved: \`SET ctl\` is a plain string key, what every key costs Redis itself; \`BF-ctl\` is what the filter costs. The peer is RedisBloom 2.6.28, built outside the project, when PEER_MODULE names it."
    section_md compressed "Compressed input: bench/compressed_bench.sh" \
        "\`sketch count\` of gzip, zstd and xz files against the fastest decompressor installed writing to /dev/null, and the usual \`zcat | wc -l\` pipes."
    section_md inplace "Adds in place: bench/in_place_bench.sh" \
        "\`sketch bloom add\` into a large filter file, which changes the chunks its items touch in place, against the command of commit $INPLACE_PEER_REF, which read, checked and rewrote the whole file. Peak memory is GNU time's maximum resident set, which counts the pages of the mapped file that the process touched."
    section_md postgres "PostgreSQL extension against postgresql-hll: bench/pg_bench.py" \
        "The extension's \`hll_agg(v)\` against postgresql-hll's \`hll_add_agg(hll_hash_text(v), 14)\` (Debian postgresql-15-hll, in a schema of its own), exact \`count(DISTINCT v)\` and \`count(v)\` (the floor: the scan and one aggregate call a row) on one private PostgreSQL 15 server, serial and with 2 parallel workers, without GROUP BY and with 1,000 and 100,000 groups. Errors are against count(DISTINCT)'s answer: the estimate's own without GROUP BY, the root mean square over the groups with it."
    section_md instr "Instructions per operation against an older build: bench/path_instructions.sh" \
        "Every library path of bench/path_instructions.c, linked against the library of commit $INSTR_OLD_REF (0.2, before the API of 0.3) and against this tree's, both Release; valgrind's callgrind counts the instructions of K operations and of none. A count is the same on every run, so it resolves a difference of 1% that wall-clock medians cannot resolve on this machine, where the same binary's time moves by 20-60% from run to run; it does not count cache misses or mispredicted branches. The auto rows compare layouts, not code: SK_BLOOM_AUTO picked blocked in 0.2 and picks split now."
} > "$report.tmp" && mv "$report.tmp" "$report"
log "wrote $report ($total_min min)"
for name in hll bloom count groups bloomcli module cms modmem compressed inplace postgres instr; do
    want $name && [[ ${status[$name]:-} == failed* ]] && exit 1
done
exit 0
