# SPDX-License-Identifier: BSD-3-Clause
"""The module's settings, keyspace notifications and command descriptions.

Settings: the load arguments (sketch's and RedisBloom's names) become the
defaults of the module configs sketch.max-key-memory, sketch.bf-error-rate,
sketch.bf-initial-size, sketch.bf-expansion-factor and
sketch.cf-max-expansions, which a line of the
server's configuration overrides and CONFIG SET changes at run time; a bad
argument makes the module refuse to load with a message in the log.
"""
import pytest
import redis
from redis.exceptions import ResponseError

from resp import RespClient, pairs, plain, text

CONFIGS = ["sketch.max-key-memory", "sketch.bf-error-rate", "sketch.bf-initial-size",
           "sketch.bf-expansion-factor", "sketch.cf-max-expansions"]


def configs(c):
    got = c.config_get("sketch.*")
    return {k: got[k] for k in CONFIGS}


def debug_layers(c, key):
    return [line.decode() for line in c.execute_command("BF.DEBUG", key)[1:]]


def assert_add_creates_as_reserve(c, rate, size, expansion):
    """BF.ADD of a new key creates what BF.RESERVE rate size EXPANSION
    expansion creates."""
    c.execute_command("BF.ADD", "auto", "x")
    c.execute_command("BF.RESERVE", "explicit", rate, size, "EXPANSION", expansion)
    c.execute_command("BF.ADD", "explicit", "x")
    assert debug_layers(c, "auto") == debug_layers(c, "explicit")


def test_defaults(server, r):
    assert configs(r) == {"sketch.max-key-memory": "67108864", "sketch.bf-error-rate": "0.01",
                          "sketch.bf-initial-size": "100", "sketch.bf-expansion-factor": "2",
                          "sketch.cf-max-expansions": "32"}
    assert_add_creates_as_reserve(r, "0.01", "100", "2")
    assert r.execute_command("BF.INFO", "auto") == r.execute_command("BF.INFO", "explicit")


@pytest.mark.parametrize("args", [
    ["ERROR_RATE", "0.02", "INITIAL_SIZE", "200", "EXPANSION", "3"],
    ["bf-error-rate", "0.02", "bf-initial-size", "200", "bf-expansion-factor", "3",
     "CF_MAX_EXPANSIONS", "3"],
    ["error_rate", "0.02", "Initial_Size", "200", "expansion", "3", "cf-max-expansions", "3",
     "CF_INITIAL_SIZE", "2048"],
])
def test_redisbloom_load_arguments(servers, args):
    """RedisBloom's load arguments, old and new names in any case, set the
    defaults of new filters and the Cuckoo filters' limit of sub-filters;
    the cf- settings of later RedisBloom releases are ignored."""
    s = servers.start(module_args=args + ["MAX-KEY-MEMORY", "1mb"])
    c = s.client()
    limit = "3" if "CF_MAX_EXPANSIONS" in args or "cf-max-expansions" in args else "32"
    assert configs(c) == {"sketch.max-key-memory": "1048576", "sketch.bf-error-rate": "0.02",
                          "sketch.bf-initial-size": "200", "sketch.bf-expansion-factor": "3",
                          "sketch.cf-max-expansions": limit}
    assert_add_creates_as_reserve(c, "0.02", "200", "3")
    assert c.execute_command("BF.INFO", "auto", "CAPACITY") == [200]
    assert c.execute_command("BF.INFO", "auto", "EXPANSION") == [3]
    if "CF_INITIAL_SIZE" in args:
        assert "CF_INITIAL_SIZE ignored" in s.log()


