# SPDX-License-Identifier: BSD-3-Clause
"""sketch.AgingBloomFilter: no false negative inside the window, items
forgotten exactly when docs/aging-bloom.md says (count and time windows),
`in` at the newest time, the errors of bad arguments, merges, pickle and
copies, files, damaged bytes refused with ValueError, and the module's
ABF.EXPORT equal to to_bytes for the same ABF.ADDAT adds."""
import copy
import os
import pickle
import random

import pytest

import sketch


def test_no_false_negative_for_the_last_capacity_adds():
    f = sketch.AgingBloomFilter(1000, 0.01)
    for n in range(1, 7001):
        f.add("item-%d" % n)
        if n % 997 == 0 or n == 7000:
            recent = ["item-%d" % a for a in range(max(1, n - 999), n + 1)]
            assert all(f.contains_many(recent)), n
    assert f.newest == 7000
    # Long forgotten: about the rate's share answer "maybe".
    old = f.contains_many(["item-%d" % a for a in range(1, 3001)])
    assert sum(old) < 3000 * 0.03


def test_count_window_forgets_when_documented():
    # Add a is held after add n iff n < a + g*c - ((a - 1) mod c).
    capacity, g = 30, 3
    c = -(-capacity // (g - 1))
    f = sketch.AgingBloomFilter(capacity, 1e-9, generations=g)
    assert f.span == c and f.window == 0
    for n in range(1, 201):
        assert f.add("a%d" % n) is True
        answers = f.contains_many(["a%d" % a for a in range(1, n + 1)])
        expected = [n < a + g * c - ((a - 1) % c) for a in range(1, n + 1)]
        assert answers == expected, n


def test_time_window_forgets_when_documented():
    # T = 3600, g = 4: s = 1200, and an item of time 5000 is held until 9600.
    f = sketch.AgingBloomFilter(1000, 1e-6, window=3600, generations=4)
    assert (f.window, f.span, f.generations) == (3600, 1200, 4)
    assert f.add("x", 5000) is True
    assert f.add("x", 5001) is False
    assert f.contains("x", 9599) and not f.contains("x", 9600)
    assert "x" in f                        # at the newest add's time
    assert f.contains("x", 0)              # a time before the newest counts as the newest
    f.add("y", 9600)
    assert "x" not in f and "y" in f
    assert f.newest == 9600
    # A late add within the ring lands in its generation; an older one is
    # forgotten at once.
    assert f.add("late", 7300) is True and f.contains("late", 9600)
    assert f.add("too late", 4700) is False and not f.contains("too late")


def test_update_and_contains_many():
    f = sketch.AgingBloomFilter(500, 0.001, window=60)
    assert f.update(["a", "b", "a", 1, 2.5, True, b"z"], 100) == 6
    assert f.contains_many(["a", "b", 1, 2.5, True, b"z", "nope"], 100) == \
        [True] * 6 + [False]
    assert f.contains_many(["a"], 100000) == [False]
    assert f.count == 6
    np = pytest.importorskip("numpy")
    g = sketch.AgingBloomFilter(500, 0.001)
    assert 295 <= g.update(np.arange(300, dtype=np.int64)) <= 300   # new, but for false positives
    found = g.contains_many(np.arange(300, 310))
    assert isinstance(found, np.ndarray) and found.tolist() == [False] * 10
    assert g.contains_many(list(range(5))) == [True] * 5
    with pytest.raises(TypeError):
        g.update("a string")


def test_bad_arguments():
    for args, kwargs in [((0,), {}), ((-5,), {}), ((100, 0.0), {}), ((100, 0.7), {}),
                         ((100, -0.1), {}), ((100,), {"generations": 1}),
                         ((100,), {"generations": 65}), ((100,), {"window": -1}),
                         ((2 ** 64,), {})]:
        with pytest.raises(ValueError):
            sketch.AgingBloomFilter(*args, **kwargs)
    with pytest.raises(TypeError):
        sketch.AgingBloomFilter("100")
    f = sketch.AgingBloomFilter(100)
    with pytest.raises(ValueError):
        f.add("x", -1)
    with pytest.raises(TypeError):
        f.add("x", 1.5)
    with pytest.raises(TypeError):
        f.contains(object())
    with pytest.raises(TypeError):
        object() in f
    with pytest.raises(TypeError):
        f.merge(sketch.BloomFilter(100))
    with pytest.raises(ValueError, match="count windows do not merge"):
        f.merge(sketch.AgingBloomFilter(100))
    timed = sketch.AgingBloomFilter(100, window=60)
    with pytest.raises(ValueError):
        timed.merge(sketch.AgingBloomFilter(100, window=61))


def test_merge_of_time_windows_is_the_union():
    a = sketch.AgingBloomFilter(1000, 0.001, window=100)
    b = sketch.AgingBloomFilter(1000, 0.001, window=100)
    a.update(["a%d" % i for i in range(50)], 10)
    b.update(["b%d" % i for i in range(50)], 90)
    a.merge(b)
    a.merge(a)
    assert all(a.contains_many(["a%d" % i for i in range(50)] + ["b%d" % i for i in range(50)]))
    assert a.newest == b.newest


def test_copies_pickles_and_files(tmp_path):
    f = sketch.AgingBloomFilter(300, 0.01, window=1000, generations=5)
    for i in range(400):
        f.add(i, i * 3)
    path = tmp_path / "f.abf"
    f.save(path)
    for other in (f.copy(), copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f)),
                  sketch.AgingBloomFilter.from_bytes(f.to_bytes()),
                  sketch.AgingBloomFilter.open(str(path))):
        assert type(other) is sketch.AgingBloomFilter
        assert other.to_bytes() == f.to_bytes()
        assert (other.capacity, other.fp_rate, other.generations, other.window, other.span,
                other.count) == (f.capacity, f.fp_rate, f.generations, f.window, f.span, f.count)
    c = f.copy()
    c.add("only in the copy", 1200)
    assert "only in the copy" in c and "only in the copy" not in f
    assert repr(f) == "AgingBloomFilter(capacity=300, fp_rate=0.01, window=1000, " \
                      "generations=5, count=%d)" % f.count
    f.clear()
    assert f.count == 0 and 399 not in f and f.memory > 0
    with pytest.raises(OSError):
        sketch.AgingBloomFilter.open(str(tmp_path / "missing"))


