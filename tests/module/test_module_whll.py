# SPDX-License-Identifier: BSD-3-Clause
"""WHLL.*: sliding-window HyperLogLogs in keys, against what the library
promises (include/sketch/window_hll.h): the count of a window is the plain
HyperLogLog's of the window's items, so at precision 14 it equals PFCOUNT of
a native key holding exactly those items; a window of w ms ending at T covers
the ceil(w / resolution) slots ending with T's; adds may come late by up to
the horizon, and older ones are dropped. Replies in RESP2 and RESP3, errors,
WRONGTYPE, MERGE, EXPORT and IMPORT; test_module_whll_server.py has what the
server's machinery does with the keys."""
import random

import pytest
from redis.exceptions import ResponseError

from resp import RespClient, plain

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
HOUR = 3600 * 1000
INFO_FIELDS = ["Precision", "Horizon", "Resolution", "Newest", "Pairs", "Memory"]


def info(c, key):
    reply = c.execute_command("WHLL.INFO", key)
    names = [x.decode() for x in reply[0::2]]
    assert names == INFO_FIELDS, names
    return dict(zip(names, reply[1::2]))


def add_events(c, key, events, cmd="WHLL.ADDAT"):
    """events: (time, item) pairs, sent in their order, one ADDAT per run of
    one time. Returns the replies."""
    pipe = c.pipeline(transaction=False)
    i = 0
    while i < len(events):
        j = i
        while j < len(events) and events[j][0] == events[i][0] and j - i < 1000:
            j += 1
        pipe.execute_command(cmd, key, events[i][0], *[x for _, x in events[i:j]])
        i = j
    return pipe.execute()


