# SPDX-License-Identifier: BSD-3-Clause
"""The type bloom of the PostgreSQL extension against a real PostgreSQL 15
server (conftest.py starts it): no false negatives and the false-positive
rate asked for, every function and its errors, text and binary round trips,
the filter cache of bloom_contains over every kind of stored value (and
values that differ from the one it holds in their bits alone), the sketch
command reading a filter made in SQL, and parallel plans, whose filters are
the serial ones byte for byte, count included.
"""
import subprocess

import psycopg
import pytest

from conftest import SKETCH_BIN
from test_postgres_hll import (DATA_CORRUPTED, INVALID_BINARY, INVALID_PARAMETER, INVALID_TEXT,
                               NULL_NOT_ALLOWED, PARALLEL, SERIAL, big_table, fails,  # noqa: F401
                               literal_of, native_bytes, one, register_binary_dumper, value,
                               _plan)

# The dump form (docs/bloom-format.md): a 40-byte header and a 48-byte entry
# per layer before the bits; a fixed filter has one layer.
DUMP_HEADER = 40 + 48


class Bloom(bytes):
    """Bytes sent as a binary bloom parameter (bloom_recv)."""


def binary_bloom_dumper(conn):
    register_binary_dumper(conn, Bloom, "bloom")


def filter_of(conn, first, last, capacity=10000, rate=0.01):
    return value(conn, "SELECT bloom_agg(x, %s::bigint, %s::float8)::text"
                       " FROM generate_series(%s::int, %s::int) x",
                 (capacity, rate, first, last))


def test_no_false_negatives_and_the_rate_asked_for(conn):
    for capacity, rate in ((10000, 0.01), (10000, 0.001), (1000, 0.1)):
        f = filter_of(conn, 1, capacity, capacity, rate)
        assert value(conn, "SELECT bool_and(bloom_contains(%s::bloom, x))"
                           " FROM generate_series(1, %s) x", (f, capacity))
        assert value(conn, "SELECT bool_and(%s::bloom @> x) FROM generate_series(1, %s) x",
                     (f, capacity))
        trials = 200000
        positives = value(conn, "SELECT count(*) FILTER (WHERE %s::bloom @> x)"
                                " FROM generate_series(%s, %s) x",
                          (f, capacity + 1, capacity + trials))
        # at most the rate asked for, with 4 standard deviations of room
        sd = (trials * rate * (1 - rate)) ** 0.5
        assert positives <= trials * rate + 4 * sd, (capacity, rate, positives)


def test_what_is_hashed_is_what_hll_agg_hashes(conn):
    f = value(conn, "SELECT bloom_agg(v, 100, 0.01)::text FROM (VALUES ('abc'::text),"
                    " ('12'), ('t'), ('2024-02-29')) t(v)")
    for expr, expected in (("'abc'::text", True), ("'abc'::varchar", True),
                           ("'\\x616263'::bytea", True), ("12", True), ("12::bigint", True),
                           ("true", True), ("'2024-02-29'::date", True), ("'abd'::text", False),
                           ("13", False)):
        assert value(conn, "SELECT %%s::bloom @> %s" % expr, (f,)) is expected, expr


def test_text_and_binary_round_trips(conn):
    binary_bloom_dumper(conn)
    f = filter_of(conn, 1, 5000)
    assert f.startswith("\\x534b4246")  # SKBF
    assert value(conn, "SELECT %s::bloom::text", (f,)) == f
    assert value(conn, "SELECT %s::bloom::text", ("\\x" + f[2:].upper(),)) == f
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT %s::bloom", (f,))
        data = cur.fetchone()[0]
    assert data == native_bytes(f)
    assert value(conn, "SELECT %b::text", (Bloom(data),)) == f
    conn.execute("DROP TABLE IF EXISTS bloom_copy")
    conn.execute("CREATE TABLE bloom_copy (f bloom)")
    with conn.cursor() as cur:
        with cur.copy("COPY (SELECT '%s'::bloom) TO STDOUT (FORMAT binary)"
                      % literal_of(data)) as copy:
            dump = b"".join(bytes(chunk) for chunk in copy)
        with cur.copy("COPY bloom_copy FROM STDIN (FORMAT binary)") as copy:
            copy.write(dump)
    assert value(conn, "SELECT f::text FROM bloom_copy") == f
    conn.execute("DROP TABLE bloom_copy")


