# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the test suite of the Redis module sketch.so.

Every test talks to real /usr/bin/redis-server processes that this file
starts on free loopback ports, each with `--loadmodule $SKETCH_MODULE` (default
build/module/sketch.so of this checkout), a temporary --dir, and its output in
a log file there. A missing redis-server, redis-cli, redis-py or module is a
test FAILURE, never a skip.

Another server: SKETCH_REDIS_SERVER and SKETCH_REDIS_CLI name the server and
the cli that every test uses instead (replicas, the cluster and the node-redis
test included), e.g. /usr/bin/valkey-server and /usr/bin/valkey-cli (ctest's
module_valkey). Where Valkey's own replies differ from Redis's (an error text
of the server), the tests ask server_is_valkey() and expect each its own.

Fixtures
  servers   (function) a factory: servers.start(**options) starts one more
            server and waits for PING; every server it started is killed and
            every directory removed when the test ends, pass or fail.
  server    (session)  one shared server (MAX-KEY-MEMORY 64mb) for the tests
            that need nothing special.
  r         (function) a NEW redis.Redis client of the shared server after
            FLUSHALL (new, because r.bf() installs a BF.INFO reply callback
            on the client that it is called on).
  raw       (function) another new client of the shared server, on which
            r.bf() is never called: BF.INFO replies stay plain lists.
  tools     (session)  helpers: snapshots of every observable answer for a
            set of keys, SCANDUMP, Redis's CRC64, random items.

Every client has a socket timeout (CLIENT_TIMEOUT): a command the server never
answers fails its test instead of hanging the suite.

Sanitized modules. A module built with AddressSanitizer needs the ASan
runtime loaded first in the server, which Debian's redis-server is not
linked with. SKETCH_SERVER_PRELOAD (e.g. the path `gcc -print-file-name=
libasan.so` prints) is put in LD_PRELOAD of every redis-server, and
SKETCH_SERVER_ASAN_OPTIONS, if set, becomes its ASAN_OPTIONS (the server
itself leaks by design at exit: use detect_leaks=0). `sanitized_server`
tells the tests whether that is in effect.

servers.start(preexec_fn=...) runs a function in the server's process
before exec, e.g. to lower its resource limits.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types

import pytest

# tests/common: what the suites share (format_h, the byte layouts of src/common/format.h).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", ".."))
MODULE = os.environ.get("SKETCH_MODULE") or os.path.join(_ROOT, "build", "module",
                                                           "sketch.so")
# Debian's by default; SKETCH_REDIS_SERVER and SKETCH_REDIS_CLI run the suite
# against another server (Valkey's valkey-server and valkey-cli: ctest's
# module_valkey).
REDIS_SERVER = os.environ.get("SKETCH_REDIS_SERVER", "/usr/bin/redis-server")
REDIS_CLI = os.environ.get("SKETCH_REDIS_CLI", "/usr/bin/redis-cli")
SERVER_PRELOAD = os.environ.get("SKETCH_SERVER_PRELOAD", "")
SERVER_ASAN_OPTIONS = os.environ.get("SKETCH_SERVER_ASAN_OPTIONS")
START_TIMEOUT = 20.0
CLIENT_TIMEOUT = 10.0

try:
    import redis
    from redis.exceptions import ConnectionError as RedisConnectionError
    _REDIS_IMPORT_ERROR = None
except ImportError as e:  # reported as a failure by the fixtures
    redis = None
    RedisConnectionError = OSError
    _REDIS_IMPORT_ERROR = e


def _require_tools():
    if _REDIS_IMPORT_ERROR is not None:
        pytest.fail("redis-py is not importable by %s: %s (use /usr/bin/python3 with "
                    "python3-redis)" % (sys.executable, _REDIS_IMPORT_ERROR), pytrace=False)
    for path in (REDIS_SERVER, REDIS_CLI):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            if "valkey" in os.path.basename(path):
                how = "apt-get install -t bookworm-backports valkey-server (Debian 12)"
            else:
                how = "apt-get install redis-server redis-tools"
            pytest.fail("%s is missing: %s" % (path, how), pytrace=False)
    if not os.path.isfile(MODULE):
        pytest.fail("the module %s does not exist: build it (cmake --build ...) or set "
                    "SKETCH_MODULE" % MODULE, pytrace=False)


