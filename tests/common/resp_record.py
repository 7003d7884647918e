# SPDX-License-Identifier: BSD-3-Clause
"""Replies recorded from a server and replayed against another: the machinery
of the tests that check sketch.so's answers against RedisBloom's recorded
ones (tests/module/test_module_*_redisbloom.py).

A session is a list of commands run on an empty keyspace; run_sessions runs
each on RESP2 and on RESP3 and keeps every reply with its wire type, as JSON
(encode). A test file's SESSIONS, run as a script against RedisBloom, write
its fixture (record); the test runs them against sketch.so and compares
(assert_same)."""
import json
import os
import sys

from resp import RespClient


def encode(reply):
    """A Reply as JSON: [kind, value], bytes as latin-1 text, nested."""
    kind, value = reply
    if kind in ("array", "set", "push"):
        value = [encode(e) for e in value]
    elif kind == "map":
        value = [[encode(k), encode(v)] for k, v in value]
    elif isinstance(value, bytes):
        value = value.decode("latin-1")
    return [kind, value]


def run_sessions(port, sessions):
    """Every session on each protocol: {name: {"2": [...], "3": [...]}}."""
    out = {}
    for name, commands in sessions.items():
        out[name] = {}
        for protocol in (2, 3):
            with RespClient(port) as c:
                c.hello(protocol)
                c.call("FLUSHALL")
                out[name][str(protocol)] = [encode(c.call(*command)) for command in commands]
    return out


def _as_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def same(want, got):
    """Equal replies; a double the server formats (RM_ReplyWithDouble: a bulk
    string in RESP2) may be written otherwise by another server, Valkey 8
    writing 0.9 where Redis 7.0 writes 0.90000000000000002, and is compared
    as the number it is."""
    if want == got:
        return True
    (wk, wv), (gk, gv) = want, got
    if wk != gk:
        return False
    if wk in ("array", "set", "push", "map") and len(wv) == len(gv):
        pairs = zip(wv, gv) if wk != "map" else ((x, y) for a, b in zip(wv, gv)
                                                 for x, y in zip(a, b))
        return all(same(x, y) for x, y in pairs)
    if wk == "double" and isinstance(wv, float) and isinstance(gv, float):
        return wv != wv and gv != gv  # NaN, a RESP3 double, equals itself here
    return wk == "bulk" and "." in wv and _as_float(wv) is not None and \
        _as_float(wv) == _as_float(gv)


def assert_same(fixture, sessions, port, normalize=None):
    """sketch.so on `port` answers every session as the fixture recorded;
    normalize(command, reply), if given, rewrites both sides' replies first
    (to leave out what differs by design, such as a size in bytes)."""
    with open(fixture) as f:
        recorded = json.load(f)
    assert recorded["sessions"] == sessions, "the fixture was recorded from other sessions"
    answers = run_sessions(port, sessions)
    for name, commands in sessions.items():
        for protocol in ("2", "3"):
            want, got = recorded["replies"][name][protocol], answers[name][protocol]
            for command, w, g in zip(commands, want, got):
                if normalize is not None:
                    w, g = normalize(command, w), normalize(command, g)
                assert same(w, g), "RESP%s, session %s: %s: %s against %s" % (
                    protocol, name, command[:8], g, w)


def record(sessions):
    """The script's entry: python3 FILE PORT > fixture.json."""
    json.dump({"server": os.environ.get("RECORDED_FROM", ""), "sessions": sessions,
               "replies": run_sessions(int(sys.argv[1]), sessions)}, sys.stdout, indent=0)
    sys.stdout.write("\n")
