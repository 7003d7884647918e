#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bloom_cli_bench.sh: times `sketch bloom` against DCSO's `bloom` command
# (Debian: golang-github-dcso-bloom-cli), side by side: building a filter
# from a file of lines, and checking lines that are in it and lines that
# are not.
#
# Usage: bench/bloom_cli_bench.sh [BUILD_DIR]        (default: ../build from here)
#
# BUILD_DIR must hold cli/sketch and bench/gen_lines (cmake --build BUILD_DIR
# builds them). Needs bash >= 4, DCSO's `bloom` on PATH (or BLOOM=...), cat,
# head, tail, wc, sort, awk.
#
# Environment:
#   RUNS=5              timed runs of every command (median shown)
#   BENCH_ITEMS=3300000 lines added; as many other lines are checked as absent
#   BENCH_FP=0.01       false-positive rate both filters are sized for
#   BENCH_SEED=1        seed of gen_lines
#   BLOOM=bloom         the DCSO command
#
# Inputs: gen_lines writes 2 x BENCH_ITEMS lines, every one distinct by
# construction (-n = -d), in shuffled order; the first half is the file of
# lines to add, the second the lines to check as absent. Everything lives in a
# temporary directory removed on exit.
#
# What is timed (wall clock, files in the page cache, warmed with cat before
# each command; runs interleaved command by command):
#   add:     bloom create -n N -p P F && bloom insert F < added
#            sketch bloom create -n N -p P F && sketch bloom add F < added
#            (sketch adds with one thread; the -j 2 row is for reference)
#   check:   bloom check F < lines > /dev/null
#            sketch bloom check F < lines > /dev/null
#            sketch bloom check -c F < lines          (prints only the count)
#   on the absent lines and on the added lines. The matches of each tool are
#   counted afterwards, untimed (bloom check ... | wc -l; sketch -c): on the
#   absent lines they are the false positives, on the added lines they must be
#   all of them.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" bloom_cli_bench "${1:-}"

bench_defaults RUNS=5 BENCH_ITEMS=3300000 BENCH_FP=0.01 BENCH_SEED=1 BLOOM=bloom
TARGET=5

bench_require_positive RUNS BENCH_ITEMS
bench_require_seed
if [[ ! $BENCH_FP =~ ^(0?\.[0-9]+|[0-9.]+[eE]-?[0-9]+)$ ]]; then
    echo "bloom_cli_bench: BENCH_FP must be a rate such as 0.01, not '$BENCH_FP'" >&2
    exit 2
fi
if (( 2 * BENCH_ITEMS > 4294967295 )); then
    echo "bloom_cli_bench: BENCH_ITEMS must be below 2^31" >&2
    exit 2
fi

SKETCH=$build_dir/cli/sketch
GEN=$build_dir/bench/gen_lines
bench_require_built sketch_cli="$SKETCH" gen_lines="$GEN"
bench_require_tools "DCSO's bloom: apt-get install golang-github-dcso-bloom-cli" \
    "$BLOOM" cat head tail wc sort awk