def _port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


_used_ports = set()


def _ephemeral_low():
    """The lowest port the kernel gives outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(with_bus=False):
    """A free loopback port; with_bus: port + 10000 (the cluster bus) too.
    Both lie below the kernel's ephemeral range, so that no client's
    outgoing connection takes the port between this check and the server's
    bind."""
    rng = random.Random()
    top = max(_ephemeral_low() - 10000, 11000)
    for _ in range(2000):
        port = rng.randrange(10000, top)
        if port in _used_ports or (port + 10000) in _used_ports:
            continue
        if _port_free(port) and (not with_bus or _port_free(port + 10000)):
            _used_ports.add(port)
            _used_ports.add(port + 10000)
            return port
    raise RuntimeError("no free loopback port")


def new_client(port, **kw):
    kw.setdefault("socket_timeout", CLIENT_TIMEOUT)
    kw.setdefault("socket_connect_timeout", CLIENT_TIMEOUT)
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=False, **kw)


def server_environment():
    """The environment of a redis-server: ours, with the sanitizer runtime
    preloaded when the module under test needs it."""
    env = dict(os.environ)
    if SERVER_PRELOAD:
        env["LD_PRELOAD"] = " ".join(x for x in (SERVER_PRELOAD, env.get("LD_PRELOAD"))
                                     if x)
        if SERVER_ASAN_OPTIONS is not None:
            env["ASAN_OPTIONS"] = SERVER_ASAN_OPTIONS
    return env


class Server:
    """One redis-server process; restartable on the same port and dir."""

    def __init__(self, directory, port, options, module_args, load_module=True,
                 extra_args=(), preexec_fn=None):
        self.dir = directory
        self.port = port
        self.options = dict(options)
        self.module_args = list(module_args)
        self.load_module = load_module
        self.extra_args = list(extra_args)
        self.preexec_fn = preexec_fn
        self.log_path = os.path.join(directory, "redis-%d.log" % port)
        self.proc = None
        self.clients = []
        self.starts = 0

    def argv(self):
        args = [REDIS_SERVER]
        for name, value in self.options.items():
            args += ["--" + name, str(value)]
        args += self.extra_args
        if self.load_module:
            args += ["--loadmodule", MODULE] + self.module_args
        return args

    def start(self, wait=True):
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(b"\n==== start %d: %s\n" % (self.starts,
                                                   " ".join(self.argv()).encode()))
            log.flush()
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.dir,
                                         env=server_environment(),
                                         preexec_fn=self.preexec_fn)
        if wait:
            self.wait_ready()
        return self

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def wait_ready(self, timeout=START_TIMEOUT):
        c = new_client(self.port, socket_timeout=2)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.proc.poll() is not None:
                    pytest.fail("redis-server on port %d exited with %s:\n%s"
                                % (self.port, self.proc.returncode, self.log()[-4000:]))
                try:
                    if c.ping():
                        return
                except redis.exceptions.BusyLoadingError:
                    pass
                except (RedisConnectionError, redis.exceptions.TimeoutError, OSError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("redis-server on port %d did not answer PING in %.0f s:\n%s"
                                % (self.port, timeout, self.log()[-4000:]))
                time.sleep(0.02)
        finally:
            c.close()

    def client(self, **kw):
        c = new_client(self.port, **kw)
        self.clients.append(c)
        return c

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        """kill -9, as a crash: nothing is flushed beyond what fsync did."""
        for c in self.clients:
            c.close()
        self.clients = []
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=20)

    def stop(self):
        """An orderly stop without saving (SIGTERM with save "" or SHUTDOWN
        NOSAVE would save nothing either way: tests SAVE explicitly)."""
        for c in self.clients:
            c.close()
        self.clients = []
        if self.alive():
            try:
                new_client(self.port, socket_timeout=5).shutdown(nosave=True)
            except Exception:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)

    def restart(self):
        self.stop()
        return self.start()


class Servers:
    """Starts servers for one test and cleans them all up afterwards."""

    BASE_OPTIONS = {
        "bind": "127.0.0.1",
        "protected-mode": "yes",
        "daemonize": "no",
        "save": "",
        "appendonly": "no",
        "logfile": "",
        "loglevel": "notice",
        # DEBUG DIGEST-VALUE compares what servers hold
        "enable-debug-command": "local",
    }

    def __init__(self):
        self.started = []
        self.dirs = []

    def mkdir(self, prefix="sketch-module-"):
        d = tempfile.mkdtemp(prefix=prefix)
        self.dirs.append(d)
        return d

    def start(self, module_args=("MAX-KEY-MEMORY", "64mb"), options=None, directory=None,
              load_module=True, extra_args=(), wait=True, port=None, cluster_bus=False,
              preexec_fn=None):
        _require_tools()
        directory = directory or self.mkdir()
        port = port or free_port(with_bus=cluster_bus)
        opts = dict(self.BASE_OPTIONS)
        opts["port"] = port
        opts["dir"] = directory
        opts.update(options or {})
        s = Server(directory, port, opts, module_args, load_module, extra_args, preexec_fn)
        self.started.append(s)
        s.start(wait=wait)
        return s

    def cleanup(self):
        for s in self.started:
            try:
                for c in s.clients:
                    c.close()
                if s.proc is not None and s.proc.poll() is None:
                    s.proc.kill()
                if s.proc is not None:
                    s.proc.wait(timeout=20)
            except Exception:
                pass
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def _servers():
    _require_tools()
    s = Servers()
    try:
        yield s
    finally:
        s.cleanup()


@pytest.fixture
def servers():
    yield from _servers()


@pytest.fixture(scope="module")
def module_servers():
    """Like `servers`, for servers shared by the tests of one file."""
    yield from _servers()


@pytest.fixture(scope="session")
def server():
    _require_tools()
    s = Servers()
    try:
        yield s.start(module_args=["MAX-KEY-MEMORY", "64mb"])
    finally:
        s.cleanup()


@pytest.fixture
def r(server):
    if not server.alive():
        pytest.fail("the shared redis-server died:\n" + server.log()[-4000:])
    c = new_client(server.port)
    c.flushall()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def raw(server, r):
    c = new_client(server.port)
    try:
        yield c
    finally:
        c.close()


# --------------------------------------------------------------------------
# Helpers, exposed through the `tools` fixture
# --------------------------------------------------------------------------

def items(prefix, n, start=0):
    """n distinct items, bytes."""
    return [b"%s:%d" % (prefix.encode() if isinstance(prefix, str) else prefix, i)
            for i in range(start, start + n)]


def random_items(rng, n, minlen=1, maxlen=24):
    """n distinct random binary items (NULs included)."""
    seen = set()
    out = []
    while len(out) < n:
        x = rng.randbytes(rng.randint(minlen, maxlen))
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def chunked(seq, size):
    for i in range(0, len(seq), size):
        yield seq[i:i + size]


def madd(c, key, its, batch=10000):
    out = []
    for part in chunked(its, batch):
        out += c.execute_command("BF.MADD", key, *part)
    return out


def mexists(c, key, its, batch=10000):
    out = []
    for part in chunked(its, batch):
        out += c.execute_command("BF.MEXISTS", key, *part)
    return out


def hll_add(c, key, its, batch=10000, cmd="HLL.ADD"):
    changed = 0
    for part in chunked(its, batch):
        changed |= c.execute_command(cmd, key, *part)
    return changed


def scandump(c, key):
    """Every (iterator, data) piece of BF.SCANDUMP, in order."""
    pieces = []
    it = 0
    while True:
        it, data = c.execute_command("BF.SCANDUMP", key, it)
        if it == 0:
            break
        pieces.append((it, data))
        assert len(pieces) < 10000, "SCANDUMP never ends"
    return pieces


def loadchunks(c, key, pieces):
    for it, data in pieces:
        assert c.execute_command("BF.LOADCHUNK", key, it, data) in (b"OK", True)


def _answer(fn):
    try:
        return fn()
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))


def snapshot(c, bf_keys=(), hll_keys=(), probes=()):
    """Everything a client can observe about the keys: for Bloom keys
    BF.INFO, BF.CARD, BF.MEXISTS of the probes and the whole SCANDUMP; for
    HyperLogLog keys HLL.COUNT, HLL.INFO, HLL.ESTIMATE and HLL.EXPORT. Two
    snapshots are equal when the keys answer identically."""
    snap = {}
    for k in bf_keys:
        snap[("bf", k)] = {
            "type": c.type(k),
            "info": _answer(lambda: c.execute_command("BF.INFO", k)),
            "card": c.execute_command("BF.CARD", k),
            "mexists": mexists(c, k, list(probes)) if probes else [],
            "dump": _answer(lambda: b"".join(d for _, d in scandump(c, k))),
        }
    for k in hll_keys:
        info = _answer(lambda: c.execute_command("HLL.INFO", k))
        if isinstance(info, list) and b"Memory" in info:
            # the bytes allocated for a sparse sketch depend on its history
            # (a copy or a reloaded sketch is allocated tight): not compared
            del info[info.index(b"Memory"):info.index(b"Memory") + 2]
        snap[("hll", k)] = {
            "count": c.execute_command("HLL.COUNT", k),
            "info": info,
            "estimate": c.execute_command("HLL.ESTIMATE", k),
            "export": _answer(lambda: c.execute_command("HLL.EXPORT", k)),
        }
    return snap


def info_field(c, section, field):
    text = c.execute_command("INFO", section)
    if isinstance(text, dict):           # redis-py parses INFO
        value = text.get(field)
        return None if value is None else str(value)
    for line in text.decode().splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def link_up(c):
    """True when c's server, a replica, has its link to the primary up."""
    return info_field(c, "replication", "master_link_status") == "up"


