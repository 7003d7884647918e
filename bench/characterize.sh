#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# characterize.sh: regenerates every number and plot of docs/accuracy.md with
# one command:
#
#     bench/characterize.sh            # full run: ~12-17 minutes on 2 cores
#     bench/characterize.sh -q         # quick smoke run (~1 minute), written
#                                      # to build-characterize/quick/, not docs/
#
# Options:
#   -q          quick: few trials and queries; output to build-characterize/quick
#   -j THREADS  threads for hll_characterize and compare_bench (default: all cores)
#   -o DIR      write DIR/data/*.csv and DIR/img/*.png instead of docs/data, docs/img
#   -s LIST     only these steps, comma-separated, of hll,redis,bloom,compare,
#               plots (default: all; e.g. -s plots redraws the plots from the
#               data files, -s compare redoes the intersections alone)
#
# What it does:
#   1. builds hll_characterize, bloom_characterize and compare_bench in
#      build-characterize/ (Release), installing what is missing when run as
#      root on Debian (cmake, gcc, libxxhash-dev, libgsl-dev, gnuplot-nox);
#   2. runs hll_characterize: HyperLogLog error distribution, p = 10..16,
#      n = 1 .. 10^9.25, 2000 trials a point -> data/hll_p*.csv,
#      data/hll_method_check.csv, and its printed checks in
#      data/hll_characterize.txt;
#   3. if redis-server and python3-redis are installed: sampled p = 14
#      sketches of 10^3 .. 3 x 10^9 items are SET into a private redis-server
#      on a free loopback port and PFCOUNT is compared with sk_hll_count
#      -> data/hll_redis_check.txt (skipped with a note otherwise);
#   4. runs bloom_characterize: false-positive rates and memory of Bloom
#      filters against theory -> data/bloom_*.csv, data/bloom_characterize.txt;
#   5. runs compare_bench: sk_hll_compare's |A n B| against inclusion-
#      exclusion, p = 12, 14, 16, |A|, |B| = 10^3 .. 10^7, J = 0.001 .. 1,
#      and the time of one comparison -> data/hll_compare.tsv, its printed
#      tables in data/hll_compare.txt, and img/hll_compare_rmse.png;
#   6. draws the plots with gnuplot (bench/plots/*.gp) -> img/*.png.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build-characterize
quick=0
threads=$(nproc)
outdir=
steps=hll,redis,bloom,compare,plots

while getopts "qj:o:s:h" opt; do
    case $opt in
    q) quick=1 ;;
    j) threads=$OPTARG ;;
    o) outdir=$OPTARG ;;
    s) steps=$OPTARG ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
if [[ -z $outdir ]]; then
    if ((quick)); then outdir=$build/quick; else outdir=$root/docs; fi
fi
data=$outdir/data
img=$outdir/img
want() { [[ ,$steps, == *,$1,* ]]; }
mkdir -p "$data" "$img"

