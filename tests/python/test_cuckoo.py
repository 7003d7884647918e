# SPDX-License-Identifier: BSD-3-Clause
"""CuckooFilter from Python: its bytes and answers against the library's
own calls (libsketch.so through ctypes, fed the same items), its false
positives against the documented bound, growth and full filters, round
trips, corrupt bytes, threads and errors."""
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



class CfOptions(ctypes.Structure):
    _fields_ = [("capacity", ctypes.c_uint64), ("bucket_size", ctypes.c_uint32),
                ("max_iterations", ctypes.c_uint32), ("expansion", ctypes.c_uint32),
                ("max_memory", ctypes.c_uint64), ("allocator", ctypes.c_void_p)]


class CfInfo(ctypes.Structure):
    _fields_ = [("buckets", ctypes.c_uint64), ("filters", ctypes.c_uint32), ("slots", ctypes.c_uint64),
                ("items", ctypes.c_uint64), ("deletes", ctypes.c_uint64),
                ("bucket_size", ctypes.c_uint32), ("max_iterations", ctypes.c_uint32),
                ("expansion", ctypes.c_uint32), ("memory", ctypes.c_size_t)]


@pytest.fixture(scope="module")
def lib(libsketch):
    """The library itself, for the answers the class must give."""
    L = libsketch
    P, U64, SZ = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t
    L.sk_cuckoo_create.argtypes = [ctypes.POINTER(P), ctypes.POINTER(CfOptions)]
    for name in ("add", "add_unique", "contains", "delete", "count"):
        getattr(L, "sk_cuckoo_" + name).argtypes = [P, ctypes.c_char_p, SZ]
    L.sk_cuckoo_count.restype = U64
    L.sk_cuckoo_compact.argtypes = [P]
    L.sk_cuckoo_get_info.argtypes = [P, ctypes.POINTER(CfInfo)]
    L.sk_cuckoo_serialized_size.argtypes = [P, ctypes.POINTER(U64)]
    L.sk_cuckoo_serialize.argtypes = [P, ctypes.c_char_p, SZ, ctypes.POINTER(SZ)]
    L.sk_cuckoo_free.argtypes = [P]
    return L


class LibCuckoo:
    """An sk_cuckoo driven directly, item bytes as sketch.item_bytes gives them."""

    def __init__(self, lib, **options):
        self.lib, self.c = lib, ctypes.c_void_p()
        assert lib.sk_cuckoo_create(ctypes.byref(self.c), ctypes.byref(CfOptions(**options))) == 0

    def call(self, name, item):
        data = sketch.item_bytes(item)
        return getattr(self.lib, "sk_cuckoo_" + name)(self.c, data, len(data))

    def info(self):
        info = CfInfo()
        self.lib.sk_cuckoo_get_info(self.c, ctypes.byref(info))
        return info

    def to_bytes(self):
        size = ctypes.c_uint64()
        assert self.lib.sk_cuckoo_serialized_size(self.c, ctypes.byref(size)) == 0
        buf, n = ctypes.create_string_buffer(size.value), ctypes.c_size_t()
        assert self.lib.sk_cuckoo_serialize(self.c, buf, size.value, ctypes.byref(n)) == 0
        return buf.raw[:n.value]

    def __del__(self):
        self.lib.sk_cuckoo_free(self.c)


def test_defaults_repr_and_properties(lib):
    f = sketch.CuckooFilter(1024)
    assert (f.buckets, f.bucket_size, f.max_iterations, f.expansion, f.filters) == (512, 2, 20, 0, 1)
    assert (f.slots, f.items, f.deletes) == (1024, 0, 0)
    assert len(f.to_bytes()) == 64 + 1024     # docs/cuckoo-format.md's example
    assert f.memory == LibCuckoo(lib, capacity=1024).info().memory
    assert repr(f) == ("CuckooFilter(buckets=512, bucket_size=2, max_iterations=20, expansion=0, "
                       "filters=1, items=0)")
    g = sketch.CuckooFilter(1000, bucket_size=4, max_iterations=500, expansion=3, max_memory=10 ** 6)
    assert (g.buckets, g.bucket_size, g.max_iterations, g.expansion) == (256, 4, 500, 4)
    # 0 takes the library's defaults
    h = sketch.CuckooFilter(capacity=1024, bucket_size=0, max_iterations=0)
    assert h.to_bytes() == f.to_bytes()
    assert "CF.ADD" in sketch.CuckooFilter.add.__doc__ and "delete" in sketch.CuckooFilter.__doc__


