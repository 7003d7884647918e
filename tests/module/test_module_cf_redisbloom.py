# SPDX-License-Identifier: BSD-3-Clause
"""CF.* answers exactly as RedisBloom 2.6.28 answers, in RESP2 and RESP3.

SESSIONS below are command sequences, each run on an empty keyspace. The
fixture tests/fixtures/redisbloom-2.6.28/cf_replies.json holds what
RedisBloom 2.6.28 replied to every one of them, on each protocol, with the
wire type of every reply (tests/common/resp.py): this file, run as a script
against a server with RedisBloom loaded, wrote it (the fixture's README says
how). The test sends the same sequences to sketch.so and asks for the same
replies, error texts and types included. A Cuckoo filter has no randomness:
where items go, which inserts fail, the false positives, when sub-filters are
added and what compaction moves, and the bytes of CF.SCANDUMP are all
recorded and compared.

The sessions check CF.RESERVE's arguments and their order of checks, the
capacity's rounding; CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX (creation,
NOCREATE, CAPACITY, duplicates, odd items, full filters of bucket sizes 1, 2
and 4, growth by expansions 1 to 32768, "Maximum expansions reached");
CF.EXISTS, CF.MEXISTS and CF.COUNT (a missing key and a key of another type
answer 0); CF.DEL and the automatic compaction it starts, CF.COMPACT, CF.INFO,
CF.DEBUG; CF.SCANDUMP's whole iterations and CF.LOADCHUNK's checks and whole
restores of two dumps of RedisBloom's, written below as literals.

Left out, as deliberate differences (docs/redis-module.md): COMMAND INFO's
flags (CF.COMPACT is "readonly" in RedisBloom); CF.RESERVE with an option
name as its last argument (RedisBloom reads the value past argv) and option
names used as the key name or the capacity (RedisBloom finds them anywhere in
argv); capacities or expansions whose allocation fails in RedisBloom (it
aborts or answers "Memory allocation failure"); CF.LOADCHUNK's chunks out of
order, again after a restore or into a filter made otherwise, and any command
on a key between its header and its last chunk (sketch refuses queries while
a restore is unfinished); CF.SCANDUMP iterators that RedisBloom never
returned (past the end, or in the middle of a sub-filter).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from resp_record import assert_same, record  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures",
                       "redisbloom-2.6.28", "cf_replies.json")


def _items(prefix, n, start=0):
    return ["%s%d" % (prefix, i) for i in range(start, start + n)]


def _scandump(key, chunk_sizes):
    """A whole CF.SCANDUMP iteration of a filter whose sub-filters hold
    chunk_sizes bytes (buckets x bucket size) each: iterator 0 (the header),
    1, then the iterator after each sub-filter, the last answering [0, nil]
    (RedisBloom's chunks are whole sub-filters up to 16 MB)."""
    its = [0, 1]
    for size in chunk_sizes:
        its.append(its[-1] + size)
    return [["CF.SCANDUMP", key, str(i)] for i in its]


def _ascii(chunk):
    """A chunk of a dump, written as text: resp.py sends text as UTF-8 and the
    fixture must hold the sessions as JSON, so a chunk given as text is sent
    as the same bytes only if every byte is below 0x80. The two dumps below
    are of filters whose items were chosen so (fingerprints below 0x80)."""
    assert all(ord(ch) < 0x80 for ch in chunk), "a chunk's byte would go out as UTF-8"
    return chunk


# RedisBloom 2.6.28's CF.SCANDUMP of the filter that these commands make (the
# session "loadchunk" makes it again and records the dump, and
# test_dumps_are_redisbloom_s checks these literals against that record):
DUMP_D_SOURCE = [["CF.RESERVE", "d", "16"]] + [["CF.ADD", "d", x] for x in "bdghmb"] + \
    [["CF.DEL", "d", "m"]]
# (iterator, chunk): the 38-byte header (5 items, 8 buckets, 1 deleted, 1 filter,
# bucket size 2, 20 iterations, expansion 1) and the 16 bytes of buckets.
DUMP_D = [
    (1, _ascii("\x05\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00"
               "\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
               "\x02\x00\x14\x00\x01\x00")),
    (17, _ascii("\x4b\x00\x06\x00\x00\x00\x1c\x00\x00\x00\x00\x00\x00\x00\x10\x10")),
]
# And of this one, three sub-filters of 4, 8 and 16 buckets of one slot:
DUMP_E_SOURCE = [["CF.RESERVE", "e", "4", "BUCKETSIZE", "1", "EXPANSION", "2",
                  "MAXITERATIONS", "5"],
                 ["CF.INSERT", "e", "ITEMS"] + list("nqrstwxyzCDE")]
DUMP_E = [
    (1, _ascii("\x0c\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00"
               "\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00"
               "\x01\x00\x05\x00\x02\x00")),
    (5, _ascii("\x71\x7d\x00\x1d")),
    (13, _ascii("\x56\x70\x0f\x00\x6a\x1d\x25\x23")),
    (29, _ascii("\x00\x00\x02\x00\x00\x00\x00\x00\x74\x00\x00\x00\x00\x00\x00\x00")),
]
HEADER_D = DUMP_D[0][1]
ZERO_HEADER = "\x00" * 38


def _loadchunks(key, dump):
    return [["CF.LOADCHUNK", key, str(i), chunk] for i, chunk in dump]


def _deletes(key, items):
    return [["CF.DEL", key, x] for x in items]


SESSIONS = {
    "reserve": [
        ["CF.RESERVE"], ["CF.RESERVE", "k"], ["CF.RESERVE", "k", "100", "BUCKETSIZE"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "2", "EXPANSION"],
        ["CF.RESERVE", "k", "x"], ["CF.RESERVE", "k", "1.5"], ["CF.RESERVE", "k", "+100"],
        ["CF.RESERVE", "k", "-1"], ["CF.RESERVE", "k", "0"], ["CF.RESERVE", "k", "3"],
        ["CF.RESERVE", "k", "7", "BUCKETSIZE", "4"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "51"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "0"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "256"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "-1"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "x"],
        ["CF.RESERVE", "k", "100", "MAXITERATIONS", "0"],
        ["CF.RESERVE", "k", "100", "MAXITERATIONS", "65536"],
        ["CF.RESERVE", "k", "100", "MAXITERATIONS", "x"],
        ["CF.RESERVE", "k", "100", "EXPANSION", "-1"],
        ["CF.RESERVE", "k", "100", "EXPANSION", "32769"],
        ["CF.RESERVE", "k", "100", "EXPANSION", "x"],
        ["CF.RESERVE", "k", "100", "EXPANSION", "1.5"],
        # the order of the checks
        ["CF.RESERVE", "k", "x", "BUCKETSIZE", "0"],
        ["CF.RESERVE", "k", "100", "BUCKETSIZE", "0", "MAXITERATIONS", "0"],
        ["CF.RESERVE", "k", "100", "EXPANSION", "x", "BUCKETSIZE", "0"],
        ["CF.RESERVE", "k", "3", "EXPANSION", "x"],
        ["EXISTS", "k"],
        ["CF.RESERVE", "k", "1000", "BUCKETSIZE", "3"], ["CF.INFO", "k"],
        ["CF.RESERVE", "k", "1000"], ["CF.RESERVE", "k", "1000", "BUCKETSIZE", "0"],
        ["SET", "s", "v"], ["CF.RESERVE", "s", "100"], ["CF.RESERVE", "s", "1"],
        ["CF.RESERVE", "a", "3", "BUCKETSIZE", "1"], ["CF.INFO", "a"],
        ["CF.RESERVE", "b", "4"], ["CF.INFO", "b"],
        ["cf.reserve", "c", "510", "bucketsize", "255", "maxiterations", "65535",
         "expansion", "32768"], ["CF.INFO", "c"],
        ["CF.RESERVE", "e", "100", "Expansion", "0", "MaxIterations", "1", "BucketSize", "1"],
        ["CF.INFO", "e"],
        ["CF.RESERVE", "f", "100", "EXPANSION", "3"], ["CF.DEBUG", "f"],
        ["CF.RESERVE", "f32767", "100", "EXPANSION", "32767"], ["CF.DEBUG", "f32767"],
        ["CF.RESERVE", "h", "1000000"], ["CF.INFO", "h"],
        ["CF.RESERVE", "w", "1023"], ["CF.DEBUG", "w"],
        ["CF.RESERVE", "x", "1025", "BUCKETSIZE", "4"], ["CF.DEBUG", "x"],
        # unknown pairs are ignored, the first of a repeated option counts
        ["CF.RESERVE", "u", "100", "FOO", "1"], ["CF.DEBUG", "u"],
        ["CF.RESERVE", "v", "100", "BUCKETSIZE", "4", "BUCKETSIZE", "1"], ["CF.DEBUG", "v"],
        ["CF.EXISTS", "k", "a"], ["CF.SCANDUMP", "k", "0"],
    ],
    "add": [
        ["CF.ADD"], ["CF.ADD", "k"], ["CF.ADD", "k", "a", "b"], ["CF.ADDNX", "k"],
        ["CF.ADDNX", "k", "a", "b"], ["EXISTS", "k"],
        ["CF.ADD", "k", "a"], ["CF.INFO", "k"],
        ["CF.ADD", "k", "a"], ["CF.COUNT", "k", "a"], ["CF.ADDNX", "k", "a"],
        ["CF.COUNT", "k", "a"], ["CF.ADDNX", "k", "b"], ["cf.addnx", "k", "b"],
        ["CF.ADDNX", "n", "a"], ["CF.DEBUG", "n"],
        ["cf.add", "k", ""], ["CF.ADD", "k", "\x00\x01\x02"],
        ["CF.ADD", "k", "\u00e9t\u00e9 \u2603"], ["CF.ADD", "k", "x" * 1000],
        ["CF.MEXISTS", "k", "", "\x00\x01\x02", "\x00\x01", "\u00e9t\u00e9 \u2603",
         "x" * 1000, "x" * 999, "b", "c"],
        ["CF.COUNT", "k", ""], ["CF.COUNT", "k", "x" * 1000],
        ["SET", "s", "v"], ["CF.ADD", "s", "a"], ["CF.ADDNX", "s", "a"],
        ["CF.INFO", "k"],
    ],
    "insert": [
        ["CF.INSERT"], ["CF.INSERT", "k"], ["CF.INSERT", "k", "ITEMS"],
        ["CF.INSERT", "k", "CAPACITY", "100"], ["CF.INSERT", "k", "NOCREATE", "ITEMS"],
        ["CF.INSERT", "k", "CAPACITY", "100", "NOCREATE"],
        ["CF.INSERTNX", "k", "NOCREATE", "CAPACITY"],
        ["CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a"],
        ["CF.INSERT", "k", "CAPACITY", "1.5", "ITEMS", "a"],
        ["CF.INSERT", "k", "CAPACITY", "3", "ITEMS", "a"],
        ["CF.INSERT", "k", "CAPACITY", "-1", "ITEMS", "a"],
        ["CF.INSERT", "k", "FOO", "ITEMS", "a"], ["CF.INSERT", "k", "", "ITEMS", "a"],
        ["CF.INSERT", "k", "NOCREATE", "ITEMS", "a"],
        ["CF.INSERTNX", "k", "nocreate", "ITEMS", "a"],
        ["CF.INSERT", "k", "NOCREATE", "CAPACITY", "100", "ITEMS", "a"],
        ["EXISTS", "k"],
        ["CF.INSERT", "k", "CAPACITY", "4", "ITEMS", "a", "b", "c", "a"], ["CF.INFO", "k"],
        ["CF.INSERT", "k", "capacity", "1000", "items", "d", "e"],
        ["CF.INSERT", "k", "NOCREATE", "ITEMS", "f"],
        ["CF.INSERT", "k", "CAPACITY", "100", "CAPACITY", "200", "NOCREATE", "ITEMS", "g"],
        ["CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "h"],
        ["CF.INSERT", "k", "ITEMS", "", "\x00", "\u00e9", "y" * 500],
        ["CF.MEXISTS", "k", "a", "b", "c", "d", "e", "f", "g", "", "\x00", "\u00e9",
         "y" * 500, "z"],
        ["CF.COUNT", "k", "a"], ["CF.INFO", "k"],
        ["CF.INSERT", "k2", "ITEMS", "a", "CAPACITY", "5"], ["CF.DEBUG", "k2"],
        ["CF.INSERTNX", "k2", "ITEMS", "a", "b", "b", "CAPACITY"],
        ["cf.insertnx", "k3", "CAPACITY", "100", "ITEMS", "x", "y", "x"], ["CF.DEBUG", "k3"],
        ["SET", "s", "v"], ["CF.INSERT", "s", "ITEMS", "a"], ["CF.INSERTNX", "s", "ITEMS", "a"],
        ["CF.INSERT", "s", "NOCREATE", "ITEMS", "a"],
        ["CF.INSERT", "s", "CAPACITY", "x", "ITEMS", "a"],
    ],
    "insert_option_letters": [
        # RedisBloom reads only the first letter of CF.INSERT's options
        ["CF.INSERT", "p", "CAPX", "8", "ITEMS", "a"], ["CF.DEBUG", "p"],
        ["CF.INSERT", "p", "nope", "ITEMS", "b"], ["CF.INSERT", "q", "nope", "ITEMS", "b"],
        ["CF.INSERT", "p", "i", "c"], ["CF.INSERTNX", "p", "Inventory", "d", "a"],
        ["CF.MEXISTS", "p", "a", "b", "c", "d", "nope", "Inventory"],
    ],
    "exists": [
        ["CF.EXISTS"], ["CF.EXISTS", "k", "a", "b"], ["CF.MEXISTS", "k"], ["CF.COUNT", "k"],
        ["CF.COUNT", "k", "a", "b"],
        ["CF.EXISTS", "missing", "a"], ["CF.MEXISTS", "missing", "a", "b"],
        ["CF.COUNT", "missing", "a"],
        ["SET", "s", "v"], ["CF.EXISTS", "s", "a"], ["CF.MEXISTS", "s", "a", "b"],
        ["CF.COUNT", "s", "a"],
        ["CF.INSERT", "k", "ITEMS", "a", "b", "a", "a"],
        ["CF.EXISTS", "k", "a"], ["CF.EXISTS", "k", "z"], ["CF.MEXISTS", "k", "a", "b", "z"],
        ["CF.COUNT", "k", "a"], ["CF.COUNT", "k", "b"], ["cf.count", "k", "z"],
        ["cf.mexists", "k", "a"],
    ],
    "del": [
        ["CF.DEL"], ["CF.DEL", "k"], ["CF.DEL", "k", "a", "b"], ["CF.DEL", "missing", "a"],
        ["SET", "s", "v"], ["CF.DEL", "s", "a"],
        ["CF.INSERT", "k", "ITEMS", "a", "b", "b", "c"],
        ["CF.DEL", "k", "b"], ["CF.COUNT", "k", "b"], ["CF.EXISTS", "k", "b"],
        ["CF.DEL", "k", "b"], ["CF.COUNT", "k", "b"], ["CF.DEL", "k", "b"],
        ["CF.DEL", "k", "z"], ["CF.INFO", "k"],
        # a filter with no items dumps as nothing
        ["CF.DEL", "k", "a"], ["cf.del", "k", "c"], ["CF.DEBUG", "k"],
        ["CF.SCANDUMP", "k", "0"], ["EXISTS", "k"], ["CF.ADD", "k", "a"], ["CF.DEBUG", "k"],
    ],
    "full": [
        ["CF.RESERVE", "f1", "100", "BUCKETSIZE", "1", "EXPANSION", "0"],
        ["CF.RESERVE", "f2", "100", "EXPANSION", "0"],
        ["CF.RESERVE", "f4", "100", "BUCKETSIZE", "4", "EXPANSION", "0", "MAXITERATIONS", "2"],
    ] + [c for f in ("f1", "f2", "f4") for c in [
        ["CF.INSERT", f, "ITEMS"] + _items("i", 200),
        ["CF.ADD", f, "j0"], ["CF.ADDNX", f, "i0"],
        ["CF.INSERTNX", f, "ITEMS", "i0", "j1"], ["CF.INSERT", f, "ITEMS", "j2", "i1"],
        ["CF.INFO", f],
        ["CF.MEXISTS", f] + _items("i", 200) + _items("j", 3) + _items("z", 100),
    ]] + [["CF.ADDNX", "f2", "j3"], ["CF.COUNT", "f2", "i0"], ["CF.COUNT", "f2", "i199"]],
    "growth": [
        ["CF.RESERVE", "g1", "64", "EXPANSION", "1", "MAXITERATIONS", "5"],
        ["CF.RESERVE", "g2", "64", "EXPANSION", "2", "MAXITERATIONS", "500"],
        ["CF.RESERVE", "g3", "64", "EXPANSION", "3", "BUCKETSIZE", "4"],
        ["CF.RESERVE", "g4", "64", "EXPANSION", "4", "MAXITERATIONS", "1", "BUCKETSIZE", "1"],
        ["CF.RESERVE", "gx", "4", "BUCKETSIZE", "1", "EXPANSION", "32768"],
    ] + [c for g in ("g1", "g2", "g3", "g4") for c in [
        ["CF.INSERT", g, "ITEMS"] + _items("i", 250), ["CF.INFO", g],
    ]] + [
        ["CF.INSERT", "gx", "ITEMS"] + _items("i", 12), ["CF.INFO", "gx"],
        ["CF.MEXISTS", "g1"] + _items("i", 250) + _items("z", 100),
        ["CF.MEXISTS", "g4"] + _items("i", 250) + _items("z", 100),
        ["CF.MEXISTS", "gx"] + _items("i", 12) + _items("z", 20),
        ["CF.ADD", "g1", "j0"], ["CF.ADDNX", "g2", "i5"], ["CF.COUNT", "g3", "i7"],
        ["CF.DEBUG", "g1"],
    ],
    "max_expansions": [
        # sub-filters of 4 slots; the limit of 32 is checked before each command
        ["CF.RESERVE", "m", "4", "EXPANSION", "1"],
    ] + [["CF.INSERT", "m", "ITEMS"] + _items("i", 40, 40 * b) for b in range(5)] + [
        ["CF.INFO", "m"], ["CF.ADD", "m", "x"], ["CF.ADDNX", "m", "i0"],
        ["CF.INSERTNX", "m", "ITEMS", "i0"], ["CF.INSERT", "m", "NOCREATE", "ITEMS", "x"],
        ["CF.MEXISTS", "m"] + _items("i", 200) + _items("z", 40),
        ["CF.COUNT", "m", "i3"], ["CF.DEL", "m", "i3"], ["CF.COMPACT", "m"], ["CF.INFO", "m"],
        ["CF.ADD", "m", "x"],
    ],
    "compaction": [
        # deletes from the newest items: the 7th starts a compaction that frees
        # nothing, the 13th one that frees the second sub-filter
        ["CF.RESERVE", "a", "64", "EXPANSION", "1"],
        ["CF.INSERT", "a", "ITEMS"] + _items("i", 70), ["CF.INFO", "a"],
    ] + _deletes("a", ["i%d" % i for i in range(69, 63, -1)]) + [["CF.DEBUG", "a"]] + \
        _deletes("a", ["i63"]) + [["CF.DEBUG", "a"]] + \
        _deletes("a", ["i%d" % i for i in range(62, 56, -1)]) + [
        ["CF.INFO", "a"], ["CF.MEXISTS", "a"] + _items("i", 70) + _items("z", 30),
        # 6 deletes of 66 items start no compaction; CF.COMPACT frees a sub-filter
        ["CF.RESERVE", "b", "64", "EXPANSION", "1"],
        ["CF.INSERT", "b", "ITEMS"] + _items("i", 66),
    ] + _deletes("b", ["i%d" % i for i in range(65, 59, -1)] + ["z0"]) + [
        ["CF.INFO", "b"], ["CF.COMPACT", "b"], ["CF.INFO", "b"],
        ["CF.MEXISTS", "b"] + _items("i", 66),
        ["CF.RESERVE", "one", "100"], ["CF.ADD", "one", "a"], ["CF.DEL", "one", "a"],
        ["CF.DEBUG", "one"], ["CF.COMPACT", "one"], ["CF.DEBUG", "one"],
        ["CF.COMPACT"], ["CF.COMPACT", "a", "x"], ["CF.COMPACT", "missing"],
        ["SET", "s", "v"], ["CF.COMPACT", "s"],
    ],
    "info": [
        ["CF.INFO"], ["CF.INFO", "k", "x"], ["CF.INFO", "missing"],
        ["CF.DEBUG"], ["CF.DEBUG", "k", "x"], ["CF.DEBUG", "missing"],
        ["SET", "s", "v"], ["CF.INFO", "s"], ["CF.DEBUG", "s"],
        ["CF.ADD", "k", "a"], ["cf.info", "k"], ["cf.debug", "k"],
    ],
    "scandump": [
        ["CF.SCANDUMP"], ["CF.SCANDUMP", "k"], ["CF.SCANDUMP", "k", "0", "1"],
        ["CF.SCANDUMP", "missing", "0"], ["CF.SCANDUMP", "missing", "x"],
        ["SET", "s", "v"], ["CF.SCANDUMP", "s", "0"], ["CF.SCANDUMP", "s", "-1"],
        ["CF.RESERVE", "k", "100"], ["CF.SCANDUMP", "k", "0"],
        ["CF.SCANDUMP", "k", "x"], ["CF.SCANDUMP", "k", "-1"], ["CF.SCANDUMP", "k", "1.5"],
        ["CF.INSERT", "k", "ITEMS"] + _items("i", 40),
    ] + _scandump("k", [128]) + [
        ["CF.RESERVE", "g", "64", "EXPANSION", "2"],
        ["CF.INSERT", "g", "ITEMS"] + _items("i", 200), ["CF.DEBUG", "g"],
    ] + _scandump("g", [64, 128, 256]) + [
        ["CF.RESERVE", "h", "8", "BUCKETSIZE", "4", "EXPANSION", "1"],
        ["CF.INSERT", "h", "ITEMS"] + _items("i", 30), ["CF.DEBUG", "h"],
    ] + _scandump("h", [8] * 4),
    "loadchunk": [
        ["CF.LOADCHUNK"], ["CF.LOADCHUNK", "r", "1"],
        ["CF.LOADCHUNK", "r", "1", HEADER_D, "x"],
        ["CF.LOADCHUNK", "r", "0", HEADER_D], ["CF.LOADCHUNK", "r", "x", HEADER_D],
        ["CF.LOADCHUNK", "r", "-1", DUMP_D[1][1]], ["CF.LOADCHUNK", "r", "17", DUMP_D[1][1]],
        ["CF.LOADCHUNK", "r", "1", HEADER_D[:-1]], ["CF.LOADCHUNK", "r", "1", HEADER_D + "\x00"],
        ["CF.LOADCHUNK", "r", "1", ""], ["CF.LOADCHUNK", "r", "1", ZERO_HEADER],
        ["EXISTS", "r"],
        ["SET", "s", "v"], ["CF.LOADCHUNK", "s", "1", HEADER_D],
        ["CF.LOADCHUNK", "s", "17", DUMP_D[1][1]],
        ["CF.RESERVE", "k", "100"], ["CF.LOADCHUNK", "k", "1", HEADER_D],
    ] + DUMP_D_SOURCE + [["CF.COUNT", "d", "b"]] + _scandump("d", [16]) + \
        _loadchunks("r", DUMP_D) + [
        ["CF.MEXISTS", "r", "b", "d", "g", "h", "m", "z"], ["CF.COUNT", "r", "b"],
        ["CF.INFO", "r"], ["CF.LOADCHUNK", "r", "1", HEADER_D],
        ["CF.ADD", "r", "n"], ["CF.DEL", "r", "b"], ["CF.COUNT", "r", "b"], ["CF.DEBUG", "r"],
    ] + DUMP_E_SOURCE + _scandump("e", [4, 8, 16]) + _loadchunks("r2", DUMP_E) + [
        ["CF.MEXISTS", "r2"] + list("nqrstwxyzCDE") + list("bdghimJLNOPQ"),
        ["CF.INFO", "r2"],
    ] + _scandump("r2", [4, 8, 16]) + [
        ["CF.INSERT", "r2", "ITEMS"] + _items("i", 20), ["CF.DEL", "r2", "n"],
        ["CF.INFO", "r2"],
    ],
}


def test_answers_as_redisbloom(server):
    assert_same(FIXTURE, SESSIONS, server.port)


def test_dumps_are_redisbloom_s():
    """DUMP_D and DUMP_E are what RedisBloom answered to CF.SCANDUMP of the
    filters their sources make, as the fixture recorded."""
    with open(FIXTURE) as f:
        recorded = json.load(f)
    commands = SESSIONS["loadchunk"]
    for protocol in ("2", "3"):
        replies = recorded["replies"]["loadchunk"][protocol]
        for key, dump in (("d", DUMP_D), ("e", DUMP_E)):
            got = [(r[1][0][1], r[1][1][1]) for c, r in zip(commands, replies)
                   if c[:2] == ["CF.SCANDUMP", key] and r[1][0][1] != 0]
            assert got == dump, (key, protocol)


if __name__ == "__main__":
    # Recording: python3 test_module_cf_redisbloom.py PORT > cf_replies.json
    record(SESSIONS)
