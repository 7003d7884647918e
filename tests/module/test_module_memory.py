# SPDX-License-Identifier: BSD-3-Clause
"""The module's memory as Redis sees it: every byte a filter or sketch holds
comes from Redis's allocator, so used_memory, MEMORY USAGE, maxmemory and the
process's real size agree; and the limits that apply to clients never apply
to what the server replays."""
import ctypes
import struct
import time

import pytest
import redis

from conftest import SERVER_PRELOAD, info_field, items, loadchunks, madd, mexists, scandump
from format_h import FORMAT

_xxhash = ctypes.CDLL("libxxhash.so.0")
_xxhash.XXH32.restype = ctypes.c_uint32
_xxhash.XXH32.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32]


def fix_header_checksum(head):
    """The header checksum of a Bloom dump header (src/common/format.h)."""
    layers = struct.unpack_from("<I", head, FORMAT["SK_BF_OFF_LAYERS"])[0]
    table = bytes(head[FORMAT["SK_BF_HEADER_SIZE"]:
                       FORMAT["SK_BF_HEADER_SIZE"] + layers * FORMAT["SK_BF_LAYER_SIZE"]])
    covered = bytes(head[:FORMAT["SK_BF_CHECKSUMMED_HEADER"]]) + table
    struct.pack_into("<I", head, FORMAT["SK_BF_OFF_CHECKSUM"],
                     _xxhash.XXH32(covered, len(covered), 0))