def same_digests(primary, replica, keys, what):
    """After the replica has caught up (WAIT), its whole dataset and each of
    keys digest as the primary's."""
    assert primary.execute_command("WAIT", 1, 10000) == 1
    assert replica.execute_command("DEBUG", "DIGEST") == \
        primary.execute_command("DEBUG", "DIGEST"), what
    for k in keys:
        assert replica.execute_command("DEBUG", "DIGEST-VALUE", k) == \
            primary.execute_command("DEBUG", "DIGEST-VALUE", k), (what, k)


def server_is_valkey(c):
    """True when c's server is Valkey (INFO's server_name), not Redis."""
    return info_field(c, "server", "server_name") == "valkey"


def wait_for(predicate, timeout=20.0, what="condition", interval=0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


# Redis's CRC64 (src/crc64.c): the Jones polynomial 0xad93d23594c935a9,
# reflected input and output, initial value 0, no final xor. DUMP payloads end
# with the CRC64 of everything before it, little endian.
def _crc64_table():
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 bit-reversed
    table = []
    for b in range(256):
        crc = b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC64_TABLE = _crc64_table()


def crc64(data, crc=0):
    t = _CRC64_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def with_crc(body):
    """A DUMP payload from its body (value + 2-byte RDB version): adds the
    CRC64 trailer Redis checks."""
    return body + crc64(body).to_bytes(8, "little")


def populate(c, seed=1, prefix=""):
    """Writes a set of Bloom and HyperLogLog keys through every writing
    command (and COPY), and returns what a later snapshot needs:
    {"bf": [...], "hll": [...], "probes": [...], "present": {key: items}}.
    The filters include a scaling one of several layers and one of 10^6
    capacity; HLL keys of precision 4, 14 and 18, sparse and dense, an
    imported and a merged one, and a native PF key (read by HLL.*)."""
    rng = random.Random(seed)
    k = lambda name: prefix + name  # noqa: E731
    present = {}

    def bf(name, its, *create):
        if create:
            assert c.execute_command(*create) in (b"OK", True)
        madd(c, k(name), its, batch=5000)
        present[k(name)] = its

    bf("bf:scaling", random_items(rng, 6000),
       "BF.RESERVE", k("bf:scaling"), "0.01", "100", "EXPANSION", "2")
    assert c.execute_command("BF.INFO", k("bf:scaling"), "FILTERS")[0] >= 5
    bf("bf:big", items(b"big", 50000), "BF.RESERVE", k("bf:big"), "0.01", "1000000")
    fixed = items(b"fixed", 600)
    c.execute_command("BF.RESERVE", k("bf:fixed"), "0.001", "500", "NONSCALING")
    reply = c.execute_command("BF.MADD", k("bf:fixed"), *fixed)  # fails part way
    present[k("bf:fixed")] = [x for x, a in zip(fixed, reply) if a in (0, 1)]
    assert 450 <= len(present[k("bf:fixed")]) < 600
    for x in (b"a", b"b", b"\x00\xff"):
        c.execute_command("BF.ADD", k("bf:default"), x)
    present[k("bf:default")] = [b"a", b"b", b"\x00\xff"]
    ins = random_items(rng, 1000)
    for part in chunked(ins, 250):
        c.execute_command("BF.INSERT", k("bf:insert"), "CAPACITY", "300", "ERROR", "0.001",
                          "EXPANSION", "3", "ITEMS", *part)
    present[k("bf:insert")] = ins
    loadchunks(c, k("bf:loaded"), scandump(c, k("bf:scaling")))
    present[k("bf:loaded")] = list(present[k("bf:scaling")])
    assert c.execute_command("COPY", k("bf:scaling"), k("bf:copy")) == 1
    extra = items(b"copy-only", 300)
    madd(c, k("bf:copy"), extra)
    present[k("bf:copy")] = present[k("bf:scaling")] + extra

    hll_add(c, k("hll:p14"), random_items(rng, 50000, 0, 30))
    c.execute_command("HLL.RESERVE", k("hll:p4"), 4)
    hll_add(c, k("hll:p4"), items(b"p4", 100))
    c.execute_command("HLL.RESERVE", k("hll:p18"), 18)
    hll_add(c, k("hll:p18"), items(b"p18", 20000))
    hll_add(c, k("hll:sparse"), items(b"sp", 10))
    c.pfadd(k("pf:native"), *items(b"native", 3000))
    c.execute_command("HLL.IMPORT", k("hll:imported"), c.get(k("pf:native")))
    c.execute_command("HLL.ADD", k("hll:imported"), "after-import")
    c.execute_command("HLL.MERGE", k("hll:merged"), k("hll:p14"), k("hll:p18"), k("pf:native"))
    assert c.execute_command("COPY", k("hll:p14"), k("hll:copy")) == 1
    c.execute_command("HLL.ADD", k("hll:copy"), *items(b"copy-only", 500))

    probes = random_items(random.Random(seed + 99), 3000)
    for its in present.values():
        probes += its[:700]
    return {"bf": sorted(present), "present": present, "probes": probes,
            "hll": [k(x) for x in ("hll:p14", "hll:p4", "hll:p18", "hll:sparse",
                                   "hll:imported", "hll:merged", "hll:copy", "pf:native")]}


def snapshot_of(c, data):
    return snapshot(c, data["bf"], data["hll"], data["probes"])


def assert_all_present(c, data):
    for key, its in data["present"].items():
        found = mexists(c, key, its)
        assert all(found), "%s: %d of %d acknowledged items missing" % (
            key, found.count(0), len(its))


def assert_same_snapshot(before, after):
    assert before.keys() == after.keys()
    for key in before:
        for field in before[key]:
            assert before[key][field] == after[key][field], (key, field)


@pytest.fixture(scope="session")
def sanitized_server():
    """True when the servers run with a sanitizer runtime preloaded."""
    return bool(SERVER_PRELOAD)


@pytest.fixture(scope="session")
def tools():
    return types.SimpleNamespace(
        items=items, random_items=random_items, chunked=chunked, madd=madd,
        mexists=mexists, hll_add=hll_add, scandump=scandump, loadchunks=loadchunks,
        snapshot=snapshot, snapshot_of=snapshot_of, populate=populate,
        assert_all_present=assert_all_present, assert_same_snapshot=assert_same_snapshot,
        info_field=info_field, link_up=link_up, same_digests=same_digests,
        server_is_valkey=server_is_valkey, wait_for=wait_for, crc64=crc64,
        with_crc=with_crc, new_client=new_client, free_port=free_port, MODULE=MODULE,
        REDIS_SERVER=REDIS_SERVER, REDIS_CLI=REDIS_CLI)
