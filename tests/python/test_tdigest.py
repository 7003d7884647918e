# SPDX-License-Identifier: BSD-3-Clause
"""TDigest from Python: its bytes and answers against the library's own
calls (libsketch.so through ctypes, fed the same values), every numeric
input form giving the same digest, quantile accuracy against exact
quantiles, round trips, corrupt bytes, threads and errors."""
import copy
import ctypes
import math
import os
import pickle
import random
import threading

import numpy as np
import pandas as pd
import pytest

import sketch



class TdOptions(ctypes.Structure):
    _fields_ = [("compression", ctypes.c_uint32), ("max_memory", ctypes.c_uint64),
                ("allocator", ctypes.c_void_p)]


@pytest.fixture(scope="module")
def lib(libsketch):
    """The library itself, for the answers the class must give."""
    L = libsketch
    P, U64, SZ, D = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_double
    DP, IP = ctypes.POINTER(D), ctypes.POINTER(ctypes.c_int64)
    L.sk_tdigest_create.argtypes = [ctypes.POINTER(P), ctypes.POINTER(TdOptions)]
    L.sk_tdigest_add.argtypes = [P, D, U64]
    L.sk_tdigest_merge.argtypes = [P, P]
    L.sk_tdigest_compress.argtypes = [P]
    L.sk_tdigest_quantiles.argtypes = [P, DP, DP, SZ]
    L.sk_tdigest_cdf.argtypes = [P, DP, DP, SZ]
    L.sk_tdigest_rank.argtypes = [P, DP, IP, SZ, ctypes.c_int]
    L.sk_tdigest_by_rank.argtypes = [P, IP, DP, SZ, ctypes.c_int]
    L.sk_tdigest_trimmed_mean.argtypes = [P, D, D, DP]
    L.sk_tdigest_serialized_size.argtypes = [P, ctypes.POINTER(U64)]
    L.sk_tdigest_serialize.argtypes = [P, ctypes.c_char_p, SZ, ctypes.POINTER(SZ)]
    L.sk_tdigest_free.argtypes = [P]
    return L


class LibTdigest:
    """An sk_tdigest driven directly."""

    def __init__(self, lib, compression=100):
        self.lib, self.t = lib, ctypes.c_void_p()
        assert lib.sk_tdigest_create(ctypes.byref(self.t), ctypes.byref(TdOptions(compression))) == 0

    def add(self, value, weight=1):
        assert self.lib.sk_tdigest_add(self.t, value, weight) == 0

    def read(self, name, xs, reverse=None, out_type=ctypes.c_double, in_type=ctypes.c_double):
        n = len(xs)
        xin, out = (in_type * n)(*xs), (out_type * n)()
        args = [self.t, xin, out, n] + ([] if reverse is None else [reverse])
        assert getattr(self.lib, "sk_tdigest_" + name)(*args) == 0
        return list(out)

    def trimmed_mean(self, lo, hi):
        out = ctypes.c_double()
        assert self.lib.sk_tdigest_trimmed_mean(self.t, lo, hi, ctypes.byref(out)) == 0
        return out.value

    def to_bytes(self):
        size = ctypes.c_uint64()
        assert self.lib.sk_tdigest_serialized_size(self.t, ctypes.byref(size)) == 0
        buf, n = ctypes.create_string_buffer(size.value), ctypes.c_size_t()
        assert self.lib.sk_tdigest_serialize(self.t, buf, size.value, ctypes.byref(n)) == 0
        return buf.raw[:n.value]

    def __del__(self):
        self.lib.sk_tdigest_free(self.t)


def same(a, b):
    """Equal floats, NaN equal to NaN."""
    return all((x == y) or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b)) and len(a) == len(b)


