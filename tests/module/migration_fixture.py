# SPDX-License-Identifier: BSD-3-Clause
"""RedisBloom 2.6.28's migration fixture, and sketch.so's answers compared with it.

What tests/module/test_module_migration.py (and redisbloom_roundtrip.py, the
way back) are built on, none of it a test: the fixture's files
(tests/fixtures/redisbloom-2.6.28/migration/, whose README says how they
were made), a module value in a DUMP payload taken apart and put together,
the sessions of commands made from the fixture's key list, chunks and
dumps, running them on a server and comparing the replies with
answers.json's, the resets that put the data in, and the helpers of the
recording (test_module_migration.py run as a script writes answers.json).

Left out as a difference by design: the byte count of TDIGEST.INFO's
"Memory usage" (each implementation counts its own memory); normalize()
drops that value, and nothing else. BF.INFO's "Size" of a filter of
RedisBloom's type is RedisBloom's own figure, and is compared.

Top-k writes: RedisBloom decays a counter with the C library's rand(), so the
writes to top-k keys keep to items whose counters it changes without a draw
(every bucket the item hashes to is empty or already the item's): the
sessions work that out from the fixture's DUMP of the key (its buckets) and
MurmurHash2, and the recording checks the model against RedisBloom's
TOPK.COUNT replies.
"""
import binascii
import json
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from resp import RespClient  # noqa: E402
from resp_record import encode, same  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fixtures",
                        "redisbloom-2.6.28", "migration")
RDB = os.path.join(FIXTURES, "redisbloom-2.6.28.rdb")
TYPES = {"bf": "MBbloom--", "cf": "MBbloomCF", "cms": "CMSk-TYPE", "topk": "TopK-TYPE",
         "td": "TDIS-TYPE"}
REPLY_TIMEOUT = 120.0


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def items(prefix, n, start=0):
    return ["%s:%d" % (prefix, i) for i in range(start, start + n)]


def batches(seq, size):
    return [seq[i:i + size] for i in range(0, len(seq), size)]


# --------------------------------------------------------------------------
# A module value in an RDB payload (rdbcompression no):
#   07 | module id (RDB length 0x81 + 8 bytes: type name and encver) |
#   per value saved: opcode (1 signed, 2 unsigned, 3 float, 4 double,
#   5 string) and the value | 00 (EOF) | 2-byte RDB version | CRC64
# --------------------------------------------------------------------------

def _read_len(buf, i):
    """(value, next index, special encoding?)"""
    b = buf[i]
    kind = b >> 6
    if kind == 0:
        return b & 0x3F, i + 1, False
    if kind == 1:
        return ((b & 0x3F) << 8) | buf[i + 1], i + 2, False
    if b == 0x80:
        return int.from_bytes(buf[i + 1:i + 5], "big"), i + 5, False
    if b == 0x81:
        return int.from_bytes(buf[i + 1:i + 9], "big"), i + 9, False
    if kind == 3:
        return b & 0x3F, i + 1, True
    raise ValueError("bad RDB length byte %#x" % b)


