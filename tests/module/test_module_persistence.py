# SPDX-License-Identifier: BSD-3-Clause
"""Persistence of the module's types: RDB (SAVE, BGSAVE, restart), AOF
(appendfsync always, kill -9, restart), AOF rewrite without the RDB preamble
(the types' aof_rewrite), DUMP/RESTORE, COPY, and RESTORE of corrupt payloads
whose CRC64 is valid, so that the module's own rdb_load validation is what
must refuse them."""
import glob
import os
import random

import pytest
from redis.exceptions import ResponseError


def persistent_options(dbfilename="dump-test.rdb", **more):
    opts = {"dbfilename": dbfilename}
    opts.update(more)
    return opts


def test_crc64_implementation(tools):
    # the check value of CRC-64/Jones as Redis's crc64.c self-test states it
    assert tools.crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    assert tools.crc64(b"") == 0


# --------------------------------------------------------------------------
# RDB
# --------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["SAVE", "BGSAVE"])
def test_rdb_restart(servers, tools, how):
    s = servers.start(options=persistent_options())
    c = s.client()
    data = tools.populate(c, seed=31)
    before = tools.snapshot_of(c, data)
    if how == "SAVE":
        assert c.save()
    else:
        c.bgsave()
        tools.wait_for(lambda: tools.info_field(c, "persistence", "rdb_bgsave_in_progress")
                       == "0" and tools.info_field(c, "persistence",
                                                   "rdb_changes_since_last_save") == "0",
                       what="BGSAVE")
        assert tools.info_field(c, "persistence", "rdb_last_bgsave_status") == "ok"
    assert os.path.getsize(os.path.join(s.dir, "dump-test.rdb")) > 100_000
    dbsize = c.dbsize()
    s.restart()
    assert "DB loaded from disk" in s.log()
    c = s.client()
    assert c.dbsize() == dbsize
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))
    tools.assert_all_present(c, data)
    # the loaded filters are live: they grow and answer like before
    more = tools.items("after-restart", 5000)
    assert all(x in (0, 1) for x in tools.madd(c, "bf:scaling", more))
    assert all(tools.mexists(c, "bf:scaling", more + data["present"]["bf:scaling"]))
    assert c.execute_command("HLL.ADD", "hll:p14", *more[:100]) in (0, 1)


def test_rdb_loaded_without_the_module_fails(servers, tools):
    """An RDB with the module's types does not load into a server without
    the module: the server refuses to start rather than drop keys (Redis
    7.0 then runs its RDB check and exits, with status 0 when the file
    itself is sound), and starts again with the module."""
    s = servers.start(options=persistent_options())
    c = s.client()
    c.execute_command("BF.ADD", "b", "x")
    c.execute_command("HLL.ADD", "h", "x")
    c.save()
    s.stop()
    s.load_module = False
    s.start(wait=False)
    try:
        s.proc.wait(timeout=15)
    except Exception:
        pytest.fail("redis-server without the module started on an RDB holding "
                    "module values:\n" + s.log()[-2000:])
    assert "no matching module type 'sketch-" in s.log()
    assert "Ready to accept connections" not in s.log().split("==== start 2")[1]
    s.load_module = True
    s.start()
    assert s.client().execute_command("BF.EXISTS", "b", "x") == 1


# --------------------------------------------------------------------------
# AOF
# --------------------------------------------------------------------------

def aof_options(**more):
    opts = persistent_options(appendonly="yes", appendfsync="always")
    opts.update(more)
    return opts


def survives_kill9(s, c, tools, data):
    """Kills s with SIGKILL and starts it again: every write acknowledged on
    c is back. Returns a client of the new server."""
    before = tools.snapshot_of(c, data)
    s.kill9()
    s.start()
    c = s.client()
    tools.assert_all_present(c, data)
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))
    return c


def test_aof_kill9_keeps_every_acknowledged_write(servers, tools):
    s = servers.start(options=aof_options())
    c = s.client()
    data = tools.populate(c, seed=41)
    c = survives_kill9(s, c, tools, data)
    # a second life: more writes after the replay, another crash
    more = tools.items("second-life", 3000)
    tools.madd(c, "bf:big", more)
    c.execute_command("HLL.ADD", "hll:sparse", *more)
    c.execute_command("HLL.MERGE", "hll:sparse", "hll:p4")
    data["present"]["bf:big"] += more
    survives_kill9(s, c, tools, data)