def test_defaults_repr_and_empty_answers():
    t = sketch.TDigest()
    assert (t.compression, t.capacity, t.count, t.merged_nodes, t.unmerged_nodes) == (100, 610, 0, 0, 0)
    assert math.isnan(t.min) and math.isnan(t.max) and t.memory > 0
    assert repr(t) == "TDigest(compression=100, count=0)"
    assert math.isnan(t.quantile(0.5)) and math.isnan(t.cdf(1)) and t.rank(1) == -2
    assert math.isnan(t.by_rank(0)) and t.ranks([1, 2], reverse=True) == [-2, -2]
    assert sketch.TDigest(0).compression == 100 and sketch.TDigest(compression=500).capacity == 3010
    assert "TDIGEST" in sketch.TDigest.__doc__ and "TDIGEST.RANK" in sketch.TDigest.rank.__doc__


@pytest.mark.parametrize("args, kwargs, error", [
    ((-1,), {}, ValueError),
    ((2 ** 32,), {}, ValueError),
    ((357913940,), {}, ValueError),
    ((100,), {"max_memory": 100}, ValueError),
    (("100",), {}, TypeError),
    ((100.0,), {}, TypeError),
    ((100, 0), {}, TypeError),
])
def test_bad_options(args, kwargs, error):
    with pytest.raises(error):
        sketch.TDigest(*args, **kwargs)


def test_same_bytes_and_answers_as_the_library(lib):
    """Values and weights through add() and update(), a merge and a
    compression: the bytes and every read are the library's."""
    rng = random.Random(9)
    t, ref = sketch.TDigest(50), LibTdigest(lib, 50)
    for _ in range(3000):
        v, w = rng.lognormvariate(0, 2), rng.choice([1, 1, 1, 5, 100])
        t.add(v, w)
        ref.add(v, w)
    batch = [rng.gauss(10, 3) for _ in range(5000)]
    t.update(batch)
    for v in batch:
        ref.add(v)
    assert t.to_bytes() == ref.to_bytes()
    other, other_ref = sketch.TDigest(200), LibTdigest(lib, 200)
    more = [rng.uniform(-50, 50) for _ in range(2000)]
    other.update(np.array(more))
    for v in more:
        other_ref.add(v)
    t.merge(other)
    assert lib.sk_tdigest_merge(ref.t, other_ref.t) == 0
    assert t.to_bytes() == ref.to_bytes() and other.to_bytes() == other_ref.to_bytes()
    qs = [0, 0.001, 0.01, 0.25, 0.5, 0.75, 0.99, 0.999, 1]
    xs = [-60, -50, 0, 1, 10, 13.5, 50, 1e6, float("inf"), float("-inf")]
    ranks = [0, 1, 10, 1000, 10 ** 6, 2 ** 62]
    assert t.quantiles(qs) == ref.read("quantiles", qs) == [t.quantile(q) for q in qs]
    assert t.cdfs(xs) == ref.read("cdf", xs) == [t.cdf(x) for x in xs]
    for reverse in (0, 1):
        kw = {"reverse": bool(reverse)}
        expect = ref.read("rank", xs, reverse, out_type=ctypes.c_int64)
        assert t.ranks(xs, **kw) == expect == [t.rank(x, **kw) for x in xs]
        expect = ref.read("by_rank", ranks, reverse, in_type=ctypes.c_int64)
        assert same(t.by_ranks(ranks, **kw), expect) and same([t.by_rank(r, **kw) for r in ranks], expect)
    for lo, hi in ((0, 1), (0.1, 0.9), (0.5, 0.51), (0.99, 1)):
        assert t.trimmed_mean(lo, hi) == ref.trimmed_mean(lo, hi)
    assert t.to_bytes() == ref.to_bytes()        # reads change nothing
    assert t.compress() is bool(lib.sk_tdigest_compress(ref.t)) and t.unmerged_nodes == 0
    assert t.to_bytes() == ref.to_bytes() and t.compress() is False


