# SPDX-License-Identifier: BSD-3-Clause
"""Faults a server holding everyone's data must survive: malformed commands
from several clients at once, allocations the system cannot satisfy, and
many clients growing filters against the per-key memory limit.

Each test starts its own redis-server with the module and checks, after the
fault, that the server still answers PING, that its log shows no crash, and
that the data written before the fault reads back identically."""
import random
import resource
import threading

import pytest
import redis

MB = 1 << 20
BF_COMMANDS = ["BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS",
               "BF.CARD", "BF.INFO", "BF.DEBUG", "BF.SCANDUMP", "BF.LOADCHUNK"]
HLL_COMMANDS = ["HLL.RESERVE", "HLL.ADD", "HLL.COUNT", "HLL.ESTIMATE", "HLL.MERGE",
                "HLL.INFO", "HLL.EXPORT", "HLL.IMPORT", "HLL.COMPARE"]
WORDS = ["CAPACITY", "ERROR", "EXPANSION", "NOCREATE", "NONSCALING", "ITEMS", "SIZE",
         "FILTERS", "0", "1", "-1", "2", "4", "18", "19", "1024", "1025", "0.01", "0.5", "1e-15",
         "1e-300", "nan", "inf", "9223372036854775807", "-9223372036854775808",
         "18446744073709551616", "", " ", "1 ", "0x10"]
# Keys the random commands may write: junk of every type, including the
# other type of the module's and core types.
JUNK_KEYS = [b"junk:bf", b"junk:hll", b"junk:str", b"junk:list", b"junk:pfstr", b"junk:new",
             b"junk:\x00\xff"]


def madd(c, key, items):
    """BF.MADD: the items acknowledged (replied 0 or 1) and the error that
    stopped it, if any: the reply array ends with the error of the first item
    that failed, and the items after it are not tried."""
    reply = c.execute_command("BF.MADD", key, *items)
    errors = [a for a in reply if isinstance(a, redis.exceptions.ResponseError)]
    assert len(errors) <= 1 and (not errors or isinstance(reply[-1], type(errors[0])))
    assert len(reply) == len(items) or (errors and len(reply) < len(items))
    acked = items[:len(reply) - len(errors)]
    assert all(a in (0, 1) for a in reply[:len(acked)])
    return acked, (str(errors[0]) if errors else None)


def run_clients(target, count, timeout):
    """Runs target(i) for i in range(count) on as many threads at once, and
    waits up to timeout seconds for each."""
    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)


def run_client_threads(tools, server, body, count, timeout, errors):
    """Runs body(seed, rng, client) for seed in range(count) on as many
    threads at once, each with a client of its own (closed afterwards) and
    rng = random.Random(seed). An exception (a dropped connection or a
    timeout: the server died; or a failed check) goes to errors as
    (seed, repr)."""
    def target(seed):
        c = tools.new_client(server.port, socket_timeout=60)
        try:
            body(seed, random.Random(seed), c)
        except Exception as e:
            errors.append((seed, repr(e)))
        finally:
            c.close()

    run_clients(target, count, timeout)


def assert_healthy(server):
    c = server.client()
    assert c.ping()
    assert server.alive()
    log = server.log()
    for sign in ("crashed by signal", "ASSERTION FAILED", "AddressSanitizer",
                 "runtime error:", "Segmentation fault"):
        assert sign not in log, log[-4000:]


def junk_setup(c):
    c.delete(*JUNK_KEYS)
    c.execute_command("BF.ADD", b"junk:bf", b"x")
    c.execute_command("HLL.ADD", b"junk:hll", b"x")
    c.set(b"junk:str", b"not a sketch")
    c.rpush(b"junk:list", b"a", b"b")
    c.pfadd(b"junk:pfstr", b"a", b"b")


def random_argument(rng, data_keys):
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(JUNK_KEYS)
    if roll < 0.45:
        return rng.choice(WORDS).encode()
    if roll < 0.55 and data_keys:
        return rng.choice(data_keys)
    if roll < 0.995:
        return rng.randbytes(rng.choice([0, 1, 8, 40, 200, 5000]))
    return rng.randbytes(rng.choice([1, 4, 8]) * MB)  # huge


def malformed_command(rng, data_keys):
    """A command that may do anything to junk keys. Data keys appear only as
    arguments after the key position, where they are plain items."""
    name = rng.choice(BF_COMMANDS + HLL_COMMANDS)
    argc = rng.choice([0, 1, 2, 3, 4, 5, 8, 20])
    args = [random_argument(rng, data_keys) for _ in range(argc)]
    if args:
        args[0] = rng.choice(JUNK_KEYS)
    return [name] + args


