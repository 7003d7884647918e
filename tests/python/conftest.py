# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the Python package's suite (python/, docs/python.md).

The package is imported from SKETCH_PY_SITE, where ctest's python_package
step (tests/python/build.sh) built it against this tree's library; without
it, from build/python-site. An import that fails is a failure of every
test, never a skip. `sketch_bin` is the command of the same tree, for the
comparisons byte for byte; `redis_client` a private redis-server (Debian's),
for PF keys read and written with redis-py.
"""
import ctypes
import os
import subprocess
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
SITE = os.environ.get("SKETCH_PY_SITE", os.path.join(_ROOT, "build", "python-site"))
sys.path.insert(0, SITE)
sys.path.insert(0, os.path.join(_HERE, os.pardir, "common"))

from private_redis import redis_client as private_redis_client  # noqa: E402

SKETCH_BIN = os.environ.get("SKETCH_BIN", os.path.join(_ROOT, "build", "cli", "sketch"))
REDIS_SERVER = "/usr/bin/redis-server"
# The library itself (its shared build), for the answers a class must give.
LIBRARY = os.environ.get("SKETCH_LIB", os.path.join(os.path.dirname(os.path.dirname(SKETCH_BIN)),
                                                   "src", "libsketch.so"))


@pytest.fixture(scope="session")
def libsketch():
    """libsketch.so through ctypes: the extension links its own copy with
    every symbol but PyInit__sketch local (-Wl,--exclude-libs,ALL), so the
    two never clash."""
    if not os.path.exists(LIBRARY):
        pytest.fail("no %s (build the library, or set SKETCH_LIB)" % LIBRARY, pytrace=False)
    return ctypes.CDLL(LIBRARY)


@pytest.fixture(scope="session")
def sketch_bin():
    if not os.access(SKETCH_BIN, os.X_OK):
        pytest.fail("no command at %s (build first, or set SKETCH_BIN)" % SKETCH_BIN,
                    pytrace=False)
    return SKETCH_BIN


@pytest.fixture(scope="session")
def run_sketch(sketch_bin):
    """Runs the command with arguments; returns its CompletedProcess (text)."""
    def run(*args, input=None, check=True):
        return subprocess.run([sketch_bin, *map(str, args)], input=input, capture_output=True,
                              text=True, check=check)
    return run


@pytest.fixture(scope="session")
def redis_client():
    with private_redis_client(REDIS_SERVER, "sketch-py-redis-") as client:
        yield client