@pytest.mark.parametrize("args,message", [
    (["ERROR_RATE"], "module arguments come in pairs"),
    (["ERROR_RATE", "0"], "bad value for ERROR_RATE"),
    (["ERROR_RATE", "1"], "bad value for ERROR_RATE"),
    (["bf-error-rate", "x"], "bad value for bf-error-rate"),
    (["INITIAL_SIZE", "0"], "bad value for INITIAL_SIZE"),
    (["INITIAL_SIZE", str(2 ** 30 + 1)], "bad value for INITIAL_SIZE"),
    (["EXPANSION", "32769"], "bad value for EXPANSION"),
    (["EXPANSION", "-1"], "bad value for EXPANSION"),
    (["MAX-KEY-MEMORY", "lots"], "bad value for MAX-KEY-MEMORY"),
    (["NO-SUCH-SETTING", "1"], "unknown module argument NO-SUCH-SETTING"),
    (["REDISBLOOM-TYPES", "yes"], "bad value for REDISBLOOM-TYPES"),
])
def test_bad_load_arguments_refuse_the_module(servers, args, message):
    s = servers.start(module_args=args, wait=False)
    try:
        s.proc.wait(timeout=20)
    except Exception:
        pytest.fail("the server started with module arguments %r" % args)
    assert s.proc.returncode != 0
    log = s.log()
    assert message in log, log[-2000:]


def test_config_file_overrides_load_arguments(servers):
    s = servers.start(module_args=["ERROR_RATE", "0.02"],
                      options={"sketch.bf-error-rate": "0.05", "sketch.bf-initial-size": "50"})
    c = s.client()
    assert configs(c)["sketch.bf-error-rate"] == "0.05"
    assert configs(c)["sketch.bf-initial-size"] == "50"
    c.execute_command("BF.ADD", "auto", "x")
    assert c.execute_command("BF.INFO", "auto", "CAPACITY") == [50]


def test_config_set(server, r):
    try:
        assert r.config_set("sketch.bf-error-rate", "0.001") is True
        assert r.config_set("sketch.bf-initial-size", "1000") is True
        assert r.config_set("sketch.bf-expansion-factor", "4") is True
        assert_add_creates_as_reserve(r, "0.001", "1000", "4")
        # 0: what BF.ADD creates is fixed in size
        assert r.config_set("sketch.bf-expansion-factor", "0") is True
        r.execute_command("BF.ADD", "fixed", "x")
        assert r.execute_command("BF.INFO", "fixed", "EXPANSION") == [None]
        assert r.config_get("sketch.bf-expansion-factor") == {"sketch.bf-expansion-factor": "0"}
        # several at once, as RedisBloom's clients do
        r.execute_command("CONFIG", "SET", "sketch.bf-error-rate", "0.02",
                          "sketch.bf-initial-size", "200")
        assert configs(r)["sketch.bf-error-rate"] == "0.02"
        for name, value in (("sketch.bf-error-rate", "0"), ("sketch.bf-error-rate", "1"),
                            ("sketch.bf-error-rate", "1e-16"), ("sketch.bf-error-rate", "x"),
                            ("sketch.bf-initial-size", "0"),
                            ("sketch.bf-initial-size", str(2 ** 32)),
                            ("sketch.bf-expansion-factor", "-1"),
                            ("sketch.bf-expansion-factor", "32769"),
                            ("sketch.max-key-memory", "0")):
            with pytest.raises(ResponseError) as e:
                r.config_set(name, value)
            if name == "sketch.bf-error-rate":
                assert "must be a rate in [1e-15, 1)" in str(e.value), e.value
        assert configs(r)["sketch.bf-error-rate"] == "0.02"
        assert configs(r)["sketch.bf-initial-size"] == "200"
    finally:
        r.config_set("sketch.bf-error-rate", "0.01")
        r.config_set("sketch.bf-initial-size", "100")
        r.config_set("sketch.bf-expansion-factor", "2")