def read_or_failing_command(rng, bf_keys, hll_keys):
    """Commands on the data keys that must not change them: reads, wrong
    arities, wrong types, refused options."""
    bf, hll = rng.choice(bf_keys), rng.choice(hll_keys)
    choices = [
        ["BF.EXISTS", bf], ["BF.ADD", bf], ["BF.MADD", bf], ["BF.RESERVE", bf, "0.01", "100"],
        ["BF.RESERVE", bf], ["BF.INFO", bf, "NOSUCH"], ["BF.INFO", bf, "CAPACITY", "x"],
        ["BF.SCANDUMP", bf], ["BF.SCANDUMP", bf, "-5"], ["BF.LOADCHUNK", bf, "x", "y"],
        ["BF.LOADCHUNK", bf, "0", "y"], ["BF.INSERT", bf, "CAPACITY", "0", "ITEMS", "a"],
        ["BF.INSERT", bf, "ITEMS"], ["BF.INSERT", bf, "ERROR", "2", "ITEMS", "a"],
        ["BF.INSERT", bf, "EXPANSION", "-1", "ITEMS", "a"], ["BF.INSERT", bf, "BOGUS"],
        ["BF.ADD", hll, "item"], ["BF.MADD", hll, "a", "b"], ["BF.INSERT", hll, "ITEMS", "a"],
        ["BF.LOADCHUNK", hll, "1", "x"], ["BF.RESERVE", hll, "0.01", "10"],
        ["HLL.ADD", bf, "a"], ["HLL.MERGE", bf, hll], ["HLL.MERGE", hll, bf],
        ["HLL.RESERVE", hll, "14"], ["HLL.RESERVE", hll, "99"], ["HLL.IMPORT", hll],
        ["HLL.IMPORT", hll, rng.randbytes(100)], ["HLL.IMPORT", hll, b"HYLL" + rng.randbytes(20)],
        ["HLL.IMPORT", bf, b"SKHL"], ["HLL.COUNT", hll, bf], ["HLL.COUNT"],
        ["HLL.INFO", hll, "extra"], ["HLL.EXPORT"], ["HLL.ESTIMATE", bf],
        ["BF.CARD", bf, bf], ["BF.MEXISTS", bf], ["BF.EXISTS", bf, rng.randbytes(2 * MB)],
        ["HLL.COUNT", hll, "junk:str"], ["HLL.MERGE", hll, "junk:list"],
        ["HLL.COMPARE", hll, bf], ["HLL.COMPARE", hll, "junk:list"], ["HLL.COMPARE", hll],
    ]
    return rng.choice(choices)


@pytest.fixture
def loaded(servers, tools):
    server = servers.start(module_args=["MAX-KEY-MEMORY", "64mb"])
    c = server.client()
    data = tools.populate(c, seed=61, prefix="data:")
    before = tools.snapshot_of(c, data)
    return server, data, before


def test_malformed_commands_from_many_clients(loaded, tools):
    server, data, before = loaded
    junk_setup(server.client())
    data_keys = [k.encode() for k in data["bf"] + data["hll"]]
    errors = []
    counts = {"sent": 0, "errors": 0}
    lock = threading.Lock()

    def client_loop(seed, rng, c):
        for i in range(250):
            if i % 2:
                cmd = malformed_command(rng, data_keys)
            else:
                cmd = read_or_failing_command(rng, data["bf"], data["hll"])
            try:
                c.execute_command(*cmd)
            except redis.exceptions.ResponseError:
                with lock:
                    counts["errors"] += 1
            with lock:
                counts["sent"] += 1

    run_client_threads(tools, server, client_loop, 6, 600, errors)
    assert errors == []
    assert counts["sent"] == 6 * 250
    assert counts["errors"] > 6 * 250 // 3   # most of them are refused
    assert_healthy(server)
    c = server.client()
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))
    tools.assert_all_present(c, data)


def test_data_keys_survive_every_refused_command(loaded, tools):
    # The same, one client, every refusal in turn: each must be an error
    # (or a read), and none may change a data key.
    server, data, before = loaded
    c = server.client()
    junk_setup(c)
    rng = random.Random(5)
    for _ in range(400):
        cmd = read_or_failing_command(rng, data["bf"], data["hll"])
        try:
            c.execute_command(*cmd)
        except redis.exceptions.ResponseError:
            pass
    assert_healthy(server)
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))


