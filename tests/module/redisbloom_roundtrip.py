# SPDX-License-Identifier: BSD-3-Clause
"""The way back: what sketch.so writes of RedisBloom's types, RedisBloom 2.6.28 reads.

Not part of the normal suite (pytest collects test_*.py only): run it by hand
when RedisBloom 2.6.28 is built beside the project
(../shared/reference/redisbloom-build.md says how):

    SKETCH_REDISBLOOM=/path/to/RedisBloom-2.6.28/bin/linux-x64-release/redisbloom.so \\
    SKETCH_MODULE=$PWD/build/module/sketch.so \\
        /usr/bin/python3 tests/module/redisbloom_roundtrip.py [pytest options]

(or `python3 -m pytest tests/module/redisbloom_roundtrip.py`, which collects a
file named on its command line). Both servers are Debian's /usr/bin/redis-server
7.0 (SKETCH_REDIS_SERVER, as for the suite; RedisBloom 2.6 needs Redis 7.0, and
a DUMP of Valkey 8 does not RESTORE into it). Without SKETCH_REDISBLOOM every
test is skipped.

Each test gives a server with sketch.so RedisBloom's data as the migration
fixture holds it (tests/fixtures/redisbloom-2.6.28/migration), takes it out
again through sketch.so, puts that into a server with RedisBloom, and asks
RedisBloom for every answer of answers.json (the reads, and the writes, each
protocol's on a fresh copy), as test_module_migration.py asks sketch.so:

  * the RDB: sketch.so loads RedisBloom's RDB and SAVEs; RedisBloom starts on
    that file (and DEBUG RELOAD NOSAVE reloads it between the runs);
  * the chunks: BF.SCANDUMP / CF.SCANDUMP of every Bloom and cuckoo key from
    sketch.so, BF.LOADCHUNK / CF.LOADCHUNK into RedisBloom;
  * the DUMPs: DUMP of every key from sketch.so, RESTORE into RedisBloom.

test_payloads_as_redisbloom_writes_them also reports where sketch.so's DUMP
payloads and chunks differ, byte for byte, from RedisBloom's own (the top-k
heap aside, which RedisBloom saves with its item pointers in it).
"""
import binascii
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pytest.register_assert_rewrite("migration_fixture")  # its asserts report as a test module's
import migration_fixture as mig  # noqa: E402
from resp import RespClient  # noqa: E402  (tests/common, put on the path by mig)

REDISBLOOM = os.environ.get("SKETCH_REDISBLOOM", "")

pytestmark = pytest.mark.skipif(
    not os.path.isfile(REDISBLOOM),
    reason="SKETCH_REDISBLOOM does not name RedisBloom 2.6.28's redisbloom.so")


def redisbloom(servers, rdb=None):
    """A server with RedisBloom (and without sketch.so), on a copy of rdb."""
    d = servers.mkdir("redisbloom-")
    options = {"dbfilename": "from-sketch.rdb"}
    if rdb is not None:
        shutil.copyfile(rdb, os.path.join(d, "from-sketch.rdb"))
    s = servers.start(options=options, directory=d, load_module=False,
                      extra_args=["--loadmodule", REDISBLOOM])
    mods = [dict(zip(m[::2], m[1::2])) for m in s.client().execute_command("MODULE", "LIST")]
    assert [m[b"name"] for m in mods] == [b"bf"], "RedisBloom is not the module: %s" % mods
    return s


def scandumps(port, keys):
    family = {e["key"]: e["family"] for e in mig.fixture("dumps.json")["keys"]}
    out = {}
    with RespClient(port) as c:
        for k in keys:
            pieces, it = [], 0
            while True:
                reply = c.call(family[k].upper() + ".SCANDUMP", k, str(it))
                assert reply.kind == "array", (k, reply)
                it = reply.value[0].value
                if it == 0:
                    break
                pieces.append([it, binascii.hexlify(reply.value[1].value).decode()])
                assert len(pieces) < 1000
            out[k] = pieces
    return out


