# SPDX-License-Identifier: BSD-3-Clause
"""What a write leaves behind, on the primary and on everything that copies
it: a key in the middle of a BF.LOADCHUNK restore is carried as unfinished
by every copy (full sync, AOF rewrite, DEBUG RELOAD, COPY, DUMP/RESTORE) and
takes nothing but its next chunks; a write replicates what it did (the items
it added before an error, the parameters of a filter it created), so that
primary and replica digests are equal after every command, through MULTI and
EVAL too; and a key's time to live is kept as Redis's own commands keep it.
"""
import pytest
import redis

RESTORING = "the filter is being restored"
ITEMS = 20000


def pair(servers, tools, module_args=("MAX-KEY-MEMORY", "64mb"), options=None):
    """A primary and a replica of it, linked."""
    opts = {"repl-diskless-sync-delay": 0}
    opts.update(options or {})
    primary = servers.start(module_args=module_args, options=opts)
    replica = servers.start(module_args=module_args, options=opts,
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    return primary, replica


def digest(c, key):
    return c.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def assert_same(p, rc, keys):
    """The replica has caught up and holds the same values as the primary."""
    assert p.execute_command("WAIT", 1, 10000) == 1
    for k in keys:
        assert digest(rc, k) == digest(p, k), k


def source_pieces(c, tools, n=ITEMS):
    """The SCANDUMP pieces of a filter of n items in several pieces."""
    c.execute_command("BF.RESERVE", "source", 0.001, n)
    tools.madd(c, "source", tools.items("i", n))
    pieces = tools.scandump(c, "source")
    c.delete("source")
    return pieces


def split(pieces):
    """Header and the first chunks, then the rest (the last chunk included)."""
    half = len(pieces) // 2
    assert half >= 2
    return pieces[:half], pieces[half:]


def small_pieces(c, tools, n=ITEMS):
    """Pieces of at most 4 KB, so that a restore takes many chunks (SCANDUMP
    sends up to 16 MB at once)."""
    pieces = source_pieces(c, tools, n)
    out = [pieces[0]]
    for it, data in pieces[1:]:
        start = it - 1 - len(data)
        for at in range(0, len(data), 4096):
            part = data[at:at + 4096]
            out.append((start + at + len(part) + 1, part))
    return out


def assert_all_present(c, tools, key, n=ITEMS):
    found = tools.mexists(c, key, tools.items("i", n))
    assert all(found), "%d of %d items lost" % (len(found) - sum(map(bool, found)), n)


def assert_refuses_all_but_chunks(c, key, replica=False):
    """No query, and no write but the restore's (a replica takes none)."""
    before = digest(c, key)
    writes = [["BF.ADD", key, "x"], ["BF.MADD", key, "x", "y"], ["BF.INSERT", key, "ITEMS", "x"]]
    for cmd in ([] if replica else writes) + [["BF.EXISTS", key, "x"], ["BF.MEXISTS", key, "x"],
                                              ["BF.SCANDUMP", key, 0]]:
        with pytest.raises(redis.ResponseError, match=RESTORING):
            c.execute_command(*cmd)
    assert digest(c, key) == before


# ---------------------------------------------------------------- unfinished restores

def test_a_key_mid_restore_takes_only_its_chunks(r, tools):
    c = r
    first, rest = split(small_pieces(c, tools))
    tools.loadchunks(c, "k", first)
    assert_refuses_all_but_chunks(c, "k")
    assert c.execute_command("BF.CARD", "k") > ITEMS * 0.99    # metadata answers
    tools.loadchunks(c, "k", rest)
    assert_all_present(c, tools, "k")
    assert c.execute_command("BF.ADD", "k", "new") == 1


def test_full_sync_mid_restore_carries_the_restore(servers, tools):
    primary = servers.start(options={"repl-diskless-sync-delay": 0})
    p = primary.client()
    first, rest = split(small_pieces(p, tools))
    tools.loadchunks(p, "k", first)
    replica = servers.start(options={"repl-diskless-sync-delay": 0},
                            extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rc = replica.client()
    tools.wait_for(lambda: tools.link_up(rc), timeout=30, what="replica link up")
    assert_same(p, rc, ["k"])
    assert_refuses_all_but_chunks(rc, "k", replica=True)
    tools.loadchunks(p, "k", rest)
    assert_same(p, rc, ["k"])
    assert_all_present(rc, tools, "k")


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_rewrite_mid_restore_then_crash(servers, tools, preamble):
    s = servers.start(options={"appendonly": "yes", "appendfsync": "always",
                               "aof-use-rdb-preamble": preamble})
    c = s.client()
    first, rest = split(small_pieces(c, tools))
    tools.loadchunks(c, "k", first)
    c.execute_command("BGREWRITEAOF")
    tools.wait_for(lambda: tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                   and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0",
                   timeout=60, what="the AOF rewrite")
    tools.loadchunks(c, "k", rest)
    expected = digest(c, "k")
    s.kill9()
    s.start()
    c = s.client()
    assert digest(c, "k") == expected
    assert_all_present(c, tools, "k")


def test_debug_reload_copy_and_dump_mid_restore(r, tools):
    c = r
    first, rest = split(small_pieces(c, tools))
    tools.loadchunks(c, "k", first)
    before = digest(c, "k")
    assert c.execute_command("DEBUG", "RELOAD") in (b"OK", True)
    assert digest(c, "k") == before
    assert c.execute_command("COPY", "k", "copy") == 1
    payload = c.dump("k")
    c.restore("restored", 0, payload)
    for key in ("k", "copy", "restored"):
        assert digest(c, key) == before
        assert_refuses_all_but_chunks(c, key)
        tools.loadchunks(c, key, rest)
        assert_all_present(c, tools, key)


# ---------------------------------------------------------------- what replicates

def full_filter_writes(p):
    """Writes that a fixed filter of capacity 100 cuts short."""
    p.execute_command("BF.RESERVE", "fixed", 0.01, 100, "NONSCALING")
    return [["BF.MADD", "fixed"] + ["m%d" % i for i in range(150)],
            ["BF.INSERT", "fixed", "ITEMS"] + ["n%d" % i for i in range(50)]]


def test_writes_cut_short_replicate_what_they_applied(servers, tools):
    """A BF.MADD or BF.INSERT stopped by MAX-KEY-MEMORY or a full fixed filter
    replicates the items it added, alone, by command, in MULTI and in EVAL;
    an AOF replay (with its own, larger limit) adds the same."""
    primary, replica = pair(servers, tools, module_args=("MAX-KEY-MEMORY", "2kb"),
                            options={"appendonly": "yes", "appendfsync": "always"})
    p, rc = primary.client(), replica.client()
    p.execute_command("BF.RESERVE", "grow", 0.01, 50)
    writes = full_filter_writes(p)
    writes.append(["BF.MADD", "grow"] + ["g%d" % i for i in range(2000)])
    writes.append(["BF.INSERT", "grow2", "CAPACITY", 50, "ITEMS"]
                  + ["h%d" % i for i in range(2000)])
    for n, cmd in enumerate(writes):
        reply = p.execute_command(*cmd)
        assert isinstance(reply[-1], redis.ResponseError), cmd[:2]
        assert_same(p, rc, [cmd[1]])
        # the same write again, through MULTI and through EVAL
        again = [cmd[0], "%s:multi" % cmd[1]] + cmd[2:]
        if cmd[1] == "fixed" and not p.exists(again[1]):
            p.execute_command("BF.RESERVE", again[1], 0.01, 100, "NONSCALING")
        pipe = p.pipeline(transaction=True)
        pipe.execute_command(*again)
        pipe.execute(raise_on_error=False)
        assert_same(p, rc, [again[1]])
        script = [cmd[0], "%s:eval" % cmd[1]] + cmd[2:]
        if cmd[1] == "fixed" and not p.exists(script[1]):
            p.execute_command("BF.RESERVE", script[1], 0.01, 100, "NONSCALING")
        p.eval("return redis.pcall(unpack(ARGV))", 0, *script)
        assert_same(p, rc, [script[1]])
    keys = [k.decode() for k in p.keys("*")]
    cards = {k: p.execute_command("BF.CARD", k) for k in keys}
    assert all(cards[k] == rc.execute_command("BF.CARD", k) for k in keys)
    primary.kill9()
    primary.module_args = ["MAX-KEY-MEMORY", "64mb"]
    primary.start()
    p = primary.client()
    assert {k: p.execute_command("BF.CARD", k) for k in keys} == cards


def test_keys_made_from_the_defaults_carry_their_parameters(servers, tools):
    """CONFIG SET of the defaults is the primary's alone: a key that BF.ADD,
    BF.MADD or BF.INSERT creates reaches the replica with the parameters it
    was made with."""
    primary, replica = pair(servers, tools)
    p, rc = primary.client(), replica.client()
    p.config_set("sketch.bf-error-rate", "0.00005")
    p.config_set("sketch.bf-initial-size", "5000")
    p.config_set("sketch.bf-expansion-factor", "0")
    assert rc.config_get("sketch.bf-initial-size")["sketch.bf-initial-size"] == "100"
    p.execute_command("BF.ADD", "a", "x")
    p.execute_command("BF.MADD", "b", "x", "y")
    p.execute_command("BF.INSERT", "c", "ITEMS", "x")
    p.execute_command("BF.INSERT", "d", "CAPACITY", 7, "ERROR", 0.3, "EXPANSION", 3,
                      "ITEMS", "x")
    assert_same(p, rc, ["a", "b", "c", "d"])
    assert p.execute_command("BF.INFO", "a", "CAPACITY") == [5000]
    assert rc.execute_command("BF.INFO", "a", "CAPACITY") == [5000]
    assert rc.execute_command("BF.INFO", "a", "EXPANSION") == [None]


def test_every_write_command_leaves_equal_digests(servers, tools):
    primary, replica = pair(servers, tools)
    p, rc = primary.client(), replica.client()
    pieces = source_pieces(p, tools, 3000)
    p.pfadd("pf", *tools.items("p", 1000))
    p.execute_command("HLL.ADD", "exported", "x")
    writes = [
        ["BF.RESERVE", "bf", 0.01, 1000], ["BF.ADD", "bf", "a"],
        ["BF.MADD", "bf", "b", "c"], ["BF.INSERT", "bf", "ITEMS", "d"],
        ["BF.INSERT", "bf2", "NONSCALING", "CAPACITY", 10, "ITEMS", "a"],
        ["HLL.RESERVE", "h", 14], ["HLL.ADD", "h", "a", "b"], ["HLL.ADD", "h2", "x"],
        ["HLL.MERGE", "h3", "h", "h2"], ["HLL.MERGE", "pf", "h"],
        ["HLL.IMPORT", "h4", p.execute_command("HLL.EXPORT", "exported")],
    ] + [["BF.LOADCHUNK", "chunked", it, data] for it, data in pieces]
    for cmd in writes:
        p.execute_command(*cmd)
        assert_same(p, rc, [cmd[1]])


def test_merge_keeps_the_destinations_ttl(r, tools):
    c = r
    c.execute_command("HLL.ADD", "src", "a", "b")
    c.execute_command("HLL.ADD", "sketch", "c")
    c.pfadd("native", "d")
    c.pfadd("pfnative", "d")
    for key in ("sketch", "native", "pfnative"):
        c.expire(key, 1000)
    c.execute_command("HLL.MERGE", "sketch", "src")
    c.execute_command("HLL.MERGE", "native", "src")
    c.pfmerge("pfnative", "native")
    for key in ("sketch", "native", "pfnative"):
        assert 990 < c.ttl(key) <= 1000, key
    c.execute_command("HLL.ADD", "sketch", "e")
    assert 990 < c.ttl("sketch") <= 1000
    c.execute_command("BF.RESERVE", "bf", 0.01, 10)
    c.expire("bf", 1000)
    tools.madd(c, "bf", tools.items("g", 500))           # grows several layers
    assert c.execute_command("BF.INFO", "bf", "FILTERS")[0] > 1
    assert 990 < c.ttl("bf") <= 1000


# ---------------------------------------------------------------- errors that say what is wrong

def test_the_limit_error_names_the_whole_cost(servers):
    """BF.RESERVE's refusal names what the filter would take in all: a limit
    of exactly that many bytes takes it, one byte less does not."""
    c = servers.start().client()
    for capacity, rate in ((2, 0.01), (100, 0.01), (100000, 0.001)):
        c.config_set("sketch.max-key-memory", 64)
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("BF.RESERVE", "k", rate, capacity)
        need = int(str(e.value).split("would take ")[1].split(" bytes")[0])
        c.config_set("sketch.max-key-memory", need - 1)
        with pytest.raises(redis.ResponseError, match="would take %d bytes" % need):
            c.execute_command("BF.RESERVE", "k", rate, capacity)
        c.config_set("sketch.max-key-memory", need)
        assert c.execute_command("BF.RESERVE", "k", rate, capacity) == b"OK"
        assert c.execute_command("BF.INFO", "k", "SIZE") == [need]
        c.delete("k")


def test_restore_over_the_limit_logs_the_limit(servers, tools):
    s = servers.start(module_args=("MAX-KEY-MEMORY", "1mb"))
    c = s.client()
    c.config_set("sketch.max-key-memory", "64mb")
    c.execute_command("BF.RESERVE", "big", 0.001, 1000000)
    payload = c.dump("big")
    c.config_set("sketch.max-key-memory", "1mb")
    with pytest.raises(redis.ResponseError):       # the server's own reply
        c.restore("copy", 0, payload)
    assert "RESTORE refused: the filter would take more than the module's MAX-KEY-MEMORY " \
           "of 1048576 bytes" in s.log()
    assert "bad Bloom filter header" not in s.log()


def test_rates_are_read_as_redis_reads_numbers(r):
    """CONFIG SET reads the default rate as BF.RESERVE reads a rate (the
    server's own number parser): surrounding spaces are refused by both."""
    for text in (" 0.1", "0.1 ", "0.1x", ""):
        with pytest.raises(redis.ResponseError):
            r.config_set("sketch.bf-error-rate", text)
        with pytest.raises(redis.ResponseError, match="bad error rate"):
            r.execute_command("BF.RESERVE", "k", text, 10)
    assert r.config_get("sketch.bf-error-rate")["sketch.bf-error-rate"] == "0.01"
    r.config_set("sketch.bf-error-rate", "0.02")
    assert r.config_get("sketch.bf-error-rate")["sketch.bf-error-rate"] == "0.02"
    r.config_set("sketch.bf-error-rate", "0.01")
