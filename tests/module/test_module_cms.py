# SPDX-License-Identifier: BSD-3-Clause
"""CMS.* where sketch.so does more than RedisBloom, or where the server's
machinery is involved: the library's bytes (CMS.EXPORT / CMS.IMPORT), the
key's memory limit, MEMORY USAGE and used_memory, RDB and AOF, DUMP/RESTORE,
COPY, TTLs, and replication (a replica holds the same value as its primary
after every command). test_module_cms_redisbloom.py checks the replies
against RedisBloom's."""
import glob
import os
import random
import struct

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from format_h import FORMAT


def incr(c, key, pairs):
    args = []
    for item, n in pairs:
        args += [item, n]
    return c.execute_command("CMS.INCRBY", key, *args)


def stream(seed, n, distinct):
    """n (item, increment) pairs over `distinct` items, skewed."""
    rng = random.Random(seed)
    return [(b"i%d" % int(distinct * rng.random() ** 3), rng.randint(1, 9)) for _ in range(n)]


def observe(c, key, probes):
    """All a client can see of a sketch."""
    return (c.execute_command("CMS.INFO", key), c.execute_command("CMS.QUERY", key, *probes),
            c.execute_command("CMS.EXPORT", key))


def header(blob):
    """(magic, version, width, depth, total) of the library's format."""
    f = FORMAT
    (width,) = struct.unpack_from("<I", blob, f["SK_CMS_OFF_WIDTH"])
    (depth,) = struct.unpack_from("<I", blob, f["SK_CMS_OFF_DEPTH"])
    (total,) = struct.unpack_from("<Q", blob, f["SK_CMS_OFF_TOTAL"])
    return (blob[f["SK_CMS_OFF_MAGIC"]:f["SK_CMS_OFF_MAGIC"] + 4], blob[f["SK_CMS_OFF_VERSION"]],
            width, depth, total)


PROBES = [b"i%d" % i for i in range(300)] + [b"absent%d" % i for i in range(50)]


# ---- the library's bytes ------------------------------------------------------------

def test_export_is_the_library_format_and_imports_back(r):
    r.execute_command("CMS.INITBYDIM", "a", 300, 5)
    pairs = stream(1, 3000, 500)
    for i in range(0, len(pairs), 500):
        incr(r, "a", pairs[i:i + 500])
    blob = r.execute_command("CMS.EXPORT", "a")
    total = sum(n for _, n in pairs)
    assert header(blob) == (FORMAT["SK_CMS_MAGIC"], FORMAT["SK_CMS_VERSION"], 300, 5, total)
    assert len(blob) == FORMAT["SK_CMS_HEADER_SIZE"] + 300 * 5 * 4
    # counters, row by row: each row sums to the total (no counter saturated)
    counters = struct.unpack_from("<%dI" % (300 * 5), blob, FORMAT["SK_CMS_HEADER_SIZE"])
    assert all(sum(counters[row * 300:(row + 1) * 300]) == total for row in range(5))
    assert r.execute_command("CMS.IMPORT", "b", blob) == b"OK"
    assert observe(r, "b", PROBES) == observe(r, "a", PROBES)
    # an import replaces a sketch, as SET replaces a value
    r.execute_command("CMS.INITBYDIM", "c", 7, 1)
    assert r.execute_command("CMS.IMPORT", "c", blob) == b"OK"
    assert r.execute_command("CMS.INFO", "c") == [b"width", 300, b"depth", 5, b"count", total]
    # the imported sketch is live
    exact = {}
    for item, n in pairs:
        exact[item] = exact.get(item, 0) + n
    incr(r, "b", [(b"i1", 4)])
    assert r.execute_command("CMS.QUERY", "b", b"i1")[0] >= exact.get(b"i1", 0) + 4


def test_import_refuses_what_is_not_a_sketch(r):
    r.execute_command("CMS.INITBYDIM", "a", 50, 3)
    incr(r, "a", [(b"x", 5)])
    blob = r.execute_command("CMS.EXPORT", "a")
    counter = FORMAT["SK_CMS_HEADER_SIZE"] + 17
    flipped = blob[:counter] + bytes([blob[counter] ^ 1]) + blob[counter + 1:]
    bad = [b"", b"SKCM", blob[:-1], blob + b"\0", b"XXXX" + blob[4:], flipped,
           blob[:FORMAT["SK_CMS_OFF_VERSION"]] + b"\x09" + blob[FORMAT["SK_CMS_OFF_VERSION"] + 1:],
           r.execute_command("PFADD", "pf", "a") and r.get("pf")]
    before = observe(r, "a", [b"x"])
    for payload in bad:
        with pytest.raises(ResponseError, match="^CMS: not a count-min sketch: "):
            r.execute_command("CMS.IMPORT", "a", payload)
        with pytest.raises(ResponseError, match="^CMS: not a count-min sketch: "):
            r.execute_command("CMS.IMPORT", "new", payload)
    assert observe(r, "a", [b"x"]) == before and r.exists("new") == 0
    # no other type is replaced
    r.set("s", "v")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        r.execute_command("CMS.IMPORT", "s", blob)
    assert r.get("s") == b"v"
    with pytest.raises(ResponseError, match="^CMS: key does not exist$"):
        r.execute_command("CMS.EXPORT", "missing")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        r.execute_command("CMS.EXPORT", "s")


