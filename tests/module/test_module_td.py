# SPDX-License-Identifier: BSD-3-Clause
"""TDIGEST.* where sketch.so does more than RedisBloom, or where the server's
machinery is involved: the library's bytes (TDIGEST.EXPORT / IMPORT); the
key's memory limit; RDB, AOF rewrite and kill -9, DUMP/RESTORE, COPY, each
keeping the buffer, so that a digest read back compresses where the original
would have; reads that compress on a primary and send TDIGEST.COMPRESS, so
that a replica holds the same digest after every command, and reads on the
replica that change nothing; CLIENT PAUSE WRITE holding those reads, as it
holds PFCOUNT; keyspace events; and redis-py's r.tdigest() unchanged.
test_module_td_redisbloom.py checks the replies against RedisBloom's."""
import glob
import os
import random
import socket
import struct

import pytest
from redis.exceptions import ReadOnlyError, ResponseError

from format_h import FORMAT


def values(seed, n):
    rng = random.Random(seed)
    return ["%.6f" % rng.expovariate(0.01) for _ in range(n)]


def populate(c):
    """A digest with centroids and a buffer, a small one, and an empty one."""
    c.execute_command("TDIGEST.CREATE", "td:big", "COMPRESSION", 50)
    for i in range(5):
        c.execute_command("TDIGEST.ADD", "td:big", *values(i, 170))
    c.execute_command("TDIGEST.CREATE", "td:small")
    c.execute_command("TDIGEST.ADD", "td:small", 1, 2, 2, 3.5, -4)
    c.execute_command("TDIGEST.CREATE", "td:empty", "COMPRESSION", 7)
    return ["td:big", "td:small", "td:empty"]


def state(c, key):
    """Everything but the answers: the digest's bytes, buffer included."""
    return c.execute_command("TDIGEST.EXPORT", key)


def info(c, key):
    return dict(zip(*[iter(c.execute_command("TDIGEST.INFO", key))] * 2))


def test_export_import(r):
    for key in populate(r):
        blob = state(r, key)
        f = FORMAT
        assert blob[:4] == f["SK_TDIGEST_MAGIC"] and blob[f["SK_TDIGEST_OFF_VERSION"]] == 1
        (unmerged,) = struct.unpack_from("<I", blob, f["SK_TDIGEST_OFF_UNMERGED"])
        assert unmerged == info(r, key)[b"Unmerged nodes"]
        assert r.execute_command("TDIGEST.IMPORT", "copy:" + key, blob) == b"OK"
        assert state(r, "copy:" + key) == blob
    assert info(r, "td:big")[b"Unmerged nodes"] > 0
    q = ["TDIGEST.QUANTILE", "0.01", "0.5", "0.99"]
    assert r.execute_command(q[0], "copy:td:big", *q[1:]) == \
        r.execute_command(q[0], "td:big", *q[1:])
    blob = state(r, "td:small")
    r.set("s", "v")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        r.execute_command("TDIGEST.IMPORT", "s", blob)
    flipped = blob[:-1] + bytes([blob[-1] ^ 1])
    for bad in (b"", blob[:-1], flipped, b"XXXX" + blob[4:]):
        with pytest.raises(ResponseError, match="^T-Digest: not a t-digest: "):
            r.execute_command("TDIGEST.IMPORT", "new", bad)
    assert r.exists("new") == 0
    with pytest.raises(ResponseError, match="^T-Digest: key does not exist$"):
        r.execute_command("TDIGEST.EXPORT", "missing")


def test_key_limit(servers):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "100000"))
    c = s.client()
    with pytest.raises(ResponseError, match="^T-Digest: the t-digest would take [0-9]+ bytes, "
                                            "more than the module's MAX-KEY-MEMORY of 100000$"):
        c.execute_command("TDIGEST.CREATE", "k", "COMPRESSION", 2000)
    with pytest.raises(ResponseError, match="^T-Digest: compression parameter needs to be at "
                                            "most 357913939$"):
        c.execute_command("TDIGEST.CREATE", "k", "COMPRESSION", 357913940)
    assert c.exists("k") == 0
    c.execute_command("TDIGEST.CREATE", "k", "COMPRESSION", 1000)
    c.execute_command("TDIGEST.ADD", "k", *values(1, 20000))
    assert c.memory_usage("k") <= 100000
    # a merge at a compression past the limit, and the import of a digest of it
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        c.execute_command("TDIGEST.MERGE", "m", 1, "k", "COMPRESSION", 5000)
    c.config_set("sketch.max-key-memory", 10 << 20)
    c.execute_command("TDIGEST.MERGE", "m", 1, "k", "COMPRESSION", 5000)
    blob = state(c, "m")
    c.config_set("sketch.max-key-memory", 100000)
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        c.execute_command("TDIGEST.IMPORT", "m2", blob)
    # RESTORE too: the payload is small, the capacity it allows is not
    payload = c.dump("m")
    assert len(payload) < 100000
    with pytest.raises(ResponseError, match="Bad data format"):
        c.restore("m3", 0, payload)
    assert c.exists("m2") == 0 and c.exists("m3") == 0
    assert c.restore("k2", 0, c.dump("k"))


