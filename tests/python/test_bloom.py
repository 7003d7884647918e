# SPDX-License-Identifier: BSD-3-Clause
"""BloomFilter from Python: the class against the library's filters (the
command's files, byte for byte), its files mapped and in place, numpy and
pandas input, the false-positive rate, pickling, threads, and its errors."""
import copy
import math
import os
import pickle
import random
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest

import sketch

SITE = os.path.dirname(os.path.dirname(os.path.abspath(sketch.__file__)))


def command_filter(run_sketch, path, lines, capacity=20000, rate="0.01", *options):
    """A filter file made and filled by the command."""
    run_sketch("bloom", "create", "-n", capacity, "-p", rate, *options, path)
    run_sketch("bloom", "add", path, input="".join("%s\n" % x for x in lines))
    return path


def command_check(run_sketch, path, probes):
    """The probes `sketch bloom check` prints (those that may be in)."""
    out = run_sketch("bloom", "check", path, input="".join("%s\n" % p for p in probes),
                     check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.splitlines()


def test_defaults_repr_and_properties():
    f = sketch.BloomFilter(1000)
    assert (f.capacity, f.fp_rate, f.count, f.layers, f.expansion) == (1000, 0.01, 0, 1, 0)
    assert f.layout in ("classic", "blocked", "split") and f.bits >= 1000 * 9
    assert f.hashes >= 1 and f.array_bytes * 8 >= f.bits and f.memory >= f.array_bytes
    assert (f.max_memory, f.interrupted_chunks, f.closed, f.in_place) == (0, 0, False, False)
    assert f.add("alice") is True and f.add("alice") is False
    assert "alice" in f and f.contains("alice") and f.count == 1
    assert repr(f).startswith("BloomFilter(layout='%s', bits=%d" % (f.layout, f.bits))
    assert "count=1)" in repr(f)
    for layout in ("classic", "blocked", "split"):
        assert sketch.BloomFilter(1000, 0.001, layout=layout).layout == layout
    explicit = sketch.BloomFilter(bits=4096, hashes=5, layout="classic")
    assert (explicit.bits, explicit.hashes, explicit.fp_rate) == (4096, 5, 0.0)
    assert "definitely" in sketch.BloomFilter.__doc__ and "in_place" in sketch.BloomFilter.open.__doc__


@pytest.mark.parametrize("kwargs, error", [
    (dict(), ValueError),                                   # no capacity, no bits
    (dict(capacity=100, fp_rate=0.7), ValueError),
    (dict(capacity=100, fp_rate=0.0000000000000001), ValueError),
    (dict(capacity=-1), ValueError),
    (dict(capacity=2 ** 64), ValueError),
    (dict(capacity="100"), TypeError),
    (dict(capacity=100, fp_rate="x"), TypeError),
    (dict(capacity=100, layout="round"), ValueError),
    (dict(capacity=100, layout=3), TypeError),
    (dict(bits=4096), ValueError),                          # no hashes
    (dict(bits=4096, hashes=5, fp_rate=0.01), ValueError),  # a rate too
    (dict(bits=4096, hashes=5, capacity=10), ValueError),
    (dict(bits=2 ** 60, hashes=5), ValueError),             # past SK_BLOOM_MAX_BITS
    (dict(capacity=100, expansion=40000), ValueError),
    (dict(capacity=10 ** 9, max_memory=1000), ValueError),  # over the budget
])
def test_bad_options(kwargs, error):
    with pytest.raises(error):
        sketch.BloomFilter(**kwargs)


def test_same_filter_as_the_command_for_every_input(run_sketch, tmp_path):
    """The command's filter of lines, and the Python filter of the same items
    as a list, a numpy "U", "S" or int64 array, or a pandas Series, are one
    dump, byte for byte."""
    numbers = list(range(100000, 110000))
    path = command_filter(run_sketch, tmp_path / "cmd.bloom", numbers)
    from_file = sketch.BloomFilter.open(path)
    expected, new = from_file.to_bytes(), from_file.count
    assert len(numbers) - 10 < new <= len(numbers)   # adds that set no bit are not new
    texts = [str(x) for x in numbers]
    inputs = [texts, numbers, np.array(texts), np.array(texts).astype("S"),
              np.array(numbers, dtype=np.int64), pd.Series(texts), pd.Series(numbers),
              (x for x in texts), tuple(x.encode() for x in texts)]
    for items in inputs:
        f = sketch.BloomFilter(20000, 0.01)
        assert f.update(items) == new
        assert f.to_bytes() == expected, type(items)
    one_by_one = sketch.BloomFilter(20000, 0.01)
    assert sum(one_by_one.add(x) for x in texts) == new
    assert one_by_one.to_bytes() == expected


@pytest.mark.parametrize("layout", ["classic", "blocked", "split"])
def test_the_command_reads_what_python_saves(run_sketch, tmp_path, layout):
    items = ["user-%d" % i for i in range(3000)]
    probes = items[::7] + ["other-%d" % i for i in range(20000)]
    f = sketch.BloomFilter(3000, 0.02, layout=layout)
    f.update(items)
    path = tmp_path / "py.bloom"
    f.save(path)
    assert command_check(run_sketch, path, probes) == [p for p in probes if p in f]
    info = run_sketch("bloom", "info", "--verify", path).stdout
    assert "layout: %s\n" % layout in info and "\nitems: %d\n" % f.count in info
    # and back: the file opens to the same dump, mapped or read and verified
    assert sketch.BloomFilter.open(path).to_bytes() == f.to_bytes()
    assert sketch.BloomFilter.open(str(path), verify=True).to_bytes() == f.to_bytes()


def test_python_answers_as_the_command_on_its_file(run_sketch, tmp_path):
    items = ["k%d" % i for i in range(5000)]
    path = command_filter(run_sketch, tmp_path / "cmd.bloom", items, 5000, "0.05", "-l", "classic")
    f = sketch.BloomFilter.open(path)
    probes = items[::3] + ["absent%d" % i for i in range(20000)]
    assert [p for p, hit in zip(probes, f.contains_many(probes)) if hit] == \
        command_check(run_sketch, path, probes)
    assert f.layout == "classic" and 4800 < f.count <= 5000 and f.in_place is False
    again = sketch.BloomFilter(5000, 0.05, layout="classic")
    assert again.update(items) == f.count and again.to_bytes() == f.to_bytes()
    # a mapped filter takes adds in memory only: the file is unchanged
    f.add("only in memory")
    assert command_check(run_sketch, path, ["only in memory"]) == []


def test_an_unmapped_filter_survives_its_file_being_truncated(run_sketch, tmp_path):
    items = ["u%d" % i for i in range(3000)]
    path = command_filter(run_sketch, tmp_path / "cut.bloom", items, 3000, "0.01")
    mapped = sketch.BloomFilter.open(path)
    f = sketch.BloomFilter.open(path, mapped=False)
    assert f.to_bytes() == mapped.to_bytes()
    del mapped
    with open(path, "r+b") as file:
        file.truncate(100)
    assert all(f.contains_many(items)) and f.add("after the cut")
    with pytest.raises(ValueError, match="mapped=False"):
        sketch.BloomFilter.open(path, in_place=True, mapped=False)


def test_in_place_adds_reach_the_file(run_sketch, tmp_path):
    path = command_filter(run_sketch, tmp_path / "shared.bloom", ["first"], 10000, "0.01")
    new = ["added from python %d" % i for i in range(2000)]
    with sketch.BloomFilter.open(path, in_place=True) as f:
        assert f.in_place and f.update(new) == 2000
        f.sync()
        assert command_check(run_sketch, path, ["first"] + new) == ["first"] + new
        assert "checksums: ok" in run_sketch("bloom", "info", "--verify", path).stdout
        # One holder in place at a time: the command's add gives up, and so
        # does a second open here.
        assert run_sketch("bloom", "add", "--no-wait", path, "x", check=False).returncode == 2
        with pytest.raises(BlockingIOError) as e:
            sketch.BloomFilter.open(path, in_place=True)
        assert e.value.filename == path
        f.add("after the sync")
    assert f.closed and repr(f) == "<closed BloomFilter>"
    assert command_check(run_sketch, path, ["after the sync", "never"]) == ["after the sync"]
    run_sketch("bloom", "add", path, "by the command")   # the lock is free again
    g = sketch.BloomFilter.open(path, verify=True)
    assert g.count == 2 + len(new) + 1 and "by the command" in g


def test_in_place_add_survives_a_killed_process(run_sketch, tmp_path):
    """A process that adds in place and dies without closing leaves its
    items in the file and its chunks marked; the next sync re-sums them."""
    path = command_filter(run_sketch, tmp_path / "crash.bloom", ["old"], 10000, "0.01")
    code = ("import os, sys; sys.path.insert(0, %r); import sketch\n"
            "f = sketch.BloomFilter.open(%r, in_place=True)\n"
            "f.update(['crash%%d' %% i for i in range(500)])\n"
            "os._exit(0)\n" % (SITE, str(path)))
    subprocess.run([sys.executable, "-c", code], check=True)
    items = ["crash%d" % i for i in range(500)]
    assert command_check(run_sketch, path, items) == items
    f = sketch.BloomFilter.open(path, in_place=True)
    assert f.interrupted_chunks > 0
    f.close()
    assert sketch.BloomFilter.open(path, verify=True).interrupted_chunks == 0


def test_in_place_filter_left_open_commits_when_collected(run_sketch, tmp_path):
    path = tmp_path / "left.bloom"
    sketch.BloomFilter(1000, 0.01).save(path)
    f = sketch.BloomFilter.open(path, in_place=True)
    f.update(["left open %d" % i for i in range(100)])
    del f   # the last reference: deallocation commits, as close() would
    g = sketch.BloomFilter.open(path, in_place=True, verify=True)
    assert g.interrupted_chunks == 0 and g.count == 100 and "left open 7" in g
    with pytest.raises(KeyError):
        with g:
            g.add("in a with block that raises")
            raise KeyError("out")
    assert g.closed
    assert command_check(run_sketch, path, ["in a with block that raises"]) == \
        ["in a with block that raises"]


def test_closed_filter_raises():
    f = sketch.BloomFilter(100)
    f.close()
    f.close()   # twice: nothing
    for call in (lambda: f.add("x"), lambda: "x" in f, lambda: f.update(["x"]),
                 lambda: f.contains_many(["x"]), lambda: f.to_bytes(), lambda: f.copy(),
                 lambda: f.count, lambda: f.sync(), lambda: f.merge(sketch.BloomFilter(100)),
                 lambda: sketch.BloomFilter(100).merge(f), lambda: f.__enter__(),
                 lambda: pickle.dumps(f), lambda: f.estimate_items()):
        with pytest.raises(ValueError, match="closed"):
            call()
    with pytest.raises(ValueError, match="in place"):
        sketch.BloomFilter(100).sync()   # a filter in memory has nothing to commit


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        sketch.BloomFilter.open(tmp_path / "missing.bloom")
    assert e.value.filename == tmp_path / "missing.bloom"
    with pytest.raises(OSError) as e:
        sketch.BloomFilter(100).save(tmp_path / "no" / "dir.bloom")
    assert e.value.errno is not None
    with pytest.raises(TypeError):
        sketch.BloomFilter.open(42.5)


def test_corrupt_files_are_errors(tmp_path):
    f = sketch.BloomFilter(20000, 0.01)
    f.update(range(5000))
    good = tmp_path / "good.bloom"
    f.save(good)
    data = good.read_bytes()
    bad = tmp_path / "bad.bloom"
    for n in (0, 10, 40, 100, 4096, len(data) // 2, len(data) - 1):
        bad.write_bytes(data[:n])
        with pytest.raises(ValueError):
            sketch.BloomFilter.open(bad)
    for i in range(0, 88):   # the header and the layer table
        bad.write_bytes(data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:])
        with pytest.raises(ValueError):
            sketch.BloomFilter.open(bad)
    # a flipped bit of an array is found by verify (a plain open reads no array)
    i = 4096 + 1234
    bad.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1:])
    sketch.BloomFilter.open(bad)
    with pytest.raises(ValueError, match="checksum"):
        sketch.BloomFilter.open(bad, verify=True)


