# SPDX-License-Identifier: BSD-3-Clause
"""Redis Cluster: three masters on loopback, each loading the module, made
into a cluster by `redis-cli --cluster create`. The module's key positions
let the cluster route BF.*, HLL.*, CMS.*, CF.*, TDIGEST.*, WHLL.* and ABF.* (MOVED,
CROSSSLOT), and a slot holding BF, HLL, CF, TDIGEST, WHLL and ABF keys moves to another node
with MIGRATE (DUMP/RESTORE of the module's types) with identical answers afterwards."""
import subprocess

import pytest
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException, ResponseError


def cluster_state(c):
    info = c.execute_command("CLUSTER", "INFO")
    if isinstance(info, dict):
        return str(info.get("cluster_state"))
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("cluster_state:"):
            return line.split(":", 1)[1].strip()
    return None


@pytest.fixture(scope="module")
def cluster(module_servers, tools):
    nodes = []
    for _ in range(3):
        port = tools.free_port(with_bus=True)
        nodes.append(module_servers.start(
            port=port, cluster_bus=True,
            options={"cluster-enabled": "yes",
                     "cluster-config-file": "nodes-%d.conf" % port,
                     "cluster-node-timeout": 5000}))
    cmd = [tools.REDIS_CLI, "--cluster", "create"] + \
        ["127.0.0.1:%d" % n.port for n in nodes] + ["--cluster-replicas", "0",
                                                     "--cluster-yes"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, timeout=120)
    assert out.returncode == 0, out.stdout.decode(errors="replace")[-3000:]
    direct = [n.client() for n in nodes]

    def ok():
        return all(cluster_state(c) == "ok" for c in direct)
    tools.wait_for(ok, timeout=60, what="cluster_state:ok on every node")
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.port) for n in nodes],
                      decode_responses=False, socket_timeout=10)
    try:
        yield {"nodes": nodes, "direct": direct, "rc": rc}
    finally:
        rc.close()


def node_ids(cluster):
    return [c.execute_command("CLUSTER", "MYID") for c in cluster["direct"]]


def owner_index(cluster, slot):
    slots = cluster["direct"][0].execute_command("CLUSTER", "SLOTS")
    for start, end, master, *_ in slots:
        if start <= slot <= end:
            port = master[1]
            return [n.port for n in cluster["nodes"]].index(port)
    raise AssertionError("slot %d has no owner" % slot)


def test_keys_spread_over_slots(cluster, tools):
    rc = cluster["rc"]
    bf_keys = ["cl:bf:%d" % i for i in range(40)]
    hll_keys = ["cl:hll:%d" % i for i in range(40)]
    for i, k in enumerate(bf_keys):
        # a few created with the defaults by BF.MADD, the rest reserved
        # (creating a capacity-100 filter costs the server ~0.25 s: see
        # test_module_bf.py::test_creating_a_small_filter_does_not_stall_the_server)
        if i >= 4:
            rc.execute_command("BF.RESERVE", k, "0.01", "1000")
        assert set(rc.execute_command("BF.MADD", k, *tools.items(k, 50 + i))) <= {0, 1}
    for i, k in enumerate(hll_keys):
        rc.execute_command("HLL.ADD", k, *tools.items(k, 100 * (i + 1)))
    # every node holds some of them
    sizes = [c.dbsize() for c in cluster["direct"]]
    assert all(s > 0 for s in sizes), sizes
    for i, k in enumerate(bf_keys):
        its = tools.items(k, 50 + i)
        assert rc.execute_command("BF.MEXISTS", k, *its) == [1] * len(its)
        assert rc.execute_command("BF.EXISTS", k, "absent-%d" % i) in (0, 1)
        assert rc.execute_command("BF.CARD", k) <= len(its)
        assert rc.execute_command("BF.INFO", k, "ITEMS") == [rc.execute_command("BF.CARD", k)]
    for i, k in enumerate(hll_keys):
        n = 100 * (i + 1)
        count = rc.execute_command("HLL.COUNT", k)
        assert abs(count - n) <= max(3, 0.05 * n), (k, count)
        # the same elements in a native key of the same slot: the same count
        native = "{%s}native" % k
        rc.pfadd(native, *tools.items(k, n))
        assert count == rc.pfcount(native)