# ---- scratch space and cleanup ----------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/bloom_cli_bench.XXXXXX")
cleanup() {
    local status=$?
    set +e
    trap '' INT TERM
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


# CPU time (user + system) of all waited-for children so far, in microseconds,
# from the `times` builtin ("XmY.ZZZs XmY.ZZZs" on its second line). No
# subshells: a forked shell would report its own children only.
children_cpu_us() {
    local line u s
    times >"$work/times.out"
    { read -r line; read -r line; } <"$work/times.out"
    to_us u "${line%% *}"
    to_us s "${line##* }"
    printf -v "$1" '%s' "$((u + s))"
}
to_us() { # VAR 1m2.345s -> VAR=62345000
    local t=$2 m sec int frac
    m=${t%%m*}
    sec=${t#*m}
    sec=${sec%s}
    int=${sec%%.*}
    frac=${sec#*.}
    [[ $frac == "$sec" ]] && frac=0
    frac=${frac}000000
    printf -v "$1" '%s' "$(( (10#$m * 60 + 10#$int) * 1000000 + 10#${frac:0:6} ))"
}

# ---- inputs ------------------------------------------------------------------------

all=$work/all.txt
added=$work/added.txt
absent=$work/absent.txt
echo "generating $((2 * BENCH_ITEMS)) distinct lines..." >&2
"$GEN" -n $((2 * BENCH_ITEMS)) -d $((2 * BENCH_ITEMS)) -s "$BENCH_SEED" "$all" >"$work/gen.out"
head -n "$BENCH_ITEMS" "$all" >"$added"
tail -n +"$((BENCH_ITEMS + 1))" "$all" >"$absent"
rm -f "$all"
added_lines=$(wc -l <"$added")
absent_lines=$(wc -l <"$absent")
added_bytes=$(wc -c <"$added")
absent_bytes=$(wc -c <"$absent")
if [[ $added_lines != "$BENCH_ITEMS" || $absent_lines != "$BENCH_ITEMS" ]]; then
    echo "bloom_cli_bench: expected $BENCH_ITEMS + $BENCH_ITEMS lines, got $added_lines + $absent_lines" >&2
    exit 1
fi
if [[ $(sort -u "$added" "$absent" | wc -l) != $((2 * BENCH_ITEMS)) ]]; then
    echo "bloom_cli_bench: the generated lines are not all distinct" >&2
    exit 1
fi

D=$work/dcso.bloom
S=$work/sketch.bloom
S2=$work/sketch-j2.bloom

# ---- the contenders -----------------------------------------------------------------

t_dcso_add() {
    rm -f "$D"
    "$BLOOM" create -n "$BENCH_ITEMS" -p "$BENCH_FP" "$D"
    "$BLOOM" insert "$D" <"$added"
}
t_sketch_add() {
    rm -f "$S"
    "$SKETCH" bloom create -n "$BENCH_ITEMS" -p "$BENCH_FP" "$S" >/dev/null
    "$SKETCH" bloom add "$S" <"$added"
}
t_sketch_add_j2() {
    rm -f "$S2"
    "$SKETCH" bloom create -n "$BENCH_ITEMS" -p "$BENCH_FP" "$S2" >/dev/null
    "$SKETCH" bloom add -j 2 "$S2" <"$added"
}
# sketch bloom check exits 1 when no line matched: not an error here.
sketch_check() { "$SKETCH" bloom check "$@" || [[ $? == 1 ]]; }
t_dcso_absent() { "$BLOOM" check "$D" <"$absent" >/dev/null; }
t_sketch_absent() { sketch_check "$S" <"$absent" >/dev/null; }
t_sketch_absent_c() { sketch_check -c "$S" <"$absent" >/dev/null; }
t_dcso_present() { "$BLOOM" check "$D" <"$added" >/dev/null; }
t_sketch_present() { sketch_check "$S" <"$added" >/dev/null; }
t_sketch_present_c() { sketch_check -c "$S" <"$added" >/dev/null; }

declare -A label group times cpus matches
order=()
add_row() { # key group label
    order+=("$1")
    group[$1]=$2
    label[$1]=$3
    times[$1]=
    cpus[$1]=
    matches[$1]=-
}
add_row dcso_add add "dcso bloom create + insert"
add_row sketch_add add "sketch bloom create + add"
add_row sketch_add_j2 add "sketch bloom create + add -j 2"
add_row dcso_absent absent "dcso bloom check"
add_row sketch_absent absent "sketch bloom check"
add_row sketch_absent_c absent "sketch bloom check -c"
add_row dcso_present present "dcso bloom check"
add_row sketch_present present "sketch bloom check"
add_row sketch_present_c present "sketch bloom check -c"

warm() { cat "$added" "$absent" >/dev/null; }

time_one() { # key
    local key=$1 t0 t1 c0 c1
    warm
    children_cpu_us c0
    now_us t0
    "t_$key"
    now_us t1
    children_cpu_us c1
    times[$key]+="$((t1 - t0)) "
    cpus[$key]+="$((c1 - c0)) "
    printf '  %-8s %-32s run %d: %d.%03d s\n' "${group[$key]}" "${label[$key]}" \
        "$(wc -w <<<"${times[$key]}")" $(( (t1 - t0) / 1000000 )) \
        $(( (t1 - t0) / 1000 % 1000 )) >&2
}

# ---- header ------------------------------------------------------------------------

cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1 || true)
dcso_version=$("$BLOOM" --version 2>&1 | head -n 1 || true)
echo "bloom_cli_bench: Bloom filter commands on lines, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "inputs:  $BENCH_ITEMS lines to add ($added_bytes bytes), $BENCH_ITEMS other lines to check"
echo "         as absent ($absent_bytes bytes); all distinct (gen_lines -n = -d $((2 * BENCH_ITEMS)) -s $BENCH_SEED)"
echo "filters: n = $BENCH_ITEMS, p = $BENCH_FP for both tools"
echo "machine: ${cpu:-unknown CPU}, $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tools:   $("$SKETCH" --version 2>&1 | head -n 1); DCSO $dcso_version ($(command -v "$BLOOM"))"
echo "runs:    RUNS=$RUNS per command, interleaved; median shown; wall clock and CPU (user+sys)"
echo

# ---- timing ----------------------------------------------------------------------

for ((r = 1; r <= RUNS; r++)); do
    for key in "${order[@]}"; do
        time_one "$key"
    done
done

# ---- matches, untimed ------------------------------------------------------------------

matches[dcso_absent]=$("$BLOOM" check "$D" <"$absent" | wc -l)
matches[sketch_absent]=$(sketch_check "$S" <"$absent" | wc -l)
matches[sketch_absent_c]=$(sketch_check -c "$S" <"$absent")
matches[dcso_present]=$("$BLOOM" check "$D" <"$added" | wc -l)
matches[sketch_present]=$(sketch_check "$S" <"$added" | wc -l)
matches[sketch_present_c]=$(sketch_check -c "$S" <"$added")
# The filters the add commands built hold every line: count them the same way.
matches[dcso_add]="${matches[dcso_present]} of $BENCH_ITEMS"
matches[sketch_add]="${matches[sketch_present]} of $BENCH_ITEMS"
matches[sketch_add_j2]="$(sketch_check -c "$S2" <"$added") of $BENCH_ITEMS"

# ---- the table ---------------------------------------------------------------------

median_us() { # list of integers
    tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -n |
        awk '{v[NR] = $1} END {printf "%d\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

declare -A dcso_median
for key in "${order[@]}"; do
    if [[ $key == dcso_* ]]; then
        dcso_median[${group[$key]}]=$(median_us "${times[$key]}")
    fi
done

{
    for key in "${order[@]}"; do
        # primary rows carry the target; the -j 2 and -c rows are for reference
        primary=0
        [[ $key == sketch_add || $key == sketch_absent || $key == sketch_present ]] && primary=1
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${group[$key]}" "${label[$key]}" \
            "$(median_us "${times[$key]}")" "$(median_us "${cpus[$key]}")" \
            "${dcso_median[${group[$key]}]}" "${matches[$key]}" "$primary" \
            "$([[ $key == dcso_* ]] && echo 1 || echo 0)" "${times[$key]}"
    done
} | awk -F '\t' -v target="$TARGET" -v items="$BENCH_ITEMS" '
    BEGIN {
        names["add"] = "add " items " lines"
        names["absent"] = "check " items " absent"
        names["present"] = "check " items " present"
        fmt = "%-21s | %-30s | %4s | %8s | %8s | %11s | %-18s | %-13s | %s\n"
        printf fmt, "operation", "command", "runs", "median s", "CPU s", "dcso/sketch",
               "matches", "target", "all runs (s)"
        printf fmt, "---------------------", "------------------------------", "----",
               "--------", "--------", "-----------", "------------------", "-------------",
               "------------"
    }
    {
        n = split($9, all, " ")
        runs = ""
        for (i = 1; i <= n; i++) runs = runs sprintf("%s%.3f", i > 1 ? " " : "", all[i] / 1e6)
        ratio = $8 == 1 ? "-" : sprintf("%.2fx", $5 / $3)
        verdict = ""
        if ($7 == 1)
            verdict = sprintf(">= %dx: %s", target, $5 / $3 >= target ? "met" : "MISSED")
        printf fmt, names[$1], $2, n, sprintf("%.3f", $3 / 1e6), sprintf("%.3f", $4 / 1e6),
               ratio, $6, verdict, runs
    }'

echo
echo "matches: on absent lines, the false positives (expected about $BENCH_FP x $BENCH_ITEMS);"
echo "on added lines, all $BENCH_ITEMS (a Bloom filter has no false negatives)."
dcso_bits=$("$BLOOM" show "$D" | awk -F ':' '/^Bits/ {gsub(/[ \t]/, "", $2); print $2}')
dcso_k=$("$BLOOM" show "$D" | awk -F ':' '/^Hash functions/ {gsub(/[ \t]/, "", $2); print $2}')
sk_info=$("$SKETCH" bloom info "$S")
sk_layout=$(sed -n 's/^layout: //p' <<<"$sk_info")
sk_bits=$(sed -n 's/^bits: //p' <<<"$sk_info")
sk_k=$(sed -n 's/^hashes: //p' <<<"$sk_info")
echo "filters: dcso: $dcso_bits bits, $dcso_k hashes, file $(wc -c <"$D") bytes;" \
     "sketch: $sk_layout, $sk_bits bits, $sk_k hashes, file $(wc -c <"$S") bytes"
echo "ratio = dcso median / sketch median (wall clock); sketch bloom add uses one thread" \
     "unless -j 2; CPU s = user + system time of the commands"
