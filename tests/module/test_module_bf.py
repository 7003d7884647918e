# SPDX-License-Identifier: BSD-3-Clause
"""BF.* through redis-py's r.bf() unchanged, and the RedisBloom surface of
/work/shared/reference/redisbloom-commands.md: replies, defaults, options,
errors, BF.INFO in both forms, SCANDUMP/LOADCHUNK, and false-positive rates.
"""
import math
import random

import pytest
import redis
from redis.exceptions import ResponseError

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def info_dict(raw, key):
    reply = raw.execute_command("BF.INFO", key)
    assert len(reply) == 10, reply
    names = [x.decode() if isinstance(x, bytes) else x for x in reply[0::2]]
    assert names == ["Capacity", "Size", "Number of filters", "Number of items inserted",
                     "Expansion rate"]
    return dict(zip(names, reply[1::2]))


def err(excinfo):
    return str(excinfo.value)


# --------------------------------------------------------------------------
# Replies through redis-py's r.bf()
# --------------------------------------------------------------------------

def test_reserve_add_exists_through_redis_py(r):
    bf = r.bf()
    assert bf.create("f", 0.01, 1000) is True
    assert bf.add("f", "alice") == 1
    assert bf.add("f", "alice") == 0
    assert bf.exists("f", "alice") == 1
    assert bf.exists("f", "bob") == 0
    assert bf.madd("f", "bob", "carol", "alice") == [1, 1, 0]
    assert bf.mexists("f", "alice", "bob", "carol", "dave") == [1, 1, 1, 0]
    assert r.execute_command("BF.CARD", "f") == 3
    info = bf.info("f")
    assert info.capacity == 1000
    assert info.filterNum == 1
    assert info.insertedNum == 3
    assert info.expansionRate == 2
    assert isinstance(info.size, int) and info.size > 0
    # binary items, NUL bytes included, are distinct items
    assert bf.madd("f", b"a\x00b", b"a\x00c", b"") == [1, 1, 1]
    assert bf.mexists("f", b"a\x00b", b"a\x00c", b"", b"a") == [1, 1, 1, 0]


def test_reserve_options_any_order_and_case(r, raw):
    bf = r.bf()
    assert bf.create("e", 0.01, 500, expansion=4) is True
    assert bf.info("e").expansionRate == 4
    assert bf.create("n", 0.01, 500, noScale=True) is True
    assert bf.info("n").expansionRate is None
    assert raw.execute_command("BF.RESERVE", "x1", "0.001", "50", "expansion", "3") == b"OK"
    assert info_dict(raw, "x1")["Expansion rate"] == 3
    assert raw.execute_command("BF.RESERVE", "x2", "0.001", "50", "nonscaling") == b"OK"
    assert info_dict(raw, "x2")["Expansion rate"] is None
    assert raw.execute_command("BF.RESERVE", "x3", "0.5", "10", "EXPANSION", "1") == b"OK"
    assert info_dict(raw, "x3")["Expansion rate"] == 1
    with pytest.raises(ResponseError):
        raw.execute_command("BF.RESERVE", "x4", "0.01", "10", "BOGUS")
    with pytest.raises(ResponseError, match="no expansion"):
        raw.execute_command("BF.RESERVE", "x4", "0.01", "10", "EXPANSION")
    with pytest.raises(ResponseError):
        raw.execute_command("BF.RESERVE", "x4", "0.01", "10", "EXPANSION", "2", "NONSCALING")
    assert raw.exists("x4") == 0


def test_add_on_missing_key_creates_defaults(r):
    bf = r.bf()
    assert bf.add("d", "x") == 1
    info = bf.info("d")
    assert (info.capacity, info.filterNum, info.insertedNum, info.expansionRate) == (100, 1, 1, 2)
    # error 0.01 by default: the same size as an explicit BF.RESERVE 0.01 100
    bf.create("explicit", 0.01, 100)
    assert info.size == bf.info("explicit").size
    bf.create("other", 0.001, 100)
    assert bf.info("other").size != info.size
    assert r.type("d") != b"none"
    # BF.MADD and BF.INSERT create with the same defaults
    assert bf.madd("m", "a", "b") == [1, 1]
    assert bf.insert("i", ["a"]) == [1]
    for k in ("m", "i"):
        i = bf.info(k)
        assert (i.capacity, i.size, i.filterNum, i.expansionRate) == (100, info.size, 1, 2)


