# SPDX-License-Identifier: BSD-3-Clause
"""WHLL.* keys and the server's machinery: persistence (DEBUG RELOAD, RDB, AOF
and its rewrite), DUMP/RESTORE and COPY, MEMORY USAGE and the key limit,
replication with the primary's times, failover, ACL, COMMAND DOCS and key
positions. test_module_whll.py has the commands' answers."""
import glob
import os

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from command_docs_check import check_command_docs
from resp import RespClient, plain
from test_module_whll import HOUR, add_events, info, observe, server_version, timeline

# --------------------------------------------------------------------------
# persistence and copies
# --------------------------------------------------------------------------

WINDOWS = [1000, 60000, HOUR, 2 * HOUR]


def populate(c):
    """Keys written by every writing command; returns their names."""
    events = timeline(11, 5000, 4 * HOUR, 3000)
    c.execute_command("WHLL.RESERVE", "w:min", 2 * HOUR, "RESOLUTION", 60000)
    c.execute_command("WHLL.RESERVE", "w:p18", 2 * HOUR, "PRECISION", 18)
    c.execute_command("WHLL.RESERVE", "w:p4", HOUR, "RESOLUTION", 1, "PRECISION", 4)
    for key in ("w:min", "w:p18", "w:p4"):
        add_events(c, key, events)
    add_events(c, "w:default", events[:1000])                    # created by ADDAT
    c.execute_command("WHLL.MERGE", "w:merged", "w:min", "w:min")
    c.execute_command("WHLL.IMPORT", "w:imported", c.execute_command("WHLL.EXPORT", "w:p18"))
    c.execute_command("WHLL.RESERVE", "w:empty", 1000)
    return ["w:min", "w:p18", "w:p4", "w:default", "w:merged", "w:imported", "w:empty"]


def snapshot(c, keys):
    """What observe sees of each key, at times from its newest on."""
    out = {}
    for k in keys:
        i = info(c, k)
        newest = i["Newest"] or 0
        times = [newest, newest + 1, newest + HOUR, newest + 6 * HOUR]
        windows = [w for w in WINDOWS if w <= i["Horizon"]]
        out[k] = observe(c, k, times, windows)
    return out


@pytest.mark.parametrize("how", ["restart", "debug-reload"])
def test_rdb(servers, how):
    s = servers.start(options={"dbfilename": "whll.rdb"})
    c = s.client()
    keys = populate(c)
    before = snapshot(c, keys)
    if how == "restart":
        assert c.save()
        s.restart()
        assert "DB loaded from disk" in s.log()
        c = s.client()
    else:
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert snapshot(c, keys) == before


