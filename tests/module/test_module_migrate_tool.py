# SPDX-License-Identifier: BSD-3-Clause
"""tools/migrate_redisbloom.py, run as a user runs it, between two real
servers: a source whose keys are in RedisBloom's types (sketch.so with
REDISBLOOM-TYPES 1, as RedisBloom's own keys are) and an empty target. Every
key of every family arrives with the same answers and its time to live;
keys of other types are left alone; a key the target has is reported, not
overwritten, unless --replace; a payload of a newer RDB version (as Redis 8
writes) is rewritten to one the target reads."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, os.pardir, os.pardir, "tools", "migrate_redisbloom.py")
sys.path.insert(0, os.path.dirname(TOOL))
import migrate_redisbloom  # noqa: E402

RB_TYPES = ("MAX-KEY-MEMORY", "64mb", "REDISBLOOM-TYPES", "1")
ITEMS = [b"item:%d" % i for i in range(3000)]
PROBES = ITEMS[::7] + [b"absent:%d" % i for i in range(500)]


def populate(c):
    c.execute_command("BF.RESERVE", "bf", "0.01", "100", "EXPANSION", "2")
    for i in range(0, len(ITEMS), 500):
        c.execute_command("BF.MADD", "bf", *ITEMS[i:i + 500])
    c.execute_command("BF.RESERVE", "bf_fixed", "0.001", "1000", "NONSCALING")
    c.execute_command("BF.MADD", "bf_fixed", *ITEMS[:900])
    c.execute_command("CF.RESERVE", "cf", "64", "BUCKETSIZE", "2", "EXPANSION", "2")
    for item in ITEMS[:600]:
        c.execute_command("CF.ADD", "cf", item)
    for item in ITEMS[:600:5]:
        c.execute_command("CF.DEL", "cf", item)
    c.execute_command("CMS.INITBYDIM", "cms", "200", "5")
    c.execute_command("CMS.INCRBY", "cms", *[x for i, it in enumerate(ITEMS[:300])
                                             for x in (it, i % 17 + 1)])
    c.execute_command("TOPK.RESERVE", "topk", "10", "50", "4", "0.9")
    c.execute_command("TOPK.ADD", "topk", *[ITEMS[i % 40 * (i % 3 + 1) % 97] for i in range(2000)])
    c.execute_command("TDIGEST.CREATE", "td", "COMPRESSION", "100")
    c.execute_command("TDIGEST.ADD", "td", *[str((i * 7919) % 10007 / 10.0) for i in range(5000)])
    c.set("plain", "a string")
    c.pexpire("cms", 3_600_000)


def answers(c):
    got = {}
    for key in ("bf", "bf_fixed"):
        got[key] = (c.execute_command("BF.MEXISTS", key, *PROBES),
                    c.execute_command("BF.CARD", key), c.type(key))
    got["cf"] = (c.execute_command("CF.MEXISTS", "cf", *PROBES[:600]),
                 [c.execute_command("CF.COUNT", "cf", it) for it in ITEMS[:50]], c.type("cf"))
    got["cms"] = (c.execute_command("CMS.QUERY", "cms", *ITEMS[:320]), c.type("cms"))
    got["topk"] = (c.execute_command("TOPK.LIST", "topk", "WITHCOUNT"), c.type("topk"))
    got["td"] = (c.execute_command("TDIGEST.QUANTILE", "td", "0", "0.01", "0.5", "0.99", "1"),
                 c.execute_command("TDIGEST.CDF", "td", "10", "500", "999"), c.type("td"))
    return got


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True,
                          timeout=120)


def url(server):
    return "redis://127.0.0.1:%d" % server.port


def test_every_family_arrives_the_same(servers):
    src = servers.start(module_args=RB_TYPES)
    dst = servers.start()
    s, d = src.client(), dst.client()
    populate(s)
    want = answers(s)
    assert want["bf"][2] == b"MBbloom--" and want["td"][2] == b"TDIS-TYPE"
    done = run_tool("--from", url(src), "--to", url(dst))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "copied 6 keys, 0 failed" in done.stdout
    assert answers(d) == want
    assert not d.exists("plain")
    assert 3_500_000 < d.pttl("cms") <= 3_600_000
    assert d.pttl("bf") == -1
    # and the copies keep working: adds answer on both alike
    for c in (s, d):
        c.execute_command("BF.MADD", "bf", *[b"new:%d" % i for i in range(500)])
        c.execute_command("TDIGEST.ADD", "td", "1", "2", "3")
    assert answers(d) == answers(s)


def test_existing_keys_are_reported_not_overwritten(servers):
    src = servers.start(module_args=RB_TYPES)
    dst = servers.start()
    s, d = src.client(), dst.client()
    populate(s)
    d.execute_command("BF.ADD", "bf", "mine")
    done = run_tool("--from", url(src), "--to", url(dst))
    assert done.returncode == 1
    assert "bf (MBbloom--): exists on the target" in done.stdout
    assert d.execute_command("BF.CARD", "bf") == 1
    done = run_tool("--from", url(src), "--to", url(dst), "--replace")
    assert done.returncode == 0, done.stdout + done.stderr
    assert answers(d) == answers(s)


def test_newer_rdb_version_is_rewritten(servers, tools):
    src = servers.start(module_args=RB_TYPES)
    dst = servers.start()
    s, d = src.client(), dst.client()
    populate(s)
    payload = s.dump("td")
    newer = migrate_redisbloom.with_rdb_version(payload, 12)
    assert tools.crc64(newer[:-8]) == int.from_bytes(newer[-8:], "little")
    with pytest.raises(Exception, match="version"):
        d.restore("td_copy", 0, newer)

    class Source:  # what a Redis 8 source, which cannot run here, would DUMP
        def dump(self, key):
            return newer

    migrate_redisbloom.copy_dump(Source(), d, "td")
    assert d.execute_command("TDIGEST.QUANTILE", "td", "0.5") == \
        s.execute_command("TDIGEST.QUANTILE", "td", "0.5")


def test_help_and_bad_arguments():
    done = run_tool("--help")
    assert done.returncode == 0 and "--replace" in done.stdout
    done = run_tool("--from", "redis://127.0.0.1:1")
    assert done.returncode == 2 and "--to" in done.stderr
    assert migrate_redisbloom.crc64(b"123456789") == 0xE9C6D914C4B8D9CA