def test_info_single_fields(r, raw):
    r.bf().create("f", 0.01, 1000, expansion=3)
    r.bf().madd("f", "a", "b", "c")
    full = info_dict(raw, "f")
    for field, name in [("CAPACITY", "Capacity"), ("SIZE", "Size"),
                        ("FILTERS", "Number of filters"), ("ITEMS", "Number of items inserted"),
                        ("EXPANSION", "Expansion rate"), ("capacity", "Capacity"),
                        ("items", "Number of items inserted")]:
        assert raw.execute_command("BF.INFO", "f", field) == [full[name]], field
    assert raw.execute_command("BF.INFO", "f", "ITEMS") == [3]
    with pytest.raises(ResponseError):
        raw.execute_command("BF.INFO", "f", "BOGUS")
    r.bf().create("n", 0.01, 10, noScale=True)
    assert raw.execute_command("BF.INFO", "n", "EXPANSION") == [None]


def test_type_and_memory_usage(r):
    r.execute_command("BF.RESERVE", "big", "0.01", "1000000")
    r.execute_command("BF.ADD", "small", "x")
    assert r.type("big") == r.type("small") == b"sketch-bf"
    size = r.execute_command("BF.INFO", "big", "SIZE")[0]
    assert 1_000_000 < size < 2_000_000          # about 9.6 bits per item at 1%
    assert size <= r.memory_usage("big") < size + 64 * 1024
    assert r.memory_usage("small") < 4096


def test_insert_options(r, raw):
    bf = r.bf()
    assert bf.insert("k", ["a", "b", "a"], capacity=50, error=0.001, expansion=4) == [1, 1, 0]
    info = bf.info("k")
    assert (info.capacity, info.expansionRate, info.insertedNum) == (50, 4, 2)
    explicit = bf.create("ref", 0.001, 50)
    assert explicit and bf.info("ref").size == info.size
    # CAPACITY and ERROR are ignored once the key exists
    assert bf.insert("k", ["c"], capacity=100000, error=0.1) == [1]
    assert bf.info("k").capacity == 50 and bf.info("k").size == info.size
    # NOCREATE on an existing key adds
    assert bf.insert("k", ["d"], noCreate=True) == [1]
    assert bf.mexists("k", "a", "b", "c", "d", "zz") == [1, 1, 1, 1, 0]
    # NONSCALING
    assert bf.insert("ns", ["x"], capacity=5, noScale=True) == [1]
    assert bf.info("ns").expansionRate is None
    # keywords in any case; ITEMS is the last keyword
    assert raw.execute_command("BF.INSERT", "lc", "capacity", "10", "error", "0.01",
                               "nonscaling", "items", "capacity") == [1]
    assert raw.execute_command("BF.EXISTS", "lc", "capacity") == 1
    assert info_dict(raw, "lc")["Capacity"] == 10


def test_insert_nocreate_missing_key(r):
    with pytest.raises(ResponseError) as e:
        r.bf().insert("missing", ["a"], noCreate=True)
    assert err(e) == "not found"
    assert r.exists("missing") == 0


