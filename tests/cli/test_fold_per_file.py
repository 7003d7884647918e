# SPDX-License-Identifier: BSD-3-Clause
"""`sketch hll fold` and `sketch count --per-file`."""
import pytest

ITEMS = b"".join(b"v-%d\n" % i for i in range(20000))


@pytest.mark.parametrize("p", [4, 10, 13, 14])
def test_fold_is_the_sketch_built_at_that_precision(sk, tmp_path, p):
    big = tmp_path / "p14.hll"
    sk.ok("hll", "add", big, input=ITEMS)
    folded = tmp_path / "folded.hll"
    sk.ok("hll", "fold", "-p", str(p), "-o", folded, big)
    direct = tmp_path / "direct.hll"
    sk.ok("hll", "add", "-p", str(p), direct, input=ITEMS)
    assert folded.read_bytes() == direct.read_bytes()
    # in place, under the file's lock
    sk.ok("hll", "fold", "-p", str(p), big)
    assert big.read_bytes() == direct.read_bytes()


def test_fold_refusals_and_formats(sk, tmp_path):
    h = tmp_path / "h.hll"
    sk.ok("hll", "add", "-p", "12", h, "a")
    assert "a fold lowers it" in sk.fail("hll", "fold", "-p", "14", h)
    assert "missing -p" in sk.fail("hll", "fold", h)
    # a Redis string folded below 14 becomes a sketch in sketch's format
    r = tmp_path / "r.hyll"
    sk.ok("hll", "add", "--redis", r, input=ITEMS)
    sk.ok("hll", "fold", "-p", "12", r)
    assert r.read_bytes()[:4] == b"SKHL"
    assert sk.info(r)["registers"] == "4096"
    out = sk.ok("hll", "fold", "-p", "8", "-o", "-", r)
    assert out.stdout[:4] == b"SKHL"


def test_per_file_counts(sk, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    a.write_bytes(b"".join(b"x%d\n" % i for i in range(100)))
    b.write_bytes(b"".join(b"x%d\n" % i for i in range(50, 250)))
    c.write_bytes(b"")
    out = sk.ok("count", "--per-file", a, b, c).stdout.decode().splitlines()
    assert out == ["%d\t%s" % (sk.count(a), a), "%d\t%s" % (sk.count(b), b), "0\t%s" % c,
                   "%d\ttotal" % sk.count(a, b, c)]
    assert sk.ok("count", "--per-file", a).stdout.decode() == "%d\t%s\n" % (sk.count(a), a)
    assert "not both" in sk.fail("count", "--per-file", "--json", a)
