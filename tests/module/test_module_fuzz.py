# SPDX-License-Identifier: BSD-3-Clause
"""Malformed commands in bulk: 2000 commands made of the module's command
names with random arities and random arguments (binary, numbers at the
edges, option keywords, key names of every type, 1 MB strings, real and
damaged SCANDUMP chunks and HyperLogLog strings) must not crash the server.

The commands go over a plain socket, each followed by an ECHO marker, so
that the replies of every command can be counted: a command must get
exactly one reply. After every batch of 100 the server must answer PING
and its process must be alive. The run is deterministic (seeded): a
failure names the batch and the last commands sent."""
import random
import socket
import time

import pytest

COMMANDS = ["BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS",
            "BF.CARD", "BF.INFO", "BF.SCANDUMP", "BF.LOADCHUNK", "HLL.RESERVE", "HLL.ADD",
            "HLL.COUNT", "HLL.ESTIMATE", "HLL.MERGE", "HLL.INFO", "HLL.EXPORT", "HLL.IMPORT",
            "BF.DEBUG", "HLL.COMPARE"]
KEYWORDS = ["CAPACITY", "ERROR", "EXPANSION", "NOCREATE", "NONSCALING", "ITEMS", "SIZE",
            "FILTERS", "EXPANSION", "capacity", "items", "nonscaling"]
NUMBERS = ["0", "1", "-1", "2", "4", "14", "18", "19", "3", "1024", "1025", "32768",
           "32769", "0.5", "0.01", "1e-15", "1e-16", "0.999999", "1", "1e18", "100",
           "1000", "65536", "9223372036854775807", "-9223372036854775808",
           "18446744073709551616", "nan", "inf", "-inf", "1.5", "0x10", " 1", "1 ", "",
           "00000000001"]
KEYS = ["bf", "bf2", "ns", "hll", "hll4", "pf", "str", "list", "missing", "new1", "new2"]
TOTAL = 2000
BATCH = 100
MB = 1 << 20


