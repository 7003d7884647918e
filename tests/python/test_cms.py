# SPDX-License-Identifier: BSD-3-Clause
"""CountMinSketch from Python: its bytes against the library's own calls
(libsketch.so through ctypes, fed the same items), its accuracy against
exact counts, round trips, corrupt bytes, threads and errors."""
import collections
import copy
import ctypes
import os
import pickle
import random
import threading

import numpy as np
import pandas as pd
import pytest

import sketch



class CmsOptions(ctypes.Structure):
    _fields_ = [("width", ctypes.c_uint32), ("depth", ctypes.c_uint32), ("error", ctypes.c_double),
                ("delta", ctypes.c_double), ("max_memory", ctypes.c_uint64),
                ("allocator", ctypes.c_void_p)]


class CmsInfo(ctypes.Structure):
    _fields_ = [("width", ctypes.c_uint32), ("depth", ctypes.c_uint32), ("total", ctypes.c_uint64),
                ("memory", ctypes.c_size_t)]


@pytest.fixture(scope="module")
def lib(libsketch):
    """The library itself, for the answers the class must give."""
    L = libsketch
    P, U32, U64, SZ = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
    L.sk_cms_create.argtypes = [ctypes.POINTER(P), ctypes.POINTER(CmsOptions)]
    L.sk_cms_add.argtypes = [P, ctypes.c_char_p, SZ, U64, ctypes.POINTER(U32)]
    L.sk_cms_count.argtypes = [P, ctypes.c_char_p, SZ]
    L.sk_cms_count.restype = U32
    L.sk_cms_merge_weighted.argtypes = [P, ctypes.POINTER(P), ctypes.POINTER(ctypes.c_int64), SZ]
    L.sk_cms_get_info.argtypes = [P, ctypes.POINTER(CmsInfo)]
    L.sk_cms_serialized_size.argtypes = [P, ctypes.POINTER(U64)]
    L.sk_cms_serialize.argtypes = [P, ctypes.c_char_p, SZ, ctypes.POINTER(SZ)]
    L.sk_cms_free.argtypes = [P]
    return L


class LibCms:
    """An sk_cms driven directly, item bytes as sketch.item_bytes gives them."""

    def __init__(self, lib, **options):
        self.lib, self.c = lib, ctypes.c_void_p()
        opts = CmsOptions(**options)
        self.status = lib.sk_cms_create(ctypes.byref(self.c), ctypes.byref(opts))

    def add(self, item, count=1):
        data = sketch.item_bytes(item)
        est = ctypes.c_uint32()
        assert self.lib.sk_cms_add(self.c, data, len(data), count, ctypes.byref(est)) == 0
        return est.value

    def info(self):
        info = CmsInfo()
        self.lib.sk_cms_get_info(self.c, ctypes.byref(info))
        return info

    def to_bytes(self):
        size = ctypes.c_uint64()
        assert self.lib.sk_cms_serialized_size(self.c, ctypes.byref(size)) == 0
        buf, n = ctypes.create_string_buffer(size.value), ctypes.c_size_t()
        assert self.lib.sk_cms_serialize(self.c, buf, size.value, ctypes.byref(n)) == 0
        return buf.raw[:n.value]

    def __del__(self):
        self.lib.sk_cms_free(self.c)


def zipf_stream(n, distinct, seed, s=1.1):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, distinct + 1) ** s
    return rng.choice(distinct, size=n, p=weights / weights.sum())


def test_defaults_repr_and_properties(lib):
    c = sketch.CountMinSketch(2000, 5)
    assert (c.width, c.depth, c.total) == (2000, 5, 0)
    assert repr(c) == "CountMinSketch(width=2000, depth=5, total=0)"
    assert len(c.to_bytes()) == 40032   # docs/cms-format.md's example
    assert c.memory >= 40000 and c.memory == LibCms(lib, width=2000, depth=5).info().memory
    by_bound = sketch.CountMinSketch(error=0.001, delta=0.01)
    ref = LibCms(lib, error=0.001, delta=0.01).info()
    assert (by_bound.width, by_bound.depth) == (ref.width, ref.depth) == (2000, 7)
    assert "CMS.INCRBY" in sketch.CountMinSketch.add.__doc__ and "error" in sketch.CountMinSketch.__doc__


