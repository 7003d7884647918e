# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the tests of the PostgreSQL extension (postgres/).

`pg` (session scope) starts a private PostgreSQL 15 server for the whole
suite with this build's extension staged beside it (pg_server.py says how:
initdb as `nobody` under root, a free loopback port, extension_destdir) and
stops it at the end, pass or fail. A missing PostgreSQL, psycopg or
redis-server is a FAILURE, never a skip.

Sanitized builds: a sketch.so built with UndefinedBehaviorSanitizer loads
libubsan itself. One built with AddressSanitizer cannot be tested here:
Debian's postgres hangs at start with the ASan runtime preloaded
(tests/CMakeLists.txt says why), and the test is not registered in such a
build.

At the end the server log is searched for a backend that crashed: any is an
error of the suite, even if every test passed.

`conn` (function scope) is a new autocommit connection to the suite's
database; `redis_client` (session) a private redis-server on a free
loopback port, as tests/redis starts one.
"""
import os
import sys

import pytest

from pg_server import PgServer, PgServerError

_HERE = os.path.dirname(os.path.abspath(__file__))
# tests/common: what the suites share (private_redis: a redis-server of the suite's own).
sys.path.insert(0, os.path.join(_HERE, os.pardir, "common"))

from private_redis import redis_client as private_redis_client  # noqa: E402

_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
BUILD_DIR = os.environ.get("SKETCH_BUILD_DIR", os.path.join(_ROOT, "build"))
SKETCH_BIN = os.environ.get("SKETCH_BIN", os.path.join(BUILD_DIR, "cli", "sketch"))
REDIS_SERVER = "/usr/bin/redis-server"
DATABASE = "sketch_test"
START_TIMEOUT = 30.0


@pytest.fixture(scope="session")
def pg():
    # the parallel tests ask for 2 workers per Gather
    server = PgServer(BUILD_DIR, DATABASE,
                      settings=("max_worker_processes=8", "max_parallel_workers=8"))
    try:
        try:
            server.start()
        except PgServerError as e:
            pytest.fail(str(e), pytrace=False)
        yield server
        crashes = server.crashes()
        if crashes:
            pytest.fail("the server log shows crashed backends:\n" + "\n".join(crashes),
                        pytrace=False)
    finally:
        server.stop()


@pytest.fixture
def conn(pg):
    c = pg.connect()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def redis_client():
    with private_redis_client(REDIS_SERVER, "sketch-pg-redis-", timeout=START_TIMEOUT) as client:
        yield client
