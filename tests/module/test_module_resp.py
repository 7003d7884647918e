# SPDX-License-Identifier: BSD-3-Clause
"""The wire types of every reply of sketch.so, in RESP2 and in RESP3.

A client that said HELLO 3 gets booleans, maps, nulls and doubles where
RedisBloom sends them (and where a map is the natural reading of an HLL
reply); a RESP2 client gets exactly the integers, flat arrays and bulk
strings it always got. tests/common/resp.py keeps the type the server sent,
which client libraries hide; redis-cli -3 is checked as a real client too.
"""
import subprocess

import pytest

from conftest import REDIS_CLI
from resp import Reply, RespClient, plain


def conn(server, protocol):
    c = RespClient(server.port)
    c.hello(protocol)
    c.call("FLUSHALL")
    return c


def kinds(reply):
    """The wire types of a reply, nested like it."""
    if reply.kind in ("array", "set"):
        return (reply.kind, [kinds(e) for e in reply.value])
    if reply.kind == "map":
        return ("map", [(kinds(k), kinds(v)) for k, v in reply.value])
    return reply.kind


BOOL = {2: "integer", 3: "bool"}
NIL = {2: "null", 3: "null"}


@pytest.mark.parametrize("protocol", [2, 3])
def test_bf_replies(server, protocol):
    b = BOOL[protocol]
    with conn(server, protocol) as c:
        assert c.call("BF.RESERVE", "k", "0.01", "100") == Reply("simple", "OK")
        add = c.call("BF.ADD", "k", "a")
        assert kinds(add) == b and add.value in (1, True)
        again = c.call("BF.ADD", "k", "a")
        assert kinds(again) == b and again.value in (0, False) and again.value is not None
        assert kinds(c.call("BF.EXISTS", "k", "a")) == b
        assert plain(c.call("BF.EXISTS", "k", "a")) == 1
        assert plain(c.call("BF.EXISTS", "missing", "a")) == 0
        madd = c.call("BF.MADD", "k", "a", "b", "c")
        assert kinds(madd) == ("array", [b, b, b])
        assert plain(madd) == [0, 1, 1]
        mexists = c.call("BF.MEXISTS", "k", "a", "zz")
        assert kinds(mexists) == ("array", [b, b]) and plain(mexists)[0] == 1
        insert = c.call("BF.INSERT", "k", "ITEMS", "d", "a")
        assert kinds(insert) == ("array", [b, b]) and plain(insert) == [1, 0]
        card = c.call("BF.CARD", "k")
        assert card == Reply("integer", 4)

        info = c.call("BF.INFO", "k")
        names = ["Capacity", "Size", "Number of filters", "Number of items inserted",
                 "Expansion rate"]
        if protocol == 3:
            assert info.kind == "map"
            assert [k.value for k, _ in info.value] == names
            assert all(k.kind == "simple" and v.kind == "integer" for k, v in info.value)
            fields = {k.value: v.value for k, v in info.value}
        else:
            assert info.kind == "array" and len(info.value) == 10
            assert [e.value for e in info.value[0::2]] == names
            assert all(e.kind == "integer" for e in info.value[1::2])
            fields = dict(zip([e.value for e in info.value[0::2]],
                              [e.value for e in info.value[1::2]]))
        assert fields["Capacity"] == 100 and fields["Number of items inserted"] == 4
        assert fields["Expansion rate"] == 2 and fields["Number of filters"] == 1
        one = c.call("BF.INFO", "k", "capacity")
        if protocol == 3:
            assert kinds(one) == ("map", [("simple", "integer")])
            assert plain(one) == {"Capacity": 100}
        else:
            assert one == Reply("array", [Reply("integer", 100)])

        assert c.call("BF.RESERVE", "n", "0.01", "2", "NONSCALING").value == "OK"
        expansion = c.call("BF.INFO", "n", "EXPANSION")
        if protocol == 3:
            assert plain(expansion) == {"Expansion rate": None}
            assert expansion.value[0][1].kind == "null"
        else:
            assert expansion == Reply("array", [Reply("null", None)])
        # the array ends with the error of the first item refused
        trimmed = c.call("BF.MADD", "n", "x", "y", "z", "w")
        assert kinds(trimmed) == ("array", [b, b, "error"])
        assert trimmed.value[2].value == "ERR non scaling filter is full"
        trimmed = c.call("BF.INSERT", "n", "ITEMS", "x", "q", "r")
        assert kinds(trimmed) == ("array", [b, "error"])
        assert c.call("BF.CARD", "n").value == 2

        debug = c.call("BF.DEBUG", "k")
        assert debug.kind == "array" and all(e.kind == "bulk" for e in debug.value)
        assert debug.value[0].value == b"size:4"
        assert len(debug.value) == 2

        dump = c.call("BF.SCANDUMP", "k", "0")
        assert kinds(dump) == ("array", ["integer", "bulk"])
        it, piece = dump.value[0].value, dump.value[1].value
        while it != 0:
            assert c.call("BF.LOADCHUNK", "copy", it, piece) == Reply("simple", "OK")
            it, piece = plain(c.call("BF.SCANDUMP", "k", it))
        assert plain(c.call("BF.EXISTS", "copy", "a")) == 1
        assert c.call("BF.SCANDUMP", "missing", "0") == Reply("error", "ERR not found")
        assert c.call("BF.INFO", "missing") == Reply("error", "ERR not found")


