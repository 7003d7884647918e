# SPDX-License-Identifier: BSD-3-Clause
"""TDIGEST.* answers exactly as RedisBloom 2.6.28 answers, in RESP2 and RESP3.

SESSIONS below are command sequences, each run on an empty keyspace. The
fixture tests/fixtures/redisbloom-2.6.28/td_replies.json holds what
RedisBloom 2.6.28 replied to every one of them, on each protocol, with the
wire type of every reply (tests/common/resp.py): this file, run as a script
against a server with RedisBloom loaded, wrote it (the fixture's README says
how). The test sends the same sequences to sketch.so and asks for the same
replies, error texts and types included, and every double to the bit
(%.17g): the digests hold the same centroids only if they were compressed
at the same moments, in the same arithmetic.

The sessions check TDIGEST.CREATE's arguments; TDIGEST.ADD's parsing and
thousands of values of several distributions, with ties, in batches, with
reads between them (RedisBloom compresses on reads, and its later answers
depend on it); every read: QUANTILE (sorted and unsorted lists), CDF, RANK,
REVRANK, BYRANK, BYREVRANK, TRIMMED_MEAN, MIN, MAX and INFO, on empty,
one-value and large digests, and their errors; TDIGEST.MERGE's compression
rules (the destination's, the largest source's, COMPRESSION, OVERRIDE), a
destination among its sources, missing keys and bad keywords; RESET; keys of
another type.

Left out, as deliberate differences (docs/redis-module.md): INFO's "Memory
usage" (RedisBloom counts its full capacity, sketch what the digest holds);
COMMAND INFO's flags (the reads are may-replicate here); compressions past
357,913,939 (RedisBloom's capacity overflows); a merge whose total weight
passes 2^63 (RedisBloom compresses some sources, then fails).
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from resp_record import assert_same, record  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures",
                       "redisbloom-2.6.28", "td_replies.json")


def _values(seed, n, kind):
    """n values as text: uniform, exponential, integers with many ties, or
    a sorted run (every value past the centroids)."""
    rng = random.Random(seed)
    if kind == "uniform":
        v = [rng.uniform(-500, 500) for _ in range(n)]
    elif kind == "exponential":
        v = [rng.expovariate(0.05) for _ in range(n)]
    elif kind == "ties":
        v = [rng.randrange(12) for _ in range(n)]
    else:
        v = sorted(rng.uniform(0, 1e6) for _ in range(n))
    return [repr(x) for x in v]


READS = [
    ["TDIGEST.QUANTILE", "t", "0", "0.0001", "0.001", "0.01", "0.1", "0.25", "0.5", "0.75", "0.9",
     "0.99", "0.999", "1"],
    ["TDIGEST.QUANTILE", "t", "0.9", "0.1", "0.5", "0.5", "0.01"],
    ["TDIGEST.CDF", "t", "-1000", "0", "1", "3", "10", "50", "100", "1000", "1e9"],
    ["TDIGEST.RANK", "t", "-1000", "0", "3", "10", "25", "100", "1e9"],
    ["TDIGEST.REVRANK", "t", "-1000", "0", "3", "10", "25", "100", "1e9"],
    ["TDIGEST.BYRANK", "t", "0", "1", "2", "10", "100", "1000", "2999", "100000"],
    ["TDIGEST.BYREVRANK", "t", "0", "1", "2", "10", "100", "1000", "2999", "100000"],
    ["TDIGEST.TRIMMED_MEAN", "t", "0.1", "0.9"],
    ["TDIGEST.TRIMMED_MEAN", "t", "0", "1"],
    ["TDIGEST.MIN", "t"], ["TDIGEST.MAX", "t"], ["TDIGEST.INFO", "t"],
]


def _stream(kind, compression, seed, batches, batch, read_every):
    """A digest fed `batches` TDIGEST.ADDs of `batch` values, read every
    `read_every` batches, and at the end."""
    out = [["TDIGEST.CREATE", "t", "COMPRESSION", str(compression)]]
    values = _values(seed, batches * batch, kind)
    for b in range(batches):
        out.append(["TDIGEST.ADD", "t"] + values[b * batch:(b + 1) * batch])
        if read_every and b % read_every == read_every - 1:
            out += READS[:2] + [["TDIGEST.INFO", "t"]]
    return out + READS


SESSIONS = {
    "create": [
        ["TDIGEST.CREATE"], ["TDIGEST.CREATE", "a", "COMPRESSION"],
        ["TDIGEST.CREATE", "a", "COMPRESSION", "10", "x"], ["TDIGEST.CREATE", "a"],
        ["TDIGEST.CREATE", "a"], ["TDIGEST.INFO", "a"],
        ["TDIGEST.CREATE", "b", "compression", "50"], ["TDIGEST.INFO", "b"],
        ["TDIGEST.CREATE", "c", "COMPRESSION", "0"], ["TDIGEST.CREATE", "c", "COMPRESSION", "-3"],
        ["TDIGEST.CREATE", "c", "COMPRESSION", "1.5"], ["TDIGEST.CREATE", "c", "COMPRESS", "10"],
        ["TDIGEST.CREATE", "c", "10", "COMPRESSION"], ["TDIGEST.CREATE", "c", "x", "y"],
        ["TDIGEST.CREATE", "d", "COMPRESSION", "1"], ["TDIGEST.INFO", "d"],
        ["SET", "s", "v"], ["TDIGEST.CREATE", "s"], ["TDIGEST.INFO", "s"],
        ["TDIGEST.ADD", "s", "1"], ["TDIGEST.QUANTILE", "s", "0.5"], ["TDIGEST.MIN", "s"],
    ],
    "missing": [
        ["TDIGEST.ADD", "m", "1"], ["TDIGEST.RESET", "m"], ["TDIGEST.MIN", "m"],
        ["TDIGEST.MAX", "m"], ["TDIGEST.QUANTILE", "m", "0.5"], ["TDIGEST.CDF", "m", "1"],
        ["TDIGEST.RANK", "m", "1"], ["TDIGEST.REVRANK", "m", "1"], ["TDIGEST.BYRANK", "m", "1"],
        ["TDIGEST.BYREVRANK", "m", "1"], ["TDIGEST.TRIMMED_MEAN", "m", "0.1", "0.9"],
        ["TDIGEST.INFO", "m"], ["TDIGEST.ADD", "m"], ["TDIGEST.QUANTILE", "m"],
        ["TDIGEST.TRIMMED_MEAN", "m", "0.1"], ["TDIGEST.INFO", "m", "x"],
    ],
    "empty_and_one": [
        ["TDIGEST.CREATE", "t"]] + READS + [
        ["TDIGEST.ADD", "t", "42"]] + READS + [
        ["TDIGEST.ADD", "t", "42"]] + READS + [
        ["TDIGEST.RESET", "t"]] + READS + [
        ["TDIGEST.ADD", "t", "-7.5", "3"]] + READS,
    "arguments": [
        ["TDIGEST.CREATE", "t"], ["TDIGEST.ADD", "t", "1", "x"], ["TDIGEST.ADD", "t", "nan"],
        ["TDIGEST.ADD", "t", "inf"], ["TDIGEST.ADD", "t", "-inf"], ["TDIGEST.ADD", "t", "1e309"],
        ["TDIGEST.ADD", "t", "1.7976931348623157e308", "-1.7976931348623157e308"],
        ["TDIGEST.INFO", "t"], ["TDIGEST.QUANTILE", "t", "0.5"],
        ["TDIGEST.ADD", "t", "1", "2", "3"],
        ["TDIGEST.QUANTILE", "t", "x"], ["TDIGEST.QUANTILE", "t", "1.1"],
        ["TDIGEST.QUANTILE", "t", "-0.1"], ["TDIGEST.QUANTILE", "t", "0.5", "2"],
        ["TDIGEST.CDF", "t", "x"], ["TDIGEST.CDF", "t", "inf", "-inf"],
        ["TDIGEST.RANK", "t", "x"], ["TDIGEST.RANK", "t", "inf", "-inf"],
        ["TDIGEST.BYRANK", "t", "x"], ["TDIGEST.BYRANK", "t", "-1"],
        ["TDIGEST.BYRANK", "t", "1.5"], ["TDIGEST.BYREVRANK", "t", "1", "-1"],
        ["TDIGEST.TRIMMED_MEAN", "t", "x", "0.5"], ["TDIGEST.TRIMMED_MEAN", "t", "0.1", "x"],
        ["TDIGEST.TRIMMED_MEAN", "t", "-0.1", "0.5"], ["TDIGEST.TRIMMED_MEAN", "t", "0.1", "1.5"],
        ["TDIGEST.TRIMMED_MEAN", "t", "0.5", "0.5"], ["TDIGEST.TRIMMED_MEAN", "t", "0.6", "0.5"],
        ["TDIGEST.RESET", "t", "x"], ["TDIGEST.MIN", "t", "x"],
    ],
    "uniform_read_often": _stream("uniform", 100, 1, 60, 50, 3),
    "exponential_read_rarely": _stream("exponential", 100, 2, 40, 250, 13),
    "ties": _stream("ties", 20, 3, 30, 100, 4),
    "sorted": _stream("sorted", 50, 4, 20, 150, 0),
    "small_compression": _stream("exponential", 5, 5, 20, 60, 2),
    "large_compression": _stream("uniform", 1000, 6, 10, 500, 4),
    "merge": [
        ["TDIGEST.CREATE", "a", "COMPRESSION", "40"],
        ["TDIGEST.ADD", "a"] + _values(7, 700, "exponential"),
        ["TDIGEST.CREATE", "b", "COMPRESSION", "200"],
        ["TDIGEST.ADD", "b"] + _values(8, 900, "uniform"),
        ["TDIGEST.CREATE", "c"], ["TDIGEST.ADD", "c"] + _values(9, 400, "ties"),
        ["TDIGEST.MERGE", "d", "2", "a", "b"], ["TDIGEST.INFO", "d"],
        ["TDIGEST.QUANTILE", "d", "0.01", "0.5", "0.99"], ["TDIGEST.INFO", "a"],
        ["TDIGEST.MERGE", "d", "1", "c"], ["TDIGEST.INFO", "d"],
        ["TDIGEST.QUANTILE", "d", "0.01", "0.5", "0.99"],
        ["TDIGEST.MERGE", "d", "1", "c", "OVERRIDE"], ["TDIGEST.INFO", "d"],
        ["TDIGEST.MERGE", "d", "2", "a", "c", "COMPRESSION", "30", "OVERRIDE"],
        ["TDIGEST.INFO", "d"], ["TDIGEST.CDF", "d", "1", "5", "20"],
        ["TDIGEST.MERGE", "d", "2", "d", "b", "COMPRESSION", "77"], ["TDIGEST.INFO", "d"],
        ["TDIGEST.BYRANK", "d", "1", "500", "3000"],
        ["TDIGEST.MERGE", "d", "1", "d"], ["TDIGEST.INFO", "d"],
        ["TDIGEST.MERGE", "e", "3", "a", "a", "a"], ["TDIGEST.INFO", "e"],
        ["TDIGEST.RANK", "e", "1", "10", "50"],
        ["TDIGEST.MERGE", "f", "1", "f"], ["TDIGEST.MERGE", "f", "1", "nosuch"],
        ["TDIGEST.MERGE", "f", "x", "a"], ["TDIGEST.MERGE", "f", "0", "a"],
        ["TDIGEST.MERGE", "f", "-1", "a"], ["TDIGEST.MERGE", "f", "3", "a", "b"],
        ["TDIGEST.MERGE", "f", "1", "a", "b"], ["TDIGEST.MERGE", "f", "1", "a", "COMPRESSION"],
        ["TDIGEST.MERGE", "f", "1", "a", "COMPRESSION", "x"],
        ["TDIGEST.MERGE", "f", "1", "a", "COMPRESSION", "0"],
        ["TDIGEST.MERGE", "f", "1", "a", "OVERRIDE", "junk"], ["TDIGEST.INFO", "f"],
        ["TDIGEST.MERGE", "g", "1", "a", "override", "compression", "9"], ["TDIGEST.INFO", "g"],
        ["SET", "s", "v"], ["TDIGEST.MERGE", "s", "1", "a"], ["TDIGEST.MERGE", "h", "1", "s"],
        ["TDIGEST.MERGE", "h"], ["TDIGEST.MERGE", "h", "1"],
    ],
}


def _no_memory_usage(command, reply):
    """INFO's "Memory usage" differs by design: left out of the comparison."""
    kind, value = reply
    if command[0].upper() != "TDIGEST.INFO" or kind not in ("array", "map"):
        return reply
    if kind == "map":
        return [kind, [[k, v] for k, v in value if k[1] != "Memory usage"]]
    pairs = [value[i:i + 2] for i in range(0, len(value), 2)]
    return [kind, [e for k, v in pairs if k[1] != "Memory usage" for e in (k, v)]]


def test_answers_as_redisbloom(server):
    assert_same(FIXTURE, SESSIONS, server.port, _no_memory_usage)


if __name__ == "__main__":
    # Recording: python3 test_module_td_redisbloom.py PORT > td_replies.json
    record(SESSIONS)
