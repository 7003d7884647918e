"""Fixtures for the tests of the PostgreSQL extension (postgres/).

`pg` (session scope) starts a private PostgreSQL 15 server for the whole
suite and stops it at the end, pass or fail:

  1. The extension is installed into a staging directory with the build's
     own install rules: `cmake --install $SKETCH_BUILD_DIR --component
     postgres` with DESTDIR=<tmp>/stage, so that its files land in
     <tmp>/stage/<pkglibdir>/sketch.so and <tmp>/stage/<sharedir>/extension/.
  2. initdb makes a cluster in <tmp>/data (trust authentication, superuser
     `postgres`). PostgreSQL refuses to run as root, so a root run (CI) runs
     initdb and the server as `nobody`, owner of <tmp>; anyone else runs them
     as themselves.
  3. The server (postgres itself, no pg_ctl, so that the suite holds its
     process) listens on 127.0.0.1 at a free port, with its socket in <tmp>
     and extension_destdir = <tmp>/stage: Debian's PostgreSQL (a patch of its
     own, for testing packages before they are installed) looks for
     extension files and modules under that prefix first. Nothing is written
     to the system's PostgreSQL directories, and each build tests its own
     sketch.so. A server without extension_destdir fails the suite.
  4. CREATE EXTENSION sketch in a database of the suite's own.

A missing PostgreSQL, psycopg or redis-server is a FAILURE, never a skip.

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
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
BUILD_DIR = os.environ.get("SKETCH_BUILD_DIR", os.path.join(_ROOT, "build"))
PG_BINDIR = os.environ.get("SKETCH_PG_BINDIR", "/usr/lib/postgresql/15/bin")
CMAKE = os.environ.get("SKETCH_CMAKE", "cmake")
SKETCH_BIN = os.environ.get("SKETCH_BIN", os.path.join(BUILD_DIR, "cli", "sketch"))
REDIS_SERVER = "/usr/bin/redis-server"
# The server user when the suite runs as root.
ROOT_RUNS_AS = "nobody"
DATABASE = "sketch_test"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0

try:
    import psycopg
    _PSYCOPG_ERROR = None
except ImportError as e:  # reported as a failure by the fixture
    psycopg = None
    _PSYCOPG_ERROR = e


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_user():
    """subprocess arguments that run a command as the server's user."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam(ROOT_RUNS_AS)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def _chown_tree(path):
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam(ROOT_RUNS_AS)
    for parent, dirs, files in os.walk(path):
        os.chown(parent, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(os.path.join(parent, name), user.pw_uid, user.pw_gid)


def _run(cmd, **kwargs):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
    if result.returncode != 0:
        pytest.fail("%s exited with %d:\n%s" % (" ".join(cmd), result.returncode,
                                                result.stdout.decode(errors="replace")),
                    pytrace=False)
    return result.stdout.decode(errors="replace")


def _stage_extension(stage):
    env = dict(os.environ, DESTDIR=stage)
    _run([CMAKE, "--install", BUILD_DIR, "--component", "postgres"], env=env)
    found = {}
    for parent, _, files in os.walk(stage):
        for name in files:
            found[name] = os.path.join(parent, name)
    for name in ("sketch.so", "sketch.control", "sketch--0.2.0.sql"):
        if name not in found:
            pytest.fail("cmake --install --component postgres did not install %s (got %s)"
                        % (name, sorted(found)), pytrace=False)
    return found


class Server:
    def __init__(self, port, log_path, files):
        self.port = port
        self.log_path = log_path
        self.files = files  # the staged extension files, by name

    def connect(self, dbname=DATABASE, **kwargs):
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                               dbname=dbname, autocommit=True, connect_timeout=10, **kwargs)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")


@pytest.fixture(scope="session")
def pg():
    if _PSYCOPG_ERROR is not None:
        pytest.fail("psycopg is not importable by %s: %s (use /usr/bin/python3 with "
                    "python3-psycopg)" % (sys.executable, _PSYCOPG_ERROR), pytrace=False)
    initdb, postgres = (os.path.join(PG_BINDIR, n) for n in ("initdb", "postgres"))
    for path in (initdb, postgres):
        if not os.access(path, os.X_OK):
            pytest.fail("%s is missing: the extension's tests need a real PostgreSQL 15 "
                        "server (apt-get install postgresql-15)" % path, pytrace=False)
    tmp = tempfile.mkdtemp(prefix="sketch-pg-")
    proc = log = None
    try:
        files = _stage_extension(os.path.join(tmp, "stage"))
        data = os.path.join(tmp, "data")
        _chown_tree(tmp)
        # --no-sync: a cluster that lives for one run needs no fsync.
        _run([initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
              "--locale=C", "--no-sync"], **_as_user())
        port = _free_port()
        log_path = os.path.join(tmp, "server.log")
        log = open(log_path, "wb")
        proc = subprocess.Popen(
            [postgres, "-D", data, "-c", "port=%d" % port, "-c", "listen_addresses=127.0.0.1",
             "-c", "unix_socket_directories=" + tmp,
             "-c", "extension_destdir=" + os.path.join(tmp, "stage"),
             "-c", "fsync=off", "-c", "log_min_messages=warning",
             # the parallel tests ask for 2 workers per Gather
             "-c", "max_worker_processes=8", "-c", "max_parallel_workers=8"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp, **_as_user())
        server = Server(port, log_path, files)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail("postgres exited with %s:\n%s" % (proc.returncode, server.log()),
                            pytrace=False)
            try:
                with server.connect(dbname="postgres") as c:
                    c.execute("CREATE DATABASE " + DATABASE)
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    pytest.fail("postgres on port %d did not accept a connection in %.0f s:\n%s"
                                % (port, START_TIMEOUT, server.log()), pytrace=False)
                time.sleep(0.1)
        with server.connect() as c:
            try:
                c.execute("CREATE EXTENSION sketch")
            except psycopg.Error as e:
                pytest.fail("CREATE EXTENSION sketch failed: %s\n%s" % (e, server.log()),
                            pytrace=False)
        yield server
        crashes = re.findall(r".*(?:terminated by signal|was terminated by exception"
                             r"|runtime error:).*", server.log())
        if crashes:
            pytest.fail("the server log shows crashed backends:\n" + "\n".join(crashes),
                        pytrace=False)
    finally:
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # fast shutdown
                try:
                    proc.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if log is not None:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def conn(pg):
    c = pg.connect()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def redis_client():
    try:
        import redis
    except ImportError as e:  # a failure, not a skip
        pytest.fail("redis-py is not importable by %s: %s" % (sys.executable, e), pytrace=False)
    if not os.access(REDIS_SERVER, os.X_OK):
        pytest.fail("%s is missing (apt-get install redis-server)" % REDIS_SERVER, pytrace=False)
    tmp = tempfile.mkdtemp(prefix="sketch-pg-redis-")
    port = _free_port()
    log = open(os.path.join(tmp, "redis.log"), "wb")
    proc = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", tmp, "--daemonize", "no"],
        stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail("redis-server exited with %s" % proc.returncode, pytrace=False)
            try:
                if client.ping():
                    break
            except redis.exceptions.ConnectionError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("redis-server did not answer PING", pytrace=False)
            time.sleep(0.05)
        yield client
    finally:
        client.close()
        proc.kill()
        proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
