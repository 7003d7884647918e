# SPDX-License-Identifier: BSD-3-Clause
"""Conformance of libsketch's HyperLogLog with a real Redis server.

Every expected value comes from the redis-server that conftest.py starts:
PFCOUNT, PFADD replies, PFDEBUG GETREG registers, PFDEBUG ENCODING, and which
strings Redis accepts. Nothing here hard-codes a count. The suite checks

  * counts: random binary streams (0 .. 10^6 items) give PFCOUNT exactly;
  * Redis -> sketch: strings from GET (sparse and dense) load to the same
    count and the same registers, and dense bodies are byte-identical;
  * sketch -> Redis: strings from sk_hll_serialize(SK_HLL_REDIS) are taken by
    SET, PFCOUNT, PFADD, PFMERGE and multi-key PFCOUNT;
  * precision: p > 14 folds to exactly the p = 14 string; p < 14 cannot export;
  * corrupted strings: differential fuzzing of sparse and dense bodies and
    header/length errors against Redis's own validation;
  * the sketch CLI (SKETCH_BIN) on Redis strings.

Two deliberate differences from Redis 7.0.15, on strings no stream produces,
are tested as sketch's documented behaviour (see docs/hll-format.md).
"""
import functools
import os
import random
import struct
import subprocess

import pytest
from redis.exceptions import ResponseError

from sketchlib import (SK_ECORRUPT, SK_EFORMAT, SK_EINCOMPAT, SK_ETRUNCATED,
                       SK_HLL_REDIS, Hll, SketchError)

M = 16384                       # registers at Redis's precision 14
HDR = 16                        # header bytes
DENSE_BODY = M * 6 // 8         # 12288
DENSE_LEN = HDR + DENSE_BODY    # 12304
MAX_RANK = 51                   # 64 - 14 + 1
SPARSE_MAX_BYTES = 3000         # hll-sparse-max-bytes default
SPARSE_MAX_VAL = 32
BATCH = 5000                    # elements per PFADD

STREAM_SIZES = [0, 1, 10, 100, 1000, 10**4, 10**5, 10**6]

SPARSE = b"sparse"
DENSE = b"dense"


# --------------------------------------------------------------------------
# Streams of random binary items
# --------------------------------------------------------------------------

def _generate_items(n, seed):
    """n random items of 0..40 bytes: ~10% repeats of earlier items, ~2% runs
    of NUL bytes, the rest random bytes (which contain NULs too)."""
    rng = random.Random(seed)
    items = []
    append = items.append
    randbytes, randrange, rand = rng.randbytes, rng.randrange, rng.random
    for _ in range(n):
        x = rand()
        if x < 0.10 and items:
            append(items[randrange(len(items))])
        elif x < 0.12:
            append(b"\0" * randrange(41))
        else:
            append(randbytes(randrange(41)))
    return items


@functools.lru_cache(maxsize=32)
def _cached_items(n, seed):
    return tuple(_generate_items(n, seed))


def items_for(n, seed):
    if n > 10**5:  # too big to keep around
        return _generate_items(n, seed)
    return list(_cached_items(n, seed))


def add_both(r, key, h, items):
    """PFADDs items to key in batches and adds them to h, which must hold the
    same registers as key. Each PFADD reply must be what sketch predicts: 1 if
    the key was created or a register changed, else 0."""
    existed = bool(r.exists(key))
    if not items:
        assert r.execute_command("PFADD", key) == (0 if existed else 1)
        return
    for i in range(0, len(items), BATCH):
        chunk = items[i:i + BATCH]
        changed = h.add_many(chunk)
        reply = r.execute_command("PFADD", key, *chunk)
        assert reply == (1 if changed or not existed else 0), \
            "PFADD reply %r, sketch changed %d registers" % (reply, changed)
        existed = True


def pfadd(r, key, items):
    if not items:
        r.execute_command("PFADD", key)
    for i in range(0, len(items), BATCH):
        r.execute_command("PFADD", key, *items[i:i + BATCH])


# --------------------------------------------------------------------------
# An independent reading of Redis strings, for register-level comparisons
# --------------------------------------------------------------------------

def unpack_dense(body):
    """The 16384 6-bit registers of a dense body, LSB first."""
    assert len(body) == DENSE_BODY
    regs = []
    extend = regs.extend
    for i in range(0, DENSE_BODY, 3):
        v = body[i] | body[i + 1] << 8 | body[i + 2] << 16
        extend((v & 63, v >> 6 & 63, v >> 12 & 63, v >> 18))
    return regs


def pack_dense(regs):
    assert len(regs) == M and all(0 <= v < 64 for v in regs)
    out = bytearray()
    for i in range(0, M, 4):
        v = regs[i] | regs[i + 1] << 6 | regs[i + 2] << 12 | regs[i + 3] << 18
        out += bytes((v & 255, v >> 8 & 255, v >> 16))
    return bytes(out)


