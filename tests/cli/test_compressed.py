# SPDX-License-Identifier: BSD-3-Clause
"""Compressed input: gzip, zstd and xz, recognized by their first bytes,
give the counts of what they hold; cut or damaged ones are an error."""
import random
import shutil
import subprocess

import pytest

from bloom_cli_helpers import change_marks

TOOLS = {"gzip": ["gzip", "-c"], "zstd": ["zstd", "-q", "-c"], "xz": ["xz", "-c"]}


def compress(codec, data):
    if shutil.which(TOOLS[codec][0]) is None:
        pytest.fail("%s is missing: apt-get install %s" % (
            TOOLS[codec][0], {"gzip": "gzip", "zstd": "zstd", "xz": "xz-utils"}[codec]),
            pytrace=False)
    return subprocess.run(TOOLS[codec], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


@pytest.fixture(scope="module")
def plain():
    rng = random.Random(7)
    lines = [b"user-%d" % rng.randrange(3000) for _ in range(200000)]
    return b"\n".join(lines) + b"\n", len(set(lines))


@pytest.mark.parametrize("codec", TOOLS)
def test_counts_what_it_holds(sk, tmp_path, plain, codec):
    data, distinct = plain
    packed = compress(codec, data)
    path = tmp_path / ("in." + codec)
    path.write_bytes(packed)
    raw = tmp_path / "in.txt"
    raw.write_bytes(data)
    expected = sk.count(raw)
    assert abs(expected - distinct) <= distinct * 0.03
    assert sk.count(path) == expected
    assert sk.count(input=packed) == expected
    assert sk.count(raw, path) == expected
    # two members or frames one after the other, as `cat a.gz b.gz` makes
    double = tmp_path / ("double." + codec)
    double.write_bytes(packed + compress(codec, b"another\n"))
    raw2 = tmp_path / "double.txt"
    raw2.write_bytes(data + b"another\n")
    assert sk.count(double) == sk.count(raw2)
    # into sketch and filter files, and checked against a filter
    h = tmp_path / "h.hll"
    sk.ok("hll", "add", h, input=packed)
    assert sk.hll_count(h) == expected
    b = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "10000", "-p", "0.001", b)
    sk.ok("bloom", "add", b, input=packed)
    out = sk.ok("bloom", "check", "-c", b, input=packed)
    assert int(out.stdout) == data.count(b"\n")
    # --raw: the bytes as they are
    with_raw = sk.ok("count", "--raw", path)
    raw_lines = tmp_path / "packed.bin"
    raw_lines.write_bytes(packed)
    assert int(with_raw.stdout) == sk.count("--raw", raw_lines)
    assert int(with_raw.stdout) != expected


@pytest.mark.parametrize("codec", TOOLS)
def test_cut_or_damaged_input_is_an_error(sk, tmp_path, plain, codec):
    data, _ = plain
    packed = compress(codec, data)
    cases = {
        "truncated": packed[:len(packed) // 2],
        "corrupt": packed[:len(packed) // 3] + bytes(b ^ 0x55 for b in
                                                     packed[len(packed) // 3:len(packed) // 3 + 64])
        + packed[len(packed) // 3 + 64:],
        "garbage after": packed + b"not compressed\n",
    }
    for name, bad in cases.items():
        path = tmp_path / (name.replace(" ", "_") + "." + codec)
        path.write_bytes(bad)
        msg = sk.fail("count", path)
        assert str(path) in msg and codec in msg, (name, msg)
        msg = sk.fail("count", input=bad)
        assert "standard input" in msg or codec in msg, (name, msg)
        # An add in place keeps the lines it read before the error, and the
        # file stays whole: checksums ok, no chunk left marked as changing.
        f = tmp_path / "f.bloom"
        sk.ok("bloom", "create", "-f", "-n", "100", "-p", "0.01", f)
        msg = sk.fail("bloom", "add", f, input=bad)
        assert codec in msg and "adding them again does no harm" in msg, (name, msg)
        assert change_marks(f.read_bytes()) == 0
        sk.ok("bloom", "info", "--verify", f)


def test_short_plain_input_is_not_mistaken(sk, tmp_path):
    """Inputs shorter than a magic number, or that begin like one and are
    not compressed at all under --raw, are lines as they are."""
    assert sk.count(input=b"a") == 1
    assert sk.count(input=b"\x1f") == 1
    assert sk.count(input=b"") == 0
    path = tmp_path / "looks.txt"
    path.write_bytes(b"\x1f\x8b not gzip\nsecond\n")
    assert "gzip" in sk.fail("count", path)
    assert sk.count("--raw", path) == 2


@pytest.mark.parametrize("codec", TOOLS)
def test_large_input_every_time(sk, tmp_path, codec):
    """Inputs larger than the decoder's buffers, counted many times: the
    decoding thread runs ahead of the reader, so an ordering mistake between
    them shows as a count that differs (or corrupt data) now and then."""
    rng = random.Random(11)
    data = b"".join(b"%016x\n" % rng.getrandbits(64) for _ in range(300000))
    path = tmp_path / ("big." + codec)
    path.write_bytes(compress(codec, data))
    assert path.stat().st_size > 1 << 20
    plain_path = tmp_path / "big.txt"
    plain_path.write_bytes(data)
    expected = sk.count(plain_path)
    counts = {sk.count(path) for _ in range(20)}
    assert counts == {expected}