def wait_until(predicate, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


def used_memory(c):
    return int(info_field(c, "memory", "used_memory"))


def rss_bytes(server):
    with open("/proc/%d/status" % server.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def plain(servers):
    return servers.start(module_args=["MAX-KEY-MEMORY", "1gb"])


def test_a_large_filter_is_in_used_memory(plain):
    c = plain.client()
    before, rss_before = used_memory(c), rss_bytes(plain)
    assert c.execute_command("BF.RESERVE", "big", "0.01", "100000000", "NONSCALING") == b"OK"
    usage = c.memory_usage("big")
    grown, rss_grown = used_memory(c) - before, rss_bytes(plain) - rss_before
    assert usage > 100 << 20
    # used_memory counts the allocator's size class, up to a quarter more
    # for one large block (jemalloc has four classes per doubling); the pages
    # past what was asked for are never touched
    assert usage <= grown <= usage * 1.25 + (1 << 20), (usage, grown)
    if not SERVER_PRELOAD:  # ASan's shadow memory is RSS too
        # the bits are zeroed when reserved: the process holds what it said
        assert abs(rss_grown - usage) <= usage * 0.05 + (8 << 20), (usage, rss_grown)
    # adding items does not make it bigger than it said
    madd(c, "big", items(b"i", 20000))
    assert rss_bytes(plain) - rss_before <= usage * 1.05 + (16 << 20)
    c.delete("big")
    assert used_memory(c) - before < 1 << 20


def test_small_filters_cost_what_they_report(plain):
    c = plain.client()
    n = 100000
    before, rss_before = used_memory(c), rss_bytes(plain)
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.execute_command("BF.ADD", "user:%d" % i, "x")
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    per_key = (used_memory(c) - before) / n
    usage = c.memory_usage("user:7")
    # MEMORY USAGE: the filter (a few hundred bytes) and the key's own record
    assert usage < 600, usage
    assert per_key < 800, per_key
    if not SERVER_PRELOAD:
        rss_per_key = (rss_bytes(plain) - rss_before) / n
        assert rss_per_key < 1.5 * per_key + 64, (rss_per_key, per_key)
    assert all(c.execute_command("BF.EXISTS", "user:%d" % i, "x") for i in range(0, n, 997))


def test_maxmemory_refuses_what_would_grow(plain):
    c = plain.client()
    c.config_set("maxmemory-policy", "noeviction")
    c.config_set("maxmemory", used_memory(c) + (4 << 20))
    # the server now counts the filter, so after one that crosses the line
    # every further write is refused with its OOM error, plain SET included
    c.execute_command("BF.RESERVE", "a", "0.01", "5000000", "NONSCALING")
    for command in (["BF.RESERVE", "b", "0.01", "1000"],
                    ["BF.ADD", "a", "new"],
                    ["BF.ADD", "fresh", "x"],
                    ["BF.LOADCHUNK", "c", "1", b"x"],
                    ["HLL.ADD", "h", "x"],
                    ["SET", "s", "v"]):
        with pytest.raises(redis.exceptions.ResponseError) as e:
            c.execute_command(*command)
        assert str(e.value).startswith("OOM"), (command, e.value)
    assert c.execute_command("BF.EXISTS", "a", "anything") in (0, 1)
    c.config_set("maxmemory", 0)


def _filled_past(c, key, limit, capacity, n):
    """A filter of `capacity` at 0.01% given n items, whose memory (grown,
    when n passes the capacity) passes `limit`; its items."""
    its = items(b"%s-" % key.encode(), n)
    c.execute_command("BF.RESERVE", key, "0.0001", str(capacity))
    madd(c, key, its)
    assert c.memory_usage(key) > limit
    return its


def _grown_over(c, key, limit):
    return _filled_past(c, key, limit, 1000, 400000)


def _filter_over(c, key, limit):
    return _filled_past(c, key, limit, 500000, 5000)


def test_a_replica_with_a_lower_limit_keeps_every_filter(servers):
    primary = servers.start(module_args=["MAX-KEY-MEMORY", "64mb"])
    replica = servers.start(module_args=["MAX-KEY-MEMORY", "1mb"],
                            options={"repl-diskless-sync-delay": "0"})
    p, r = primary.client(), replica.client()
    before = _filter_over(p, "synced", 1 << 20)        # comes by the full sync
    r.execute_command("REPLICAOF", "127.0.0.1", str(primary.port))
    wait_until(lambda: info_field(r, "replication", "master_link_status") == "up", "the sync")
    after = _filter_over(p, "streamed", 1 << 20)        # comes by the stream
    grown = _grown_over(p, "grown", 1 << 20)            # grows by the stream
    p.wait(1, 10000)
    for key, its in (("synced", before), ("streamed", after), ("grown", grown)):
        assert all(mexists(r, key, its)), key
        assert r.execute_command("DEBUG", "DIGEST-VALUE", key) == \
            p.execute_command("DEBUG", "DIGEST-VALUE", key), key
    # the replica's own clients still get its limit
    r.execute_command("REPLICAOF", "NO", "ONE")
    with pytest.raises(redis.exceptions.ResponseError, match="MAX-KEY-MEMORY"):
        r.execute_command("BF.RESERVE", "mine", "0.0001", "500000")


def test_an_aof_replay_with_a_lower_limit_keeps_every_filter(servers):
    directory = servers.mkdir()
    opts = {"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no"}
    s = servers.start(module_args=["MAX-KEY-MEMORY", "64mb"], options=opts,
                      directory=directory)
    c = s.client()
    its = _filter_over(c, "logged", 1 << 20)
    _grown_over(c, "grown", 1 << 20)
    digests = {k: c.execute_command("DEBUG", "DIGEST-VALUE", k) for k in ("logged", "grown")}
    s.stop()
    s.module_args = ["MAX-KEY-MEMORY", "1mb"]
    s.start()
    c = s.client()
    assert all(mexists(c, "logged", its))
    for k, d in digests.items():
        assert c.execute_command("DEBUG", "DIGEST-VALUE", k) == d, k
    # and the rewrite of the log (LOADCHUNK pieces) replays the same way
    c.execute_command("BGREWRITEAOF")
    wait_until(lambda: info_field(c, "persistence", "aof_rewrite_in_progress") == "0" and
               info_field(c, "persistence", "aof_rewrite_scheduled") == "0", "the rewrite")
    s.stop()
    s.start()
    c = s.client()
    for k, d in digests.items():
        assert c.execute_command("DEBUG", "DIGEST-VALUE", k) == d, k


def test_digests_tell_filters_and_sketches_apart(r):
    r.execute_command("BF.RESERVE", "a", "0.01", "1000")
    r.execute_command("BF.RESERVE", "b", "0.01", "1000")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "a") == \
        r.execute_command("DEBUG", "DIGEST-VALUE", "b")
    r.execute_command("BF.ADD", "b", "x")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "a") != \
        r.execute_command("DEBUG", "DIGEST-VALUE", "b")
    r.execute_command("HLL.ADD", "h1", "x")
    r.execute_command("HLL.ADD", "h2", "x")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "h1") == \
        r.execute_command("DEBUG", "DIGEST-VALUE", "h2")
    r.execute_command("HLL.ADD", "h2", "y")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "h1") != \
        r.execute_command("DEBUG", "DIGEST-VALUE", "h2")


def test_loadchunk_never_drops_or_replaces_a_filter(r):
    r.execute_command("BF.RESERVE", "src", "0.01", "1000")
    madd(r, "src", items(b"s", 500))
    pieces = scandump(r, "src")
    r.execute_command("BF.ADD", "live", "kept")
    # a header onto a filter that exists
    with pytest.raises(redis.exceptions.ResponseError, match="item exists"):
        r.execute_command("BF.LOADCHUNK", "live", *pieces[0])
    loadchunks(r, "copy", pieces)
    # the last chunk again, onto the finished copy
    with pytest.raises(redis.exceptions.ResponseError, match="complete"):
        r.execute_command("BF.LOADCHUNK", "copy", *pieces[-1])
    assert all(mexists(r, "copy", items(b"s", 500)))
    assert r.execute_command("BF.EXISTS", "live", "kept") == 1