def test_corrupt_dumps_never_crash():
    f = sketch.BloomFilter(500, 0.01, expansion=2)
    f.update(range(1200))
    data = f.to_bytes()
    for n in range(len(data)):
        with pytest.raises(ValueError):
            sketch.BloomFilter.from_bytes(data[:n])
    for i in range(len(data)):
        for bit in (0, 5):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            with pytest.raises(ValueError):
                sketch.BloomFilter.from_bytes(flipped)
    rng = random.Random(7)
    for _ in range(2000):
        junk = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))
        if rng.random() < 0.5:
            junk = b"SKBF" + junk
        with pytest.raises((ValueError, MemoryError)):
            sketch.BloomFilter.from_bytes(junk)
    with pytest.raises(TypeError):
        sketch.BloomFilter.from_bytes("a str")


@pytest.mark.parametrize("layout", ["classic", "blocked", "split"])
def test_no_false_negatives_and_the_rate_asked_for(layout):
    """At capacity, 200000 absent probes hit at the layout's exact expected
    rate, within 5 binomial standard errors (about 1e-3 around 1e-2), and
    that rate is at most the one asked for."""
    n, probes = 100000, 200000
    f = sketch.BloomFilter(n, 0.01, layout=layout)
    members = np.char.add("member-", np.arange(n).astype(str))
    f.update(members)
    assert f.contains_many(members).all()
    expected = f.expected_fp_rate()
    assert expected == f.expected_fp_rate(f.count) and 0.005 < expected <= 0.01
    assert f.expected_fp_rate(0) == 0.0 and f.expected_fp_rate(10 * n) > 0.1
    hits = f.contains_many(np.char.add("absent-", np.arange(probes).astype(str))).sum()
    sigma = math.sqrt(expected * (1 - expected) / probes)
    assert abs(hits / probes - expected) < 5 * sigma, (hits / probes, expected)
    assert abs(f.estimate_items() - n) < 0.02 * n