class Resp:
    """A minimal RESP2 client on a raw socket."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n" % len(a))
            out.append(a)
            out.append(b"\r\n")
        return b"".join(out)

    def send(self, *commands):
        """Sends commands (each a list of arguments) in one write."""
        self.sock.sendall(b"".join(self.encode(*c) for c in commands))

    def read(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b"-"):
            return (kind, rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise AssertionError("bad RESP line %r" % line[:80])

    def close(self):
        try:
            self.f.close()
            self.sock.close()
        except OSError:
            pass


def describe(args):
    return [a[:40] + (b"...(%d bytes)" % len(a) if len(a) > 40 else b"") for a in args]


@pytest.fixture(scope="module")
def fuzz_run(module_servers, tools):
    server = module_servers.start(module_args=["MAX-KEY-MEMORY", "8mb"])
    c = server.client()
    rng = random.Random(2024)
    # material: real chunks and sketches, and their damaged copies
    c.execute_command("BF.RESERVE", "seed-bf", "0.01", "2000", "EXPANSION", "2")
    tools.madd(c, "seed-bf", tools.items("s", 5000))
    chunks = tools.scandump(c, "seed-bf")
    c.execute_command("HLL.ADD", "seed-hll", *tools.items("s", 3000))
    blobs = [d for _, d in chunks] + [c.execute_command("HLL.EXPORT", "seed-hll")]
    c.pfadd("seed-pf", "a", "b")
    blobs.append(c.get("seed-pf"))
    iterators = [str(it).encode() for it, _ in chunks]

    def damaged(blob):
        b = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            if b:
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        if rng.random() < 0.3:
            b = b[:rng.randrange(len(b) + 1)]
        return bytes(b)

    def arg():
        x = rng.random()
        if x < 0.20:
            return rng.choice(KEYS).encode()
        if x < 0.40:
            return rng.choice(NUMBERS).encode()
        if x < 0.52:
            return rng.choice(KEYWORDS).encode()
        if x < 0.57:
            return rng.choice(iterators)
        if x < 0.62:
            return rng.choice(blobs)
        if x < 0.70:
            return damaged(rng.choice(blobs))
        if x < 0.72:
            return rng.choice([b"\x00" * MB, rng.randbytes(MB), b"9" * MB, b"1e" + b"9" * MB])
        return rng.randbytes(rng.randint(0, 64))

    def reset_keys():
        c.delete(*KEYS)
        c.execute_command("BF.RESERVE", "bf", "0.01", "1000")
        c.execute_command("BF.MADD", "bf", *tools.items("k", 500))
        c.execute_command("BF.INSERT", "ns", "CAPACITY", "10", "NONSCALING", "ITEMS", "a")
        c.execute_command("HLL.ADD", "hll", *tools.items("k", 500))
        c.execute_command("HLL.RESERVE", "hll4", 4)
        c.pfadd("pf", "x", "y")
        c.set("str", "plain string")
        c.rpush("list", "a", "b")

    result = {"crash": None, "no_reply": [], "extra_replies": [], "sent": 0,
              "errors": 0, "server": server}
    conn = Resp(server.port)
    recent = []
    try:
        for batch in range(TOTAL // BATCH):
            reset_keys()
            for i in range(BATCH):
                name = rng.choice(COMMANDS)
                if rng.random() < 0.1:
                    name = name.lower()
                arity = rng.choice([0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12])
                args = [name.encode()] + [arg() for _ in range(arity)]
                recent = (recent + [args])[-5:]
                marker = b"__marker_%d_%d__" % (batch, i)
                try:
                    conn.send(args, [b"ECHO", marker])
                    replies = []
                    while True:
                        reply = conn.read()
                        if reply == marker:
                            break
                        replies.append(reply)
                except (OSError, ConnectionError) as e:
                    result["crash"] = ("batch %d command %d: %s: %s" % (batch, i,
                                       type(e).__name__, e), [describe(a) for a in recent])
                    return result
                result["sent"] += 1
                if not replies:
                    result["no_reply"].append(describe(args))
                elif len(replies) > 1:
                    result["extra_replies"].append((describe(args), replies[:3]))
                elif isinstance(replies[0], tuple) and replies[0][0] == b"-":
                    result["errors"] += 1
            # after every batch: PING, and the process is alive
            try:
                conn.send([b"PING"])
                assert conn.read() == (b"+", b"PONG")
            except (OSError, ConnectionError, AssertionError) as e:
                result["crash"] = ("PING after batch %d: %s" % (batch, e),
                                   [describe(a) for a in recent])
                return result
            if not server.alive():
                result["crash"] = ("process gone after batch %d" % batch,
                                   [describe(a) for a in recent])
                return result
        return result
    finally:
        conn.close()
        if result["crash"]:
            time.sleep(0.5)
            result["log"] = "\n".join(l for l in server.log().splitlines()
                                      if "Guru" in l or "crashed" in l or "ASSERT" in l)


def test_fuzz_server_survives(fuzz_run):
    if fuzz_run["crash"]:
        where, last = fuzz_run["crash"]
        pytest.fail("the server stopped answering (%s); process alive: %s; log: %s; "
                    "last commands: %r" % (where, fuzz_run["server"].alive(),
                                          fuzz_run.get("log"), last), pytrace=False)
    assert fuzz_run["sent"] == TOTAL
    assert fuzz_run["server"].alive()
    c = fuzz_run["server"].client()
    assert c.ping()
    assert c.execute_command("BF.ADD", "after-fuzz", "x") == 1
    assert c.execute_command("HLL.ADD", "after-fuzz-h", "x") == 1
    assert fuzz_run["errors"] > TOTAL // 4      # the fuzz did reach the error paths


def test_fuzz_every_command_answered_once(fuzz_run):
    if fuzz_run["crash"]:
        pytest.fail("the fuzz run did not finish (see test_fuzz_server_survives)",
                    pytrace=False)
    assert not fuzz_run["extra_replies"], fuzz_run["extra_replies"][:5]
    no_reply = fuzz_run["no_reply"]
    assert not no_reply, "%d commands got no reply at all, e.g. %r" % (
        len(no_reply), no_reply[:5])