def test_insert_errors(r, raw):
    """RedisBloom's texts for BF.INSERT, which carry no ERR prefix."""
    bad = [
        (["CAPACITY", "0"], "Bad capacity"),
        (["CAPACITY", "-5"], "Bad capacity"),
        (["CAPACITY", "x"], "Bad capacity"),
        (["ERROR", "0"], "Bad error rate"),
        (["ERROR", "1"], "Bad error rate"),
        (["ERROR", "-1"], "Bad error rate"),
        (["ERROR", "x"], "Bad error rate"),
        (["EXPANSION", "-1"], "Bad expansion"),
        (["EXPANSION", "32769"], "Bad expansion"),
        (["EXPANSION", "x"], "Bad expansion"),
        (["NONSCALING", "EXPANSION", "2"], "Nonscaling filters cannot expand"),
        (["DONTEXIST"], "Unknown argument received"),
    ]
    for opts, message in bad:
        with pytest.raises(ResponseError) as e:
            raw.execute_command("BF.INSERT", "k", *opts, "ITEMS", "a")
        assert err(e) == message, (opts, err(e))
        assert raw.exists("k") == 0
    # EXPANSION 0 is a fixed filter, as is NONSCALING with it
    assert raw.execute_command("BF.INSERT", "z", "EXPANSION", "0", "ITEMS", "a") == [1]
    assert raw.execute_command("BF.INSERT", "z2", "NONSCALING", "EXPANSION", "0", "ITEMS",
                               "a") == [1]
    for key in ("z", "z2"):
        assert raw.execute_command("BF.INFO", key, "EXPANSION") == [None]
    for args in (["BF.INSERT", "k", "ITEMS"], ["BF.INSERT", "k", "CAPACITY", "10"],
                 ["BF.INSERT", "k"], ["BF.INSERT"]):
        with pytest.raises(ResponseError):
            raw.execute_command(*args)
    assert raw.exists("k") == 0


@pytest.mark.parametrize("rate,message", [
    ("0", "error rate must be in the range (0.000000, 1.000000)"),
    ("1", "error rate must be in the range (0.000000, 1.000000)"),
    ("-1", "error rate must be in the range (0.000000, 1.000000)"),
    ("1.5", "error rate must be in the range (0.000000, 1.000000)"),
    ("x", "bad error rate"), ("nan", "bad error rate"), ("", "bad error rate")])
def test_reserve_bad_error_rate(r, rate, message):
    """RedisBloom's texts: a number out of (0, 1), or no number at all."""
    with pytest.raises(ResponseError) as e:
        r.execute_command("BF.RESERVE", "k", rate, "100")
    assert err(e) == message
    assert r.exists("k") == 0


def test_smallest_error_rate(r):
    """1e-15 is the smallest rate accepted ("error rate must be at least
    1e-15" below it), for scaling filters as for fixed ones: a 100-item filter
    at that rate is a few hundred bytes, not "18446744073709551615 bytes"."""
    with pytest.raises(ResponseError, match="error rate must be at least 1e-15"):
        r.execute_command("BF.RESERVE", "k", "1e-16", "100")
    assert r.execute_command("BF.RESERVE", "fixed", "1e-15", "100", "NONSCALING") == b"OK"
    for key, args in (("scaling", ["BF.RESERVE", "scaling", "1e-15", "100"]),
                      ("scaling2", ["BF.RESERVE", "scaling2", "1.9e-15", "100"]),
                      ("inserted", ["BF.INSERT", "inserted", "ERROR", "1e-15", "ITEMS", "x"])):
        try:
            r.execute_command(*args)
        except ResponseError as e:
            pytest.fail("%s refused: %s" % (" ".join(args), e), pytrace=False)
        assert r.execute_command("BF.INFO", key, "SIZE")[0] < 10_000


@pytest.mark.parametrize("capacity,message", [
    ("0", "(capacity should be larger than 0)"), ("-5", "(capacity should be larger than 0)"),
    ("x", "bad capacity"), ("1.5", "bad capacity"), ("", "bad capacity"),
    (str(2 ** 64), "bad capacity")])
def test_reserve_bad_capacity(r, capacity, message):
    with pytest.raises(ResponseError) as e:
        r.execute_command("BF.RESERVE", "k", "0.01", capacity)
    assert err(e) == message
    assert r.exists("k") == 0


@pytest.mark.parametrize("expansion,message", [
    ("-1", "expansion must be in the range [0, 32768]"),
    ("32769", "expansion must be in the range [0, 32768]"),
    ("x", "bad expansion"), ("1.5", "bad expansion")])
def test_reserve_bad_expansion(r, expansion, message):
    with pytest.raises(ResponseError) as e:
        r.execute_command("BF.RESERVE", "k", "0.01", "100", "EXPANSION", expansion)
    assert err(e) == message
    assert r.exists("k") == 0


