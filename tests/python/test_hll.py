# SPDX-License-Identifier: BSD-3-Clause
"""HyperLogLog from Python: the class's calls against the library's
answers (through the command and the bytes), its files, pickling, threads,
and its errors."""
import copy
import math
import pickle
import threading

import numpy as np
import pytest

import sketch


def filled(n, precision=14, prefix="item"):
    h = sketch.HyperLogLog(precision)
    h.update(["%s%d" % (prefix, i) for i in range(n)])
    return h


def test_defaults_repr_and_properties():
    h = sketch.HyperLogLog()
    assert (h.precision, h.registers, h.encoding) == (14, 16384, "sparse")
    assert h.count() == 0 and repr(h) == "HyperLogLog(precision=14, count=0)"
    assert h.add("a") is True and h.add("a") is False
    h.update(range(100000))
    assert h.encoding == "dense" and h.memory >= 16384
    assert sketch.HyperLogLog(precision=4).registers == 16
    assert "distinct" in sketch.HyperLogLog.__doc__ and "PFADD" in sketch.HyperLogLog.add.__doc__


@pytest.mark.parametrize("precision", [0, 3, 19, -1, 2**32 + 14, -(2**64) + 14])
def test_precision_out_of_range(precision):
    """Refused, never wrapped into range (2**32 + 14 is not 14)."""
    with pytest.raises(ValueError):
        sketch.HyperLogLog(precision)
    with pytest.raises(TypeError):
        sketch.HyperLogLog("14")


def test_error_within_theory():
    """Relative errors of 200 independent sketches at p = 10 against
    1.04/sqrt(m): their RMS within 25% of it (a wrong estimator or hash is far outside)."""
    m, n, trials = 1024, 20000, 200
    errors = []
    for t in range(trials):
        h = sketch.HyperLogLog(10)
        h.update(np.char.add("t%d-" % t, np.arange(n).astype(str)))
        errors.append(h.count() / n - 1)
    rms = math.sqrt(sum(e * e for e in errors) / trials)
    assert 0.75 * 1.04 / math.sqrt(m) < rms < 1.25 * 1.04 / math.sqrt(m)


def test_estimate_bounds_hold_the_count():
    h = filled(50000)
    count, lower, upper = h.estimate()
    assert count == h.count() and lower <= count <= upper
    c1, l1, u1 = h.estimate(sigmas=1)
    c3, l3, u3 = h.estimate(sigmas=3)
    assert l3 < l1 <= u1 < u3
    with pytest.raises(ValueError):
        h.estimate(sigmas=4)


def test_merge_is_the_union_and_compare_the_overlap():
    a, b = filled(30000), filled(30000, prefix="other")
    union = filled(30000)
    union.update(["other%d" % i for i in range(30000)])
    a_copy = a.copy()
    a_copy.merge(b)
    assert a_copy.to_bytes() == union.to_bytes()
    a_copy.merge(a_copy)  # itself: unchanged
    assert a_copy.to_bytes() == union.to_bytes()
    coarse = filled(30000, precision=12)
    fine = filled(30000)
    fine.merge(coarse)
    assert fine.precision == 12 and fine.to_bytes() == filled(30000, precision=12).to_bytes()
    c = a.compare(union)
    assert set(c) == {"precision", "either", "both", "a_only", "b_only", "jaccard", "retained"}
    assert c["retained"][1] <= 1.0 <= c["retained"][2] + 1e-9
    assert abs(c["jaccard"][0] - 0.5) < 0.05
    with pytest.raises(TypeError):
        a.merge("not a sketch")


def test_fold_is_the_coarser_sketch():
    h = filled(20000)
    h.fold(10)
    assert h.to_bytes() == filled(20000, precision=10).to_bytes()
    for bad in (12, -1, 2**32 + 8):
        with pytest.raises(ValueError):
            h.fold(bad)


def test_bytes_pickle_copy_round_trips():
    for h in (sketch.HyperLogLog(), filled(100), filled(100000), filled(3000, precision=6)):
        data = h.to_bytes()
        assert sketch.HyperLogLog.from_bytes(data).to_bytes() == data
        assert sketch.HyperLogLog.from_bytes(bytearray(data)).to_bytes() == data
        assert pickle.loads(pickle.dumps(h)).to_bytes() == data
        assert copy.copy(h).to_bytes() == data and copy.deepcopy(h).to_bytes() == data
        c = h.copy()
        c.add("new item for the copy only")
        assert h.to_bytes() == data
    redis = filled(1000).to_redis()
    assert redis.startswith(b"HYLL")
    assert filled(1000).to_bytes(format="redis") == redis
    assert sketch.HyperLogLog.from_bytes(redis).count() == filled(1000).count()
    with pytest.raises(ValueError, match="format"):
        filled(10).to_bytes(format="json")
    with pytest.raises(ValueError):
        sketch.HyperLogLog.from_redis(filled(10).to_bytes())   # native, not Redis's


def test_files_with_the_command(run_sketch, tmp_path):
    h = filled(40000)
    path = tmp_path / "mine.hll"
    h.save(path)
    assert run_sketch("hll", "count", path).stdout.strip() == str(h.count())
    h.save(str(tmp_path / "mine.redis"), format="redis")
    assert (tmp_path / "mine.redis").read_bytes() == h.to_redis()
    lines = tmp_path / "lines.txt"
    lines.write_text("".join("item%d\n" % i for i in range(40000, 50000)))
    run_sketch("hll", "add", path, input=lines.read_text())
    h.update(["item%d" % i for i in range(40000, 50000)])
    assert sketch.HyperLogLog.open(path).to_bytes() == h.to_bytes()
    assert sketch.HyperLogLog.open(bytes(path)).count() == h.count()
    with pytest.raises(FileNotFoundError) as e:
        sketch.HyperLogLog.open(tmp_path / "missing.hll")
    assert e.value.filename == tmp_path / "missing.hll"
    with pytest.raises(OSError):
        h.save(tmp_path / "no" / "such" / "dir.hll")
    (tmp_path / "junk.hll").write_bytes(b"not a sketch at all")
    with pytest.raises(ValueError):
        sketch.HyperLogLog.open(tmp_path / "junk.hll")


def test_threads_sharing_one_sketch_lose_nothing():
    """Four threads update one sketch from numpy arrays (the GIL released)
    and lists at once: the result is the sketch of all their items."""
    h = sketch.HyperLogLog()
    chunks = [np.char.add("thread%d-" % t, np.arange(50000).astype(str)) for t in range(4)]

    def work(t):
        for start in range(0, 50000, 5000):
            part = chunks[t][start:start + 5000]
            h.update(part if start % 10000 else part.tolist())
            h.count()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sketch.HyperLogLog()
    for chunk in chunks:
        expected.update(chunk)
    assert h.to_bytes() == expected.to_bytes()


def test_update_may_use_the_sketch_from_its_iterator():
    """An iterator that reads the sketch it feeds does not deadlock: items
    are read outside the sketch's lock."""
    h = sketch.HyperLogLog()
    h.update("x%d" % h.count() for _ in range(10))
    assert h.count() >= 1
