# SPDX-License-Identifier: BSD-3-Clause
"""TopK from Python: its bytes, expelled items and lists against the
library's own calls (libsketch.so through ctypes, fed the same items), its
recall of a Zipf stream's true top k, items as str, round trips, corrupt
bytes, threads and errors."""
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



class TopkOptions(ctypes.Structure):
    _fields_ = [("k", ctypes.c_uint32), ("width", ctypes.c_uint32), ("depth", ctypes.c_uint32),
                ("decay", ctypes.c_double), ("max_memory", ctypes.c_uint64),
                ("allocator", ctypes.c_void_p)]


class TopkEntry(ctypes.Structure):
    _fields_ = [("item", ctypes.c_void_p), ("len", ctypes.c_size_t), ("count", ctypes.c_uint32)]


@pytest.fixture(scope="module")
def lib(libsketch):
    """The library itself, for the answers the class must give."""
    L = libsketch
    P, U32, U64, SZ = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
    L.sk_topk_create.argtypes = [ctypes.POINTER(P), ctypes.POINTER(TopkOptions)]
    L.sk_topk_add.argtypes = [P, ctypes.c_char_p, SZ, U32, ctypes.POINTER(P), ctypes.POINTER(SZ)]
    L.sk_topk_list.argtypes = [P, ctypes.POINTER(TopkEntry), SZ]
    L.sk_topk_count.argtypes = [P, ctypes.c_char_p, SZ]
    L.sk_topk_count.restype = U32
    L.sk_topk_serialized_size.argtypes = [P, ctypes.POINTER(U64)]
    L.sk_topk_serialize.argtypes = [P, ctypes.c_char_p, SZ, ctypes.POINTER(SZ)]
    L.sk_topk_free.argtypes = [P]
    return L


class LibTopk:
    """An sk_topk driven directly, item bytes as sketch.item_bytes gives them."""

    def __init__(self, lib, **options):
        self.lib, self.t = lib, ctypes.c_void_p()
        self.k = options["k"]
        assert lib.sk_topk_create(ctypes.byref(self.t), ctypes.byref(TopkOptions(**options))) == 0

    def add(self, item, increment=1):
        data = sketch.item_bytes(item)
        out, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = self.lib.sk_topk_add(self.t, data, len(data), increment, ctypes.byref(out), ctypes.byref(n))
        assert rc in (0, 1)
        return ctypes.string_at(out, n.value) if rc == 1 else None

    def list(self):
        entries = (TopkEntry * self.k)()
        n = self.lib.sk_topk_list(self.t, entries, self.k)
        return [(ctypes.string_at(e.item, e.len), e.count) for e in entries[:n]]

    def to_bytes(self):
        size = ctypes.c_uint64()
        assert self.lib.sk_topk_serialized_size(self.t, ctypes.byref(size)) == 0
        buf, n = ctypes.create_string_buffer(size.value), ctypes.c_size_t()
        assert self.lib.sk_topk_serialize(self.t, buf, size.value, ctypes.byref(n)) == 0
        return buf.raw[:n.value]

    def __del__(self):
        self.lib.sk_topk_free(self.t)


def text(data):
    return data.decode("utf-8", "surrogateescape")


def zipf_stream(n, distinct, seed, s=1.1):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, distinct + 1) ** s
    return rng.choice(distinct, size=n, p=weights / weights.sum())


def test_defaults_repr_and_properties():
    t = sketch.TopK(10)
    assert (t.k, t.width, t.depth, t.decay) == (10, 8, 7, 0.9)
    assert repr(t) == "TopK(k=10, width=8, depth=7, decay=0.9)"
    assert len(t.to_bytes()) == 48 + 448 + 120      # docs/topk-format.md's example
    assert t.memory > 0 and t.list() == [] and "a" not in t and t.count("a") == 0
    u = sketch.TopK(k=5, width=100, depth=3, decay=0.5, max_memory=10 ** 6)
    assert (u.k, u.width, u.depth, u.decay) == (5, 100, 3, 0.5)
    assert sketch.TopK(10, width=0, depth=0, decay=0).to_bytes() == t.to_bytes()   # 0: defaults
    assert "surrogateescape" in sketch.TopK.list.__doc__ and "TOPK" in sketch.TopK.__doc__


