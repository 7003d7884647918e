# SPDX-License-Identifier: BSD-3-Clause
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
# HLL.COMPARE
# --------------------------------------------------------------------------

COUNT_PARTS = ["union", "intersection", "a_only", "b_only"]
FRACTION_PARTS = ["jaccard", "a_in_b"]
COMPARE_FIELDS = ["precision"] + [part + suffix for part in COUNT_PARTS + FRACTION_PARTS
                                  for suffix in ("", "_error", "_lower", "_upper")]
INTEGER_FIELDS = {"precision"} | {part + suffix for part in COUNT_PARTS
                                  for suffix in ("", "_lower", "_upper")}


def hll_compare(c, key1, key2):
    """HLL.COMPARE's RESP2 reply (a flat array of 50: the 25 names at the
    even positions) as a dict of numbers, after checking each value's wire
    type: integers for precision and for the counts with their bounds,
    doubles (bulk strings in RESP2) for the errors and the fractions."""
    reply = c.execute_command("HLL.COMPARE", key1, key2)
    assert isinstance(reply, list) and len(reply) == 50, reply
    names = [x.decode() for x in reply[0::2]]
    assert names == COMPARE_FIELDS, names
    fields = dict(zip(names, reply[1::2]))
    for name, value in fields.items():
        assert isinstance(value, int if name in INTEGER_FIELDS else bytes), (name, value)
    return {name: value if isinstance(value, int) else float(value)
            for name, value in fields.items()}


def assert_ordered_bounds(cmp):
    for part in COUNT_PARTS + FRACTION_PARTS:
        assert 0 <= cmp[part + "_lower"] <= cmp[part] <= cmp[part + "_upper"], (part, cmp)
        assert cmp[part + "_error"] >= 0, (part, cmp)
    for part in FRACTION_PARTS:
        assert cmp[part + "_upper"] <= 1, (part, cmp)


def assert_near(cmp, part, truth, sd=3):
    """The estimate within sd of its reported standard errors of the truth."""
    assert abs(cmp[part] - truth) <= sd * cmp[part + "_error"], (part, truth, cmp)


def fill(c, tools, kind, key, its):
    """A key of the kind: "hll" (a sketch, by HLL.ADD) or "pf" (a native
    PF string, by PFADD)."""
    if kind == "hll":
        tools.hll_add(c, key, its)
    else:
        pfadd_all(c, key, its)


@pytest.fixture
def overlap(r, tools):
    """A = items 0..99999, B = items 50000..149999, as a sketch and as a
    native key each: |A n B| = |A \\ B| = |B \\ A| = 50000."""
    a, b = tools.items("x", 100_000), tools.items("x", 100_000, start=50_000)
    for kind in ("hll", "pf"):
        fill(r, tools, kind, kind + ":a", a)
        fill(r, tools, kind, kind + ":b", b)
    return r


@pytest.mark.parametrize("kinds", [("hll", "hll"), ("pf", "pf"), ("hll", "pf"), ("pf", "hll")])
def test_compare_known_overlap(overlap, kinds):
    r = overlap
    cmp = hll_compare(r, kinds[0] + ":a", kinds[1] + ":b")
    assert cmp["precision"] == 14
    assert_ordered_bounds(cmp)
    for part, truth in (("union", 150_000), ("intersection", 50_000), ("a_only", 50_000),
                        ("b_only", 50_000), ("jaccard", 1 / 3), ("a_in_b", 1 / 2)):
        assert_near(cmp, part, truth)
    # the error of a part of 50000 at precision 14: about 1.3% of it, far
    # from both nothing and the whole
    assert 0.005 * 50_000 < cmp["intersection_error"] < 0.03 * 50_000, cmp
    # the bounds are the estimate's at 2 standard errors, widened to integers
    for part in COUNT_PARTS:
        assert cmp[part + "_lower"] <= cmp[part] - 2 * cmp[part + "_error"] + 1, (part, cmp)
        assert cmp[part + "_upper"] >= cmp[part] + 2 * cmp[part + "_error"] - 1, (part, cmp)
    for part in FRACTION_PARTS:
        assert cmp[part + "_lower"] == pytest.approx(cmp[part] - 2 * cmp[part + "_error"],
                                                     rel=0.05), (part, cmp)
    # a native key holds the same registers as a sketch of the same items
    # at precision 14: every mix answers exactly as two sketches
    assert cmp == hll_compare(r, "hll:a", "hll:b")
    # the order of the keys swaps a_only and b_only, and a_in_b for its mirror
    # (the same fit up to rounding)
    swapped = hll_compare(r, kinds[1] + ":b", kinds[0] + ":a")
    for part, mirror in (("a_only", "b_only"), ("b_only", "a_only"),
                         ("intersection", "intersection"), ("union", "union")):
        assert swapped[part] == pytest.approx(cmp[mirror], abs=1), (part, swapped, cmp)
    assert swapped["jaccard"] == pytest.approx(cmp["jaccard"])
    assert_near(swapped, "a_in_b", 1 / 2)


