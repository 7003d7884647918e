# SPDX-License-Identifier: BSD-3-Clause
"""sketch.so takes over RedisBloom 2.6.28's data and answers as RedisBloom did.

The fixtures (tests/fixtures/redisbloom-2.6.28/migration/, whose README says
how they were made with the real RedisBloom, none of whose code is here):

  redisbloom-2.6.28.rdb  RedisBloom's SAVE of keys of its five types
                         (MBbloom--, MBbloomCF, CMSk-TYPE, TopK-TYPE,
                         TDIS-TYPE), in every shape it writes: fixed and
                         scaling Bloom filters of several links, cuckoo
                         filters of bucket sizes 1, 2 and 4 and several
                         sub-filters with deletions, count-min sketches made
                         by dimensions, by probabilities and by CMS.MERGE,
                         top-k sketches whose counters decayed, t-digests
                         compressed, left with values in their buffer before
                         the save, empty, and of huge and tiny values;
  dumps.json             RedisBloom's DUMP of every key, with its type;
  chunks.json            RedisBloom's BF.SCANDUMP / CF.SCANDUMP chunks;
  answers.json           RedisBloom's replies, on RESP2 and on RESP3 with the
                         wire type of each, to READS (per key: TYPE and every
                         read command of its family) on the loaded keys, and
                         to WRITES (per key: writes, then reads) each run on
                         a freshly loaded keyspace.

This file, run as a script against a RedisBloom server whose RDB file is the
fixture (python3 test_module_migration.py PORT > answers.json; the fixture's
make_fixtures.py does so), wrote answers.json: the sessions are built from
the fixture's key list, chunks and dumps, and the reset between the RESP2
and the RESP3 run of the writes is DEBUG RELOAD NOSAVE. The sessions, their
running and comparison (what is left out as a difference by design, and
how the top-k writes avoid RedisBloom's rand()) and the recording's helpers
are tests/module/migration_fixture.py's.

The tests give sketch.so the same data four ways and ask for the same
replies: the RDB loaded at start; the RDB saved again by sketch.so, loaded by
a restart and by DEBUG RELOAD; every DUMP payload by RESTORE into an empty
server; the Bloom and cuckoo keys by BF.LOADCHUNK / CF.LOADCHUNK of the
chunks. Corrupt payloads of each type, with a valid CRC64, are refused, with
a line in the log, and the server stays up.

tests/module/redisbloom_roundtrip.py is the way back: sketch.so's RDB,
DUMPs and chunks loaded into RedisBloom, answering the same.
"""
import binascii
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pytest.register_assert_rewrite("migration_fixture")  # its asserts report as a test module's
from migration_fixture import (TYPES, all_keys, answers, build_module_value,  # noqa: E402
                               check, check_topk_model, debug_reload, fixture,
                               loadchunk_all, parse_module_value, restore_all, run, sessions,
                               resp3_compacted, start_on_fixture, write_answers)


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------

def test_fixture_is_whole():
    sess, recorded = answers()
    keys = all_keys()
    assert sorted({e["type"] for e in fixture("dumps.json")["keys"]}) == sorted(TYPES.values())
    for phase in ("reads", "writes"):
        assert list(recorded[phase]) == keys
    # the top-k writes are there, and some of them grow a sketch
    assert sum(cmd[0].startswith("TOPK.ADD") or cmd[0] == "TOPK.INCRBY"
               for k in keys for cmd in sess["writes"][k]) >= 10


def test_rdb_of_redisbloom_loads(servers):
    s = start_on_fixture(servers)
    assert "DB loaded from disk" in s.log()
    c = s.client()
    assert c.dbsize() == len(all_keys())
    check(s.port, all_keys(), debug_reload(s.port), reset_first=False)


def test_rdb_saved_by_sketch_restart(servers):
    s = start_on_fixture(servers)
    c = s.client()
    assert c.save()
    s.restart()
    assert s.log().count("DB loaded from disk") == 2
    check(s.port, all_keys(), debug_reload(s.port), reset_first=False)


def test_rdb_saved_by_sketch_debug_reload(servers):
    s = start_on_fixture(servers)
    c = s.client()
    assert c.execute_command("DEBUG", "RELOAD") in (b"OK", True)
    check(s.port, all_keys(), debug_reload(s.port), reset_first=False)


def test_restore_of_redisbloom_dumps(servers):
    s = servers.start()
    check(s.port, all_keys(), restore_all(s.port, all_keys()))


@pytest.mark.parametrize("types", ["default", "redisbloom-types"])
def test_loadchunk_of_redisbloom_scandumps(servers, types):
    """Into empty keys: TYPE names RedisBloom's type too (the chunks are
    RedisBloom's), whether or not new keys are made in RedisBloom's types."""
    args = ["MAX-KEY-MEMORY", "64mb"] + (["REDISBLOOM-TYPES", "1"] if types != "default" else [])
    s = servers.start(module_args=args)
    keys = all_keys(("bf", "cf"))
    check(s.port, keys, loadchunk_all(s.port, keys))


# ---- corrupt payloads, their CRC64 valid ------------------------------------

def _cut(fields, i, keep):
    kind, v = fields[i]
    return fields[:i] + [(kind, v[:keep])] + fields[i + 1:]


def _set(fields, i, value):
    return fields[:i] + [(fields[i][0], value)] + fields[i + 1:]


