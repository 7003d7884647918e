# SPDX-License-Identifier: BSD-3-Clause
"""Replication: a replica loading the module answers like its primary, for
keys it received in the full sync (RDB) and for writes that reached it as
commands (ReplicateVerbatim)."""
import pytest
from redis.exceptions import ReadOnlyError


def test_replica_answers_like_primary(servers, tools):
    primary = servers.start(options={"repl-diskless-sync-delay": 0})
    p = primary.client()
    synced = tools.populate(p, seed=81, prefix="sync:")         # before the replica
    replica = servers.start(options={"repl-diskless-sync-delay": 0},
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    live = tools.populate(p, seed=82, prefix="live:")           # as commands
    # LOADCHUNK into a key that the replica never had, header chunk included
    tools.loadchunks(p, "live:chunked", tools.scandump(p, "live:bf:big"))
    live["bf"].append("live:chunked")
    live["present"]["live:chunked"] = live["present"]["live:bf:big"]
    assert p.execute_command("WAIT", 1, 10000) == 1
    for data in (synced, live):
        expected = tools.snapshot_of(p, data)
        tools.assert_same_snapshot(expected, tools.snapshot_of(rc, data))
        tools.assert_all_present(rc, data)
    assert rc.dbsize() == p.dbsize()
    # the replica refuses writes
    with pytest.raises(ReadOnlyError):
        rc.execute_command("BF.ADD", "live:bf:big", "x")
    with pytest.raises(ReadOnlyError):
        rc.execute_command("HLL.ADD", "live:hll:p14", "x")
    # deletes and overwrites replicate too
    p.delete("live:bf:default")
    p.execute_command("HLL.IMPORT", "live:hll:p4", p.get("live:pf:native"))
    assert p.execute_command("WAIT", 1, 10000) == 1
    assert rc.exists("live:bf:default") == 0
    assert rc.execute_command("HLL.COUNT", "live:hll:p4") == \
        p.execute_command("HLL.COUNT", "live:hll:p4")


def test_replica_restarted_resyncs(servers, tools):
    """A replica restarted (full resync from a fresh RDB) sees every write
    made while it was down."""
    primary = servers.start(options={"repl-diskless-sync-delay": 0})
    p = primary.client()
    replica = servers.start(options={"repl-diskless-sync-delay": 0},
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    tools.madd(p, "bf", tools.items("a", 5000))
    p.execute_command("HLL.ADD", "hll", *tools.items("a", 5000))
    assert p.execute_command("WAIT", 1, 10000) == 1
    replica.kill9()
    tools.madd(p, "bf", tools.items("b", 5000))
    p.execute_command("HLL.ADD", "hll", *tools.items("b", 5000))
    replica.start()
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up again")
    assert p.execute_command("WAIT", 1, 10000) == 1
    probes = tools.items("a", 5000) + tools.items("b", 5000) + tools.items("z", 5000)
    assert tools.snapshot(rc, ["bf"], ["hll"], probes) == tools.snapshot(p, ["bf"], ["hll"],
                                                                         probes)