def test_aof_replays_adds_at_their_times(servers, tools):
    """WHLL.ADD is written to the AOF as WHLL.ADDAT with the time it took,
    so the replay, at a later clock, holds the same sketch; a key it
    created goes first as WHLL.RESERVE. The rewrite writes WHLL.IMPORT."""
    s = servers.start(options={"appendonly": "yes", "appendfsync": "always",
                               "aof-use-rdb-preamble": "no"})
    c = s.client()
    keys = populate(c)
    c.execute_command("WHLL.ADD", "w:clock", *tools.items("clock", 500))
    # the same elements again: a change only if the clock entered a new slot
    again = c.execute_command("WHLL.ADD", "w:clock", *tools.items("clock", 100))
    newest = info(c, "w:clock")["Newest"]
    log = b"".join(open(f, "rb").read()
                   for f in glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof")))
    assert b"WHLL.ADD\r\n" not in log
    assert log.count(b"WHLL.ADDAT\r\n$7\r\nw:clock\r\n") == 1 + again
    assert b"WHLL.RESERVE\r\n$7\r\nw:clock\r\n$8\r\n86400000\r\n$10\r\nRESOLUTION\r\n" \
        b"$4\r\n1000\r\n$9\r\nPRECISION\r\n$2\r\n14\r\n" in log
    keys.append("w:clock")
    before = snapshot(c, keys)
    clock = [c.execute_command("WHLL.COUNT", "w:clock", w, "TIME", newest) for w in WINDOWS]
    assert abs(clock[-1] - 500) <= 10
    s.kill9()
    s.start()
    c = s.client()
    assert snapshot(c, keys) == before
    assert [c.execute_command("WHLL.COUNT", "w:clock", w, "TIME", newest)
            for w in WINDOWS] == clock
    c.bgrewriteaof()
    tools.wait_for(lambda: tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="BGREWRITEAOF")
    base = open(max(glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof")),
                    key=os.path.getmtime), "rb").read()
    assert base.count(b"WHLL.IMPORT") == len(keys) and b"WHLL.ADDAT" not in base
    s.kill9()
    s.start()
    assert snapshot(s.client(), keys) == before


def test_dump_restore_copy(r, tools):
    keys = populate(r)
    for key in keys:
        payload = r.dump(key)
        assert r.restore("r:" + key, 0, payload)
        assert snapshot(r, ["r:" + key])["r:" + key] == snapshot(r, [key])[key]
        # a payload whose CRC is right but whose sketch is not is refused
        body = bytearray(payload[:-10])
        body[len(body) // 2] ^= 0x40
        with pytest.raises(ResponseError, match="Bad data format"):
            r.restore("bad:" + key, 0, tools.with_crc(bytes(body) + payload[-10:-8]))
        assert r.exists("bad:" + key) == 0
    assert r.copy("w:min", "copy") == 1
    assert snapshot(r, ["copy"])["copy"] == snapshot(r, ["w:min"])["w:min"]
    r.execute_command("WHLL.ADDAT", "copy", 4 * HOUR, *tools.items("copy-only", 100))
    assert r.execute_command("WHLL.COUNT", "copy", 60000, "TIME", 4 * HOUR) > \
        r.execute_command("WHLL.COUNT", "w:min", 60000, "TIME", 4 * HOUR)


# --------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------

def test_memory_usage_grows_with_the_pairs(servers, tools):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "256kb"))
    c = s.client()
    c.execute_command("WHLL.RESERVE", "w", HOUR)
    empty = c.memory_usage("w")
    assert empty >= info(c, "w")["Memory"] > 0
    seen = [(0, empty)]
    for step in range(1, 6):
        c.execute_command("WHLL.ADDAT", "w", step * 1000, *tools.items("s%d" % step, 10000))
        i = info(c, "w")
        seen.append((i["Pairs"], c.memory_usage("w")))
        assert i["Memory"] <= seen[-1][1]
    assert all(b[0] > a[0] and b[1] >= a[1] for a, b in zip(seen, seen[1:])), seen
    assert seen[-1][1] > 2 * empty, seen
    # used_memory sees it: the sketch is in Redis's memory (the client's
    # buffers move used_memory too, so the bound is loose)
    before = int(tools.info_field(c, "memory", "used_memory"))
    c.delete("w")
    assert before - int(tools.info_field(c, "memory", "used_memory")) >= seen[-1][1] * 0.5
    # the key limit: growth past it is refused, what was added stays
    def grow(key, steps):
        for step in range(1, steps + 1):
            try:
                c.execute_command("WHLL.ADDAT", key, step * 1000,
                                  *tools.items("%s%d" % (key, step), 20000))
            except ResponseError as e:
                return step, str(e)
        return step, None
    step, stopped = grow("g", 100)
    assert stopped == "the sketch would take more than the module's MAX-KEY-MEMORY of " \
        "262144 bytes", stopped
    assert c.memory_usage("g") <= (256 << 10) * 1.1
    kept = c.execute_command("WHLL.COUNT", "g", HOUR, "TIME", step * 1000)
    assert kept > 20000 * (step - 1) * 0.9
    # a higher limit: a sketch made afterwards grows past the old one
    c.config_set("sketch.max-key-memory", "64mb")
    assert grow("h", step + 2) == (step + 2, None)
    assert c.memory_usage("h") > 256 << 10
    # the limit as it stands holds for sketches made before it, and loaded ones
    c.execute_command("WHLL.ADDAT", "g", step * 1000, *tools.items("more", 20000))
    c.config_set("sketch.max-key-memory", "256kb")
    c.execute_command("DEBUG", "RELOAD")
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY of 262144"):
        c.execute_command("WHLL.ADDAT", "h", (step + 3) * 1000, *tools.items("late", 60000))


