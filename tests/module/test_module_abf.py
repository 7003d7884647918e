# SPDX-License-Identifier: BSD-3-Clause
"""ABF.*: aging Bloom filters in keys, against what the library promises
(include/sketch/aging_bloom.h): no item added within the window is ever
missed; with a count window of capacity C and g generations an item stays
through at least (g - 1) * share later adds (share = ceil(C / (g - 1)) >= C /
(g - 1)) and is gone after g * share; with a time window T it is held at
every query time below (t // span + g) * span (span = ceil(T / (g - 1)),
ABF.INFO's Span), which is more than T after t. Replies in RESP2 and RESP3,
errors, WRONGTYPE, persistence (DEBUG RELOAD, RDB, AOF and its rewrite),
DUMP/RESTORE, replication with the primary's times, failover, MEMORY USAGE,
the key limit, ACL, COMMAND DOCS and key positions."""
import glob
import os
import random
import re

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from command_docs_check import check_command_docs
from resp import RespClient, plain

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def info(c, key):
    reply = c.execute_command("ABF.INFO", key)
    names = [x.decode() for x in reply[0::2]]
    assert names == ["Capacity", "Error rate", "Generations", "Window", "Span", "Newest",
                     "Items", "Bits", "Hashes", "Generation error rate", "Memory"], names
    return dict(zip(names, reply[1::2]))


def madd(c, key, its, batch=5000):
    out = []
    for i in range(0, len(its), batch):
        out += c.execute_command("ABF.MADD", key, *its[i:i + batch])
    return out


def mexists(c, key, its, batch=5000):
    out = []
    for i in range(0, len(its), batch):
        out += c.execute_command("ABF.MEXISTS", key, *its[i:i + batch])
    return out


def existsat(c, key, t, its):
    return c.execute_command("ABF.EXISTSAT", key, t, *its)


def server_version(c):
    return tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:3])


# --------------------------------------------------------------------------
# the window
# --------------------------------------------------------------------------

def test_count_window_keeps_the_last_capacity_adds(r, tools):
    """Every item of the last C adds answers 1, through many rotations."""
    assert r.execute_command("ABF.RESERVE", "k", "0.01", 1000) == b"OK"
    its = tools.random_items(random.Random(5), 8000)
    for i in range(0, len(its), 250):
        r.execute_command("ABF.MADD", "k", *its[i:i + 250])
        recent = its[max(0, i + 250 - 1000):i + 250]
        assert all(mexists(r, "k", recent)), i
    fields = info(r, "k")
    assert fields["Capacity"] == 1000 and fields["Window"] == 0
    assert fields["Generations"] == 4 and fields["Span"] == 334
    assert fields["Newest"] == 8000


def test_count_window_forgets_after_the_documented_adds(r, tools):
    # C = 300, g = 4: share 100; held through 300 later adds, gone after 400
    r.execute_command("ABF.RESERVE", "k", "0.001", 300, "GENERATIONS", 4)
    markers = tools.items("marker", 50)
    assert madd(r, "k", markers) == [1] * 50
    madd(r, "k", tools.items("filler", 250))
    assert all(mexists(r, "k", markers))
    assert madd(r, "k", markers[:5]) == [0] * 5          # still there: not new
    madd(r, "k", tools.items("more", 400 + 5))
    # gone, but for false positives at 0.001
    assert sum(mexists(r, "k", markers)) <= 2
    assert sum(madd(r, "k", markers)) >= 48                # new again