def wait_rewrite_done(c, tools):
    def done():
        return (tools.info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                and tools.info_field(c, "persistence", "aof_rewrite_scheduled") == "0")
    tools.wait_for(done, timeout=60, what="BGREWRITEAOF to finish")
    assert tools.info_field(c, "persistence", "aof_last_bgrewrite_status") == "ok"


def test_aof_rewrite_without_rdb_preamble(servers, tools):
    s = servers.start(options=aof_options(**{"aof-use-rdb-preamble": "no"}))
    c = s.client()
    wait_rewrite_done(c, tools)
    data = tools.populate(c, seed=51)
    c.bgrewriteaof()
    wait_rewrite_done(c, tools)
    bases = glob.glob(os.path.join(s.dir, "appendonlydir", "*.base.aof"))
    assert bases, os.listdir(s.dir)
    base = open(max(bases, key=os.path.getmtime), "rb").read()
    assert not base.startswith(b"REDIS"), "an RDB preamble despite aof-use-rdb-preamble no"
    # the rewrite went through the types' aof_rewrite, not commands replayed
    assert b"BF.LOADCHUNK" in base and b"HLL.IMPORT" in base
    assert b"BF.MADD" not in base and b"HLL.MERGE" not in base
    # writes after the rewrite go to the incremental file
    more = tools.items("post-rewrite", 2000)
    tools.madd(c, "bf:scaling", more)
    data["present"]["bf:scaling"] += more
    c.execute_command("HLL.ADD", "hll:p4", *more)
    c = survives_kill9(s, c, tools, data)
    # and once more through an orderly restart
    before = tools.snapshot_of(c, data)
    s.restart()
    c = s.client()
    tools.assert_same_snapshot(before, tools.snapshot_of(c, data))


# --------------------------------------------------------------------------
# DUMP / RESTORE / COPY
# --------------------------------------------------------------------------

def test_dump_restore_identical(r, tools):
    data = tools.populate(r, seed=61)
    for key in data["bf"] + data["hll"]:
        payload = r.dump(key)
        assert tools.crc64(payload[:-8]) == int.from_bytes(payload[-8:], "little")
        assert r.restore("restored:" + key, 0, payload)
        with pytest.raises(ResponseError, match="BUSYKEY"):
            r.restore("restored:" + key, 0, payload)
        assert r.restore("restored:" + key, 0, payload, replace=True)
    before = tools.snapshot_of(r, data)
    restored = {
        "bf": ["restored:" + k for k in data["bf"]],
        "hll": ["restored:" + k for k in data["hll"]],
        "probes": data["probes"],
        "present": {"restored:" + k: v for k, v in data["present"].items()},
    }
    after = tools.snapshot_of(r, restored)
    for (kind, key), value in before.items():
        assert after[(kind, "restored:" + key.decode() if isinstance(key, bytes)
                      else "restored:" + key)] == value, key
    tools.assert_all_present(r, restored)


def test_copy(r, tools):
    r.execute_command("BF.RESERVE", "src", "0.01", "100")
    its = tools.items("c", 2000)
    tools.madd(r, "src", its)
    r.execute_command("HLL.ADD", "hsrc", *its)
    assert r.copy("src", "dst") == 1
    assert r.copy("hsrc", "hdst") == 1
    probes = its + tools.items("absent", 2000)
    a = tools.snapshot(r, ["src"], ["hsrc"], probes)
    b = tools.snapshot(r, ["dst"], ["hdst"], probes)
    assert list(a.values()) == list(b.values())
    # independent values
    tools.madd(r, "dst", tools.items("d", 3000))
    r.execute_command("HLL.ADD", "hdst", *tools.items("d", 3000))
    assert tools.snapshot(r, ["src"], ["hsrc"], probes) == a
    assert r.execute_command("BF.CARD", "dst") > r.execute_command("BF.CARD", "src")
    # COPY onto an existing key needs REPLACE
    assert r.copy("src", "dst") == 0
    assert r.copy("src", "dst", replace=True) == 1
    assert tools.snapshot(r, ["dst"], [], probes)[("bf", "dst")] == a[("bf", "src")]
    # the copy survives DUMP/RESTORE like its source
    r.restore("dst2", 0, r.dump("dst"))
    assert tools.snapshot(r, ["dst2"], [], probes)[("bf", "dst2")] == a[("bf", "src")]


