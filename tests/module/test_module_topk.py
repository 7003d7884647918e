# SPDX-License-Identifier: BSD-3-Clause
"""TOPK.* where sketch.so does more than RedisBloom, or where the server's
machinery is involved: a replica holds the same sketch as its primary after
every command, items colliding and decaying included (RedisBloom's rand()
makes them differ); the library's bytes (TOPK.EXPORT / TOPK.IMPORT); the
key's memory limit; RDB, AOF rewrite and kill -9, DUMP/RESTORE, COPY; and
redis-py's r.topk() unchanged. test_module_topk_redisbloom.py checks the
replies against RedisBloom's."""
import glob
import os
import random
import struct

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from format_h import FORMAT


def zipf_items(seed, n, universe=3000):
    rng = random.Random(seed)
    return [b"i%d" % int(universe * rng.random() ** 4) for _ in range(n)]


def populate(c):
    """Sketches whose items collide (8 x 7 buckets for thousands of items)."""
    c.execute_command("TOPK.RESERVE", "tk:default", 10)
    c.execute_command("TOPK.RESERVE", "tk:wide", 50, 2000, 5, 0.95)
    items = zipf_items(1, 20000)
    for i in range(0, len(items), 1000):
        c.execute_command("TOPK.ADD", "tk:default", *items[i:i + 1000])
        c.execute_command("TOPK.ADD", "tk:wide", *items[i:i + 1000])
    c.execute_command("TOPK.INCRBY", "tk:default", "\x00bin", 100000, "", 5)
    return ["tk:default", "tk:wide"]


PROBES = [b"i%d" % i for i in range(100)] + [b"\x00bin", b""]


def observe(c, key):
    return (c.execute_command("TOPK.LIST", key, "WITHCOUNT"),
            c.execute_command("TOPK.QUERY", key, *PROBES),
            c.execute_command("TOPK.COUNT", key, *PROBES),
            c.execute_command("TOPK.INFO", key), c.execute_command("TOPK.EXPORT", key))


def test_export_import(r):
    keys = populate(r)
    for key in keys:
        blob = r.execute_command("TOPK.EXPORT", key)
        f = FORMAT
        assert blob[:4] == f["SK_TOPK_MAGIC"] and blob[f["SK_TOPK_OFF_VERSION"]] == 1
        k, width, depth = struct.unpack_from("<III", blob, f["SK_TOPK_OFF_K"])
        info = dict(zip(*[iter(r.execute_command("TOPK.INFO", key))] * 2))
        assert (k, width, depth) == (info[b"k"], info[b"width"], info[b"depth"])
        assert r.execute_command("TOPK.IMPORT", "copy:" + key, blob) == b"OK"
        assert observe(r, "copy:" + key) == observe(r, key)
    # an import replaces a sketch; nothing else, and nothing that is not one
    blob = r.execute_command("TOPK.EXPORT", "tk:wide")
    assert r.execute_command("TOPK.IMPORT", "copy:tk:default", blob) == b"OK"
    assert observe(r, "copy:tk:default") == observe(r, "tk:wide")
    r.set("s", "v")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        r.execute_command("TOPK.IMPORT", "s", blob)
    flipped = blob[:-1] + bytes([blob[-1] ^ 1])
    for bad in (b"", blob[:-1], flipped, b"XXXX" + blob[4:], r.execute_command(
            "CMS.INITBYDIM", "c", 10, 2) and r.execute_command("CMS.EXPORT", "c")):
        with pytest.raises(ResponseError, match="^TopK: not a top-k sketch: "):
            r.execute_command("TOPK.IMPORT", "new", bad)
    assert r.exists("new") == 0
    with pytest.raises(ResponseError, match="^TopK: key does not exist$"):
        r.execute_command("TOPK.EXPORT", "missing")


def test_key_limit(servers):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "1mb"))
    c = s.client()
    with pytest.raises(ResponseError, match="^TopK: the sketch would take [0-9]+ bytes, more "
                                            "than the module's MAX-KEY-MEMORY of 1048576$"):
        c.execute_command("TOPK.RESERVE", "k", 10, 100000, 7, 0.9)
    with pytest.raises(ResponseError, match="^TopK: k is at most 16777216"):
        c.execute_command("TOPK.RESERVE", "k", 1 << 25)
    assert c.exists("k") == 0
    assert c.execute_command("TOPK.RESERVE", "k", 10, 10000, 7, 0.9) == b"OK"
    assert 10000 * 7 * 8 <= c.memory_usage("k") < 10000 * 7 * 8 * 1.05


