# SPDX-License-Identifier: BSD-3-Clause
"""Keys of RedisBloom's types (MBbloom--, MBbloomCF, CMSk-TYPE, TopK-TYPE,
TDIS-TYPE) in the module's own paths: made by commands under
REDISBLOOM-TYPES 1 (and CONFIG SET), the AOF rewrite without an RDB
preamble, replication (to a replica of the same setting, as
docs/redis-module.md asks), COPY, the IMPORT
commands' type argument, BF.DEBUG, and a half-restored key of RedisBloom's
type kept half restored by DEBUG RELOAD. tests/module/test_module_migration.py
has RedisBloom's own data."""
import glob
import os

import pytest
from redis.exceptions import ResponseError

RB = ("MAX-KEY-MEMORY", "64mb", "REDISBLOOM-TYPES", "1")
ITEMS = [b"it:%d" % i for i in range(1500)]
PROBES = ITEMS[::5] + [b"no:%d" % i for i in range(300)]
TYPES = {"bf": b"MBbloom--", "cf": b"MBbloomCF", "cms": b"CMSk-TYPE", "topk": b"TopK-TYPE",
         "td": b"TDIS-TYPE"}


def make_keys(c):
    c.execute_command("BF.RESERVE", "bf", "0.01", "100")
    c.execute_command("BF.MADD", "bf", *ITEMS)
    c.execute_command("BF.ADD", "bf_default", "x")
    c.execute_command("CF.RESERVE", "cf", "64", "EXPANSION", "2")
    for it in ITEMS[:400]:
        c.execute_command("CF.ADD", "cf", it)
    c.execute_command("CF.DEL", "cf", ITEMS[3])
    c.execute_command("CMS.INITBYPROB", "cms", "0.01", "0.01")
    c.execute_command("CMS.INCRBY", "cms", "a", "3", "b", "9")
    c.execute_command("TOPK.RESERVE", "topk", "5", "50", "4", "0.9")
    c.execute_command("TOPK.ADD", "topk", *[ITEMS[i % 7 * (i % 5 + 1)] for i in range(700)])
    c.execute_command("TDIGEST.CREATE", "td", "COMPRESSION", "50")
    c.execute_command("TDIGEST.ADD", "td", *[str(i % 997) for i in range(3000)])


def answers(c):
    return {
        "types": {k: c.type(k) for k in TYPES},
        "bf": c.execute_command("BF.MEXISTS", "bf", *PROBES),
        "bf_info": c.execute_command("BF.INFO", "bf"),
        "bf_debug": c.execute_command("BF.DEBUG", "bf"),
        "cf": c.execute_command("CF.MEXISTS", "cf", *PROBES[:500]),
        "cf_info": c.execute_command("CF.INFO", "cf"),
        "cms": c.execute_command("CMS.QUERY", "cms", "a", "b", "c"),
        "topk": c.execute_command("TOPK.LIST", "topk", "WITHCOUNT"),
        "td": c.execute_command("TDIGEST.QUANTILE", "td", "0.1", "0.5", "0.9"),
    }


def test_new_keys_take_redisbloom_types(servers):
    c = servers.start(module_args=RB).client()
    make_keys(c)
    assert {k: c.type(k) for k in TYPES} == TYPES
    assert c.type("bf_default") == b"MBbloom--"
    assert c.config_get("sketch.redisbloom-types") == {"sketch.redisbloom-types": "1"}
    # RedisBloom's BF.DEBUG lines, its BF.INFO Size: 32 + 64 per link + the arrays
    debug = c.execute_command("BF.DEBUG", "bf")
    assert debug[0] == b"size:%d" % c.execute_command("BF.CARD", "bf") and len(debug) == 5
    assert debug[1].startswith(b"bytes:") and b"hashwidth:64 capacity:100 size:100 ratio:0.005" in debug[1]
    info = dict(zip(*[iter(c.execute_command("BF.INFO", "bf"))] * 2))
    assert info[b"Number of filters"] == 4
    assert info[b"Size"] == 32 + 4 * 64 + sum(int(line.split()[0][6:]) for line in debug[1:])
    # switched off at run time: new keys are sketch's again, old ones keep their type
    c.config_set("sketch.redisbloom-types", 0)
    c.execute_command("BF.ADD", "bf_new", "x")
    c.execute_command("CMS.INITBYDIM", "cms_new", "10", "2")
    assert (c.type("bf_new"), c.type("cms_new")) == (b"sketch-bf", b"sketch-cm")
    c.execute_command("BF.ADD", "bf", "more")
    assert c.type("bf") == b"MBbloom--"
    with pytest.raises(ResponseError, match="argument"):
        c.config_set("sketch.redisbloom-types", 2)


