# SPDX-License-Identifier: BSD-3-Clause
"""What an item is, from Python: the bytes each kind of object stands for
(docs/python.md), the same from a list, an iterator, a numpy array of any
supported dtype and a pandas Series, and the same as the command's lines
and Redis's PFADD strings. The comparison with PostgreSQL's hll_agg is in
tests/postgres/test_postgres_python.py, which has the server."""
import math
import os
import random
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import sketch


def sketch_of(items, precision=14):
    h = sketch.HyperLogLog(precision)
    h.update(items)
    return h.to_bytes()


def sketch_of_bytes(items, precision=14):
    """The sketch the library builds from these exact byte strings, one add each."""
    h = sketch.HyperLogLog(precision)
    for item in items:
        h.add(bytes(item))
    return h.to_bytes()


def test_item_bytes_of_each_kind():
    assert sketch.item_bytes("héllo") == "héllo".encode("utf-8")
    assert sketch.item_bytes(b"\x00\xff") == b"\x00\xff"
    assert sketch.item_bytes(bytearray(b"ab")) == b"ab"
    assert sketch.item_bytes(memoryview(b"abc")[1:]) == b"bc"
    assert sketch.item_bytes(42) == b"42"
    assert sketch.item_bytes(-7) == b"-7"
    assert sketch.item_bytes(2**64 + 5) == str(2**64 + 5).encode()
    assert sketch.item_bytes(-(2**63)) == str(-(2**63)).encode()
    assert sketch.item_bytes(True) == b"t" and sketch.item_bytes(False) == b"f"
    assert sketch.item_bytes(np.int64(-3)) == b"-3"
    assert sketch.item_bytes(np.uint8(200)) == b"200"
    assert sketch.item_bytes(np.bool_(True)) == b"t"
    assert sketch.item_bytes(np.float64(0.5)) == b"0.5"
    assert sketch.item_bytes(np.str_("x")) == b"x"
    for bad in (None, [1], {"a": 1}, object(), np.float32(1.5), 1j):
        with pytest.raises(TypeError):
            sketch.item_bytes(bad)
    with pytest.raises(UnicodeEncodeError):
        sketch.item_bytes("\ud800")


@pytest.mark.parametrize("value,text", [
    (1.5, "1.5"), (2.0, "2"), (-0.0, "-0"), (0.0, "0"), (0.1, "0.1"), (1e14, "100000000000000"),
    (1e15, "1e+15"), (123456789012345.6, "123456789012345.6"), (0.0001, "0.0001"),
    (0.00001, "1e-05"), (1.25e-7, "1.25e-07"), (1e100, "1e+100"), (5e-324, "5e-324"),
    (float("inf"), "Infinity"), (float("-inf"), "-Infinity"), (float("nan"), "NaN"),
    (-12.5, "-12.5")])
def test_float_text_is_float8out(value, text):
    """float8out's layout, as docs/postgres.md's rule gives it (the server
    itself agrees in tests/postgres/test_postgres_python.py)."""
    assert sketch.item_bytes(value) == text.encode()