def test_malformed_values_are_errors(conn):
    binary_bloom_dumper(conn)
    good = native_bytes(filter_of(conn, 1, 100, 100))
    flipped = bytearray(good)
    flipped[-1] ^= 1  # a bit of the array: its XXH3 no longer matches
    huge = bytearray(good)
    huge[DUMP_HEADER - 48:DUMP_HEADER - 40] = (1 << 47).to_bytes(8, "little")  # m of layer 0
    for bad in (b"", b"SKBF", good[:-1], good + b"\x00", bytes(flipped), bytes(huge),
                b"\x00" * 100, native_bytes(value(conn, "SELECT hll_agg(1)::text"))):
        e = fails(conn, "SELECT %s::bloom", (literal_of(bad),))
        assert e.sqlstate == INVALID_TEXT, (bad[:16], e)
        e = fails(conn, "SELECT bloom_info(%b)", (Bloom(bad),))
        assert e.sqlstate == INVALID_BINARY, (bad[:16], e)
    for literal in ("", "abc", "\\x0", "\\xzz", "\\x" + good.hex() + " "):
        e = fails(conn, "SELECT %s::bloom", (literal,))
        assert e.sqlstate == INVALID_TEXT and 'for type bloom: "' in str(e), literal
    # a stored value that no input function checked
    with conn.transaction(force_rollback=True):
        conn.execute("CREATE CAST (bytea AS bloom) WITHOUT FUNCTION")
        for sql in ("SELECT bloom_contains('\\x00'::bytea::bloom, 1)",
                    "SELECT bloom_info('\\x00'::bytea::bloom)",
                    "SELECT bloom_union_agg(f) FROM (VALUES ('\\x00'::bytea::bloom)) v(f)"):
            with pytest.raises(psycopg.Error) as e, conn.transaction():
                conn.execute(sql)
            assert e.value.sqlstate == DATA_CORRUPTED, sql


@pytest.mark.parametrize("capacity,rate,what", [
    (0, 0.01, "capacity 0 is out of range"), (-5, 0.01, "capacity -5"),
    (100, 0, "rate 0 is out of range"), (100, 0.6, "rate 0.6"), (100, -0.01, "rate -0.01"),
    (100, 1e-16, "rate 1e-16"), (100, float("nan"), "rate NaN"),
    (10 ** 12, 0.01, "too large"), (2 ** 62, 1e-15, "too large"), (10 ** 9, 1e-10, "too large"),
])
def test_capacity_and_rate_out_of_range(conn, capacity, rate, what):
    e = fails(conn, "SELECT bloom_agg(x, %s::bigint, %s::float8) FROM generate_series(1, 3) x",
              (capacity, rate))
    assert e.sqlstate == INVALID_PARAMETER and what in str(e), e


def test_capacity_and_rate_must_be_given_and_stay_the_same(conn):
    for args in ("NULL, 0.01", "100, NULL"):
        e = fails(conn, "SELECT bloom_agg(x, %s) FROM generate_series(1, 3) x" % args)
        assert e.sqlstate == NULL_NOT_ALLOWED
    e = fails(conn, "SELECT bloom_agg(x, 100 + x, 0.01) FROM generate_series(1, 3) x")
    assert e.sqlstate == INVALID_PARAMETER and "changed within a group" in str(e)


def test_nulls(conn):
    f = filter_of(conn, 1, 10)
    # NULL values are skipped, a group of NULLs gives an empty filter, no rows NULL
    assert value(conn, "SELECT (bloom_info(bloom_agg(NULL::int, 10, 0.01))).count"
                       " FROM generate_series(1, 4)") == 0
    assert value(conn, "SELECT bloom_agg(x, 10, 0.01) FROM generate_series(1, 0) x") is None
    assert value(conn, "SELECT bloom_union_agg(NULL::bloom)") is None
    conn.execute("DROP TABLE IF EXISTS one_filter")
    conn.execute("CREATE TABLE one_filter AS SELECT %s::bloom AS f", (f,))
    for sql in ("bloom_contains(NULL, 1)", "bloom_contains(f, NULL::int)", "NULL::bloom @> 1",
                "bloom_union(NULL, f)", "bloom_union(f, NULL)", "bloom_info(NULL)"):
        assert value(conn, "SELECT (%s) IS NULL FROM one_filter" % sql), sql
    conn.execute("DROP TABLE one_filter")