def test_reserve_expansion_range(r):
    """EXPANSION 0 makes a fixed filter (as NONSCALING does), 32768 is the
    largest; NONSCALING with any other expansion is refused, and EXPANSION as
    the last word has no value."""
    assert r.execute_command("BF.RESERVE", "zero", "0.01", "10", "EXPANSION", "0") == b"OK"
    assert r.execute_command("BF.INFO", "zero", "EXPANSION") == [None]
    assert r.execute_command("BF.RESERVE", "both", "0.01", "10", "NONSCALING", "EXPANSION",
                             "0") == b"OK"
    assert r.execute_command("BF.INFO", "both", "EXPANSION") == [None]
    assert r.execute_command("BF.RESERVE", "max", "0.01", "10", "EXPANSION", "32768") == b"OK"
    assert r.execute_command("BF.INFO", "max", "EXPANSION") == [32768]
    with pytest.raises(ResponseError) as e:
        r.execute_command("BF.RESERVE", "k", "0.01", "10", "NONSCALING", "EXPANSION", "2")
    assert err(e) == "Nonscaling filters cannot expand"
    with pytest.raises(ResponseError) as e:
        r.execute_command("BF.RESERVE", "k", "0.01", "10", "EXPANSION")
    assert err(e) == "no expansion"
    assert r.exists("k") == 0
    for i in range(10):
        r.execute_command("BF.ADD", "zero", "item%d" % i)
    with pytest.raises(ResponseError, match="non scaling filter is full"):
        r.execute_command("BF.ADD", "zero", "one-more")


def test_reserve_existing_key(r):
    r.bf().create("k", 0.01, 100)
    r.bf().add("k", "a")
    with pytest.raises(ResponseError) as e:
        r.bf().create("k", 0.01, 100)
    assert err(e) == "item exists"
    assert r.bf().exists("k", "a") == 1
    r.execute_command("HLL.ADD", "h", "a")
    with pytest.raises(ResponseError):
        r.bf().create("h", 0.01, 100)


def answer_quickly(server, *args):
    """The reply to one command on a fresh client with a short timeout: a
    command the server never answers fails here instead of hanging."""
    c = server.client(socket_timeout=2)
    try:
        return c.execute_command(*args)
    except redis.exceptions.TimeoutError:
        pass
    finally:
        c.close()
    pytest.fail("the server sent no reply at all to %r within 2 s (the client would "
                "hang)" % (args,), pytrace=False)


def test_info_missing_key_is_not_found(server, r):
    """BF.INFO of a missing key answers ERR not found (RedisBloom's reply);
    it must answer at all."""
    with pytest.raises(ResponseError) as e:
        answer_quickly(server, "BF.INFO", "missing")
    assert err(e) == "not found"
    assert r.ping()


@pytest.mark.parametrize("args,expected", [
    (("BF.EXISTS", "missing", "a"), 0),
    (("BF.MEXISTS", "missing", "a", "b"), [0, 0]),
    (("BF.CARD", "missing"), 0),
])
def test_missing_key_answers_zero(server, r, args, expected):
    """BF.EXISTS / BF.MEXISTS / BF.CARD answer 0 on a missing key."""
    assert answer_quickly(server, *args) == expected
    assert r.ping()


def test_missing_key_through_redis_py(server, r):
    c = server.client(socket_timeout=2)
    try:
        assert c.bf().exists("missing", "a") == 0
        return
    except redis.exceptions.TimeoutError:
        pass
    finally:
        c.close()
    pytest.fail("r.bf().exists on a missing key got no reply: the client hangs",
                pytrace=False)


def test_scandump_missing_key_is_an_error(server, r):
    with pytest.raises(ResponseError):
        answer_quickly(server, "BF.SCANDUMP", "missing", 0)
    assert r.ping()


def test_madd_and_mexists_in_batches_answer_as_single_calls(r):
    """BF.MADD into a fixed filter with room, and BF.MEXISTS, go through the
    library's batch calls 256 items at a time: across those boundaries, with
    repeats inside one command, they answer as BF.ADD and BF.EXISTS do."""
    bf = r.bf()
    bf.create("batch", 0.01, 5000, noScale=True)
    bf.create("single", 0.01, 5000, noScale=True)
    its = [b"it%d" % (i % 700) for i in range(1000)]  # repeats from item 700 on
    batched = bf.madd("batch", *its)
    single = [bf.add("single", it) for it in its]
    assert batched == single
    assert sum(batched) == r.execute_command("BF.CARD", "batch") > 600
    probe = [b"it%d" % i for i in range(0, 1400, 2)]
    found = bf.mexists("batch", *probe)
    assert found == [bf.exists("single", it) for it in probe]
    assert found[:350] == [1] * 350
    assert r.execute_command("BF.MEXISTS", "missing", *probe) == [0] * len(probe)
    assert r.execute_command("BF.DEBUG", "batch") == r.execute_command("BF.DEBUG", "single")


