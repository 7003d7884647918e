# SPDX-License-Identifier: BSD-3-Clause
"""HyperLogLogMap from Python: each group against the HyperLogLog of its
items (byte for byte), the map against `sketch count --by` and its group
files, numpy and pandas input, keys that are not UTF-8, pickling, threads,
and its errors."""
import copy
import pickle
import random
import threading

import numpy as np
import pandas as pd
import pytest

import sketch


def grouped(lines):
    """{key: [items]} of (key, item) pairs, keys in the order they first came."""
    groups = {}
    for key, item in lines:
        groups.setdefault(key, []).append(item)
    return groups


def sample(n=30000, groups=50, seed=1):
    rng = random.Random(seed)
    # group g has about n / (g + 1) lines: counts from tiny (sparse) to large (dense)
    weights = [1 / (g + 1) for g in range(groups)]
    keys = rng.choices(["page/%d" % g for g in range(groups)], weights, k=n)
    return [(k, "user%d" % rng.randrange(n // 2)) for k in keys]


def test_defaults_repr_and_dict_reading():
    m = sketch.HyperLogLogMap()
    assert (m.precision, len(m), repr(m)) == (14, 0, "HyperLogLogMap(precision=14, groups=0)")
    assert m.add("/home", "alice") is True and m.add("/home", "alice") is False
    m.add("/home", "bob")
    m.add("/cart", "alice")
    assert len(m) == 2 and m["/home"] == 2 and m["/cart"] == 1
    assert list(m) == m.keys() == ["/home", "/cart"]      # the order keys first came
    assert m.items() == [("/home", 2), ("/cart", 1)] and m.values() == [2, 1]
    assert "/home" in m and "/none" not in m and b"/home" in m
    assert m.get("/none") is None and m.get("/none", 0) == 0 and m.get("/cart") == 1
    with pytest.raises(KeyError):
        m["/none"]
    with pytest.raises(KeyError):
        m.sketch("/none")
    with pytest.raises(KeyError):
        m.estimate("/none")
    assert m.memory > 0 and repr(m) == "HyperLogLogMap(precision=14, groups=2)"
    assert sketch.HyperLogLogMap(precision=6).precision == 6
    assert "surrogateescape" in sketch.HyperLogLogMap.__doc__
    assert "surrogateescape" in sketch.HyperLogLogMap.keys.__doc__


@pytest.mark.parametrize("precision", [0, 3, 19, -1, 2**32 + 14, -(2**64) + 14])
def test_precision_out_of_range(precision):
    """Refused, never wrapped into range (2**32 + 14 is not 14)."""
    with pytest.raises(ValueError):
        sketch.HyperLogLogMap(precision)
    with pytest.raises(TypeError):
        sketch.HyperLogLogMap("14")


@pytest.mark.parametrize("precision", [10, 14])
def test_each_group_is_the_hyperloglog_of_its_items(precision):
    lines = sample()
    m = sketch.HyperLogLogMap(precision)
    m.update([k for k, _ in lines], [i for _, i in lines])
    groups = grouped(lines)
    assert m.keys() == list(groups)
    for key, items in groups.items():
        h = sketch.HyperLogLog(precision)
        h.update(items)
        assert m.sketch(key).to_bytes() == h.to_bytes(), key
        assert m[key] == h.count() and m.estimate(key) == h.estimate()
        assert m.estimate(key, sigmas=3) == h.estimate(sigmas=3)
    with pytest.raises(ValueError):
        m.estimate("page/0", sigmas=0)
    one_by_one = sketch.HyperLogLogMap(precision)
    for k, i in lines:
        one_by_one.add(k, i)
    assert one_by_one.to_bytes() == m.to_bytes()


def test_numpy_and_pandas_input_equal_lists():
    lines = sample(20000, 30, seed=2)
    keys, items = [k for k, _ in lines], [i for _, i in lines]
    expected = sketch.HyperLogLogMap()
    expected.update(keys, items)
    inputs = [(np.array(keys), np.array(items)), (np.array(keys).astype("S"), items),
              (pd.Series(keys), pd.Series(items)), (tuple(keys), iter(items)),
              (keys, np.array(items, dtype=object))]
    for k, i in inputs:
        m = sketch.HyperLogLogMap()
        m.update(k, i)
        assert m.to_bytes() == expected.to_bytes(), (type(k), type(i))
    numbers = sketch.HyperLogLogMap()
    numbers.update(np.arange(1000) % 7, np.arange(1000, dtype=np.int64))
    by_text = sketch.HyperLogLogMap()
    by_text.update([str(x % 7) for x in range(1000)], [str(x) for x in range(1000)])
    assert numbers.to_bytes() == by_text.to_bytes() and numbers[3] == numbers["3"]
    with pytest.raises(ValueError, match="length"):
        sketch.HyperLogLogMap().update(keys, items[:-1])
    # Lengths known: compared before any pair goes in.
    unchanged = sketch.HyperLogLogMap()
    with pytest.raises(ValueError, match="length"):
        unchanged.update(["a"] * 1500, ["x"] * 1025)
    assert len(unchanged) == 0
    # The items' reader fails, not the keys': its own error, not another.
    with pytest.raises(ValueError, match="surrogate"):
        sketch.HyperLogLogMap().update(np.array(["k", "l"]), np.array(["ok", "\ud800"]))
    with pytest.raises(TypeError, match="item"):
        sketch.HyperLogLogMap().update(["k", "l"], ["ok", None])
    with pytest.raises(TypeError):
        sketch.HyperLogLogMap().update("ab", "cd")   # str is one item
    with pytest.raises(TypeError):
        sketch.HyperLogLogMap().update([1, None], [1, 2])


def test_keys_that_are_not_utf8_go_round():
    m = sketch.HyperLogLogMap()
    raw = [b"\xff\xfe", b"caf\xc3\xa9", b"\x80abc", b""]
    for i, key in enumerate(raw):
        m.add(key, "item%d" % i)
    keys = m.keys()
    assert keys[1] == "café" and keys[0] == "\udcff\udcfe"
    assert [k.encode("utf-8", "surrogateescape") for k in keys] == raw
    for i, key in enumerate(keys):   # each str finds its group, and adds to it
        assert key in m and m[key] == 1
        m.add(key, "more")
        assert m[raw[i]] == 2
    assert len(m) == 4


def test_the_command_count_by_agrees(run_sketch, tmp_path):
    lines = sample(20000, 40, seed=3)
    data = tmp_path / "log.txt"
    data.write_text("".join("%s %s\n" % (k, i) for k, i in lines))
    saved = tmp_path / "groups.hll"
    out = run_sketch("count", "-d", " ", "-f", "2", "--by", "1", "-o", saved, data).stdout
    m = sketch.HyperLogLogMap()
    m.update([k for k, _ in lines], [i for _, i in lines])
    assert dict(line.split("\t") for line in out.splitlines()) == \
        {k: str(c) for k, c in m.items()}
    from_file = sketch.HyperLogLogMap.open(saved)
    assert sorted(from_file.keys()) == sorted(m.keys())
    for key in m:
        assert from_file.sketch(key).to_bytes() == m.sketch(key).to_bytes()
    # a group file saved here is read by the command, group by group
    mine = tmp_path / "mine.hll"
    m.save(mine)
    assert mine.read_bytes() == m.to_bytes()
    printed = run_sketch("hll", "count", mine).stdout
    assert printed == "".join("%s\t%d\n" % (k, c) for k, c in sorted(m.items()))
    run_sketch("hll", "count", "--json", mine)
    with pytest.raises(FileNotFoundError) as e:
        sketch.HyperLogLogMap.open(tmp_path / "missing")
    assert e.value.filename == tmp_path / "missing"
    with pytest.raises(OSError):
        m.save(tmp_path / "no" / "such" / "dir")
    plain = tmp_path / "plain.hll"
    sketch.HyperLogLog().save(plain)
    with pytest.raises(ValueError):
        sketch.HyperLogLogMap.open(plain)


def test_merge_and_merge_sketch():
    lines = sample(20000, 20, seed=4)
    half = len(lines) // 2
    a, b, whole = sketch.HyperLogLogMap(), sketch.HyperLogLogMap(), sketch.HyperLogLogMap()
    for part, target in ((lines[:half], a), (lines[half:], b), (lines, whole)):
        target.update([k for k, _ in part], [i for _, i in part])
    a.merge(b)
    assert sorted(a.keys()) == sorted(whole.keys())
    for key in whole:
        assert a.sketch(key).to_bytes() == whole.sketch(key).to_bytes()
    a.merge(a)   # itself: nothing changes
    h = sketch.HyperLogLog()
    h.update(["x", "y", "z"])
    a.merge_sketch("new group", h)
    a.merge_sketch("page/0", h)
    assert a.sketch("new group").to_bytes() == h.to_bytes()
    expected = whole.sketch("page/0")
    expected.merge(h)
    assert a.sketch("page/0").to_bytes() == expected.to_bytes()
    fine = sketch.HyperLogLog(16)   # a finer sketch folds to the map's precision
    fine.update(range(5000))
    a.merge_sketch("fine", fine)
    folded = sketch.HyperLogLog(14)
    folded.update(range(5000))
    assert a.sketch("fine").to_bytes() == folded.to_bytes()
    with pytest.raises(ValueError):
        a.merge_sketch("coarse", sketch.HyperLogLog(10))
    with pytest.raises(ValueError):
        a.merge(sketch.HyperLogLogMap(12))
    with pytest.raises(TypeError):
        a.merge(h)
    with pytest.raises(TypeError):
        a.merge_sketch("k", a)
    with pytest.raises(ValueError):
        a.add(b"k" * 70000, "too long a key")


def test_clear_copy_bytes_pickle():
    m = sketch.HyperLogLogMap(12)
    lines = sample(5000, 10, seed=5)
    m.update([k for k, _ in lines], [i for _, i in lines])
    data = m.to_bytes()
    assert sketch.HyperLogLogMap.from_bytes(data).to_bytes() == data
    assert sketch.HyperLogLogMap.from_bytes(bytearray(data)).to_bytes() == data
    assert pickle.loads(pickle.dumps(m)).to_bytes() == data
    for c in (m.copy(), copy.copy(m), copy.deepcopy(m)):
        assert c.to_bytes() == data
        c.add("only in the copy", 1)
        assert m.to_bytes() == data and "only in the copy" not in m
    empty = sketch.HyperLogLogMap(12).to_bytes()
    m.clear()
    assert len(m) == 0 and m.precision == 12 and m.to_bytes() == empty
    with pytest.raises(TypeError):
        sketch.HyperLogLogMap.from_bytes("text")


def test_corrupt_bytes_never_crash():
    m = sketch.HyperLogLogMap(8)
    lines = sample(3000, 6, seed=6)
    m.update([k for k, _ in lines], [i for _, i in lines])
    data = m.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.HyperLogLogMap.from_bytes(data[:n])
    # every byte is under a checksum (docs/hll-format.md): any flip is refused
    for i in range(len(data)):
        for bit in (0, 6):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            with pytest.raises(ValueError):
                sketch.HyperLogLogMap.from_bytes(flipped)
    rng = random.Random(8)
    for _ in range(2000):
        junk = data[:rng.randrange(0, 30)] + bytes(rng.getrandbits(8)
                                                   for _ in range(rng.randrange(0, 100)))
        with pytest.raises(ValueError):
            sketch.HyperLogLogMap.from_bytes(junk)


def test_threads_sharing_one_map_lose_nothing():
    """Four threads update one map at once, from arrays (the GIL released)
    and lists, and read it: every group is the sketch of all its items."""
    m = sketch.HyperLogLogMap()
    keys = [np.char.add("g", (np.arange(40000) % (10 + t)).astype(str)) for t in range(4)]
    items = [np.char.add("t%d-" % t, np.arange(40000).astype(str)) for t in range(4)]

    def work(t):
        for s in range(0, 40000, 4000):
            k, i = keys[t][s:s + 4000], items[t][s:s + 4000]
            if s % 8000:
                m.update(k, i)
            else:
                m.update(k.tolist(), i.tolist())
            m.items()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sketch.HyperLogLogMap()
    for t in range(4):
        expected.update(keys[t], items[t])
    assert sorted(m.keys()) == sorted(expected.keys())
    for key in expected:
        assert m.sketch(key).to_bytes() == expected.sketch(key).to_bytes()