def test_bloom_union_and_union_agg(conn):
    a, b = filter_of(conn, 1, 3000), filter_of(conn, 3001, 6000)
    u = value(conn, "SELECT bloom_union(%s::bloom, %s::bloom)::text", (a, b))
    assert value(conn, "SELECT bool_and(%s::bloom @> x) FROM generate_series(1, 6000) x", (u,))
    # the same bits as one filter of all the items (the count is estimated
    # from the bits after a union, so the headers may differ)
    whole = filter_of(conn, 1, 6000)
    assert native_bytes(u)[DUMP_HEADER:] == native_bytes(whole)[DUMP_HEADER:]
    agg = value(conn, "SELECT bloom_union_agg(f)::text FROM (SELECT bloom_agg(x, 10000, 0.01) f"
                      " FROM generate_series(1, 6000) x GROUP BY x % 7 UNION ALL SELECT NULL) q")
    assert native_bytes(agg)[DUMP_HEADER:] == native_bytes(whole)[DUMP_HEADER:]
    # filters of different shapes do not combine
    other = filter_of(conn, 1, 10, capacity=20000)
    for sql in ("SELECT bloom_union(%s::bloom, %s::bloom)",
                "SELECT bloom_union_agg(f) FROM (VALUES (%s::bloom), (%s::bloom)) v(f)"):
        e = fails(conn, sql, (a, other))
        assert e.sqlstate == INVALID_PARAMETER and "different shapes" in str(e)


def test_bloom_info(conn, tmp_path):
    binary_bloom_dumper(conn)
    f = filter_of(conn, 1, 5000)
    cur = conn.execute("SELECT * FROM bloom_info(%s::bloom)", (f,))
    info = dict(zip([c.name for c in cur.description], cur.fetchone()))
    assert list(info) == ["layout", "bits", "hashes", "capacity", "fp_rate", "count", "bytes",
                          "expected_fp_rate", "estimated_items"]
    # the library's automatic layout, as the command's default makes it for
    # the same capacity and rate (split at 1%: docs/bloom-format.md)
    made = subprocess.run([SKETCH_BIN, "bloom", "create", "-n", "10000", "-p", "0.01",
                           str(tmp_path / "auto.bloom")], stdout=subprocess.PIPE, check=True)
    shape = dict(line.split(": ", 1) for line in made.stdout.decode().splitlines())
    assert (info["layout"], info["bits"], info["hashes"]) == (
        shape["layout"], int(shape["bits"]), int(shape["hashes"]))
    assert info["layout"] == "split"
    assert info["capacity"] == 10000 and info["fp_rate"] == 0.01
    # a filter made in SQL counts its items from its bits (estimated_items),
    # whatever the plan
    assert info["count"] == info["estimated_items"]
    assert info["bytes"] == len(native_bytes(f)) == DUMP_HEADER + info["bits"] // 8
    assert info["bits"] >= 10000 * 9.5 and 1 <= info["hashes"] <= 64
    assert 0 < info["expected_fp_rate"] < 0.01  # half full
    assert abs(info["estimated_items"] - 5000) < 250


def test_bloom_contains_caches_each_kind_of_value(conn):
    # Rows whose filters alternate: every kind of key the cache uses
    # (out-of-line, compressed in line, plain) must tell filters apart.
    conn.execute("DROP TABLE IF EXISTS filters")
    conn.execute("CREATE TABLE filters (id int, f bloom)")
    # g, capacity, items below: small and plain (1, 2), a few items in 6 kB
    # that compress in line (3, 4), many in 120 kB, compressed out of line
    # (5, 6); then uncompressed out of line (11, 12)
    conn.execute("INSERT INTO filters SELECT g, bloom_agg(x, c, 0.01) FROM"
                 " (VALUES (1, 10, 30), (2, 10, 30), (3, 5000, 120), (4, 5000, 120),"
                 " (5, 100000, 3001), (6, 100000, 3001)) s(g, c, below),"
                 " generate_series(1, 3000) x WHERE x % 6 = g - 1 AND x < below GROUP BY g, c")
    conn.execute("ALTER TABLE filters ALTER f SET STORAGE external")  # for new rows
    conn.execute("INSERT INTO filters SELECT 10 + g, bloom_agg(x, 100000, 0.01) FROM"
                 " generate_series(1, 2) g, generate_series(1, 3000) x WHERE x % 2 = g - 1"
                 " GROUP BY g")
    sizes = dict(conn.execute("SELECT id, (pg_column_compression(f) IS NOT NULL,"
                              " pg_column_size(f) < 2000)::text FROM filters").fetchall())
    assert sizes == {1: "(f,t)", 2: "(f,t)", 3: "(t,t)", 4: "(t,t)", 5: "(t,f)", 6: "(t,f)",
                     11: "(f,f)", 12: "(f,f)"}, sizes
    # each filter on every row (a subquery's value, in memory, plain)
    expected = {}
    for fid in value(conn, "SELECT array_agg(id) FROM filters"):
        expected[fid] = value(conn, "SELECT array_agg(x ORDER BY x) FROM generate_series(1, 600) x"
                                    " WHERE (SELECT f FROM filters WHERE id = %s)::text::bloom @> x",
                              (fid,))
        assert len(expected[fid]) >= 4, fid  # no false negatives: every item of it below 600
    # each item against every filter, the filter changing on every row, so
    # that each call reads another one (every kind of key)
    got = {}
    for fid, x in conn.execute("SELECT id, x FROM generate_series(1, 600) x, filters"
                               " WHERE f @> x ORDER BY x, id").fetchall():
        got.setdefault(fid, []).append(x)
    assert got == expected
    # a stored filter on every row, out of line: read once
    ids = value(conn, "SELECT array_agg(x ORDER BY x) FROM generate_series(1, 600) x,"
                      " filters WHERE id = 11 AND f @> x")
    assert ids == expected[11]
    conn.execute("DROP TABLE filters")


