# SPDX-License-Identifier: BSD-3-Clause
"""pg_server.py: a private PostgreSQL 15 server with this build's extension,
for the extension's tests (conftest.py) and its benchmark (bench/pg_bench.py).

  1. The extension is installed into a staging directory with the build's
     own install rules: `cmake --install BUILD_DIR --component postgres`
     with DESTDIR=<dir>/stage, so that its files land in
     <dir>/stage/<pkglibdir>/sketch.so and <dir>/stage/<sharedir>/extension/.
  2. initdb makes a cluster in <dir>/data (trust authentication, superuser
     `postgres`). PostgreSQL refuses to run as root, so a root run (CI) runs
     initdb and the server as `nobody`, owner of <dir>; anyone else runs them
     as themselves.
  3. The server (postgres itself, no pg_ctl, so that the caller holds its
     process) listens on 127.0.0.1 at a free port, with its socket in <dir>
     and extension_destdir = <dir>/stage: Debian's PostgreSQL (a patch of its
     own, for testing packages before they are installed) looks for
     extension files and modules under that prefix first. Nothing is written
     to the system's PostgreSQL directories, and each build runs its own
     sketch.so. A server without extension_destdir fails CREATE EXTENSION.
  4. A database of the caller's own, with CREATE EXTENSION sketch in it.

Every failure is a PgServerError whose message says what to do about it.
"""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

PG_BINDIR = os.environ.get("SKETCH_PG_BINDIR", "/usr/lib/postgresql/15/bin")
CMAKE = os.environ.get("SKETCH_CMAKE", "cmake")
# The server user when the caller runs as root.
ROOT_RUNS_AS = "nobody"
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0

try:
    import psycopg
    _PSYCOPG_ERROR = None
except ImportError as e:  # reported when a server is asked for
    psycopg = None
    _PSYCOPG_ERROR = e


def project_version():
    """The version defined once in include/sketch/core.h, "MAJOR.MINOR.PATCH"."""
    with open(os.path.join(SOURCE_DIR, "include", "sketch", "core.h")) as f:
        parts = dict(re.findall(r"^#define SK_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", f.read(), re.M))
    return "%s.%s.%s" % (parts["MAJOR"], parts["MINOR"], parts["PATCH"])


EXTENSION_FILES = ("sketch.so", "sketch.control", "sketch--%s.sql" % project_version())


class PgServerError(Exception):
    pass


def free_port():
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
    for parent, _, files in os.walk(path):
        os.chown(parent, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(os.path.join(parent, name), user.pw_uid, user.pw_gid)


def _run(cmd, **kwargs):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
    if result.returncode != 0:
        raise PgServerError("%s exited with %d:\n%s" % (" ".join(cmd), result.returncode,
                                                       result.stdout.decode(errors="replace")))
    return result.stdout.decode(errors="replace")


def _stage_extension(build_dir, stage):
    _run([CMAKE, "--install", build_dir, "--component", "postgres"],
         env=dict(os.environ, DESTDIR=stage))
    found = {}
    for parent, _, files in os.walk(stage):
        for name in files:
            found[name] = os.path.join(parent, name)
    missing = [name for name in EXTENSION_FILES if name not in found]
    if missing:
        raise PgServerError("cmake --install --component postgres did not install %s (got %s)"
                            % (", ".join(missing), sorted(found)))
    return found


class PgServer:
    """A running server; stop() it (also after a failed start())."""

    def __init__(self, build_dir, database, settings=(), parent=None):
        self.build_dir = build_dir
        self.database = database
        self.settings = list(settings)  # "name=value" for postgres -c
        self.dir = tempfile.mkdtemp(prefix="sketch-pg-", dir=parent)
        self.log_path = os.path.join(self.dir, "server.log")
        self.port = None
        self.files = {}  # the staged extension files, by name
        self._proc = None
        self._log = None

    def start(self):
        if _PSYCOPG_ERROR is not None:
            raise PgServerError("psycopg is not importable: %s (use /usr/bin/python3 with "
                                "python3-psycopg)" % _PSYCOPG_ERROR)
        initdb, postgres = (os.path.join(PG_BINDIR, n) for n in ("initdb", "postgres"))
        for path in (initdb, postgres):
            if not os.access(path, os.X_OK):
                raise PgServerError("%s is missing: a real PostgreSQL 15 server is needed "
                                    "(apt-get install postgresql-15)" % path)
        stage = os.path.join(self.dir, "stage")
        self.files = _stage_extension(self.build_dir, stage)
        data = os.path.join(self.dir, "data")
        _chown_tree(self.dir)
        # --no-sync: a cluster that lives for one run needs no fsync.
        _run([initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
              "--locale=C", "--no-sync"], **_as_user())
        self.port = free_port()
        self._log = open(self.log_path, "wb")
        args = [postgres, "-D", data, "-c", "port=%d" % self.port,
                "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + self.dir,
                "-c", "extension_destdir=" + stage, "-c", "fsync=off",
                "-c", "log_min_messages=warning"]
        for setting in self.settings:
            args += ["-c", setting]
        self._proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                      cwd=self.dir, **_as_user())
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                raise PgServerError("postgres exited with %s:\n%s"
                                    % (self._proc.returncode, self.log()))
            try:
                with self.connect(dbname="postgres") as c:
                    c.execute("CREATE DATABASE " + self.database)
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise PgServerError("postgres on port %d did not accept a connection in "
                                        "%.0f s:\n%s" % (self.port, START_TIMEOUT, self.log()))
                time.sleep(0.1)
        with self.connect() as c:
            try:
                c.execute("CREATE EXTENSION sketch")
            except psycopg.Error as e:
                raise PgServerError("CREATE EXTENSION sketch failed: %s\n%s" % (e, self.log()))
        return self

    def connect(self, dbname=None, **kwargs):
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                               dbname=dbname or self.database, autocommit=True,
                               connect_timeout=10, **kwargs)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def crashes(self):
        """The log's lines that tell of a crashed backend."""
        return re.findall(r".*(?:terminated by signal|was terminated by exception"
                          r"|runtime error:).*", self.log())

    def stop(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self._proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