def test_nonscaling_full(r):
    bf = r.bf()
    bf.create("n", 0.01, 100, noScale=True)
    its = [b"item%d" % i for i in range(100)]
    added = bf.madd("n", *its)
    assert sum(added) == r.execute_command("BF.CARD", "n")
    # keep adding new items until the filter counts `capacity` items
    extra = 0
    while r.execute_command("BF.CARD", "n") < 100:
        assert bf.add("n", b"extra%d" % extra) in (0, 1)
        extra += 1
        assert extra < 100
    with pytest.raises(ResponseError) as e:
        bf.add("n", "definitely-new-item-xyz")
    assert err(e) == "non scaling filter is full"
    assert r.execute_command("BF.CARD", "n") == 100
    # an item already there is still answered, not refused
    assert bf.add("n", its[0]) == 0
    assert bf.exists("n", its[0]) == 1
    assert bf.info("n").filterNum == 1
    # in BF.MADD and BF.INSERT the array ends with the error of the first
    # item refused, and the items after it are not tried
    reply = bf.madd("n", its[1], "new-one", "new-two")
    assert reply[0] == 0
    assert isinstance(reply[1], ResponseError) and str(reply[1]) == "non scaling filter is full"
    assert len(reply) == 2
    reply = bf.insert("n", ["another-new"])
    assert isinstance(reply[0], ResponseError)


def test_wrongtype(r):
    r.set("s", "v")
    r.rpush("l", "a")
    r.execute_command("HLL.ADD", "h", "a")
    for key in ("s", "l", "h"):
        for args in (["BF.ADD", key, "a"], ["BF.MADD", key, "a"], ["BF.EXISTS", key, "a"],
                     ["BF.MEXISTS", key, "a"], ["BF.CARD", key], ["BF.INFO", key],
                     ["BF.INSERT", key, "ITEMS", "a"], ["BF.SCANDUMP", key, "0"],
                     ["BF.RESERVE", key, "0.01", "10"]):
            with pytest.raises(ResponseError) as e:
                r.execute_command(*args)
            if args[0] == "BF.RESERVE":
                assert err(e) in (WRONGTYPE, "item exists"), args
            else:
                assert err(e) == WRONGTYPE, args
    assert r.get("s") == b"v" and r.lrange("l", 0, -1) == [b"a"]


@pytest.mark.parametrize("args", [
    ["BF.RESERVE"], ["BF.RESERVE", "k"], ["BF.RESERVE", "k", "0.01"],
    ["BF.ADD"], ["BF.ADD", "k"], ["BF.ADD", "k", "a", "b"],
    ["BF.MADD"], ["BF.MADD", "k"],
    ["BF.INSERT"], ["BF.INSERT", "k"],
    ["BF.EXISTS"], ["BF.EXISTS", "k"], ["BF.EXISTS", "k", "a", "b"],
    ["BF.MEXISTS"], ["BF.MEXISTS", "k"],
    ["BF.CARD"], ["BF.CARD", "k", "x"],
    ["BF.INFO"], ["BF.INFO", "k", "CAPACITY", "x"],
    ["BF.SCANDUMP"], ["BF.SCANDUMP", "k"], ["BF.SCANDUMP", "k", "0", "1"],
    ["BF.LOADCHUNK"], ["BF.LOADCHUNK", "k", "1"], ["BF.LOADCHUNK", "k", "1", "d", "e"],
])
def test_wrong_arity(r, args):
    r.bf().add("k", "a")
    with pytest.raises(ResponseError) as e:
        r.execute_command(*args)
    assert "wrong number of arguments" in err(e).lower(), err(e)
    assert r.bf().exists("k", "a") == 1