def test_wrong_node_answers_moved(cluster):
    """The module declares its keys: a node that does not own the key's
    slot redirects instead of answering."""
    slot = cluster["direct"][0].execute_command("CLUSTER", "KEYSLOT", "moved-test")
    owner = owner_index(cluster, slot)
    other = cluster["direct"][(owner + 1) % 3]
    for args in (["BF.ADD", "moved-test", "x"], ["BF.EXISTS", "moved-test", "x"],
                 ["HLL.ADD", "moved-test", "x"], ["HLL.COUNT", "moved-test"],
                 ["HLL.MERGE", "moved-test", "moved-test"], ["BF.INFO", "moved-test"],
                 ["HLL.COMPARE", "moved-test", "moved-test"], ["CF.ADD", "moved-test", "x"],
                 ["CF.MEXISTS", "moved-test", "x", "y"], ["TDIGEST.ADD", "moved-test", "1"],
                 ["TDIGEST.MERGE", "moved-test", "1", "moved-test"],
                 ["WHLL.ADD", "moved-test", "x"], ["WHLL.COUNT", "moved-test", "1000"],
                 ["WHLL.MERGE", "moved-test", "moved-test"], ["ABF.ADD", "moved-test", "x"],
                 ["ABF.MEXISTS", "moved-test", "x", "y"]):
        with pytest.raises(ResponseError, match="MOVED %d " % slot):
            other.execute_command(*args)


def test_multikey_same_hash_tag(cluster, tools):
    rc = cluster["rc"]
    a, b, c = tools.items("a", 5000), tools.items("b", 5000), tools.items("c", 300)
    rc.execute_command("HLL.ADD", "{tag}h1", *a)
    rc.execute_command("HLL.ADD", "{tag}h2", *b)
    rc.pfadd("{tag}p1", *a)
    rc.pfadd("{tag}p2", *b)
    rc.pfadd("{tag}p3", *c)
    assert rc.execute_command("HLL.COUNT", "{tag}h1", "{tag}h2") == \
        rc.pfcount("{tag}p1", "{tag}p2")
    assert rc.execute_command("HLL.COUNT", "{tag}h1", "{tag}h2", "{tag}p3") == \
        rc.pfcount("{tag}p1", "{tag}p2", "{tag}p3")
    assert rc.execute_command("HLL.MERGE", "{tag}m", "{tag}h1", "{tag}h2", "{tag}p3") == b"OK"
    assert rc.execute_command("HLL.COUNT", "{tag}m") == rc.pfcount("{tag}p1", "{tag}p2",
                                                                   "{tag}p3")
    est = rc.execute_command("HLL.ESTIMATE", "{tag}h1", "{tag}h2")
    assert est[0] == rc.execute_command("HLL.COUNT", "{tag}h1", "{tag}h2")