@pytest.mark.parametrize("kwargs, error", [
    ({}, ValueError),                                   # neither dimensions nor bounds
    ({"width": 10}, ValueError),                        # no depth
    ({"width": 10, "depth": 2, "error": 0.1}, ValueError),   # mixed
    ({"error": 1.5, "delta": 0.1}, ValueError),
    ({"error": 0.1, "delta": 0.0}, ValueError),
    ({"width": -1, "depth": 2}, ValueError),
    ({"width": 2 ** 32, "depth": 2}, ValueError),
    ({"width": 2 ** 31, "depth": 4}, ValueError),       # past 2**32 counters
    ({"width": 1000, "depth": 5, "max_memory": 1000}, ValueError),
    ({"width": "10", "depth": 2}, TypeError),
    ({"width": 10.0, "depth": 2}, TypeError),
    ({"error": "0.1", "delta": 0.1}, TypeError),
])
def test_bad_options(kwargs, error):
    with pytest.raises(error):
        sketch.CountMinSketch(**kwargs)


def test_same_bytes_and_estimates_as_the_library(lib):
    rng = random.Random(7)
    c, ref = sketch.CountMinSketch(300, 4), LibCms(lib, width=300, depth=4)
    for _ in range(3000):
        item = rng.choice([rng.randrange(500), "s%d" % rng.randrange(500), b"\x00\xff%d" % rng.randrange(50),
                           rng.random() * 100, True])
        count = rng.choice([0, 1, 1, 3, 1000])
        assert c.add(item, count) == ref.add(item, count)
    assert c.to_bytes() == ref.to_bytes()
    assert c.total == ref.info().total
    for item in ["s1", 3, b"\x00\xff7", "never"]:
        data = sketch.item_bytes(item)
        assert c.count(item) == lib.sk_cms_count(ref.c, data, len(data))


def test_every_input_form_gives_the_same_sketch():
    values = zipf_stream(20000, 3000, seed=1)
    forms = [values, values.tolist(), pd.Series(values), tuple(values.tolist()), iter(values.tolist()),
             values.astype(np.int32), values[::-1][::-1], np.repeat(values, 2)[::2]]
    sketches = []
    for form in forms:
        c = sketch.CountMinSketch(500, 5)
        c.update(form)
        sketches.append(c.to_bytes())
    one_by_one = sketch.CountMinSketch(500, 5)
    for v in values.tolist():
        one_by_one.add(v)
    assert all(s == one_by_one.to_bytes() for s in sketches)
    strings = values.astype(str)
    a, b = sketch.CountMinSketch(500, 5), sketch.CountMinSketch(500, 5)
    a.update(strings)
    b.update(strings.tolist())
    assert a.to_bytes() == b.to_bytes() == one_by_one.to_bytes()   # an int is its decimal text


def test_never_under_counts_and_over_counts_within_the_bound():
    """error 0.005, delta 0.01: every estimate is at least the truth, and
    the share of items over by more than error x total is below delta
    (over 3 streams; a wrong row hash or width breaks it by far)."""
    error, delta = 0.005, 0.01
    for seed in range(3):
        stream = zipf_stream(200000, 50000, seed=seed + 10)
        c = sketch.CountMinSketch(error=error, delta=delta)
        c.update(stream)
        truth = collections.Counter(stream.tolist())
        items = list(truth)
        estimates = c.counts_many(np.array(items))
        assert estimates == [c.count(i) for i in items[:1000]] + estimates[1000:]
        assert c.total == len(stream)
        over = 0
        for item, est in zip(items, estimates):
            assert est >= truth[item]
            over += est - truth[item] > error * c.total
        assert over / len(items) <= delta
        # a twentieth of the width in one row: far more than delta are over
        narrow = sketch.CountMinSketch(width=int(c.width / 20), depth=1)
        narrow.update(stream)
        est = narrow.counts_many(items)
        assert sum(e - truth[i] > error * c.total for i, e in zip(items, est)) / len(items) > delta


