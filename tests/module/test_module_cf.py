# SPDX-License-Identifier: BSD-3-Clause
"""CF.* where sketch.so does more than RedisBloom, or where the server's
machinery is involved: the library's bytes (CF.EXPORT / CF.IMPORT); the
key's memory limit and CF_MAX_EXPANSIONS; a restore by CF.LOADCHUNK that
is saved, reloaded and copied as unfinished until its last piece; RDB, AOF
rewrite and kill -9, DUMP/RESTORE, COPY; a replica holding the same filter
as its primary after every command, when the primary refused items its
limits did not allow; and redis-py's r.cf() unchanged.
test_module_cf_redisbloom.py checks the replies against RedisBloom's."""
import glob
import os
import struct

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from format_h import FORMAT


def items(prefix, n):
    return [b"%s%d" % (prefix, i) for i in range(n)]


def populate(c):
    """A filter grown to several sub-filters, with deletes, and a small one."""
    c.execute_command("CF.RESERVE", "cf:grown", 500, "BUCKETSIZE", 4, "EXPANSION", 2)
    for i in range(0, 6000, 1000):
        c.execute_command("CF.INSERT", "cf:grown", "ITEMS", *items(b"g", 6000)[i:i + 1000])
    for item in items(b"g", 300):
        c.execute_command("CF.DEL", "cf:grown", item)
    c.execute_command("CF.INSERT", "cf:small", "CAPACITY", 100, "ITEMS", "\x00bin", "", "a", "a")
    return ["cf:grown", "cf:small"]


PROBES = items(b"g", 400) + items(b"absent", 200) + [b"\x00bin", b"", b"a"]


def observe(c, key):
    return (c.execute_command("CF.MEXISTS", key, *PROBES),
            [c.execute_command("CF.COUNT", key, p) for p in PROBES[::20]],
            c.execute_command("CF.INFO", key), c.execute_command("CF.EXPORT", key))


def dump(c, key):
    pieces, it = [], 0
    while True:
        it, data = c.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            return pieces
        pieces.append((it, data))


def test_export_import(r):
    for key in populate(r):
        blob = r.execute_command("CF.EXPORT", key)
        f = FORMAT
        assert blob[:4] == f["SK_CUCKOO_MAGIC"] and blob[f["SK_CUCKOO_OFF_VERSION"]] == 1
        (buckets,) = struct.unpack_from("<Q", blob, f["SK_CUCKOO_OFF_BUCKETS"])
        info = dict(zip(*[iter(r.execute_command("CF.INFO", key))] * 2))
        assert buckets == info[b"Number of buckets"]
        assert r.execute_command("CF.IMPORT", "copy:" + key, blob) == b"OK"
        assert observe(r, "copy:" + key) == observe(r, key)
    blob = r.execute_command("CF.EXPORT", "cf:small")
    r.set("s", "v")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        r.execute_command("CF.IMPORT", "s", blob)
    flipped = blob[:-1] + bytes([blob[-1] ^ 1])
    for bad in (b"", blob[:-1], flipped, b"XXXX" + blob[4:]):
        with pytest.raises(ResponseError, match="^not a Cuckoo filter: "):
            r.execute_command("CF.IMPORT", "new", bad)
    assert r.exists("new") == 0
    with pytest.raises(ResponseError, match="^not found$"):
        r.execute_command("CF.EXPORT", "missing")