@pytest.mark.parametrize("args, kwargs, error", [
    ((3,), {}, ValueError),                            # below 2 x bucket_size
    ((100,), {"bucket_size": 256}, ValueError),
    ((100,), {"max_iterations": 65536}, ValueError),
    ((100,), {"expansion": 32769}, ValueError),
    ((100,), {"bucket_size": 2 ** 32 + 2}, ValueError),  # never truncated to 2
    ((-1,), {}, ValueError),
    ((2 ** 64,), {}, ValueError),
    ((2 ** 60,), {}, ValueError),                      # past 2**55 buckets
    ((10 ** 6,), {"max_memory": 1000}, ValueError),
    (("100",), {}, TypeError),
    ((100.0,), {}, TypeError),
    ((), {}, TypeError),
    ((100, 2), {}, TypeError),                         # options are keywords
])
def test_bad_options(args, kwargs, error):
    with pytest.raises(error):
        sketch.CuckooFilter(*args, **kwargs)


def test_same_bytes_and_answers_as_the_library(lib):
    """Adds, unique adds, deletes and compactions of a growing filter give
    the library's answers and bytes, step for step."""
    rng = random.Random(3)
    f = sketch.CuckooFilter(64, bucket_size=2, max_iterations=30, expansion=2)
    ref = LibCuckoo(lib, capacity=64, bucket_size=2, max_iterations=30, expansion=2)
    added = []
    for step in range(4000):
        op = rng.random()
        item = rng.choice(["k%d" % rng.randrange(3000), rng.randrange(3000), b"\xfe%d" % rng.randrange(99)])
        if op < 0.6:
            assert f.add(item) is True and ref.call("add", item) == 1
            added.append(item)
        elif op < 0.75:
            assert f.add_unique(item) is bool(ref.call("add_unique", item))
        elif op < 0.9 and added:
            victim = added.pop(rng.randrange(len(added)))
            assert f.delete(victim) is bool(ref.call("delete", victim))
        elif op < 0.92:
            assert f.compact() is bool(lib.sk_cuckoo_compact(ref.c))
        else:
            assert f.contains(item) is bool(ref.call("contains", item))
            assert f.count(item) == ref.call("count", item)
        if step % 500 == 0:
            assert f.to_bytes() == ref.to_bytes()
    assert f.to_bytes() == ref.to_bytes()
    info = ref.info()
    assert (f.filters, f.items, f.deletes, f.slots) == (info.filters, info.items, info.deletes, info.slots)
    assert f.filters > 1
    assert all(x in f for x in added)   # no false negatives


def test_add_count_delete():
    f = sketch.CuckooFilter(1000)
    assert "a" not in f and f.count("a") == 0 and f.delete("a") is False
    assert f.add("a") is True and f.add("a") is True and f.count("a") == 2
    assert f.add_unique("a") is False and f.count("a") == 2
    assert f.add_unique("b") is True and f.items == 3
    assert f.delete("a") is True and f.count("a") == 1 and "a" in f
    assert f.delete("a") is True and "a" not in f and f.delete("a") is False
    assert f.items == 1 and f.deletes == 2
    assert f.add(1) and f.contains("1") and f.contains(b"1")     # an int is its text
    for bad in (None, [1], {"a": 1}):
        for call in (f.add, f.add_unique, f.contains, f.count, f.delete):
            with pytest.raises(TypeError):
                call(bad)
        with pytest.raises(TypeError):
            bad in f


def test_a_full_fixed_filter_refuses_and_stays_as_it_was():
    f = sketch.CuckooFilter(64)
    n = 0
    while True:
        before = f.to_bytes()
        try:
            f.add("item%d" % n)
        except ValueError as e:
            assert "CuckooFilter.add: the filter is full" in str(e)
            break
        n += 1
        assert n < 1000
    assert f.to_bytes() == before and f.items == n and n >= 0.3 * 64
    with pytest.raises(ValueError):
        f.update(["more%d" % i for i in range(100)])
    assert f.items >= n and all(f.contains("item%d" % i) for i in range(n))
    assert f.add_unique("item0") is False      # present: no room needed
    # growth held to max_memory, then refused the same way
    g = sketch.CuckooFilter(64, expansion=1, max_memory=sketch.CuckooFilter(64).memory + 600)
    with pytest.raises(ValueError, match="budget"):
        g.update(range(10000))
    assert 1 <= g.filters <= 5
    g.set_max_memory(0)
    g.update(range(10000))
    assert all(g.contains_many(range(10000)))
    with pytest.raises(ValueError):
        g.set_max_memory(-1)


