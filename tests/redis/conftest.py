# SPDX-License-Identifier: BSD-3-Clause
"""pytest fixtures for the Redis conformance suite.

`redis_client` (session scope) starts a private /usr/bin/redis-server on
127.0.0.1 at a free port, with no persistence and a temporary --dir, waits for
PING, yields a redis.Redis client (bytes replies) and kills the server at the
end. A missing redis-server or redis-py is a test FAILURE, never a skip: the
suite exists to compare against the real server.

`r` (function scope) is the same client after FLUSHALL, so tests never see
each other's keys. SKETCH_LIB and SKETCH_BIN default to the build tree.
"""
import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
os.environ.setdefault("SKETCH_LIB", os.path.join(_ROOT, "build", "src", "libsketch.so"))
os.environ.setdefault("SKETCH_BIN", os.path.join(_ROOT, "build", "cli", "sketch"))
sys.path.insert(0, _HERE)
# tests/common: what the suites share (private_redis: a redis-server of the suite's own).
sys.path.insert(0, os.path.join(_HERE, os.pardir, "common"))

from private_redis import redis_server, wait_for_ping  # noqa: E402

REDIS_SERVER = "/usr/bin/redis-server"
START_TIMEOUT = 15.0


@pytest.fixture(scope="session")
def redis_server_port():
    if not (os.path.isfile(REDIS_SERVER) and os.access(REDIS_SERVER, os.X_OK)):
        pytest.fail("%s is missing: the Redis conformance suite needs the real "
                    "server (apt-get install redis-server)" % REDIS_SERVER)
    with redis_server(REDIS_SERVER, "sketch-redis-", ["--protected-mode", "yes"]) as server:
        yield server


@pytest.fixture(scope="session")
def redis_client(redis_server_port):
    try:
        import redis
    except ImportError as e:  # a failure, not a skip
        pytest.fail("redis-py is not importable by %s: %s" % (sys.executable, e))
    port, proc, log_path = redis_server_port
    client = redis.Redis(host="127.0.0.1", port=port, decode_responses=False,
                         socket_timeout=60)
    wait_for_ping(client, proc, log_path, START_TIMEOUT)
    version = client.info("server")["redis_version"]
    assert version, "no redis_version in INFO"
    yield client
    client.close()


@pytest.fixture
def r(redis_client):
    redis_client.flushall()
    return redis_client