def test_counts_saturate_and_counts_many_forms():
    c = sketch.CountMinSketch(10, 2)
    assert c.add("x", 2 ** 32 + 5) == 2 ** 32 - 1     # a counter stops, the total does not
    assert c.total == 2 ** 32 + 5 and c.count("x") == 2 ** 32 - 1
    assert c.add("x", 0) == 2 ** 32 - 1 and c.total == 2 ** 32 + 5
    c.add("x", 2 ** 64 - 1 - c.total)
    assert c.total == 2 ** 64 - 1
    c.add("x")    # the total stops at 2**64 - 1
    assert c.total == 2 ** 64 - 1
    assert c.counts_many([]) == [] and c.counts_many(np.array([], dtype=np.int64)) == []
    assert c.counts_many(("x", "x")) == [2 ** 32 - 1] * 2
    for bad, error in [(-1, ValueError), (2 ** 64, ValueError), ("1", TypeError), (1.0, TypeError)]:
        with pytest.raises(error):
            c.add("x", bad)
    with pytest.raises(TypeError):
        c.add(["x"])
    with pytest.raises(TypeError):
        c.count(None)
    with pytest.raises(TypeError):
        c.update("abc")
    with pytest.raises(TypeError):
        c.counts_many(5)


def test_merge_and_weighted_merge(lib):
    s1, s2 = zipf_stream(10000, 800, seed=3), zipf_stream(10000, 800, seed=4)
    a, b, both = (sketch.CountMinSketch(400, 5) for _ in range(3))
    a.update(s1)
    b.update(s2)
    both.update(np.concatenate([s1, s2]))
    m = a.copy()
    m.merge(b)
    assert m.to_bytes() == both.to_bytes()
    doubled = a.copy()
    doubled.merge(doubled)
    twice = sketch.CountMinSketch(400, 5)
    for v in s1.tolist():
        twice.add(v, 2)
    assert doubled.to_bytes() == twice.to_bytes()

    # weighted: the library's own sk_cms_merge_weighted on the same sketches
    w = sketch.CountMinSketch(400, 5)
    w.update(["stays?"])
    w.merge_weighted([a, b, w], [3, 2, 5])
    refs = [LibCms(lib, width=400, depth=5), LibCms(lib, width=400, depth=5)]
    for v in s1.tolist():
        refs[0].add(v)
    for v in s2.tolist():
        refs[1].add(v)
    dst = LibCms(lib, width=400, depth=5)
    dst.add("stays?")
    srcs = (ctypes.c_void_p * 3)(refs[0].c, refs[1].c, dst.c)
    weights = (ctypes.c_int64 * 3)(3, 2, 5)
    assert lib.sk_cms_merge_weighted(dst.c, srcs, weights, 3) == 0
    assert w.to_bytes() == dst.to_bytes()
    assert w.count("stays?") >= 5

    # no weights: all 1; its own counts replaced
    u = sketch.CountMinSketch(400, 5)
    u.update(["gone"] * 50)
    u.merge_weighted([a, b])
    assert u.to_bytes() == both.to_bytes()

    # out of range: ValueError, unchanged
    before = u.to_bytes()
    with pytest.raises(ValueError):
        u.merge_weighted([a, b], [1, -2])
    with pytest.raises(ValueError):
        u.merge_weighted([a], [2 ** 40])
    assert u.to_bytes() == before
    with pytest.raises(ValueError):
        u.merge_weighted([a, b], [1])
    with pytest.raises(ValueError):
        u.merge(sketch.CountMinSketch(400, 4))
    with pytest.raises(ValueError):
        u.merge_weighted([sketch.CountMinSketch(401, 5)])
    with pytest.raises(TypeError):
        u.merge_weighted([a, "b"])
    with pytest.raises(TypeError):
        u.merge_weighted([a], [1.5])
    with pytest.raises(TypeError):
        u.merge_weighted(5)
    with pytest.raises(TypeError):
        u.merge(sketch.HyperLogLog())
    assert u.to_bytes() == before