def test_compare_same_hash_tag(cluster, tools):
    """HLL.COMPARE of two keys of one hash tag, a sketch and a native key:
    the cluster client routes it to the node owning their slot, which
    answers as one server would; the other nodes redirect (MOVED)."""
    rc = cluster["rc"]
    day1, day2 = "{cohort}:day1", "{cohort}:day2"
    tools.hll_add(rc, day1, tools.items("user", 20_000))
    rc.pfadd(day2, *tools.items("user", 20_000, start=15_000))
    slot = cluster["direct"][0].execute_command("CLUSTER", "KEYSLOT", day1)
    assert cluster["direct"][0].execute_command("CLUSTER", "KEYSLOT", day2) == slot
    owner = owner_index(cluster, slot)
    reply = rc.execute_command("HLL.COMPARE", day1, day2)
    assert reply == cluster["direct"][owner].execute_command("HLL.COMPARE", day1, day2)
    fields = dict(zip([x.decode() for x in reply[0::2]], reply[1::2]))
    assert len(reply) == 50 and fields["precision"] == 14
    both, error = fields["intersection"], float(fields["intersection_error"])
    assert abs(both - 5000) <= 3 * error, fields
    assert fields["intersection_lower"] <= both <= fields["intersection_upper"]
    for i in range(3):
        if i != owner:
            with pytest.raises(ResponseError, match="MOVED %d " % slot):
                cluster["direct"][i].execute_command("HLL.COMPARE", day1, day2)


def test_multikey_different_slots_crossslot(cluster, tools):
    rc = cluster["rc"]
    direct = cluster["direct"][0]
    k1, k2 = "{x}h", "{y}h"
    assert direct.execute_command("CLUSTER", "KEYSLOT", k1) != \
        direct.execute_command("CLUSTER", "KEYSLOT", k2)
    rc.execute_command("HLL.ADD", k1, "a")
    rc.execute_command("HLL.ADD", k2, "b")
    c1, c2 = "{x}c", "{y}c"
    rc.execute_command("CMS.INITBYDIM", c1, 10, 2)
    rc.execute_command("CMS.INITBYDIM", c2, 10, 2)
    for args in (["HLL.COUNT", k1, k2], ["HLL.MERGE", k1, k2], ["HLL.ESTIMATE", k1, k2],
                 ["HLL.COMPARE", k1, k2], ["HLL.COMPARE", k2, k1],
                 ["CMS.MERGE", c1, 1, c2], ["CMS.MERGE", c1, 2, c1, c2, "WEIGHTS", 1, 1],
                 ["WHLL.MERGE", "{x}w", "{y}w"], ["WHLL.MERGE", "{x}w", "{x}w", "{y}w"]):
        for c in cluster["direct"]:              # the server's own check
            with pytest.raises(ResponseError, match="CROSSSLOT"):
                c.execute_command(*args)
        with pytest.raises((RedisClusterException, ResponseError)):
            rc.execute_command(*args)            # the client's check
    assert rc.execute_command("HLL.COUNT", k1) == 1
    # one slot: the cluster client routes it, and the owner merges
    assert rc.execute_command("CMS.MERGE", c1, 2, c1, c1, "WEIGHTS", 1, 1) == b"OK"
    rc.execute_command("WHLL.ADDAT", "{x}w1", 1000, "a", "b")
    rc.execute_command("WHLL.ADDAT", "{x}w2", 2000, "b", "c")
    assert rc.execute_command("WHLL.MERGE", "{x}w", "{x}w1", "{x}w2") == b"OK"
    assert rc.execute_command("WHLL.COUNT", "{x}w", 86400000, "TIME", 2000) == 3


