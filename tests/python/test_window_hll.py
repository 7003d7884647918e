# SPDX-License-Identifier: BSD-3-Clause
"""sketch.WindowHyperLogLog: the same bytes as `sketch hll add --time`
makes from the same timestamped lines, files the command reads, a
window's count equal to its snapshot's HyperLogLog count and within 2 of
the exact distinct count of small windows, the errors of bad windows and
times, pickle and copies, and damaged bytes refused with ValueError."""
import copy
import pickle
import random

import pytest

import sketch

T0 = 1700000000
LINES = [(T0 + i // 7, "user-%d" % (i * 31 % 97)) for i in range(700)]


def built(pairs, horizon=3600, **kwargs):
    w = sketch.WindowHyperLogLog(horizon, **kwargs)
    for t, item in pairs:
        w.add(item, t)
    return w


def test_same_bytes_as_the_command(tmp_path, run_sketch):
    path = tmp_path / "w.whll"
    text = "".join("%d\t%s\n" % (t, item) for t, item in LINES)
    run_sketch("hll", "add", "--time", "1", "-f", "2", "--horizon", "1h", path, input=text)
    w = built(LINES)
    assert w.to_bytes() == path.read_bytes()
    opened = sketch.WindowHyperLogLog.open(str(path))
    assert opened.to_bytes() == w.to_bytes()
    assert (opened.horizon, opened.resolution, opened.precision) == (3600, 1, 14)
    # A file save() wrote is one the command adds to and counts.
    mine = tmp_path / "mine.whll"
    w.save(mine)
    run_sketch("hll", "add", "--time", "1", "-f", "2", mine,
               input="%d\tlate-comer\n" % (T0 + 100))
    w.add("late-comer", T0 + 100)
    assert mine.read_bytes() == w.to_bytes()
    out = run_sketch("hll", "count", "--window", "1h", mine).stdout
    assert int(out) == w.count(3600)


def test_counts_are_the_snapshots():
    rng = random.Random(5)
    w = sketch.WindowHyperLogLog(1000, resolution=3, precision=10)
    for i in range(20000):
        w.add(rng.randrange(5000), i // 20)
    newest = w.newest
    assert newest == (19999 // 20) // 3 * 3
    for window in (1, 2, 3, 50, 333, 999, 1000):
        for now in (None, newest + 2, newest + 40, newest + 999):
            h = w.snapshot(window, now)
            assert isinstance(h, sketch.HyperLogLog) and h.precision == 10
            assert w.count(window, now) == h.count(), (window, now)
    assert w.count(1000, newest + 5000) == 0


def test_small_windows_count_their_items():
    rng = random.Random(11)
    pairs = [(rng.randrange(0, 400), "k%d" % rng.randrange(300)) for _ in range(3000)]
    w = built(pairs, horizon=120)
    newest = max(t for t, _ in pairs)
    assert w.newest == newest
    # Late adds within the horizon count; older ones were dropped.
    for window in (1, 2, 5, 10, 30, 60, 120):
        for now in (newest, newest + 3, newest + 50):
            exact = len({item for t, item in pairs if now - window < t <= now})
            assert abs(w.count(window, now) - exact) <= 2, (window, now, exact)
    assert w.count(120) == w.count(120, newest)


def test_resolution_counts_whole_slots():
    w = sketch.WindowHyperLogLog(100, resolution=10)
    for t in range(0, 100):
        w.add("at-%d" % t, t)
    assert w.newest == 90
    # A window of 15 units is the two slots ending with now's: times 80..99.
    assert w.count(15) == 20
    assert w.count(10, 95) == 10
    assert w.count(100, 99) == 100


def test_update_takes_iterables_and_arrays():
    np = pytest.importorskip("numpy")
    a = sketch.WindowHyperLogLog(60)
    b = sketch.WindowHyperLogLog(60)
    items = list(range(1000))
    a.update(items, 10)
    a.update(iter(["x", "y", b"z"]), 12)
    b.update(np.arange(1000, dtype=np.int64), 10)
    for item in ["x", "y", b"z"]:
        b.add(item, 12)
    assert a.to_bytes() == b.to_bytes()
    assert a.count(60) == a.snapshot(60).count()
    with pytest.raises(TypeError):
        a.update("a string", 1)


def test_adds_say_what_changed_and_old_times_are_dropped():
    w = sketch.WindowHyperLogLog(100)
    assert w.newest is None and w.pairs == 0
    assert w.add("a", 1000) is True
    assert w.add("a", 1000) is False
    assert w.add("b", 899) is False          # a horizon or more before the newest
    assert w.add("b", 950) is True
    assert w.count(100) == 2 and w.count(50) == 1
    assert w.pairs >= 2 and w.memory > 0
    w.clear()
    assert w.newest is None and w.count(100, 0) == 0
    assert "empty" in repr(w)
    w.add("c", 5)
    assert repr(w) == "WindowHyperLogLog(horizon=100, resolution=1, precision=14, newest=5, " \
                      "pairs=%d)" % w.pairs


def test_bad_arguments():
    w = built([(100, "a")], horizon=60)
    with pytest.raises(ValueError, match="window must be from 1 to the horizon, 60"):
        w.count(0)
    with pytest.raises(ValueError, match="window must be from 1 to the horizon"):
        w.count(61)
    with pytest.raises(ValueError, match=r"now \(99\) is before the newest time added \(100\)"):
        w.count(10, 99)
    with pytest.raises(ValueError, match="before the newest"):
        w.snapshot(10, now=0)
    with pytest.raises(ValueError):
        w.add("x", -1)
    with pytest.raises(ValueError):
        w.add("x", 2 ** 62 + 1)
    with pytest.raises(TypeError):
        w.add("x", 1.5)
    with pytest.raises(TypeError):
        w.add(object(), 1)
    with pytest.raises(TypeError):
        w.count("10")
    for args, kwargs in [((0,), {}), ((60,), {"resolution": 0}), ((60,), {"precision": 3}),
                         ((60,), {"precision": 19}), ((-1,), {}), ((2 ** 30,), {}),
                         ((2 ** 64,), {})]:
        with pytest.raises(ValueError):
            sketch.WindowHyperLogLog(*args, **kwargs)
    with pytest.raises(ValueError, match="same precision, horizon and resolution"):
        w.merge(sketch.WindowHyperLogLog(61))
    with pytest.raises(TypeError):
        w.merge(sketch.HyperLogLog())


def test_merge_is_the_union():
    left = [(t, "l%d" % (t % 40)) for t in range(0, 300, 2)]
    right = [(t, "r%d" % (t % 30)) for t in range(1, 400, 3)]
    a, b = built(left, horizon=500), built(right, horizon=500)
    a.merge(b)
    a.merge(a)
    both = built(sorted(left + right), horizon=500)
    for window in (1, 10, 100, 500):
        for now in (None, 420):
            assert a.snapshot(window, now).to_bytes() == both.snapshot(window, now).to_bytes()
    assert a.newest == 397


def test_copies_and_pickles():
    w = built(LINES, horizon=7200, resolution=2, precision=12)
    for other in (w.copy(), copy.copy(w), copy.deepcopy(w), pickle.loads(pickle.dumps(w)),
                  sketch.WindowHyperLogLog.from_bytes(w.to_bytes()),
                  sketch.WindowHyperLogLog.from_bytes(bytearray(w.to_bytes()))):
        assert type(other) is sketch.WindowHyperLogLog
        assert other.to_bytes() == w.to_bytes()
        assert other.count(100) == w.count(100)
    c = w.copy()
    c.add("only in the copy", T0 + 200)
    assert c.count(7200) != w.count(7200) or c.to_bytes() != w.to_bytes()


def test_damaged_bytes_raise_value_error():
    good = built(LINES).to_bytes()
    rng = random.Random(3)
    with pytest.raises(ValueError):
        sketch.WindowHyperLogLog.from_bytes(b"")
    with pytest.raises(ValueError):
        sketch.WindowHyperLogLog.from_bytes(sketch.HyperLogLog().to_bytes())
    for cut in range(0, len(good), max(1, len(good) // 200)):
        with pytest.raises(ValueError):
            sketch.WindowHyperLogLog.from_bytes(good[:cut])
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        try:
            w = sketch.WindowHyperLogLog.from_bytes(bytes(data))
        except ValueError:
            continue
        w.count(w.horizon), w.to_bytes(), repr(w)
        w.add("after", (w.newest or 0) + 1)


def test_module_export_is_to_bytes(tmp_path):
    """WHLL.ADDAT's key exports the bytes of the same adds."""
    import os
    from conftest import REDIS_SERVER
    from private_redis import redis_client
    module = os.environ.get("SKETCH_MODULE", os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "build", "module", "sketch.so"))
    if not os.path.exists(module):
        pytest.fail("no module at %s (build it, or set SKETCH_MODULE)" % module, pytrace=False)
    w = sketch.WindowHyperLogLog(600000, resolution=1000, precision=12)
    with redis_client(REDIS_SERVER, "sketch-py-whll-", ("--loadmodule", module)) as r:
        r.execute_command("WHLL.RESERVE", "k", 600000, "RESOLUTION", 1000, "PRECISION", 12)
        for step in range(50):
            t = 1700000000000 + step * 733
            items = ["u%d" % ((step * 17 + j) % 211) for j in range(20)]
            r.execute_command("WHLL.ADDAT", "k", t, *items)
            w.update(items, t)
        assert r.execute_command("WHLL.EXPORT", "k") == w.to_bytes()
        assert r.execute_command("WHLL.COUNT", "k", 10000, "TIME", w.newest + 999) == \
            w.count(10000, w.newest + 999)
