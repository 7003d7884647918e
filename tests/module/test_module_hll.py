"""HLL.*: against the server's own PF* commands on the same elements.
Every expected count comes from PFCOUNT / PFADD / PFMERGE of native keys
of the same server; nothing is hard-coded."""
import random

import pytest
from redis.exceptions import ResponseError

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def err(excinfo):
    return str(excinfo.value)


def pfadd_all(c, key, its, batch=10000):
    changed = 0
    for i in range(0, len(its), batch):
        changed |= c.pfadd(key, *its[i:i + batch])
    return changed


def hll_info(c, key):
    reply = c.execute_command("HLL.INFO", key)
    names = [x.decode() for x in reply[0::2]]
    assert names == ["Precision", "Registers", "Encoding", "Count", "Standard error",
                     "Memory"], names
    return dict(zip(names, reply[1::2]))


# --------------------------------------------------------------------------
# HLL.RESERVE
# --------------------------------------------------------------------------

def test_reserve_every_precision(r):
    for p in range(4, 19):
        assert r.execute_command("HLL.RESERVE", "h%d" % p, p) == b"OK"
        info = hll_info(r, "h%d" % p)
        assert info["Precision"] == p
        assert info["Registers"] == 1 << p
        assert info["Count"] == 0
        assert r.execute_command("HLL.COUNT", "h%d" % p) == 0
        assert r.execute_command("HLL.ADD", "h%d" % p, "x") == 1
        assert r.execute_command("HLL.COUNT", "h%d" % p) == 1
        assert hll_info(r, "h%d" % p)["Precision"] == p


@pytest.mark.parametrize("precision", ["3", "19", "0", "-1", "x", "14.5", "", "64"])
def test_reserve_bad_precision(r, precision):
    with pytest.raises(ResponseError) as e:
        r.execute_command("HLL.RESERVE", "h", precision)
    assert "bad precision" in err(e)
    assert r.exists("h") == 0


def test_reserve_existing_key(r):
    r.execute_command("HLL.RESERVE", "h", 10)
    r.execute_command("HLL.ADD", "h", "a")
    with pytest.raises(ResponseError, match="item exists"):
        r.execute_command("HLL.RESERVE", "h", 12)
    assert hll_info(r, "h")["Precision"] == 10
    assert r.execute_command("HLL.COUNT", "h") == 1


# --------------------------------------------------------------------------
# HLL.ADD and HLL.COUNT against PFADD and PFCOUNT
# --------------------------------------------------------------------------

def test_add_replies_like_pfadd(r, tools):
    """The same sequence of calls (0..6 elements, repeats included) to
    HLL.ADD and PFADD gets the same reply every time, through the sparse
    and dense encodings."""
    rng = random.Random(21)
    pool = tools.random_items(rng, 30000)
    calls = []
    for i in range(6000):
        k = rng.choice([0, 1, 1, 2, 3, 6])
        # grow the set of elements in use, with repeats
        hi = min(len(pool), 100 + i * 5)
        calls.append([pool[rng.randrange(hi)] for _ in range(k)])
    p = r.pipeline(transaction=False)
    for c in calls:
        p.execute_command("HLL.ADD", "h", *c)
        p.execute_command("PFADD", "native", *c)
    replies = p.execute()
    hll, pf = replies[0::2], replies[1::2]
    mismatches = [(i, calls[i], a, b) for i, (a, b) in enumerate(zip(hll, pf)) if a != b]
    assert not mismatches, mismatches[:5]
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("native")
    assert r.execute_command("PFDEBUG", "ENCODING", "native") == b"dense"


def test_add_without_elements(r):
    assert r.execute_command("HLL.ADD", "h") == 1          # created, like PFADD
    assert r.pfadd("p") == 1
    assert r.execute_command("HLL.ADD", "h") == 0
    assert r.pfadd("p") == 0
    assert r.execute_command("HLL.COUNT", "h") == 0
    assert hll_info(r, "h")["Precision"] == 14


