# SPDX-License-Identifier: BSD-3-Clause
"""RedisBloom's own flow tests for Bloom filters, re-expressed for sketch.so.

RedisBloom (tests/flow: test_overall.py's BF part, test_configs.py and
test_acl.py) checks its BF.* commands against a real server. This file asks
the same questions of sketch.so on Debian's redis-server 7.0, in its own code,
where they are about behaviour. Where RedisBloom asserts its own byte sizes,
hash or dump layout (exact 'Size', BF.DEBUG bytes and bits, header offsets,
crafted RDB payloads), the check is either turned into a relation that any
correct filter satisfies or left out; the test names say which RedisBloom test
each one stands for. sketch's deliberate differences (docs/redis-module.md,
docs/limits.md) are asserted as sketch's behaviour:

- configs are module configs named sketch.bf-error-rate, sketch.bf-initial-size
  and sketch.bf-expansion-factor (and sketch.max-key-memory);
- on Redis 7.0 there is no @bloom ACL category (no AddACLCategory): the
  commands are in no category, so they are granted by name;
- BF.EXISTS / BF.MEXISTS on a key of another type answer WRONGTYPE;
- BF.RESERVE refuses unknown arguments; NONSCALING with EXPANSION n > 0 is
  refused by BF.RESERVE and BF.INSERT;
- error rates: floor 1e-15, rates above 0.5 served at 0.5; capacity has no 2^30
  cap, only the memory limit (MAX-KEY-MEMORY);
- SCANDUMP iterators are sketch's own, passed back verbatim.

Error texts whose "ERR " prefix matters are read from the wire (redis-py
strips a leading "ERR "), with the small RESP2 reader below.
"""
import contextlib
import math
import random
import re
import socket

import pytest
from redis.exceptions import ResponseError

WRONGTYPE = b"WRONGTYPE Operation against a key holding the wrong kind of value"
PIECE = 16 << 20  # the largest BF.SCANDUMP piece
LAYER_LINE = re.compile(rb"bytes:(\d+) bits:(\d+) hashes:(\d+) hashwidth:64 capacity:(\d+) "
                        rb"size:(\d+) ratio:([0-9.e+-]+)")
INFO_NAMES = [b"Capacity", b"Size", b"Number of filters", b"Number of items inserted",
              b"Expansion rate"]
BLOOM_COMMANDS = {"bf.reserve", "bf.add", "bf.madd", "bf.insert", "bf.exists", "bf.mexists",
                  "bf.info", "bf.card", "bf.debug", "bf.scandump", "bf.loadchunk"}
# the aging Bloom filter's commands, sketch's own, share @bloom with BF.*
AGING_BLOOM_COMMANDS = {"abf.reserve", "abf.add", "abf.madd", "abf.addat", "abf.exists",
                        "abf.mexists", "abf.existsat", "abf.info", "abf.export", "abf.import"}
# what random BF.LOADCHUNK pieces may be answered
GARBAGE_ERRORS = (b"ERR received bad data", b"ERR not found", b"ERR item exists",
                  b"ERR the filter is complete")


# --------------------------------------------------------------------------
# A RESP2 connection that keeps the exact text of errors
# --------------------------------------------------------------------------

class WireError(bytes):
    """An error reply, as the server wrote it (without the leading '-')."""


class WireStatus(bytes):
    """A simple-string reply."""