def test_float_text_reads_back_in_at_most_17_digits():
    rng = random.Random(7)
    for _ in range(20000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isnan(x) or math.isinf(x):
            continue
        text = sketch.item_bytes(x).decode()
        assert float(text) == x
        assert len(text.split("e")[0].replace("-", "").replace(".", "").strip("0")) <= 17


def test_float_text_is_never_halfway_to_a_neighbour():
    """Python's repr may print a string halfway between a double with an
    even significand and its neighbour (it reads back by round-half-even);
    float8out never does, and prints the next longer one."""
    x = float.fromhex("0x1.5757239bd3aa2p+61")
    assert repr(x) == "3.092535278770144e+18"
    assert sketch.item_bytes(x) == b"3.0925352787701443e+18"


def test_float_text_ignores_a_decimal_comma_locale(tmp_path):
    """A program that sets a locale with a decimal comma (de_DE, made here
    with localedef from Debian's locales package) gets the same text."""
    from conftest import SITE
    made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8",
                           str(tmp_path / "de_DE.UTF-8")], capture_output=True, text=True)
    assert (tmp_path / "de_DE.UTF-8").is_dir(), made.stderr
    child = ("import locale, sys\n"
             "sys.path.insert(0, sys.argv[1])\n"
             "import sketch\n"
             "locale.setlocale(locale.LC_ALL, 'de_DE.UTF-8')\n"
             "assert locale.localeconv()['decimal_point'] == ','\n"
             "x = float.fromhex('0x1.5757239bd3aa2p+61')\n"
             "print(sketch.item_bytes(x).decode(), sketch.item_bytes(1.5).decode())\n")
    out = subprocess.run([sys.executable, "-c", child, SITE], capture_output=True, text=True,
                         env=dict(os.environ, LOCPATH=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3.0925352787701443e+18", "1.5"]


def test_every_input_form_gives_the_same_sketch():
    words = ["w%d-é" % i for i in range(5000)]
    expected = sketch_of_bytes(w.encode() for w in words)
    assert sketch_of(words) == expected
    assert sketch_of(tuple(words)) == expected
    assert sketch_of(iter(words)) == expected
    assert sketch_of(w for w in words) == expected
    assert sketch_of(np.array(words)) == expected
    assert sketch_of(np.array(words, dtype=object)) == expected
    assert sketch_of(pd.Series(words)) == expected
    assert sketch_of(pd.Series(words, dtype="string")) == expected
    assert sketch_of(np.array([w.encode() for w in words])) == expected
    assert sketch_of([w.encode() for w in words]) == expected
    assert sketch_of([bytearray(w.encode()) for w in words]) == expected
    assert sketch_of([memoryview(w.encode()) for w in words]) == expected


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64"])
def test_integer_arrays_are_their_decimal_text(dtype):
    info = np.iinfo(dtype)
    values = np.random.default_rng(5).integers(info.min, info.max, 3000, dtype=dtype, endpoint=True)
    values[:3] = [info.min, info.max, 0]
    expected = sketch_of_bytes(str(int(v)).encode() for v in values)
    assert sketch_of(values) == expected
    assert sketch_of(values.tolist()) == expected
    assert sketch_of(values[::-1]) == expected           # a negative stride
    assert sketch_of(pd.Series(values)) == expected


def test_float_bool_and_strided_arrays():
    rng = np.random.default_rng(3)
    floats = np.concatenate([rng.normal(size=2000) * 10.0 ** rng.integers(-20, 20, 2000),
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 1e15, 1e-5]])
    expected = sketch_of_bytes(sketch.item_bytes(float(x)) for x in floats)
    assert sketch_of(floats) == expected
    assert sketch_of(floats.tolist()) == expected
    bools = np.array([True, False, True])
    assert sketch_of(bools) == sketch_of_bytes([b"t", b"f"])
    matrix = np.arange(40, dtype=np.int64).reshape(8, 5)
    assert sketch_of(matrix[:, 2]) == sketch_of([str(v) for v in range(2, 40, 5)])


def test_fixed_width_arrays_drop_their_padding():
    s_array = np.array([b"a", b"bbbb", b"a\x00b", b""])
    assert s_array.dtype.itemsize == 4
    assert sketch_of(s_array) == sketch_of_bytes([b"a", b"bbbb", b"a\x00b", b""])
    u_array = np.array(["€", "abc", "\U0001f600x", ""])
    assert sketch_of(u_array) == sketch_of_bytes(
        [s.encode() for s in ["€", "abc", "\U0001f600x", ""]])


def test_answers_are_a_list_unless_given_a_numpy_array():
    import array
    f = sketch.BloomFilter(1000)
    f.update(["1", "2"])
    assert f.contains_many(array.array("q", [1, 3])) == [True, False]
    assert f.contains_many(memoryview(np.array([2, 4]))) == [True, False]
    found = f.contains_many(np.array([1, 4]))
    assert isinstance(found, np.ndarray) and found.tolist() == [True, False]
    assert isinstance(f.contains_many(pd.Series(["1"])), np.ndarray)


def test_str_arrays_of_every_length_and_mix():
    """Runs of ASCII are converted eight code points at a time: every
    length and every place of a non-ASCII code point gives the str's UTF-8."""
    words = []
    for length in range(0, 40):
        base = "".join(chr(97 + (i * 7 + length) % 26) for i in range(length))
        words.append(base)
        for at in range(0, length, 3):
            for odd in ("\x80", "é", "€", "\U0001f600", "\x7f"):
                words.append(base[:at] + odd + base[at + 1:])
    array = np.array(words)
    assert sketch_of(array) == sketch_of_bytes(w.encode() for w in words)
    assert sketch_of(array[::-3]) == sketch_of_bytes(w.encode() for w in words[::-3])
    for bad in ("abcdefgh\ud800", "abcdefghijklmno\udfff", "\ud800abcdefgh"):
        with pytest.raises(ValueError, match="surrogate"):
            sketch.HyperLogLog().update(np.array(["x" * 20, bad]))
    beyond = np.array([65] * 9 + [0x110000], dtype=np.uint32).view("<U10")
    with pytest.raises(ValueError, match="U\\+10FFFF"):
        sketch.HyperLogLog().update(beyond)


def test_inputs_refused_with_clear_errors():
    h = sketch.HyperLogLog()
    for one_item in ("abc", b"abc", bytearray(b"abc")):
        with pytest.raises(TypeError, match="add"):
            h.update(one_item)
    with pytest.raises(TypeError):
        h.update(12)
    with pytest.raises(TypeError, match="float32"):
        h.update(np.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="byte order"):
        h.update(np.arange(3, dtype=">i8"))
    with pytest.raises(ValueError, match="one-dimensional"):
        h.update(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError):
        h.update(np.zeros(2, dtype=[("a", "i4"), ("b", "f8")]))
    with pytest.raises(ValueError, match="surrogate"):
        h.update(np.array(["ok", "\ud800"]))
    with pytest.raises(TypeError):
        h.update(["ok", None])
    for scalar in (np.float64(1.5), np.int64(3), np.array(7)):
        with pytest.raises(TypeError, match="add"):
            h.update(scalar)
    assert h.count() == 0


def test_a_failed_update_keeps_the_batches_before_the_bad_item():
    """Items go in a batch (1024) at a time: the batches read before the
    one with the bad item are in, that batch is not, and the sketch stays
    usable."""
    good = ["g%d" % i for i in range(2500)]
    h = sketch.HyperLogLog()
    with pytest.raises(TypeError):
        h.update(good + [None])
    assert h.to_bytes() == sketch_of(good[:2048])
    h.update(good)
    assert h.to_bytes() == sketch_of(good)


def test_an_iterator_that_raises_stops_update():
    def items():
        yield "a"
        raise RuntimeError("source failed")
    h = sketch.HyperLogLog()
    with pytest.raises(RuntimeError, match="source failed"):
        h.update(items())


def test_same_sketch_as_the_command(run_sketch, tmp_path):
    lines = ["user%d" % (i * 7919 % 100003) for i in range(60000)] + ["ünïcode", "42", "-1"]
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    saved = tmp_path / "lines.hll"
    count = run_sketch("count", "-o", saved, path).stdout.strip()
    h = sketch.HyperLogLog()
    h.update(lines)
    assert h.to_bytes() == saved.read_bytes()
    assert str(h.count()) == count
    ints = sketch.HyperLogLog()
    ints.update(np.arange(-500, 5000))
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("".join("%d\n" % v for v in range(-500, 5000)))
    saved_numbers = tmp_path / "numbers.hll"
    run_sketch("count", "-o", saved_numbers, numbers)
    assert ints.to_bytes() == saved_numbers.read_bytes()


def test_same_registers_as_redis(redis_client):
    words = ["visitor:%d" % i for i in range(30000)] + [str(i) for i in range(100)]
    redis_client.delete("py:pf")
    for i in range(0, len(words), 1000):
        redis_client.pfadd("py:pf", *words[i:i + 1000])
    h = sketch.HyperLogLog()
    h.update(words)
    assert redis_client.pfcount("py:pf") == h.count()
    from_redis = sketch.HyperLogLog.from_redis(redis_client.get("py:pf"))
    assert from_redis.to_bytes() == h.to_bytes()
    redis_client.set("py:ours", h.to_redis())
    assert redis_client.pfcount("py:ours") == h.count()
    redis_client.pfmerge("py:both", "py:ours", "py:pf")
    assert redis_client.pfcount("py:both") == h.count()
    # A sparse Redis string (a few items) reads back too.
    redis_client.pfadd("py:small", "a", "b", 7)
    small = sketch.HyperLogLog.from_redis(redis_client.get("py:small"))
    mine = sketch.HyperLogLog()
    mine.update(["a", "b", 7])
    assert small.to_bytes() == mine.to_bytes()
    assert sketch.HyperLogLog.from_redis(redis_client.get("py:missing")).count() == 0