@pytest.mark.parametrize("n", [0, 1, 10, 100, 1000, 5000, 10_000, 100_000])
def test_count_equals_pfcount(r, tools, n):
    rng = random.Random(1000 + n)
    its = tools.random_items(rng, n, 0, 40) if n else []
    tools.hll_add(r, "h", its)
    pfadd_all(r, "p", its)
    if n == 0:
        r.execute_command("HLL.ADD", "h")
        r.pfadd("p")
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("p")
    # counting again (a cached count, for PFCOUNT) changes nothing
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("p")
    # repeats change nothing
    tools.hll_add(r, "h", its[: n // 2])
    pfadd_all(r, "p", its[: n // 2])
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("p")


def test_count_of_several_keys_equals_pfcount(r, tools):
    rng = random.Random(22)
    pool = tools.random_items(rng, 60000)
    sets = [pool[0:20000], pool[10000:40000], pool[35000:60000], pool[:50]]
    for i, s in enumerate(sets):
        tools.hll_add(r, "h%d" % i, s)
        pfadd_all(r, "p%d" % i, s)
    for keys in ([0, 1], [0, 1, 2], [1, 3], [3, 3], [0, 1, 2, 3]):
        got = r.execute_command("HLL.COUNT", *["h%d" % i for i in keys])
        assert got == r.pfcount(*["p%d" % i for i in keys]), keys
    # missing keys count as empty
    assert r.execute_command("HLL.COUNT", "h0", "missing") == r.pfcount("p0", "missing")
    assert r.execute_command("HLL.COUNT", "missing", "missing2") == 0


def test_mixing_native_and_module_keys(r, tools):
    rng = random.Random(23)
    a = tools.random_items(rng, 30000)
    b = tools.random_items(rng, 500)
    c = tools.random_items(rng, 8000)
    tools.hll_add(r, "h-a", a)
    pfadd_all(r, "p-a", a)
    pfadd_all(r, "p-b", b)               # native, sparse
    pfadd_all(r, "p-c", c)               # native, dense
    expected = r.pfcount("p-a", "p-b", "p-c")
    assert r.execute_command("HLL.COUNT", "h-a", "p-b", "p-c") == expected
    assert r.execute_command("HLL.COUNT", "p-b") == r.pfcount("p-b")
    assert r.execute_command("HLL.COUNT", "p-c", "p-b") == r.pfcount("p-c", "p-b")
    assert r.execute_command("HLL.ESTIMATE", "h-a", "p-b", "p-c")[0] == expected
    # MERGE of native sources into a module key
    assert r.execute_command("HLL.MERGE", "m", "h-a", "p-b", "p-c") == b"OK"
    r.pfmerge("pm", "p-a", "p-b", "p-c")
    assert r.execute_command("HLL.COUNT", "m") == r.pfcount("pm") == expected
    # the native sources are unchanged and still native
    assert r.execute_command("PFDEBUG", "ENCODING", "p-b") == b"sparse"
    assert r.pfcount("p-b") == r.execute_command("HLL.COUNT", "p-b")


# --------------------------------------------------------------------------
# HLL.ESTIMATE
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 1000, 100_000])
def test_estimate(r, tools, n):
    its = tools.items("e", n)
    r.execute_command("HLL.ADD", "h")
    tools.hll_add(r, "h", its)
    reply = r.execute_command("HLL.ESTIMATE", "h")
    assert len(reply) == 8, reply
    count, rel = reply[0], float(reply[1])
    bounds = reply[2:]
    assert count == r.execute_command("HLL.COUNT", "h")
    assert all(isinstance(x, int) for x in [count] + bounds), reply
    assert 0 < rel < 0.1
    if n >= 100_000:   # past the small range: the HyperLogLog error 1.04 / sqrt(2^14)
        assert rel == pytest.approx(1.04 / 128, rel=0.05)
    lo1, hi1, lo2, hi2, lo3, hi3 = bounds
    assert 0 <= lo3 <= lo2 <= lo1 <= count <= hi1 <= hi2 <= hi3, reply
    if n >= 1000:
        assert lo3 <= n <= hi3, reply                           # 3 sd
        assert hi1 - lo1 <= 4 * rel * count + 2
    # several keys: the estimate of the union
    r.execute_command("HLL.ADD", "h2", *tools.items("other", 100))
    reply2 = r.execute_command("HLL.ESTIMATE", "h", "h2")
    assert reply2[0] == r.execute_command("HLL.COUNT", "h", "h2")
    assert reply2[6] <= reply2[4] <= reply2[2] <= reply2[0] <= reply2[3] <= reply2[5] <= reply2[7]


# --------------------------------------------------------------------------
# HLL.MERGE
# --------------------------------------------------------------------------

def test_merge_includes_dest(r, tools):
    rng = random.Random(24)
    d, s1, s2 = (tools.random_items(rng, n) for n in (20000, 15000, 300))
    for key, its in (("d", d), ("s1", s1), ("s2", s2)):
        tools.hll_add(r, "h" + key, its)
        pfadd_all(r, "p" + key, its)
    assert r.execute_command("HLL.MERGE", "hd", "hs1", "hs2") == b"OK"
    assert r.pfmerge("pd", "ps1", "ps2")
    assert r.execute_command("HLL.COUNT", "hd") == r.pfcount("pd")
    assert r.execute_command("HLL.COUNT", "hd") > r.execute_command("HLL.COUNT", "hs1")
    # sources unchanged
    assert r.execute_command("HLL.COUNT", "hs1") == r.pfcount("ps1")
    # into a missing dest: the union of the sources
    assert r.execute_command("HLL.MERGE", "new", "hs1", "hs2") == b"OK"
    r.pfmerge("pnew", "ps1", "ps2")
    assert r.execute_command("HLL.COUNT", "new") == r.pfcount("pnew")
    # merging with itself, and only itself
    before = r.execute_command("HLL.COUNT", "hd")
    assert r.execute_command("HLL.MERGE", "hd", "hd") == b"OK"
    assert r.execute_command("HLL.COUNT", "hd") == before
    # missing sources are empty
    assert r.execute_command("HLL.MERGE", "hd", "missing") == b"OK"
    assert r.execute_command("HLL.COUNT", "hd") == before


def test_merge_folds_precision(r, tools):
    rng = random.Random(25)
    x = tools.random_items(rng, 20000)
    y = tools.random_items(rng, 20000)
    r.execute_command("HLL.RESERVE", "p16", 16)
    r.execute_command("HLL.RESERVE", "p12", 12)
    r.execute_command("HLL.RESERVE", "ref", 12)
    tools.hll_add(r, "p16", x)
    tools.hll_add(r, "p12", y)
    tools.hll_add(r, "ref", x + y)
    # COUNT across precisions reads at the smallest
    assert r.execute_command("HLL.COUNT", "p16", "p12") == r.execute_command("HLL.COUNT", "ref")
    assert r.execute_command("HLL.MERGE", "p16", "p12") == b"OK"
    info = hll_info(r, "p16")
    assert info["Precision"] == 12 and info["Registers"] == 4096
    assert r.execute_command("HLL.COUNT", "p16") == r.execute_command("HLL.COUNT", "ref")
    with pytest.raises(ResponseError, match="precision 14"):
        r.execute_command("HLL.EXPORT", "p16")
    # a p18 dest with a native (p14) source folds to 14
    r.execute_command("HLL.RESERVE", "p18", 18)
    tools.hll_add(r, "p18", x)
    pfadd_all(r, "native", y)
    r.execute_command("HLL.MERGE", "p18", "native")
    assert hll_info(r, "p18")["Precision"] == 14
    pfadd_all(r, "native-all", x + y)
    assert r.execute_command("HLL.COUNT", "p18") == r.pfcount("native-all")


# --------------------------------------------------------------------------
# HLL.EXPORT / HLL.IMPORT against native keys
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n,precision", [(0, 14), (10, 14), (300, 14), (5000, 14),
                                         (100_000, 14), (20000, 16), (50, 18)])
