#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the Python package (python/) against this build tree's library
# into BUILD_DIR/python-site, for the suites that import it (tests/python,
# tests/postgres). setup.py is run directly with its build directories in
# the CMake tree, so that a sanitized tree and a plain one never share
# objects; the README's `pip install` of the same setup.py is run as
# written by .ci/fresh-debian. SKETCH_PY_CFLAGS (a sanitized tree's
# -fsanitize=...) goes to the extension's compiler and linker.
# Usage: build.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$(cd "$2" && pwd)
site=$build/python-site
rm -rf "$site"
cd "$src/python"
SKETCH_BUILD_DIR=$build SKETCH_WERROR=1 \
CFLAGS="${SKETCH_PY_CFLAGS:-}" LDFLAGS="${SKETCH_PY_CFLAGS:-}" \
    "${SKETCH_PYTHON:-python3}" setup.py --quiet build --build-base "$build/python-build" --build-lib "$site"
"${SKETCH_PYTHON:-python3}" -c 'import sys; sys.path.insert(0, sys.argv[1]); import sketch; print("built", sketch.__file__)' "$site"