def corruptions(family, fields):
    """[(what, fields)] that no loader may take. (RedisBloom 2.6.28 refuses
    most of them, but its server aborts on six: the cuckoo filter's last
    string cut short, bucket size 0, a data string one byte short, a bucket
    count past its data; the top-k's last value missing, k one more than
    its heap. sketch.so must refuse every one.)"""
    f = fields
    out = [("the last value missing", f[:-1])]
    strings = [i for i, (kind, _) in enumerate(f) if kind == "string"]
    if strings and family != "topk":  # a top-k ends with item names: shorter ones are valid
        out.append(("the last string cut short",
                    _cut(f, strings[-1], len(f[strings[-1]][1]) // 2)))
    if family == "bf":
        # size, filters, options, growth; per link: entries, error, hashes,
        # bits per entry, bits, n2, the bits, items
        out += [("one link more than saved", _set(f, 1, f[1][1] + 1)),
                ("no links", _set(f, 1, 0)),
                ("a link's bit count past its bytes", _set(f, 8, f[8][1] * 4 + 64)),
                ("a link's bit array one byte short", _cut(f, 10, len(f[10][1]) - 1))]
    elif family == "cf":
        # filters, buckets, items, deletes, bucket size, max iterations,
        # expansion; per filter: buckets, data
        out += [("one filter more than saved", _set(f, 0, f[0][1] + 1)),
                ("bucket size 0", _set(f, 4, 0)),
                ("a filter's data one byte short", _cut(f, 8, len(f[8][1]) - 1)),
                ("a filter's bucket count past its data", _set(f, 7, f[7][1] * 2))]
    elif family == "cms":
        # width, depth, total, counters
        out += [("width one more than the counters", _set(f, 0, f[0][1] + 1)),
                ("depth 0", _set(f, 1, 0)),
                ("the counters one byte short", _cut(f, 3, len(f[3][1]) - 1))]
    elif family == "topk":
        # k, width, depth, decay, buckets, heap, k items
        out += [("k 0", _set(f, 0, 0)),
                ("the buckets one byte short", _cut(f, 4, len(f[4][1]) - 1)),
                ("width one more than the buckets", _set(f, 1, f[1][1] + 1)),
                ("the heap one entry short", _cut(f, 5, len(f[5][1]) - 24)),
                ("k one more than the heap", _set(f, 0, f[0][1] + 1))]
    elif family == "td":
        # compression, min, max, capacity, merged, unmerged, compressions,
        # merged weight, unmerged weight, means, weights
        out += [("more merged nodes than the capacity", _set(f, 4, f[3][1] + 1)),
                ("one merged node more than saved", _set(f, 4, f[4][1] + 1)),
                ("a negative merged node count", _set(f, 4, -1)),
                ("the last weight missing", f[:-1])]
    return out


FAMILY_WORDS = {"bf": ("bloom", "mbbloom--"), "cf": ("cuckoo", "mbbloomcf"),
                "cms": ("count-min", "cms"), "topk": ("top-k", "topk"),
                "td": ("t-digest", "tdigest", "tdis-type")}
CORRUPTED = {"bf": "bf:scaling", "cf": "cf:b2", "cms": "cms:dim", "topk": "topk:wide",
             "td": "td:c100"}


def test_corrupt_dumps_refused(servers, tools):
    from redis.exceptions import ResponseError
    s = servers.start()
    c = s.client()
    dumps = {e["key"]: e for e in fixture("dumps.json")["keys"]}
    failures = []
    for family, key in CORRUPTED.items():
        payload = binascii.unhexlify(dumps[key]["dump"])
        head, fields, version = parse_module_value(payload)
        assert tools.with_crc(build_module_value(head, fields, version)) == payload
        for what, bad in corruptions(family, fields):
            body = build_module_value(head, bad, version)
            before = len(s.log())
            try:
                c.restore("target", 0, tools.with_crc(body))
                failures.append("%s (%s): RESTORE succeeded, TYPE %s" % (key, what,
                                                                         c.type("target")))
                c.delete("target")
                continue
            except ResponseError as e:
                if "Bad data format" not in str(e):
                    failures.append("%s (%s): refused with %r" % (key, what, str(e)))
            except Exception as e:
                try:
                    s.proc.wait(timeout=5)
                except Exception:
                    pass
                failures.append("%s (%s): %s; the server %s:\n%s" % (
                    key, what, type(e).__name__, "is alive" if s.alive() else "CRASHED",
                    s.log()[before:][-3000:]))
                break
            assert s.alive() and c.ping()
            assert c.exists("target") == 0
            new = [line for line in s.log()[before:].splitlines() if "sketch:" in line]
            if not any(w in line.lower() for line in new for w in FAMILY_WORDS[family]):
                failures.append("%s (%s): refused, but no log line of the module names "
                                "the %s value: %s" % (key, what, TYPES[family], new))
        if not s.alive():
            break
    assert not failures, "\n".join(failures)
    # the server still takes the good payloads
    for key in CORRUPTED.values():
        assert c.restore(key, 0, binascii.unhexlify(dumps[key]["dump"]))
        assert c.type(key).decode() == dumps[key]["type"]


# --------------------------------------------------------------------------
# The script: recording RedisBloom's answers
# --------------------------------------------------------------------------

def main():
    port = int(sys.argv[1])
    sess = sessions()
    keys = all_keys()
    got = run(port, sess, keys, debug_reload(port))
    check_topk_model(sess, got)
    replies = {phase: {k: resp3_compacted(by) for k, by in got[phase].items()}
               for phase in got}
    obj = {"server": os.environ.get("RECORDED_FROM", ""), "sessions": sess,
           "replies": replies}
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
    write_answers(obj, out)
    out.flush()


if __name__ == "__main__":
    # Recording: RECORDED_FROM=... python3 test_module_migration.py PORT > answers.json,
    # against a server with RedisBloom whose RDB file (dir/dbfilename) is the fixture's.
    main()