def test_export_is_a_native_hyperloglog(r, tools, n, precision):
    its = tools.random_items(random.Random(n + precision), n)
    r.execute_command("HLL.RESERVE", "h", precision)
    tools.hll_add(r, "h", its)
    s = r.execute_command("HLL.EXPORT", "h")
    assert s[:4] == b"HYLL"
    r.set("native", s)
    pfadd_all(r, "ref", its)
    r.pfadd("ref")
    # the same count as PFADD of the same elements: a p > 14 sketch exports
    # its exact p = 14 fold
    assert r.pfcount("native") == r.pfcount("ref")
    if precision == 14:
        assert r.pfcount("native") == r.execute_command("HLL.COUNT", "h")
    # PFADD and PFMERGE work on it and agree with the reference
    more = tools.items("more", 2000)
    assert r.pfadd("native", *more) == r.pfadd("ref", *more)
    assert r.pfcount("native") == r.pfcount("ref")
    pfadd_all(r, "other", tools.items("other", 3000))
    r.pfmerge("native", "other")
    r.pfmerge("ref", "other")
    assert r.pfcount("native") == r.pfcount("ref")
    assert r.pfcount("native", "other") == r.pfcount("ref", "other")


def test_export_missing_and_small_precision(r):
    assert r.execute_command("HLL.EXPORT", "missing") is None
    r.execute_command("HLL.RESERVE", "small", 10)
    with pytest.raises(ResponseError):
        r.execute_command("HLL.EXPORT", "small")
    # a native key exports as itself: the same count
    r.pfadd("p", "a", "b", "c")
    r.set("p2", r.execute_command("HLL.EXPORT", "p"))
    assert r.pfcount("p2") == r.pfcount("p") == 3