# ---- corrupt payloads ---------------------------------------------------------
#
# A module value in a DUMP payload (rdbcompression no):
#   07 (RDB_TYPE_MODULE_2) | 81 + 8-byte module id (type name + encver) |
#   per saved item: opcode (05 string, 02 unsigned) + RDB length + bytes |
#   00 (EOF) | 2-byte RDB version | 8-byte CRC64
# Bloom: string header, unsigned piece count, string pieces. HLL: one string.

def rdb_len(buf, i):
    """Decodes an RDB length at buf[i]: (value, next index)."""
    b = buf[i]
    kind = b >> 6
    if kind == 0:
        return b & 0x3F, i + 1
    if kind == 1:
        return ((b & 0x3F) << 8) | buf[i + 1], i + 2
    if b == 0x80:
        return int.from_bytes(buf[i + 1:i + 5], "big"), i + 5
    if b == 0x81:
        return int.from_bytes(buf[i + 1:i + 9], "big"), i + 9
    raise AssertionError("unexpected RDB length byte %#x" % b)


def rdb_len_bytes(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + n.to_bytes(4, "big")


def parse_module_payload(payload):
    """[(opcode, offset of the value's encoding, offset of the data, length)]"""
    body = payload[:-10]
    assert body[0] == 7, "not a module value"
    _, i = rdb_len(body, 1)
    fields = []
    while True:
        opcode, j = rdb_len(body, i)
        if opcode == 0:
            assert j == len(body)
            return fields
        if opcode == 5:
            n, k = rdb_len(body, j)
            fields.append((opcode, j, k, n))
            i = k + n
        elif opcode == 2:
            v, k = rdb_len(body, j)
            fields.append((opcode, j, k, v))
            i = k
        else:
            raise AssertionError("opcode %d" % opcode)


@pytest.fixture
def plain(servers):
    """A server whose DUMP payloads are uncompressed, so they can be edited."""
    s = servers.start(options={"rdbcompression": "no"})
    return s


def dumps(c, tools):
    c.execute_command("BF.RESERVE", "bf", "0.01", "1000")
    tools.madd(c, "bf", tools.items("x", 300))
    c.execute_command("HLL.ADD", "hll", *tools.items("x", 300))
    return c.dump("bf"), c.dump("hll")


@pytest.fixture
def bf_dump(plain, tools):
    """A client of the plain server, and the DUMP of a Bloom filter in it."""
    c = plain.client()
    return c, dumps(c, tools)[0]


def assert_refused_and_alive(server, c, payload, what):
    try:
        c.restore("target", 0, payload)
        pytest.fail("RESTORE of %s succeeded" % what)
    except ResponseError as e:
        assert "checksum" in str(e) or "Bad data format" in str(e), str(e)
    except Exception as e:  # the connection dropped: did the server die?
        server.proc.wait(timeout=5) if server.proc.poll() is None else None
        crash = [line for line in server.log().splitlines()
                 if "Guru Meditation" in line or "crashed" in line]
        pytest.fail("RESTORE of %s (valid CRC64) %s; the server %s.\n%s"
                    % (what, type(e).__name__,
                       "is alive" if server.alive() else "CRASHED", "\n".join(crash[:3])),
                    pytrace=False)
    assert server.alive()
    assert c.ping()
    assert c.exists("target") == 0


def edited(tools, payload, offset, xor=0, value=None):
    """payload (a DUMP) with its byte at offset XORed with xor, or set to
    value, and the CRC made valid again."""
    body = bytearray(payload[:-8])
    body[offset] = value if value is not None else body[offset] ^ xor
    return tools.with_crc(bytes(body))


def test_restore_bad_crc_refused(plain, tools):
    c = plain.client()
    for payload in dumps(c, tools):
        bad = bytearray(payload)
        bad[len(bad) // 2] ^= 0x01
        assert_refused_and_alive(plain, c, bytes(bad), "a flipped byte, old CRC")


def test_restore_corrupt_bloom_bits_valid_crc(plain, tools, bf_dump):
    c, bf = bf_dump
    fields = parse_module_payload(bf)
    # header, number of pieces, the piece, the restore's state (encoding 1)
    assert [f[0] for f in fields] == [5, 2, 5, 2]
    _, _, data_at, n = fields[2]
    for offset in (data_at, data_at + n // 2, data_at + n - 1):
        assert_refused_and_alive(plain, c, edited(tools, bf, offset, xor=0x40),
                                 "a Bloom filter with a flipped bit-array byte")


def test_restore_corrupt_bloom_header_valid_crc(plain, tools, bf_dump):
    c, bf = bf_dump
    _, _, hdr_at, n = parse_module_payload(bf)[0]
    for offset in range(hdr_at, hdr_at + n, max(1, n // 16)):
        assert_refused_and_alive(plain, c, edited(tools, bf, offset, xor=0xFF),
                                 "a Bloom filter with header byte %d flipped"
                                 % (offset - hdr_at))


def test_restore_wrong_encoding_version_valid_crc(plain, tools):
    c = plain.client()
    for payload in dumps(c, tools):
        # byte 9, the low byte of the module id: the encoding version
        assert_refused_and_alive(plain, c, edited(tools, payload, 9, xor=0x01),
                                 "a value of encoding version 1")


def test_restore_corrupt_hll_valid_crc(plain, tools):
    c = plain.client()
    _, hll = dumps(c, tools)
    fields = parse_module_payload(hll)
    assert [f[0] for f in fields] == [5]
    _, _, at, n = fields[0]
    for offset in (at, at + 1, at + 2, at + 3):     # the format's magic
        assert_refused_and_alive(plain, c, edited(tools, hll, offset, xor=0xFF),
                                 "a HyperLogLog with a bad magic")


def test_restore_bloom_piece_count_too_large_valid_crc(plain, tools, bf_dump):
    """The header says one piece of bit array follows; the payload claims
    two. The module must refuse the value, not take the server down."""
    c, bf = bf_dump
    _, count_at, _, count = parse_module_payload(bf)[1]
    assert count == 1 and bf[count_at] == 1
    assert_refused_and_alive(plain, c, edited(tools, bf, count_at, value=2),
                             "a Bloom filter whose piece count is one too many")


def test_restore_bloom_piece_count_zero_valid_crc(plain, tools, bf_dump):
    c, bf = bf_dump
    _, count_at, _, _ = parse_module_payload(bf)[1]
    assert_refused_and_alive(plain, c, edited(tools, bf, count_at, value=0),
                             "a Bloom filter whose piece count is zero")


def test_restore_truncated_hll_string_valid_crc(plain, tools):
    """The HLL's string is cut short (its length byte lowered, the bytes
    removed): a well-formed RDB value holding a truncated sketch."""
    c = plain.client()
    _, hll = dumps(c, tools)
    _, len_at, at, n = parse_module_payload(hll)[0]
    body = bytearray(hll[:-10])
    tail = hll[-10:-8]
    cut = body[:len_at] + rdb_len_bytes(n - 5) + body[at:at + n - 5] + body[at + n:]
    assert_refused_and_alive(plain, c, tools.with_crc(bytes(cut) + tail),
                             "a truncated HyperLogLog")


def test_restore_random_corruption_valid_crc(plain, tools):
    """Random byte flips anywhere in small payloads, each with a valid CRC:
    every RESTORE either fails or gives a key, and the server stays up."""
    c = plain.client()
    rng = random.Random(71)
    c.execute_command("BF.RESERVE", "small", "0.1", "10", "NONSCALING")
    c.execute_command("BF.MADD", "small", "a", "b", "c")
    c.execute_command("HLL.ADD", "hll", "a", "b")
    payloads = [c.dump("small"), c.dump("hll")]
    for trial in range(300):
        base = payloads[trial % 2]
        body = bytearray(base[:-8])
        for _ in range(rng.choice([1, 1, 2, 4])):
            body[rng.randrange(1, len(body) - 2)] ^= 1 << rng.randrange(8)
        try:
            c.restore("t", 0, tools.with_crc(bytes(body)), replace=True)
        except ResponseError:
            pass
        except Exception as e:
            try:
                plain.proc.wait(timeout=3)
            except Exception:
                pass
            pytest.fail("trial %d: RESTORE of a corrupted payload %s (server %s); the "
                        "payload body was %s" % (trial, type(e).__name__,
                                                 "alive" if plain.alive() else "CRASHED",
                                                 bytes(body).hex()), pytrace=False)
        # whatever was restored answers commands
        if c.exists("t"):
            try:
                c.execute_command("BF.EXISTS" if trial % 2 == 0 else "HLL.COUNT", "t",
                                  *(["a"] if trial % 2 == 0 else []))
            except ResponseError:
                pass
    assert plain.alive() and c.ping()