def test_every_numeric_input_form_gives_the_same_digest():
    rng = np.random.default_rng(4)
    ints = rng.integers(-1000, 1000, 20000)
    as_list = sketch.TDigest()
    as_list.update(ints.tolist())
    forms = [ints, ints.astype(np.int32), ints.astype(np.int16), ints.astype(np.float64),
             ints.astype(np.float32), ints.astype(">i8"), ints.astype(object), pd.Series(ints),
             np.repeat(ints, 2)[::2], tuple(ints.tolist()), iter(ints.tolist()),
             (float(v) for v in ints.tolist()), memoryview(ints.astype(np.int64))]
    for form in forms:
        t = sketch.TDigest()
        t.update(form)
        assert t.to_bytes() == as_list.to_bytes()
    unsigned, u = rng.integers(0, 2 ** 63, 5000, dtype=np.uint64), sketch.TDigest()
    u.update(unsigned)
    one = sketch.TDigest()
    for v in unsigned.tolist():
        one.add(float(v))
    assert u.to_bytes() == one.to_bytes()
    b = sketch.TDigest()
    b.update(np.array([True, False, True]))
    assert (b.count, b.min, b.max) == (3, 0.0, 1.0)
    q = np.linspace(0, 1, 11)
    assert as_list.quantiles(q) == as_list.quantiles(q.tolist()) == as_list.quantiles(pd.Series(q))