# ---- 1. tools and build -----------------------------------------------------
need=()
command -v cmake > /dev/null || need+=(cmake)
command -v cc > /dev/null || need+=(gcc)
command -v gnuplot > /dev/null || need+=(gnuplot-nox)
[[ -f /usr/include/xxhash.h ]] || need+=(libxxhash-dev)
[[ -f /usr/include/gsl/gsl_randist.h ]] || need+=(libgsl-dev)
if ((${#need[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get > /dev/null; then
        echo "characterize: installing ${need[*]}" >&2
        apt-get update -qq && apt-get install -y -qq "${need[@]}" > /dev/null
    else
        echo "characterize: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
        exit 2
    fi
fi

mkdir -p "$build"
echo "characterize: building in $build" >&2
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSKETCH_BUILD_TESTS=OFF > "$build/characterize-cmake.log" 2>&1 ||
    { cat "$build/characterize-cmake.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" --target hll_characterize bloom_characterize compare_bench > "$build/characterize-build.log" 2>&1 ||
    { cat "$build/characterize-build.log" >&2; exit 1; }
hllc=$build/bench/hll_characterize
bloomc=$build/bench/bloom_characterize
compareb=$build/bench/compare_bench
quick_flag=()
((quick)) && quick_flag=(-q)

start=$SECONDS
stamp() { echo "characterize: $* ($((SECONDS - start)) s)" >&2; }

# ---- 2. HyperLogLog ---------------------------------------------------------
if want hll; then
    stamp "hll_characterize ${quick_flag[*]} -j $threads"
    "$hllc" "${quick_flag[@]}" -j "$threads" -o "$data" > "$data/hll_characterize.txt.tmp"
    mv "$data/hll_characterize.txt.tmp" "$data/hll_characterize.txt"
    if grep -q DIFFER "$data/hll_characterize.txt"; then
        echo "characterize: WARNING: the two simulations differ somewhere; see $data/hll_characterize.txt" >&2
    fi
fi

# ---- 3. PFCOUNT of sampled sketches in a real Redis -------------------------
redis_out=$data/hll_redis_check.txt
if ! want redis; then
    :
elif command -v redis-server > /dev/null && /usr/bin/python3 -c 'import redis' 2> /dev/null; then
    stamp "PFCOUNT check against redis-server"
    work=$(mktemp -d)
    trap 'redis-cli -p "${port:-0}" shutdown nosave > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
    "$hllc" -R "$work/strings.txt"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no \
        --daemonize yes --logfile "$work/redis.log"
    /usr/bin/python3 - "$port" "$work/strings.txt" > "$redis_out" << 'EOF' ||
import sys, time, redis
port, path = int(sys.argv[1]), sys.argv[2]
r = redis.Redis(port=port)
for _ in range(100):
    try:
        r.ping()
        break
    except redis.ConnectionError:
        time.sleep(0.05)
version = r.info()["redis_version"]
print(f"Sampled p = 14 sketches (hll_characterize -R), SET as Redis strings into "
      f"redis-server {version}; PFCOUNT against sk_hll_count.")
print()
print(f"{'n':>12} {'sk_hll_count':>14} {'PFCOUNT':>14} {'error':>9}  same")
ok = True
for line in open(path):
    n, count, hexstr = line.split()
    r.set("h", bytes.fromhex(hexstr))
    pf = r.pfcount("h")
    same = pf == int(count)
    ok &= same
    print(f"{int(n):>12} {int(count):>14} {pf:>14} {(int(count) - int(n)) / int(n):>+9.4%}  "
          f"{'yes' if same else 'NO'}")
print()
print("all equal" if ok else "SOME DIFFER")
sys.exit(0 if ok else 1)
EOF
        echo "characterize: WARNING: PFCOUNT and sk_hll_count differ; see $redis_out" >&2
    redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || true
    cat "$redis_out" >&2
else
    echo "redis-server or python3-redis not installed: PFCOUNT check skipped" | tee "$redis_out" >&2
fi

# ---- 4. Bloom filters -------------------------------------------------------
if want bloom; then
    stamp "bloom_characterize ${quick_flag[*]}"
    "$bloomc" "${quick_flag[@]}" -o "$data" > "$data/bloom_characterize.txt.tmp"
    mv "$data/bloom_characterize.txt.tmp" "$data/bloom_characterize.txt"
fi

# ---- 5. intersections: sk_hll_compare against inclusion-exclusion ----------
if want compare; then
    stamp "compare_bench ${quick_flag[*]} -j $threads"
    "$compareb" "${quick_flag[@]}" -j "$threads" -o "$data/hll_compare.tsv.tmp" > "$data/hll_compare.txt.tmp"
    mv "$data/hll_compare.tsv.tmp" "$data/hll_compare.tsv"
    mv "$data/hll_compare.txt.tmp" "$data/hll_compare.txt"
    want plots || gnuplot -e "data='$data'; img='$img'" "$here/plots/hll_compare.gp"
fi

# ---- 6. plots ---------------------------------------------------------------
if want plots; then
    stamp "plots"
    gnuplot -e "data='$data'; img='$img'" "$here/plots/hll.gp"
    gnuplot -e "data='$data'; img='$img'" "$here/plots/bloom.gp"
    if [[ -f $data/hll_compare.tsv ]]; then
        gnuplot -e "data='$data'; img='$img'" "$here/plots/hll_compare.gp"
    fi
fi
stamp "done: $data, $img"
ls -l "$data" "$img" >&2
