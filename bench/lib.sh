# SPDX-License-Identifier: BSD-3-Clause
# lib.sh: what the shell benchmarks share. Each sources it first, as
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" NAME "${1:-}"
# which sets NAME (for messages), script_dir (bench/) and build_dir (the
# build directory measured: the second argument, or ../build beside bench/),
# then sets its settings with bench_defaults and checks them and its tools
# with the functions below.

# The build directory, the first argument or ../build beside bench/.
bench_build_dir() {
    local dir=${1:-$script_dir/../build}
    if [[ ! -d $dir ]]; then
        echo "$NAME: build directory '$dir' not found" >&2
        exit 2
    fi
    (cd "$dir" && pwd)
}

# bench_defaults VAR=VALUE...: each VAR keeps what the environment gives it
# unless that is empty, and is VALUE otherwise.
bench_defaults() {
    local setting var
    for setting in "$@"; do
        var=${setting%%=*}
        [[ -n ${!var:-} ]] || printf -v "$var" '%s' "${setting#*=}"
    done
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

# bench_require_built TARGET=PATH...: the executables of this build the
# benchmark runs. Missing ones are built (their CMake targets) when the build
# directory is a CMake one and cmake is at hand; any still missing is fatal.
bench_require_built() {
    local pair targets=() missing=()
    for pair in "$@"; do
        [[ -x ${pair#*=} ]] || targets+=("${pair%%=*}")
    done
    if ((${#targets[@]})) && [[ -f $build_dir/CMakeCache.txt ]] &&
       command -v cmake > /dev/null; then
        echo "building ${targets[*]} in $build_dir..." >&2
        cmake --build "$build_dir" --target "${targets[@]}" >&2
    fi
    for pair in "$@"; do
        if [[ ! -x ${pair#*=} ]]; then
            echo "$NAME: ${pair#*=} not found; build first: cmake --build $build_dir" >&2
            exit 2
        fi
    done
}

# bench_require_tools HINT TOOL...: dies unless every TOOL is a command (on
# PATH, or a path), saying HINT (which may be empty) after the first missing.
bench_require_tools() {
    local hint=$1 tool
    shift
    for tool in "$@"; do
        if ! command -v "$tool" > /dev/null; then
            echo "$NAME: '$tool' not found on PATH${hint:+ ($hint)}" >&2
            exit 2
        fi
    done
}

# now_us VAR: the wall clock in integer microseconds, into VAR.
if [[ -n ${EPOCHREALTIME:-} ]]; then
    now_us() { local t=${EPOCHREALTIME/[.,]/}; printf -v "$1" '%s' "$((10#$t))"; }
else
    now_us() { printf -v "$1" '%s' "$(date +%s%6N)"; }
fi

NAME=$1
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_dir=$(bench_build_dir "${2:-}")