def test_config_set_max_key_memory_applies_to_existing_filters(servers):
    s = servers.start(module_args=["MAX-KEY-MEMORY", "64mb"])
    c = s.client()
    c.execute_command("BF.RESERVE", "grow", "0.01", "1000", "EXPANSION", "2")
    c.execute_command("BF.MADD", "grow", *[b"a%d" % i for i in range(2000)])
    assert c.config_set("sketch.max-key-memory", "64kb") is True
    assert c.config_get("sketch.max-key-memory") == {"sketch.max-key-memory": "65536"}
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY of 65536"):
        for i in range(200000):
            c.execute_command("BF.ADD", "grow", b"b%d" % i)
    size = c.execute_command("BF.INFO", "grow", "SIZE")[0]
    assert size <= 65536
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        c.execute_command("BF.RESERVE", "big", "0.01", "100000")
    assert c.config_set("sketch.max-key-memory", "1mb") is True
    assert c.execute_command("BF.RESERVE", "big", "0.01", "100000") == b"OK"
    c.execute_command("BF.MADD", "grow", *[b"c%d" % i for i in range(20000)])
    assert c.execute_command("BF.INFO", "grow", "SIZE")[0] > size


# ---- keyspace notifications ------------------------------------------------

WRITES = [
    (["BF.RESERVE", "bf1", "0.01", "100"], "bf.reserve"),
    (["BF.ADD", "bf1", "a"], "bf.add"),
    (["BF.MADD", "bf1", "b", "c"], "bf.madd"),
    (["BF.INSERT", "bf2", "ITEMS", "a"], "bf.insert"),
    (["HLL.RESERVE", "h1", "12"], "hll.reserve"),
    (["HLL.ADD", "h2", "a"], "hll.add"),
    (["HLL.MERGE", "h3", "h2"], "hll.merge"),
    (["CMS.INITBYDIM", "c1", "10", "2"], "cms.initbydim"),
    (["CMS.INITBYPROB", "c2", "0.1", "0.1"], "cms.initbyprob"),
    (["CMS.INCRBY", "c1", "a", "1"], "cms.incrby"),
    (["CMS.MERGE", "c1", "1", "c1"], "cms.merge"),
    (["TOPK.RESERVE", "t1", "3"], "topk.reserve"),
    (["TOPK.ADD", "t1", "a"], "topk.add"),
    (["TOPK.INCRBY", "t1", "b", "2"], "topk.incrby"),
    (["TDIGEST.CREATE", "d1"], "tdigest.create"),
    (["TDIGEST.ADD", "d1", "1", "2"], "tdigest.add"),
    (["TDIGEST.MERGE", "d2", "1", "d1"], "tdigest.merge"),
    (["TDIGEST.RESET", "d2"], "tdigest.reset"),
    (["CF.RESERVE", "f1", "100"], "cf.reserve"),
    (["CF.ADD", "f1", "a"], "cf.add"),
    (["CF.ADDNX", "f1", "b"], "cf.add"),
    (["CF.INSERT", "f2", "ITEMS", "a", "b"], "cf.insert"),
    (["CF.INSERTNX", "f2", "ITEMS", "c"], "cf.insert"),
    (["CF.DEL", "f2", "a"], "cf.del"),
    (["CF.COMPACT", "f2"], "cf.compact"),
]


