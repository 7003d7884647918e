# SPDX-License-Identifier: BSD-3-Clause
"""No bytes crash the interpreter: every class's from_bytes (and
BloomFilter.open, HyperLogLog.open) over the fuzz targets' corpora and
regression inputs (fuzz/), and over many damaged copies of valid
serializations: truncated, cut, extended, bit-flipped, overwritten and
random. Each gives an object that answers, or ValueError (MemoryError for
an allocation refused), never another exception or a crash."""
import os
import random

import pytest

import sketch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MUTATIONS = 1500


def exercise_hll(h):
    h.count(), h.estimate(), h.to_bytes(), repr(h)
    h.add("after")


def exercise_filter(f):
    f.contains("x"), f.contains_many(["a", "b"]), f.to_bytes(), repr(f)


def exercise_map(m):
    len(m), m.items(), m.to_bytes(), repr(m)


def exercise_cms(c):
    c.count("x"), c.to_bytes(), repr(c)


def exercise_topk(t):
    t.list(), t.count("x"), t.to_bytes(), repr(t)


def exercise_tdigest(t):
    t.quantile(0.5), t.cdf(1.0), t.to_bytes(), repr(t)


def exercise_window_hll(w):
    w.count(w.horizon), w.snapshot(1).count(), w.to_bytes(), repr(w)
    w.add("after", (w.newest or 0) + w.resolution)


def exercise_aging_bloom(f):
    f.contains("x"), f.contains_many(["a", "b"]), f.to_bytes(), repr(f)
    f.add("after", f.newest + f.span)


def valid_hlls():
    small, big, coarse = sketch.HyperLogLog(), sketch.HyperLogLog(), sketch.HyperLogLog(6)
    small.update(["a", "b", "c"])
    big.update(range(50000))
    coarse.update(range(1000))
    return [small.to_bytes(), big.to_bytes(), coarse.to_bytes(), small.to_redis(), big.to_redis()]


def valid_blooms():
    fixed = sketch.BloomFilter(1000, 0.01)
    fixed.update(range(500))
    scalable = sketch.BloomFilter(100, 0.01, expansion=2)
    scalable.update(range(1000))
    classic = sketch.BloomFilter(200, 0.001, layout="classic")
    classic.update(["x", "y"])
    return [fixed.to_bytes(), scalable.to_bytes(), classic.to_bytes()]


def valid_maps():
    m = sketch.HyperLogLogMap()
    m.update(["g%d" % (i % 7) for i in range(3000)], range(3000))
    return [m.to_bytes(), sketch.HyperLogLogMap().to_bytes()]


def valid_cuckoos():
    c = sketch.CuckooFilter(1000)
    c.update(range(600))
    return [c.to_bytes()]


def valid_cms():
    c = sketch.CountMinSketch(200, 4)
    c.update(range(1000))
    return [c.to_bytes()]


def valid_topks():
    t = sketch.TopK(5)
    t.update([str(i % 20) for i in range(2000)])
    return [t.to_bytes()]


def valid_tdigests():
    t = sketch.TDigest()
    t.update([float(i) for i in range(5000)])
    return [t.to_bytes(), sketch.TDigest().to_bytes()]


def valid_window_hlls():
    w = sketch.WindowHyperLogLog(3600, resolution=10, precision=8)
    for t in range(0, 5000, 7):
        w.add(t % 311, t)
    return [w.to_bytes(), sketch.WindowHyperLogLog(60).to_bytes()]


def valid_aging_blooms():
    counted = sketch.AgingBloomFilter(300, 0.01, generations=3)
    counted.update(range(700))
    timed = sketch.AgingBloomFilter(200, 0.01, window=100)
    for t in range(0, 300, 3):
        timed.add(t, t)
    return [counted.to_bytes(), timed.to_bytes()]