def dumps(port, keys):
    with RespClient(port) as c:
        out = {}
        for k in keys:
            reply = c.call("DUMP", k)
            assert reply.kind == "bulk", (k, reply)
            out[k] = reply.value
        return out


def test_rdb_saved_by_sketch_loads_into_redisbloom(servers):
    s = mig.start_on_fixture(servers)
    assert s.client().save()
    rb = redisbloom(servers, os.path.join(s.dir, "redisbloom.rdb"))
    assert "DB loaded from disk" in rb.log()
    assert rb.client().dbsize() == len(mig.all_keys())
    mig.check(rb.port, mig.all_keys(), mig.debug_reload(rb.port), reset_first=False)


def test_chunks_of_sketch_load_into_redisbloom(servers):
    s = mig.start_on_fixture(servers)
    keys = mig.all_keys(("bf", "cf"))
    chunks = scandumps(s.port, keys)
    rb = redisbloom(servers)
    mig.check(rb.port, keys, mig.loadchunk_all(rb.port, keys, chunks))


def test_dumps_of_sketch_restore_into_redisbloom(servers):
    s = mig.start_on_fixture(servers)
    keys = mig.all_keys()
    payloads = dumps(s.port, keys)
    rb = redisbloom(servers)

    def reset():
        with RespClient(rb.port) as c:
            assert c.call("FLUSHALL").kind == "simple"
            for k in keys:
                reply = c.call("RESTORE", k, "0", payloads[k])
                assert reply == ("simple", "OK"), "RESTORE of sketch.so's %s: %s" % (k, reply)
    mig.check(rb.port, keys, reset)


def _first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b)) if len(a) != len(b) else None


def test_payloads_as_redisbloom_writes_them(servers):
    """sketch.so's DUMP bodies (RDB version and CRC aside, taken with
    rdbcompression no) and SCANDUMP chunks, byte for byte against
    RedisBloom's; the top-k's heap entries are compared without their
    item pointers."""
    s = mig.start_on_fixture(servers)
    s.client().config_set("rdbcompression", "no")
    keys = mig.all_keys()
    mine = dumps(s.port, keys)
    theirs = {e["key"]: binascii.unhexlify(e["dump"]) for e in mig.fixture("dumps.json")["keys"]}
    family = {e["key"]: e["family"] for e in mig.fixture("dumps.json")["keys"]}
    diffs = []
    for k in keys:
        a, b = theirs[k][:-10], mine[k][:-10]
        if family[k] == "topk":
            ha, fa, _ = mig.parse_module_value(theirs[k])
            hb, fb, _ = mig.parse_module_value(mine[k])
            strip = lambda heap: b"".join(heap[i:i + 8] + heap[i + 16:i + 20]  # noqa: E731
                                          for i in range(0, len(heap), 24))
            fa[5], fb[5] = ("string", strip(fa[5][1])), ("string", strip(fb[5][1]))
            if (ha, fa) != (hb, fb):
                diffs.append("%s: the values differ: %s" % (
                    k, [i for i, (x, y) in enumerate(zip(fa, fb)) if x != y][:8]
                    or "%d against %d values" % (len(fb), len(fa))))
            continue
        at = _first_difference(a, b)
        if at is not None:
            diffs.append("%s: DUMP differs from byte %d (%d bytes against RedisBloom's %d)"
                         % (k, at, len(b), len(a)))
    chunks = scandumps(s.port, mig.all_keys(("bf", "cf")))
    recorded = mig.fixture("chunks.json")["chunks"]
    for k, pieces in chunks.items():
        if pieces != recorded[k]:
            diffs.append("%s: SCANDUMP chunks differ: %s against RedisBloom's %s" % (
                k, [(it, len(h) // 2) for it, h in pieces],
                [(it, len(h) // 2) for it, h in recorded[k]]))
    assert not diffs, "\n".join(diffs)


if __name__ == "__main__":
    sys.exit(pytest.main([os.path.abspath(__file__), "-v", "-p", "no:cacheprovider"]
                         + sys.argv[1:]))