def test_memory_grows_with_the_digest(r):
    r.execute_command("TDIGEST.CREATE", "k", "COMPRESSION", 500)
    empty = r.memory_usage("k")
    r.execute_command("TDIGEST.ADD", "k", *values(2, 2000))
    full = r.memory_usage("k")
    assert empty < 2000 and full > empty + 16 * 1000
    assert info(r, "k")[b"Memory usage"] <= full


@pytest.mark.parametrize("how", ["restart", "debug-reload"])
def test_rdb(servers, how):
    s = servers.start(options={"dbfilename": "td.rdb"})
    c = s.client()
    keys = populate(c)
    before = {k: state(c, k) for k in keys}
    if how == "restart":
        assert c.save()
        s.restart()
        c = s.client()
    else:
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert {k: state(c, k) for k in keys} == before  # saving did not compress


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
    assert b"TDIGEST.IMPORT" in base and b"TDIGEST.ADD" not in base
    # a read compresses, and the AOF carries that compression
    c.execute_command("TDIGEST.ADD", "td:small", 10, 11)
    c.execute_command("TDIGEST.QUANTILE", "td:big", 0.5)
    c.execute_command("TDIGEST.ADD", "td:big", *values(9, 100))
    before = {k: state(c, k) for k in keys}
    s.kill9()
    s.start()
    c = s.client()
    assert {k: state(c, k) for k in keys} == before