@pytest.mark.parametrize("protocol", [2, 3])
def test_hll_replies(server, protocol):
    with conn(server, protocol) as c:
        assert c.call("HLL.RESERVE", "h", "14") == Reply("simple", "OK")
        assert c.call("HLL.ADD", "h", "a", "b") == Reply("integer", 1)
        assert c.call("HLL.ADD", "h", "a") == Reply("integer", 0)
        assert c.call("HLL.COUNT", "h") == Reply("integer", 2)
        estimate = c.call("HLL.ESTIMATE", "h")
        error = "double" if protocol == 3 else "bulk"
        assert kinds(estimate) == ("array", ["integer", error] + ["integer"] * 6)
        assert 0 < float(estimate.value[1].value) < 1.04 / 128 * 1.01
        info = c.call("HLL.INFO", "h")
        names = ["Precision", "Registers", "Encoding", "Count", "Standard error", "Memory"]
        if protocol == 3:
            assert info.kind == "map" and [k.value for k, _ in info.value] == names
            assert [v.kind for _, v in info.value] == ["integer", "integer", "simple",
                                                       "integer", "double", "integer"]
        else:
            assert info.kind == "array" and [e.value for e in info.value[0::2]] == names
            assert [e.kind for e in info.value[1::2]] == ["integer", "integer", "simple",
                                                          "integer", "bulk", "integer"]
        exported = c.call("HLL.EXPORT", "h")
        assert exported.kind == "bulk"
        assert c.call("HLL.IMPORT", "h2", exported.value) == Reply("simple", "OK")
        assert c.call("HLL.MERGE", "h3", "h", "h2") == Reply("simple", "OK")
        assert c.call("HLL.COUNT", "h3") == Reply("integer", 2)
        assert c.call("HLL.EXPORT", "missing") == Reply("null", None)


@pytest.mark.parametrize("protocol", [2, 3])
def test_hll_compare_replies(server, protocol):
    """HLL.COMPARE: a map of 25 (simple-string names) in RESP3, a flat array
    of 50 in RESP2; the counts and their bounds integers, the errors and
    the fractions doubles (bulk strings in RESP2)."""
    counts = ["union", "intersection", "a_only", "b_only"]
    fractions = ["jaccard", "a_in_b"]
    suffixes = ["", "_error", "_lower", "_upper"]
    names = ["precision"] + [part + s for part in counts + fractions for s in suffixes]
    double = "double" if protocol == 3 else "bulk"
    types = ["integer"] + ["integer", double, "integer", "integer"] * len(counts) + \
        [double] * (len(suffixes) * len(fractions))
    with conn(server, protocol) as c:
        c.call("HLL.ADD", "a", *("x%d" % i for i in range(300)))
        c.call("PFADD", "b", *("x%d" % i for i in range(150, 450)))
        for key1, key2 in (("a", "b"), ("b", "a"), ("a", "missing"), ("missing", "other")):
            reply = c.call("HLL.COMPARE", key1, key2)
            if protocol == 3:
                assert reply.kind == "map" and len(reply.value) == 25, reply
                pairs = reply.value
            else:
                assert reply.kind == "array" and len(reply.value) == 50, reply
                pairs = list(zip(reply.value[0::2], reply.value[1::2]))
            assert [k.value for k, _ in pairs] == names
            assert all(k.kind == "simple" for k, _ in pairs)
            assert [v.kind for _, v in pairs] == types, (key1, key2, reply)
            fields = {k.value: v.value for k, v in pairs}
            assert fields["precision"] == 14
            assert 0 <= float(fields["jaccard"]) <= 1
        assert c.call("HLL.COMPARE", "a") == \
            Reply("error", "ERR wrong number of arguments for 'HLL.COMPARE' command")


def cli3(server, *args):
    out = subprocess.run([REDIS_CLI, "-3", "--no-raw", "-p", str(server.port)] + list(args),
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_redis_cli_resp3(server, r):
    """redis-cli -3 prints what a RESP3 client receives: (true), maps with =>,
    (nil) for a non-scaling filter's expansion, (double)."""
    assert cli3(server, "BF.ADD", "cli", "a") == "(true)\n"
    assert cli3(server, "BF.EXISTS", "cli", "b") == "(false)\n"
    assert cli3(server, "BF.MADD", "cli", "a", "b") == "1) (false)\n2) (true)\n"
    info = cli3(server, "BF.INFO", "cli").splitlines()
    assert info[0] == "1# Capacity => (integer) 100"
    assert info[3] == "4# Number of items inserted => (integer) 2"
    r.execute_command("BF.RESERVE", "fixed", "0.01", "10", "NONSCALING")
    assert cli3(server, "BF.INFO", "fixed", "EXPANSION") == "1# Expansion rate => (nil)\n"
    r.execute_command("HLL.ADD", "h", "x")
    assert cli3(server, "HLL.INFO", "h").splitlines()[4].startswith("5# Standard error => (double)")
    compare = cli3(server, "HLL.COMPARE", "h", "h").splitlines()
    # 25 entries: redis-cli numbers them two columns wide
    assert compare[0] == " 1# precision => (integer) 14"
    assert compare[17] == "18# jaccard => (double) 1"
    # and the same in RESP2, as redis-cli always printed it
    out = subprocess.run([REDIS_CLI, "--no-raw", "-p", str(server.port), "BF.ADD", "cli", "c"],
                         capture_output=True, text=True, timeout=20)
    assert out.stdout == "(integer) 1\n"