@pytest.mark.parametrize("how", ["restart", "debug-reload"])
def test_rdb(servers, how):
    s = servers.start(options={"dbfilename": "topk.rdb"})
    c = s.client()
    keys = populate(c)
    before = {k: observe(c, k) for k in keys}
    if how == "restart":
        assert c.save()
        s.restart()
        c = s.client()
    else:
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: observe(c, k) for k in keys} == before
    # the reloaded sketches decide later decays as the originals would
    more = zipf_items(2, 3000)
    c.execute_command("TOPK.ADD", "tk:default", *more)
    c2 = servers.start().client()
    populate(c2)
    c2.execute_command("TOPK.ADD", "tk:default", *more)
    assert observe(c, "tk:default") == observe(c2, "tk:default")


def test_aof_rewrite_and_kill9(servers, tools):
    s = servers.start(options={"appendonly": "yes", "appendfsync": "always",
                               "aof-use-rdb-preamble": "no"})
    c = s.client()
    keys = populate(c)
    c.bgrewriteaof()
    tools.wait_for(lambda: tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="BGREWRITEAOF")
    base = open(max(glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof")),
                    key=os.path.getmtime), "rb").read()
    assert b"TOPK.IMPORT" in base and b"TOPK.ADD" not in base
    c.execute_command("TOPK.ADD", "tk:default", *zipf_items(3, 500))
    before = {k: observe(c, k) for k in keys}
    s.kill9()
    s.start()
    assert {k: observe(s.client(), k) for k in keys} == before


def test_dump_restore_copy(r, tools):
    keys = populate(r)
    for key in keys:
        payload = r.dump(key)
        assert r.restore("r:" + key, 0, payload)
        assert observe(r, "r:" + key) == observe(r, key)
        # a flipped bit with a right CRC64 is refused, or (where Redis's LZF
        # compression of the string makes it change nothing) restores the
        # very same sketch: never a different one
        refused = 0
        for at in range(20, len(payload) - 10, max(1, (len(payload) - 30) // 40)):
            body = bytearray(payload[:-10])
            body[at] ^= 0x40
            try:
                r.restore("bad", 0, tools.with_crc(bytes(body) + payload[-10:-8]), replace=True)
                assert observe(r, "bad") == observe(r, key), at
            except ResponseError as e:
                assert "Bad data format" in str(e)
                refused += 1
        assert refused >= 30
    assert r.copy("tk:wide", "copy") == 1
    assert observe(r, "copy") == observe(r, "tk:wide")
    r.execute_command("TOPK.INCRBY", "copy", "new", 100000)
    assert r.execute_command("TOPK.QUERY", "copy", "new") == [1]
    assert r.execute_command("TOPK.QUERY", "tk:wide", "new") == [0]


def test_replica_holds_the_same_sketch_after_every_command(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    primary = servers.start(options=opts)
    p = primary.client()
    populate(p)
    replica = servers.start(options=opts,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.info_field(rc, "replication", "master_link_status") == "up",
                   timeout=30, what="replica link up")
    commands = [["TOPK.RESERVE", "n", 5, 4, 3, 0.8]]
    commands += [["TOPK.ADD", "n"] + zipf_items(seed, 300, 200) for seed in range(10, 20)]
    commands += [["TOPK.INCRBY", "n", "a", 50000, "b", 7, "c", "bad"],
                 ["TOPK.INCRBY", "tk:default", "i5", 3, "i7", 99999],
                 ["TOPK.ADD", "tk:wide"] + zipf_items(30, 2000),
                 lambda: ["TOPK.IMPORT", "i", p.execute_command("TOPK.EXPORT", "n")],
                 ["TOPK.ADD", "i", "x", "y"]]
    for command in commands:
        if callable(command):
            command = command()
        try:
            p.execute_command(*command)
        except ResponseError:
            pass
        assert p.execute_command("WAIT", 1, 10000) == 1
        assert rc.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST"), \
            command[:3]
    for key in ("n", "i", "tk:default", "tk:wide"):
        assert observe(rc, key) == observe(p, key)
    with pytest.raises(ReadOnlyError):
        rc.execute_command("TOPK.ADD", "n", "a")
    assert rc.execute_command("TOPK.COUNT", "n", "a") == p.execute_command("TOPK.COUNT", "n", "a")


def test_redis_py_topk_unchanged(r):
    topk = r.topk()
    assert topk.reserve("t", 2, 1000, 5, 0.9)
    assert topk.add("t", "a", "a", "b") == [None, None, None]
    assert topk.add("t", "c", "c", "c") == ["b", None, None]  # c ties b at 1, and takes its place
    assert topk.query("t", "a", "b", "c") == [1, 0, 1]
    assert topk.count("t", "a", "c") == [2, 3]
    assert topk.list("t") == ["c", "a"]
    assert topk.list("t", withcount=True) == ["c", 3, "a", 2]
    assert topk.incrby("t", ["a"], [5]) == [None]
    info = topk.info("t")
    assert (info.k, info.width, info.depth) == (2, 1000, 5)
    assert abs(float(info.decay) - 0.9) < 1e-12