def window_items(events, window, end, resolution):
    """The items of the window of `window` ms ending at `end`: those whose
    slot is among the ceil(window / resolution) slots ending with end's."""
    slots = -(-window // resolution)
    hi = end // resolution
    return {x for t, x in events if hi - slots < t // resolution <= hi}


def pfcount_of(c, its):
    c.delete("pf:window")
    its = sorted(its)
    for i in range(0, len(its), 5000):
        c.pfadd("pf:window", *its[i:i + 5000])
    return c.pfcount("pf:window")


def timeline(seed, n, span, pool, late=0.2):
    """n events over [0, span) ms: steady traffic, two bursts and a quiet
    hour, with a share `late` of them sent out of order (up to 30 min late,
    within any horizon used here)."""
    rng = random.Random(seed)
    events = []
    quiet = (span // 3, span // 3 + HOUR)
    while len(events) < n:
        kind = rng.random()
        if kind < 0.2:                                   # a burst
            t = rng.choice((span // 5, 2 * span // 3)) + rng.randrange(60000)
        else:
            t = rng.randrange(span)
        if quiet[0] <= t < quiet[1]:
            continue
        events.append((t, b"src:%d" % rng.randrange(pool)))
    events.sort()
    # some events arrive late: moved later in the sending order
    out = list(events)
    for i in range(len(out)):
        if rng.random() < late:
            j = min(len(out) - 1, i + rng.randrange(1, 200))
            if out[j][0] - out[i][0] < HOUR // 2:
                out[i], out[j] = out[j], out[i]
    return out


def observe(c, key, times, windows):
    """All a client sees of a sketch: its info (but the memory and pair
    count, which a reload tightens), its bytes and counts at fixed times."""
    i = info(c, key)
    del i["Memory"], i["Pairs"]
    counts = [c.execute_command("WHLL.COUNT", key, w, "TIME", t) for t in times
              for w in windows]
    return i, c.execute_command("WHLL.EXPORT", key), counts


def server_version(c):
    return tuple(int(x) for x in c.info("server")["redis_version"].split(".")[:3])


# --------------------------------------------------------------------------
# the windows
# --------------------------------------------------------------------------

@pytest.mark.parametrize("resolution", [1, 1000, 60000])
def test_count_equals_pfcount_of_the_window(r, resolution):
    """At precision 14 the count of every window is PFCOUNT of a native key
    holding exactly the window's items, out-of-order adds included."""
    span = 4 * HOUR
    r.execute_command("WHLL.RESERVE", "w", 2 * HOUR, "RESOLUTION", resolution)
    events = timeline(resolution, 6000, span, 4000)
    add_events(r, "w", events)
    newest = max(t for t, _ in events)
    assert info(r, "w")["Newest"] == newest // resolution * resolution
    ends = [newest, newest + 1, newest + 59999, newest + 10 * 60000, newest + HOUR]
    windows = [1, 999, 1000, 60000, 10 * 60000, HOUR - 1, HOUR, 2 * HOUR]
    checked = 0
    for end in ends:
        for window in windows:
            expected = pfcount_of(r, window_items(events, window, end, resolution))
            got = r.execute_command("WHLL.COUNT", "w", window, "TIME", end)
            assert got == expected, (end, window)
            checked += expected > 0
    assert checked > 20
    # small windows are near exact
    small = window_items(events, 60000, newest, resolution)
    assert abs(r.execute_command("WHLL.COUNT", "w", 60000, "TIME", newest) - len(small)) <= \
        max(2, 0.01 * len(small))


def test_out_of_order_adds_within_the_horizon(r):
    """The sketch does not depend on the order of the adds: the same events
    sent in time order, in reverse and shuffled give the same bytes."""
    events = timeline(5, 3000, HOUR, 1500, late=0)
    orders = [events, events[::-1], random.Random(1).sample(events, len(events))]
    for name, order in zip(("sorted", "reversed", "shuffled"), orders):
        r.execute_command("WHLL.RESERVE", name, HOUR, "RESOLUTION", 1000)
        for t, x in order:
            r.execute_command("WHLL.ADDAT", name, t, x)
    blobs = {r.execute_command("WHLL.EXPORT", k) for k in ("sorted", "reversed", "shuffled")}
    assert len(blobs) == 1
    newest = max(t for t, _ in events)
    for window in (1000, 60000, HOUR):
        expected = pfcount_of(r, window_items(events, window, newest, 1000))
        assert r.execute_command("WHLL.COUNT", "reversed", window, "TIME", newest) == expected


def test_too_old_is_dropped(r):
    r.execute_command("WHLL.RESERVE", "w", 10000, "RESOLUTION", 1000)
    assert r.execute_command("WHLL.ADDAT", "w", 100000, "now") == 1
    before = r.execute_command("WHLL.EXPORT", "w")
    # the horizon holds the 10 slots 91..100: slot 90 is past it
    assert r.execute_command("WHLL.ADDAT", "w", 90999, "old", "older") == 0
    assert r.execute_command("WHLL.ADDAT", "w", 0, "ancient") == 0
    assert r.execute_command("WHLL.EXPORT", "w") == before
    assert r.execute_command("WHLL.ADDAT", "w", 91000, "late") == 1
    assert r.execute_command("WHLL.COUNT", "w", 10000, "TIME", 100000) == 2
    assert r.execute_command("WHLL.COUNT", "w", 9000, "TIME", 100000) == 1
    # a newer time moves the horizon: what it leaves behind is not counted
    assert r.execute_command("WHLL.ADDAT", "w", 105500, "new") == 1
    assert r.execute_command("WHLL.COUNT", "w", 10000, "TIME", 105500) == 2
    assert r.execute_command("WHLL.COUNT", "w", 10000, "TIME", 200000) == 0
    # an element already held in its slot changes nothing
    assert r.execute_command("WHLL.ADDAT", "w", 105000, "new") == 0


def test_add_takes_the_server_clock(r):
    seconds, micros = r.time()
    before = seconds * 1000 + micros // 1000
    assert r.execute_command("WHLL.ADD", "w", "a", "b", "c") == 1
    seconds, micros = r.time()
    after = seconds * 1000 + micros // 1000
    i = info(r, "w")
    assert (i["Precision"], i["Horizon"], i["Resolution"]) == (14, 86400000, 1000)
    assert before // 1000 * 1000 <= i["Newest"] <= after
    assert i["Pairs"] == 3
    assert r.execute_command("WHLL.ADD", "w", "a") in (0, 1)   # 1 only in a new second
    # no TIME: the window ends now; with TIME, at the newest time added, which
    # the second add moved if the clock passed a second between the two
    assert r.execute_command("WHLL.COUNT", "w", 60000) == 3
    newest = info(r, "w")["Newest"]
    assert i["Newest"] <= newest <= i["Newest"] + 60000
    assert r.execute_command("WHLL.COUNT", "w", 60000, "TIME", newest) == 3
    # ADDAT creates a missing key with the same defaults
    assert r.execute_command("WHLL.ADDAT", "at", 5000, "x") == 1
    assert info(r, "at")["Horizon"] == 86400000


def test_count_without_time_ends_at_the_newest_time(r):
    """Times added from the future: a count without TIME ends at the newest
    slot, the earliest end a count may ask."""
    seconds, _ = r.time()
    future = (seconds + 3600) * 1000
    r.execute_command("WHLL.RESERVE", "w", HOUR, "RESOLUTION", 1000)
    r.execute_command("WHLL.ADDAT", "w", future, *[b"f%d" % i for i in range(100)])
    assert r.execute_command("WHLL.COUNT", "w", 1000) == 100
    with pytest.raises(ResponseError, match="^bad time: windows end no earlier than the "
                                            "newest time added, %d$" % future):
        r.execute_command("WHLL.COUNT", "w", 1000, "TIME", future - 1)
    assert r.execute_command("WHLL.COUNT", "w", 1000, "TIME", future + 999) == 100
    assert r.execute_command("WHLL.COUNT", "w", 1000, "TIME", future + 1000) == 0
    assert r.execute_command("WHLL.COUNT", "missing", 1000) == 0
    assert r.execute_command("WHLL.COUNT", "missing", 1000, "TIME", 0) == 0


def test_reserve_and_info(r):
    assert r.execute_command("WHLL.RESERVE", "a", 600000) == b"OK"
    assert info(r, "a") == {"Precision": 14, "Horizon": 600000, "Resolution": 1000,
                            "Newest": None, "Pairs": 0, "Memory": info(r, "a")["Memory"]}
    assert r.execute_command("WHLL.RESERVE", "b", 3600, "PRECISION", 4, "resolution", 7) == b"OK"
    i = info(r, "b")
    assert (i["Precision"], i["Horizon"], i["Resolution"]) == (4, 3600, 7)
    r.execute_command("WHLL.RESERVE", "c", 1 << 24, "RESOLUTION", 1, "PRECISION", 18)
    assert info(r, "c")["Precision"] == 18
    with pytest.raises(ResponseError, match="^item exists$"):
        r.execute_command("WHLL.RESERVE", "a", 1000)
    # the count of an empty sketch, and its info after an add
    assert r.execute_command("WHLL.COUNT", "a", 1000, "TIME", 0) == 0
    r.execute_command("WHLL.ADDAT", "b", 700, "x")
    assert info(r, "b")["Newest"] == 700 and info(r, "b")["Pairs"] == 1


BAD = [
    (["WHLL.RESERVE", "k", 0], "^bad horizon: an integer of milliseconds from 1 to 2\\^62$"),
    (["WHLL.RESERVE", "k", -5], "^bad horizon"),
    (["WHLL.RESERVE", "k", "1e3"], "^bad horizon"),
    (["WHLL.RESERVE", "k", 4611686018427387905], "^bad horizon"),
    (["WHLL.RESERVE", "k", 1000, "RESOLUTION", 0], "^bad resolution"),
    (["WHLL.RESERVE", "k", 1000, "RESOLUTION", "x"], "^bad resolution"),
    (["WHLL.RESERVE", "k", 1000, "PRECISION", 3], "^bad precision: an integer from 4 to 18$"),
    (["WHLL.RESERVE", "k", 1000, "PRECISION", 19], "^bad precision"),
    (["WHLL.RESERVE", "k", 1000, "WINDOW", 5], "^syntax error"),
    (["WHLL.RESERVE", "k", (1 << 24) + 1, "RESOLUTION", 1],
     "^the horizon holds more than 2\\^24 slots"),
    (["WHLL.ADDAT", "k", -1, "x"], "^bad time: an integer of milliseconds from 0 to 2\\^62$"),
    (["WHLL.ADDAT", "k", "soon", "x"], "^bad time"),
    (["WHLL.ADDAT", "k", 4611686018427387905, "x"], "^bad time"),
    (["WHLL.COUNT", "k", 0], "^bad window"),
    (["WHLL.COUNT", "k", "x"], "^bad window"),
    (["WHLL.COUNT", "k", 10, "TIME", -1], "^bad time"),
    (["WHLL.COUNT", "k", 10, "AT", 5], "^syntax error"),
    (["WHLL.IMPORT", "k", b"SKWH"], "^not a window HyperLogLog: "),
    (["WHLL.IMPORT", "k", b""], "^not a window HyperLogLog: "),
    (["WHLL.INFO", "k"], "^not found$"),
]


@pytest.mark.parametrize("args,error", BAD, ids=[" ".join(map(str, a[:4])) for a, _ in BAD])
def test_bad_arguments(r, args, error):
    with pytest.raises(ResponseError, match=error):
        r.execute_command(*args)
    assert r.exists("k") == 0


@pytest.mark.parametrize("args", [
    ["WHLL.RESERVE", "k"], ["WHLL.RESERVE", "k", 10, "RESOLUTION"], ["WHLL.ADD", "k"],
    ["WHLL.ADDAT", "k", 5], ["WHLL.COUNT", "k"], ["WHLL.COUNT", "k", 10, "TIME"],
    ["WHLL.COUNT", "k", 10, "TIME", 5, 6], ["WHLL.MERGE", "k"], ["WHLL.INFO", "k", "x"],
    ["WHLL.EXPORT"], ["WHLL.IMPORT", "k"]])
def test_wrong_arity(r, args):
    with pytest.raises(ResponseError, match="(?i)wrong number of arguments"):
        r.execute_command(*args)


def test_window_past_the_horizon(r):
    r.execute_command("WHLL.RESERVE", "w", 60000)
    r.execute_command("WHLL.ADDAT", "w", 1000, "x")
    with pytest.raises(ResponseError, match="^bad window: the key answers windows up to its "
                                            "horizon of 60000 ms$"):
        r.execute_command("WHLL.COUNT", "w", 60001)
    assert r.execute_command("WHLL.COUNT", "w", 60000) == 0      # now: long after
    assert r.execute_command("WHLL.COUNT", "w", 60000, "TIME", 1000) == 1


def test_wrongtype(r):
    r.set("s", "v")
    r.pfadd("pf", "a")
    r.execute_command("HLL.ADD", "hll", "a")
    r.execute_command("WHLL.ADD", "w", "a")
    for key in ("s", "pf", "hll"):
        for args in (["WHLL.ADD", key, "x"], ["WHLL.ADDAT", key, 5, "x"],
                     ["WHLL.COUNT", key, 1000], ["WHLL.INFO", key], ["WHLL.EXPORT", key],
                     ["WHLL.IMPORT", key, r.execute_command("WHLL.EXPORT", "w")],
                     ["WHLL.MERGE", key, "w"], ["WHLL.MERGE", "w", key]):
            with pytest.raises(ResponseError, match="^" + WRONGTYPE):
                r.execute_command(*args)
    with pytest.raises(ResponseError, match="^item exists$"):
        r.execute_command("WHLL.RESERVE", "s", 1000)
    assert r.get("s") == b"v" and r.pfcount("pf") == 1
    for args in (["HLL.COUNT", "w"], ["PFCOUNT", "w"], ["GET", "w"]):
        with pytest.raises(ResponseError, match="WRONGTYPE"):
            r.execute_command(*args)
    assert r.type("w") == b"sketch-wh"


# --------------------------------------------------------------------------
# merge, export, import
# --------------------------------------------------------------------------

def test_merge_is_the_sketch_of_both_streams(r):
    events = timeline(9, 4000, 2 * HOUR, 3000)
    half = len(events) // 2
    for key, part in (("a", events[:half]), ("b", events[half:]), ("all", events)):
        r.execute_command("WHLL.RESERVE", key, 2 * HOUR)
        add_events(r, key, part)
    r.expire("a", 1000)
    assert r.execute_command("WHLL.MERGE", "a", "b") == b"OK"
    assert r.execute_command("WHLL.EXPORT", "a") == r.execute_command("WHLL.EXPORT", "all")
    assert 0 < r.ttl("a") <= 1000, "the destination keeps its time to live"
    # a missing destination becomes the union of the sources
    assert r.execute_command("WHLL.MERGE", "new", "missing", "b", "b") == b"OK"
    assert r.execute_command("WHLL.EXPORT", "new") == r.execute_command("WHLL.EXPORT", "b")
    # no sketch at all: an empty one of the defaults
    assert r.execute_command("WHLL.MERGE", "empty", "missing") == b"OK"
    assert info(r, "empty")["Horizon"] == 86400000 and info(r, "empty")["Newest"] is None
    # sketches of other parameters are refused, the destination unchanged
    before = r.execute_command("WHLL.EXPORT", "a")
    for args in ([HOUR], [2 * HOUR, "RESOLUTION", 10], [2 * HOUR, "PRECISION", 12]):
        r.delete("other")
        r.execute_command("WHLL.RESERVE", "other", *args)
        r.execute_command("WHLL.ADDAT", "other", 5, "x")
        with pytest.raises(ResponseError, match="^the sketches differ in precision, horizon "
                                                "or resolution$"):
            r.execute_command("WHLL.MERGE", "a", "other")
    assert r.execute_command("WHLL.EXPORT", "a") == before


def test_export_import(r):
    events = timeline(3, 2000, HOUR, 1000)
    r.execute_command("WHLL.RESERVE", "w", HOUR, "RESOLUTION", 500, "PRECISION", 10)
    add_events(r, "w", events)
    blob = r.execute_command("WHLL.EXPORT", "w")
    assert blob[:4] == b"SKWH"
    assert r.execute_command("WHLL.IMPORT", "copy", blob) == b"OK"
    newest = max(t for t, _ in events)
    times, windows = [newest, newest + 60000], [1000, 60000, HOUR]
    assert observe(r, "copy", times, windows) == observe(r, "w", times, windows)
    # an import replaces a sketch, and its time to live, as SET does
    r.expire("copy", 100)
    r.execute_command("WHLL.IMPORT", "copy", blob)
    assert r.ttl("copy") == -1
    # the imported sketch takes adds
    assert r.execute_command("WHLL.ADDAT", "copy", newest, "brand new") == 1
    assert r.execute_command("WHLL.EXPORT", "missing") is None
    # damaged bytes are refused and change nothing
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0x10
    r.pfadd("pf", "a")
    for bad in (blob[:-1], blob + b"\0", b"XXXX" + blob[4:], bytes(flipped), r.get("pf"),
                r.execute_command("HLL.EXPORT", "pf")):
        with pytest.raises(ResponseError, match="^not a window HyperLogLog: "):
            r.execute_command("WHLL.IMPORT", "w", bad)
    assert r.execute_command("WHLL.EXPORT", "w") == blob


# --------------------------------------------------------------------------
# replies in RESP2 and RESP3
# --------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_replies(server, protocol):
    with RespClient(server.port) as c:
        c.hello(protocol)
        c.call("FLUSHALL")
        assert plain(c.call("WHLL.RESERVE", "w", 60000)) == "OK"
        empty = c.call("WHLL.INFO", "w")
        add = c.call("WHLL.ADDAT", "w", 5000, "a", "b")
        assert add.kind == "integer" and add.value == 1
        count = c.call("WHLL.COUNT", "w", 60000, "TIME", 5000)
        assert count.kind == "integer" and count.value == 2
        assert c.call("WHLL.COUNT", "missing", 60000).kind == "integer"
        full = c.call("WHLL.INFO", "w")
        for reply, newest in ((empty, None), (full, 5000)):
            if protocol == 3:
                assert reply.kind == "map"
                names = [k.value for k, _ in reply.value]
                values = [v for _, v in reply.value]
            else:
                assert reply.kind == "array" and len(reply.value) == 12
                names = [e.value for e in reply.value[0::2]]
                values = reply.value[1::2]
            assert names == INFO_FIELDS
            kinds = [v.kind for v in values]
            assert kinds == ["integer"] * 3 + ["null" if newest is None else "integer"] + \
                ["integer"] * 2
            assert values[3].value == newest
        assert c.call("WHLL.EXPORT", "w").kind == "bulk"
        assert c.call("WHLL.EXPORT", "missing").kind == "null"
        error = c.call("WHLL.COUNT", "w", 0)
        assert error.kind == "error" and error.value.startswith("ERR bad window")