def sparse_ops(body, nul_terminated=False):
    """The opcodes of a sparse body as (kind, value, run) tuples, kind in
    'zero', 'xzero', 'val'; None if a final XZERO lacks its second byte
    (unless nul_terminated: then it reads 0 there, as Redis does)."""
    ops = []
    i = 0
    while i < len(body):
        b = body[i]
        if b & 0xC0 == 0x00:
            ops.append(("zero", 0, (b & 0x3F) + 1))
            i += 1
        elif b & 0xC0 == 0x40:
            if i + 1 == len(body):
                if not nul_terminated:
                    return None
                low = 0
            else:
                low = body[i + 1]
            ops.append(("xzero", 0, ((b & 0x3F) << 8 | low) + 1))
            i += 2
        else:
            ops.append(("val", ((b >> 2) & 0x1F) + 1, (b & 3) + 1))
            i += 1
    return ops


def encode_ops(ops):
    out = bytearray()
    for kind, value, run in ops:
        if kind == "zero":
            assert 1 <= run <= 64
            out.append(run - 1)
        elif kind == "xzero":
            assert 1 <= run <= M
            out += bytes((0x40 | (run - 1) >> 8, (run - 1) & 0xFF))
        else:
            assert 1 <= value <= 32 and 1 <= run <= 4
            out.append(0x80 | (value - 1) << 2 | (run - 1))
    return bytes(out)


def decode_sparse(body, nul_terminated=False):
    """Registers of a sparse body, or None unless it covers exactly 16384."""
    ops = sparse_ops(body, nul_terminated)
    if ops is None or sum(op[2] for op in ops) != M:
        return None
    regs = []
    for _, value, run in ops:
        regs.extend([value] * run)
    return regs


def registers_of(s):
    """Registers of a valid Redis HyperLogLog string."""
    assert s[:4] == b"HYLL" and s[4] in (0, 1)
    if s[4] == 0:
        return unpack_dense(s[HDR:])
    regs = decode_sparse(s[HDR:])
    assert regs is not None, "invalid sparse body"
    return regs


def redis_registers(r, key):
    """PFDEBUG GETREG of key, on a copy (GETREG converts a key to dense)."""
    tmp = b"getreg-tmp"
    assert r.execute_command("COPY", key, tmp, "REPLACE") == 1
    regs = r.execute_command("PFDEBUG", "GETREG", tmp)
    r.delete(tmp)
    assert len(regs) == M
    return [int(v) for v in regs]


def encoding(r, key):
    return r.execute_command("PFDEBUG", "ENCODING", key)


def stale(s):
    """s with the stale-cache bit set, so PFCOUNT recomputes."""
    s = bytearray(s)
    s[15] |= 0x80
    return bytes(s)


def header(enc):
    return b"HYLL" + bytes((enc,)) + b"\0" * 10 + b"\x80"


def hash_for(index, rank):
    """A 64-bit hash that sets register index to rank (1..51) at p = 14."""
    assert 0 <= index < M and 1 <= rank <= MAX_RANK
    return index if rank == MAX_RANK else index | 1 << (14 + rank - 1)


def load_or_status(s):
    try:
        return Hll.load(s), None
    except SketchError as e:
        return None, e.status


def redis_error_kind(err):
    msg = str(err)
    for kind in ("INVALIDOBJ", "WRONGTYPE"):
        if msg.startswith(kind):
            return kind
    pytest.fail("unexpected Redis error: %s" % msg)


# --------------------------------------------------------------------------
# Counts of random streams
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", STREAM_SIZES)
def test_stream_count_equals_pfcount(r, n):
    items = items_for(n, seed=1000 + n)
    h = Hll()
    add_both(r, b"s", h, items)
    expected = r.pfcount(b"s")
    assert h.count() == expected
    # The same registers, one by one.
    assert registers_of(h.to_redis()) == redis_registers(r, b"s")
    # Redis -> sketch and sketch -> Redis at every size.
    assert Hll.load(r.get(b"s")).count() == expected
    r.set(b"t", h.to_redis())
    assert r.pfcount(b"t") == expected
    assert r.pfcount(b"s", b"t") == expected


def test_stream_in_random_batches_and_orders(r):
    """Batch boundaries and insertion order change Redis's sparse bytes but
    never the count; sketch must follow every intermediate PFCOUNT."""
    rng = random.Random(7)
    items = items_for(3000, seed=7)
    h = Hll()
    pos = 0
    while pos < len(items):
        k = rng.choice((1, 2, 3, 17, 100, 400))
        chunk = items[pos:pos + k]
        pos += k
        changed = h.add_many(chunk)
        created = not r.exists(b"o")
        assert r.execute_command("PFADD", b"o", *chunk) == (1 if changed or created else 0)
        assert r.pfcount(b"o") == h.count()
    shuffled = list(items)
    rng.shuffle(shuffled)
    pfadd(r, b"o2", shuffled)
    assert r.pfcount(b"o2") == h.count()
    assert redis_registers(r, b"o2") == redis_registers(r, b"o")