def test_time_window_with_explicit_times(r, tools):
    r.execute_command("ABF.RESERVE", "k", "0.001", 1000, "WINDOW", 1000, "GENERATIONS", 4)
    span = info(r, "k")["Span"]
    assert span == 334
    t = 10_000
    early = tools.items("early", 100)
    late = tools.items("late", 100)
    assert r.execute_command("ABF.ADDAT", "k", t, *early) == [1] * 100
    assert r.execute_command("ABF.ADDAT", "k", t + 500, *late) == [1] * 100
    # held through the window after each add, at every time in it
    for q in (t, t + 1, t + 500, t + 999):
        assert all(existsat(r, "k", q, early)), q
    for q in (t + 500, t + 1499):
        assert all(existsat(r, "k", q, late)), q
    # a query before the newest add counts as at the newest
    assert all(existsat(r, "k", 0, early))
    gone = (t // span + 4) * span
    assert t + 1000 <= gone <= t + 4 * span
    assert all(existsat(r, "k", gone - 1, early))
    assert sum(existsat(r, "k", gone, early)) <= 2
    assert sum(existsat(r, "k", t + 10 * 1000, early + late)) <= 2
    # a query changes nothing: the filter still answers for the earlier time
    assert all(existsat(r, "k", t + 999, early))
    # an add far later empties the ring; one older than it holds is forgotten
    assert r.execute_command("ABF.ADDAT", "k", t + 100_000, "new") == [1]
    assert sum(existsat(r, "k", t + 999, early)) <= 2
    assert r.execute_command("ABF.ADDAT", "k", t, "ancient") == [0]
    assert existsat(r, "k", t + 100_000, ["ancient", "new"]) == [0, 1]


def test_server_clock(r, tools):
    """ABF.ADD and ABF.EXISTS use the server's clock: what is added now is
    there now, and EXISTSAT one window later has forgotten it."""
    r.execute_command("ABF.RESERVE", "k", "0.001", 100, "WINDOW", 60_000)
    its = tools.items("now", 20)
    before = int(r.time()[0]) * 1000
    assert r.execute_command("ABF.ADD", "k", its[0]) == 1
    assert madd(r, "k", its[1:]) == [1] * 19
    after = int(r.time()[0]) * 1000 + 1000
    assert all(mexists(r, "k", its)) and r.execute_command("ABF.EXISTS", "k", its[0]) == 1
    assert all(existsat(r, "k", after, its))
    newest = info(r, "k")["Newest"]
    assert before - 60_000 <= newest <= after
    assert sum(existsat(r, "k", after + 2 * 60_000, its)) == 0


def test_add_creates_with_defaults(r):
    assert r.execute_command("ABF.ADD", "k", "a") == 1
    assert r.execute_command("ABF.ADD", "k", "a") == 0
    fields = info(r, "k")
    assert (fields["Capacity"], fields["Window"], fields["Generations"]) == (100, 0, 4)
    assert float(fields["Error rate"]) == 0.01
    assert r.execute_command("ABF.ADDAT", "at", 5, "x", "y", "x") == [1, 1, 0]
    assert info(r, "at")["Capacity"] == 100
    assert r.execute_command("ABF.EXISTS", "missing", "a") == 0
    assert r.execute_command("ABF.MEXISTS", "missing", "a", "b") == [0, 0]
    assert existsat(r, "missing", 1, ["a"]) == [0]
    assert r.exists("missing") == 0


def test_binary_items(r, tools):
    its = tools.random_items(random.Random(9), 300, 0, 40)
    its = [x for x in its if x] + [b""]
    r.execute_command("ABF.RESERVE", "k", "0.01", 1000)
    assert sum(madd(r, "k", its)) >= len(its) - 3
    assert all(mexists(r, "k", its))
    assert r.execute_command("ABF.ADD", "k", b"") == 0


# --------------------------------------------------------------------------
# replies and errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_reply_types(server, protocol):
    b = {2: "integer", 3: "bool"}[protocol]
    with RespClient(server.port) as c:
        c.hello(protocol)
        c.call("DEL", "resp")
        assert plain(c.call("ABF.RESERVE", "resp", "0.01", "100", "WINDOW", "1000")) == "OK"
        add = c.call("ABF.ADD", "resp", "a")
        assert add.kind == b and plain(add) in (1, True)
        assert c.call("ABF.EXISTS", "resp", "a").kind == b
        for reply in (c.call("ABF.MADD", "resp", "a", "b"), c.call("ABF.ADDAT", "resp", "5", "c"),
                      c.call("ABF.MEXISTS", "resp", "a", "zz"),
                      c.call("ABF.EXISTSAT", "resp", "5", "a", "zz")):
            assert reply.kind == "array" and all(e.kind == b for e in reply.value), reply
        assert [bool(x) for x in plain(c.call("ABF.MADD", "resp", "a", "b"))] == [False, False]
        fields = c.call("ABF.INFO", "resp")
        if protocol == 3:
            assert fields.kind == "map"
            kinds = {plain(k): v.kind for k, v in fields.value}
        else:
            assert fields.kind == "array" and len(fields.value) == 22
            kinds = {plain(k): v.kind for k, v in zip(fields.value[0::2], fields.value[1::2])}
        double = "double" if protocol == 3 else "bulk"
        assert kinds["Error rate"] == double and kinds["Generation error rate"] == double
        assert kinds["Capacity"] == "integer" and kinds["Memory"] == "integer"
        c.call("DEL", "resp")


@pytest.mark.parametrize("args, message", [
    (["ABF.RESERVE", "k", "x", "100"], "bad error rate"),
    (["ABF.RESERVE", "k", "0", "100"], "error rate must be in the range"),
    (["ABF.RESERVE", "k", "1", "100"], "error rate must be in the range"),
    (["ABF.RESERVE", "k", "1e-20", "100"], "at least 1e-15"),
    (["ABF.RESERVE", "k", "0.01", "0"], "bad capacity"),
    (["ABF.RESERVE", "k", "0.01", "-5"], "bad capacity"),
    (["ABF.RESERVE", "k", "0.01", "1.5"], "bad capacity"),
    (["ABF.RESERVE", "k", "0.01", "100", "WINDOW"], "WINDOW needs"),
    (["ABF.RESERVE", "k", "0.01", "100", "WINDOW", "0"], "bad window"),
    (["ABF.RESERVE", "k", "0.01", "100", "WINDOW", "-1"], "bad window"),
    (["ABF.RESERVE", "k", "0.01", "100", "GENERATIONS", "1"], "bad generations"),
    (["ABF.RESERVE", "k", "0.01", "100", "GENERATIONS", "65"], "bad generations"),
    (["ABF.RESERVE", "k", "0.01", "100", "GENERATIONS"], "GENERATIONS needs"),
    (["ABF.RESERVE", "k", "0.01", "100", "NONSCALING"], "unknown argument"),
    (["ABF.RESERVE", "k", "0.9", "100"], "cannot be made"),
    (["ABF.ADDAT", "k", "-1", "a"], "bad time"),
    (["ABF.ADDAT", "k", "soon", "a"], "bad time"),
    (["ABF.EXISTSAT", "k", "1.5", "a"], "bad time"),
    (["ABF.IMPORT", "k", "garbage"], r"not a Bloom filter \(ABF\.\*\)"),
    (["ABF.IMPORT", "k", "x", "REDISBLOOM"], "the type is SKETCH"),
    (["ABF.INFO", "k"], "not found"),
    (["ABF.EXPORT", "k"], "not found"),
])
def test_bad_arguments(r, args, message):
    with pytest.raises(ResponseError, match=message):
        r.execute_command(*args)
    assert r.exists("k") == 0


@pytest.mark.parametrize("args", [
    ["ABF.RESERVE", "k", "0.01"], ["ABF.ADD", "k"], ["ABF.ADD", "k", "a", "b"],
    ["ABF.MADD", "k"], ["ABF.ADDAT", "k", "5"], ["ABF.EXISTS", "k"],
    ["ABF.EXISTS", "k", "a", "b"], ["ABF.MEXISTS", "k"], ["ABF.EXISTSAT", "k", "5"],
    ["ABF.INFO"], ["ABF.INFO", "k", "x"], ["ABF.EXPORT"], ["ABF.IMPORT", "k"],
])
def test_wrong_arity(r, args):
    with pytest.raises(ResponseError, match="wrong number of arguments"):
        r.execute_command(*args)


def test_reserve_existing_and_wrongtype(r):
    r.execute_command("ABF.RESERVE", "k", "0.01", "100")
    with pytest.raises(ResponseError, match="item exists"):
        r.execute_command("ABF.RESERVE", "k", "0.01", "100")
    r.set("s", "x")
    r.execute_command("BF.ADD", "bf", "x")
    for key in ("s", "bf"):
        for args in (["ABF.ADD", key, "a"], ["ABF.MADD", key, "a"], ["ABF.ADDAT", key, 1, "a"],
                     ["ABF.EXISTS", key, "a"], ["ABF.MEXISTS", key, "a"],
                     ["ABF.EXISTSAT", key, 1, "a"], ["ABF.INFO", key], ["ABF.EXPORT", key],
                     ["ABF.IMPORT", key, r.execute_command("ABF.EXPORT", "k")],
                     ["ABF.RESERVE", key, "0.01", "100"]):
            with pytest.raises(ResponseError) as e:
                r.execute_command(*args)
            assert WRONGTYPE in str(e.value) or "item exists" in str(e.value), args
    for args in (["BF.ADD", "k", "a"], ["BF.EXISTS", "k", "a"], ["GET", "k"]):
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            r.execute_command(*args)
    assert r.get("s") == b"x" and r.type("k") == b"sketch-ab"


def test_export_import(r, tools):
    r.execute_command("ABF.RESERVE", "k", "0.01", "500", "WINDOW", "3000", "GENERATIONS", "6")
    its = tools.items("x", 700)
    r.execute_command("ABF.ADDAT", "k", 1000, *its[:300])
    r.execute_command("ABF.ADDAT", "k", 2500, *its[300:])
    blob = r.execute_command("ABF.EXPORT", "k")
    assert r.execute_command("ABF.IMPORT", "copy", blob) == b"OK"
    assert r.execute_command("ABF.EXPORT", "copy") == blob
    assert info(r, "copy") == info(r, "k")
    assert existsat(r, "copy", 4000, its) == existsat(r, "k", 4000, its)
    # IMPORT replaces a filter, as SET replaces a value
    r.execute_command("ABF.ADD", "other", "z")
    assert r.execute_command("ABF.IMPORT", "other", blob, "SKETCH") == b"OK"
    assert r.execute_command("ABF.EXPORT", "other") == blob
    for bad in (blob[:-1], blob[:10], blob[:20] + bytes([blob[20] ^ 1]) + blob[21:]):
        with pytest.raises(ResponseError, match=r"not a Bloom filter \(ABF\.\*\)"):
            r.execute_command("ABF.IMPORT", "bad", bad)
    assert r.exists("bad") == 0


def test_memory_usage_and_key_limit(servers, tools):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "1mb"))
    c = s.client()
    c.execute_command("ABF.RESERVE", "k", "0.01", "100000")
    fields = info(c, "k")
    assert fields["Bits"] >= 100000 * 4 // 3 * 9
    assert fields["Bits"] // 8 <= fields["Memory"] <= fields["Bits"] // 8 + 4096
    usage = c.memory_usage("k")
    assert fields["Memory"] <= usage <= fields["Memory"] + 512
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY of 1048576"):
        c.execute_command("ABF.RESERVE", "big", "0.01", "10000000")
    assert c.exists("big") == 0
    # a filter past the limit made elsewhere is refused by IMPORT and RESTORE
    s2 = servers.start(module_args=("MAX-KEY-MEMORY", "64mb"))
    c2 = s2.client()
    c2.execute_command("ABF.RESERVE", "big", "0.01", "1000000")
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        c.execute_command("ABF.IMPORT", "big", c2.execute_command("ABF.EXPORT", "big"))
    with pytest.raises(ResponseError, match="Bad data format"):
        c.restore("big", 0, c2.dump("big"))
    # a time window's generations grow with bursts, within the limit
    c.execute_command("ABF.RESERVE", "t", "0.01", "1000", "WINDOW", "1000000")
    for batch in range(40):
        reply = c.execute_command("ABF.ADDAT", "t", 5, *tools.items("burst%d" % batch, 50000))
        if isinstance(reply[-1], ResponseError):
            break
    assert isinstance(reply[-1], ResponseError) and "MAX-KEY-MEMORY" in str(reply[-1])
    assert batch > 0 and all(x in (0, 1) for x in reply[:-1])
    assert sum(reply[:-1]) >= 0.95 * (len(reply) - 1)
    assert info(c, "t")["Memory"] <= 1 << 20
    # a filter loaded from the RDB is held to the limit too
    c.execute_command("DEBUG", "RELOAD")
    reply = c.execute_command("ABF.ADDAT", "t", 5, *tools.items("reloaded", 50000))
    assert isinstance(reply[-1], ResponseError) and "MAX-KEY-MEMORY" in str(reply[-1])
    assert info(c, "t")["Memory"] <= 1 << 20