def test_keyspace_notifications(server, r):
    """Every write announces itself in the generic class (notify-keyspace-
    events g), named after its command; a command that changes nothing (an
    item already there) announces nothing, as PFADD does."""
    r.config_set("notify-keyspace-events", "KEg")
    try:
        p = r.pubsub()
        p.psubscribe("__keyspace@0__:*")
        assert p.get_message(timeout=5)["type"] == "psubscribe"
        seen = []

        def drain():
            while True:
                m = p.get_message(timeout=0.2)
                if m is None:
                    return
                if m["type"] == "pmessage":
                    seen.append((m["channel"].decode().split(":", 1)[1], m["data"].decode()))

        for cmd, event in WRITES:
            r.execute_command(*cmd)
        exported = r.execute_command("HLL.EXPORT", "h2")
        r.execute_command("HLL.IMPORT", "h4", exported)
        r.execute_command("CMS.IMPORT", "c3", r.execute_command("CMS.EXPORT", "c1"))
        r.execute_command("TOPK.IMPORT", "t2", r.execute_command("TOPK.EXPORT", "t1"))
        r.execute_command("CF.IMPORT", "f3", r.execute_command("CF.EXPORT", "f1"))
        r.execute_command("TDIGEST.IMPORT", "d3", r.execute_command("TDIGEST.EXPORT", "d1"))
        it, header = r.execute_command("BF.SCANDUMP", "bf1", 0)
        pieces = [(it, header)]
        while True:
            it, data = r.execute_command("BF.SCANDUMP", "bf1", it)
            if it == 0:
                break
            pieces.append((it, data))
        for it, data in pieces:
            r.execute_command("BF.LOADCHUNK", "bf3", it, data)
        # changing nothing announces nothing
        r.execute_command("BF.ADD", "bf1", "a")
        r.execute_command("HLL.ADD", "h2", "a")
        r.execute_command("CMS.INCRBY", "c1", "a", "0")
        r.execute_command("BF.EXISTS", "bf1", "a")
        r.execute_command("CMS.QUERY", "c1", "a")
        r.execute_command("TOPK.LIST", "t1")
        r.execute_command("CF.ADDNX", "f1", "a")
        r.execute_command("CF.DEL", "f1", "never")
        r.execute_command("TDIGEST.QUANTILE", "d1", "0.5")
        drain()
        expected = [(cmd[1], event) for cmd, event in WRITES]
        expected += [("h4", "hll.import"), ("c3", "cms.import"), ("t2", "topk.import"),
                     ("f3", "cf.import"), ("d3", "tdigest.import")]
        expected += [("bf3", "bf.loadchunk")] * len(pieces)
        assert seen == expected
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")


# ---- command descriptions --------------------------------------------------