def test_the_command_reads_a_filter_made_in_sql(conn, tmp_path):
    f = native_bytes(value(conn, "SELECT bloom_agg('item-' || x, 10000, 0.01)::text"
                                 " FROM generate_series(1, 1000) x"))
    path = tmp_path / "sql.bloom"
    path.write_bytes(f)
    out = subprocess.run([SKETCH_BIN, "bloom", "check", str(path), "item-1", "item-1000",
                          "item-1001", "other"], stdout=subprocess.PIPE, check=False)
    assert out.returncode == 0
    assert out.stdout.decode().split() == ["item-1", "item-1000"]


def test_parallel_bloom_agg_gives_the_serial_filter(conn, big_table):
    sql = "SELECT bloom_agg(v, 200000, 0.01) FROM visits"
    conn.execute(PARALLEL)
    plan = _plan(conn, sql)
    assert "Partial Aggregate" in plan and "Workers Launched: 2" in plan, plan
    binary_bloom_dumper(conn)
    with conn.cursor(binary=True) as cur:
        parallel = cur.execute(sql).fetchone()[0]
        conn.execute(SERIAL)
        assert "Gather" not in _plan(conn, sql)
        serial = cur.execute(sql).fetchone()[0]
    assert parallel[DUMP_HEADER:] == serial[DUMP_HEADER:]
    assert value(conn, "SELECT bool_and(%b @> v) FROM visits", (Bloom(parallel),))


def test_bloom_contains_cache_compares_every_byte(conn):
    # Values of one header and other bits: the header holds each array's
    # XXH3, which a damaged array no longer matches, so it alone does not
    # tell them apart. Small ones stored in line (plain), and large ones in
    # memory (a VALUES list), damaged past the first 64 kB.
    small = native_bytes(filter_of(conn, 1, 50, 100))
    large = native_bytes(filter_of(conn, 1, 3000, 200000))
    assert len(small) < 2000 and len(large) > 200000
    with conn.transaction(force_rollback=True):
        conn.execute("CREATE CAST (bytea AS bloom) WITHOUT FUNCTION")
        conn.execute("CREATE TABLE damaged (id int, f bloom)")
        conn.execute("ALTER TABLE damaged ALTER f SET STORAGE plain")
        for good in (small, large):
            damaged = bytearray(good)
            damaged[-1] ^= 0x10
            assert damaged[:DUMP_HEADER] == good[:DUMP_HEADER]
            rows = (good, good, bytes(damaged))
            if good is small:
                conn.execute("INSERT INTO damaged VALUES (1, %s::bytea::bloom),"
                             " (2, %s::bytea::bloom), (3, %s::bytea::bloom)", rows)
                assert value(conn, "SELECT bool_and(pg_column_compression(f) IS NULL"
                                   " AND pg_column_size(f) < 2000) FROM damaged")
                table, params = "damaged", ()
            else:
                table = ("(VALUES (1, %s::bytea::bloom), (2, %s::bytea::bloom),"
                         " (3, %s::bytea::bloom)) v(id, f)")
                params = rows
            # a row identical to the one before is answered (from the cache)
            assert conn.execute("SELECT id, f @> 1, f @> -1 FROM %s WHERE id < 3" % table,
                                params).fetchall() == [(1, True, False), (2, True, False)]
            # the damaged one is an error alone, and after them
            for where in ("WHERE id = 3", ""):
                with pytest.raises(psycopg.Error) as e, conn.transaction():
                    conn.execute("SELECT id, f @> 1 FROM %s %s" % (table, where),
                                 params).fetchall()
                assert e.value.sqlstate == DATA_CORRUPTED, (where, e.value)