def test_scalable_filter_grows_and_keeps_its_rate():
    f = sketch.BloomFilter(1000, 0.01, expansion=2)
    items = ["s%d" % i for i in range(20000)]
    f.update(items)
    assert f.layers > 3 and f.expansion == 2 and f.capacity >= 20000
    assert all(f.contains_many(items))
    hits = sum(f.contains_many(["t%d" % i for i in range(50000)]))
    assert hits / 50000 < 0.015
    f.clear()
    assert f.layers == 1 and f.count == 0 and "s1" not in f
    with pytest.raises(ValueError):
        f.intersect(f.copy())   # scalable filters have no intersection


def test_full_and_budget():
    f = sketch.BloomFilter(10, 0.01, refuse_when_full=True)
    f.update(range(10))
    with pytest.raises(ValueError, match="full|grow"):
        for i in range(10, 100):
            f.add(i)
    assert f.count == 10
    budget = sketch.BloomFilter(100, 0.01, expansion=2, max_memory=3000)
    with pytest.raises(ValueError, match="budget"):
        budget.update(range(100000))
    assert budget.memory <= 3000 and budget.max_memory == 3000


def test_contains_many_types():
    f = sketch.BloomFilter(1000, 0.001)
    f.update(["a", "b", 3])
    assert f.contains_many(["a", "zz", b"b", 3, "3"]) == [True, False, True, True, True]
    assert f.contains_many(iter(["a", "q"])) == [True, False]
    for arr in (np.array(["a", "zz", "b"]), np.array([b"a", b"zz", b"b"]),
                pd.Series(["a", "zz", "b"])):
        out = f.contains_many(arr)
        assert isinstance(out, np.ndarray) and out.dtype == np.bool_
        assert out.tolist() == [True, False, True]
    assert f.contains_many(np.array([3, 4], dtype=np.int32)).tolist() == [True, False]
    assert f.contains_many([]) == [] and len(f.contains_many(np.array([], dtype="U1"))) == 0
    with pytest.raises(TypeError):
        f.contains_many("abc")      # one item, not an iterable of them
    with pytest.raises(TypeError):
        f.contains_many([1, object()])
    with pytest.raises(TypeError):
        f.add(None)
    assert f.update([]) == 0