def test_round_trips_copy_and_clear():
    c = sketch.CountMinSketch(100, 3)
    c.update(zipf_stream(5000, 300, seed=5))
    data = c.to_bytes()
    for back in (sketch.CountMinSketch.from_bytes(data), sketch.CountMinSketch.from_bytes(bytearray(data)),
                 sketch.CountMinSketch.from_bytes(memoryview(data)), pickle.loads(pickle.dumps(c)),
                 copy.copy(c), copy.deepcopy(c), c.copy()):
        assert type(back) is sketch.CountMinSketch and back.to_bytes() == data
        assert (back.width, back.depth, back.total) == (100, 3, 5000)
    other = c.copy()
    other.add("only in the copy", 10)
    assert c.to_bytes() == data and other.count("only in the copy") >= 10
    c.clear()
    assert c.total == 0 and c.to_bytes() == sketch.CountMinSketch(100, 3).to_bytes()


def test_corrupt_bytes_never_crash():
    c = sketch.CountMinSketch(40, 3)
    c.update(range(300))
    data = c.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.CountMinSketch.from_bytes(data[:n])
    with pytest.raises(ValueError):
        sketch.CountMinSketch.from_bytes(data + b"\x00")
    for i in range(len(data)):
        for bit in (0, 3, 7):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            with pytest.raises(ValueError):   # the checksum covers every byte
                sketch.CountMinSketch.from_bytes(bytes(bad))
    rng = random.Random(11)
    for _ in range(2000):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(80)))
        if rng.random() < 0.5:
            junk = data[:rng.randrange(40)] + junk
        try:
            sketch.CountMinSketch.from_bytes(junk)
        except (ValueError, MemoryError):
            pass
    with pytest.raises(TypeError):
        sketch.CountMinSketch.from_bytes("text")


def test_threads_sharing_one_sketch_lose_nothing():
    """Four threads add numpy arrays (the GIL released) and lists at once:
    counters add up in any order, so the bytes equal one sequential sketch."""
    c = sketch.CountMinSketch(1000, 5)
    chunks = [zipf_stream(40000, 2000, seed=20 + t) for t in range(4)]

    def work(t):
        for start in range(0, 40000, 4000):
            part = chunks[t][start:start + 4000]
            c.update(part if start % 8000 else part.tolist())
            c.count(1)
            c.add("shared", 1)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sketch.CountMinSketch(1000, 5)
    for chunk in chunks:
        expected.update(chunk)
    expected.add("shared", 40)
    assert c.to_bytes() == expected.to_bytes() and c.total == 160040


def test_merges_in_both_directions_at_once_do_not_deadlock():
    """a.merge(b) and b.merge(a) in two threads (empty sketches, so that
    the sums stay in range) finish: the locks are taken in one order."""
    a, b = sketch.CountMinSketch(50000, 4), sketch.CountMinSketch(50000, 4)

    def work(x, y):
        for _ in range(200):
            x.merge(y)
            x.merge_weighted([x, y], [1, 1])
    threads = [threading.Thread(target=work, args=(a, b)), threading.Thread(target=work, args=(b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert a.total == b.total == 0


def test_update_may_use_the_sketch_from_its_iterator():
    c = sketch.CountMinSketch(100, 3)
    c.update("x%d" % c.count("x0") for _ in range(10))
    assert c.count("x0") >= 1 and c.total == 10