def _len_bytes(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + n.to_bytes(8, "big")


def parse_module_value(payload):
    """(head, [(kind, value)], rdb version bytes) of a DUMP payload."""
    body, version = payload[:-10], payload[-10:-8]
    assert body[0] == 7, "not a module value"
    _, i, _ = _read_len(body, 1)
    head, fields = body[:i], []
    while True:
        opcode, i, _ = _read_len(body, i)
        if opcode == 0:
            assert i == len(body), "bytes after the module value's EOF"
            return head, fields, version
        if opcode in (1, 2):
            v, i, _ = _read_len(body, i)
            if opcode == 1 and v >= 1 << 63:
                v -= 1 << 64
            fields.append(("sint" if opcode == 1 else "uint", v))
        elif opcode == 3:
            fields.append(("float", struct.unpack("<f", body[i:i + 4])[0]))
            i += 4
        elif opcode == 4:
            fields.append(("double", struct.unpack("<d", body[i:i + 8])[0]))
            i += 8
        elif opcode == 5:
            n, i, special = _read_len(body, i)
            if special:
                if n == 3:
                    raise ValueError("an LZF-compressed string: dump with rdbcompression no")
                width = {0: 1, 1: 2, 2: 4}[n]
                value = str(int.from_bytes(body[i:i + width], "little", signed=True)).encode()
                i += width
            else:
                value, i = bytes(body[i:i + n]), i + n
            fields.append(("string", value))
        else:
            raise ValueError("module opcode %d" % opcode)


def build_module_value(head, fields, version):
    """The payload's body (without the CRC64) from parse_module_value's parts."""
    out = [bytes(head)]
    for kind, v in fields:
        if kind == "sint":
            out += [b"\x01", _len_bytes(v & ((1 << 64) - 1))]
        elif kind == "uint":  # RM_SaveSigned writes these too: negatives as 2^64 + v
            out += [b"\x02", _len_bytes(v & ((1 << 64) - 1))]
        elif kind == "float":
            out += [b"\x03", struct.pack("<f", v)]
        elif kind == "double":
            out += [b"\x04", struct.pack("<d", v)]
        else:
            out += [b"\x05", _len_bytes(len(v)), v]
    return b"".join(out) + b"\x00" + bytes(version)


# --------------------------------------------------------------------------
# Top-k writes without RedisBloom's rand()
# --------------------------------------------------------------------------

def murmur2(data, seed):
    """MurmurHash2 (Austin Appleby's, 32 bits), as the top-k hashes items."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    h = (seed ^ len(data)) & mask
    n = len(data) & ~3
    for i in range(0, n, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
    rest = data[n:]
    if len(rest) == 3:
        h ^= rest[2] << 16
    if len(rest) >= 2:
        h ^= rest[1] << 8
    if rest:
        h ^= rest[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    return h ^ (h >> 15)


class TopKModel:
    """A top-k's buckets and heap as its DUMP holds them."""

    FP_SEED = 1919

    def __init__(self, payload):
        _, f, _ = parse_module_value(payload)
        self.k, self.width, self.depth = f[0][1], f[1][1], f[2][1]
        self.buckets = [list(b) for b in struct.iter_unpack("<II", f[4][1])]
        heap = f[5][1]
        self.heap_counts = [struct.unpack_from("<I", heap, 24 * i + 16)[0]
                            for i in range(self.k)]
        self.heap_items = [s.rstrip(b"\0") for _, s in f[6:6 + self.k]]

    def cells(self, item):
        return [i * self.width + murmur2(item, i) % self.width for i in range(self.depth)]

    def incr(self, item, n):
        """Adds n to item's buckets if no decay is drawn; False if one would be."""
        fp = murmur2(item, self.FP_SEED)
        cells = self.cells(item)
        if any(self.buckets[c][1] and self.buckets[c][0] != fp for c in cells):
            return False
        for c in cells:
            self.buckets[c] = [fp, self.buckets[c][1] + n]
        return True

    def count(self, item):
        """TOPK.COUNT of item as RedisBloom computes it."""
        fp = murmur2(item, self.FP_SEED)
        in_heap = item in self.heap_items
        counts = [self.buckets[c][1] for c in self.cells(item) if self.buckets[c][0] == fp
                  and (not in_heap or self.buckets[c][1] >= self.heap_counts[0])]
        return max(counts, default=0)


def topk_writes(key, entry):
    model = TopKModel(bytes.fromhex(entry["dump"]))
    top = max(model.heap_counts)
    candidates = []
    for x in [x for x in model.heap_items if x]:
        candidates += [("TOPK.ADD", x, 1), ("TOPK.INCRBY", x, 3)]
    for i, x in enumerate(items("new-" + entry["prefix"], 12)):
        x = x.encode()
        candidates += [("TOPK.ADD", x, 1), ("TOPK.INCRBY", x, top + 10 + i)]
    out = []
    for cmd, x, n in candidates:
        if model.incr(x, n):
            out.append([cmd, key, x.decode()] + ([str(n)] if cmd == "TOPK.INCRBY" else []))
    return out


# --------------------------------------------------------------------------
# The sessions
# --------------------------------------------------------------------------

def _num(x):
    return repr(float(x))


def td_points(e, n=10):
    lo, hi = e["lo"], e["hi"]
    pts = [lo * (1 - t / n) + hi * (t / n) for t in range(n + 1)]
    return [_num(x) for x in [lo - 1, *pts, hi + 1]] + ["-inf", "inf"]


def reads(e, chunks):
    k, fam = e["key"], e["family"]
    out = [["TYPE", k]]
    if fam in ("bf", "cf"):
        present = items(e["prefix"], e["n"]) + e["extra"]
        absent = items("absent-" + e["prefix"], 70)
        probe = present[::max(1, len(present) // 70)]
        out += [[fam.upper() + ".EXISTS", k, x] for x in present[:4] + e["extra"] + absent[:4]]
        out += [[fam.upper() + ".MEXISTS", k] + part for part in batches(probe + absent, 250)]
    if fam == "bf":
        out += [["BF.INFO", k]] + [["BF.INFO", k, f] for f in
                                   ("CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION")]
        out += [["BF.CARD", k], ["BF.SCANDUMP", k, "0"]]
        out += [["BF.SCANDUMP", k, str(it)] for it, _ in chunks[k]]
    elif fam == "cf":
        counted = present[:6] + e["extra"] + absent[:3]
        if "deleted" in e:
            start, stop, step = e["deleted"]
            counted += items(e["prefix"], 6 * step, start)[::step]
        if "twice" in e:
            counted += items(e["prefix"], 5, e["twice"][0])
        out += [["CF.COUNT", k, x] for x in counted]
        out += [["CF.INFO", k], ["CF.SCANDUMP", k, "0"]]
        out += [["CF.SCANDUMP", k, str(it)] for it, _ in chunks[k]]
    elif fam == "cms":
        probe = items(e["prefix"], e["n"])
        out += [["CMS.QUERY", k] + probe[::max(1, len(probe) // 80)] + items("absent", 20)]
        out += [["CMS.INFO", k]]
    elif fam == "topk":
        probe = items(e["prefix"], min(e["n"], 100)) + items("absent", 10)
        out += [["TOPK.LIST", k], ["TOPK.LIST", k, "WITHCOUNT"], ["TOPK.QUERY", k] + probe,
                ["TOPK.COUNT", k] + probe, ["TOPK.INFO", k]]
    elif fam == "td":
        out += td_reads(k, e)
    return out


def td_reads(k, e):
    pts, n = td_points(e), e["count"]
    ranks = [str(r) for r in sorted({0, 1, 2, n // 4, n // 2, n - 2, n - 1, n, n + 5}) if r >= 0]
    qs = ["0", "0.001", "0.01", "0.05", "0.1", "0.25", "0.5", "0.75", "0.9", "0.95", "0.99",
          "0.999", "1"]
    return [["TDIGEST.QUANTILE", k] + qs, ["TDIGEST.CDF", k] + pts, ["TDIGEST.RANK", k] + pts,
            ["TDIGEST.REVRANK", k] + pts, ["TDIGEST.BYRANK", k] + ranks,
            ["TDIGEST.BYREVRANK", k] + ranks, ["TDIGEST.MIN", k], ["TDIGEST.MAX", k],
            ["TDIGEST.TRIMMED_MEAN", k, "0", "1"], ["TDIGEST.TRIMMED_MEAN", k, "0.1", "0.9"],
            ["TDIGEST.TRIMMED_MEAN", k, "0.25", "0.75"], ["TDIGEST.TRIMMED_MEAN", k, "0", "0.5"],
            ["TDIGEST.INFO", k]]


def writes(e):
    k, fam, p = e["key"], e["family"], e["prefix"]
    tmp = "tmp:" + k
    if fam == "bf":
        # bf:default and bf:exp1 grow by a link; bf:fixed is full
        new = items("new-" + p, {"bf:default": 160, "bf:exp1": 80}.get(k, 40))
        out = [["BF.ADD", k, new[0]], ["BF.ADD", k, new[0]], ["BF.ADD", k, p + ":0"]]
        out += [["BF.MADD", k] + part for part in batches(new[1:], 400)]
        out += [["BF.INSERT", k, "NOCREATE", "ITEMS", "ins-" + p, "ins-" + p + "-2"],
                ["BF.EXISTS", k, "ins-" + p]]
        out += [["BF.MEXISTS", k] + part for part in
                batches(new[::3] + items(p, 30) + items("absent-" + p, 30), 500)]
        out += [["BF.INFO", k], ["BF.INFO", k, "FILTERS"], ["BF.CARD", k],
                ["BF.SCANDUMP", k, "0"]]
    elif fam == "cf":
        new = items("new-" + p, 60)
        present = items(p, e["n"])
        out = [["CF.ADD", k, x] for x in new[:20]]
        out += [["CF.ADDNX", k, x] for x in present[:5] + new[15:25]]
        out += [["CF.DEL", k, x] for x in present[:3] + new[:3] + ["absent-" + p] + present[:1]]
        out += [["CF.INSERT", k, "NOCREATE", "ITEMS"] + new[25:40],
                ["CF.INSERTNX", k, "ITEMS"] + new[35:50]]
        out += [["CF.COUNT", k, x] for x in new[:5] + present[:5]]
        out += [["CF.INFO", k], ["CF.COMPACT", k], ["CF.INFO", k]]
        out += [["CF.MEXISTS", k] + new[::2] + present[::7][:40] + items("absent-" + p, 30),
                ["CF.SCANDUMP", k, "0"]]
    elif fam == "cms":
        _, f, _ = parse_module_value(bytes.fromhex(e["dump"]))
        width, depth = str(f[0][1]), str(f[1][1])
        some = items(p, 10) + items("new-" + p, 10)
        out = [["CMS.INCRBY", k] + [x for i, y in enumerate(some) for x in (y, str(i + 1))],
               ["CMS.INCRBY", k, p + ":3", "4294967000"],
               ["CMS.QUERY", k] + some + items(p, e["n"])[::10], ["CMS.INFO", k],
               ["CMS.INITBYDIM", tmp, width, depth], ["CMS.MERGE", tmp, "1", k, "WEIGHTS", "3"],
               ["CMS.QUERY", tmp] + some, ["CMS.INFO", tmp], ["DEL", tmp]]
    elif fam == "topk":
        probe = items(p, min(e["n"], 100)) + items("new-" + p, 12)
        out = topk_writes(k, e)
        out += [["TOPK.LIST", k, "WITHCOUNT"], ["TOPK.QUERY", k] + probe,
                ["TOPK.COUNT", k] + probe, ["TOPK.INFO", k]]
    else:
        lo, hi = e["lo"], e["hi"]
        span = hi - lo if abs(hi) < 1e300 else 1e300
        vals = ["%.6g" % (lo + span * ((i * 37) % 101) / 100) for i in range(60)]
        out = [["TDIGEST.ADD", k] + vals[:10], ["TDIGEST.QUANTILE", k, "0.5"],
               ["TDIGEST.ADD", k] + vals[10:]]
        out += td_reads(k, dict(e, count=e["count"] + 60))
        out += [["TDIGEST.MERGE", tmp, "1", k], ["TDIGEST.QUANTILE", tmp, "0.1", "0.5", "0.9"],
                ["TDIGEST.INFO", tmp], ["DEL", tmp]]
    return out


def sessions():
    """{"reads": {key: [command, ...]}, "writes": {...}}, in the fixture's key order."""
    keys = fixture("dumps.json")["keys"]
    chunks = fixture("chunks.json")["chunks"]
    return {"reads": {e["key"]: reads(e, chunks) for e in keys},
            "writes": {e["key"]: writes(e) for e in keys}}


# --------------------------------------------------------------------------
# Running and comparing
# --------------------------------------------------------------------------

def run(port, sess, keys, reset, reset_first=True):
    """The replies to every session of `keys`: the reads on the keyspace as it
    is (after reset() if reset_first), on RESP2 then RESP3; the writes on
    each protocol after a reset()."""
    out = {"reads": {}, "writes": {}}
    if reset_first:
        reset()
    for phase in ("reads", "writes"):
        for protocol in (2, 3):
            if phase == "writes":
                reset()
            with RespClient(port, timeout=REPLY_TIMEOUT) as c:
                c.hello(protocol)
                for k in keys:
                    out[phase].setdefault(k, {})[str(protocol)] = [
                        encode(c.call(*cmd)) for cmd in sess[phase][k]]
    return out


def _field_name(reply):
    return reply[1] if reply[0] in ("simple", "bulk", "verbatim") else None


def normalize(command, reply):
    """Drops what differs by design: TDIGEST.INFO's Memory usage (BF.INFO's
    Size of a filter of RedisBloom's type is RedisBloom's own figure)."""
    name = command[0].upper()
    drop = {"TDIGEST.INFO": "Memory usage"}.get(name)
    if drop is None or reply[0] == "error":
        return reply
    kind, value = reply
    if kind == "map":
        return [kind, [kv for kv in value if _field_name(kv[0]) != drop]]
    if kind == "array":
        pairs = [value[i:i + 2] for i in range(0, len(value), 2)]
        return [kind, [x for pair in pairs if _field_name(pair[0]) != drop for x in pair]]
    return reply


def _short(reply, limit=300):
    text = json.dumps(reply, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "...(%d chars)" % len(text)


def explain(w, g):
    """Where two replies differ: the first differing elements of arrays."""
    if w[0] == g[0] and w[0] in ("array", "set", "map") and len(w[1]) == len(g[1]):
        bad = [i for i, (x, y) in enumerate(zip(w[1], g[1]))
               if not (same(x, y) if w[0] != "map" else
                       same(x[0], y[0]) and same(x[1], y[1]))]
        shown = ", ".join("[%d] %s against %s" % (i, _short(g[1][i], 120), _short(w[1][i], 120))
                          for i in bad[:4])
        return "%d of %d elements differ: %s" % (len(bad), len(w[1]), shown)
    return "%s against RedisBloom's %s" % (_short(g), _short(w))


def expand(replies):
    """answers.json keeps a RESP3 reply equal to its RESP2 one as null."""
    out = {}
    for phase, per_key in replies.items():
        out[phase] = {}
        for k, by in per_key.items():
            out[phase][k] = {"2": by["2"],
                             "3": [r2 if r3 is None else r3 for r2, r3 in zip(by["2"], by["3"])]}
    return out


def differences(recorded, got, sess, keys, phases=("reads", "writes")):
    diffs = []
    for phase in phases:
        for k in keys:
            for protocol in ("2", "3"):
                want = recorded[phase][k][protocol]
                have = got[phase][k][protocol]
                for command, w, g in zip(sess[phase][k], want, have):
                    w, g = normalize(command, w), normalize(command, g)
                    if not same(w, g):
                        diffs.append("%s RESP%s %s: %s: %s" % (
                            phase, protocol, k, " ".join(command[:4])[:80], explain(w, g)))
    return diffs


def answers():
    recorded = fixture("answers.json")
    sess = sessions()
    assert recorded["sessions"] == sess, "answers.json was recorded from other sessions"
    return sess, expand(recorded["replies"])


def check(port, keys, reset, reset_first=True, phases=("reads", "writes")):
    """sketch.so on port answers every session of `keys` as RedisBloom did."""
    sess, recorded = answers()
    got = run(port, sess, keys, reset, reset_first)
    diffs = differences(recorded, got, sess, keys, phases)
    assert not diffs, "%d replies differ from RedisBloom's:\n%s" % (
        len(diffs), "\n".join(diffs[:60]))


# --------------------------------------------------------------------------
# How the tests put the data in
# --------------------------------------------------------------------------

def all_keys(families=None):
    return [e["key"] for e in fixture("dumps.json")["keys"]
            if families is None or e["family"] in families]


def debug_reload(port):
    def reset():
        with RespClient(port, timeout=REPLY_TIMEOUT) as c:
            reply = c.call("DEBUG", "RELOAD", "NOSAVE")
            assert reply == ("simple", "OK"), reply
    return reset


def restore_all(port, keys):
    dumps = {e["key"]: e for e in fixture("dumps.json")["keys"]}

    def reset():
        with RespClient(port, timeout=REPLY_TIMEOUT) as c:
            assert c.call("FLUSHALL").kind == "simple"
            for k in keys:
                reply = c.call("RESTORE", k, "0", binascii.unhexlify(dumps[k]["dump"]))
                assert reply == ("simple", "OK"), "RESTORE of %s (%s): %s" % (
                    k, dumps[k]["type"], reply)
    return reset


def loadchunk_all(port, keys, chunks=None):
    """A reset that writes keys by LOADCHUNK of chunks (default the fixture's)."""
    chunks = chunks or fixture("chunks.json")["chunks"]
    family = {e["key"]: e["family"] for e in fixture("dumps.json")["keys"]}

    def reset():
        with RespClient(port, timeout=REPLY_TIMEOUT) as c:
            assert c.call("FLUSHALL").kind == "simple"
            for k in keys:
                for it, data in chunks[k]:
                    reply = c.call(family[k].upper() + ".LOADCHUNK", k, str(it),
                                   binascii.unhexlify(data))
                    assert reply == ("simple", "OK"), "%s.LOADCHUNK %s %s: %s" % (
                        family[k].upper(), k, it, reply)
    return reset


def start_on_fixture(servers, filename="redisbloom.rdb"):
    d = servers.mkdir()
    shutil.copyfile(RDB, os.path.join(d, filename))
    s = servers.start(options={"dbfilename": filename}, directory=d)
    return s


# --------------------------------------------------------------------------
# Recording RedisBloom's answers (test_module_migration.py run as a script)
# --------------------------------------------------------------------------

def write_keyed(out, by_key, commands):
    """The keys of one part of answers.json, one command (commands) or one
    reply of each protocol a line."""
    keys = list(by_key)
    for ki, k in enumerate(keys):
        if commands:
            body = ",\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":"))
                              for x in by_key[k])
            out.write("%s: [\n%s]" % (json.dumps(k), body))
        else:
            out.write("%s: {" % json.dumps(k))
            for j, protocol in enumerate(("2", "3")):
                body = ",\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":"))
                                  for x in by_key[k][protocol])
                out.write('%s"%s": [\n%s]' % (",\n" if j else "\n", protocol, body))
            out.write("}")
        out.write(",\n" if ki + 1 < len(keys) else "\n")


def resp3_compacted(by):
    """One key's replies as answers.json keeps them: RESP3's null where it
    equals RESP2's."""
    return {"2": by["2"], "3": [None if r3 == r2 else r3 for r2, r3 in zip(by["2"], by["3"])]}


def write_answers(obj, out):
    """answers.json, one command or reply a line."""
    out.write('{"server": %s,\n' % json.dumps(obj["server"]))
    for part in ("sessions", "replies"):
        out.write('"%s": {\n' % part)
        for pi, phase in enumerate(("reads", "writes")):
            out.write('"%s": {\n' % phase)
            write_keyed(out, obj[part][phase], part == "sessions")
            out.write("}%s\n" % ("," if pi == 0 else ""))
        out.write("}%s\n" % ("," if part == "sessions" else ""))
    out.write("}\n")


def check_topk_model(sess, got):
    """The model of the top-k buckets predicts RedisBloom's TOPK.COUNT."""
    for e in fixture("dumps.json")["keys"]:
        if e["family"] != "topk":
            continue
        model = TopKModel(bytes.fromhex(e["dump"]))
        for cmd, reply in zip(sess["reads"][e["key"]], got["reads"][e["key"]]["2"]):
            if cmd[0] == "TOPK.COUNT":
                want = [model.count(x.encode()) for x in cmd[2:]]
                assert [v for _, v in reply[1]] == want, e["key"]
