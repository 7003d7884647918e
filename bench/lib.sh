# SPDX-License-Identifier: BSD-3-Clause
# lib.sh: what the shell benchmarks share, sourced after each sets NAME:
# the build directory they measure and the checks of their settings.

# The build directory, the first argument or ../build beside bench/.
bench_build_dir() {
    local dir=${1:-$script_dir/../build}
    if [[ ! -d $dir ]]; then
        echo "$NAME: build directory '$dir' not found" >&2
        exit 2
    fi
    (cd "$dir" && pwd)
}

# Dies unless each named variable holds a positive integer.
bench_require_positive() {
    local v
    for v in "$@"; do
        if [[ ! ${!v} =~ ^[1-9][0-9]*$ ]]; then
            echo "$NAME: $v must be a positive integer, not '${!v}'" >&2
            exit 2
        fi
    done
}

# Dies unless the seed is a non-negative integer.
bench_require_seed() {
    if [[ ! $BENCH_SEED =~ ^[0-9]+$ ]]; then
        echo "$NAME: BENCH_SEED must be a non-negative integer" >&2
        exit 2
    fi
}

# now_us VAR: the wall clock in integer microseconds, into VAR.
if [[ -n ${EPOCHREALTIME:-} ]]; then
    now_us() { local t=${EPOCHREALTIME/[.,]/}; printf -v "$1" '%s' "$((10#$t))"; }
else
    now_us() { printf -v "$1" '%s' "$(date +%s%6N)"; }
fi
