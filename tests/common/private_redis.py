# SPDX-License-Identifier: BSD-3-Clause
"""A private redis-server for a test suite (tests/redis, tests/postgres,
tests/python).

`redis_server` starts one on 127.0.0.1 at a free port, with no persistence
and a temporary --dir, and kills it at the end; `wait_for_ping` waits until
a client of it answers; `redis_client` does both and yields a redis-py client
of the server. A server that exits or does not answer is a test
FAILURE (pytest.fail), never a skip.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(server, prefix, extra_args=()):
    """Runs server (a redis-server) in a new temporary directory named
    prefix...: yields (port, proc, log_path), then kills it and removes the
    directory."""
    tmpdir = tempfile.mkdtemp(prefix=prefix)
    log_path = os.path.join(tmpdir, "redis.log")
    port = free_port()
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", tmpdir, "--daemonize", "no", *extra_args],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmpdir)
    try:
        yield port, proc, log_path
    finally:
        proc.kill()
        proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmpdir, ignore_errors=True)


def wait_for_ping(client, proc, log_path, timeout):
    """Waits up to timeout seconds for client (redis-py) to answer PING."""
    import redis
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            with open(log_path, "rb") as f:
                pytest.fail("redis-server exited with %s:\n%s"
                            % (proc.returncode, f.read().decode(errors="replace")),
                            pytrace=False)
        try:
            if client.ping():
                return
        except redis.exceptions.ConnectionError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("redis-server on port %d did not answer PING in %.0f s"
                        % (client.connection_pool.connection_kwargs["port"], timeout),
                        pytrace=False)
        time.sleep(0.05)


@contextlib.contextmanager
def redis_client(server, prefix, extra_args=(), timeout=30.0):
    """A redis-py client of a private server (redis_server's arguments),
    once it answers PING; the server is killed at the end."""
    try:
        import redis
    except ImportError as e:  # a failure, not a skip
        pytest.fail("redis-py is not importable: %s" % e, pytrace=False)
    if not os.access(server, os.X_OK):
        pytest.fail("%s is missing (apt-get install redis-server)" % server, pytrace=False)
    with redis_server(server, prefix, extra_args) as (port, proc, log_path):
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
        try:
            wait_for_ping(client, proc, log_path, timeout)
            yield client
        finally:
            client.close()