# --------------------------------------------------------------------------
# persistence
# --------------------------------------------------------------------------

def populate(c, tools, prefix=""):
    """A count-window key, a time-window key made by RESERVE and ADDAT, and
    one made by ABF.ADD with the server's clock; returns the keys."""
    keys = [prefix + "count", prefix + "time", prefix + "clock"]
    c.execute_command("ABF.RESERVE", keys[0], "0.01", "2000", "GENERATIONS", "5")
    madd(c, keys[0], tools.items("count", 4500))
    c.execute_command("ABF.RESERVE", keys[1], "0.001", "1000", "WINDOW", "60000")
    for i, t in enumerate((1000, 30000, 61000, 90000)):
        c.execute_command("ABF.ADDAT", keys[1], t, *tools.items("t%d" % i, 400))
    madd(c, keys[2], tools.items("clock", 300))
    return keys


PROBES = [b"count:%d" % i for i in range(0, 4500, 7)] + \
    [b"t%d:%d" % (g, i) for g in range(4) for i in range(0, 400, 5)] + \
    [b"clock:%d" % i for i in range(0, 300, 3)] + [b"absent:%d" % i for i in range(300)]


def observe(c, key):
    """Everything about a key a client sees, at fixed times."""
    return {"export": c.execute_command("ABF.EXPORT", key), "info": info(c, key),
            "at": [existsat(c, key, t, PROBES) for t in (0, 62000, 100000, 150000)],
            "digest": c.execute_command("DEBUG", "DIGEST-VALUE", key)}


