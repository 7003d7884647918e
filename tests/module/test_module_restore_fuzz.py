# SPDX-License-Identifier: BSD-3-Clause
"""BF.LOADCHUNK restores interleaved at random with everything that copies or
persists a key: adds and queries, SAVE, BGSAVE, BGREWRITEAOF, DEBUG RELOAD,
COPY, and full resyncs of a replica. Seeded, so a failure names its seed
and its steps.

At the end no acknowledged item is lost (an item BF.ADD answered for, or
one of a restore that finished) on the primary, on the replica, or on the
primary restarted from its AOF after kill -9; and primary and replica hold
the same digest for every key."""
import random

import pytest
import redis

SEEDS = [11, 12, 13]
STEPS = 120
RESTORES = 3
ITEMS = 3000


def pieces_of(c, tools, name, rng):
    """The SCANDUMP of a filter of ITEMS items, cut into pieces of random
    sizes (BF.LOADCHUNK takes any cut)."""
    c.execute_command("BF.RESERVE", name, 0.01, ITEMS)
    its = tools.items(name, ITEMS)
    tools.madd(c, name, its)
    whole = tools.scandump(c, name)
    c.delete(name)
    out = [whole[0]]
    for it, data in whole[1:]:
        start, at = it - 1 - len(data), 0
        while at < len(data):
            n = rng.randint(1, 2048)
            part = data[at:at + n]
            out.append((start + at + len(part) + 1, part))
            at += len(part)
    return out, its


def wait_persistence(c, tools):
    tools.wait_for(lambda: tools.info_field(c, "persistence", "rdb_bgsave_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="background saves")


@pytest.mark.parametrize("seed", SEEDS)
def test_restores_interleaved_with_copies(servers, tools, seed):
    rng = random.Random(seed)
    opts = {"repl-diskless-sync-delay": 0, "appendonly": "yes", "appendfsync": "always"}
    primary = servers.start(options=opts)
    replica = servers.start(options={"repl-diskless-sync-delay": 0},
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    p, rc = primary.client(), replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    restores = {}
    for i in range(RESTORES):
        pieces, its = pieces_of(p, tools, "r%d" % i, rng)
        restores["r%d" % i] = {"pieces": pieces, "next": 0, "items": its}
    acknowledged = {}           # key -> items that must be there
    steps = []
    for _ in range(STEPS):
        pending = [k for k, r in restores.items() if r["next"] < len(r["pieces"])]
        roll = rng.random()
        if pending and roll < 0.55:
            k = rng.choice(pending)
            r = restores[k]
            it, data = r["pieces"][r["next"]]
            steps.append("LOADCHUNK %s %d" % (k, it))
            assert p.execute_command("BF.LOADCHUNK", k, it, data) in (b"OK", True)
            r["next"] += 1
            if r["next"] == len(r["pieces"]):
                acknowledged.setdefault(k, []).extend(r["items"])
        elif roll < 0.75 and any(r["next"] > 0 for r in restores.values()):
            # a key whose restore has begun (BF.ADD would create any other)
            k = rng.choice([k for k, r in restores.items() if r["next"] > 0])
            item = b"extra:%d" % rng.randrange(1 << 30)
            steps.append("ADD %s" % k)
            try:
                p.execute_command("BF.ADD", k, item)
                acknowledged.setdefault(k, []).append(item)
            except redis.ResponseError as e:
                # refused only while its restore is unfinished
                assert restores[k]["next"] < len(restores[k]["pieces"]), (seed, steps, e)
                assert "being restored" in str(e), (seed, steps, e)
        else:
            action = rng.choice(["SAVE", "BGSAVE", "BGREWRITEAOF", "RELOAD", "COPY", "RESYNC"])
            steps.append(action)
            wait_persistence(p, tools)
            if action == "SAVE":
                p.save()
            elif action == "BGSAVE":
                p.bgsave()
            elif action == "BGREWRITEAOF":
                p.bgrewriteaof()
            elif action == "RELOAD":
                p.execute_command("DEBUG", "RELOAD")
            elif action == "COPY":
                k = rng.choice(list(restores))
                if p.exists(k):
                    p.execute_command("COPY", k, "copy:" + k, "REPLACE")
            else:
                rc.execute_command("REPLICAOF", "NO", "ONE")
                rc.execute_command("REPLICAOF", "127.0.0.1", primary.port)
                tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="resync")
    # the rest of every restore
    for k, r in restores.items():
        for it, data in r["pieces"][r["next"]:]:
            assert p.execute_command("BF.LOADCHUNK", k, it, data) in (b"OK", True)
        if r["next"] < len(r["pieces"]):
            acknowledged.setdefault(k, []).extend(r["items"])
    assert p.execute_command("WAIT", 1, 10000) == 1
    for k in list(restores) + [k.decode() for k in p.keys("copy:*")]:
        assert rc.execute_command("DEBUG", "DIGEST-VALUE", k) == \
            p.execute_command("DEBUG", "DIGEST-VALUE", k), (seed, k, steps)
    wait_persistence(p, tools)
    for c in (p, rc):
        for k, its in acknowledged.items():
            found = tools.mexists(c, k, its)
            assert all(found), (seed, k, len(found) - sum(map(bool, found)), steps)
    primary.kill9()
    primary.start()
    p = primary.client()
    for k, its in acknowledged.items():
        assert all(tools.mexists(p, k, its)), (seed, k, "after kill -9 and AOF", steps)
