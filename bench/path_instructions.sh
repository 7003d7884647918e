#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# path_instructions.sh: the instructions per operation of every library path
# (bench/path_instructions.c), of an older release against this tree, counted
# by valgrind's callgrind.
#
# Usage: bench/path_instructions.sh OLD_REV
#
# OLD_REV is a commit of this repository from 0.2.0 on. Both the old tree and
# this one (the working tree, as it is) are built as Release static
# libraries in BENCH_DIR, and bench/path_instructions.c of this tree is
# linked against each. Every path runs K times and zero times, and the table
# gives (Ir(K) - Ir(0)) / K for each build and new over old. A count is the
# same on every run, so one run of each is enough; it counts work, not time
# (cache misses and branch mispredictions cost nothing here), which is why
# docs/benchmarks.md quotes it beside wall-clock medians, not instead.
#
# Environment: BENCH_DIR (/tmp/sketch-bench/instructions), SCALE (1: K of
# each path times SCALE).
set -euo pipefail

# It makes its own builds, so lib.sh's build directory is the tree's root.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" path_instructions \
    "$(dirname "${BASH_SOURCE[0]}")/.."
old_rev=${1:-}
if [[ -z $old_rev || $# -gt 1 ]]; then
    echo "usage: bench/path_instructions.sh OLD_REV" >&2
    exit 2
fi
bench_defaults BENCH_DIR=/tmp/sketch-bench/instructions SCALE=1
bench_require_positive SCALE
bench_require_tools "Debian: valgrind" valgrind cc cmake git
repo=$(cd "$script_dir/.." && pwd)
old_commit=$(git -C "$repo" rev-parse --verify "$old_rev^{commit}") || {
    echo "$NAME: '$old_rev' is not a commit of $repo" >&2
    exit 2
}

# Builds tree $1's static library in $1/build and links the harness to it.
build() {
    cmake -S "$1" -B "$1/build" -DCMAKE_BUILD_TYPE=Release -DSKETCH_BUILD_TESTS=OFF \
        -DSKETCH_BUILD_BENCH=OFF -DSKETCH_POSTGRES=OFF > "$1/cmake.log"
    cmake --build "$1/build" --target sketch_static -j2 > "$1/build.log"
    cc -O3 -DNDEBUG -std=c11 -I"$1/include" -I"$script_dir" "$script_dir/path_instructions.c" \
        "$1/build/src/libsketch.a" -lxxhash -lm -lpthread -o "$1/path_instructions"
}

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR/old" "$BENCH_DIR/new"
git -C "$repo" archive "$old_commit" | tar -x -C "$BENCH_DIR/old"
# The working tree as it is, uncommitted changes and new files included.
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -c) |
    tar -x -C "$BENCH_DIR/new"
build "$BENCH_DIR/old"
build "$BENCH_DIR/new"

# Instructions of one run of tree $1's harness on path $2, K = $3.
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH_DIR/$1/path_instructions" \
        "$2" "$3" 2>&1 >/dev/null | awk '/Collected/ { print $4 }'
}

echo "# instructions per operation (callgrind Ir), old = $old_rev ($old_commit),"
echo "# new = the working tree of $repo; $(cc --version | head -1)"
printf '%-28s %14s %14s %9s\n' path old new new/old
while read -r path k; do
    k=$((k * SCALE))
    per_op=()
    for tree in old new; do
        with=$(instructions $tree "$path" "$k")
        without=$(instructions $tree "$path" 0)
        per_op+=("$(awk -v a="$with" -v z="$without" -v k="$k" 'BEGIN { printf "%.2f", (a - z) / k }')")
    done
    printf '%-28s %14s %14s %9s\n' "$path" "${per_op[0]}" "${per_op[1]}" \
        "$(awk -v o="${per_op[0]}" -v n="${per_op[1]}" 'BEGIN { printf "%.3f", n / o }')"
done <<'PATHS'
hll_add_hash14 200000
hll_add_hash18 200000
hll_add14 200000
hll_add_hash_batch14 200
hll_count14 200
hll_count18 20
hll_merge14 1000
hll_merge18 50
hll_ser_native14 300
hll_deser_native14 300
hll_ser_redis14 300
hll_deser_redis14 300
hll_sparse14 100
map_add 200000
map_add_batch 200
bloom_blocked_add 200000
bloom_blocked_contains 200000
bloom_blocked_add_b64 3000
bloom_blocked_contains_b64 3000
bloom_split_add 200000
bloom_split_contains 200000
bloom_split_add_b64 3000
bloom_split_contains_b64 3000
bloom_classic_add 200000
bloom_classic_contains 200000
bloom_classic_add_b64 3000
bloom_classic_contains_b64 3000
bloom_auto_add 200000
bloom_auto_contains 200000
PATHS