@pytest.mark.parametrize("args, kwargs, error", [
    ((0,), {}, ValueError),
    ((2 ** 24 + 1,), {}, ValueError),
    ((-1,), {}, ValueError),
    ((2 ** 32 + 10,), {}, ValueError),
    ((10,), {"decay": 1.5}, ValueError),
    ((10,), {"decay": -0.1}, ValueError),
    ((10,), {"width": 2 ** 31, "depth": 4}, ValueError),
    ((10,), {"width": 1000, "max_memory": 100}, ValueError),
    ((), {}, TypeError),
    (("10",), {}, TypeError),
    ((10,), {"decay": "0.5"}, TypeError),
    ((10, 8), {}, TypeError),
])
def test_bad_options(args, kwargs, error):
    with pytest.raises(error):
        sketch.TopK(*args, **kwargs)


def test_same_bytes_expelled_and_list_as_the_library(lib):
    """Many items meeting in few buckets (width 8): the decays, drawn from
    the sketch's generator, and so the expelled items, the list and the
    bytes, are the library's."""
    rng = random.Random(5)
    t = sketch.TopK(12, width=20, depth=4, decay=0.8)
    ref = LibTopk(lib, k=12, width=20, depth=4, decay=0.8)
    expelled = 0
    for step in range(6000):
        item = rng.choice(["h%d" % rng.randrange(8), "l%d" % rng.randrange(400), rng.randrange(100),
                           b"\xff\xfe%d" % rng.randrange(5)])
        increment = rng.choice([1, 1, 1, 2, 7, 0])
        out = ref.add(item, increment)
        got = t.add(item, increment)
        assert got == (None if out is None else text(out))
        expelled += got is not None
        if step % 1000 == 0:
            assert t.to_bytes() == ref.to_bytes()
    assert expelled > 50
    assert t.to_bytes() == ref.to_bytes()
    assert t.list() == [(text(item), count) for item, count in ref.list()]
    for item, count in t.list():
        raw = item.encode("utf-8", "surrogateescape")
        assert t.count(raw) == lib.sk_topk_count(ref.t, raw, len(raw)) and raw in t and t.query(raw)


def test_every_input_form_gives_the_same_sketch():
    values = zipf_stream(20000, 2000, seed=2)
    forms = [values, values.tolist(), pd.Series(values), iter(values.tolist()), values.astype(str),
             values.astype(np.int16), np.repeat(values, 3)[::3]]
    results = []
    for form in forms:
        t = sketch.TopK(10, width=50, depth=4)
        t.update(form)
        results.append(t.to_bytes())
    single = sketch.TopK(10, width=50, depth=4)
    for v in values.tolist():
        single.add(v)
    assert all(r == single.to_bytes() for r in results)
    assert all(isinstance(item, str) and item.isdigit() for item, _ in single.list())


def test_recall_of_a_zipf_streams_true_top_k():
    """Over 3 Zipf streams of 100,000 items, the sketch finds at least 18
    of the true top 20 each time (all of them, in practice), and never
    counts an item above its truth."""
    for seed in range(3):
        stream = zipf_stream(100000, 20000, seed=30 + seed)
        t = sketch.TopK(20, width=1000, depth=5)
        t.update(stream)
        truth = collections.Counter(stream.tolist())
        true_top = {str(item) for item, _ in truth.most_common(20)}
        listed = t.list()
        assert len(listed) == 20
        assert [c for _, c in listed] == sorted((c for _, c in listed), reverse=True)
        assert len(true_top & {item for item, _ in listed}) >= 18
        for item, count in listed:
            assert count <= truth[int(item)] and count == t.count(item)
        heaviest = truth.most_common(1)[0]
        assert t.count(heaviest[0]) >= 0.95 * heaviest[1]