def test_false_positives_within_the_documented_bound():
    """Filled to 3/8 of its slots (b = 1), a half (2) or 3/4 (4), below
    where adds start to fail, a filter's rate over 200,000 absent items is
    about its bound 2b x load / 255, never much above it."""
    for b, load in ((1, 0.375), (2, 0.5), (4, 0.75)):
        f = sketch.CuckooFilter(2 ** 14, bucket_size=b, max_iterations=500)
        n = int(load * 2 ** 14)
        f.update(np.arange(n))
        assert f.items / f.slots == load
        assert all(f.contains_many(np.arange(n)))
        found = f.contains_many(np.arange(10 ** 7, 10 ** 7 + 200000))
        rate, bound = found.mean(), 2 * b * load / 255
        assert 0.6 * bound < rate < bound + 3 * (bound / 200000) ** 0.5


def test_every_input_form_gives_the_same_filter():
    values = np.random.default_rng(5).integers(0, 10 ** 9, 3000)
    forms = [values, values.tolist(), pd.Series(values), iter(values.tolist()), values.astype(str),
             values.astype(str).tolist(), np.repeat(values, 2)[::2]]
    filters = []
    for form in forms:
        f = sketch.CuckooFilter(10000, expansion=2)
        f.update(form)
        filters.append(f.to_bytes())
    single = sketch.CuckooFilter(10000, expansion=2)
    for v in values.tolist():
        single.add(v)
    assert all(x == single.to_bytes() for x in filters)
    probe = np.concatenate([values[:500], np.arange(500)])
    expected = [single.contains(int(v)) for v in probe]
    as_list = single.contains_many(probe.tolist())
    as_array = single.contains_many(probe)
    assert type(as_list) is list and as_list == expected
    assert isinstance(as_array, np.ndarray) and as_array.dtype == bool and as_array.tolist() == expected
    assert single.contains_many(pd.Series(probe)).tolist() == expected
    assert single.contains_many(iter(probe.tolist())) == expected
    assert single.contains_many([]) == [] and single.contains_many(np.array([], dtype=np.int64)).size == 0
    with pytest.raises(TypeError):
        single.contains_many("abc")
    with pytest.raises(TypeError):
        single.contains_many(5)
    with pytest.raises(TypeError):
        single.contains_many([1, None])
    with pytest.raises(ValueError):
        single.contains_many(np.zeros((2, 2), dtype=np.int64))


def test_round_trips_copy_clear_and_compact():
    f = sketch.CuckooFilter(100, expansion=1)
    f.update(range(1000))
    assert f.filters > 1
    data = f.to_bytes()
    for back in (sketch.CuckooFilter.from_bytes(data), sketch.CuckooFilter.from_bytes(bytearray(data)),
                 pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f), f.copy()):
        assert type(back) is sketch.CuckooFilter and back.to_bytes() == data
        assert back.items == 1000 and all(back.contains_many(range(1000)))
    other = f.copy()
    other.add("copy only")
    assert f.to_bytes() == data
    for i in range(900):
        f.delete(i)
    f.compact()
    assert f.filters < other.filters and f.deletes == 0 and f.items == 100
    assert all(f.contains_many(range(900, 1000)))
    assert f.compact() is False
    f.clear()
    assert (f.filters, f.items) == (1, 0) and f.to_bytes() == sketch.CuckooFilter(100, expansion=1).to_bytes()


def test_corrupt_bytes_never_crash():
    f = sketch.CuckooFilter(64, expansion=2)
    f.update(range(200))
    data = f.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.CuckooFilter.from_bytes(data[:n])
    with pytest.raises(ValueError):
        sketch.CuckooFilter.from_bytes(data + b"\x00")
    for i in range(len(data)):
        for bit in (0, 5):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            with pytest.raises(ValueError):   # the checksum covers every byte
                sketch.CuckooFilter.from_bytes(bytes(bad))
    rng = random.Random(13)
    for _ in range(2000):
        junk = data[:rng.randrange(64)] + bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
        try:
            g = sketch.CuckooFilter.from_bytes(junk)
        except (ValueError, MemoryError):
            continue
        g.contains("x")


def test_threads_sharing_one_filter_lose_nothing():
    f = sketch.CuckooFilter(1024, expansion=2)
    chunks = [np.arange(t * 30000, (t + 1) * 30000) for t in range(4)]

    def work(t):
        for start in range(0, 30000, 3000):
            part = chunks[t][start:start + 3000]
            f.update(part if start % 6000 else part.tolist())
            f.contains_many(part)
            f.add("t%d-%d" % (t, start))
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert f.items == 4 * 30000 + 40
    assert all(f.contains_many(np.arange(120000)))


def test_update_may_use_the_filter_from_its_iterator():
    """Items are read outside the filter's lock: an iterator that uses the
    filter does not deadlock."""
    f = sketch.CuckooFilter(1000)
    f.update("x%d-%d" % (i, f.items) for i in range(10))
    assert f.items == 10 and "x9-0" in f
    assert f.contains_many("x%d-0" % i for i in range(3) if f.count("x0-0") == 1) == [True] * 3