def test_migrate_slot_with_module_keys(cluster, tools):
    rc = cluster["rc"]
    direct = cluster["direct"]
    tag = "{migrate}"
    slot = direct[0].execute_command("CLUSTER", "KEYSLOT", tag)
    rc.execute_command("BF.RESERVE", tag + "bf-scaling", "0.01", "200", "EXPANSION", "2")
    tools.madd(rc, tag + "bf-scaling", tools.items("s", 5000))
    rc.execute_command("BF.RESERVE", tag + "bf-fixed", "0.001", "1000", "NONSCALING")
    tools.madd(rc, tag + "bf-fixed", tools.items("f", 800))
    rc.execute_command("BF.ADD", tag + "bf-default", "x")
    rc.execute_command("HLL.ADD", tag + "hll", *tools.items("h", 20000))
    rc.execute_command("HLL.RESERVE", tag + "hll-p10", 10)
    rc.execute_command("HLL.ADD", tag + "hll-p10", *tools.items("h", 300))
    rc.execute_command("HLL.ADD", tag + "hll-sparse", "a", "b", "c")
    rc.pfadd(tag + "native", *tools.items("n", 2000))
    cf_items = tools.items("c", 3000)
    rc.execute_command("CF.INSERT", tag + "cf", "CAPACITY", 1000, "ITEMS", *cf_items)
    cf_before = rc.execute_command("CF.EXPORT", tag + "cf")
    rc.execute_command("TDIGEST.CREATE", tag + "td")
    rc.execute_command("TDIGEST.ADD", tag + "td", *range(1000))
    td_before = rc.execute_command("TDIGEST.EXPORT", tag + "td")  # a buffer, not yet merged
    rc.execute_command("WHLL.ADDAT", tag + "whll", 5000, *tools.items("w", 3000))
    whll_before = rc.execute_command("WHLL.EXPORT", tag + "whll")
    rc.execute_command("ABF.RESERVE", tag + "abf", "0.01", "5000", "WINDOW", "60000")
    rc.execute_command("ABF.ADDAT", tag + "abf", 5000, *tools.items("a", 2000))
    abf_before = rc.execute_command("ABF.EXPORT", tag + "abf")
    bf_keys = [tag + k for k in ("bf-scaling", "bf-fixed", "bf-default")]
    hll_keys = [tag + k for k in ("hll", "hll-p10", "hll-sparse", "native")]
    probes = tools.items("s", 5000) + tools.items("f", 800) + tools.items("absent", 3000)
    before = tools.snapshot(rc, bf_keys, hll_keys, probes)

    src = owner_index(cluster, slot)
    dst = (src + 1) % 3
    ids = node_ids(cluster)
    dst_port = cluster["nodes"][dst].port
    assert direct[dst].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
    assert direct[src].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
    keys = direct[src].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    assert len(keys) == len(bf_keys) + len(hll_keys) + 4
    assert direct[src].execute_command("MIGRATE", "127.0.0.1", dst_port, "", 0, 10000,
                                       "KEYS", *keys) == b"OK"
    for i in (dst, src, 3 - src - dst):
        direct[i].execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
    assert direct[src].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    assert direct[dst].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(keys)

    def settled():
        return all(owner_index({"direct": [c], "nodes": cluster["nodes"]}, slot) == dst
                   for c in direct)
    tools.wait_for(settled, timeout=30, what="every node to see the new owner")
    # through the cluster client (stale slot map: MOVED, then the new node)
    after = tools.snapshot(rc, bf_keys, hll_keys, probes)
    tools.assert_same_snapshot(before, after)
    assert rc.execute_command("CF.EXPORT", tag + "cf") == cf_before
    assert rc.execute_command("CF.MEXISTS", tag + "cf", *cf_items) == [1] * len(cf_items)
    assert rc.execute_command("TDIGEST.EXPORT", tag + "td") == td_before
    assert rc.execute_command("WHLL.EXPORT", tag + "whll") == whll_before
    assert rc.execute_command("ABF.EXPORT", tag + "abf") == abf_before
    assert rc.execute_command("ABF.EXISTSAT", tag + "abf", 5000, *tools.items("a", 2000)) == \
        [1] * 2000
    # the migrated values are live on their new node
    more = tools.items("after-migration", 3000)
    assert set(tools.madd(rc, tag + "bf-scaling", more)) <= {0, 1}
    assert all(tools.mexists(rc, tag + "bf-scaling", more + tools.items("s", 5000)))
    assert rc.execute_command("HLL.COUNT", tag + "hll", tag + "native") == \
        direct[dst].execute_command("HLL.COUNT", tag + "hll", tag + "native")
    assert rc.execute_command("HLL.MERGE", tag + "hll", tag + "hll-p10") == b"OK"
    assert rc.execute_command("HLL.INFO", tag + "hll")[1] == 10