# ---- memory ---------------------------------------------------------------------

def test_key_limit_and_memory_usage(servers, tools):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "8mb"))
    c = s.client()
    limit = 8 << 20
    for args in (["CMS.INITBYDIM", "k", 1 << 20, 3], ["CMS.INITBYPROB", "k", "1e-7", "0.01"]):
        with pytest.raises(ResponseError) as e:
            c.execute_command(*args)
        message = str(e.value)
        assert message.startswith("CMS: the sketch would take ") and \
            message.endswith("more than the module's MAX-KEY-MEMORY of %d" % limit), message
        assert int(message.split()[5]) > limit
    assert c.exists("k") == 0
    for args in (["CMS.INITBYDIM", "k", (1 << 16) + 1, 1 << 16],
                 ["CMS.INITBYDIM", "k", 1 << 33, 1]):
        with pytest.raises(ResponseError, match="^CMS: the sketch would have more than 2\\^32 "):
            c.execute_command(*args)
    # what a sketch takes is what Redis counts: MEMORY USAGE and used_memory
    before = int(tools.info_field(c, "memory", "used_memory"))
    c.execute_command("CMS.INITBYDIM", "big", 1 << 18, 7)   # 7 MiB of counters
    grew = int(tools.info_field(c, "memory", "used_memory")) - before
    counters = (1 << 18) * 7 * 4
    # the allocator's size classes are at most 25% apart at this size
    assert counters <= grew < counters * 1.25, grew
    usage = c.memory_usage("big")
    assert counters <= usage < counters * 1.01, usage
    c.execute_command("CMS.INITBYDIM", "small", 2000, 5)
    assert 40000 <= c.memory_usage("small") < 41000
    c.delete("big")
    assert int(tools.info_field(c, "memory", "used_memory")) - before < counters / 10
    # CONFIG SET lowers the limit for what comes next; an import past it is refused
    blob = c.execute_command("CMS.EXPORT", "small")
    c.config_set("sketch.max-key-memory", "32kb")
    with pytest.raises(ResponseError, match="^CMS: the sketch would take more than"):
        c.execute_command("CMS.IMPORT", "copy", blob)
    with pytest.raises(ResponseError, match="^CMS: the sketch would take "):
        c.execute_command("CMS.INITBYDIM", "k", 2000, 5)
    # a key made before keeps working
    assert c.execute_command("CMS.INCRBY", "small", "a", 1) == [1]


# ---- persistence and copies ---------------------------------------------------------

def populate(c):
    c.execute_command("CMS.INITBYDIM", "cms:dim", 500, 4)
    c.execute_command("CMS.INITBYPROB", "cms:prob", "0.01", "0.001")
    c.execute_command("CMS.INITBYDIM", "cms:merged", 500, 4)
    pairs = stream(7, 4000, 800)
    for i in range(0, len(pairs), 400):
        incr(c, "cms:dim", pairs[i:i + 400])
        incr(c, "cms:prob", pairs[i:i + 400])
    c.execute_command("CMS.MERGE", "cms:merged", 2, "cms:dim", "cms:dim", "WEIGHTS", 2, 1)
    incr(c, "cms:dim", [(b"\x00\xff", 4294967295)])                 # saturated counters
    return ["cms:dim", "cms:prob", "cms:merged"]


def snapshot(c, keys):
    return {k: observe(c, k, PROBES + [b"\x00\xff"]) for k in keys}


@pytest.mark.parametrize("how", ["restart", "debug-reload"])
def test_rdb(servers, how):
    s = servers.start(options={"dbfilename": "cms.rdb"})
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
    assert b"CMS.IMPORT" in base and b"CMS.INCRBY" not in base and b"CMS.MERGE" not in base
    # writes after the rewrite: in the incremental file, as applied
    incr(c, "cms:dim", [(b"late", 3)])
    c.execute_command("CMS.INITBYPROB", "cms:late", "0.05", "0.05")
    keys.append("cms:late")
    incr_files = glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof"))
    log = b"".join(open(f, "rb").read() for f in incr_files)
    assert b"CMS.INITBYDIM" in log and b"CMS.INITBYPROB" not in log, \
        "INITBYPROB is written as the dimensions it made"
    before = snapshot(c, keys)
    s.kill9()
    s.start()
    assert snapshot(s.client(), keys) == before


