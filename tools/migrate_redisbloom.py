#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Copies RedisBloom's keys from one server to another over the network.

    python3 tools/migrate_redisbloom.py --from redis://old:6379 --to redis://new:6379

For moving between servers whose RDB files do not load into each other,
such as Redis 8 (RDB version 12) to Redis 7.0 or Valkey 8 with sketch.so:
every key of RedisBloom's types (MBbloom--, MBbloomCF, CMSk-TYPE,
TopK-TYPE, TDIS-TYPE) is copied with its time to live.

- Bloom and Cuckoo filters go as BF.SCANDUMP / CF.SCANDUMP chunks, which the
  target takes with BF.LOADCHUNK / CF.LOADCHUNK.
- Count-min sketches, top-k and t-digests, which RedisBloom cannot dump in
  chunks, go as DUMP payloads. A payload of a newer RDB version than the
  target reads is given the target's version, its checksum recomputed: a
  module value is encoded the same way in both, and sketch.so checks every
  field it reads.

A key that already exists on the target is left alone and reported, unless
--replace is given. The exit status is 0 only if every key was copied.
Needs redis-py (Debian's python3-redis).
"""
import argparse
import sys

import redis

CHUNKED = {"MBbloom--": "BF", "MBbloomCF": "CF"}
DUMPED = ("CMSk-TYPE", "TopK-TYPE", "TDIS-TYPE")
# The RDB version a DUMP payload is rewritten to when the target refuses a
# newer one: Redis 7.0's, which Valkey 8 reads too.
OLDEST_TARGET_RDB = 10
_CRC64_POLY = 0x95AC9329AC4BC9B5  # Redis's crc64 (Jones), reflected


def _crc64_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CRC64_POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc64_table()


def crc64(data):
    crc = 0
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def with_rdb_version(payload, version):
    """The DUMP payload with another RDB version and its checksum fixed:
    value, 2-byte version, 8-byte CRC64 of everything before it."""
    body = payload[:-10] + version.to_bytes(2, "little")
    return body + crc64(body).to_bytes(8, "little")


def copy_chunks(src, dst, key, family):
    cursor = 0
    while True:
        cursor, data = src.execute_command(family + ".SCANDUMP", key, cursor)
        if cursor == 0:
            return
        dst.execute_command(family + ".LOADCHUNK", key, cursor, data)


def copy_dump(src, dst, key):
    payload = src.dump(key)
    try:
        dst.restore(key, 0, payload)
    except redis.ResponseError as e:
        if "version" not in str(e):
            raise
        dst.restore(key, 0, with_rdb_version(payload, OLDEST_TARGET_RDB))


def migrate(src, dst, match, replace, out):
    copied = failed = 0
    for key in src.scan_iter(match=match, count=1000):
        kind = src.type(key).decode()
        if kind not in CHUNKED and kind not in DUMPED:
            continue
        try:
            if dst.exists(key):
                if not replace:
                    raise RuntimeError("exists on the target (--replace to overwrite)")
                dst.delete(key)
            if kind in CHUNKED:
                copy_chunks(src, dst, key, CHUNKED[kind])
            else:
                copy_dump(src, dst, key)
            ttl = src.pttl(key)
            if ttl > 0:
                dst.pexpire(key, ttl)
            copied += 1
        except (redis.ResponseError, RuntimeError) as e:
            failed += 1
            out.write("%s (%s): %s\n" % (key.decode(errors="replace"), kind, e))
    out.write("copied %d keys, %d failed\n" % (copied, failed))
    return failed == 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="source", required=True, help="redis://host:port[/db]")
    p.add_argument("--to", dest="target", required=True, help="redis://host:port[/db]")
    p.add_argument("--match", default="*", help="only keys matching this SCAN pattern")
    p.add_argument("--replace", action="store_true", help="overwrite keys the target has")
    a = p.parse_args(argv)
    src = redis.Redis.from_url(a.source)
    dst = redis.Redis.from_url(a.target)
    return 0 if migrate(src, dst, a.match, a.replace, sys.stdout) else 1


if __name__ == "__main__":
    sys.exit(main())