def test_a_failed_last_chunk_leaves_primary_and_replica_alike(servers):
    primary = servers.start()
    replica = servers.start(options={"repl-diskless-sync-delay": "0"})
    p, r = primary.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", str(primary.port))
    wait_until(lambda: info_field(r, "replication", "master_link_status") == "up", "the sync")
    p.execute_command("BF.RESERVE", "src", "0.01", "1000")
    madd(p, "src", items(b"s", 500))
    pieces = scandump(p, "src")
    for it, data in pieces[:-1]:
        p.execute_command("BF.LOADCHUNK", "copy", it, data)
    it, data = pieces[-1]
    bad = bytes([data[0] ^ 1]) + data[1:]
    with pytest.raises(redis.exceptions.ResponseError, match="checksum"):
        p.execute_command("BF.LOADCHUNK", "copy", it, bad)
    p.wait(1, 10000)
    assert p.exists("copy") == 0
    assert r.exists("copy") == 0
    assert r.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")


def test_a_crafted_header_cannot_get_around_the_limit(servers):
    """A first layer that claims a capacity of 2^63 and a second that is
    full: the next add grows from the newest layer by the library's own rule,
    and the key's limit refuses the layer it would make."""
    s = servers.start(module_args=["MAX-KEY-MEMORY", "1mb"])
    c = s.client()
    c.execute_command("BF.RESERVE", "src", "0.01", "100", "EXPANSION", "1024")
    madd(c, "src", items(b"s", 150))                   # two layers
    pieces = scandump(c, "src")
    head = bytearray(pieces[0][1])
    entry = FORMAT["SK_BF_HEADER_SIZE"]
    assert struct.unpack_from("<I", head, FORMAT["SK_BF_OFF_LAYERS"])[0] == 2
    struct.pack_into("<Q", head, entry + FORMAT["SK_BF_LAYER_OFF_CAPACITY"], 1 << 63)
    second = entry + FORMAT["SK_BF_LAYER_SIZE"]
    capacity = struct.unpack_from("<Q", head, second + FORMAT["SK_BF_LAYER_OFF_CAPACITY"])[0]
    struct.pack_into("<Q", head, second + FORMAT["SK_BF_LAYER_OFF_COUNT"], capacity)
    fix_header_checksum(head)
    loadchunks(c, "crafted", [(pieces[0][0], bytes(head))] + pieces[1:])
    before = c.memory_usage("crafted")
    with pytest.raises(redis.exceptions.ResponseError, match="MAX-KEY-MEMORY"):
        for i in range(1000):
            c.execute_command("BF.ADD", "crafted", "new-%d" % i)
    assert c.memory_usage("crafted") == before
    assert all(mexists(c, "crafted", items(b"s", 150)))


def _dense_redis_string(value):
    """A Redis HyperLogLog string, dense, every register holding value."""
    regs = [value] * 16384
    body = bytearray(12288)
    for i, v in enumerate(regs):
        bit = i * 6
        body[bit // 8] |= (v << (bit % 8)) & 0xff
        if bit % 8 > 2:
            body[bit // 8 + 1] |= v >> (8 - bit % 8)
    return b"HYLL" + b"\x00" * 11 + b"\x80" + bytes(body)


def test_any_registers_give_finite_replies(r):
    r.execute_command("HLL.IMPORT", "max", _dense_redis_string(51))
    count = r.execute_command("HLL.COUNT", "max")
    assert 0 < count <= (1 << 63) - 1
    estimate = r.execute_command("HLL.ESTIMATE", "max")
    assert estimate[0] == count
    assert all(0 <= x <= (1 << 63) - 1 for x in estimate[2:])
    rse = float(estimate[1])
    assert 0 < rse < 1
    # HLL.COMPARE of registers no stream can fill: counts saturate instead
    # of wrapping negative, and every error is a number
    compare = r.execute_command("HLL.COMPARE", "max", "max")
    fields = dict(zip(compare[0::2], compare[1::2]))
    assert len(fields) == 25 and fields[b"union"] == (1 << 63) - 1
    for name, value in fields.items():
        if isinstance(value, int):
            assert 0 <= value <= (1 << 63) - 1, (name, value)
        else:
            assert float(value) >= 0, (name, value)


def test_merge_into_a_native_key_keeps_it_native(r):
    r.pfadd("pf", "a", "b")
    r.execute_command("HLL.ADD", "sk", "b", "c")
    assert r.execute_command("HLL.MERGE", "pf", "sk") == b"OK"
    assert r.type("pf") == b"string"
    assert r.pfcount("pf") == 3
    r.pfadd("pf", "d")                                   # still a PF key
    assert r.pfcount("pf") == 4
    # a sketch of lower precision cannot be written as a Redis string
    r.execute_command("HLL.RESERVE", "low", "10")
    r.execute_command("HLL.ADD", "low", "z")
    with pytest.raises(redis.exceptions.ResponseError, match="precision 14"):
        r.execute_command("HLL.MERGE", "pf", "low")
    assert r.pfcount("pf") == 4