def test_dump_restore_copy(r, tools):
    keys = populate(r)
    for key in keys:
        payload = r.dump(key)
        assert r.restore("r:" + key, 0, payload)
        assert state(r, "r:" + key) == state(r, key)
        refused = 0
        for at in range(20, len(payload) - 10, max(1, (len(payload) - 30) // 40)):
            body = bytearray(payload[:-10])
            body[at] ^= 0x40
            try:
                r.restore("bad", 0, tools.with_crc(bytes(body) + payload[-10:-8]), replace=True)
                assert state(r, "bad") == state(r, key), at
            except ResponseError as e:
                assert "Bad data format" in str(e)
                refused += 1
        assert refused >= min(20, (len(payload) - 30) // 2)
    assert r.copy("td:small", "copy") == 1
    r.execute_command("TDIGEST.ADD", "copy", 100)
    assert r.execute_command("TDIGEST.MAX", "copy") == b"100"
    assert r.execute_command("TDIGEST.MAX", "td:small") == b"3.5"


def test_replica_holds_the_same_digest_after_every_command(servers, tools):
    opts = {"repl-diskless-sync-delay": 0}
    primary = servers.start(options=opts)
    p = primary.client()
    populate(p)
    replica = servers.start(options=opts,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.info_field(rc, "replication", "master_link_status") == "up",
                   timeout=30, what="replica link up")
    p.config_set("sketch.max-key-memory", 300000)  # a limit the replica does not have
    commands = [["TDIGEST.QUANTILE", "td:big", 0.1, 0.9], ["TDIGEST.ADD", "td:big", 1, 2, 3],
                ["TDIGEST.CDF", "td:big", 50], ["TDIGEST.ADD", "td:big", *values(3, 400)],
                ["TDIGEST.RANK", "td:big", -5], ["TDIGEST.RANK", "td:big", 40],
                ["TDIGEST.ADD", "td:big", 4], ["TDIGEST.BYRANK", "td:big", 0, 10**9],
                ["TDIGEST.BYREVRANK", "td:big", 3], ["TDIGEST.ADD", "td:small", 9],
                ["TDIGEST.TRIMMED_MEAN", "td:small", 0.1, 0.9],
                ["TDIGEST.ADD", "td:small", 8], ["TDIGEST.MIN", "td:small"],
                ["TDIGEST.MERGE", "m", 2, "td:big", "td:small"],
                ["TDIGEST.ADD", "td:big", *values(4, 50)],
                ["TDIGEST.MERGE", "m", 2, "m", "td:big", "OVERRIDE"],
                ["TDIGEST.CREATE", "c", "COMPRESSION", 5000],
                ["TDIGEST.CREATE", "c"], ["TDIGEST.ADD", "c", 1, 2, "x"],
                ["TDIGEST.ADD", "c", 1, 2], ["TDIGEST.COMPRESS", "c"], ["TDIGEST.RESET", "c"],
                lambda: ["TDIGEST.IMPORT", "imp", p.execute_command("TDIGEST.EXPORT", "td:big")],
                ["TDIGEST.QUANTILE", "imp", 0.5]]
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
    assert p.exists("c") == 1 and info(p, "c")[b"Compression"] == 100
    # a read on the replica answers as the primary would, and changes nothing
    p.execute_command("TDIGEST.ADD", "td:big", *values(5, 30))
    assert p.execute_command("WAIT", 1, 10000) == 1
    assert info(rc, "td:big")[b"Unmerged nodes"] > 0
    on_replica = rc.execute_command("TDIGEST.QUANTILE", "td:big", 0.3, 0.7)
    assert info(rc, "td:big")[b"Unmerged nodes"] > 0
    assert p.execute_command("TDIGEST.QUANTILE", "td:big", 0.3, 0.7) == on_replica
    assert info(p, "td:big")[b"Unmerged nodes"] == 0
    assert p.execute_command("WAIT", 1, 10000) == 1
    assert info(rc, "td:big")[b"Unmerged nodes"] == 0  # the primary's compression came
    assert rc.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")
    with pytest.raises(ReadOnlyError):
        rc.execute_command("TDIGEST.ADD", "td:big", 1)


def test_client_pause_write_holds_compressing_reads(r, tools):
    """A read that may compress is may-replicate: held by CLIENT PAUSE
    WRITE, as PFCOUNT is; MIN is not."""
    r.execute_command("TDIGEST.CREATE", "k")
    r.execute_command("TDIGEST.ADD", "k", 1, 2, 3)
    port = r.connection_pool.connection_kwargs["port"]
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    try:
        assert r.execute_command("TDIGEST.MIN", "k") == b"1"
        held = socket.create_connection(("127.0.0.1", port), timeout=10)
        held.sendall(b"*3\r\n$16\r\nTDIGEST.QUANTILE\r\n$1\r\nk\r\n$3\r\n0.5\r\n")
        tools.wait_for(lambda: tools.info_field(r, "clients", "blocked_clients") == "1",
                       timeout=10, what="the read held")
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    assert held.recv(100) == b"*1\r\n$1\r\n2\r\n"
    held.close()


def test_keyspace_events(r):
    r.config_set("notify-keyspace-events", "KEg")
    sub = r.pubsub()
    sub.psubscribe("__keyspace@0__:t*")
    sub.get_message(timeout=5)
    r.execute_command("TDIGEST.CREATE", "t")
    r.execute_command("TDIGEST.ADD", "t", 1)
    r.execute_command("TDIGEST.QUANTILE", "t", 0.5)
    r.execute_command("TDIGEST.MERGE", "t2", 1, "t")
    r.execute_command("TDIGEST.RESET", "t")
    r.execute_command("TDIGEST.IMPORT", "t3", r.execute_command("TDIGEST.EXPORT", "t2"))
    got = []
    while True:
        m = sub.get_message(timeout=1)
        if m is None:
            break
        got.append((m["channel"], m["data"]))
    assert got == [(b"__keyspace@0__:t", b"tdigest.create"), (b"__keyspace@0__:t", b"tdigest.add"),
                   (b"__keyspace@0__:t2", b"tdigest.merge"),
                   (b"__keyspace@0__:t", b"tdigest.reset"),
                   (b"__keyspace@0__:t3", b"tdigest.import")]


def test_redis_py_tdigest_unchanged(r):
    """Debian's redis-py (4.3) speaks RedisBloom 2.4's t-digest: its CREATE,
    ADD and MERGE have other arguments, and its QUANTILE and CDF read one
    number, where RedisBloom 2.6 replies an array, as sketch.so does. Its
    other calls work."""
    r.execute_command("TDIGEST.CREATE", "a", "COMPRESSION", 50)
    r.execute_command("TDIGEST.ADD", "a", *range(1, 11))
    td = r.tdigest()
    assert td.min("a") == 1.0 and td.max("a") == 10.0
    i = td.info("a")
    assert (i.compression, i.capacity, i.mergedNodes, i.unmergedNodes) == (50, 310, 0, 10)
    assert td.reset("a")
    assert td.info("a").unmergedNodes == 0
    with pytest.raises(ResponseError, match="wrong number of arguments"):
        td.create("b", 100)


def test_acl_category(servers):
    """@tdigest, RedisBloom's category in Redis 8, on servers where modules
    name categories (Redis 7.2+, Valkey); none on Redis 7.0."""
    from resp import RespClient, plain
    s = servers.start()
    c = s.client()
    version = tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:3])
    with RespClient(s.port) as rc:
        for name in ("tdigest.add", "tdigest.quantile", "tdigest.merge", "tdigest.info"):
            info = rc.call("COMMAND", "INFO", name).value[0].value
            categories = {x if isinstance(x, str) else x.decode() for x in plain(info[6])}
            if version >= (7, 2, 0):
                assert "@tdigest" in categories, (name, categories)
                assert len({"@read", "@write"} & categories) == 1, (name, categories)
            else:
                assert not categories & {"@tdigest", "@read", "@write"}, (name, categories)