def test_compare_identical_keys(r, tools):
    its = tools.items("same", 30_000)
    tools.hll_add(r, "h", its)
    pfadd_all(r, "p", its)
    for key1, key2 in (("h", "h"), ("h", "p"), ("p", "h"), ("p", "p")):
        cmp = hll_compare(r, key1, key2)
        assert_ordered_bounds(cmp)
        assert cmp["a_only"] == 0 == cmp["b_only"], cmp
        assert cmp["a_only_lower"] == 0 == cmp["b_only_lower"], cmp
        assert cmp["jaccard"] == 1 and cmp["a_in_b"] == 1, cmp
        assert cmp["jaccard_upper"] == 1 and cmp["jaccard_lower"] > 0.99, cmp
        assert cmp["intersection"] == cmp["union"], cmp
        assert_near(cmp, "union", 30_000)


def test_compare_disjoint_keys(r, tools):
    tools.hll_add(r, "a", tools.items("left", 50_000))
    pfadd_all(r, "b", tools.items("right", 20_000))
    cmp = hll_compare(r, "a", "b")
    assert_ordered_bounds(cmp)
    assert cmp["intersection_lower"] == 0, cmp
    # nothing in common: an intersection whose upper bound is under 1% of
    # the union (inclusion-exclusion's error alone is more than half of that)
    assert cmp["intersection_upper"] < 0.01 * cmp["union"], cmp
    assert_near(cmp, "a_only", 50_000)
    assert_near(cmp, "b_only", 20_000)
    assert_near(cmp, "union", 70_000)
    assert cmp["jaccard"] < 0.01 and cmp["a_in_b"] < 0.01, cmp
    assert cmp["jaccard_lower"] == 0 and cmp["a_in_b_lower"] == 0, cmp


def test_compare_missing_keys(r, tools):
    """A missing key is an empty sketch: two of them compare as nothing, and
    one missing beside a key leaves all of it outside."""
    both = hll_compare(r, "missing1", "missing2")
    assert both["precision"] == 14
    assert_ordered_bounds(both)
    for part in COUNT_PARTS + FRACTION_PARTS:
        assert both[part] == 0 and both[part + "_lower"] == 0, (part, both)
    for part in FRACTION_PARTS:
        assert both[part + "_upper"] == 0, (part, both)
    # exactly what two empty sketches answer
    r.execute_command("HLL.ADD", "empty1")
    r.execute_command("HLL.ADD", "empty2")
    assert both == hll_compare(r, "empty1", "empty2") == hll_compare(r, "missing", "missing")
    tools.hll_add(r, "a", tools.items("m", 10_000))
    one = hll_compare(r, "a", "missing")
    assert one == hll_compare(r, "a", "empty1")
    assert one["b_only"] == 0 and one["intersection"] == 0 and one["intersection_lower"] == 0
    assert one["jaccard"] == 0 and one["a_in_b"] == 0
    assert_near(one, "a_only", 10_000)
    assert one["union"] == one["a_only"]
    mirror = hll_compare(r, "missing", "a")
    assert mirror["a_only"] == 0
    assert mirror["b_only"] == pytest.approx(one["a_only"], abs=1)
    # a missing key takes the other's precision: it lowers nothing
    r.execute_command("HLL.RESERVE", "p16", 16)
    tools.hll_add(r, "p16", tools.items("m", 10_000))
    assert hll_compare(r, "p16", "missing")["precision"] == 16
    assert hll_compare(r, "missing", "p16")["precision"] == 16
    assert r.exists("missing", "missing1", "missing2") == 0