def test_dump_restore_copy(r, tools):
    keys = populate(r)
    for key in keys:
        payload = r.dump(key)
        assert r.restore("r:" + key, 0, payload)
        assert observe(r, "r:" + key, PROBES) == observe(r, key, PROBES)
        # a payload whose CRC is right but whose sketch is not is refused
        body = bytearray(payload[:-10])
        body[len(body) // 2] ^= 0x40
        with pytest.raises(ResponseError, match="Bad data format"):
            r.restore("bad:" + key, 0, tools.with_crc(bytes(body) + payload[-10:-8]))
        assert r.exists("bad:" + key) == 0
    assert r.copy("cms:dim", "copy") == 1
    assert observe(r, "copy", PROBES) == observe(r, "cms:dim", PROBES)
    incr(r, "copy", [(b"i1", 100)])
    assert r.execute_command("CMS.QUERY", "copy", b"i1")[0] == \
        r.execute_command("CMS.QUERY", "cms:dim", b"i1")[0] + 100


def test_ttl_kept_by_writes_in_place(r):
    """INCRBY and MERGE change the sketch in place and keep its TTL, as
    INCRBY keeps a string's; CMS.IMPORT replaces the value and drops it, as
    SET does."""
    r.execute_command("CMS.INITBYDIM", "k", 10, 2)
    r.execute_command("CMS.INITBYDIM", "other", 10, 2)
    r.expire("k", 1000)
    incr(r, "k", [(b"a", 1)])
    r.execute_command("CMS.MERGE", "k", 2, "k", "other")
    assert 0 < r.ttl("k") <= 1000
    r.execute_command("CMS.IMPORT", "k", r.execute_command("CMS.EXPORT", "other"))
    assert r.ttl("k") == -1


# ---- replication ---------------------------------------------------------------

def test_replica_holds_the_same_sketch_after_every_command(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    primary = servers.start(options=opts)
    p = primary.client()
    populate(p)                                      # reaches the replica by full sync
    replica = servers.start(options=opts,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.info_field(rc, "replication", "master_link_status") == "up",
                   timeout=30, what="replica link up")
    blob = p.execute_command("CMS.EXPORT", "cms:dim")
    commands = [
        ["CMS.INITBYPROB", "p", "0.002", "0.01"],
        ["CMS.INCRBY", "p", "a", 5, "b", 4294967295],
        ["CMS.INCRBY", "p", "a", 0],
        ["CMS.INITBYDIM", "d", 500, 4],
        ["CMS.MERGE", "d", 3, "cms:dim", "cms:merged", "d", "WEIGHTS", 3, -1, 2],
        ["CMS.MERGE", "d", 1, "cms:dim", "WEIGHTS", -1],          # refused: overflow
        ["CMS.IMPORT", "i", blob],
        ["CMS.INCRBY", "i", "x", 1],
        ["DEL", "cms:prob"],
    ]
    for command in commands:
        try:
            p.execute_command(*command)
        except ResponseError:
            pass
        assert p.execute_command("WAIT", 1, 10000) == 1
        assert rc.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST"), \
            command
    for key in ("p", "d", "i", "cms:dim", "cms:merged"):
        assert observe(rc, key, PROBES) == observe(p, key, PROBES), key
    # a replica refuses writes
    with pytest.raises(ReadOnlyError):
        rc.execute_command("CMS.INCRBY", "p", "a", 1)


# ---- a real client -------------------------------------------------------------

def test_redis_py_cms_unchanged(r):
    """redis-py's r.cms(), written for RedisBloom, works as it is: its reply
    parsers (CMSInfo) read the module's replies."""
    cms = r.cms()
    assert cms.initbydim("a", 1000, 5)
    assert cms.initbyprob("b", 0.001, 0.01)
    assert cms.incrby("a", ["x", "y", "x"], [3, 1, 2]) == [3, 1, 5]
    assert cms.query("a", "x", "y", "z") == [5, 1, 0]
    info = cms.info("b")
    assert (info.width, info.depth, info.count) == (2000, 7, 0)
    cms.initbydim("m", 1000, 5)
    assert cms.merge("m", 2, ["a", "a"], weights=[2, 3])
    assert cms.query("m", "x", "y") == [25, 5]
    assert cms.info("m").count == 30
    with pytest.raises(ResponseError, match="CMS: width/depth is not equal"):
        cms.merge("m", 1, ["b"])