FAMILIES = {
    "HyperLogLog": (lambda: sketch.HyperLogLog, valid_hlls, exercise_hll, ["hll_native", "hll_redis"]),
    "BloomFilter": (lambda: sketch.BloomFilter, valid_blooms, exercise_filter, ["bloom_file", "bloom_restore"]),
    "HyperLogLogMap": (lambda: sketch.HyperLogLogMap, valid_maps, exercise_map, ["hll_groups"]),
    "CuckooFilter": (lambda: sketch.CuckooFilter, valid_cuckoos, exercise_filter, ["cuckoo"]),
    "CountMinSketch": (lambda: sketch.CountMinSketch, valid_cms, exercise_cms, ["cms"]),
    "TopK": (lambda: sketch.TopK, valid_topks, exercise_topk, ["topk"]),
    "TDigest": (lambda: sketch.TDigest, valid_tdigests, exercise_tdigest, ["tdigest"]),
    "WindowHyperLogLog": (lambda: sketch.WindowHyperLogLog, valid_window_hlls, exercise_window_hll,
                          ["window_hll"]),
    "AgingBloomFilter": (lambda: sketch.AgingBloomFilter, valid_aging_blooms, exercise_aging_bloom,
                         ["aging_bloom"]),
}


def corpus(names):
    for top in ("fuzz/corpus", "fuzz/regressions"):
        for name in names:
            folder = os.path.join(ROOT, top, name)
            for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
                with open(os.path.join(folder, entry), "rb") as f:
                    yield entry, f.read()


def mutations(valid, rng):
    for _ in range(MUTATIONS):
        data = bytearray(rng.choice(valid))
        kind = rng.randrange(6)
        if kind == 0 and data:
            del data[rng.randrange(len(data)):]
        elif kind == 1 and data:
            start = rng.randrange(len(data))
            del data[start:start + rng.randrange(1, 64)]
        elif kind == 2:
            data += bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 32)))
        elif kind == 3:
            for _ in range(rng.randrange(1, 8)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 4 and len(data) > 8:
            at = rng.randrange(len(data) - 8)
            data[at:at + 8] = rng.getrandbits(64).to_bytes(8, "little")
        else:
            data = bytearray(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))
        yield bytes(data)


def load_or_refuse(cls, data, exercise):
    try:
        obj = cls.from_bytes(data)
    except (ValueError, MemoryError):
        return 0
    exercise(obj)
    return 1


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_corpus_and_damaged_bytes_never_crash(family):
    cls_of, valid_of, exercise, corpora = FAMILIES[family]
    cls = cls_of()
    valid = valid_of()
    for data in valid:
        exercise(cls.from_bytes(data))
    inputs = list(corpus(corpora))
    assert inputs, "no corpus for %s under fuzz/" % family
    for _, data in inputs:
        load_or_refuse(cls, data, exercise)
    rng = random.Random(family)
    refused = sum(1 - load_or_refuse(cls, data, exercise) for data in mutations(valid, rng))
    # Damage is noticed: most damaged copies are refused, not taken.
    assert refused > MUTATIONS // 2


@pytest.mark.parametrize("family,opener", [("HyperLogLog", "open"), ("BloomFilter", "open")])
def test_damaged_files_never_crash(tmp_path, family, opener):
    cls_of, valid_of, exercise, corpora = FAMILIES[family]
    cls = cls_of()
    if family == "BloomFilter":
        f = sketch.BloomFilter(1000)
        f.update(range(300))
        f.save(tmp_path / "valid")
    else:
        h = sketch.HyperLogLog()
        h.update(range(300))
        h.save(tmp_path / "valid")
    valid = [(tmp_path / "valid").read_bytes()] + [data for _, data in corpus(corpora)]
    rng = random.Random(opener + family)
    path = tmp_path / "damaged"
    for data in list(mutations(valid, rng))[:500] + valid:
        path.write_bytes(data)
        try:
            obj = getattr(cls, opener)(path)
        except (ValueError, MemoryError):
            continue
        exercise(obj)
        if family == "BloomFilter":
            obj.close()