def test_merge_and_intersect():
    a, b = sketch.BloomFilter(5000, 0.01), sketch.BloomFilter(5000, 0.01)
    a.update(["a%d" % i for i in range(2000)] + ["both%d" % i for i in range(1000)])
    b.update(["b%d" % i for i in range(2000)] + ["both%d" % i for i in range(1000)])
    everything = sketch.BloomFilter(5000, 0.01)
    everything.update(["a%d" % i for i in range(2000)] + ["b%d" % i for i in range(2000)] +
                      ["both%d" % i for i in range(1000)])
    probes = ["%s%d" % (p, i) for p in ("a", "b", "both", "none") for i in range(3000)]
    union = a.copy()
    union.merge(b)
    # the union's bits are those of one filter of all items
    assert union.contains_many(probes) == everything.contains_many(probes)
    inter = a.copy()
    inter.intersect(b)
    answers = inter.contains_many(probes)
    assert all(answers[6000:7000])    # both0..both999
    assert sum(answers) < 1000 + 600  # a few false positives only
    a.merge(a)   # itself: nothing changes
    with pytest.raises(ValueError):
        a.merge(sketch.BloomFilter(50000, 0.01))
    with pytest.raises(TypeError):
        a.merge(sketch.HyperLogLog())


def test_bytes_pickle_copy_round_trips():
    scalable = sketch.BloomFilter(100, 0.001, expansion=3)
    scalable.update(range(1000))
    for f in (sketch.BloomFilter(100), scalable,
              sketch.BloomFilter(bits=10000, hashes=3, layout="classic")):
        f.add("x")
        data = f.to_bytes()
        assert sketch.BloomFilter.from_bytes(data).to_bytes() == data
        assert sketch.BloomFilter.from_bytes(memoryview(data)).to_bytes() == data
        assert pickle.loads(pickle.dumps(f)).to_bytes() == data
        assert copy.copy(f).to_bytes() == data and copy.deepcopy(f).to_bytes() == data
        c = f.copy()
        c.add("only in the copy")
        assert f.to_bytes() == data and "only in the copy" in c


def test_threads_sharing_one_filter_lose_nothing():
    """Four threads add to one filter at once, from arrays (the GIL
    released) and lists, and query it: every item is in, and its bits are
    those of the filter of all items built in one thread."""
    f = sketch.BloomFilter(400000, 0.01, layout="classic")
    chunks = [np.char.add("thread%d-" % t, np.arange(50000).astype(str)) for t in range(4)]

    def work(t):
        for start in range(0, 50000, 5000):
            part = chunks[t][start:start + 5000]
            f.update(part if start % 10000 else part.tolist())
            f.contains_many(part[:100])
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sketch.BloomFilter(400000, 0.01, layout="classic")
    for chunk in chunks:
        expected.update(chunk)
        assert f.contains_many(chunk).all()
    assert f.estimate_items() == expected.estimate_items()
    probes = np.char.add("probe", np.arange(100000).astype(str))
    assert (f.contains_many(probes) == expected.contains_many(probes)).all()