def test_parallel_bloom_agg_gives_the_serial_count(conn, big_table):
    # 300,000 distinct ids: each worker's filter counts its own adds, and the
    # union of their filters cannot count the adds, only estimate them from
    # the bits; the serial plan must give that same number. A filter with
    # every bit set (capacity 10) has no estimate: it counts its capacity.
    binary_bloom_dumper(conn)
    for sql, expected in (
            ("SELECT bloom_agg(id, 400000, 0.01) FROM visits", 300000),
            ("SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(id, 400000, 0.01) f"
             " FROM visits GROUP BY page) q", 300000),
            ("SELECT bloom_agg(id, 10, 0.01) FROM visits", 10)):
        conn.execute(PARALLEL)
        plan = _plan(conn, sql)
        assert "Partial" in plan and "Workers Launched: 2" in plan, plan
        with conn.cursor(binary=True) as cur:
            parallel = cur.execute(sql).fetchone()[0]
            conn.execute(SERIAL)
            assert "Gather" not in _plan(conn, sql)
            serial = cur.execute(sql).fetchone()[0]
        counts = [conn.execute("SELECT count, estimated_items FROM bloom_info(%b)",
                               (Bloom(f),)).fetchone() for f in (parallel, serial)]
        assert counts[0] == counts[1], (sql, counts)
        assert parallel == serial, sql
        count, estimated = counts[0]
        assert count == estimated and abs(count - expected) <= expected // 100, (sql, counts)


def test_bloom_agg_in_a_window_is_the_aggregate_of_each_frame(conn):
    # The final function rewrites the state's count from its bits, and the
    # window's next rows add to that state: each row's filter must still be
    # the one an aggregate of its frame makes.
    window = conn.execute("SELECT bloom_agg(x, 1000, 0.01) OVER (ORDER BY x)::text"
                          " FROM generate_series(1, 40) x ORDER BY x").fetchall()
    frames = conn.execute("SELECT (SELECT bloom_agg(y, 1000, 0.01) FROM generate_series(1, x) y)"
                          "::text FROM generate_series(1, 40) x ORDER BY x").fetchall()
    assert window == frames


@pytest.mark.parametrize("other", [(12, 0.01), (10, 0.0100001)])
def test_filters_of_other_capacity_or_rate_do_not_combine(conn, other):
    # The same bits and hashes, but made for another capacity or rate: the
    # union would keep one argument's, whichever came first.
    a = filter_of(conn, 1, 5, capacity=10, rate=0.01)
    b = filter_of(conn, 1, 5, capacity=other[0], rate=other[1])
    shape = "SELECT layout, bits, hashes, capacity, fp_rate FROM bloom_info(%s::bloom)"
    sa, sb = one(conn, shape, (a,)), one(conn, shape, (b,))
    assert sa[:3] == sb[:3] and sa[3:] != sb[3:], (sa, sb)
    assert native_bytes(a)[DUMP_HEADER:] == native_bytes(b)[DUMP_HEADER:]
    for first, second in ((a, b), (b, a)):
        for sql in ("SELECT bloom_union(%s::bloom, %s::bloom)",
                    "SELECT bloom_union_agg(f ORDER BY n) FROM"
                    " (VALUES (1, %s::bloom), (2, %s::bloom)) v(n, f)"):
            e = fails(conn, sql, (first, second))
            assert e.sqlstate == INVALID_PARAMETER and "different shapes" in str(e), (sql, e)
    # the same capacity and rate still combine, into one value whichever
    # comes first, also when every bit is set (no estimate: the capacity)
    for x, y in ((b, filter_of(conn, 6, 9, capacity=other[0], rate=other[1])),
                 (filter_of(conn, 1, 3000, capacity=other[0], rate=other[1]),
                  filter_of(conn, 3001, 7000, capacity=other[0], rate=other[1]))):
        xy, yx = (value(conn, "SELECT bloom_union(%s::bloom, %s::bloom)::text", args)
                  for args in ((x, y), (y, x)))
        assert xy == yx
        assert value(conn, "SELECT capacity FROM bloom_info(%s::bloom)", (xy,)) == other[0]
    assert value(conn, "SELECT count FROM bloom_info(%s::bloom)", (xy,)) == other[0]
