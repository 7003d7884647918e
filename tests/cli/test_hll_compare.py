# SPDX-License-Identifier: BSD-3-Clause
"""`sketch hll compare` and `sketch hll retention`: the overlap of two
sketches' sets, against the exact overlap of the items that built them."""
import json

import pytest

from sketch_cli_helpers import join_lines


def build(sk, path, start, stop, *options):
    """A sketch file of the items u<start> .. u<stop - 1>."""
    sk.ok("hll", "add", *options, path,
          input=join_lines([b"u%d" % i for i in range(start, stop)]))
    return path


def compare_json(sk, a, b):
    return json.loads(sk.ok("hll", "compare", "--json", a, b).stdout)


def within(part, truth, sigmas=3):
    """truth within `sigmas` reported standard errors (and a whole item)."""
    return abs(part["estimate"] - truth) <= sigmas * part["standard_error"] + 1


def test_compare_finds_a_known_overlap(sk, tmp_path):
    a = build(sk, tmp_path / "a.skh", 0, 100000)
    b = build(sk, tmp_path / "b.skh", 90000, 200000)
    c = compare_json(sk, a, b)
    assert c["precision"] == 14
    assert within(c["intersection"], 10000)
    assert within(c["a_only"], 90000)
    assert within(c["b_only"], 100000)
    assert within(c["union"], 200000)
    assert within(c["jaccard"], 10000 / 200000, sigmas=3)
    assert within(c["a_in_b"], 10000 / 100000, sigmas=3)
    for name in ("union", "intersection", "a_only", "b_only", "jaccard", "a_in_b"):
        part = c[name]
        bounds = part["bounds"]
        assert len(bounds) == 3
        for k in range(3):
            assert 0 <= bounds[k][0] <= part["estimate"] <= bounds[k][1]
            if k:
                assert bounds[k][0] <= bounds[k - 1][0] and bounds[k][1] >= bounds[k - 1][1]
    # a small intersection is resolved far below the union's error
    assert c["intersection"]["standard_error"] < 0.6 * c["union"]["standard_error"]


def test_compare_is_symmetric(sk, tmp_path):
    a = build(sk, tmp_path / "a.skh", 0, 30000)
    b = build(sk, tmp_path / "b.skh", 20000, 80000)
    ab, ba = compare_json(sk, a, b), compare_json(sk, b, a)
    assert ab["intersection"]["estimate"] == pytest.approx(ba["intersection"]["estimate"],
                                                           rel=1e-9)
    assert ab["a_only"]["estimate"] == pytest.approx(ba["b_only"]["estimate"], rel=1e-9)


def test_compare_extremes(sk, tmp_path):
    a = build(sk, tmp_path / "a.skh", 0, 50000)
    same = compare_json(sk, a, a)
    assert same["a_only"]["estimate"] == 0 and same["b_only"]["estimate"] == 0
    assert same["jaccard"]["estimate"] == 1
    inside = build(sk, tmp_path / "inside.skh", 0, 5000)
    c = compare_json(sk, inside, a)
    assert c["a_only"]["estimate"] == 0
    assert c["a_in_b"]["estimate"] == 1
    assert within(c["intersection"], 5000)
    apart = build(sk, tmp_path / "apart.skh", 10 ** 6, 10 ** 6 + 50000)
    c = compare_json(sk, a, apart)
    assert c["intersection"]["bounds"][2][0] == 0
    assert within(c["intersection"], 0)
    empty = tmp_path / "empty.skh"
    sk.ok("hll", "add", empty, input=b"")
    c = compare_json(sk, empty, empty)
    assert all(c[name]["estimate"] == 0 for name in ("union", "intersection", "jaccard"))


def test_compare_reads_redis_strings_and_folds_precisions(sk, tmp_path):
    a = build(sk, tmp_path / "a.skh", 0, 60000, "-p", "16")
    b = build(sk, tmp_path / "b.redis", 40000, 100000, "--redis")
    c = compare_json(sk, a, b)
    assert c["precision"] == 14
    assert within(c["intersection"], 20000)


def test_compare_text(sk, tmp_path):
    a = build(sk, tmp_path / "a.skh", 0, 20000)
    b = build(sk, tmp_path / "b.skh", 10000, 30000)
    out = sk.ok("hll", "compare", a, b).stdout.decode()
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for name in ("union", "intersection", "Jaccard"):
        assert name in rows
    assert "95.45%" in out
    # the text says what the JSON says
    c = compare_json(sk, a, b)
    assert "%.0f" % c["intersection"]["estimate"] in rows["intersection"]


@pytest.mark.parametrize("args", [[], ["one"], ["one", "two", "three"], ["--bogus", "a", "b"]])
def test_compare_usage_errors(sk, tmp_path, args):
    for name in ("one", "two", "three", "a", "b"):
        build(sk, tmp_path / name, 0, 10)
    sk.fail("hll", "compare", *args, cwd=tmp_path)


def test_compare_bad_files(sk, tmp_path):
    good = build(sk, tmp_path / "good.skh", 0, 10)
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a sketch at all")
    assert "junk" in sk.fail("hll", "compare", good, junk)
    assert "missing" in sk.fail("hll", "compare", tmp_path / "missing", good)
    # a group file is not one sketch
    groups = tmp_path / "g.skg"
    sk.ok("count", "--by", "1", "-f", "2", "-o", groups, input=b"x\ty\n")
    sk.fail("hll", "compare", good, groups)


def test_retention_table(sk, tmp_path):
    base = build(sk, tmp_path / "day0.skh", 0, 100000)
    later = [build(sk, tmp_path / "day1.skh", 60000, 160000),   # 40% back
             build(sk, tmp_path / "day7.skh", 90000, 190000),   # 10% back
             build(sk, tmp_path / "day30.skh", 99000, 199000)]  # 1% back
    r = json.loads(sk.ok("hll", "retention", "--json", base, *later).stdout)
    assert r["base"] == str(base)
    assert abs(r["cohort"] - 100000) < 4000
    assert [entry["file"] for entry in r["later"]] == [str(p) for p in later]
    for entry, back in zip(r["later"], (40000, 10000, 1000)):
        assert within(entry["returned"], back)
        assert within(entry["share"], back / 100000)
        assert abs(entry["count"] - 100000) < 4000
    text = sk.ok("hll", "retention", base, *later).stdout.decode()
    lines = [line for line in text.splitlines() if line.startswith(str(tmp_path))]
    assert len(lines) == 3 and all("%" in line for line in lines)


def test_retention_usage_errors(sk, tmp_path):
    base = build(sk, tmp_path / "base.skh", 0, 10)
    sk.fail("hll", "retention")
    sk.fail("hll", "retention", base)
    assert "missing" in sk.fail("hll", "retention", base, tmp_path / "missing")