COMMANDS = {
    # name: (arity, first key, last key, flags, top-level argument names)
    "bf.reserve": (-4, 1, 1, {"write", "denyoom"},
                   ["key", "error_rate", "capacity", "expansion", "nonscaling"]),
    "bf.add": (3, 1, 1, {"write", "denyoom"}, ["key", "item"]),
    "bf.madd": (-3, 1, 1, {"write", "denyoom"}, ["key", "item"]),
    "bf.insert": (-4, 1, 1, {"write", "denyoom"},
                  ["key", "capacity", "error", "expansion", "nocreate", "nonscaling", "items",
                   "item"]),
    "bf.exists": (3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "bf.mexists": (-3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "bf.card": (2, 1, 1, {"readonly", "fast"}, ["key"]),
    "bf.info": (-2, 1, 1, {"readonly", "fast"}, ["key", "single_value"]),
    "bf.debug": (2, 1, 1, {"readonly"}, ["key"]),
    "bf.scandump": (3, 1, 1, {"readonly"}, ["key", "iterator"]),
    "bf.loadchunk": (4, 1, 1, {"write", "denyoom"}, ["key", "iterator", "data"]),
    "hll.reserve": (3, 1, 1, {"write", "denyoom"}, ["key", "precision"]),
    "hll.add": (-2, 1, 1, {"write", "denyoom", "fast"}, ["key", "element"]),
    "hll.count": (-2, 1, -1, {"readonly"}, ["key"]),
    "hll.estimate": (-2, 1, -1, {"readonly"}, ["key"]),
    "hll.merge": (-3, 1, -1, {"write", "denyoom"}, ["destkey", "sourcekey"]),
    "hll.compare": (3, 1, 2, {"readonly"}, ["key1", "key2"]),
    "hll.info": (2, 1, 1, {"readonly"}, ["key"]),
    "hll.export": (2, 1, 1, {"readonly"}, ["key"]),
    "hll.import": (3, 1, 1, {"write", "denyoom"}, ["key", "value"]),
    "cms.initbydim": (4, 1, 1, {"write", "denyoom"}, ["key", "width", "depth"]),
    "cms.initbyprob": (4, 1, 1, {"write", "denyoom"}, ["key", "error", "probability"]),
    "cms.incrby": (-4, 1, 1, {"write", "denyoom", "fast"}, ["key", "items"]),
    "cms.query": (-3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "cms.merge": (-4, 1, 1, {"write", "denyoom", "movablekeys"},
                  ["destination", "numkeys", "source", "weights"]),
    "cms.info": (2, 1, 1, {"readonly", "fast"}, ["key"]),
    "cms.export": (2, 1, 1, {"readonly"}, ["key"]),
    "cms.import": (-3, 1, 1, {"write", "denyoom"}, ["key", "bytes", "type"]),
    "topk.reserve": (-3, 1, 1, {"write", "denyoom"}, ["key", "topk", "params"]),
    "topk.add": (-3, 1, 1, {"write", "denyoom"}, ["key", "item"]),
    "topk.incrby": (-4, 1, 1, {"write", "denyoom"}, ["key", "items"]),
    "topk.query": (-3, 1, 1, {"readonly"}, ["key", "item"]),
    "topk.count": (-3, 1, 1, {"readonly"}, ["key", "item"]),
    "topk.list": (-2, 1, 1, {"readonly"}, ["key", "withcount"]),
    "topk.info": (2, 1, 1, {"readonly", "fast"}, ["key"]),
    "topk.export": (2, 1, 1, {"readonly"}, ["key"]),
    "topk.import": (-3, 1, 1, {"write", "denyoom"}, ["key", "bytes", "type"]),
    "cf.reserve": (-3, 1, 1, {"write", "denyoom"},
                   ["key", "capacity", "bucketsize", "maxiterations", "expansion"]),
    "cf.add": (3, 1, 1, {"write", "denyoom"}, ["key", "item"]),
    "cf.addnx": (3, 1, 1, {"write", "denyoom"}, ["key", "item"]),
    "cf.insert": (-4, 1, 1, {"write", "denyoom"}, ["key", "capacity", "nocreate", "items", "item"]),
    "cf.insertnx": (-4, 1, 1, {"write", "denyoom"},
                    ["key", "capacity", "nocreate", "items", "item"]),
    "cf.exists": (3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "cf.mexists": (-3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "cf.count": (3, 1, 1, {"readonly", "fast"}, ["key", "item"]),
    "cf.del": (3, 1, 1, {"write", "fast"}, ["key", "item"]),
    "cf.compact": (2, 1, 1, {"write"}, ["key"]),
    "cf.scandump": (3, 1, 1, {"readonly"}, ["key", "iterator"]),
    "cf.loadchunk": (4, 1, 1, {"write", "denyoom"}, ["key", "iterator", "data"]),
    "cf.info": (2, 1, 1, {"readonly", "fast"}, ["key"]),
    "cf.debug": (2, 1, 1, {"readonly", "fast"}, ["key"]),
    "cf.export": (2, 1, 1, {"readonly"}, ["key"]),
    "cf.import": (-3, 1, 1, {"write", "denyoom"}, ["key", "bytes", "type"]),
    "tdigest.create": (-2, 1, 1, {"write", "denyoom"}, ["key", "compression"]),
    "tdigest.add": (-3, 1, 1, {"write", "denyoom"}, ["key", "value"]),
    "tdigest.reset": (2, 1, 1, {"write"}, ["key"]),
    "tdigest.merge": (-4, 1, 1, {"write", "denyoom", "movablekeys"},
                      ["destination", "numkeys", "source", "compression", "override"]),
    # the reads that may compress are may-replicate too, which COMMAND INFO
    # does not list (test_module_td.py sees CLIENT PAUSE WRITE hold them)
    "tdigest.min": (2, 1, 1, {"readonly"}, ["key"]),
    "tdigest.max": (2, 1, 1, {"readonly"}, ["key"]),
    "tdigest.quantile": (-3, 1, 1, {"readonly"}, ["key", "quantile"]),
    "tdigest.cdf": (-3, 1, 1, {"readonly"}, ["key", "value"]),
    "tdigest.rank": (-3, 1, 1, {"readonly"}, ["key", "value"]),
    "tdigest.revrank": (-3, 1, 1, {"readonly"}, ["key", "value"]),
    "tdigest.byrank": (-3, 1, 1, {"readonly"}, ["key", "rank"]),
    "tdigest.byrevrank": (-3, 1, 1, {"readonly"}, ["key", "rank"]),
    "tdigest.trimmed_mean": (4, 1, 1, {"readonly"},
                             ["key", "low_cut_quantile", "high_cut_quantile"]),
    "tdigest.info": (2, 1, 1, {"readonly"}, ["key"]),
    "tdigest.compress": (2, 1, 1, {"write"}, ["key"]),
    "tdigest.export": (2, 1, 1, {"readonly"}, ["key"]),
    "tdigest.import": (-3, 1, 1, {"write", "denyoom"}, ["key", "bytes", "type"]),
}


def test_command_docs_and_info(server, raw):
    """COMMAND DOCS has a summary, complexity, the module version it came in
    and the arguments of every command (what redis-cli's hints read);
    COMMAND INFO has its arity, flags and key positions."""
    c = RespClient(server.port)
    for name, (arity, first, last, flags, args) in COMMANDS.items():
        docs = c.call("COMMAND", "DOCS", name).value
        assert len(docs) == 2 and text(docs[0]).lower() == name, docs
        d = pairs(docs[1].value)
        assert text(d["summary"]) and text(d["complexity"]), d
        assert text(d["since"]) in ("0.1.0", "0.2.0", "0.3.0"), d
        assert text(d["group"]) == "module" and text(d["module"]) == "sketch"
        arguments = [pairs(a.value) for a in d["arguments"].value]
        assert [text(a["name"]) for a in arguments] == args, name
        assert text(arguments[0]["type"]) == "key"
        info = c.call("COMMAND", "INFO", name).value[0].value
        assert text(info[0]).lower() == name and plain(info[1]) == arity, name
        assert {text(f) for f in info[2].value} == flags | {"module"}, (name, info[2])
        assert (plain(info[3]), plain(info[4])) == (first, last), name
        specs = [pairs(spec.value) for spec in info[8].value]
        assert specs and all(plain(spec["begin_search"]) for spec in specs), name
        kind = {"RW", "RO", "OW"} & {text(f) for f in specs[0]["flags"].value}
        overwrites = name in ("hll.import", "cms.import", "topk.import", "cf.import",
                              "tdigest.import")
        assert kind == ({"RO"} if "readonly" in flags else {"OW"} if overwrites
                        else {"RW"}), (name, kind)
    c.close()
    # the server checks arity from the description before the module runs:
    # the call is counted as rejected, not as failed
    raw.execute_command("CONFIG", "RESETSTAT")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'bf.add'"):
        raw.execute_command("BF.ADD", "k")
    stats = raw.info("commandstats")["cmdstat_bf.add"]
    assert stats["rejected_calls"] == 1 and stats["calls"] == 0, stats
    # key positions for ACL key patterns: a user limited to keys "u:*"
    raw.execute_command("ACL", "SETUSER", "keys", "on", ">pw", "~u:*", "+@all")
    try:
        c = redis.Redis(port=server.port, username="keys", password="pw")
        assert c.execute_command("BF.ADD", "u:1", "a") == 1
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("BF.ADD", "other", "a")
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("HLL.MERGE", "u:dest", "u:1", "other")
        # CMS.MERGE's sources are the numkeys keys after numkeys, not its weights
        c.execute_command("CMS.INITBYDIM", "u:c", "10", "2")
        assert c.execute_command("CMS.MERGE", "u:c", "1", "u:c", "WEIGHTS", "2") == b"OK"
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("CMS.MERGE", "u:c", "2", "u:c", "other", "WEIGHTS", "1", "1")
        c.execute_command("TDIGEST.CREATE", "u:t")
        assert c.execute_command("TDIGEST.MERGE", "u:t", "1", "u:t", "OVERRIDE") == b"OK"
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("TDIGEST.MERGE", "u:t", "2", "u:t", "other")
        c.close()
    finally:
        raw.execute_command("ACL", "DELUSER", "keys")