# --------------------------------------------------------------------------
# Redis -> sketch
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 10, 100, 300, 1000, 10**4, 10**5])
def test_redis_string_loads(r, n):
    items = items_for(n, seed=2000 + n)
    pfadd(r, b"k", items)
    native_enc = encoding(r, b"k")
    expected = r.pfcount(b"k")

    raw = r.get(b"k")
    assert raw[:4] == b"HYLL" and raw[4] == (1 if native_enc == SPARSE else 0)
    loaded = Hll.load(raw)
    assert loaded.loaded_format == SK_HLL_REDIS
    assert loaded.count() == expected
    regs = registers_of(raw)
    assert regs == redis_registers(r, b"k")
    assert registers_of(loaded.to_redis()) == regs
    assert loaded.count() == Hll.of(items).count()

    # Forced dense: a 12304-byte string with the same registers and count.
    assert r.execute_command("PFDEBUG", "TODENSE", b"k") in (0, 1)
    assert encoding(r, b"k") == DENSE
    dense = r.get(b"k")
    assert len(dense) == DENSE_LEN and dense[4] == 0
    assert r.pfcount(b"k") == expected
    assert Hll.load(dense).count() == expected
    assert unpack_dense(dense[HDR:]) == regs
    assert pack_dense(regs) == dense[HDR:]


def test_redis_strings_cover_both_encodings(r):
    seen = set()
    for n in (10, 100, 10**4):
        pfadd(r, b"e%d" % n, items_for(n, seed=2000 + n))
        seen.add(encoding(r, b"e%d" % n))
    assert seen == {SPARSE, DENSE}


def test_dense_bodies_identical(r):
    """Dense bytes depend only on the registers: sketch's dense string and
    Redis's (native dense, and forced dense) must have identical bodies."""
    items = items_for(10**5, seed=3001)
    h = Hll.of(items)
    s = h.to_redis()
    assert len(s) == DENSE_LEN and s[4] == 0, "10^5 items should export dense"

    pfadd(r, b"d", items)
    assert encoding(r, b"d") == DENSE
    r.execute_command("PFDEBUG", "TODENSE", b"d")
    assert r.get(b"d")[HDR:] == s[HDR:]

    # The same items fed in a different order and in small steps, starting
    # sparse and promoted by Redis itself.
    shuffled = list(items)
    random.Random(3).shuffle(shuffled)
    for i in range(0, len(shuffled), 50):
        r.execute_command("PFADD", b"d2", *shuffled[i:i + 50])
    assert r.get(b"d2")[HDR:] == s[HDR:]

    # A sparse Redis key forced dense versus sketch's registers packed dense.
    small = items_for(200, seed=3002)
    pfadd(r, b"d3", small)
    assert encoding(r, b"d3") == SPARSE
    r.execute_command("PFDEBUG", "TODENSE", b"d3")
    assert r.get(b"d3")[HDR:] == pack_dense(registers_of(Hll.of(small).to_redis()))


def test_cached_cardinality_header(r):
    """After PFCOUNT Redis stores the count in bytes 8..15 with the stale bit
    clear; sketch reads such strings and writes strings with the bit set."""
    items = items_for(1000, seed=4000)
    h = Hll.of(items)
    s = h.to_redis()
    assert s[:4] == b"HYLL" and s[5:15] == b"\0" * 10 and s[15] == 0x80
    r.set(b"c", s)
    expected = r.pfcount(b"c")
    assert h.count() == expected
    raw = r.get(b"c")
    assert struct.unpack("<Q", raw[8:16])[0] == expected
    assert Hll.load(raw).count() == expected
    # Sketch ignores a (valid-looking) cache and recomputes; Redis trusts it.
    lie = raw[:8] + struct.pack("<Q", expected + 12345) + raw[HDR:]
    r.set(b"c2", lie)
    assert r.pfcount(b"c2") == expected + 12345
    assert Hll.load(lie).count() == expected
    r.set(b"c3", stale(lie))
    assert r.pfcount(b"c3") == expected


# --------------------------------------------------------------------------
# sketch -> Redis
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 10, 100, 1000, 2000, 10**4, 10**5])
def test_sketch_string_in_redis(r, n):
    items = items_for(n, seed=5000 + n)
    h = Hll.of(items)
    s = h.to_redis()
    assert len(s) == h.serialized_size(SK_HLL_REDIS)
    if s[4] == 1:
        assert len(s) <= SPARSE_MAX_BYTES
    else:
        assert s[4] == 0 and len(s) == DENSE_LEN
    assert r.set(b"k", s)
    assert encoding(r, b"k") == (SPARSE if s[4] == 1 else DENSE)
    assert r.pfcount(b"k") == h.count()
    assert redis_registers(r, b"k") == registers_of(s)

    # Redis keeps working on the string: PFADD of new items (which may make
    # Redis promote it to dense), with replies and counts as sketch predicts.
    more = items_for(max(n, 500), seed=5500 + n)
    add_both(r, b"k", h, more)
    assert r.pfcount(b"k") == h.count()
    assert redis_registers(r, b"k") == registers_of(h.to_redis())
    assert Hll.load(r.get(b"k")).count() == h.count()
    # ... and the same count as a key built by Redis alone.
    pfadd(r, b"ref", items + more)
    assert r.pfcount(b"ref") == h.count()