def test_debug_reload_rdb_restart_dump_restore(servers, tools):
    s = servers.start(options={"dbfilename": "abf.rdb"})
    c = s.client()
    keys = populate(c, tools)
    before = {k: observe(c, k) for k in keys}
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: observe(c, k) for k in keys} == before
    assert c.save()
    s.restart()
    c = s.client()
    assert {k: observe(c, k) for k in keys} == before
    for k in keys:
        payload = c.dump(k)
        assert c.restore("restored:" + k, 0, payload)
        after = observe(c, "restored:" + k)
        assert after == before[k]
        assert c.copy(k, "copied:" + k) == 1
        assert observe(c, "copied:" + k) == before[k]
    # the loaded filters go on: a count window counts on from where it was
    assert info(c, "count")["Newest"] == 4500
    madd(c, "count", tools.items("after", 10))
    assert info(c, "count")["Newest"] == 4510
    assert observe(c, "copied:count") == before["count"]
    # a payload whose CRC is right but whose filter is damaged is refused
    payload = bytearray(c.dump("time")[:-8])
    payload[len(payload) // 2] ^= 0x40
    with pytest.raises(ResponseError, match="Bad data format"):
        c.restore("damaged", 0, tools.with_crc(bytes(payload)))


def aof_options(**more):
    opts = {"appendonly": "yes", "appendfsync": "always", "dbfilename": "abf.rdb"}
    opts.update(more)
    return opts


def wait_rewrite_done(c, tools):
    def done():
        return (tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0")
    tools.wait_for(done, timeout=60, what="BGREWRITEAOF to finish")


def test_aof_replay_and_rewrite(servers, tools):
    s = servers.start(options=aof_options(**{"aof-use-rdb-preamble": "no"}))
    c = s.client()
    wait_rewrite_done(c, tools)
    keys = populate(c, tools)
    before = {k: observe(c, k) for k in keys}
    # what the AOF (and a replica) got: adds with their times, and the
    # filter ABF.MADD created with its parameters
    incr = b"".join(open(f, "rb").read() for f in
                    glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof")))
    assert b"ABF.MADD" not in incr and incr.count(b"ABF.ADDAT") >= 3
    created = re.search(rb"ABF\.RESERVE\r\n\$5\r\nclock\r\n\$\d+\r\n([0-9.e-]+)\r\n"
                        rb"\$3\r\n100\r\n\$11\r\nGENERATIONS\r\n\$1\r\n4\r\n", incr)
    assert created and float(created.group(1)) == 0.01, incr[:2000]
    s.kill9()
    s.start()
    c = s.client()
    assert {k: observe(c, k) for k in keys} == before
    c.bgrewriteaof()
    wait_rewrite_done(c, tools)
    bases = glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof"))
    base = open(max(bases, key=os.path.getmtime), "rb").read()
    assert b"ABF.IMPORT" in base and b"ABF.ADDAT" not in base
    c.execute_command("ABF.ADDAT", "time", 95000, "late")
    before["time"] = observe(c, "time")
    # adds that change nothing are not written: an item its generation has,
    # one older than every generation held
    incr_files = glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof"))
    size = sum(os.path.getsize(f) for f in incr_files)
    assert c.execute_command("ABF.ADDAT", "time", 95001, "late", b"t3:0") == [0, 0]
    assert c.execute_command("ABF.ADDAT", "time", 1, "ancient") == [0]
    assert sum(os.path.getsize(f) for f in incr_files) == size
    assert c.execute_command("ABF.MADD", "count", "count:4499") == [0]   # counted
    assert sum(os.path.getsize(f) for f in incr_files) > size
    before["count"] = observe(c, "count")
    s.kill9()
    s.start()
    c = s.client()
    assert {k: observe(c, k) for k in keys} == before


# --------------------------------------------------------------------------
# replication and failover
# --------------------------------------------------------------------------

def test_replica_holds_the_primary_filter(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    primary = servers.start(options=opts, module_args=("MAX-KEY-MEMORY", "128kb"))
    p = primary.client()
    synced = populate(p, tools, "sync:")                     # by the full sync
    replica = servers.start(options=opts, module_args=("MAX-KEY-MEMORY", "128kb"),
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    keys = synced + ["w", "c", "d", "at", "burst"]
    tools.same_digests(p, rc, keys, "full sync")
    commands = [
        ["ABF.RESERVE", "w", "0.01", "500", "WINDOW", "2000", "GENERATIONS", "3"],
        ["ABF.MADD", "w"] + tools.items("w", 300),            # the primary's clock
        ["ABF.ADD", "w", "one"],
        ["ABF.ADD", "w", "one"],                              # not new: still an add
        ["ABF.ADD", "d", "created"],                          # RESERVE with the defaults
        ["ABF.MADD", "c"] + tools.items("c", 250),
        ["ABF.ADDAT", "at", 5000] + tools.items("at", 50),
        ["ABF.ADDAT", "at", 1000, "old"],
        ["ABF.ADDAT", "at", -1, "bad"],                       # refused: nothing sent
        ["ABF.RESERVE", "burst", "0.01", "1000", "WINDOW", "1000000"],
        ["ABF.ADDAT", "burst", 7] + tools.items("burst", 60000),   # stops at the limit
        ["ABF.IMPORT", "imp", p.execute_command("ABF.EXPORT", "sync:time")],
        ["DEL", "sync:count"],
    ]
    replies = []
    for command in commands:
        try:
            replies.append(p.execute_command(*command))
        except ResponseError as e:
            replies.append(e)
        tools.same_digests(p, rc, keys + ["imp"], command[:3])
    assert isinstance(replies[8], ResponseError)                  # the bad time
    burst = replies[10]
    assert isinstance(burst[-1], ResponseError) and 1000 < len(burst) < 60000
    # the same answers at the same times, whatever the replica's clock
    now = int(p.time()[0]) * 1000
    probes = tools.items("w", 300) + [b"one"] + tools.items("zz", 200)
    for t in (0, now, now + 1000, now + 2000, now + 3000, now + 10000):
        assert existsat(rc, "w", t, probes) == existsat(p, "w", t, probes), t
    assert all(existsat(rc, "w", now, probes[:301]))
    with pytest.raises(ReadOnlyError):
        rc.execute_command("ABF.ADD", "w", "x")
    # failover: the replica becomes the primary and keeps the filters
    assert p.execute_command("FAILOVER") == b"OK"
    tools.wait_for(lambda: tools.info_field(rc, "replication", "role") == "master"
                   and tools.link_up(p), timeout=30, what="failover")
    rc.execute_command("ABF.MADD", "w", *tools.items("after-failover", 100))
    rc.execute_command("ABF.ADDAT", "at", 6000, "after")
    tools.same_digests(rc, p, keys, "after failover")
    assert all(mexists(p, "w", tools.items("after-failover", 100)))
    with pytest.raises(ReadOnlyError):
        p.execute_command("ABF.ADD", "w", "x")


# --------------------------------------------------------------------------
# ACL, COMMAND DOCS, key positions
# --------------------------------------------------------------------------

WRITES = ["abf.reserve", "abf.add", "abf.madd", "abf.addat", "abf.import"]
READS = ["abf.exists", "abf.mexists", "abf.existsat", "abf.info", "abf.export"]


def test_acl(servers):
    s = servers.start()
    admin = s.client()
    admin.execute_command("ABF.ADD", "u:k", "a")

    def user(name, *rules):
        assert admin.execute_command("ACL", "SETUSER", name, "on", ">pw", *rules) == b"OK"
        return s.client(username=name, password="pw")

    named = user("named", "~*", "+abf.exists", "+abf.info")
    assert named.execute_command("ABF.EXISTS", "u:k", "a") == 1
    with pytest.raises(ResponseError, match="no permissions to run the 'abf.add' command"):
        named.execute_command("ABF.ADD", "u:k", "b")
    keys = user("keys", "~u:*", "+@all")
    assert keys.execute_command("ABF.ADD", "u:k", "b") == 1
    with pytest.raises(ResponseError, match="(?i)no permissions to access"):
        keys.execute_command("ABF.ADD", "other", "b")
    if server_version(admin) >= (7, 2, 0):
        reader = user("reader", "~*", "+@all", "-@write")
        assert reader.execute_command("ABF.MEXISTS", "u:k", "a", "b") == [1, 1]
        for args in (["ABF.ADD", "u:k", "c"], ["ABF.MADD", "u:k", "c"],
                     ["ABF.ADDAT", "u:k", 5, "c"], ["ABF.RESERVE", "n", "0.01", "10"]):
            with pytest.raises(ResponseError, match="no permissions"):
                reader.execute_command(*args)
        bloom = user("bloom", "~*", "+@bloom")
        assert bloom.execute_command("ABF.ADD", "u:k", "d") == 1
    assert admin.execute_command("ABF.EXISTS", "u:k", "c") == 0


def test_command_docs_and_keys(server):
    expected_args = {
        "abf.reserve": ["key", "error_rate", "capacity", "window", "generations"],
        "abf.add": ["key", "item"], "abf.madd": ["key", "item"],
        "abf.addat": ["key", "time", "item"], "abf.exists": ["key", "item"],
        "abf.mexists": ["key", "item"], "abf.existsat": ["key", "time", "item"],
        "abf.info": ["key"], "abf.export": ["key"], "abf.import": ["key", "bytes", "sketch"],
    }
    check_command_docs(server.port, expected_args, READS, WRITES, {"abf.import"})
    for args in (["ABF.ADD", "k1", "x"], ["ABF.MADD", "k1", "x", "y"],
                 ["ABF.ADDAT", "k1", "5", "x"], ["ABF.EXISTSAT", "k1", "5", "x", "y"],
                 ["ABF.RESERVE", "k1", "0.01", "10", "WINDOW", "5"], ["ABF.INFO", "k1"],
                 ["ABF.IMPORT", "k1", "bytes", "SKETCH"]):
        with RespClient(server.port) as c:
            assert plain(c.call("COMMAND", "GETKEYS", *args)) == [b"k1"], args