def test_import_names_the_type(servers):
    c = servers.start().client()
    c.execute_command("CMS.INITBYDIM", "src", "20", "3")
    c.execute_command("CMS.INCRBY", "src", "a", "4")
    data = c.execute_command("CMS.EXPORT", "src")
    assert c.execute_command("CMS.IMPORT", "theirs", data, "REDISBLOOM") == b"OK"
    assert c.execute_command("CMS.IMPORT", "ours", data, "sketch") == b"OK"
    assert c.execute_command("CMS.IMPORT", "plain", data) == b"OK"
    assert (c.type("theirs"), c.type("ours"), c.type("plain")) == \
        (b"CMSk-TYPE", b"sketch-cm", b"sketch-cm")
    # without a type, an existing key keeps its own
    assert c.execute_command("CMS.IMPORT", "theirs", data) == b"OK"
    assert c.type("theirs") == b"CMSk-TYPE"
    with pytest.raises(ResponseError, match="SKETCH or REDISBLOOM"):
        c.execute_command("CMS.IMPORT", "x", data, "OTHER")
    assert c.execute_command("CMS.QUERY", "theirs", "a") == [4]


def test_aof_rewrite_keeps_types_and_answers(servers, tools):
    opts = {"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no"}
    s = servers.start(module_args=("MAX-KEY-MEMORY", "64mb"), options=opts)
    c = s.client()
    c.config_set("sketch.redisbloom-types", 1)
    make_keys(c)
    c.config_set("sketch.redisbloom-types", 0)
    before = answers(c)
    c.bgrewriteaof()
    tools.wait_for(lambda: tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="BGREWRITEAOF")
    base = open(max(glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof")),
                    key=os.path.getmtime), "rb").read()
    assert b"REDISBLOOM" in base and b"BF.LOADCHUNK" in base
    s.restart()
    c = s.client()
    assert answers(c) == before


def test_replica_holds_the_same(servers, tools):
    primary = servers.start(module_args=RB, options={"repl-diskless-sync-delay": 0})
    p = primary.client()
    p.execute_command("BF.RESERVE", "synced", "0.01", "100")
    p.execute_command("BF.MADD", "synced", *ITEMS[:300])
    replica = servers.start(module_args=RB, options={"repl-diskless-sync-delay": 0},
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    r = replica.client()
    tools.wait_for(lambda: tools.info_field(r, "replication", "master_link_status") == "up",
                   timeout=30, what="replica link up")
    make_keys(p)
    assert p.execute_command("WAIT", 1, 10000) == 1
    keys = list(TYPES) + ["synced", "bf_default"]
    assert r.type("synced") == b"MBbloom--"
    for k in keys:
        assert p.execute_command("DEBUG", "DIGEST-VALUE", k) == \
            r.execute_command("DEBUG", "DIGEST-VALUE", k), k


def test_copy_and_reload(servers):
    c = servers.start(module_args=RB).client()
    make_keys(c)
    before = answers(c)
    for k in TYPES:
        assert c.copy(k, k + "_copy")
        assert c.type(k + "_copy") == TYPES[k]
        assert c.execute_command("DEBUG", "DIGEST-VALUE", k)[0] == \
            c.execute_command("DEBUG", "DIGEST-VALUE", k + "_copy")[0]
    c.execute_command("DEBUG", "RELOAD")
    assert answers(c) == before


@pytest.mark.parametrize("family", ["BF", "CF"])
def test_half_restored_key_stays_half_restored(servers, tools, family):
    c = servers.start(module_args=RB).client()
    make_keys(c)
    key = family.lower()
    chunks = []
    it = 0
    while True:
        it, data = c.execute_command(family + ".SCANDUMP", key, it)
        if it == 0:
            break
        chunks.append((it, data))
    assert len(chunks) >= 3
    for chunk in chunks[:2]:
        c.execute_command(family + ".LOADCHUNK", "half", *chunk)
    assert c.type("half") == TYPES[key]
    c.execute_command("DEBUG", "RELOAD")
    with pytest.raises(ResponseError, match="restore"):
        c.execute_command(family + ".EXISTS", "half", ITEMS[0])
    for chunk in chunks[2:]:
        c.execute_command(family + ".LOADCHUNK", "half", *chunk)
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "half") == \
        c.execute_command("DEBUG", "DIGEST-VALUE", key)