class Wire:
    def __init__(self, port, timeout=20.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = bytearray()

    def close(self):
        self.sock.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += [b"$%d\r\n" % len(a), a, b"\r\n"]
        self.sock.sendall(b"".join(out))
        return self._reply()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data = bytes(self.buf[:n])
        del self.buf[:n + 2]
        return data

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return WireStatus(rest)
        if kind == b"-":
            return WireError(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise AssertionError("unexpected RESP2 reply %r" % line)


@pytest.fixture
def wire(server, r):
    with contextlib.closing(Wire(server.port)) as w:
        yield w


@pytest.fixture(scope="module")
def big_server(module_servers):
    """A server whose keys may take 512 MB: filters of 64Mi items and more."""
    return module_servers.start(module_args=["MAX-KEY-MEMORY", "512mb"])


@pytest.fixture
def big(big_server):
    if not big_server.alive():
        pytest.fail("the 512mb server died:\n" + big_server.log()[-4000:])
    c = big_server.client(socket_timeout=30)
    c.flushall()
    try:
        yield c
    finally:
        c.close()


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def error_of(c, *args):
    """The text redis-py gives for the error reply of a command (the leading
    "ERR " removed); fails if the command succeeds."""
    with pytest.raises(ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def wire_error(w, *args):
    reply = w.call(*args)
    assert isinstance(reply, WireError), (args[:4], reply)
    return bytes(reply)


def assert_arity(c, *args):
    text = error_of(c, *args)
    assert "wrong number of arguments" in text.lower(), (args, text)


def info(c, key):
    reply = c.execute_command("BF.INFO", key)
    assert reply[0::2] == INFO_NAMES, reply
    return dict(zip([x.decode() for x in reply[0::2]], reply[1::2]))


def debug(c, key):
    """BF.DEBUG as (items, [layer dicts]), each line checked for its shape and
    the whole against BF.INFO and BF.CARD."""
    lines = c.execute_command("BF.DEBUG", key)
    m = re.fullmatch(rb"size:(\d+)", lines[0])
    assert m, lines[0]
    layers = []
    for line in lines[1:]:
        lm = LAYER_LINE.fullmatch(line)
        assert lm, line
        layers.append({"bytes": int(lm.group(1)), "bits": int(lm.group(2)),
                       "hashes": int(lm.group(3)), "capacity": int(lm.group(4)),
                       "size": int(lm.group(5)), "ratio": float(lm.group(6)),
                       "line": line})
    items = int(m.group(1))
    i = info(c, key)
    assert len(lines) == 1 + i["Number of filters"]
    assert items == i["Number of items inserted"] == c.execute_command("BF.CARD", key)
    assert sum(layer["size"] for layer in layers) == items
    assert sum(layer["capacity"] for layer in layers) == i["Capacity"]
    return items, layers


def scandump(c, key):
    pieces = []
    it = 0
    while True:
        reply = c.execute_command("BF.SCANDUMP", key, it)
        assert len(reply) == 2 and isinstance(reply[0], int) and isinstance(reply[1], bytes)
        it, data = reply
        if it == 0:
            assert data == b""
            return pieces
        assert 0 < len(data) <= PIECE
        pieces.append((it, data))
        assert len(pieces) < 100000, "BF.SCANDUMP never ends"


def loadchunks(c, key, pieces):
    for it, data in pieces:
        assert c.execute_command("BF.LOADCHUNK", key, it, data) == b"OK"


def batches(seq, size=10000):
    for i in range(0, len(seq), size):
        yield seq[i:i + size]


def madd(c, key, its):
    out = []
    for part in batches(its):
        out += c.execute_command("BF.MADD", key, *part)
    return out


def mexists(c, key, its):
    out = []
    for part in batches(its):
        out += c.execute_command("BF.MEXISTS", key, *part)
    return out


def server_version(c):
    return tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:3])


def min_bytes(capacity, rate):
    """The fewest bytes any filter for `capacity` items at false-positive rate
    `rate` can take: capacity * log2(1/rate) bits (information theory)."""
    return capacity * math.log2(1 / rate) / 8


# --------------------------------------------------------------------------
# test_overall.py, class testRedisBloom
# --------------------------------------------------------------------------

def test_custom_filter(raw):
    assert raw.execute_command("BF.RESERVE", "test", "0.05", "1000") == b"OK"
    assert raw.execute_command("BF.MADD", "test", "foo", "bar", "baz") == [1, 1, 1]
    assert raw.execute_command("BF.EXISTS", "test", "foo") == 1
    assert raw.execute_command("BF.EXISTS", "test", "nonexist") == 0
    assert_arity(raw, "BF.RESERVE", "test", "0.01")
    # RedisBloom's disabled part: after a reload the filter still knows foo
    assert raw.execute_command("DEBUG", "RELOAD") == b"OK"
    assert raw.execute_command("BF.ADD", "test", "foo") == 0
    assert raw.execute_command("BF.MEXISTS", "test", "foo", "bar", "baz") == [1, 1, 1]


def test_set(raw):
    assert raw.execute_command("BF.ADD", "test", "foo") == 1
    assert raw.execute_command("BF.EXISTS", "test", "foo") == 1
    assert raw.execute_command("BF.EXISTS", "test", "bar") == 0
    assert raw.execute_command("BF.MADD", "test", "foo", "bar") == [0, 1]
    assert raw.execute_command("BF.EXISTS", "test", "foo") == 1
    assert raw.execute_command("BF.EXISTS", "test", "bar") == 1
    assert raw.execute_command("BF.EXISTS", "test", "nonexist") == 0


def test_multi(raw):
    assert raw.execute_command("BF.MADD", "test", "foo", "bar", "baz") == [1, 1, 1]
    assert raw.execute_command("BF.MADD", "test", "foo", "new1", "bar") == [0, 1, 0]
    assert raw.execute_command("BF.MEXISTS", "test", "nonexist") == [0]
    assert raw.execute_command("BF.MEXISTS", "test", "nonexist", "foo") == [0, 1]


def test_validation(raw):
    for args in [(), ("foo",), ("foo", "0.001")]:
        assert_arity(raw, "BF.RESERVE", *args)
    assert error_of(raw, "BF.RESERVE", "foo", "0.001", "blah") == "bad capacity"
    for rate in ("0", "7.7"):
        for capacity in ("0", "100", "1000"):
            assert error_of(raw, "BF.RESERVE", "foo", rate, capacity) == \
                "error rate must be in the range (0.000000, 1.000000)"
    assert error_of(raw, "BF.RESERVE", "foo", "blah", "1000") == "bad error rate"
    assert raw.exists("foo") == 0

    assert raw.execute_command("BF.RESERVE", "test", "0.01", "1000") == b"OK"
    for args in ((), ("test",)):
        for cmd in ("BF.ADD", "BF.MADD", "BF.EXISTS", "BF.MEXISTS"):
            assert_arity(raw, cmd, *args)
    for cmd in ("BF.EXISTS", "BF.ADD"):
        assert_arity(raw, cmd, "test", 1, 2)
    assert raw.execute_command("BF.CARD", "test") == 0

    raw.set("foo", "bar")
    assert_arity(raw, "BF.RESERVE", "foo")
    assert raw.get("foo") == b"bar"


def test_oom(raw):
    assert error_of(raw, "BF.RESERVE", "test", 0.01, 4294967296 * 4294967296) == "bad capacity"
    assert raw.exists("test") == 0


def test_rdb_reload(raw):
    assert raw.execute_command("BF.ADD", "test", "foo") == 1
    assert raw.execute_command("DEBUG", "RELOAD") == b"OK"
    assert raw.execute_command("BF.EXISTS", "test", "foo") == 1
    assert raw.execute_command("BF.EXISTS", "test", "bar") == 0


def test_dump_and_load(raw, wire):
    quantity, rate = 1000, 0.001
    assert raw.execute_command("BF.RESERVE", "myBloom", rate, quantity * 1024 * 8) == b"OK"
    assert_arity(raw, "BF.SCANDUMP", "myBloom")
    assert wire_error(wire, "BF.SCANDUMP", "myBloom", "str") == b"Second argument must be numeric"
    assert wire_error(wire, "BF.SCANDUMP", "myCuckoo", 0) == b"ERR not found"
    assert_arity(raw, "BF.LOADCHUNK", "myBloom")
    assert wire_error(wire, "BF.LOADCHUNK", "myBloom", "str", "data") == \
        b"ERR Second argument must be numeric"

    # RedisBloom's disabled part: fill, dump, reload from the pieces
    items = [str(x) for x in range(quantity)]
    misses = ["nonexist_%d" % x for x in range(quantity)]
    assert all(x in (0, 1) for x in madd(raw, "myBloom", items))

    def verify():
        assert all(mexists(raw, "myBloom", items))
        assert sum(mexists(raw, "myBloom", misses)) / quantity <= rate

    verify()
    pieces = scandump(raw, "myBloom")
    before = raw.execute_command("BF.DEBUG", "myBloom")
    raw.delete("myBloom")
    loadchunks(raw, "myBloom", pieces)
    assert raw.execute_command("BF.DEBUG", "myBloom") == before
    verify()


def test_missing(raw):
    assert raw.execute_command("BF.EXISTS", "myBloom", "foo") == 0
    assert raw.execute_command("BF.MEXISTS", "myBloom", "foo", "bar", "baz") == [0, 0, 0]
    assert raw.exists("myBloom") == 0


def test_insert(raw, wire):
    """RedisBloom's test_insert with its exact DEBUG line turned into relations."""
    key = "missingFilter"
    assert wire_error(wire, "BF.INSERT", key, "NOCREATE", "ITEMS", "foo", "bar") == \
        b"ERR not found"
    assert wire_error(wire, "BF.INSERT", key, "DONTEXIST", "NOCREATE") == \
        b"Unknown argument received"
    assert_arity(raw, "BF.INSERT", key)
    assert_arity(raw, "BF.INSERT", key, "NOCREATE", "ITEMS")
    assert_arity(raw, "BF.INSERT", key, "NOCREATE", "CAPACITY")
    assert wire_error(wire, "BF.INSERT", key, "CAPACITY", 0.3) == b"Bad capacity"
    assert_arity(raw, "BF.INSERT", key, "ERROR")
    assert wire_error(wire, "BF.INSERT", key, "ERROR", "big") == b"Bad error rate"
    assert wire_error(wire, "BF.INSERT", key, "EXPANSION", "-1", "ITEMS", "foo") == \
        b"Bad expansion"
    assert wire_error(wire, "BF.INSERT", key, "EXPANSION", "big") == b"Bad expansion"
    assert raw.exists(key) == 0

    assert raw.execute_command("BF.INSERT", key, "ERROR", "0.001", "CAPACITY", "50000",
                               "EXPANSION", 2, "ITEMS", "foo") == [1]
    items, layers = debug(raw, key)
    assert items == 1 and len(layers) == 1
    first = layers[0]
    assert (first["capacity"], first["size"]) == (50000, 1)
    assert math.isclose(first["ratio"], 0.0005, rel_tol=1e-5)   # half of 0.001: it may scale
    assert first["bytes"] >= min_bytes(50000, 0.0005) and first["bits"] <= 8 * first["bytes"]
    assert info(raw, key)["Expansion rate"] == 2

    # the options of an existing filter are ignored
    assert raw.execute_command("BF.INSERT", key, "ERROR", "0.1", "ITEMS",
                               "foo", "bar", "baz") == [0, 1, 1]
    items, layers2 = debug(raw, key)
    assert items == 3 and len(layers2) == 1
    assert layers2[0]["line"] == first["line"].replace(b"size:1 ", b"size:3 ")


def test_mem_usage(raw):
    """RedisBloom's exact MEMORY USAGE figures become: the figure survives a
    reload, and adding items within capacity does not change it."""
    assert raw.execute_command("BF.RESERVE", "bf", "0.05", "1000") == b"OK"
    usage = raw.memory_usage("bf")
    assert usage >= info(raw, "bf")["Size"] >= min_bytes(1000, 0.025)
    assert raw.execute_command("DEBUG", "RELOAD") == b"OK"
    assert raw.memory_usage("bf") == usage
    assert raw.execute_command("BF.MADD", "bf", "foo", "bar", "baz") == [1, 1, 1]
    assert raw.memory_usage("bf") == usage
    assert_arity(raw, "BF.DEBUG", "bf", "noexist")
    assert error_of(raw, "BF.DEBUG", "cf") == "not found"


def test_expansion(raw):
    """RedisBloom counts 23 / 5 / 4 filters, numbers its hash decides; here
    the count follows from the items the filter took: a new filter is made
    only when the newest one is full, each `expansion` times the last."""
    for e in (1, 2, 4):
        assert raw.execute_command("BF.RESERVE", "exp%d" % e, "0.01", "4",
                                   "expansion", e) == b"OK"
    items = [str(i) for i in range(100)]
    for i in items:
        for e in (1, 2, 4):
            assert raw.execute_command("BF.ADD", "exp%d" % e, i) in (0, 1)
    for e in (1, 2, 4):
        key = "exp%d" % e
        assert all(mexists(raw, key, items))
        card, layers = debug(raw, key)
        assert 90 <= card <= 100
        assert [x["capacity"] for x in layers] == [4 * e ** i for i in range(len(layers))]
        assert all(x["size"] == x["capacity"] for x in layers[:-1])
        # the fewest filters that hold card items
        assert sum(x["capacity"] for x in layers[:-1]) < card <= sum(x["capacity"]
                                                                       for x in layers)
        assert info(raw, key)["Expansion rate"] == e
    assert info(raw, "exp1")["Number of filters"] > info(raw, "exp2")["Number of filters"] \
        > info(raw, "exp4")["Number of filters"]

    assert error_of(raw, "BF.RESERVE", "exp4", "0.01", "4", "expansion") == "no expansion"
    assert error_of(raw, "BF.RESERVE", "exp4", "0.01", "4", "expansion", "0") == "item exists"
    assert error_of(raw, "BF.RESERVE", "exp4", "0.01", "4", "expansion", "str") == \
        "bad expansion"
    # EXPANSION 0 itself is legal: a non-scaling filter
    assert raw.execute_command("BF.RESERVE", "exp0", "0.01", "4", "expansion", "0") == b"OK"
    assert info(raw, "exp0")["Expansion rate"] is None


@pytest.mark.parametrize("rate,capacity,adds", [(0.01, 10, 100), (0.001, 100, 4000)])
def test_debug(raw, rate, capacity, adds):
    """RedisBloom's exact BF.DEBUG lists become their shape and the scaling
    rule: capacities double, rates halve from rate/2, every filter but the
    newest is full, and the layer sizes add up to the items."""
    assert raw.execute_command("BF.RESERVE", "bf", rate, capacity) == b"OK"
    for i in range(adds):
        assert raw.execute_command("BF.ADD", "bf", str(i)) in (0, 1)
    card, layers = debug(raw, "bf")
    assert adds * 0.9 <= card <= adds
    assert len(layers) >= 2
    for i, layer in enumerate(layers):
        assert layer["capacity"] == capacity * 2 ** i
        assert math.isclose(layer["ratio"], rate / 2 ** (i + 1), rel_tol=1e-5), layer["line"]
        assert layer["bytes"] >= min_bytes(layer["capacity"], layer["ratio"])
        assert layer["bits"] <= 8 * layer["bytes"]
    assert all(x["size"] == x["capacity"] for x in layers[:-1])
    assert 0 < layers[-1]["size"] <= layers[-1]["capacity"]
    assert sum(x["capacity"] for x in layers[:-1]) < card


def test_info(raw):
    assert raw.execute_command("BF.RESERVE", "bf", "0.001", "100") == b"OK"
    reply = raw.execute_command("BF.INFO", "bf")
    assert reply[0::2] == INFO_NAMES
    assert [reply[1]] + reply[5::2] == [100, 1, 0, 2]
    assert isinstance(reply[3], int) and reply[3] >= min_bytes(100, 0.0005)
    assert error_of(raw, "BF.INFO", "cf") == "not found"
    assert_arity(raw, "BF.INFO")


@pytest.mark.parametrize("field,expected", [("capacity", 100), ("filters", 1), ("items", 0),
                                            ("expansion", 2), ("CAPACITY", 100),
                                            ("Items", 0)])
def test_info_single_field(raw, field, expected):
    """test_info_capacity, _filters, _items, _expansion: RESP2 gives an array
    of the value alone."""
    assert raw.execute_command("BF.RESERVE", "bf", "0.001", "100") == b"OK"
    assert raw.execute_command("BF.INFO", "bf", field) == [expected]


def test_info_size(raw):
    """RedisBloom's [296] becomes: the field alone is the full reply's Size."""
    assert raw.execute_command("BF.RESERVE", "bf", "0.001", "100") == b"OK"
    assert raw.execute_command("BF.INFO", "bf", "size") == [info(raw, "bf")["Size"]]


def test_info_errors(raw, wire):
    assert raw.execute_command("BF.RESERVE", "bf", "0.001", "100") == b"OK"
    assert_arity(raw, "BF.INFO", "bf", "capacity", "size")
    assert wire_error(wire, "BF.INFO", "bf", "wrong_value") == b"Invalid information value"


def test_card(raw, wire):
    assert raw.execute_command("BF.CARD", "not_exist") == 0
    assert raw.execute_command("BF.RESERVE", "bf", "0.001", "100") == b"OK"
    assert raw.execute_command("BF.CARD", "bf") == 0
    assert raw.execute_command("BF.ADD", "bf", "foo") == 1
    assert raw.execute_command("BF.CARD", "bf") == 1
    assert_arity(raw, "BF.CARD")
    raw.set("key:string", "foo")
    assert wire_error(wire, "BF.CARD", "key:string") == WRONGTYPE


def test_no_1_error_rate(raw):
    assert error_of(raw, "BF.RESERVE", "bf", "1", "1000") == \
        "error rate must be in the range (0.000000, 1.000000)"
    assert raw.exists("bf") == 0


def test_error_rate_floor(raw, wire):
    """sketch's floor, which RedisBloom does not have: 1e-15."""
    assert wire_error(wire, "BF.RESERVE", "bf", "1e-16", "100") == \
        b"ERR error rate must be at least 1e-15"
    assert wire_error(wire, "BF.INSERT", "bf", "ERROR", "1e-16", "ITEMS", "a") == \
        b"ERR error rate must be at least 1e-15"
    assert raw.exists("bf") == 0
    assert raw.execute_command("BF.RESERVE", "bf", "1e-15", "100") == b"OK"
    assert raw.execute_command("BF.ADD", "bf", "a") == 1


@pytest.mark.parametrize("rate", [0.1, 0.01, 0.001, 0.0001])
def test_error_rate(raw, rate):
    repeat = 1024
    key = "bf%s" % rate
    assert raw.execute_command("BF.RESERVE", key, rate, repeat) == b"OK"
    assert all(x in (0, 1) for x in madd(raw, key, list(range(repeat))))
    false_positives = sum(mexists(raw, key, list(range(repeat, repeat * 11))))
    assert false_positives / (repeat * 10) <= rate


def test_no_scaling(raw, wire):
    assert raw.execute_command("BF.RESERVE", "bf", "0.01", 3, "nonscaling") == b"OK"
    for i in range(3):
        assert raw.execute_command("BF.ADD", "bf", i) == 1
    assert wire_error(wire, "BF.ADD", "bf", "extra") == b"ERR non scaling filter is full"
    assert wire_error(wire, "BF.RESERVE", "bf_mix", "0.01", "1000", "nonscaling",
                      "expansion", "2") == b"Nonscaling filters cannot expand"
    assert raw.exists("bf_mix") == 0
    assert raw.execute_command("BF.RESERVE", "bfnonscale", "0.001", "1000",
                               "nonscaling") == b"OK"
    assert raw.execute_command("BF.RESERVE", "bfscale", "0.001", "1000") == b"OK"
    assert info(raw, "bfnonscale")["Size"] < info(raw, "bfscale")["Size"]


def test_nonscaling_err(raw):
    """RedisBloom's INFO with Size 104 becomes the INFO without Size."""
    assert raw.execute_command("BF.INSERT", "nonscaling_err", "CAPACITY", 3, "NONSCALING",
                               "ITEMS", "a", "b", "c") == [1, 1, 1]
    resp = raw.execute_command("BF.INSERT", "nonscaling_err", "ITEMS", "a", "b", "c", "d", "d")
    assert resp[:3] == [0, 0, 0]
    assert isinstance(resp[3], ResponseError) and str(resp[3]) == "non scaling filter is full"
    assert len(resp) == 4      # the second d is not tried
    i = info(raw, "nonscaling_err")
    assert isinstance(i.pop("Size"), int)
    assert i == {"Capacity": 3, "Number of filters": 1, "Number of items inserted": 3,
                 "Expansion rate": None}


def test_invalid_expansion(raw):
    assert "expansion must be in the range" in error_of(raw, "BF.RESERVE", "b", "0.1", "1",
                                                        "EXPANSION", "-1")


def test_issue178(raw, wire):
    """RedisBloom's 300,000,000 items at 1e-6 (a size past 2^32 bits) takes
    more than the shared server's 64mb: the refusal names a size that did
    not wrap around, at least what information theory requires."""
    capacity, rate = 300 * 1000 * 1000, 0.000001
    text = wire_error(wire, "BF.RESERVE", "bf", rate, capacity)
    m = re.fullmatch(rb"ERR the filter would take (\d+) bytes, more than the module's "
                     rb"MAX-KEY-MEMORY of (\d+)", text)
    assert m and int(m.group(2)) == 64 << 20, text
    assert int(m.group(1)) >= min_bytes(capacity, rate / 2) > 2 ** 32 / 8
    assert raw.exists("bf") == 0


def test_very_high_error_rate(raw):
    """Rates up to 1 are taken (sketch serves them at 0.5)."""
    for key, rate, capacity in (("bf1", 0.99, 3), ("bf2", 0.95, 8),
                                ("bf3", "0.9999999999999999", 100)):
        assert raw.execute_command("BF.RESERVE", key, rate, capacity, "NONSCALING") == b"OK"
        assert raw.execute_command("BF.ADD", key, 1) == 1
        assert raw.execute_command("BF.EXISTS", key, 1) == 1
    assert raw.ping()


# sketch's own decisions next to test_overall.py's checks

def test_exists_on_wrong_type_is_wrongtype(raw, wire):
    """RedisBloom answers 0; sketch answers WRONGTYPE, as Redis's commands do."""
    raw.set("s", "v")
    assert wire_error(wire, "BF.EXISTS", "s", "a") == WRONGTYPE
    assert wire_error(wire, "BF.MEXISTS", "s", "a", "b") == WRONGTYPE
    for args in (["BF.RESERVE", "s", "0.01", "10"], ["BF.ADD", "s", "a"],
                 ["BF.MADD", "s", "a"], ["BF.INSERT", "s", "ITEMS", "a"], ["BF.INFO", "s"],
                 ["BF.DEBUG", "s"], ["BF.SCANDUMP", "s", "0"],
                 ["BF.LOADCHUNK", "s", "7", "abc"], ["BF.LOADCHUNK", "s", "4", "abc"]):
        assert wire_error(wire, *args) == WRONGTYPE, args
    assert raw.get("s") == b"v"


def test_reserve_refuses_unknown_arguments(raw, wire):
    assert wire_error(wire, "BF.RESERVE", "k", "0.01", "100", "BOGUS") == b"ERR unknown argument"
    assert wire_error(wire, "BF.RESERVE", "k", "0.01", "100", "EXPANSION", "2", "x") == \
        b"ERR unknown argument"
    assert raw.exists("k") == 0


def test_insert_nonscaling_with_expansion(raw, wire):
    assert wire_error(wire, "BF.INSERT", "k", "NONSCALING", "EXPANSION", "2", "ITEMS", "a") == \
        b"Nonscaling filters cannot expand"
    assert wire_error(wire, "BF.INSERT", "k", "EXPANSION", "3", "NONSCALING", "ITEMS", "a") == \
        b"Nonscaling filters cannot expand"
    assert raw.exists("k") == 0
    assert raw.execute_command("BF.INSERT", "k", "NONSCALING", "EXPANSION", "0", "ITEMS",
                               "a") == [1]
    assert info(raw, "k")["Expansion rate"] is None


def test_insufficient_memory(raw, big):
    """RedisBloom skips it (its capacity stops at 2^30). sketch has no such
    cap: the memory limit decides."""
    over = (1 << 30) + 1
    assert "MAX-KEY-MEMORY" in error_of(raw, "BF.RESERVE", "bf", 0.01, over)
    assert "MAX-KEY-MEMORY" in error_of(raw, "BF.INSERT", "bf", "CAPACITY", over, "ERROR",
                                        0.01, "ITEMS", 1)
    for args in (("BF.RESERVE", "bf", 0.01, 10 ** 18),
                 ("BF.INSERT", "bf", "capacity", 10 ** 18, "error", 0.01, "ITEMS", 1)):
        assert error_of(raw, *args).startswith("the filter would take")
    assert raw.exists("bf") == 0
    # within a 512mb limit, 2^30 + 1 items at 0.5 fit
    assert big.execute_command("BF.RESERVE", "bf", 0.5, over, "NONSCALING") == b"OK"
    assert info(big, "bf")["Capacity"] == over
    assert big.execute_command("BF.ADD", "bf", "x") == 1
    big.delete("bf")


# --------------------------------------------------------------------------
# test_overall.py, class testRedisBloomNoCodec: SCANDUMP / LOADCHUNK
# --------------------------------------------------------------------------

def round_trip(c, w, key, items, *reserve):
    assert c.execute_command("BF.RESERVE", key, *reserve) == b"OK"
    assert all(x in (0, 1) for x in madd(c, key, items))
    assert all(mexists(c, key, items))
    assert_arity(c, "BF.SCANDUMP", key)
    assert wire_error(w, "BF.SCANDUMP", key, "str") == b"Second argument must be numeric"
    assert wire_error(w, "BF.SCANDUMP", "noexist", "0") == b"ERR not found"
    pieces = scandump(c, key)
    before = (c.execute_command("BF.DEBUG", key), c.execute_command("BF.INFO", key))
    c.delete(key)
    assert_arity(c, "BF.LOADCHUNK", key)
    assert_arity(c, "BF.LOADCHUNK", key, "str")
    assert wire_error(w, "BF.LOADCHUNK", key, "str", "x") == b"ERR Second argument must be numeric"
    loadchunks(c, key, pieces)
    assert (c.execute_command("BF.DEBUG", key), c.execute_command("BF.INFO", key)) == before
    assert all(mexists(c, key, items))
    return pieces


def test_scandump(raw, wire):
    items = [str(x) for x in range(500)]
    round_trip(raw, wire, "bf", items, 0.01, 500 // 8)
    assert info(raw, "bf")["Number of filters"] >= 2


def test_scandump_with_expansion(raw, wire):
    items = [str(x) for x in range(500)]
    round_trip(raw, wire, "bf", items, 0.01, 500 // 8, "expansion", "2")
    assert info(raw, "bf")["Number of filters"] >= 2


def test_scandump_huge(big, big_server):
    w = Wire(big_server.port)
    try:
        assert big.execute_command("BF.RESERVE", "bf", 0.01, 1024 * 1024 * 64) == b"OK"
        assert [big.execute_command("BF.ADD", "bf", "foo") for _ in range(6)] == [1] + [0] * 5
        assert all(big.execute_command("BF.EXISTS", "bf", "foo") for _ in range(6))
        pieces = scandump(big, "bf")
        assert len(pieces) >= 4          # the header, then several 16 MiB pieces
        assert max(len(d) for _, d in pieces) == PIECE
        before = big.execute_command("BF.INFO", "bf")
        big.delete("bf")
        assert_arity(big, "BF.LOADCHUNK", "bf")
        assert wire_error(w, "BF.LOADCHUNK", "bf", "str", "x") == \
            b"ERR Second argument must be numeric"
        loadchunks(big, "bf", pieces)
        assert big.execute_command("BF.INFO", "bf") == before
        assert big.execute_command("BF.EXISTS", "bf", "foo") == 1
        assert big.execute_command("BF.EXISTS", "bf", "bar") == 0
    finally:
        w.close()


def test_scandump_with_content(big):
    assert big.execute_command("BF.RESERVE", "bf", 0.01, 1024 * 1024 * 64) == b"OK"
    items = ["foo%d" % x for x in range(1000)]
    for x in items:
        assert big.execute_command("BF.ADD", "bf", x) == 1
    assert all(mexists(big, "bf", items))
    pieces = scandump(big, "bf")
    assert len(pieces) >= 4
    before = big.execute_command("BF.INFO", "bf")
    big.delete("bf")
    loadchunks(big, "bf2", pieces)
    assert big.exists("bf") == 0
    assert all(mexists(big, "bf2", items))
    assert big.execute_command("BF.INFO", "bf2") == before


def test_scandump_invalid(raw, wire):
    assert raw.execute_command("BF.RESERVE", "bf", 0.1, 4) == b"OK"
    before = raw.execute_command("BF.DEBUG", "bf")
    for it, data in (("-9223372036854775808", "1"), ("922337203685477588", "1"),
                     ("4", "kdoasdksaodsadsadsadsadsadadsadadsdad"), ("4", "abcd")):
        text = wire_error(wire, "BF.LOADCHUNK", "bf", it, data)
        assert text.startswith(GARBAGE_ERRORS), (it, text)
    assert raw.execute_command("BF.DEBUG", "bf") == before
    assert raw.execute_command("BF.ADD", "bf", "x") == 1
    assert raw.execute_command("BF.ADD", "bf", "y") == 1
    assert raw.execute_command("BF.CARD", "bf") == 2


def check_scandump_at(c, key, iterators):
    pipe = c.pipeline(transaction=False)
    for it in iterators:
        pipe.execute_command("BF.SCANDUMP", key, it)
    for it, reply in zip(iterators, pipe.execute(raise_on_error=False)):
        assert not isinstance(reply, Exception), (it, reply)
        assert isinstance(reply, list) and len(reply) == 2, (it, reply)
        nxt, data = reply
        assert isinstance(nxt, int) and isinstance(data, bytes)
        assert (nxt == 0) == (data == b""), (it, nxt, len(data))
        assert len(data) <= PIECE


def test_scandump_scan_small(raw):
    assert raw.execute_command("BF.RESERVE", "bf", 0.1, 50) == b"OK"
    for i in range(1500):
        assert raw.execute_command("BF.ADD", "bf", "x%d" % i) in (0, 1)
    size = info(raw, "bf")["Size"]
    check_scandump_at(raw, "bf", list(range(0, size + 1024)))
    dump_end = sum(len(d) for _, d in scandump(raw, "bf"))
    assert raw.execute_command("BF.SCANDUMP", "bf", dump_end + 2) == [0, b""]
    assert raw.execute_command("BF.SCANDUMP", "bf", -1) == [0, b""]


def test_scandump_scan_big(big):
    assert big.execute_command("BF.RESERVE", "bf", 0.001, 1024, "EXPANSION", 30000) == b"OK"
    for i in range(100):
        reply = big.execute_command("BF.INSERT", "bf", "ITEMS",
                                    *["x%d%d" % (i, j) for j in range(10000)])
        assert all(x in (0, 1) for x in reply), [x for x in reply if x not in (0, 1)][:1]
    assert info(big, "bf")["Number of filters"] == 2
    size = info(big, "bf")["Size"]
    rng = random.Random(178)
    check_scandump_at(big, "bf", [rng.randint(0, size * 2) for _ in range(30)])


def load_garbage(c, w, key, rng, count, max_len, max_iterator, min_len=0):
    """Random pieces at random iterators: only the allowed errors, never a
    crash. Returns the replies."""
    replies = []
    for _ in range(count):
        data = rng.randbytes(rng.randint(min_len, max_len))
        reply = w.call("BF.LOADCHUNK", key, rng.randint(0, max_iterator), data)
        if isinstance(reply, WireError):
            assert bytes(reply).startswith(GARBAGE_ERRORS), bytes(reply)[:200]
        else:
            assert reply == b"OK", reply
        replies.append(reply)
    assert c.ping()
    return replies


def test_scandump_load_small(raw, wire):
    assert raw.execute_command("BF.RESERVE", "bf", 0.01, 10) == b"OK"
    items = []
    for i in range(100):
        part = ["x%d%d" % (i, j) for j in range(1000)]
        reply = raw.execute_command("BF.INSERT", "bf", "ITEMS", *part)
        assert all(x in (0, 1) for x in reply)
        items += part
    size = info(raw, "bf")["Size"]
    before = raw.execute_command("BF.DEBUG", "bf")
    replies = load_garbage(raw, wire, "bf", random.Random(1), 100, 4096, size * 2)
    # a filter that is not being restored takes no piece
    assert all(isinstance(x, WireError) for x in replies)
    assert raw.execute_command("BF.DEBUG", "bf") == before
    assert all(mexists(raw, "bf", items))


def test_scandump_load_big(big, big_server):
    """RedisBloom sends 100 pieces of up to 36 MiB; 8 keep the file fast."""
    assert big.execute_command("BF.RESERVE", "bf", 0.01, 1024, "EXPANSION", 30000) == b"OK"
    items = []
    for i in range(100):
        part = ["x%d%d" % (i, j) for j in range(1000)]
        assert all(x in (0, 1) for x in big.execute_command("BF.INSERT", "bf", "ITEMS", *part))
        items += part
    size = info(big, "bf")["Size"]
    before = big.execute_command("BF.DEBUG", "bf")
    w = Wire(big_server.port, timeout=60)
    try:
        replies = load_garbage(big, w, "bf", random.Random(2), 8, 36 * 1024 * 1024, size,
                               min_len=1024)
    finally:
        w.close()
    assert all(isinstance(x, WireError) for x in replies)
    assert big.execute_command("BF.DEBUG", "bf") == before
    assert all(mexists(big, "bf", items))


def test_loadchunk_garbage_during_restore(raw, wire):
    """Random pieces sent to a key being restored (its header loaded), and to
    a missing key: the same allowed errors, and the source filter intact."""
    assert raw.execute_command("BF.RESERVE", "bf", 0.01, 100) == b"OK"
    items = ["i%d" % i for i in range(2000)]
    madd(raw, "bf", items)
    pieces = scandump(raw, "bf")
    dump_end = max(it for it, _ in pieces)
    assert raw.execute_command("BF.LOADCHUNK", "copy", *pieces[0]) == b"OK"
    rng = random.Random(3)
    load_garbage(raw, wire, "copy", rng, 200, 600, dump_end + 100)
    load_garbage(raw, wire, "missing", rng, 100, 600, dump_end + 100)
    assert all(mexists(raw, "bf", items))


def test_load_bloom_with_large_number_of_filters(server, r):
    """Thousands of one-item filters: RedisBloom's halved rate runs out
    there; in sketch every add succeeds, and the filter survives a reload.
    Each add asks every layer before it adds one, 12.5 million layer checks
    in all: seconds under AddressSanitizer on a busy machine, so this client
    waits minutes rather than the suite's 10 s (speed is bench/'s to say)."""
    raw = server.client(socket_timeout=300)
    assert raw.execute_command("BF.RESERVE", "poc", 0.0001, 1, "EXPANSION", 1) == b"OK"
    items = [b"items"] + [str(i).encode() for i in range(10000, 15000)]
    reply = raw.execute_command("BF.MADD", "poc", *items)
    assert len(reply) == 5001
    errors = [x for x in reply if not isinstance(x, int)]
    assert errors == [] and all(x in (0, 1) for x in reply)
    card = raw.execute_command("BF.CARD", "poc")
    assert card == sum(reply)
    _, layers = debug(raw, "poc")
    assert len(layers) == card and all(x["capacity"] == 1 for x in layers)
    before = (raw.execute_command("BF.INFO", "poc"), raw.execute_command("BF.DEBUG", "poc"))
    assert raw.execute_command("DEBUG", "RELOAD") == b"OK"
    assert all(mexists(raw, "poc", items))
    assert raw.execute_command("BF.CARD", "poc") == card
    assert (raw.execute_command("BF.INFO", "poc"), raw.execute_command("BF.DEBUG", "poc")) == \
        before


# --------------------------------------------------------------------------
# test_configs.py (BF parts)
# --------------------------------------------------------------------------

BF_CONFIGS = ("sketch.bf-error-rate", "sketch.bf-initial-size", "sketch.bf-expansion-factor")


def bf_configs(c):
    return {name: c.config_get(name)[name] for name in BF_CONFIGS}


def test_default_configs(servers):
    c = servers.start(module_args=()).client()
    assert bf_configs(c) == {"sketch.bf-error-rate": "0.01", "sketch.bf-initial-size": "100",
                             "sketch.bf-expansion-factor": "2"}
    assert c.config_get("sketch.max-key-memory") == {"sketch.max-key-memory": str(1 << 30)}
    # the names carry the module's prefix (Redis 7.0 has no unprefixed configs)
    for name in ("bf-error-rate", "bf-initial-size", "bf-expansion-factor"):
        assert c.config_get(name) == {}
    # and they are what BF.ADD creates
    assert c.execute_command("BF.ADD", "k", "a") == 1
    _, layers = debug(c, "k")
    assert info(c, "k")["Capacity"] == 100 and info(c, "k")["Expansion rate"] == 2
    assert math.isclose(layers[0]["ratio"], 0.005, rel_tol=1e-5)


def test_config_set(servers):
    c = servers.start().client()
    for name, value in (("sketch.bf-error-rate", "0.02"), ("sketch.bf-initial-size", "200"),
                        ("sketch.bf-expansion-factor", "3"),
                        ("sketch.max-key-memory", str(128 << 20))):
        assert c.config_set(name, value) is True
        assert c.config_get(name) == {name: value}
    assert c.config_set("sketch.bf-expansion-factor", "0") is True
    assert c.config_get("sketch.bf-expansion-factor") == {"sketch.bf-expansion-factor": "0"}
    assert c.execute_command("BF.ADD", "k", "a") == 1
    assert info(c, "k")["Expansion rate"] is None and info(c, "k")["Capacity"] == 200


def test_config_module_load(servers):
    reference = servers.start(module_args=()).client()
    assert reference.config_set("sketch.bf-error-rate", "0.02")
    assert reference.config_set("sketch.bf-initial-size", "200")
    assert reference.config_set("sketch.bf-expansion-factor", "3")
    expected = bf_configs(reference)
    for args in (["bf-error-rate", "0.02", "bf-initial-size", "200", "bf-expansion-factor", "3",
                  "cf-max-expansions", "3"],
                 ["ERROR_RATE", "0.02", "INITIAL_SIZE", "200", "EXPANSION", "3",
                  "CF_MAX_EXPANSIONS", "3"],
                 ["error_rate", "0.02", "Initial_Size", "200", "BF-EXPANSION-FACTOR", "3",
                  "cf-bucket-size", "4", "CF_INITIAL_SIZE", "2048"]):
        c = servers.start(module_args=args).client()
        assert bf_configs(c) == expected, args
        assert c.execute_command("BF.ADD", "k", "a") == 1
        assert info(c, "k")["Capacity"] == 200 and info(c, "k")["Expansion rate"] == 3
        # the same filter as one reserved with those values
        reference.delete("r")
        assert reference.execute_command("BF.RESERVE", "r", "0.02", "200", "EXPANSION",
                                         "3") == b"OK"
        assert reference.execute_command("BF.ADD", "r", "a") == 1
        assert c.execute_command("BF.DEBUG", "k") == reference.execute_command("BF.DEBUG", "r")
    # EXPANSION 0 at load: filters that BF.ADD creates are non-scaling
    c = servers.start(module_args=["EXPANSION", "0"]).client()
    assert c.config_get("sketch.bf-expansion-factor") == {"sketch.bf-expansion-factor": "0"}
    assert c.execute_command("BF.ADD", "k", "a") == 1
    assert info(c, "k")["Expansion rate"] is None
    # a plain server has the values that the reference is set back to
    plain = servers.start(module_args=()).client()
    assert reference.config_set("sketch.bf-error-rate", "0.01")
    assert reference.config_set("sketch.bf-initial-size", "100")
    assert reference.config_set("sketch.bf-expansion-factor", "2")
    assert bf_configs(plain) == bf_configs(reference)


def test_config_set_invalid(servers):
    c = servers.start().client()
    before = bf_configs(c)
    for value in (0.0, 1.0, "1e-16", "abc"):
        text = error_of(c, "CONFIG", "SET", "sketch.bf-error-rate", value)
        assert "must be a rate in [1e-15, 1)" in text, text
    assert c.config_set("sketch.bf-error-rate", 0.01) is True
    for value in (0, 2 ** 32):
        error_of(c, "CONFIG", "SET", "sketch.bf-initial-size", value)
    assert c.config_set("sketch.bf-initial-size", 100) is True
    for value in (-1, 32769):
        error_of(c, "CONFIG", "SET", "sketch.bf-expansion-factor", value)
    assert c.config_set("sketch.bf-expansion-factor", 2) is True
    assert bf_configs(c) == before
    # the largest legal values are taken
    assert c.config_set("sketch.bf-initial-size", 1 << 30) is True
    assert c.config_set("sketch.bf-expansion-factor", 32768) is True
    assert c.config_set("sketch.bf-error-rate", "1e-15") is True


def test_config_bf_debug_stats(servers):
    c = servers.start().client()

    def added(key, *reserve):
        if reserve:
            assert c.execute_command("BF.RESERVE", key, *reserve) == b"OK"
        assert c.execute_command("BF.ADD", key, "foo") == 1
        return c.execute_command("BF.DEBUG", key)

    default1 = added("default_bf1")
    custom1 = added("custom_bf1", 0.02, 200, "expansion", 3)
    assert c.execute_command("CONFIG", "SET", "sketch.bf-error-rate", 0.02,
                             "sketch.bf-initial-size", 200,
                             "sketch.bf-expansion-factor", 3) == b"OK"
    default2 = added("default_bf2")
    custom2 = added("custom_bf2", 0.01, 100, "expansion", 2)
    assert default1 == custom2
    assert default2 == custom1
    assert default1 != default2
    assert custom1 != custom2
    assert info(c, "default_bf2")["Expansion rate"] == 3


# --------------------------------------------------------------------------
# test_acl.py (BF parts)
# --------------------------------------------------------------------------

def denied(c, *args):
    with pytest.raises(ResponseError) as e:
        c.execute_command(*args)
    text = str(e.value).lower()
    assert "no permissions to run the '%s' command" % args[0].lower() in text, (args, text)


def command_categories(server, name):
    """The ACL categories of a command, from COMMAND INFO (its 7th field)."""
    from resp import RespClient, plain
    with RespClient(server.port) as c:
        info = c.call("COMMAND", "INFO", name).value[0].value
        return [x if isinstance(x, str) else x.decode() for x in plain(info[6])]


def test_acl_category(servers):
    s = servers.start()
    c = s.client()
    cats = {x.decode() for x in c.execute_command("ACL", "CAT")}
    read = {x.decode() for x in c.execute_command("ACL", "CAT", "read")}
    write = {x.decode() for x in c.execute_command("ACL", "CAT", "write")}
    if server_version(c) >= (7, 2, 0):
        assert "bloom" in cats
        # Redis 7.2+ lists module commands in ACL CAT; Valkey 8.0 leaves
        # every module command out of that listing (acl.c skips CMD_MODULE),
        # while COMMAND INFO shows the categories on both
        listed = {x.decode() for x in c.execute_command("ACL", "CAT", "bloom")}
        assert listed in (BLOOM_COMMANDS | AGING_BLOOM_COMMANDS, set())
        if listed:
            assert "bf.exists" in read and "bf.add" in write
        for name in BLOOM_COMMANDS:
            categories = set(command_categories(s, name))
            assert "@bloom" in categories, (name, categories)
            assert len({"@read", "@write"} & categories) == 1, (name, categories)
            assert len({"@fast", "@slow"} & categories) == 1, (name, categories)
    else:
        # Redis 7.0: modules cannot add categories or put commands in any
        assert "bloom" not in cats
        with pytest.raises(ResponseError):
            c.execute_command("ACL", "CAT", "bloom")
        everything = set()
        for cat in cats:
            everything |= {x.decode() for x in c.execute_command("ACL", "CAT", cat)}
        assert not ((BLOOM_COMMANDS | AGING_BLOOM_COMMANDS) & everything)


def test_acl_non_default_user(servers):
    s = servers.start()
    admin = s.client()
    assert admin.execute_command("ACL", "SETUSER", "testusr", "on", ">123", "~*", "&*") == b"OK"
    user = s.client(username="testusr", password="123")
    denied(user, "BF.EXISTS", "a", "a")
    modern = server_version(admin) >= (7, 2, 0)

    assert admin.execute_command("ACL", "SETUSER", "testusr", "+@read") == b"OK"
    reads = [("BF.EXISTS", "a", "a"), ("BF.MEXISTS", "a", "a"), ("BF.CARD", "a")]
    if modern:
        for args in reads:
            assert user.execute_command(*args) in (0, [0])
        for args in (("BF.INFO", "a"), ("BF.DEBUG", "a"), ("BF.SCANDUMP", "a", 0)):
            assert error_of(user, *args) == "not found"
    else:
        for args in reads + [("BF.INFO", "a"), ("BF.DEBUG", "a"), ("BF.SCANDUMP", "a", 0)]:
            denied(user, *args)
    denied(user, "BF.RESERVE", "bf", "0.01", "1000")

    assert admin.execute_command("ACL", "SETUSER", "testusr", "+@write") == b"OK"
    if modern:
        assert user.execute_command("BF.RESERVE", "bf", "0.01", "1000") == b"OK"
        assert user.execute_command("BF.ADD", "bf", "x") == 1
        assert user.execute_command("BF.MADD", "bf", "y") == [1]
        assert user.execute_command("BF.INSERT", "bf", "ITEMS", "z") == [1]
        # allowed, and refused as RedisBloom refuses a header on a key that holds a filter
        assert error_of(user, "BF.LOADCHUNK", "bf", 1, "xx") == "item exists"
    else:
        for args in (("BF.RESERVE", "bf", "0.01", "1000"), ("BF.ADD", "bf", "x"),
                     ("BF.MADD", "bf", "y"), ("BF.INSERT", "bf", "ITEMS", "z"),
                     ("BF.LOADCHUNK", "bf", 1, "xx")):
            denied(user, *args)

    # granted by name, which works on every version
    assert admin.execute_command("ACL", "SETUSER", "byname", "on", ">123", "~*", "&*",
                                 "+bf.exists", "+bf.add") == b"OK"
    named = s.client(username="byname", password="123")
    assert named.execute_command("BF.ADD", "test", "foo") == 1
    assert named.execute_command("BF.EXISTS", "test", "foo") == 1
    assert named.execute_command("BF.EXISTS", "test", "bar") == 0
    denied(named, "BF.CARD", "test")
    denied(named, "BF.RESERVE", "other", "0.01", "10")

    assert admin.execute_command("ACL", "SETUSER", "testusr2", "on", ">123", "~*", "&*") == b"OK"
    if modern:
        assert admin.execute_command("ACL", "SETUSER", "testusr2", "+@bloom") == b"OK"
        bloom = s.client(username="testusr2", password="123")
        assert bloom.execute_command("BF.ADD", "test2", "foo") == 1
        assert bloom.execute_command("BF.EXISTS", "test2", "foo") == 1
        assert bloom.execute_command("BF.EXISTS", "test2", "bar") == 0
        denied(bloom, "SET", "x", "y")
    else:
        with pytest.raises(ResponseError):
            admin.execute_command("ACL", "SETUSER", "testusr2", "+@bloom")
        plain = s.client(username="testusr2", password="123")
        denied(plain, "BF.ADD", "test2", "foo")