def test_key_limit_and_max_expansions(servers):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "100000", "CF_MAX_EXPANSIONS", "3"))
    c = s.client()
    with pytest.raises(ResponseError, match="^the filter would take [0-9]+ bytes, more "
                                            "than the module's MAX-KEY-MEMORY of 100000$"):
        c.execute_command("CF.RESERVE", "k", 400000)
    assert c.exists("k") == 0
    # growth within one command stops at the key's limit: three sub-filters
    # of 32 KB; the items that do not fit answer -1, and change nothing
    c.execute_command("CF.RESERVE", "k", 20000, "EXPANSION", 1)
    got = c.execute_command("CF.INSERT", "k", "ITEMS", *items(b"k", 110000))
    assert got.count(-1) > 5000 and set(got) == {1, -1}
    assert c.execute_command("CF.DEBUG", "k").decode().split()[4] == "filters:3"
    assert c.memory_usage("k") <= 101000
    assert all(c.execute_command("CF.MEXISTS", "k", *[i for i, g in zip(items(b"k", 110000), got)
                                                      if g == 1]))
    with pytest.raises(ResponseError, match="^Maximum expansions reached$"):
        c.execute_command("CF.ADD", "k", "one more")
    # a filter of CF_MAX_EXPANSIONS sub-filters takes no more adds
    c.execute_command("CF.RESERVE", "m", 4, "EXPANSION", 1)
    c.execute_command("CF.INSERT", "m", "ITEMS", *items(b"m", 12))
    assert int(c.execute_command("CF.DEBUG", "m").decode().split()[4][8:]) >= 3
    with pytest.raises(ResponseError, match="^Maximum expansions reached$"):
        c.execute_command("CF.ADD", "m", "x")
    assert c.config_set("sketch.cf-max-expansions", 10)
    assert c.execute_command("CF.ADD", "m", "x") == 1
    with pytest.raises(ResponseError, match="^Memory allocation failure$"):
        c.execute_command("CF.ADD", "k", "one more")


def half_restore(c, source, key):
    """Loads the header and the first piece of source's dump into key;
    returns the rest."""
    pieces = dump(c, source)
    for it, data in pieces[:2]:
        assert c.execute_command("CF.LOADCHUNK", key, it, data) == b"OK"
    return pieces[2:]


def assert_restoring(c, key):
    for command in (["CF.EXISTS", key, "a"], ["CF.ADD", key, "a"], ["CF.INFO", key],
                    ["CF.SCANDUMP", key, 0]):
        with pytest.raises(ResponseError, match="being restored"):
            c.execute_command(*command)


@pytest.mark.parametrize("how", ["restart", "debug-reload"])
def test_rdb(servers, how):
    s = servers.start(options={"dbfilename": "cf.rdb"})
    c = s.client()
    keys = populate(c)
    rest = half_restore(c, "cf:grown", "half")
    before = {k: observe(c, k) for k in keys}
    if how == "restart":
        assert c.save()
        s.restart()
        c = s.client()
    else:
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: observe(c, k) for k in keys} == before
    # the unfinished restore is still unfinished, and finishes as it would have
    assert_restoring(c, "half")
    for it, data in rest:
        assert c.execute_command("CF.LOADCHUNK", "half", it, data) == b"OK"
    assert observe(c, "half") == observe(c, "cf:grown")


def test_aof_rewrite_and_kill9(servers, tools):
    s = servers.start(options={"appendonly": "yes", "appendfsync": "always",
                               "aof-use-rdb-preamble": "no"})
    c = s.client()
    keys = populate(c)
    rest = half_restore(c, "cf:grown", "half")
    source = observe(c, "cf:grown")
    c.bgrewriteaof()
    tools.wait_for(lambda: tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="BGREWRITEAOF")
    base = open(max(glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof")),
                    key=os.path.getmtime), "rb").read()
    assert b"CF.IMPORT" in base and b"CF.INSERT" not in base
    c.execute_command("CF.INSERT", "cf:small", "ITEMS", *items(b"late", 50))
    c.execute_command("CF.DEL", "cf:grown", b"g400")
    before = {k: observe(c, k) for k in keys}
    s.kill9()
    s.start()
    c = s.client()
    assert {k: observe(c, k) for k in keys} == before
    assert_restoring(c, "half")
    for it, data in rest:
        c.execute_command("CF.LOADCHUNK", "half", it, data)
    assert observe(c, "half") == source


def test_dump_restore_copy(r, tools):
    keys = populate(r)
    for key in keys:
        payload = r.dump(key)
        assert r.restore("r:" + key, 0, payload)
        assert observe(r, "r:" + key) == observe(r, key)
        # a flipped bit with a right CRC64 is refused, or restores the very
        # same filter (where LZF's compression makes it change nothing)
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
        assert refused >= 20
    assert r.copy("cf:small", "copy") == 1
    r.execute_command("CF.ADD", "copy", "new")
    assert r.execute_command("CF.COUNT", "copy", "a") == 2
    assert r.execute_command("CF.EXISTS", "cf:small", "new") == 0
    # a filter half restored is copied half restored
    half_restore(r, "cf:grown", "half")
    assert r.copy("half", "half2") == 1
    assert_restoring(r, "half2")
    assert r.restore("half3", 0, r.dump("half"))
    assert_restoring(r, "half3")