def test_items_come_back_as_str_and_increments():
    t = sketch.TopK(5, width=100, depth=4)
    assert t.add(b"\xff\x00raw", 5) is None
    assert t.add("héllo", 3) is None and t.add(42, 2) is None and t.add(True) is None
    assert t.list() == [("\udcff\x00raw", 5), ("héllo", 3), ("42", 2), ("t", 1)]
    assert t.list()[0][0].encode("utf-8", "surrogateescape") == b"\xff\x00raw"
    assert t.count(b"\xff\x00raw") == 5 and t.count("42") == 2 and "héllo" in t
    # "x" takes the fifth entry with a count of 0, never listed, and is
    # the one the next item pushes out
    assert t.add("x", 0) is None and "x" in t and "x" not in dict(t.list())
    assert t.add("y", 100000) == "x" and t.list()[0] == ("y", 100000) and "x" not in t
    assert t.add("z", 2) == "t" and len(t.list()) == 5
    before = t.to_bytes()
    for bad, error in [(100001, ValueError), (-1, ValueError), (2 ** 32, ValueError),
                       (1.0, TypeError), ("1", TypeError)]:
        with pytest.raises(error):
            t.add("w", bad)
    assert t.to_bytes() == before
    for bad in (None, [1]):
        for call in (t.add, t.query, t.count):
            with pytest.raises(TypeError):
                call(bad)
    with pytest.raises(TypeError):
        t.update("abc")
    with pytest.raises(TypeError):
        t.update(5)


def test_round_trips_copy_and_clear():
    t = sketch.TopK(10, width=30, depth=3)
    t.update(zipf_stream(5000, 500, seed=7))
    data = t.to_bytes()
    for back in (sketch.TopK.from_bytes(data), sketch.TopK.from_bytes(bytearray(data)),
                 pickle.loads(pickle.dumps(t)), copy.copy(t), copy.deepcopy(t), t.copy()):
        assert type(back) is sketch.TopK and back.to_bytes() == data and back.list() == t.list()
    # a copy given the same adds stays the same: the generator of decays goes with it
    c = t.copy()
    more = zipf_stream(5000, 500, seed=8)
    c.update(more)
    t.update(more)
    assert c.to_bytes() == t.to_bytes() and t.to_bytes() != data
    c.add("only in the copy", 1000)
    assert "only in the copy" not in t
    t.clear()
    assert t.list() == [] and t.to_bytes() != data and (t.k, t.width) == (10, 30)


def test_corrupt_bytes_never_crash():
    t = sketch.TopK(4, width=6, depth=2)
    t.update(["a", "b", "b", "ccc", "dddd", "e"])
    data = t.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.TopK.from_bytes(data[:n])
    with pytest.raises(ValueError):
        sketch.TopK.from_bytes(data + b"\x00")
    for i in range(len(data)):
        for bit in (0, 6):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            with pytest.raises(ValueError):
                sketch.TopK.from_bytes(bytes(bad))
    rng = random.Random(17)
    for _ in range(2000):
        junk = data[:rng.randrange(48)] + bytes(rng.randrange(256) for _ in range(rng.randrange(80)))
        try:
            u = sketch.TopK.from_bytes(junk)
        except (ValueError, MemoryError):
            continue
        u.list()


def test_threads_sharing_one_sketch_lose_nothing():
    """Four threads add at once to a sketch wide enough that every item
    has a row to itself: every count is exact whatever the order."""
    t = sketch.TopK(40, width=4096, depth=7)
    chunks = [np.repeat(np.arange(t_ * 10, t_ * 10 + 10), np.arange(1, 11) * 300) for t_ in range(4)]
    for c in chunks:
        np.random.default_rng(1).shuffle(c)

    def work(i):
        for start in range(0, len(chunks[i]), 2000):
            part = chunks[i][start:start + 2000]
            t.update(part if start % 4000 else part.tolist())
            t.list()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    counts = dict(t.list())
    assert len(counts) == 40
    assert all(counts[str(v)] == (v % 10 + 1) * 300 for v in range(40))


def test_update_may_use_the_sketch_from_its_iterator():
    t = sketch.TopK(5)
    t.update("x%d" % len(t.list()) for _ in range(10))
    assert t.count("x0") == 10