def test_compare_different_precisions(r, tools):
    """Sketches of precisions 12 and 16 compare at 12, as the p16 sketch
    folded to 12 (HLL.MERGE into a p12 key folds it exactly)."""
    a, b = tools.items("x", 40_000), tools.items("x", 40_000, start=20_000)
    r.execute_command("HLL.RESERVE", "p12", 12)
    r.execute_command("HLL.RESERVE", "p16", 16)
    r.execute_command("HLL.RESERVE", "folded", 12)
    tools.hll_add(r, "p12", a)
    tools.hll_add(r, "p16", b)
    assert r.execute_command("HLL.MERGE", "folded", "p16") == b"OK"
    assert hll_info(r, "folded")["Precision"] == 12
    cmp = hll_compare(r, "p12", "p16")
    assert cmp["precision"] == 12
    assert cmp == hll_compare(r, "p12", "folded")
    assert hll_compare(r, "p16", "p12")["precision"] == 12
    assert_ordered_bounds(cmp)
    for part in ("intersection", "a_only", "b_only"):
        assert_near(cmp, part, 20_000)
    assert_near(cmp, "jaccard", 1 / 3)
    # the sketches themselves keep their precisions, and two p16 sketches
    # compare at 16, with 16 times the registers and a smaller error
    assert hll_info(r, "p16")["Precision"] == 16
    r.execute_command("HLL.RESERVE", "p16b", 16)
    tools.hll_add(r, "p16b", a)
    fine = hll_compare(r, "p16b", "p16")
    assert fine["precision"] == 16
    assert fine["intersection_error"] < cmp["intersection_error"], (fine, cmp)
    assert_near(fine, "intersection", 20_000)


def server_version(c):
    return tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:3])


def test_compare_acl(servers, tools):
    """HLL.COMPARE reads two keys: ACL key patterns see both (a user
    limited to u:* may compare u:a with u:b, not with another key), and
    read-only key permissions (%R~) suffice. By category: @read and
    @hyperloglog on Redis 7.2+, where modules name categories; by name on
    every version."""
    s = servers.start()
    admin = s.client()
    tools.hll_add(admin, "u:a", tools.items("acl", 1000))
    admin.pfadd("u:b", *tools.items("acl", 500))
    admin.pfadd("other", "x")
    expected = hll_compare(admin, "u:a", "u:b")

    def user(name, *rules):
        assert admin.execute_command("ACL", "SETUSER", name, "on", ">pw", *rules) == b"OK"
        return s.client(username=name, password="pw")

    def denied(c, *args):
        with pytest.raises(ResponseError) as e:
            c.execute_command(*args)
        message = "no permissions to run the '%s' command" % args[0].lower()
        assert message in err(e).lower(), (args, err(e))

    # the server's own ACL error for a key: Valkey 8 words it differently
    no_key = ("No permissions to access a key" if tools.server_is_valkey(admin)
              else "no permissions to access one of the keys")
    keys = user("keys", "~u:*", "+@all")
    assert hll_compare(keys, "u:a", "u:b") == expected
    for args in (("u:a", "other"), ("other", "u:b"), ("other", "other")):
        with pytest.raises(ResponseError, match=no_key):
            keys.execute_command("HLL.COMPARE", *args)

    reader = user("reader", "%R~*", "+@all")
    assert hll_compare(reader, "u:a", "u:b") == expected
    with pytest.raises(ResponseError, match=no_key):
        reader.execute_command("HLL.ADD", "u:a", "y")

    named = user("named", "~*", "+hll.compare")
    assert hll_compare(named, "u:a", "u:b") == expected
    denied(named, "HLL.ADD", "u:a", "y")

    writer = user("writer", "~*", "+@write")
    denied(writer, "HLL.COMPARE", "u:a", "u:b")
    if server_version(admin) >= (7, 2, 0):
        assert hll_compare(user("read", "~*", "+@read"), "u:a", "u:b") == expected
        assert hll_compare(user("hll", "~*", "+@hyperloglog"), "u:a", "u:b") == expected
        denied(user("noread", "~*", "+@all", "-@read"), "HLL.COMPARE", "u:a", "u:b")
    else:
        # Redis 7.0 puts module commands in no category
        denied(user("read", "~*", "+@read"), "HLL.COMPARE", "u:a", "u:b")


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
                     ["HLL.EXPORT", key], ["HLL.MERGE", key, "ok"], ["HLL.MERGE", "ok", key],
                     ["HLL.COMPARE", key, "ok"], ["HLL.COMPARE", "ok", key],
                     ["HLL.COMPARE", key, "missing"], ["HLL.COMPARE", key, key]):
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
                     ["HLL.INFO", key], ["HLL.EXPORT", key], ["HLL.MERGE", "ok", key],
                     ["HLL.COMPARE", key, "ok"], ["HLL.COMPARE", "ok", key]):
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
    ["HLL.COMPARE"], ["HLL.COMPARE", "h"], ["HLL.COMPARE", "h", "h", "h"],
    ["HLL.COMPARE", "h", "missing", "h", "missing"],
])
def test_wrong_arity(r, args):
    r.execute_command("HLL.ADD", "h", "a")
    with pytest.raises(ResponseError) as e:
        r.execute_command(*args)
    assert "wrong number of arguments" in err(e).lower(), err(e)
    assert r.execute_command("HLL.COUNT", "h") == 1