def test_damaged_bytes_raise_value_error():
    f = sketch.AgingBloomFilter(200, 0.01, window=50)
    f.update(range(100), 10)
    good = f.to_bytes()
    for data in (b"", b"SKAB", sketch.BloomFilter(100).to_bytes()):
        with pytest.raises(ValueError):
            sketch.AgingBloomFilter.from_bytes(data)
    for cut in range(0, len(good), max(1, len(good) // 200)):
        with pytest.raises(ValueError):
            sketch.AgingBloomFilter.from_bytes(good[:cut])
    rng = random.Random(9)
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            g = sketch.AgingBloomFilter.from_bytes(bytes(data))
        except ValueError:
            continue
        g.contains("x"), g.contains_many(["a", "b"]), g.to_bytes(), repr(g)
        g.add("after", 20)


def test_module_export_is_to_bytes():
    from conftest import REDIS_SERVER
    from private_redis import redis_client
    module = os.environ.get("SKETCH_MODULE", os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "build", "module", "sketch.so"))
    if not os.path.exists(module):
        pytest.fail("no module at %s (build it, or set SKETCH_MODULE)" % module, pytrace=False)
    f = sketch.AgingBloomFilter(1000, 0.01, window=60000, generations=4)
    with redis_client(REDIS_SERVER, "sketch-py-abf-", ("--loadmodule", module)) as r:
        r.execute_command("ABF.RESERVE", "k", 0.01, 1000, "WINDOW", 60000, "GENERATIONS", 4)
        for step in range(40):
            t = 1700000000000 + step * 4999
            items = ["u%d" % ((step * 13 + j) % 700) for j in range(25)]
            r.execute_command("ABF.ADDAT", "k", t, *items)
            for item in items:
                f.add(item, t)
        assert r.execute_command("ABF.EXPORT", "k") == f.to_bytes()