@pytest.mark.parametrize("n", [0, 5, 200, 3000, 50_000])
def test_import_of_native_string(r, tools, n):
    its = tools.random_items(random.Random(300 + n), n)
    r.pfadd("native")
    pfadd_all(r, "native", its)
    raw_string = r.get("native")
    assert r.execute_command("HLL.IMPORT", "h", raw_string) == b"OK"
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("native")
    assert hll_info(r, "h")["Precision"] == 14
    assert r.type("h") != b"string"
    # it goes on like the native key
    more = tools.items("more", 3000)
    for i in range(0, len(more), 500):
        assert r.execute_command("HLL.ADD", "h", *more[i:i + 500]) == \
            r.pfadd("native", *more[i:i + 500])
    assert r.execute_command("HLL.COUNT", "h") == r.pfcount("native")
    # round trip back to a native key
    r.set("back", r.execute_command("HLL.EXPORT", "h"))
    assert r.pfcount("back") == r.pfcount("native")
    # IMPORT replaces an existing sketch
    r.execute_command("HLL.RESERVE", "other", 8)
    r.execute_command("HLL.IMPORT", "other", raw_string)
    assert hll_info(r, "other")["Precision"] == 14


def test_import_garbage(r, tools):
    r.pfadd("native", *tools.items("x", 5000))
    good = r.get("native")
    sparse_src = r.pfadd("sp", "a", "b") and r.get("sp")
    garbage = [b"", b"garbage", b"HYLL", b"HYLL" + b"\x00" * 12, good[:-1], good[:100],
               good + b"x", b"\x00" * 12304, random.Random(5).randbytes(12304),
               sparse_src[:-1], b"HYLL\x02" + good[5:]]
    for g in garbage:
        with pytest.raises(ResponseError) as e:
            r.execute_command("HLL.IMPORT", "h", g)
        assert str(e.value).startswith("not a HyperLogLog"), (g[:20], str(e.value))
        assert r.exists("h") == 0
    r.execute_command("HLL.ADD", "keep", "a")
    with pytest.raises(ResponseError):
        r.execute_command("HLL.IMPORT", "keep", b"garbage")
    assert r.execute_command("HLL.COUNT", "keep") == 1
    assert r.ping()


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