def test_sketch_writes_both_encodings():
    encodings = {Hll.of(items_for(n, seed=5000 + n)).to_redis()[4]
                 for n in (10, 10**4)}
    assert encodings == {0, 1}


MERGE_CASES = [(0, 10), (10, 100), (1000, 50), (1000, 2000), (10**4, 100),
               (10**4, 10**5), (100, 100)]


@pytest.mark.parametrize("n1,n2", MERGE_CASES)
def test_pfmerge_of_sketch_strings(r, n1, n2):
    a = items_for(n1, seed=6000 + n1)
    b = items_for(n2, seed=6100 + n2) + a[: n1 // 2]  # overlapping
    ha, hb = Hll.of(a), Hll.of(b)
    r.set(b"a", ha.to_redis())
    r.set(b"b", hb.to_redis())
    merged = Hll.of(a).merge(hb)

    assert r.pfmerge(b"dst", b"a", b"b")
    assert r.pfcount(b"dst") == merged.count()
    assert redis_registers(r, b"dst") == registers_of(merged.to_redis())
    # The union includes dest itself.
    assert r.pfmerge(b"a", b"b")
    assert r.pfcount(b"a") == merged.count()
    # Reference built by Redis alone.
    pfadd(r, b"ref", a + b)
    assert r.pfcount(b"ref") == merged.count()


@pytest.mark.parametrize("sizes", [(1, 10, 100), (100, 1000, 10**4), (0, 2000, 10**5)])
def test_multikey_pfcount_of_sketch_strings(r, sizes):
    streams = [items_for(n, seed=7000 + n + i) for i, n in enumerate(sizes)]
    keys = [b"m1", b"m2", b"m3"]
    union = Hll()
    for key, items in zip(keys, streams):
        h = Hll.of(items)
        r.set(key, h.to_redis())
        union.merge(h)
    assert r.pfcount(*keys) == union.count()
    assert r.pfcount(keys[0], keys[2]) == Hll.of(streams[0]).merge(Hll.of(streams[2])).count()
    pfadd(r, b"ref", [x for s in streams for x in s])
    assert r.pfcount(b"ref") == union.count()


def test_high_registers_sketch_to_redis(r):
    """Registers above 32 cannot be sparse: sketch must write them dense even
    for a handful of registers, and Redis must count them as sketch does."""
    rng = random.Random(8)
    for trial in range(12):
        h = Hll()
        for _ in range(rng.choice((1, 3, 50, 2000))):
            h.add_hash(hash_for(rng.randrange(M), rng.randint(1, 51)))
        h.add_hash(hash_for(rng.randrange(M), rng.randint(33, 51)))
        s = h.to_redis()
        assert len(s) == DENSE_LEN and s[4] == 0
        key = b"hi%d" % trial
        r.set(key, s)
        assert encoding(r, key) == DENSE
        assert r.pfcount(key) == h.count()
        assert redis_registers(r, key) == registers_of(s)
        extra = items_for(100, seed=8100 + trial)
        add_both(r, key, h, extra)
        assert r.pfcount(key) == h.count()


def test_sparse_size_limit(r):
    """sketch writes sparse while the string fits hll-sparse-max-bytes (3000
    bytes, header included) and dense beyond. k isolated registers at even
    indices cost VAL + ZERO each: 16 + 2k + 1 bytes with the final XZERO; one
    more register right after the last adds one VAL byte."""
    seen = set()
    for k in range(1489, 1494):
        for extra in (False, True):
            h = Hll()
            for j in range(k):
                h.add_hash(hash_for(2 * j, 1 + j % 32))
            if extra:
                h.add_hash(hash_for(2 * k - 1, 1 + (k % 32)))
            s = h.to_redis()
            sparse_len = HDR + 2 * k + 1 + extra
            if sparse_len <= SPARSE_MAX_BYTES:
                assert s[4] == 1 and len(s) == sparse_len
            else:
                assert s[4] == 0 and len(s) == DENSE_LEN
            seen.add(len(s))
            assert len(s) == h.serialized_size(SK_HLL_REDIS)
            r.set(b"z", s)
            assert encoding(r, b"z") == (SPARSE if s[4] == 1 else DENSE)
            assert r.pfcount(b"z") == h.count()
            assert redis_registers(r, b"z") == registers_of(s)
            assert Hll.load(s).count() == h.count()
    assert {SPARSE_MAX_BYTES - 1, SPARSE_MAX_BYTES, DENSE_LEN} <= seen


def test_huge_but_representable_counts(r):
    """Register sets no real stream produces, built from crafted hashes: all
    registers high (estimates up to ~7e18, below 2^63), and registers at the
    maximum 51, whose tau term only shows when the others are about 48..49.
    Redis and sketch must still agree exactly."""
    rng = random.Random(17)
    patterns = [[v] * M for v in (30, 40, 45, 46, 47, 48)]
    patterns.append([51] * (M // 2) + [1] * (M // 2))
    patterns.append([0] + [51] * (M - 1))
    patterns.append([51 if i % 3 else 0 for i in range(M)])
    for low, ks in (((0, 20), (1, 10, 1000, 8000, 16000)),
                    ((48, 48), (1, 100, 1000, 4000, 8000)),
                    ((49, 49), (1, 10, 100, 1000))):
        for k in ks:
            regs = [rng.randint(*low) for _ in range(M)]
            for i in rng.sample(range(M), k):
                regs[i] = 51
            patterns.append(regs)
    for regs in patterns:
        h = Hll()
        for i, v in enumerate(regs):
            if v:
                h.add_hash(hash_for(i, v))
        s = h.to_redis()
        assert registers_of(s) == regs
        r.set(b"u", s)
        assert r.pfcount(b"u") == h.count()
        assert r.pfcount(b"u", b"u") == h.count()


# --------------------------------------------------------------------------
# Precision
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [10, 1000, 10**5])
def test_higher_precision_exports_folded(r, n):
    items = items_for(n, seed=9000 + n)
    pfadd(r, b"ref", items)
    expected = r.pfcount(b"ref")
    h14 = Hll.of(items, 14)
    assert h14.count() == expected
    s14 = h14.to_redis()
    for p in (15, 16, 18):
        hp = Hll.of(items, p)
        s = hp.to_redis()
        assert hp.precision == p  # export does not change the sketch
        assert s == s14, "p=%d export differs from the p=14 string" % p
        r.set(b"p%d" % p, s)
        assert r.pfcount(b"p%d" % p) == expected
        folded = Hll.of(items, p).fold(14)
        assert folded.precision == 14 and folded.count() == expected
        # Merging into a p = 14 sketch combines at 14.
        half = Hll.of(items[: n // 2], 14).merge(Hll.of(items[n // 2:], p))
        assert half.precision == 14 and half.count() == expected


@pytest.mark.parametrize("p", [4, 12, 13])
def test_lower_precision_cannot_export(p):
    h = Hll.of(items_for(100, seed=9100), p)
    assert h.serialized_size(SK_HLL_REDIS) == 0
    with pytest.raises(SketchError) as exc:
        h.to_redis()
    assert exc.value.status == SK_EINCOMPAT
    assert h.to_native()  # the native format still works


# --------------------------------------------------------------------------
# Corrupted strings: differential against Redis's validation
# --------------------------------------------------------------------------

def _mutate_ops(rng, ops):
    """Opcode-level mutations; many keep the 16384-register sum (valid)."""
    ops = list(ops)
    i = rng.randrange(len(ops))
    kind, value, run = ops[i]
    choice = rng.randrange(9)
    if choice == 0 and kind == "val":                 # new value: valid
        ops[i] = ("val", rng.randint(1, 32), run)
    elif choice == 1 and run > 1:                     # split a run: valid
        cut = rng.randrange(1, run)
        k2 = "val" if kind == "val" else ("xzero" if run - cut > 64 else "zero")
        k1 = "val" if kind == "val" else ("xzero" if cut > 64 else "zero")
        ops[i:i + 1] = [(k1, value, cut), (k2, value, run - cut)]
    elif choice == 2 and kind == "zero":              # zero as XZERO: valid
        ops[i] = ("xzero", 0, run)
    elif choice == 3 and len(ops) > 1:                # swap two ops: valid
        j = rng.randrange(len(ops))
        ops[i], ops[j] = ops[j], ops[i]
    elif choice == 4:                                 # run +-1: invalid sum
        delta = rng.choice((-1, 1))
        limit = 4 if kind == "val" else (64 if kind == "zero" else M)
        if 1 <= run + delta <= limit:
            ops[i] = (kind, value, run + delta)
    elif choice == 5:                                 # drop an op
        del ops[i]
    elif choice == 6:                                 # duplicate an op
        ops.insert(i, ops[i])
    elif choice == 7:                                 # move zeros between runs
        zeros = [j for j, op in enumerate(ops) if op[0] != "val"]
        if len(zeros) >= 2:
            a, b = rng.sample(zeros, 2)
            d = rng.randint(1, 3)
            if ops[a][2] > d and ops[b][2] + d <= M:
                ops[a] = ("xzero", 0, ops[a][2] - d)
                ops[b] = ("xzero", 0, ops[b][2] + d)
    else:                                             # new VAL value and run
        ops[i] = ("val", rng.randint(1, 32), rng.randint(1, 4)) if kind == "val" \
            else ops[i]
    return encode_ops(ops)


def _mutate_bytes(rng, body):
    body = bytearray(body)
    choice = rng.randrange(10)
    if choice == 0 and body:                          # flip a bit
        body[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
    elif choice == 1 and body:                        # random byte
        body[rng.randrange(len(body))] = rng.randrange(256)
    elif choice == 2:                                 # truncate
        del body[rng.randrange(len(body) + 1):]
    elif choice == 3 and body:                        # drop the last byte
        del body[-1]
    elif choice == 4:                                 # append random bytes
        body += rng.randbytes(rng.randint(1, 4))
    elif choice == 5:                                 # insert a byte
        body.insert(rng.randrange(len(body) + 1), rng.randrange(256))
    elif choice == 6 and body:                        # delete a byte
        del body[rng.randrange(len(body))]
    elif choice == 7 and len(body) > 1:               # swap adjacent bytes
        j = rng.randrange(len(body) - 1)
        body[j], body[j + 1] = body[j + 1], body[j]
    elif choice == 8 and body:                        # top bits of a byte
        j = rng.randrange(len(body))
        body[j] = (body[j] & 0x3F) | rng.choice((0x00, 0x40, 0x80, 0xC0))
    else:                                             # append a whole op
        body += rng.choice((b"\x00", b"\x80", b"\x40\x00", b"\x7f\xff"))
    return bytes(body)


def _mutate_sparse(rng, s):
    body = s[HDR:]
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        ops = sparse_ops(body)
        if ops and rng.random() < 0.5:
            body = _mutate_ops(rng, ops)
        else:
            body = _mutate_bytes(rng, body)
    head = bytearray(s[:HDR])
    if rng.random() < 0.2:  # noise in unused and cache bytes
        head[5:15] = rng.randbytes(10)
    head[15] |= 0x80
    return bytes(head) + body


def _redis_sparse_sources(r):
    sources = []
    for i, n in enumerate((0, 1, 2, 5, 10, 30, 100, 300, 800)):
        key = b"src%d" % i
        pfadd(r, key, items_for(n, seed=10000 + n))
        assert encoding(r, key) == SPARSE
        sources.append(r.get(key))
    return sources


def _run_pipeline(r, strings):
    """For each string: SET, multi-key PFCOUNT (Redis's merge path), then
    single-key PFCOUNT (its histogram path). Returns (multi, single) pairs,
    each an int or a ResponseError."""
    pipe = r.pipeline(transaction=False)
    for s in strings:
        pipe.set(b"x", s)
        pipe.pfcount(b"x", b"x")
        pipe.pfcount(b"x")
    replies = pipe.execute(raise_on_error=False)
    out = []
    for i in range(len(strings)):
        assert replies[3 * i] is True
        out.append((replies[3 * i + 1], replies[3 * i + 2]))
    return out


def _is_dangling_xzero(body):
    """The body ends in the first byte of an XZERO (Redis then reads the NUL
    terminator of its string as the second byte)."""
    return sparse_ops(body) is None and sparse_ops(body, nul_terminated=True) is not None


def test_corrupted_sparse_strings(r):
    rng = random.Random(11)
    sources = _redis_sparse_sources(r)
    cases = []
    for src in sources:
        cases.extend(_mutate_sparse(rng, src) for _ in range(1000))
    stats = {"both_accept": 0, "both_reject": 0, "dangling_xzero": 0}
    for start in range(0, len(cases), 500):
        chunk = cases[start:start + 500]
        for s, (multi, single) in zip(chunk, _run_pipeline(r, chunk)):
            # Redis's two code paths agree with each other.
            if isinstance(single, ResponseError):
                assert isinstance(multi, ResponseError), s.hex()
                assert redis_error_kind(single) == redis_error_kind(multi) == "INVALIDOBJ"
            else:
                assert multi == single, s.hex()
            h, status = load_or_status(s)
            # An independent decoder agrees with sketch on validity.
            model = decode_sparse(s[HDR:])
            assert (model is not None) == (h is not None), s.hex()
            if h is not None:
                assert not isinstance(single, ResponseError), \
                    "sketch accepts, Redis says %s: %s" % (single, s.hex())
                assert h.count() == single, s.hex()
                assert registers_of(h.to_redis()) == model
                stats["both_accept"] += 1
            else:
                assert status == SK_ECORRUPT, s.hex()
                if isinstance(single, ResponseError):
                    stats["both_reject"] += 1
                    continue
                # The one known divergence (see test_known_divergence_...):
                # anything else is a real disagreement.
                assert _is_dangling_xzero(s[HDR:]), \
                    "sketch rejects (%d), Redis counts %d: %s" % (status, single, s.hex())
                assert Hll.load(s + b"\0").count() == single
                stats["dangling_xzero"] += 1
    total = len(cases)
    assert stats["both_accept"] >= total // 10, stats
    assert stats["both_reject"] >= total // 10, stats
    print("corrupted sparse: %d cases, %s" % (total, stats))


def _mutate_dense(rng, body):
    body = bytearray(body)
    choice = rng.randrange(7)
    regs_touched = []
    if choice <= 2:
        lo, hi = ((0, 63), (0, 51), (52, 63))[choice]
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(M)
            v = rng.randint(lo, hi)
            bit = 6 * i
            word = int.from_bytes(body[bit // 8: bit // 8 + 2].ljust(2, b"\0"), "little")
            shift = bit % 8
            word = (word & ~(63 << shift)) | v << shift
            nbytes = 2 if bit // 8 + 1 < DENSE_BODY else 1
            body[bit // 8: bit // 8 + nbytes] = word.to_bytes(2, "little")[:nbytes]
            regs_touched.append(i)
    elif choice == 3:
        for _ in range(rng.randint(1, 8)):
            body[rng.randrange(DENSE_BODY)] ^= 1 << rng.randrange(8)
    elif choice == 4:
        j = rng.randrange(DENSE_BODY)
        span = rng.randint(1, 64)
        body[j:j + span] = rng.randbytes(len(body[j:j + span]))
    elif choice == 5:
        j = rng.randrange(DENSE_BODY)
        span = rng.randint(1, 300)
        body[j:j + span] = bytes(len(body[j:j + span]))
    else:
        body[rng.randrange(DENSE_BODY)] = rng.choice((0xFF, 0xFC, 0xF0, 0xCF, 0x3F))
    assert len(body) == DENSE_BODY
    return bytes(body)


def test_corrupted_dense_strings(r):
    rng = random.Random(12)
    sources = []
    for n in (0, 300, 10**4, 10**5):
        key = b"dsrc%d" % n
        pfadd(r, key, items_for(n, seed=12000 + n))
        r.execute_command("PFDEBUG", "TODENSE", key)
        assert encoding(r, key) == DENSE
        sources.append(r.get(key))
    cases = []
    for src in sources:
        for _ in range(200):
            head = bytearray(src[:HDR])
            head[15] |= 0x80
            cases.append(bytes(head) + _mutate_dense(rng, src[HDR:]))
    accepted = rejected = 0
    results = _run_pipeline(r, cases)
    for s, (multi, single) in zip(cases, results):
        # Redis accepts every 12304-byte dense string.
        assert not isinstance(single, ResponseError), single
        assert multi == single
        regs = unpack_dense(s[HDR:])
        h, status = load_or_status(s)
        if h is not None:
            assert max(regs) <= MAX_RANK
            assert h.count() == single
            assert registers_of(h.to_redis()) == regs
            accepted += 1
        else:
            assert status == SK_ECORRUPT
            assert max(regs) > MAX_RANK, "rejected with all registers <= 51"
            rejected += 1
    assert accepted >= len(cases) // 5 and rejected >= len(cases) // 10, \
        (accepted, rejected)


def test_wrong_length_dense_strings_rejected_by_both(r):
    rng = random.Random(13)
    pfadd(r, b"d", items_for(10**4, seed=13000))
    good = stale(r.get(b"d"))
    assert len(good) == DENSE_LEN and good[4] == 0
    lengths = {HDR, HDR + 1, HDR + 2, 100, DENSE_BODY, DENSE_LEN - 3, DENSE_LEN - 1,
               DENSE_LEN + 1, DENSE_LEN + 3, DENSE_LEN + DENSE_BODY, 3000}
    lengths.update(rng.randrange(HDR, 2 * DENSE_LEN) for _ in range(20))
    lengths.discard(DENSE_LEN)
    cases = []
    for n in sorted(lengths):
        if n <= DENSE_LEN:
            cases.append(good[:n])
        else:
            cases.append(good + rng.randbytes(n - DENSE_LEN))
    for s, (multi, single) in zip(cases, _run_pipeline(r, cases)):
        assert isinstance(single, ResponseError) and isinstance(multi, ResponseError)
        assert redis_error_kind(single) == "WRONGTYPE"
        with pytest.raises(SketchError) as exc:
            Hll.load(s)
        assert exc.value.status == SK_ETRUNCATED, len(s)


def test_bad_headers_rejected_by_both(r):
    sparse = stale(Hll.of(items_for(100, seed=14000)).to_redis())
    dense = stale(Hll.of(items_for(10**4, seed=14001)).to_redis())
    assert sparse[4] == 1 and dense[4] == 0
    cases = []
    for base in (sparse, dense):
        for enc in (2, 3, 0x7F, 0x80, 0xFF):
            cases.append(base[:4] + bytes((enc,)) + base[5:])
        for magic in (b"HYLl", b"hyll", b"\0YLL", b"XYLL"):
            cases.append(magic + base[4:])
        cases.extend(base[:n] for n in range(0, HDR))
    cases.append(b"")
    for s, (multi, single) in zip(cases, _run_pipeline(r, cases)):
        assert isinstance(single, ResponseError) and isinstance(multi, ResponseError)
        assert redis_error_kind(single) == "WRONGTYPE", s[:16]
        with pytest.raises(SketchError) as exc:
            Hll.load(s)
        assert exc.value.status in (SK_EFORMAT, SK_ETRUNCATED, SK_ECORRUPT)


@pytest.mark.parametrize("xzeros", [131073, 262145])
def test_sparse_run_length_overflow_rejected_by_both(r, xzeros):
    """Runs summing past 2^31 or wrapping 2^32 back to 16384 (the pattern of
    CVE-2025-32023) must be rejected, not counted."""
    s = header(1) + b"\x7f\xff" * xzeros
    r.set(b"o", s)
    for keys in ((b"o",), (b"o", b"o")):
        with pytest.raises(ResponseError) as exc:
            r.pfcount(*keys)
        assert redis_error_kind(exc.value) == "INVALIDOBJ"
    with pytest.raises(SketchError) as exc:
        Hll.load(s)
    assert exc.value.status == SK_ECORRUPT
    assert r.ping()


# --------------------------------------------------------------------------
# Deliberate differences from Redis: sketch is stricter, and asserts its own
# documented behaviour while recording what Redis does
# --------------------------------------------------------------------------

def _dangling_xzero_string():
    """One VAL, an XZERO, then a lone XZERO first byte 0x41 (257 zeros if the
    missing second byte is read as 0): 1 + 16126 + 257 = 16384."""
    n = M - 1 - 257
    body = b"\x80" + bytes((0x40 | (n - 1) >> 8, (n - 1) & 0xFF)) + b"\x41"
    return header(1) + body


def test_sparse_body_cut_inside_an_xzero_is_rejected(r):
    """Redis 7.0.15 reads the NUL terminator behind its string as the missing
    second byte of the XZERO and counts the key; sketch does not read past
    the data it is given and rejects the string."""
    s = _dangling_xzero_string()
    r.set(b"x", s)
    assert r.pfcount(b"x") == Hll.load(s + b"\0").count()
    with pytest.raises(SketchError) as err:
        Hll.load(s)
    assert err.value.status == SK_ECORRUPT


def test_estimate_beyond_2_63_saturates(r):
    """Registers whose estimate is 2^63 or more (no real stream comes near)
    make Redis reply llroundl's overflow value, a negative count; sketch
    saturates at 2^64 - 1 instead."""
    h = Hll()
    for i in range(M):
        h.add_hash(hash_for(i, MAX_RANK))
    r.set(b"sat", h.to_redis())
    assert r.pfcount(b"sat") < 0
    assert h.count() == 2**64 - 1


# --------------------------------------------------------------------------
# The sketch CLI on Redis strings
# --------------------------------------------------------------------------

def _sketch(*args, stdin=None):
    proc = subprocess.run([os.environ["SKETCH_BIN"], *args], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


def _text_items(n, seed):
    rng = random.Random(seed)
    return [b"item-%d-%x" % (i, rng.getrandbits(40)) for i in range(n)]


def test_cli_reads_and_writes_redis_strings(r, tmp_path):
    assert os.access(os.environ["SKETCH_BIN"], os.X_OK), os.environ["SKETCH_BIN"]
    items = _text_items(5000, 15)
    pfadd(r, b"ref", items)
    expected = r.pfcount(b"ref")

    # sketch hll add --redis: a file Redis takes with SET.
    f = str(tmp_path / "a.hll")
    _sketch("hll", "add", "--redis", f, stdin=b"\n".join(items) + b"\n")
    data = open(f, "rb").read()
    assert data[:4] == b"HYLL"
    assert int(_sketch("hll", "count", f)) == expected
    r.set(b"a", data)
    assert r.pfcount(b"a") == expected

    # A string from GET, updated by the CLI, stays a Redis string.
    g = str(tmp_path / "g.hll")
    with open(g, "wb") as out:
        out.write(r.get(b"ref"))
    assert int(_sketch("hll", "count", g)) == expected
    more = _text_items(300, 16)
    _sketch("hll", "add", g, *[x.decode() for x in more])
    pfadd(r, b"ref", more)
    updated = open(g, "rb").read()
    assert updated[:4] == b"HYLL"
    r.set(b"g", updated)
    assert r.pfcount(b"g") == r.pfcount(b"ref")

    # export folds a precision-16 sketch to Redis's 14.
    n = str(tmp_path / "n.hll")
    _sketch("hll", "add", "-p", "16", n, stdin=b"\n".join(items) + b"\n")
    r.set(b"n", _sketch("hll", "export", n))
    assert r.pfcount(b"n") == expected


def test_group_file_loads_into_redis_with_redis_cli_pipe(r, redis_server_port, tmp_path):
    """sketch count --by -o writes a group file; hll export turns it into SET
    commands that redis-cli --pipe sends; every key then counts in PFCOUNT
    exactly as the group did, and as PFADD of the group's items does."""
    port = redis_server_port[0]
    rng = random.Random(21)
    groups = {f"page{g}".encode(): [] for g in range(40)}
    rows = []
    for i in range(60000):
        g = f"page{min(int(rng.paretovariate(1.0)) - 1, 39)}".encode()
        user = b"user%d" % rng.randrange(30000)
        groups[g].append(user)
        rows.append(g + b"\t" + user + b"\n")
    f = str(tmp_path / "day.skg")
    printed = _sketch("count", "--by", "1", "-f", "2", "-o", f, stdin=b"".join(rows))
    counts = dict(line.split(b"\t") for line in printed.splitlines())
    commands = _sketch("hll", "export", "--prefix", "visits:", f)
    pipe = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=commands,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert pipe.returncode == 0, pipe.stderr
    assert b"errors: 0" in pipe.stdout
    for g, items in groups.items():
        if not items:
            continue
        assert r.pfcount(b"visits:" + g) == int(counts[g])
        pfadd(r, b"ref:" + g, items)
        assert r.pfcount(b"ref:" + g) == int(counts[g])
        # the same string but for the cardinality PFCOUNT cached in bytes 8..15
        stored, exported = r.get(b"visits:" + g), _sketch("hll", "export", "--group", g.decode(), f)
        assert stored[:8] == exported[:8] and stored[16:] == exported[16:]
