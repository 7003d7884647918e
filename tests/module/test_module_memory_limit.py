# SPDX-License-Identifier: BSD-3-Clause
"""MAX-KEY-MEMORY: the module refuses filters that would exceed the limit
(at creation, at growth, on LOADCHUNK) with an ERR reply instead of taking
the server's memory, and a bad module argument fails the load."""
import time

import pytest
from redis.exceptions import ResponseError

LIMIT = 1 << 20


@pytest.fixture(scope="module")
def limited(module_servers):
    return module_servers.start(module_args=["MAX-KEY-MEMORY", "1mb"])


@pytest.fixture
def lc(limited):
    c = limited.client()
    c.flushall()
    yield c
    c.close()


def assert_alive(server, c):
    assert server.alive(), server.log()[-3000:]
    assert c.ping()


@pytest.mark.parametrize("args", [
    ["BF.RESERVE", "k", "0.01", "1000000000000000000"],
    ["BF.RESERVE", "k", "1e-15", "10000000"],
    ["BF.RESERVE", "k", "0.01", "9223372036854775807"],
    ["BF.RESERVE", "k", "0.01", "1000000000000000000", "NONSCALING"],
    ["BF.RESERVE", "k", "0.001", "1000000", "EXPANSION", "1024"],
    ["BF.INSERT", "k", "CAPACITY", "1000000000000000000", "ITEMS", "a"],
    ["BF.INSERT", "k", "ERROR", "1e-15", "CAPACITY", "10000000", "ITEMS", "a"],
])
def test_absurd_filters_refused(limited, lc, args):
    t0 = time.monotonic()
    with pytest.raises(ResponseError) as e:
        lc.execute_command(*args)
    assert str(e.value).startswith(("the filter would take", "bad ")), str(e.value)
    assert time.monotonic() - t0 < 5
    assert lc.exists("k") == 0
    assert_alive(limited, lc)
    assert int(lc.info("memory")["used_memory"]) < 64 << 20


def test_largest_filter_under_the_limit(limited, lc):
    assert lc.execute_command("BF.RESERVE", "ok", "0.01", "500000") == b"OK"
    size = lc.execute_command("BF.INFO", "ok", "SIZE")[0]
    assert 0 < size <= LIMIT
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        lc.execute_command("BF.RESERVE", "too-big", "0.01", "1000000")
    assert lc.exists("too-big") == 0
    assert_alive(limited, lc)


def test_scaling_filter_stops_growing_at_the_limit(limited, lc, tools):
    lc.execute_command("BF.RESERVE", "grow", "0.01", "1000", "EXPANSION", "4")
    accepted = []
    error = None
    for batch in range(200):
        its = tools.items("g%d" % batch, 5000)
        reply = lc.execute_command("BF.MADD", "grow", *its)
        # the array ends at the first error
        assert len(reply) == len(its) or isinstance(reply[-1], ResponseError)
        for item, answer in zip(its, reply):
            if isinstance(answer, ResponseError):
                error = error or str(answer)
            else:
                assert answer in (0, 1)
                accepted.append((item, answer))
        if error:
            break
    assert error is not None, "the filter grew past 1mb without an error"
    assert "MAX-KEY-MEMORY" in error, error
    size = lc.execute_command("BF.INFO", "grow", "SIZE")[0]
    assert size <= LIMIT
    assert lc.memory_usage("grow") <= LIMIT + 64 * 1024
    filters = lc.execute_command("BF.INFO", "grow", "FILTERS")[0]
    assert filters >= 4
    # nothing acknowledged was lost
    assert all(tools.mexists(lc, "grow", [i for i, _ in accepted]))
    assert lc.execute_command("BF.CARD", "grow") == sum(a for _, a in accepted)
    # it stays at the limit: new items are still refused, old ones answered
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        for i in range(1000):
            lc.execute_command("BF.ADD", "grow", b"brand-new-%d" % i)
    assert lc.execute_command("BF.ADD", "grow", accepted[0][0]) == 0
    assert lc.execute_command("BF.INFO", "grow", "SIZE")[0] == size
    assert_alive(limited, lc)


def test_loadchunk_of_a_too_large_filter_refused(limited, lc, r, tools):
    """A header from a server without the limit describing a 2 MB filter is
    refused by the limited server."""
    r.execute_command("BF.RESERVE", "big", "0.01", "2000000", "NONSCALING")
    it, header = tools.scandump(r, "big")[0]
    with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
        lc.execute_command("BF.LOADCHUNK", "big", it, header)
    assert lc.exists("big") == 0
    assert_alive(limited, lc)


@pytest.mark.parametrize("module_args", [
    ["MAX-KEY-MEMORY", "banana"],
    ["MAX-KEY-MEMORY"],
    ["MAX-KEY-MEMORY", "0"],
    ["MAX-KEY-MEMORY", "5tb"],
    ["MAX-KEY-MEMORY", "-1mb"],
    ["MAX-KEY-MEMORY", "99999999999999999999"],    # > 2^64: must not mean "no limit"
    ["MAX-KEY-MEMORY", "99999999999999999999gb"],
    ["MAX-KEY-MEMORY", "1mb", "EXTRA"],
    ["BOGUS", "1"],
])
def test_bad_module_argument_fails_the_load(servers, module_args):
    s = servers.start(module_args=module_args, wait=False)
    deadline = time.monotonic() + 15
    while s.proc.poll() is None:
        if "Ready to accept connections" in s.log() or time.monotonic() > deadline:
            pytest.fail("redis-server loaded sketch.so with %r and kept running:\n%s"
                        % (module_args, s.log()[-1500:]), pytrace=False)
        time.sleep(0.02)
    rc = s.proc.returncode
    log = s.log()
    assert rc != 0, log[-3000:]
    assert "sketch:" in log, log[-3000:]
    assert "Module" in log and ("not loaded" in log or "failed" in log or "abort" in log), \
        log[-3000:]


@pytest.mark.parametrize("module_args", [
    [], ["MAX-KEY-MEMORY", "1gb"], ["max-key-memory", "512KB"],
    ["MAX-KEY-MEMORY", "1048576"],
])
def test_good_module_arguments_load(servers, module_args):
    s = servers.start(module_args=module_args)
    c = s.client()
    modules = c.execute_command("MODULE", "LIST")
    assert any(b"sketch" in m for m in map(lambda x: b" ".join(
        v if isinstance(v, bytes) else str(v).encode() for v in x), modules)), modules
    assert c.execute_command("BF.ADD", "k", "a") == 1
    if module_args and module_args[1] == "512KB":
        with pytest.raises(ResponseError, match="MAX-KEY-MEMORY"):
            c.execute_command("BF.RESERVE", "x", "0.01", "1000000")
