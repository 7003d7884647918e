# SPDX-License-Identifier: BSD-3-Clause
"""One set of bytes: the Redis module (sketch.so in a private
redis-server, read with redis-py) and the Python classes make the same
sketches from the same items and commands. Each family is built both ways;
the module's EXPORT equals the class's to_bytes, and a class's bytes
IMPORTed into the module answer as the class does."""
import os

import pytest

import sketch
from conftest import REDIS_SERVER
from private_redis import redis_client

MODULE = os.environ.get("SKETCH_MODULE", os.path.join(os.path.dirname(__file__), "..", "..",
                                                      "build", "module", "sketch.so"))
ITEMS = ["visitor-%d" % (i % 3000) for i in range(9000)] + [42, -7, 1.5, True, b"\x00\xff"]
# What the module is sent: each item's bytes (redis-py refuses a bool, and
# would send a float's repr, not its text).
WIRE = [sketch.item_bytes(item) for item in ITEMS]


@pytest.fixture(scope="module")
def r():
    if not os.path.exists(MODULE):
        pytest.fail("no module at %s (build it, or set SKETCH_MODULE)" % MODULE, pytrace=False)
    with redis_client(REDIS_SERVER, "sketch-py-module-", ("--loadmodule", MODULE)) as client:
        yield client


def in_chunks(items, size=500):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def test_hll_keys(r):
    for chunk in in_chunks(WIRE):
        r.execute_command("HLL.ADD", "py:hll", *chunk)
    h = sketch.HyperLogLog()
    h.update(ITEMS)
    assert r.execute_command("HLL.EXPORT", "py:hll") == h.to_redis()
    assert r.execute_command("HLL.COUNT", "py:hll") == h.count()
    r.execute_command("HLL.IMPORT", "py:mine", h.to_bytes())
    assert r.execute_command("HLL.EXPORT", "py:mine") == h.to_redis()


def test_cms_keys(r):
    r.execute_command("CMS.INITBYDIM", "py:cms", 500, 4)
    c = sketch.CountMinSketch(500, 4)
    for i, item in enumerate(ITEMS):
        c.add(item, 1 + i % 3)
    for chunk in in_chunks(list(enumerate(WIRE)), 200):
        args = [x for i, item in chunk for x in (item, 1 + i % 3)]
        r.execute_command("CMS.INCRBY", "py:cms", *args)
    assert r.execute_command("CMS.EXPORT", "py:cms") == c.to_bytes()


def test_topk_keys(r):
    r.execute_command("TOPK.RESERVE", "py:topk", 10, 50, 5, 0.9)
    t = sketch.TopK(10, width=50, depth=5, decay=0.9)
    t.update(ITEMS)
    for chunk in in_chunks(WIRE):
        r.execute_command("TOPK.ADD", "py:topk", *chunk)
    assert r.execute_command("TOPK.EXPORT", "py:topk") == t.to_bytes()
    listed = r.execute_command("TOPK.LIST", "py:topk", "WITHCOUNT")
    pairs = [(listed[i].decode("utf-8", "surrogateescape"), listed[i + 1])
             for i in range(0, len(listed), 2)]
    assert pairs == t.list()


def test_cuckoo_keys(r):
    r.execute_command("CF.RESERVE", "py:cf", 2000, "BUCKETSIZE", 2, "EXPANSION", 1)
    c = sketch.CuckooFilter(2000, bucket_size=2, expansion=1)
    for item in ITEMS[:4000]:
        c.add(item)
    for chunk in in_chunks(WIRE[:4000]):
        r.execute_command("CF.INSERT", "py:cf", "ITEMS", *chunk)
    assert r.execute_command("CF.EXPORT", "py:cf") == c.to_bytes()
    r.execute_command("CF.IMPORT", "py:cf2", c.to_bytes())
    probes = ["visitor-%d" % i for i in range(2990, 3010)]
    assert [bool(x) for x in r.execute_command("CF.MEXISTS", "py:cf2", *probes)] == \
        c.contains_many(probes)


def test_tdigest_keys(r):
    values = [float((i * 7919) % 10007) / 7 for i in range(5000)]
    r.execute_command("TDIGEST.CREATE", "py:td", "COMPRESSION", 100)
    for chunk in in_chunks(values):
        r.execute_command("TDIGEST.ADD", "py:td", *chunk)
    t = sketch.TDigest(100)
    for chunk in in_chunks(values):
        t.update(chunk)
    assert r.execute_command("TDIGEST.EXPORT", "py:td") == t.to_bytes()
    q = r.execute_command("TDIGEST.QUANTILE", "py:td", 0.5, 0.99)
    assert [float(x) for x in q] == [t.quantile(0.5), t.quantile(0.99)]
