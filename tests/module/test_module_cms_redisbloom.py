# SPDX-License-Identifier: BSD-3-Clause
"""CMS.* answers exactly as RedisBloom 2.6.28 answers, in RESP2 and RESP3.

SESSIONS below are command sequences, each run on an empty keyspace. The
fixture tests/fixtures/redisbloom-2.6.28/cms_replies.json holds what
RedisBloom 2.6.28 replied to every one of them, on each protocol, with the
wire type of every reply (tests/common/resp.py): this file, run as a script
against a server with RedisBloom loaded, wrote it (the fixture's README says
how). The test sends the same sequences to sketch.so and asks for the same
replies, error texts and types included.

Left out, as deliberate differences (docs/redis-module.md): dimensions past
the module's memory limit or 2^32 counters (RedisBloom allocates whatever is
asked), MEMORY USAGE, COMMAND DOCS, and sketch's own CMS.EXPORT and
CMS.IMPORT; test_module_cms.py covers those.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from resp_record import assert_same, record  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures",
                       "redisbloom-2.6.28", "cms_replies.json")


def _bulk_items(n):
    """n items of varied lengths and bytes, with increments, for one INCRBY."""
    out = []
    for i in range(n):
        item = ("item-%d-" % i) + "x" * (i % 13)
        out += [item, str(1 + (i * 7919) % 97)]
    return out


SESSIONS = {
    "initbydim": [
        ["CMS.INITBYDIM"], ["CMS.INITBYDIM", "k"], ["CMS.INITBYDIM", "k", "10"],
        ["CMS.INITBYDIM", "k", "10", "2", "3"],
        ["CMS.INITBYDIM", "k", "0", "5"], ["CMS.INITBYDIM", "k", "-1", "5"],
        ["CMS.INITBYDIM", "k", "abc", "5"], ["CMS.INITBYDIM", "k", "10.5", "2"],
        ["CMS.INITBYDIM", "k", "10", "0"], ["CMS.INITBYDIM", "k", "10", "x"],
        ["CMS.INITBYDIM", "k", "0", "x"],
        ["CMS.INITBYDIM", "k", "10", "2"], ["CMS.INFO", "k"],
        ["CMS.INITBYDIM", "k", "10", "2"], ["CMS.INITBYDIM", "k", "0", "0"],
        ["SET", "s", "v"], ["CMS.INITBYDIM", "s", "10", "2"],
        ["cms.initbydim", "lower", "3", "1"], ["CMS.INFO", "lower"],
        ["CMS.INFO"], ["CMS.INFO", "k", "extra"], ["CMS.INFO", "missing"], ["CMS.INFO", "s"],
        ["EXISTS", "k"],
    ],
    "initbyprob": [
        ["CMS.INITBYPROB", "p"], ["CMS.INITBYPROB", "p", "0.1"],
        ["CMS.INITBYPROB", "p", "0", "0.1"], ["CMS.INITBYPROB", "p", "1", "0.1"],
        ["CMS.INITBYPROB", "p", "-0.5", "0.5"], ["CMS.INITBYPROB", "p", "abc", "0.1"],
        ["CMS.INITBYPROB", "p", "0.1", "0"], ["CMS.INITBYPROB", "p", "0.1", "1"],
        ["CMS.INITBYPROB", "p", "0.1", "xyz"], ["CMS.INITBYPROB", "p", "0", "0"],
        ["CMS.INITBYPROB", "p", "0.01", "0.01"], ["CMS.INFO", "p"],
        ["CMS.INITBYPROB", "p", "0.01", "0.01"],
        ["CMS.INITBYPROB", "p2", "0.3", "0.5"], ["CMS.INFO", "p2"],
        ["CMS.INITBYPROB", "p3", "0.0001", "0.0001"], ["CMS.INFO", "p3"],
        ["CMS.INITBYPROB", "p4", "0.001", "0.002"], ["CMS.INFO", "p4"],
        ["CMS.INITBYPROB", "p5", "1e-3", "1e-9"], ["CMS.INFO", "p5"],
        ["CMS.INITBYPROB", "p6", "0.5", "0.25"], ["CMS.INFO", "p6"],
    ],
    "incrby": [
        ["CMS.INCRBY"], ["CMS.INCRBY", "k"], ["CMS.INCRBY", "k", "a"],
        ["CMS.INCRBY", "k", "a", "1", "b"],
        ["CMS.INCRBY", "missing", "a", "1"], ["CMS.INCRBY", "missing", "a", "x"],
        ["SET", "s", "v"], ["CMS.INCRBY", "s", "a", "1"],
        ["CMS.INITBYDIM", "k", "50", "4"],
        ["CMS.INCRBY", "k", "a", "1", "b", "2", "c", "3"],
        ["CMS.INCRBY", "k", "a", "x"], ["CMS.INCRBY", "k", "a", "1.5"],
        ["CMS.INCRBY", "k", "a", "1", "b", "-1"], ["CMS.INCRBY", "k", "a", "1", "b", "y"],
        ["CMS.QUERY", "k", "a", "b"],
        ["CMS.INCRBY", "k", "a", "0"], ["CMS.INCRBY", "k", "a", "-0"],
        ["CMS.INCRBY", "k", "a", "+5"], ["CMS.INCRBY", "k", "a", " 5"],
        ["CMS.INCRBY", "k", "", "5"], ["CMS.INCRBY", "k", "\u00e9\u00e8", "4"],
        ["CMS.INCRBY", "k", "a", "1", "a", "1"],
        ["CMS.QUERY", "k", "a", "b", "c", "d", "", "\u00e9\u00e8"], ["CMS.INFO", "k"],
        ["CMS.QUERY"], ["CMS.QUERY", "k"], ["CMS.QUERY", "missing", "a"], ["CMS.QUERY", "s", "a"],
    ],
    "overflow": [
        ["CMS.INITBYDIM", "o", "10", "2"],
        ["CMS.INCRBY", "o", "x", "4294967290"], ["CMS.INCRBY", "o", "x", "10"],
        ["CMS.INCRBY", "o", "x", "5", "y", "3"], ["CMS.QUERY", "o", "x", "y", "z"],
        ["CMS.INFO", "o"],
        ["CMS.INCRBY", "o", "y", "4294967295"], ["CMS.INCRBY", "o", "z", "4294967296"],
        ["CMS.INCRBY", "o", "w", "9223372036854775807"],
        ["CMS.INCRBY", "o", "w", "9223372036854775808"],
        ["CMS.QUERY", "o", "x", "y", "z", "w"],
    ],
    "merge": [
        ["CMS.INITBYDIM", "a", "20", "3"], ["CMS.INITBYDIM", "b", "20", "3"],
        ["CMS.INITBYDIM", "c", "20", "3"], ["CMS.INITBYDIM", "d", "10", "3"],
        ["CMS.INITBYDIM", "e", "20", "2"], ["SET", "s", "v"],
        ["CMS.INCRBY", "a", "x", "5", "y", "1"], ["CMS.INCRBY", "b", "x", "2", "z", "7"],
        ["CMS.MERGE", "c", "2", "a", "b"], ["CMS.QUERY", "c", "x", "y", "z"], ["CMS.INFO", "c"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "3", "-1"],
        ["CMS.QUERY", "c", "x", "y", "z"], ["CMS.INFO", "c"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "-1", "1"],
        ["CMS.QUERY", "c", "x", "y", "z"], ["CMS.INFO", "c"],
        ["CMS.MERGE", "c", "1", "a", "weights", "2"], ["CMS.QUERY", "c", "x", "y"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "4294967296", "0"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "9223372036854775807", "1"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "0", "0"], ["CMS.INFO", "c"],
        ["CMS.MERGE", "c"], ["CMS.MERGE", "c", "1"],
        ["CMS.MERGE", "c", "1", "a", "b"], ["CMS.MERGE", "c", "3", "a", "b"],
        ["CMS.MERGE", "c", "0", "a"], ["CMS.MERGE", "c", "-1", "a"],
        ["CMS.MERGE", "c", "x", "a"], ["CMS.MERGE", "c", "1.0", "a"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "1"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "1", "2", "3"],
        ["CMS.MERGE", "c", "1", "a", "b", "WEIGHTS", "1"],
        ["CMS.MERGE", "c", "1", "a", "WEIGHTS"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "1", "x"],
        ["CMS.MERGE", "c", "2", "a", "b", "WEIGHTS", "1.5", "1"],
        ["CMS.MERGE", "c", "2", "missing", "b", "WEIGHTS", "x", "1"],
        ["CMS.MERGE", "c", "2", "a", "missing"], ["CMS.MERGE", "c", "2", "a", "d"],
        ["CMS.MERGE", "c", "2", "a", "e"], ["CMS.MERGE", "c", "2", "a", "s"],
        ["CMS.MERGE", "missing", "1", "a"], ["CMS.MERGE", "s", "1", "a"],
        ["CMS.MERGE", "missing", "x", "a"],
        ["CMS.MERGE", "a", "2", "a", "a"], ["CMS.QUERY", "a", "x", "y"], ["CMS.INFO", "a"],
        ["CMS.MERGE", "a", "1", "b", "WEIGHTS", "1"], ["CMS.QUERY", "a", "x", "y", "z"],
        ["CMS.INFO", "a"],
        ["CMS.MERGE", "c", "3", "a", "b", "a", "WEIGHTS", "1", "1", "-1"],
        ["CMS.QUERY", "c", "x", "y", "z"], ["CMS.INFO", "c"],
    ],
    "many": [
        ["CMS.INITBYDIM", "m", "100", "5"],
        ["CMS.INCRBY", "m"] + _bulk_items(400),
        ["CMS.QUERY", "m"] + _bulk_items(450)[0::2] + ["absent-%d" % i for i in range(50)],
        ["CMS.INFO", "m"],
        ["CMS.INITBYPROB", "n", "0.05", "0.01"], ["CMS.INFO", "n"],
        ["CMS.MERGE", "n", "1", "m"],
        ["CMS.INITBYDIM", "n2", "40", "7"], ["CMS.MERGE", "n2", "1", "n"],
        ["CMS.INCRBY", "n2"] + _bulk_items(60),
        ["CMS.QUERY", "n2"] + _bulk_items(120)[0::2], ["CMS.INFO", "n2"],
    ],
}


def test_answers_as_redisbloom(server):
    assert_same(FIXTURE, SESSIONS, server.port)


if __name__ == "__main__":
    # Recording: python3 test_module_cms_redisbloom.py PORT > cms_replies.json
    record(SESSIONS)