def test_import_and_restore_held_to_the_limit_by_memory(servers, tools):
    """A sketch takes more memory than its bytes (a dense one 6 bytes a
    register beside its pairs): IMPORT and RESTORE weigh what it takes."""
    s = servers.start(module_args=("MAX-KEY-MEMORY", "64mb"))
    c = s.client()
    c.execute_command("WHLL.ADDAT", "src", 1000, *tools.items("m", 20000))
    data = c.execute_command("WHLL.EXPORT", "src")
    dump = c.dump("src")
    assert len(data) < 100000 < info(c, "src")["Memory"]
    c.config_set("sketch.max-key-memory", "100000")
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        c.execute_command("WHLL.IMPORT", "dst", data)
    with pytest.raises(ResponseError):
        c.restore("dst2", 0, dump)
    assert c.exists("dst", "dst2") == 0
    c.config_set("sketch.max-key-memory", "200000")
    assert c.execute_command("WHLL.IMPORT", "dst", data) == b"OK"
    assert c.restore("dst2", 0, dump)


# --------------------------------------------------------------------------
# replication and failover
# --------------------------------------------------------------------------

def test_replica_holds_the_primary_sketch(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    args = ("MAX-KEY-MEMORY", "256kb")
    primary = servers.start(options=opts, module_args=args)
    p = primary.client()
    p.execute_command("WHLL.ADD", "sync", *tools.items("sync", 3000))     # by the full sync
    replica = servers.start(options=opts, module_args=args,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    keys = ["sync", "clock", "at", "r", "m", "imp", "burst"]
    tools.same_digests(p, rc, keys, "full sync")
    commands = [
        ["WHLL.ADD", "clock"] + tools.items("clock", 2000),        # creates: RESERVE first
        ["WHLL.ADD", "clock"] + tools.items("clock", 2000),        # new only in a new second
        ["WHLL.ADD", "clock", "one more"],
        ["WHLL.RESERVE", "r", HOUR, "RESOLUTION", 60000, "PRECISION", 12],
        ["WHLL.ADDAT", "r", 100 * 60000] + tools.items("r", 500),
        ["WHLL.ADDAT", "r", 41 * 60000, "late"],
        ["WHLL.ADDAT", "r", 0, "ancient", "too"],                   # too old: nothing sent
        ["WHLL.ADDAT", "r", -1, "bad"],                             # refused
        ["WHLL.ADDAT", "at", 12345] + tools.items("at", 100),       # creates
        ["WHLL.MERGE", "m", "clock", "sync"],
        ["WHLL.IMPORT", "imp", p.execute_command("WHLL.EXPORT", "sync")],
        ["WHLL.ADDAT", "imp", info(p, "sync")["Newest"], "x"],
        ["DEL", "sync"],
    ]
    # slot after slot until the key's limit stops an add part way
    commands += [["WHLL.ADDAT", "burst", t * 1000] + tools.items("burst%d" % t, 20000)
                 for t in range(1, 21)]
    replies = []
    for command in commands:
        try:
            replies.append(p.execute_command(*command))
        except ResponseError as e:
            replies.append(e)
        tools.same_digests(p, rc, keys, command[:3])
    assert replies[0] == 1 and replies[1] in (0, 1) and replies[6] == 0
    assert isinstance(replies[7], ResponseError)
    burst = replies[-20:]
    assert burst[0] == 1 and any(isinstance(x, ResponseError) for x in burst), burst
    assert info(rc, "burst")["Pairs"] == info(p, "burst")["Pairs"] > 0
    # the same counts at the same times, whatever the replica's clock
    newest = info(p, "clock")["Newest"]
    for key, end in (("clock", newest), ("clock", newest + 30000), ("r", 100 * 60000),
                     ("at", 12345), ("m", newest), ("burst", 20000)):
        for window in (1000, 60000, HOUR):
            assert rc.execute_command("WHLL.COUNT", key, window, "TIME", end) == \
                p.execute_command("WHLL.COUNT", key, window, "TIME", end), (key, end, window)
    assert p.execute_command("WHLL.COUNT", "clock", 60000, "TIME", newest) > 1900
    with pytest.raises(ReadOnlyError):
        rc.execute_command("WHLL.ADD", "clock", "x")
    # failover: the replica becomes the primary with the same sketches
    assert p.execute_command("FAILOVER") == b"OK"
    tools.wait_for(lambda: tools.info_field(rc, "replication", "role") == "master"
                   and tools.link_up(p), timeout=30, what="failover")
    rc.execute_command("WHLL.ADD", "clock", *tools.items("after-failover", 100))
    rc.execute_command("WHLL.ADDAT", "r", 101 * 60000, "after")
    tools.same_digests(rc, p, keys, "after failover")
    newest = info(rc, "clock")["Newest"]
    assert p.execute_command("WHLL.COUNT", "clock", HOUR, "TIME", newest) == \
        rc.execute_command("WHLL.COUNT", "clock", HOUR, "TIME", newest)
    with pytest.raises(ReadOnlyError):
        p.execute_command("WHLL.ADD", "clock", "x")


# --------------------------------------------------------------------------
# ACL, COMMAND DOCS, key positions
# --------------------------------------------------------------------------

WRITES = ["whll.reserve", "whll.add", "whll.addat", "whll.merge", "whll.import"]
READS = ["whll.count", "whll.info", "whll.export"]


def test_acl(servers):
    s = servers.start()
    admin = s.client()
    admin.execute_command("WHLL.ADD", "u:k", "a")

    def user(name, *rules):
        assert admin.execute_command("ACL", "SETUSER", name, "on", ">pw", *rules) == b"OK"
        return s.client(username=name, password="pw")

    named = user("named", "~*", "+whll.count", "+whll.info")
    assert named.execute_command("WHLL.COUNT", "u:k", HOUR) == 1
    with pytest.raises(ResponseError, match="no permissions to run the 'whll.add' command"):
        named.execute_command("WHLL.ADD", "u:k", "b")
    # read-only key permissions: counts, no adds (the key specs say which)
    reader = user("reader", "%R~*", "+@all")
    assert reader.execute_command("WHLL.COUNT", "u:k", HOUR) == 1
    for args in (["WHLL.ADD", "u:k", "b"], ["WHLL.ADDAT", "u:k", 5, "b"],
                 ["WHLL.MERGE", "u:k", "u:k"], ["WHLL.RESERVE", "n", 10]):
        with pytest.raises(ResponseError, match="(?i)no permissions to access"):
            reader.execute_command(*args)
    keys = user("keys", "~u:*", "+@all")
    assert keys.execute_command("WHLL.ADD", "u:k", "b") == 1
    with pytest.raises(ResponseError, match="(?i)no permissions to access"):
        keys.execute_command("WHLL.MERGE", "u:dest", "other")
    if server_version(admin) >= (7, 2, 0):
        nowrite = user("nowrite", "~*", "+@all", "-@write")
        assert nowrite.execute_command("WHLL.INFO", "u:k")[1] == 14
        for args in (["WHLL.ADD", "u:k", "c"], ["WHLL.ADDAT", "u:k", 5, "c"],
                     ["WHLL.RESERVE", "n", 10], ["WHLL.IMPORT", "n", b"x"]):
            with pytest.raises(ResponseError, match="no permissions to run"):
                nowrite.execute_command(*args)
        hll = user("hll", "~*", "+@hyperloglog")
        assert hll.execute_command("WHLL.ADD", "u:k", "d") == 1
    # a, b and d: nothing of the refused adds
    expected = 3 if server_version(admin) >= (7, 2, 0) else 2
    assert admin.execute_command("WHLL.COUNT", "u:k", HOUR) == expected


def test_command_docs_and_keys(server):
    expected_args = {
        "whll.reserve": ["key", "horizon", "resolution", "precision"],
        "whll.add": ["key", "element"], "whll.addat": ["key", "time", "element"],
        "whll.count": ["key", "window", "time"], "whll.merge": ["destkey", "sourcekey"],
        "whll.info": ["key"], "whll.export": ["key"], "whll.import": ["key", "bytes"],
    }
    check_command_docs(server.port, expected_args, READS, WRITES, {"whll.import"})
    for args, keys in ((["WHLL.ADD", "k1", "x", "y"], [b"k1"]),
                       (["WHLL.ADDAT", "k1", "5", "x"], [b"k1"]),
                       (["WHLL.COUNT", "k1", "10", "TIME", "5"], [b"k1"]),
                       (["WHLL.RESERVE", "k1", "10", "PRECISION", "4"], [b"k1"]),
                       (["WHLL.MERGE", "d", "s1", "s2"], [b"d", b"s1", b"s2"]),
                       (["WHLL.INFO", "k1"], [b"k1"]), (["WHLL.EXPORT", "k1"], [b"k1"]),
                       (["WHLL.IMPORT", "k1", "bytes"], [b"k1"])):
        with RespClient(server.port) as c:
            assert plain(c.call("COMMAND", "GETKEYS", *args)) == keys, args