# --------------------------------------------------------------------------
# SCANDUMP / LOADCHUNK
# --------------------------------------------------------------------------

def scandump_with_redis_py(bf, key):
    chunks = []
    it = 0
    while True:
        it, data = bf.scandump(key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def test_scandump_loadchunk_round_trip(r, tools):
    bf = r.bf()
    rng = random.Random(1)
    present = tools.random_items(rng, 3000)
    absent = tools.random_items(random.Random(2), 5000)
    bf.create("src", 0.01, 500, expansion=2)        # scaling: several layers
    tools.madd(r, "src", present)
    assert bf.info("src").filterNum >= 3
    chunks = scandump_with_redis_py(bf, "src")
    assert len(chunks) >= 2                           # header, then the bits
    for it, data in chunks:
        assert bf.loadchunk("dst", it, data) in (b"OK", True, "OK")
    probes = present + absent
    assert tools.mexists(r, "dst", probes) == tools.mexists(r, "src", probes)
    assert all(tools.mexists(r, "dst", present))
    a, b = bf.info("src"), bf.info("dst")
    assert vars(a) == vars(b)
    assert r.execute_command("BF.CARD", "dst") == r.execute_command("BF.CARD", "src")
    # the copy is a live filter: adds go on identically
    more = tools.items("more", 2000)
    assert tools.madd(r, "dst", more) == tools.madd(r, "src", more)
    assert vars(bf.info("src")) == vars(bf.info("dst"))
    assert b"".join(d for _, d in scandump_with_redis_py(bf, "dst")) == \
        b"".join(d for _, d in scandump_with_redis_py(bf, "src"))
    # LOADCHUNK of the header over an existing filter replaces it
    for it, data in scandump_with_redis_py(bf, "src"):
        bf.loadchunk("other", it, data)
    nonscaling = bf.create("ns", 0.001, 100, noScale=True)
    assert nonscaling
    bf.add("ns", "x")
    for it, data in scandump_with_redis_py(bf, "ns"):
        bf.loadchunk("ns-copy", it, data)
    assert bf.info("ns-copy").expansionRate is None
    assert bf.exists("ns-copy", "x") == 1


def test_scandump_large_filter_in_several_chunks(r, tools):
    """A filter larger than one SCANDUMP piece (16 MB): several data chunks,
    iterators strictly increasing, and an identical copy."""
    bf = r.bf()
    bf.create("big", 0.01, 20_000_000, noScale=True)
    present = tools.items("big", 20000)
    tools.madd(r, "big", present)
    chunks = tools.scandump(r, "big")
    assert len(chunks) >= 3
    its = [it for it, _ in chunks]
    assert its == sorted(its) and len(set(its)) == len(its)
    assert sum(len(d) for _, d in chunks) + 1 == its[-1]
    tools.loadchunks(r, "copy", chunks)
    probes = present + tools.items("absent", 20000)
    assert tools.mexists(r, "copy", probes) == tools.mexists(r, "big", probes)
    assert vars(bf.info("copy")) == vars(bf.info("big"))
    r.delete("big", "copy")


def test_loadchunk_bad_data(r, tools):
    bf = r.bf()
    bf.create("src", 0.01, 1000)
    tools.madd(r, "src", tools.items("x", 500))
    chunks = tools.scandump(r, "src")
    it0, header = chunks[0]
    with pytest.raises(ResponseError):
        r.execute_command("BF.LOADCHUNK", "dst", it0, b"\xff" * len(header))
    with pytest.raises(ResponseError):
        r.execute_command("BF.LOADCHUNK", "dst", it0, header[:-1])
    with pytest.raises(ResponseError):
        r.execute_command("BF.LOADCHUNK", "dst", 0, header)
    with pytest.raises(ResponseError):
        r.execute_command("BF.LOADCHUNK", "dst", "x", header)
    # a data chunk with a flipped byte: the checksum catches it at the end
    tools.loadchunks(r, "dst", chunks[:1])
    it1, body = chunks[1]
    flipped = bytearray(body)
    flipped[len(flipped) // 2] ^= 0x5A
    with pytest.raises(ResponseError):
        for it, data in [(it1, bytes(flipped))] + chunks[2:]:
            r.execute_command("BF.LOADCHUNK", "dst", it, data)
    # a data chunk for a key that has no header loaded
    with pytest.raises(ResponseError):
        r.execute_command("BF.LOADCHUNK", "nohdr", it1, body)
    assert r.ping()


# --------------------------------------------------------------------------
# Accuracy
# --------------------------------------------------------------------------

def binomial_upper(n, p, sigmas=5.0):
    return n * p + sigmas * math.sqrt(n * p * (1 - p)) + 1


def test_no_false_negatives_default_filter(r, tools):
    """10^5 items into a filter created by BF.MADD with the defaults
    (capacity 100): it grows through many layers and finds every item."""
    present = tools.random_items(random.Random(11), 100_000)
    added = tools.madd(r, "auto", present)
    assert set(added) <= {0, 1}
    info = r.bf().info("auto")
    assert info.filterNum >= 8
    assert info.insertedNum == sum(added)
    assert all(tools.mexists(r, "auto", present))
    assert all(r.bf().exists("auto", x) for x in present[:50])


def test_false_positive_rate_reserved_filter(r, tools):
    """A 10^5-capacity 1% filter, full: no false negative, and the false
    positives on 10^5 absent items within the binomial bound of 1%."""
    n = 100_000
    rng = random.Random(12)
    present = [b"p" + x for x in tools.random_items(rng, n)]
    absent = [b"a" + x for x in tools.random_items(rng, n)]
    for key, nonscaling in (("scaling", False), ("fixed", True)):
        r.bf().create(key, 0.01, n, noScale=True if nonscaling else None)
        tools.madd(r, key, present)
        info = r.bf().info(key)
        assert info.filterNum == 1, key
        assert all(tools.mexists(r, key, present)), key
        fp = sum(tools.mexists(r, key, absent))
        assert fp <= binomial_upper(n, 0.01), (key, fp)
        assert fp > 0, key   # 0 in 10^5 would mean a far larger filter than needed


def test_false_positive_rate_after_growth(r, tools):
    """A scaling filter grown from 1000 to several layers keeps its
    combined rate at or below 1%."""
    n = 100_000
    rng = random.Random(13)
    present = [b"p" + x for x in tools.random_items(rng, n)]
    absent = [b"a" + x for x in tools.random_items(rng, n)]
    r.bf().create("grow", 0.01, 1000, expansion=2)
    tools.madd(r, "grow", present)
    info = r.bf().info("grow")
    assert info.filterNum >= 5
    assert info.capacity >= info.insertedNum
    assert all(tools.mexists(r, "grow", present))
    fp = sum(tools.mexists(r, "grow", absent))
    assert fp <= binomial_upper(n, 0.01), fp


# --------------------------------------------------------------------------
# Latency: the server is single-threaded
# --------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["BF.ADD", "{new}", "x"],                       # the defaults: capacity 100
    ["BF.RESERVE", "{new}", "0.01", "100"],
    ["BF.RESERVE", "{new}", "0.001", "100"],
    ["BF.RESERVE", "{new}", "0.01", "100", "NONSCALING"],
    ["BF.INSERT", "{new}", "CAPACITY", "1000", "ITEMS", "x"],
])
def test_creating_a_small_filter_does_not_stall_the_server(r, args):
    """Creating a filter of a few hundred bytes must not block every client
    of the server: its duration as the server measures it (SLOWLOG) stays
    under 50 ms, five times Redis's own slow-command threshold."""
    old = r.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]
    r.config_set("slowlog-log-slower-than", 0)
    try:
        durations = []
        for i in range(3):
            r.slowlog_reset()
            cmd = [a.replace("{new}", "fresh-%d" % i) for a in args]
            r.execute_command(*cmd)
            entries = [e for e in r.slowlog_get(10)
                       if e["command"].split(b" ")[0].upper() == cmd[0].encode()]
            assert entries, r.slowlog_get(10)
            durations.append(entries[0]["duration"])
    finally:
        r.config_set("slowlog-log-slower-than", old)
    assert sorted(durations)[1] < 50_000, "%s took %s microseconds in the server" % (
        " ".join(cmd), durations)