def test_huge_arguments(servers, tools):
    server = servers.start(module_args=["MAX-KEY-MEMORY", "64mb"])
    c = server.client()
    c.execute_command("BF.ADD", "kept", "item")
    huge = random.Random(3).randbytes(32 * MB)
    assert c.execute_command("BF.ADD", "bf", huge) == 1
    assert c.execute_command("BF.EXISTS", "bf", huge) == 1
    assert c.execute_command("HLL.ADD", "hll", huge) == 1
    assert c.execute_command("HLL.COUNT", "hll") == 1
    for cmd in (["BF.LOADCHUNK", "junk", "1", huge], ["BF.LOADCHUNK", "junk", str(len(huge) + 1), huge],
                ["HLL.IMPORT", "junk", huge], ["HLL.IMPORT", "junk", b"HYLL" + huge],
                ["HLL.IMPORT", "junk", b"SKHL" + huge], ["BF.RESERVE", "junk", huge, "10"],
                ["BF.INSERT", "junk", "CAPACITY", huge, "ITEMS", "a"]):
        with pytest.raises(redis.exceptions.ResponseError):
            c.execute_command(*cmd)
    assert c.exists("junk") == 0
    assert c.execute_command("BF.EXISTS", "kept", "item") == 1
    assert_healthy(server)


# ---------------------------------------------------------------------------
# Allocations the system refuses
# ---------------------------------------------------------------------------

ADDRESS_SPACE = 1536 * MB


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def start_address_limited(servers, sanitized_server):
    """A server whose key limit (64 GB) lets filters through and whose
    address space (1.5 GB) does not."""
    if sanitized_server:
        # AddressSanitizer maps terabytes of shadow memory at start-up: it
        # cannot run under an address-space limit. The unsanitized run of
        # the suite covers the tests that need one.
        pytest.skip("an address-space limit cannot apply to a server with ASan preloaded")
    return servers.start(module_args=["MAX-KEY-MEMORY", "64gb"],
                         preexec_fn=limit_address_space)


def test_allocation_refused_by_the_system_is_an_error(servers, tools, sanitized_server):
    server = start_address_limited(servers, sanitized_server)
    c = server.client()
    data = tools.populate(c, seed=62)
    before = tools.snapshot_of(c, data)
    for cmd in (["BF.RESERVE", "huge", "0.01", "3000000000"],
                ["BF.RESERVE", "huge", "0.0001", "1000000000", "NONSCALING"],
                ["BF.INSERT", "huge", "CAPACITY", "2000000000", "ITEMS", "a"]):
        with pytest.raises(redis.exceptions.ResponseError) as e:
            c.execute_command(*cmd)
        assert "out of memory" in str(e.value).lower() or "memory" in str(e.value), e.value
        assert c.exists("huge") == 0
    # A scaling filter whose next layer (1.0e9 items, about 1.7 GB) cannot be
    # had: the add that needs it fails with an error, and the filter keeps
    # every item it acknowledged.
    c.execute_command("BF.RESERVE", "grow", "0.01", "1000000", "EXPANSION", "1024")
    acknowledged = []
    failed = None
    for i in range(400):
        acked, failed = madd(c, "grow", [b"g%d-%d" % (i, j) for j in range(5000)])
        acknowledged += acked
        if failed is not None:
            break
    assert failed is not None and "out of memory" in failed, failed
    assert c.execute_command("BF.INFO", "grow", "FILTERS") in (1, [1])
    assert all(tools.mexists(c, "grow", acknowledged))
    assert_healthy(server)
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))


# ---------------------------------------------------------------------------
# The per-key limit under load
# ---------------------------------------------------------------------------

