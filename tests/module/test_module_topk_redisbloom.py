# SPDX-License-Identifier: BSD-3-Clause
"""TOPK.* answers exactly as RedisBloom 2.6.28 answers, in RESP2 and RESP3.

SESSIONS below are command sequences, each run on an empty keyspace; the
fixture tests/fixtures/redisbloom-2.6.28/topk_replies.json holds what
RedisBloom 2.6.28 replied to each, on each protocol, with the wire type of
every reply. This file, run as a script against a server with RedisBloom
loaded, wrote it (the fixture's README says how); the test sends the same
sequences to sketch.so and asks for the same replies.

The sessions keep to what RedisBloom decides without its rand(): sketches
wide enough that no two items meet in a bucket (where they meet, its decays
come from the C library's generator, and two RedisBloom servers differ;
test_topk_redisbloom.c compares recall there). Left out, as deliberate
differences (docs/redis-module.md): a bad increment after good ones in
TOPK.INCRBY (RedisBloom adds the good ones, then ends its reply short of
the length it announced), items with a NUL byte (RedisBloom replies them cut
at the NUL), k past 2^24, COMMAND INFO's flags of TOPK.COUNT (write in
RedisBloom), and sketch's own TOPK.EXPORT and TOPK.IMPORT.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from resp_record import assert_same, record  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures",
                       "redisbloom-2.6.28", "topk_replies.json")


def _stream(n_items, rounds):
    """Items i0.. with item j seen rounds - j times, interleaved."""
    out = []
    for r in range(rounds):
        out += ["i%d" % ((j * 5 + r) % (rounds - r)) for j in range(rounds - r) if j < n_items]
    return out


SESSIONS = {
    "reserve": [
        ["TOPK.RESERVE"], ["TOPK.RESERVE", "k"], ["TOPK.RESERVE", "k", "3", "8"],
        ["TOPK.RESERVE", "k", "3", "8", "7"], ["TOPK.RESERVE", "k", "3", "8", "7", "0.9", "x"],
        ["TOPK.RESERVE", "k", "0"], ["TOPK.RESERVE", "k", "-1"], ["TOPK.RESERVE", "k", "x"],
        ["TOPK.RESERVE", "k", "4294967296"], ["TOPK.RESERVE", "k", "1.5"],
        ["TOPK.RESERVE", "k", "3", "0", "7", "0.9"], ["TOPK.RESERVE", "k", "3", "x", "7", "0.9"],
        ["TOPK.RESERVE", "k", "3", "8", "0", "0.9"], ["TOPK.RESERVE", "k", "3", "8", "-7", "0.9"],
        ["TOPK.RESERVE", "k", "3", "8", "7", "0"], ["TOPK.RESERVE", "k", "3", "8", "7", "1.01"],
        ["TOPK.RESERVE", "k", "3", "8", "7", "x"], ["TOPK.RESERVE", "k", "3", "8", "7", "-0.5"],
        ["TOPK.RESERVE", "k", "3"], ["TOPK.INFO", "k"], ["TOPK.RESERVE", "k", "3"],
        ["TOPK.RESERVE", "k2", "5", "100", "4", "1"], ["TOPK.INFO", "k2"],
        ["TOPK.RESERVE", "k3", "7", "50", "3", "0.5"], ["TOPK.INFO", "k3"],
        ["SET", "s", "v"], ["TOPK.RESERVE", "s", "3"],
        ["TOPK.INFO"], ["TOPK.INFO", "k", "x"], ["TOPK.INFO", "missing"], ["TOPK.INFO", "s"],
        ["TOPK.LIST", "k"], ["TOPK.LIST", "k", "WITHCOUNT"], ["TOPK.QUERY", "k", "a"],
        ["TOPK.COUNT", "k", "a"],
    ],
    "add": [
        ["TOPK.RESERVE", "t", "3", "100000", "4", "0.9"],
        ["TOPK.ADD"], ["TOPK.ADD", "t"], ["TOPK.ADD", "missing", "a"],
        ["SET", "s", "v"], ["TOPK.ADD", "s", "a"],
        ["TOPK.ADD", "t", "a", "b", "c", "d", "a", "e", "b", "a"],
        ["TOPK.LIST", "t"], ["TOPK.LIST", "t", "WITHCOUNT"], ["TOPK.LIST", "t", "withcount"],
        ["TOPK.LIST", "t", "WITH"], ["TOPK.LIST", "t", "WITHCOUNTS"], ["TOPK.LIST", "t", "x"],
        ["TOPK.LIST", "t", "WITHCOUNT", "x"], ["TOPK.LIST"], ["TOPK.LIST", "missing"],
        ["TOPK.LIST", "s"], ["TOPK.LIST", "missing", "x"],
        ["TOPK.QUERY", "t", "a", "b", "c", "d", "e", "z"],
        ["TOPK.COUNT", "t", "a", "b", "c", "d", "e", "z"],
        ["TOPK.QUERY", "t"], ["TOPK.QUERY", "missing", "a"], ["TOPK.QUERY", "s", "a"],
        ["TOPK.COUNT", "t"], ["TOPK.COUNT", "missing", "a"], ["TOPK.COUNT", "s", "a"],
        ["TOPK.ADD", "t", "", "\u00e9t\u00e9", "x" * 300],
        ["TOPK.ADD", "t", "", ""], ["TOPK.LIST", "t", "WITHCOUNT"],
    ],
    "incrby": [
        ["TOPK.RESERVE", "t", "4", "100000", "5", "0.9"],
        ["TOPK.INCRBY"], ["TOPK.INCRBY", "t"], ["TOPK.INCRBY", "t", "a"],
        ["TOPK.INCRBY", "t", "a", "1", "b"], ["TOPK.INCRBY", "missing", "a", "1"],
        ["TOPK.INCRBY", "t", "a", "5", "b", "3", "c", "100000", "d", "0"],
        ["TOPK.INCRBY", "t", "a", "x"], ["TOPK.INCRBY", "t", "a", "-1"],
        ["TOPK.INCRBY", "t", "a", "100001"], ["TOPK.INCRBY", "t", "a", "1.5"],
        ["TOPK.INCRBY", "t", "a", "1e3"],
        ["TOPK.LIST", "t", "WITHCOUNT"],
        ["TOPK.INCRBY", "t", "e", "2", "f", "7", "g", "1"],
        ["TOPK.LIST", "t", "WITHCOUNT"], ["TOPK.COUNT", "t", "a", "b", "c", "d", "e", "f", "g"],
        ["TOPK.QUERY", "t", "a", "b", "c", "d", "e", "f", "g"],
        ["TOPK.INCRBY", "t", "z", "0"], ["TOPK.QUERY", "t", "z"], ["TOPK.LIST", "t"],
    ],
    "zero": [
        # an item whose estimate is 0 enters an empty heap, unlisted but "in the top"
        ["TOPK.RESERVE", "t", "2", "100000", "4", "0.9"],
        ["TOPK.INCRBY", "t", "a", "0"], ["TOPK.QUERY", "t", "a"], ["TOPK.COUNT", "t", "a"],
        ["TOPK.LIST", "t", "WITHCOUNT"], ["TOPK.ADD", "t", "b", "c"],
        ["TOPK.LIST", "t", "WITHCOUNT"], ["TOPK.QUERY", "t", "a", "b", "c"],
    ],
    "stream": [
        ["TOPK.RESERVE", "s", "10", "200000", "4", "0.9"],
        ["TOPK.ADD", "s"] + _stream(60, 60),
        ["TOPK.LIST", "s", "WITHCOUNT"],
        ["TOPK.QUERY", "s"] + ["i%d" % i for i in range(65)],
        ["TOPK.COUNT", "s"] + ["i%d" % i for i in range(65)],
        ["TOPK.INCRBY", "s", "i40", "99", "i59", "30", "i3", "12"],
        ["TOPK.LIST", "s", "WITHCOUNT"],
        ["TOPK.RESERVE", "ties", "5", "200000", "4", "0.9"],
        ["TOPK.ADD", "ties"] + ["t%d" % i for i in range(12)] + ["t9", "t2", "t11", "t9"],
        ["TOPK.LIST", "ties", "WITHCOUNT"],
    ],
}


def test_answers_as_redisbloom(server):
    assert_same(FIXTURE, SESSIONS, server.port)


if __name__ == "__main__":
    # Recording: python3 test_module_topk_redisbloom.py PORT > topk_replies.json
    record(SESSIONS)