def test_scandump_pieces_restore_the_filter(r):
    """A filter past 16 MB comes in pieces of at most 16 MB, and restores
    the same; a piece out of order is refused."""
    r.execute_command("CF.RESERVE", "big", 20000000, "BUCKETSIZE", 1)
    r.execute_command("CF.INSERT", "big", "ITEMS", *items(b"b", 1000))
    pieces = dump(r, "big")
    assert len(pieces) == 3 and [len(d) for _, d in pieces[1:]] == [16 << 20] * 2
    assert r.execute_command("CF.LOADCHUNK", "copy", *pieces[0]) == b"OK"
    with pytest.raises(ResponseError, match="^Couldn't load chunk!$"):
        r.execute_command("CF.LOADCHUNK", "copy", *pieces[2])
    for it, data in pieces[1:]:
        r.execute_command("CF.LOADCHUNK", "copy", it, data)
    assert r.execute_command("CF.EXPORT", "copy") == r.execute_command("CF.EXPORT", "big")
    with pytest.raises(ResponseError, match="the filter is complete"):
        r.execute_command("CF.LOADCHUNK", "copy", *pieces[1])


def test_replica_holds_the_same_filter_after_every_command(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    primary = servers.start(options=opts)
    p = primary.client()
    populate(p)
    replica = servers.start(options=opts,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.info_field(rc, "replication", "master_link_status") == "up",
                   timeout=30, what="replica link up")
    # limits the replica does not have: what the primary refused must not go in there
    p.config_set("sketch.max-key-memory", 200000)
    p.config_set("sketch.cf-max-expansions", 4)
    commands = [["CF.ADD", "new", "a"], ["CF.ADDNX", "new", "a"], ["CF.ADDNX", "new", "b"],
                ["CF.INSERT", "ins", "CAPACITY", 64, "ITEMS"] + items(b"i", 300),
                ["CF.INSERTNX", "ins", "ITEMS"] + items(b"i", 400),
                ["CF.RESERVE", "lim", 50000, "EXPANSION", 4],
                ["CF.INSERT", "lim", "ITEMS"] + items(b"l", 200000),
                ["CF.RESERVE", "fixed", 8, "EXPANSION", 0],
                ["CF.INSERT", "fixed", "ITEMS"] + items(b"f", 30),
                ["CF.DEL", "cf:grown", b"g500"], ["CF.DEL", "cf:grown", b"never"],
                ["CF.COMPACT", "cf:grown"],
                lambda: ["CF.IMPORT", "imp", p.execute_command("CF.EXPORT", "cf:small")],
                ["CF.ADD", "imp", "x"]]
    for it, data in dump(p, "cf:small"):
        commands.append(["CF.LOADCHUNK", "loaded", it, data])
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
    assert -1 in p.execute_command("CF.INSERT", "lim", "ITEMS", "one", "more")
    for key in ("new", "ins", "lim", "fixed", "cf:grown", "imp", "loaded"):
        assert observe(rc, key) == observe(p, key)
    with pytest.raises(ReadOnlyError):
        rc.execute_command("CF.ADD", "new", "a")


def test_redis_py_cf_unchanged(r):
    cf = r.cf()
    assert cf.create("f", 1000, bucket_size=4, max_iterations=10, expansion=2)
    assert cf.add("f", "a") == 1
    assert cf.addnx("f", "a") == 0
    assert cf.insert("f", ["b", "c"]) == [1, 1]
    assert cf.insertnx("f", ["c", "d"]) == [0, 1]
    assert cf.exists("f", "a") == 1
    assert cf.mexists("f", "a", "zz") == [1, 0]
    assert cf.count("f", "a") == 1
    assert cf.delete("f", "a") == 1
    info = cf.info("f")
    assert (info.insertedNum, info.deletedNum, info.bucketSize, info.expansionRate,
            info.maxIteration) == (3, 1, 4, 2, 10)
    it, pieces = 0, []
    while True:
        it, data = cf.scandump("f", it)
        if it == 0:
            break
        pieces.append((it, data))
    for it, data in pieces:
        assert cf.loadchunk("g", it, data)
    assert cf.mexists("g", "a", "b", "c", "d") == [0, 1, 1, 1]