def test_key_memory_limit_holds_under_concurrent_growth(servers, tools):
    limit = 128 * 1024
    server = servers.start(module_args=["MAX-KEY-MEMORY", "128kb"])
    c = server.client()
    for k in range(3):
        c.execute_command("BF.RESERVE", "shared:%d" % k, "0.01", "1000", "EXPANSION", "2")
    refused = [0]
    acknowledged = {k: [] for k in range(3)}
    errors = []
    lock = threading.Lock()

    def grower(seed, rng, cl):
        for i in range(80):
            k = rng.randrange(3)
            part = [b"%d-%d-%d" % (seed, i, j) for j in range(1000)]
            acked, failed = madd(cl, "shared:%d" % k, part)
            with lock:
                acknowledged[k] += acked
                if failed is not None:
                    assert "MAX-KEY-MEMORY" in failed, failed
                    refused[0] += 1

    run_client_threads(tools, server, grower, 4, 600, errors)
    assert errors == []
    assert refused[0] > 0, "the filters never reached the limit"
    for k in range(3):
        key = "shared:%d" % k
        size = c.execute_command("BF.INFO", key, "SIZE")
        size = size[0] if isinstance(size, list) else size
        assert size <= limit, (key, size)
        assert c.memory_usage(key) <= limit + 64 * 1024
        assert all(tools.mexists(c, key, acknowledged[k]))
    # over the limit at once, from several clients: always refused
    def reserve_too_large(seed):
        cl = tools.new_client(server.port)
        try:
            for i in range(20):
                try:
                    cl.execute_command("BF.RESERVE", "big:%d:%d" % (seed, i), "0.001", "10000000")
                    errors.append("a filter over the limit was created")
                except redis.exceptions.ResponseError as e:
                    if "MAX-KEY-MEMORY" not in str(e):
                        errors.append(str(e))
        finally:
            cl.close()

    run_clients(reserve_too_large, 4, timeout=120)
    assert errors == []
    assert c.keys("big:*") == []
    assert_healthy(server)


# ---------------------------------------------------------------------------
# The documented limits (docs/limits.md), at and just past each
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("args,ok", [
    (["BF.RESERVE", "k", "1e-15", "10"], True),
    (["BF.RESERVE", "k", "9e-16", "10"], False),
    (["BF.RESERVE", "k", "0.999", "10"], True),     # served at 0.5
    (["BF.RESERVE", "k", "1", "10"], False),
    (["BF.RESERVE", "k", "0.01", "1", "EXPANSION", "32768"], True),
    (["BF.RESERVE", "k", "0.01", "1", "EXPANSION", "32769"], False),
    (["BF.RESERVE", "k", "0.01", "0"], False),
    (["BF.RESERVE", "k", "0.01", "9223372036854775807"], False),
    (["HLL.RESERVE", "k", "4"], True),
    (["HLL.RESERVE", "k", "18"], True),
    (["HLL.RESERVE", "k", "3"], False),
    (["HLL.RESERVE", "k", "19"], False),
], ids=lambda x: " ".join(x) if isinstance(x, list) else str(x))
def test_argument_limits(r, args, ok):
    if ok:
        assert r.execute_command(*args) in (b"OK", True)
    else:
        with pytest.raises(redis.exceptions.ResponseError):
            r.execute_command(*args)
        assert r.exists("k") == 0


def test_a_rate_above_one_half_is_served_at_one_half(r):
    r.execute_command("BF.RESERVE", "half", "0.5", "1000", "NONSCALING")
    r.execute_command("BF.RESERVE", "more", "0.999", "1000", "NONSCALING")
    assert (r.execute_command("BF.INFO", "more", "SIZE")
            == r.execute_command("BF.INFO", "half", "SIZE"))


def test_a_scaling_filter_grows_past_64_layers(r):
    # capacity 1 and expansion 1: every item past the first of each layer
    # starts a new one, with no limit but the key's memory; the filter holds
    # everything it acknowledged
    r.execute_command("BF.RESERVE", "chain", "0.01", "1", "EXPANSION", "1")
    acked = [b"c%d" % i for i in range(200)]
    for item in acked:
        r.execute_command("BF.ADD", "chain", item)
    filters = r.execute_command("BF.INFO", "chain", "FILTERS")
    assert (filters[0] if isinstance(filters, list) else filters) > 64
    assert all(r.execute_command("BF.MEXISTS", "chain", *acked))


def test_a_save_needs_no_memory(servers, tools, sanitized_server):
    # Filters fill the address space until one more cannot be had; a SAVE
    # then still writes everything (it reads filters into a buffer on the
    # stack), and the file loads back whole.
    server = start_address_limited(servers, sanitized_server)
    c = server.client()
    data = tools.populate(c, seed=63)
    before = tools.snapshot_of(c, data)
    filled = []
    for i in range(100):
        try:
            c.execute_command("BF.RESERVE", "fill:%d" % i, "0.01", "50000000", "NONSCALING")
        except redis.exceptions.ResponseError as e:
            assert "memory" in str(e), e
            break
        c.execute_command("BF.ADD", "fill:%d" % i, "member")
        filled.append("fill:%d" % i)
    else:
        pytest.fail("the address-space limit never refused a filter")
    assert len(filled) >= 5
    assert c.save()
    server.stop()
    server.preexec_fn = None
    server.start()
    c = server.client()
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))
    assert all(c.execute_command("BF.EXISTS", k, "member") == 1 for k in filled)