def test_quantile_error_small_at_the_tails():
    """A million lognormal values at compressions 100 and 500: the rank of
    each estimated quantile is within the documented bound
    q(1-q) pi ln N / c of q (plus one value), tightest at the tails."""
    rng = np.random.default_rng(12)
    values = rng.lognormal(0, 1.5, 10 ** 6)
    exact = np.sort(values)
    n = len(values)
    qs = [0.0001, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999]
    for c in (100, 500):
        t = sketch.TDigest(c)
        t.update(values)
        assert t.count == n and t.min == exact[0] and t.max == exact[-1]
        def bound(q):
            return q * (1 - q) * math.pi * math.log(n) / c + 1 / n
        for q, est in zip(qs, t.quantiles(qs)):
            rank = np.searchsorted(exact, est) / n
            assert abs(rank - q) <= bound(q), (c, q)
        for q in qs:
            x = exact[int(q * n)]
            assert abs(t.cdf(x) - q) <= bound(q) and abs(t.rank(x) / n - q) <= bound(q), (c, q)
            assert abs(t.rank(x, reverse=True) / n - (1 - q)) <= bound(q), (c, q)
        assert t.quantile(0) == exact[0] and t.quantile(1) == exact[-1]
        assert abs(t.trimmed_mean(0.1, 0.9) / exact[n // 10:n - n // 10].mean() - 1) < 0.01


def test_bad_values_add_nothing():
    t = sketch.TDigest()
    t.update([1.0, 2.0, 3.0])
    before = t.to_bytes()
    for bad in ([4.0, float("nan")], np.array([4.0, np.inf]), [5, -float("inf")]):
        with pytest.raises(ValueError):
            t.update(bad)
    for bad in ([1, "2"], [1, None], ["1"], [[1]], np.array(["1", "2"])):
        with pytest.raises(TypeError):
            t.update(bad)
    for bad in ("123", b"123", bytearray(b"1"), 5, None):
        with pytest.raises(TypeError):
            t.update(bad)
    with pytest.raises(ValueError):
        t.update(np.zeros((2, 2)))
    for value, weight, error in ((float("nan"), 1, ValueError), (math.inf, 1, ValueError),
                                 (1.0, 0, ValueError), (1.0, -1, ValueError), (1.0, 2 ** 64, ValueError),
                                 ("1", 1, TypeError), (1.0, 1.5, TypeError), (None, 1, TypeError)):
        with pytest.raises(error):
            t.add(value, weight)
    with pytest.raises(ValueError):
        t.add(1.0, 2 ** 63)      # the total weight past 2**63 - 1
    assert t.to_bytes() == before
    for call, arg in ((t.quantile, 1.5), (t.quantile, -0.1), (t.quantiles, [0.5, 2]), (t.by_rank, -1),
                      (t.by_ranks, [1, -1])):
        with pytest.raises(ValueError):
            call(arg)
    for call, arg in ((t.quantile, "0.5"), (t.cdf, None), (t.rank, "1"), (t.by_rank, 1.5),
                      (t.by_ranks, [1.0]), (t.cdfs, "abc"), (t.ranks, 5)):
        with pytest.raises(TypeError):
            call(arg)
    for lo, hi in ((0.5, 0.5), (0.6, 0.5), (-0.1, 0.5), (0.1, 1.1)):
        with pytest.raises(ValueError):
            t.trimmed_mean(lo, hi)
    with pytest.raises(TypeError):
        t.merge(sketch.CountMinSketch(10, 2))
    assert t.to_bytes() == before


def test_merge_with_itself_and_weights():
    t = sketch.TDigest()
    t.update(range(1, 101))
    copy_of = t.copy()
    t.merge(t)
    twice = copy_of.copy()
    twice.merge(copy_of)
    assert t.to_bytes() == twice.to_bytes() and t.count == 200 and (t.min, t.max) == (1, 100)
    w = sketch.TDigest()
    w.add(5, 1000)
    w.add(7)
    assert w.count == 1001 and w.rank(5) == 500 and w.rank(7, reverse=True) == 0
    assert w.quantile(0.25) == 5


def test_round_trips_copy_and_clear():
    t = sketch.TDigest(30)
    t.update(np.random.default_rng(3).normal(size=1000))
    assert t.unmerged_nodes > 0       # the buffer travels too
    data = t.to_bytes()
    for back in (sketch.TDigest.from_bytes(data), sketch.TDigest.from_bytes(bytearray(data)),
                 pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t), t.copy()):
        assert type(back) is sketch.TDigest and back.to_bytes() == data
        assert back.quantiles([0.1, 0.5]) == t.quantiles([0.1, 0.5])
        assert (back.unmerged_nodes, back.total_compressions) == (t.unmerged_nodes, t.total_compressions)
    c = t.copy()
    c.add(1e9)
    assert t.to_bytes() == data and c.max == 1e9
    t.clear()
    assert t.count == 0 and t.compression == 30 and t.to_bytes() == sketch.TDigest(30).to_bytes()


def test_corrupt_bytes_never_crash():
    t = sketch.TDigest(5)
    t.update([1.5, 2.5, 100, -3, 7, 7, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22])
    t.compress()
    t.update([3, 4])
    data = t.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.TDigest.from_bytes(data[:n])
    with pytest.raises(ValueError):
        sketch.TDigest.from_bytes(data + b"\x00")
    for i in range(len(data)):
        for bit in (0, 7):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            with pytest.raises(ValueError):
                sketch.TDigest.from_bytes(bytes(bad))
    rng = random.Random(19)
    for _ in range(2000):
        junk = data[:rng.randrange(72)] + bytes(rng.randrange(256) for _ in range(rng.randrange(80)))
        try:
            u = sketch.TDigest.from_bytes(junk)
        except (ValueError, MemoryError):
            continue
        u.quantiles([0, 0.5, 1])


def test_threads_sharing_one_digest_lose_nothing():
    t = sketch.TDigest()
    chunks = [np.arange(i * 50000, (i + 1) * 50000, dtype=np.float64) for i in range(4)]

    def work(i):
        for start in range(0, 50000, 5000):
            part = chunks[i][start:start + 5000]
            t.update(part if start % 10000 else part.tolist())
            t.quantile(0.5)
            t.add(-1.0)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert t.count == 200040 and (t.min, t.max) == (-1.0, 199999.0)
    # Sorted runs from four threads interleave in any order: the median's
    # rank error stays within the digest's bound, q(1-q) pi ln(N) / c = 9.6%.
    assert abs(t.quantile(0.5) - 100000) / 200000 < 0.096


def test_update_may_use_the_digest_from_its_iterator():
    t = sketch.TDigest()
    t.update(float(t.count) for _ in range(10))
    assert t.count == 10