def test_wrongtype_list_and_bloom(r):
    r.rpush("l", "a")
    r.execute_command("BF.ADD", "bf", "a")
    r.execute_command("HLL.ADD", "ok", "a")
    for key in ("l", "bf"):
        for args in (["HLL.ADD", key, "a"], ["HLL.ADD", key], ["HLL.COUNT", key],
                     ["HLL.COUNT", "ok", key], ["HLL.ESTIMATE", key], ["HLL.INFO", key],
                     ["HLL.EXPORT", key], ["HLL.MERGE", key, "ok"], ["HLL.MERGE", "ok", key]):
            with pytest.raises(ResponseError) as e:
                r.execute_command(*args)
            assert err(e) == WRONGTYPE, args
    assert r.lrange("l", 0, -1) == [b"a"]
    assert r.execute_command("BF.EXISTS", "bf", "a") == 1
    assert r.execute_command("HLL.COUNT", "ok") == 1
    with pytest.raises(ResponseError):
        r.execute_command("HLL.RESERVE", "l", 14)


def test_import_does_not_overwrite_other_types(r):
    """HLL.IMPORT refuses a key of another type, like every other HLL.*
    write: a mistyped key name must not silently destroy a list or a
    Bloom filter."""
    r.pfadd("native", "x", "y")
    value = r.get("native")
    r.rpush("l", "a")
    r.execute_command("BF.ADD", "bf", "a")
    for key in ("l", "bf"):
        with pytest.raises(ResponseError) as e:
            r.execute_command("HLL.IMPORT", key, value)
        assert err(e) == WRONGTYPE, key
    assert r.lrange("l", 0, -1) == [b"a"]
    assert r.execute_command("BF.EXISTS", "bf", "a") == 1


def test_merge_into_a_native_dest(r, tools):
    """A native PF key as dest: its contents are part of the union."""
    a, b = tools.items("a", 4000), tools.items("b", 4000)
    pfadd_all(r, "pdest", a)
    pfadd_all(r, "pref", a)
    tools.hll_add(r, "src", b)
    pfadd_all(r, "psrc", b)
    assert r.execute_command("HLL.MERGE", "pdest", "src") == b"OK"
    r.pfmerge("pref", "psrc")
    assert r.execute_command("HLL.COUNT", "pdest") == r.pfcount("pref")


def test_wrongtype_string_not_hyperloglog(r):
    r.set("s", "hello")
    r.set("fake", b"HYLL" + b"\x00" * 20)
    r.execute_command("HLL.ADD", "ok", "a")
    for key in ("s", "fake"):
        with pytest.raises(ResponseError) as native_error:
            r.pfcount(key)
        for args in (["HLL.COUNT", key], ["HLL.COUNT", "ok", key], ["HLL.ESTIMATE", key],
                     ["HLL.INFO", key], ["HLL.EXPORT", key], ["HLL.MERGE", "ok", key]):
            with pytest.raises(ResponseError) as e:
                r.execute_command(*args)
            assert err(e).startswith("WRONGTYPE"), (args, err(e))
            if key == "s":
                assert err(e) == err(native_error), args
        with pytest.raises(ResponseError) as e:
            r.execute_command("HLL.ADD", key, "a")
        assert err(e).startswith("WRONGTYPE")
    assert r.get("s") == b"hello"
    assert r.execute_command("HLL.COUNT", "ok") == 1


def test_info_and_count_of_missing_key(r):
    assert r.execute_command("HLL.COUNT", "missing") == 0
    with pytest.raises(ResponseError, match="not found"):
        r.execute_command("HLL.INFO", "missing")
    assert r.execute_command("HLL.ESTIMATE", "missing")[0] == 0


@pytest.mark.parametrize("args", [
    ["HLL.RESERVE"], ["HLL.RESERVE", "h"], ["HLL.RESERVE", "h", "14", "x"],
    ["HLL.ADD"], ["HLL.COUNT"], ["HLL.ESTIMATE"], ["HLL.MERGE"], ["HLL.MERGE", "h"],
    ["HLL.INFO"], ["HLL.INFO", "h", "x"], ["HLL.EXPORT"], ["HLL.EXPORT", "h", "x"],
    ["HLL.IMPORT"], ["HLL.IMPORT", "h"], ["HLL.IMPORT", "h", "a", "b"],
])
def test_wrong_arity(r, args):
    r.execute_command("HLL.ADD", "h", "a")
    with pytest.raises(ResponseError) as e:
        r.execute_command(*args)
    assert "wrong number of arguments" in err(e).lower(), err(e)
    assert r.execute_command("HLL.COUNT", "h") == 1
