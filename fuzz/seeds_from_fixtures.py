#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeds for the fuzz targets of RedisBloom's types from the data RedisBloom
itself wrote (tests/fixtures/redisbloom-2.6.28/migration/):

- module_rdb_redisbloom: every DUMP payload's module value, its fields
  rewritten from Redis's RDB encoding into the module harness's stream
  (fuzz/module_harness.h: 8-byte little-endian numbers, strings with a
  4-byte length), after the control byte that picks the type;
- module_loadchunk: every key's BF.SCANDUMP / CF.SCANDUMP chunks as
  BF.LOADCHUNK / CF.LOADCHUNK records (fuzz_module_loadchunk.c).

    python3 fuzz/seeds_from_fixtures.py   # writes fuzz/corpus/<target>/fixture-*
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, os.pardir, "tests", "fixtures", "redisbloom-2.6.28", "migration")
CONTROL = {"MBbloom--": 0, "CMSk-TYPE": 1, "TopK-TYPE": 2, "MBbloomCF": 3, "TDIS-TYPE": 4}
# Redis's module value opcodes (rdb.h: RDB_MODULE_OPCODE_*)
EOF_OP, SINT, UINT, FLOAT, DOUBLE, STRING = 0, 1, 2, 3, 4, 5
RDB_TYPE_MODULE_2 = 7


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        out = self.data[self.pos:self.pos + n]
        if len(out) != n:
            raise ValueError("payload ends early")
        self.pos += n
        return out

    def length(self):
        """Redis's length encoding; (value, None) or (None, special kind)."""
        first = self.take(1)[0]
        kind = first >> 6
        if kind == 0:
            return first & 0x3F, None
        if kind == 1:
            return (first & 0x3F) << 8 | self.take(1)[0], None
        if first == 0x80:
            return struct.unpack(">I", self.take(4))[0], None
        if first == 0x81:
            return struct.unpack(">Q", self.take(8))[0], None
        return None, first & 0x3F

    def string(self):
        n, special = self.length()
        if special is None:
            return self.take(n)
        if special in (0, 1, 2):  # an integer kept as 1, 2 or 4 bytes
            size = 1 << special
            return str(int.from_bytes(self.take(size), "little", signed=True)).encode()
        raise ValueError("compressed strings are not expected (rdbcompression no)")


def harness_stream(payload):
    r = Reader(payload[:-10])  # the RDB version and CRC64 end a DUMP payload
    if r.take(1)[0] != RDB_TYPE_MODULE_2:
        raise ValueError("not a module value")
    r.length()  # the module type's id
    out = bytearray()
    while True:
        op, _ = r.length()
        if op == EOF_OP:
            return bytes(out)
        if op in (SINT, UINT):
            out += struct.pack("<Q", r.length()[0])
        elif op == DOUBLE:
            out += r.take(8)
        elif op == STRING:
            s = r.string()
            out += struct.pack("<I", len(s)) + s
        else:
            raise ValueError("field opcode %d" % op)


def write(target, name, data):
    path = os.path.join(HERE, "corpus", target, name)
    with open(path, "wb") as f:
        f.write(data)


def main():
    with open(os.path.join(FIXTURES, "dumps.json")) as f:
        keys = json.load(f)["keys"]
    for k in keys:
        stream = harness_stream(bytes.fromhex(k["dump"]))
        write("module_rdb_redisbloom", "fixture-" + k["key"].replace(":", "-"),
              bytes([CONTROL[k["type"]]]) + stream)
    with open(os.path.join(FIXTURES, "chunks.json")) as f:
        chunks = json.load(f)["chunks"]
    for key, pieces in chunks.items():
        control = 8 if key.startswith("cf:") else 16
        records = bytearray([control])
        for _, hexdata in pieces:
            data = bytes.fromhex(hexdata)
            records += bytes([0]) + struct.pack("<H", len(data)) + data
        write("module_loadchunk", "fixture-" + key.replace(":", "-"), bytes(records))


if __name__ == "__main__":
    main()
