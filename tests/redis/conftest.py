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
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
os.environ.setdefault("SKETCH_LIB", os.path.join(_ROOT, "build", "src", "libsketch.so"))
os.environ.setdefault("SKETCH_BIN", os.path.join(_ROOT, "build", "cli", "sketch"))
sys.path.insert(0, _HERE)

REDIS_SERVER = "/usr/bin/redis-server"
START_TIMEOUT = 15.0


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_server_port():
    if not (os.path.isfile(REDIS_SERVER) and os.access(REDIS_SERVER, os.X_OK)):
        pytest.fail("%s is missing: the Redis conformance suite needs the real "
                    "server (apt-get install redis-server)" % REDIS_SERVER)
    tmpdir = tempfile.mkdtemp(prefix="sketch-redis-")
    log_path = os.path.join(tmpdir, "redis.log")
    port = _free_port()
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", tmpdir,
         "--daemonize", "no", "--protected-mode", "yes"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmpdir)
    try:
        yield port, proc, log_path
    finally:
        proc.kill()
        proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmpdir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_client(redis_server_port):
    try:
        import redis
    except ImportError as e:  # a failure, not a skip
        pytest.fail("redis-py is not importable by %s: %s" % (sys.executable, e))
    port, proc, log_path = redis_server_port
    client = redis.Redis(host="127.0.0.1", port=port, decode_responses=False,
                         socket_timeout=60)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            with open(log_path, "rb") as f:
                pytest.fail("redis-server exited with %s:\n%s"
                            % (proc.returncode, f.read().decode(errors="replace")))
        try:
            if client.ping():
                break
        except redis.exceptions.ConnectionError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("redis-server on port %d did not answer PING in %.0f s"
                        % (port, START_TIMEOUT))
        time.sleep(0.05)
    version = client.info("server")["redis_version"]
    assert version, "no redis_version in INFO"
    yield client
    client.close()


@pytest.fixture
def r(redis_client):
    redis_client.flushall()
    return redis_client
