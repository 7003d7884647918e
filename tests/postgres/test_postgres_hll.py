# SPDX-License-Identifier: BSD-3-Clause
"""The type hll of the PostgreSQL extension against a real PostgreSQL 15
server (conftest.py starts it): every function, its errors and their
SQLSTATEs, text and binary round trips, accuracy against the exact count,
agreement with the sketch command and with a real redis-server, and parallel
plans that give the serial result.
"""
import json
import math
import subprocess

import psycopg
import pytest
from psycopg import pq
from psycopg.adapt import Dumper

import pg_server
from conftest import SKETCH_BIN

MIN_P, MAX_P, DEFAULT_P, REDIS_P = 4, 18, 14, 14
INVALID_TEXT = "22P02"
INVALID_BINARY = "22P03"
INVALID_PARAMETER = "22023"
NULL_NOT_ALLOWED = "22004"
DATA_CORRUPTED = "XX001"
# What the estimate may miss by in these tests: 3 standard errors of
# 1.04/sqrt(m), for a test that fails by chance once in 370 runs at most.
SIGMAS = 3


def relative_error(p):
    return 1.04 / math.sqrt(1 << p)


def one(conn, sql, params=None):
    return conn.execute(sql, params).fetchone()


def value(conn, sql, params=None):
    return one(conn, sql, params)[0]


def fails(conn, sql, params=None):
    """The error that sql raises; the connection must still work after it
    (a crashed backend would have closed it)."""
    with pytest.raises(psycopg.Error) as e:
        conn.execute(sql, params)
    assert value(conn, "SELECT 1") == 1
    return e.value


def native_bytes(literal):
    assert literal.startswith("\\x")
    return bytes.fromhex(literal[2:])


def literal_of(data):
    return "\\x" + data.hex()


def sketch_cli(*args, stdin=None):
    result = subprocess.run([SKETCH_BIN, *args], input=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, check=True)
    return result.stdout.decode()


class Hll(bytes):
    """Bytes sent as a binary hll parameter (hll_recv)."""


def register_binary_dumper(conn, cls, type_name):
    """Makes conn send instances of cls (bytes) as binary parameters of
    type type_name, through its receive function."""
    class BinaryDumper(Dumper):
        format = pq.Format.BINARY
        oid = value(conn, "SELECT %s::regtype::oid", (type_name,))

        def dump(self, obj):
            return bytes(obj)

    conn.adapters.register_dumper(cls, BinaryDumper)


def binary_hll_dumper(conn):
    register_binary_dumper(conn, Hll, "hll")


# ---------------------------------------------------------------- the extension

def test_extension_is_installed_from_the_build(pg, conn):
    assert (value(conn, "SELECT extversion FROM pg_extension WHERE extname = 'sketch'")
            == pg_server.project_version())
    # the server loaded the staged sketch.so, not one of the system's
    path = value(conn, "SELECT setting FROM pg_settings WHERE name = 'extension_destdir'")
    assert pg.files["sketch.so"].startswith(path)
    assert value(conn, "SELECT hll_count(hll_agg(1))") == 1


def test_a_database_of_0_2_0_updates_to_this_version(conn):
    # ALTER EXTENSION sketch UPDATE finds a path from the release before
    version = pg_server.project_version()
    assert (value(conn, "SELECT path FROM pg_extension_update_paths('sketch')"
                        " WHERE source = '0.2.0' AND target = %s", (version,))
            == "0.2.0--" + version)


def test_functions_are_strict_immutable_and_parallel_safe(conn):
    # (both types' functions: the extension's catalog in one place)
    rows = conn.execute(
        "SELECT p.proname, p.proisstrict, p.provolatile, p.proparallel, p.prokind"
        " FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid"
        " JOIN pg_extension e ON e.oid = d.refobjid WHERE e.extname = 'sketch'").fetchall()
    by_name = {}
    for name, strict, volatile, parallel, kind in rows:
        by_name.setdefault(name, []).append((strict, volatile, parallel, kind))
        assert parallel == "s", name
    # transition and combine functions keep their state through NULLs
    not_strict = {"hll_agg_trans", "hll_union_agg_trans", "hll_agg_combine",
                  "bloom_agg_trans", "bloom_union_agg_trans", "bloom_agg_combine"}
    # what hashes a value's text output depends on settings (DateStyle, ...)
    stable = {"hll_agg_trans", "bloom_agg_trans", "bloom_contains"}
    for name, variants in by_name.items():
        for strict, volatile, _, kind in variants:
            if kind == "a":
                continue
            assert strict == (name not in not_strict), name
            assert volatile == ("s" if name in stable else "i"), name
    for name in ("hll_in", "hll_out", "hll_recv", "hll_send", "hll_count", "hll_estimate",
                 "hll_union", "hll_precision", "hll_fold", "hll_compare", "hll_to_redis",
                 "hll_from_redis", "hll_agg", "hll_union_agg", "bloom_in", "bloom_out",
                 "bloom_recv", "bloom_send", "bloom_contains", "bloom_union", "bloom_info",
                 "bloom_agg", "bloom_union_agg"):
        assert name in by_name, name
    aggs = conn.execute(
        "SELECT aggfnoid::regprocedure::text, aggcombinefn::text, aggserialfn::text,"
        " aggdeserialfn::text FROM pg_aggregate a JOIN pg_depend d ON d.objid = a.aggfnoid"
        " JOIN pg_extension e ON e.oid = d.refobjid WHERE e.extname = 'sketch'").fetchall()
    assert len(aggs) == 5
    for name, combine, serial, deserial in aggs:
        kind = name.split("_")[0]
        assert (combine, serial, deserial) == (kind + "_agg_combine", kind + "_agg_serialize",
                                               kind + "_agg_deserialize"), name


# ---------------------------------------------------------------- text and binary

@pytest.mark.parametrize("p,n", [(4, 0), (4, 1000), (14, 0), (14, 10), (14, 100000),
                                 (18, 5000), (18, 300000)])
def test_text_round_trip(conn, p, n):
    literal = value(conn, "SELECT hll_agg(x, %s)::text FROM generate_series(1, %s) x", (p, n))
    if n == 0:
        assert literal is None  # no rows: no sketch, as for sum()
        literal = value(conn, "SELECT hll_agg(NULL::int, %s)::text", (p,))
    assert literal.startswith("\\x534b484c")  # SKHL
    assert literal == literal.lower()
    assert value(conn, "SELECT %s::hll::text", (literal,)) == literal
    # either case of hex digits
    assert value(conn, "SELECT %s::hll::text", ("\\x" + literal[2:].upper(),)) == literal
    expected = value(conn, "SELECT hll_count(hll_agg(x, %s)) FROM generate_series(1, %s) x",
                     (p, n)) if n else 0
    assert value(conn, "SELECT hll_count(%s::hll)", (literal,)) == expected


def test_binary_round_trip_as_parameter_and_result(conn):
    binary_hll_dumper(conn)
    for n in (0, 7, 50000):
        literal = value(conn, "SELECT hll_agg(x) FROM generate_series(0, %s) x", (n,))
        with conn.cursor(binary=True) as cur:
            cur.execute("SELECT hll_agg(x) FROM generate_series(0, %s) x", (n,))
            data = cur.fetchone()[0]
        assert isinstance(data, bytes)
        assert data == native_bytes(literal)  # hll_send: the native bytes
        assert value(conn, "SELECT %b::text", (Hll(data),)) == literal  # hll_recv
        assert value(conn, "SELECT hll_count(%b)", (Hll(data),)) == value(
            conn, "SELECT hll_count(%s::hll)", (literal,))


def copy_table(conn, src, dst, options):
    """COPY src TO STDOUT, then those rows FROM STDIN into dst, with the
    COPY options given (as SQL, after the table's name)."""
    with conn.cursor() as cur:
        with cur.copy("COPY %s TO STDOUT%s" % (src, options)) as copy:
            data = b"".join(bytes(chunk) for chunk in copy)
        with cur.copy("COPY %s FROM STDIN%s" % (dst, options)) as copy:
            copy.write(data)


def test_copy_binary_round_trip(conn):
    conn.execute("DROP TABLE IF EXISTS copy_src, copy_dst")
    conn.execute("CREATE TABLE copy_src AS SELECT g, hll_agg(x, 10 + g) AS s"
                 " FROM generate_series(1, 40000) x, generate_series(0, 8) g"
                 " WHERE x % 9 >= g GROUP BY g")
    conn.execute("CREATE TABLE copy_dst (g int, s hll)")
    copy_table(conn, "copy_src", "copy_dst", " (FORMAT binary)")
    assert value(conn, "SELECT count(*) FROM copy_dst") == 9
    assert value(conn, "SELECT count(*) FROM copy_src a JOIN copy_dst b USING (g)"
                       " WHERE a.s::text = b.s::text") == 9
    # and through text COPY
    conn.execute("TRUNCATE copy_dst")
    copy_table(conn, "copy_src", "copy_dst", "")
    assert value(conn, "SELECT count(*) FROM copy_src a JOIN copy_dst b USING (g)"
                       " WHERE a.s::text = b.s::text") == 9
    conn.execute("DROP TABLE copy_src, copy_dst")


def _valid_literal(conn, n=10):
    return value(conn, "SELECT hll_agg(x)::text FROM generate_series(1, %s) x", (n,))


def test_malformed_literals_are_invalid_text_representation(conn):
    good = _valid_literal(conn)
    data = native_bytes(good)
    flipped = bytearray(data)
    flipped[-1] ^= 1  # a register entry: the checksum no longer matches
    bad_version = bytearray(data)
    bad_version[4] = 2
    cases = {
        "": "\\x followed by",
        "hello": "\\x followed by",
        "534b484c": "\\x followed by",  # no \x
        "\\": "\\x followed by",
        "\\x": "",  # no bytes: too short to be a sketch
        "\\x5": "two hexadecimal digits",
        good + "0": "two hexadecimal digits",
        "\\xzz": "only hexadecimal digits",
        good[:-2] + "g0": "only hexadecimal digits",
        " " + good: "\\x followed by",
        good + " ": "two hexadecimal digits",
        good[:-2]: "",  # one byte short
        good + "00": "",  # one byte too many
        literal_of(bytes(flipped)): "checksum",
        literal_of(bytes(bad_version)): "version",
        literal_of(b"SKHL"): "",
        literal_of(b"\x00" * 16): "",
        "\\x" + "00" * 1100000: "longer than any value",
    }
    for literal, detail in cases.items():
        e = fails(conn, "SELECT %s::hll", (literal,))
        assert e.sqlstate == INVALID_TEXT, (literal[:40], e)
        assert str(e).startswith('invalid input syntax for type hll: "'), str(e)
        assert detail in (e.diag.message_detail or ""), (literal[:40], e.diag.message_detail)
    # long literals are quoted in part only
    e = fails(conn, "SELECT %s::hll", ("\\x" + "00" * 1100000,))
    assert len(str(e).splitlines()[0]) < 100


def test_a_redis_string_is_not_an_hll_literal(conn):
    redis = value(conn, "SELECT hll_to_redis(hll_agg(x)) FROM generate_series(1, 10) x")
    e = fails(conn, "SELECT %s::hll", (literal_of(redis),))
    assert e.sqlstate == INVALID_TEXT
    assert "Redis" in e.diag.message_detail and "hll_from_redis" in e.diag.message_hint


def test_malformed_binary_is_invalid_binary_representation(conn):
    binary_hll_dumper(conn)
    data = native_bytes(_valid_literal(conn))
    redis = value(conn, "SELECT hll_to_redis(hll_agg(1))")
    for bad in (b"", b"junk", data[:-1], data + b"\x00", data[:12] + b"\x00\x00\x00\x00"
                + data[16:], redis, b"\x00" * (4 << 20)):
        e = fails(conn, "SELECT hll_count(%b)", (Hll(bad),))
        assert e.sqlstate == INVALID_BINARY, (bad[:16], e)


def test_a_damaged_stored_value_is_an_error_not_a_crash(conn):
    # A value of type hll that no input function checked: only a superuser's
    # binary-coercible cast makes one.
    with conn.transaction(force_rollback=True):
        conn.execute("CREATE CAST (bytea AS hll) WITHOUT FUNCTION")
        for bad in ("\\x", "\\x00", "\\x534b484c01010e01ffffffff"):
            for sql in ("SELECT hll_count(%s::bytea::hll)", "SELECT hll_precision(%s::bytea::hll)",
                        "SELECT hll_union(%s::bytea::hll, hll_agg(1))",
                        "SELECT hll_union_agg(s) FROM (VALUES (%s::bytea::hll)) v(s)"):
                with pytest.raises(psycopg.Error) as e, conn.transaction():
                    conn.execute(sql, (bad,))
                assert e.value.sqlstate == DATA_CORRUPTED, (sql, e.value)
            # hll_out prints what is there
            assert value(conn, "SELECT %s::bytea::hll::text", (bad,)) == bad


# ---------------------------------------------------------------- hll_agg

@pytest.mark.parametrize("p", [MIN_P, 10, DEFAULT_P, MAX_P])
def test_hll_agg_against_the_exact_count(conn, p):
    for distinct in (0, 1, 1000, 100000):
        rows = max(distinct * 3, 1)
        count = value(conn, "SELECT hll_count(hll_agg(x %% %s, %s)) FROM generate_series(1, %s) x",
                      (max(distinct, 1), p, rows) if distinct else (1, p, 0))
        if distinct == 0:
            assert count is None  # no rows
            continue
        assert abs(count - distinct) <= SIGMAS * relative_error(p) * distinct + 1, (p, distinct,
                                                                                   count)
    assert value(conn, "SELECT hll_precision(hll_agg(1, %s))", (p,)) == p


def test_hll_agg_of_text_is_sketch_count_of_the_same_lines(conn, tmp_path):
    lines = ["user-%d" % (i % 70000) for i in range(200000)] + ["", "é", "a\tb", "x y"]
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli_count = int(sketch_cli("count", str(path)))
    out = tmp_path / "lines.skh"
    sketch_cli("count", "-o", str(out), str(path))
    conn.execute("DROP TABLE IF EXISTS cli_lines")
    conn.execute("CREATE TABLE cli_lines (line text)")
    with conn.cursor() as cur:
        with cur.copy("COPY cli_lines FROM STDIN") as copy:
            for line in lines:
                copy.write_row((line,))
    count, literal = one(conn, "SELECT hll_count(hll_agg(line)), hll_agg(line)::text"
                               " FROM cli_lines")
    assert count == cli_count
    # the same bytes as the command's sketch file
    assert native_bytes(literal) == out.read_bytes()
    # and the command reads a sketch made in SQL
    sql_file = tmp_path / "sql.skh"
    sql_file.write_bytes(native_bytes(literal))
    assert int(sketch_cli("hll", "count", str(sql_file))) == cli_count
    assert int(sketch_cli("hll", "count", str(sql_file), str(out))) == cli_count
    conn.execute("DROP TABLE cli_lines")


def test_what_hll_agg_hashes_per_type(conn):
    def sketch(expr, rows="generate_series(1, 3) x"):
        return value(conn, "SELECT hll_agg(%s)::text FROM %s" % (expr, rows))

    # the text output of most types: an integer is its decimal digits
    assert sketch("x") == sketch("x::text") == sketch("x::bigint") == sketch("x::numeric")
    assert sketch("x::text") != sketch("x::float8 / 3")
    # text, varchar and domains over them: their bytes, which are their output
    conn.execute("DROP DOMAIN IF EXISTS sketch_label")
    conn.execute("CREATE DOMAIN sketch_label AS text")
    assert sketch("x::text::sketch_label") == sketch("x::varchar") == sketch("x::text")
    conn.execute("DROP DOMAIN sketch_label")
    # bytea: its bytes, not its \x output
    assert value(conn, "SELECT hll_agg('\\x616263'::bytea)::text") == value(
        conn, "SELECT hll_agg('abc'::text)::text")
    assert value(conn, "SELECT hll_agg('\\x616263'::bytea)::text") != value(
        conn, "SELECT hll_agg('\\x616263'::text)::text")
    # char(n) with its padding, as it prints (a cast to text drops it)
    assert value(conn, "SELECT hll_agg('ab'::char(4))::text") == value(
        conn, "SELECT hll_agg('ab  '::text)::text")
    assert value(conn, "SELECT hll_agg('ab'::char(4)::text)::text") == value(
        conn, "SELECT hll_agg('ab'::text)::text")
    # boolean: its output t/f, where its cast to text says true/false
    assert value(conn, "SELECT hll_agg(true)::text") == value(conn, "SELECT hll_agg('t'::text)::text")
    assert value(conn, "SELECT hll_agg(true::text)::text") == value(
        conn, "SELECT hll_agg('true'::text)::text")
    # other types print as their output function writes them
    for expr, text in (("'2024-02-29'::date", "2024-02-29"),
                       ("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
                        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
                       ("'{1,2}'::int[]", "{1,2}"), ("row(1, 'a')", "(1,a)"),
                       ("'10.0.0.1'::inet", "10.0.0.1"), ("0.1::float8", "0.1"),
                       ("'{\"a\": 1}'::jsonb", '{"a": 1}')):
        assert value(conn, "SELECT hll_agg(%s)::text" % expr) == value(
            conn, "SELECT hll_agg(%s::text)::text", (text,)), expr
    # a literal of no type has to be given one, as for any polymorphic function
    e = fails(conn, "SELECT hll_agg('abc')")
    assert "polymorphic" in str(e)
    # toasted values are hashed whole: compressed inline (the default for a
    # compressible value) and out of line uncompressed (STORAGE EXTERNAL)
    big = "x" * 100000
    for storage in ("EXTENDED", "EXTERNAL"):
        conn.execute("DROP TABLE IF EXISTS toasted")
        conn.execute("CREATE TABLE toasted (t text, b bytea)")
        conn.execute("ALTER TABLE toasted ALTER t SET STORAGE %s, ALTER b SET STORAGE %s"
                     % (storage, storage))
        conn.execute("INSERT INTO toasted VALUES (%s, convert_to(%s, 'UTF8'))", (big, big))
        stored = value(conn, "SELECT pg_column_size(t) FROM toasted")
        assert (stored < 10000) if storage == "EXTENDED" else (stored >= len(big)), stored
        assert value(conn, "SELECT hll_agg(t)::text FROM toasted") == value(
            conn, "SELECT hll_agg(b)::text FROM toasted") == value(
            conn, "SELECT hll_agg(%s::text)::text", (big,)), storage
    conn.execute("DROP TABLE toasted")


def test_hll_agg_nulls_and_empty_input(conn):
    # NULL values are skipped; a group has a sketch from its first row on
    assert value(conn, "SELECT hll_count(hll_agg(NULL::text)) FROM generate_series(1, 5)") == 0
    assert value(conn, "SELECT hll_precision(hll_agg(NULL::text, 9)) FROM generate_series(1, 5)") == 9
    assert value(conn, "SELECT hll_count(hll_agg(nullif(x % 3, 0)))"
                       " FROM generate_series(1, 300) x") == 2
    # no rows: NULL, as sum() gives
    assert value(conn, "SELECT hll_agg(x) FROM generate_series(1, 0) x") is None
    assert value(conn, "SELECT hll_agg(x, 12) FROM generate_series(1, 0) x") is None
    # per group
    rows = conn.execute("SELECT g, hll_count(hll_agg(x)) FROM generate_series(1, 3000) x,"
                        " generate_series(1, 3) g WHERE x <= g * 1000 GROUP BY g ORDER BY g"
                        ).fetchall()
    for g, count in rows:
        assert abs(count - g * 1000) <= SIGMAS * relative_error(DEFAULT_P) * g * 1000 + 1


@pytest.mark.parametrize("p", [-1, 0, 3, 19, 64, 2 ** 31 - 1])
def test_hll_agg_precision_out_of_range(conn, p):
    e = fails(conn, "SELECT hll_agg(x, %s) FROM generate_series(1, 3) x", (p,))
    assert e.sqlstate == INVALID_PARAMETER
    assert "precision %d is out of range" % p in str(e)
    # even over NULL values
    e = fails(conn, "SELECT hll_agg(NULL::int, %s)", (p,))
    assert e.sqlstate == INVALID_PARAMETER


def test_hll_agg_precision_must_be_given_and_stay_the_same(conn):
    e = fails(conn, "SELECT hll_agg(x, NULL) FROM generate_series(1, 3) x")
    assert e.sqlstate == NULL_NOT_ALLOWED
    e = fails(conn, "SELECT hll_agg(x, 10 + x) FROM generate_series(1, 3) x")
    assert e.sqlstate == INVALID_PARAMETER and "changed from 11 to 12" in str(e)


def test_hll_agg_in_a_window_and_many_groups(conn):
    # a running count: the final function may run on the same state again
    counts = [r[0] for r in conn.execute(
        "SELECT hll_count(hll_agg(x % 50) OVER (ORDER BY x)) FROM generate_series(1, 200) x"
        " ORDER BY x").fetchall()]
    assert counts[:50] == list(range(1, 51)) and set(counts[50:]) == {50}
    # hashed aggregation over many groups, each sketch in the aggregate's memory
    rows = conn.execute("SELECT hll_count(hll_agg(x)) FROM generate_series(1, 200000) x"
                        " GROUP BY x % 20000").fetchall()
    # (two of ten items in one of 16384 registers: one group in 360 counts 9)
    assert len(rows) == 20000 and {r[0] for r in rows} <= {9, 10}
    assert sum(r[0] for r in rows) >= 199000


def test_many_small_groups_hash_without_spilling(conn):
    # hll_agg's SSPACE tells the planner what a group's state takes: with
    # PostgreSQL's guess for an internal state (8 KB), 20,000 groups are over
    # what 64 MB of work_mem holds, and the HashAggregate spills to disk.
    conn.execute("SET work_mem = '64MB'")
    conn.execute("SET max_parallel_workers_per_gather = 0")
    try:
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT x % 20000, hll_agg(x)"
            " FROM generate_series(1, 100000) x GROUP BY 1").fetchall())
    finally:
        conn.execute("RESET work_mem")
        conn.execute("RESET max_parallel_workers_per_gather")
    assert "HashAggregate" in plan and "Batches: 1 " in plan, plan


# ---------------------------------------------------------------- functions on sketches

def test_hll_count_and_estimate(conn):
    for p, n in ((4, 100), (14, 0), (14, 1), (14, 25000), (18, 100000)):
        h = value(conn, "SELECT hll_agg(x, %s) FROM generate_series(1, %s) x", (p, n)) \
            if n else value(conn, "SELECT hll_agg(NULL::int, %s)", (p,))
        count = value(conn, "SELECT hll_count(%s::hll)", (h,))
        est = one(conn, "SELECT count, standard_error, lower, upper FROM hll_estimate(%s::hll)",
                  (h,))
        assert est[0] == count
        assert est[2] <= count <= est[3]
        if n == 0:
            assert count == 0 and est[2] == est[3] == 0
        else:
            assert est[2] < est[3]
            assert est[2] <= n <= est[3] or abs(count - n) <= SIGMAS * relative_error(p) * n
        if n > 0:
            # the relative standard error of the estimator at this count: at
            # most about 1.04/sqrt(m), which it reaches once n is many times
            # m (below, linear counting does better)
            assert 0 < est[1] <= 1.1 * relative_error(p)
            if n > 5 * (1 << p):
                assert est[1] == pytest.approx(relative_error(p), rel=0.1)
        if n >= 25000:
            # bounds at 2 sd
            assert est[3] - est[2] == pytest.approx(4 * est[1] * count, rel=0.1)
    # the row type
    names = [c.name for c in conn.execute("SELECT (hll_estimate(hll_agg(1))).*").description]
    assert names == ["count", "standard_error", "lower", "upper"]


def test_hll_union_and_operator(conn):
    a = "(SELECT hll_agg(x) FROM generate_series(1, 30000) x)"
    b = "(SELECT hll_agg(x) FROM generate_series(20001, 50000) x)"
    whole = value(conn, "SELECT hll_agg(x)::text FROM generate_series(1, 50000) x")
    assert value(conn, "SELECT hll_union(%s, %s)::text" % (a, b)) == whole
    assert value(conn, "SELECT (%s || %s)::text" % (a, b)) == whole
    assert value(conn, "SELECT (%s || %s)::text" % (b, a)) == whole
    # a union with an empty sketch is the sketch
    assert value(conn, "SELECT (%s || hll_agg(NULL::int))::text" % a) == value(
        conn, "SELECT %s::text" % a)
    # different precisions: the smaller one, the other folded exactly
    assert value(conn, "SELECT hll_union(hll_agg(x, 16), hll_agg(x + 10000, 11))::text"
                       " FROM generate_series(1, 20000) x") == value(
        conn, "SELECT hll_agg(x, 11)::text FROM generate_series(1, 30000) x")


def test_hll_union_agg(conn):
    whole = value(conn, "SELECT hll_agg(x)::text FROM generate_series(1, 100000) x")
    assert value(conn, "SELECT hll_union_agg(s)::text FROM (SELECT hll_agg(x) s"
                       " FROM generate_series(1, 100000) x GROUP BY x % 17) q") == whole
    # NULL sketches are skipped; none at all is NULL
    assert value(conn, "SELECT hll_union_agg(s)::text FROM (SELECT hll_agg(x) s"
                       " FROM generate_series(1, 100000) x GROUP BY x % 17"
                       " UNION ALL SELECT NULL) q") == whole
    assert value(conn, "SELECT hll_union_agg(NULL::hll) FROM generate_series(1, 3)") is None
    assert value(conn, "SELECT hll_union_agg(s) FROM (SELECT NULL::hll s WHERE false) q") is None
    # mixed precisions: the smallest
    assert value(conn, "SELECT hll_union_agg(s)::text FROM (SELECT hll_agg(x, 8 + g) s"
                       " FROM generate_series(1, 9000) x, generate_series(0, 2) g"
                       " WHERE x % 3 = g GROUP BY g) q") == value(
        conn, "SELECT hll_agg(x, 8)::text FROM generate_series(1, 9000) x")


def test_hll_precision_and_fold(conn):
    for p in (MIN_P, 9, DEFAULT_P, MAX_P):
        assert value(conn, "SELECT hll_precision(hll_agg(1, %s))", (p,)) == p
    # folding gives the sketch the items would have built at that precision
    for low in (MIN_P, 10, 13, 14):
        assert value(conn, "SELECT hll_fold(hll_agg(x, 14), %s)::text"
                           " FROM generate_series(1, 50000) x", (low,)) == value(
            conn, "SELECT hll_agg(x, %s)::text FROM generate_series(1, 50000) x", (low,))
    for bad in (MIN_P - 1, MAX_P + 1, -5):
        e = fails(conn, "SELECT hll_fold(hll_agg(1), %s)", (bad,))
        assert e.sqlstate == INVALID_PARAMETER
    e = fails(conn, "SELECT hll_fold(hll_agg(1, 12), 13)")
    assert e.sqlstate == INVALID_PARAMETER and "cannot fold" in str(e)


def test_hll_compare_is_the_libraries_joint_estimate(conn, tmp_path):
    a_path, b_path = tmp_path / "a.txt", tmp_path / "b.txt"
    a_path.write_text("".join("%d\n" % i for i in range(1, 20001)))
    b_path.write_text("".join("%d\n" % i for i in range(10001, 30001)))
    for path in (a_path, b_path):
        sketch_cli("count", "-o", str(path) + ".skh", str(path))
    cli = json.loads(sketch_cli("hll", "compare", "--json", str(a_path) + ".skh",
                                str(b_path) + ".skh"))
    cur = conn.execute(
        "SELECT * FROM hll_compare((SELECT hll_agg(x::text) FROM generate_series(1, 20000) x),"
        " (SELECT hll_agg(x::text) FROM generate_series(10001, 30000) x))")
    row = dict(zip([c.name for c in cur.description], cur.fetchone()))
    assert list(row) == ["precision", "union", "union_error", "intersection",
                         "intersection_error", "a_only", "a_only_error", "b_only",
                         "b_only_error", "jaccard", "jaccard_error", "a_in_b", "a_in_b_error"]
    assert row["precision"] == cli["precision"] == 14
    for part in ("union", "intersection", "a_only", "b_only", "jaccard", "a_in_b"):
        assert row[part] == cli[part]["estimate"], part
        assert row[part + "_error"] == cli[part]["standard_error"], part
    # and near the truth
    for part, truth in (("union", 30000), ("intersection", 10000), ("a_only", 10000),
                        ("b_only", 10000), ("jaccard", 1 / 3), ("a_in_b", 0.5)):
        assert abs(row[part] - truth) <= 4 * row[part + "_error"] + 1e-9, part
    # the precision compared at is the smaller one
    assert value(conn, "SELECT (hll_compare(hll_agg(1, 16), hll_agg(1, 11))).precision") == 11
    # the composite in an expression
    assert value(conn, "SELECT round((hll_compare(hll_agg(x), hll_agg(x))).jaccard::numeric, 2)"
                       " FROM generate_series(1, 1000) x") == 1


def test_strict_functions_return_null_for_null(conn):
    h = "hll_agg(1)"
    for sql in ("hll_count(NULL)", "hll_precision(NULL)", "hll_union(NULL, %s)" % h,
                "hll_union(%s, NULL)" % h, "NULL::hll || %s" % h, "hll_fold(NULL, 10)",
                "hll_fold(%s, NULL)" % h, "hll_to_redis(NULL)", "hll_from_redis(NULL)",
                "hll_estimate(NULL)", "hll_compare(NULL, %s)" % h, "hll_compare(%s, NULL)" % h,
                "NULL::hll::text", "NULL::text::hll"):
        assert value(conn, "SELECT (%s) IS NULL" % sql), sql


# ---------------------------------------------------------------- Redis

def test_hll_to_redis_gives_pfcount_the_same_count(conn, redis_client):
    r = redis_client
    for n in (0, 1, 100, 3000, 200000):
        h = value(conn, "SELECT hll_agg(x::text) FROM generate_series(1, %s) x", (n,)) if n \
            else value(conn, "SELECT hll_agg(NULL::text)")
        data = value(conn, "SELECT hll_to_redis(%s::hll)", (h,))
        assert data.startswith(b"HYLL")
        r.set("from-sql", data)
        assert r.pfcount("from-sql") == value(conn, "SELECT hll_count(%s::hll)", (h,)), n
        # the key is a real HyperLogLog: PFADD of the same items changes nothing
        if n:
            assert r.pfadd("from-sql", *[str(i) for i in range(1, min(n, 1000) + 1)]) == 0
        # and it merges with the keys of Redis's own
        r.delete("redis-own")
        r.pfadd("redis-own", *[str(i) for i in range(n + 1, n + 501)])
        assert r.pfcount("from-sql", "redis-own") == value(
            conn, "SELECT hll_count(hll_agg(x::text)) FROM generate_series(1, %s) x", (n + 500,))
    r.delete("from-sql", "redis-own")


def test_hll_to_redis_folds_higher_precisions_and_refuses_lower(conn, redis_client):
    data = value(conn, "SELECT hll_to_redis(hll_agg(x::text, 17)) FROM generate_series(1, 50000) x")
    redis_client.set("p17", data)
    assert redis_client.pfcount("p17") == value(
        conn, "SELECT hll_count(hll_agg(x::text, 14)) FROM generate_series(1, 50000) x")
    redis_client.delete("p17")
    for p in (MIN_P, 13):
        e = fails(conn, "SELECT hll_to_redis(hll_agg(1, %s))", (p,))
        assert e.sqlstate == INVALID_PARAMETER and "no Redis form" in str(e)


def test_hll_from_redis_reads_a_pf_key(conn, redis_client):
    r = redis_client
    for n in (1, 50, 5000, 100000):  # sparse and dense Redis encodings
        r.delete("pf")
        items = ["item-%d" % i for i in range(n)]
        for i in range(0, n, 10000):
            r.pfadd("pf", *items[i:i + 10000])
        data = r.get("pf")
        h = value(conn, "SELECT hll_from_redis(%s)::text", (data,))
        assert value(conn, "SELECT hll_count(%s::hll)", (h,)) == r.pfcount("pf"), n
        assert value(conn, "SELECT hll_precision(%s::hll)", (h,)) == REDIS_P
        # the very sketch SQL builds of the same strings
        assert h == value(conn, "SELECT hll_agg('item-' || x)::text"
                                " FROM generate_series(0, %s) x", (n - 1,))
        # and back
        r.set("back", value(conn, "SELECT hll_to_redis(%s::hll)", (h,)))
        assert r.pfcount("back") == r.pfcount("pf")
    r.delete("pf", "back")


def test_hll_from_redis_refuses_what_is_not_a_redis_string(conn, redis_client):
    redis_client.delete("pf")
    redis_client.pfadd("pf", "a", "b")
    good = redis_client.get("pf")
    redis_client.delete("pf")
    native = native_bytes(_valid_literal(conn))
    for bad in (b"", b"HYLL", b"hello world", good[:-1], good + b"\x00", native,
                b"HYLL" + b"\x00" * 12284, b"\xff" * 20000):
        e = fails(conn, "SELECT hll_from_redis(%s)", (bad,))
        assert e.sqlstate == INVALID_BINARY, (bad[:16], e)
        assert str(e).startswith("not a Redis HyperLogLog string")


# ---------------------------------------------------------------- parallel plans

PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;"
            " SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
            " SET parallel_leader_participation = on")
SERIAL = "SET max_parallel_workers_per_gather = 0"
PARALLEL_ROWS = 300000


@pytest.fixture(scope="module")
def big_table(pg):
    with pg.connect() as c:
        c.execute("DROP TABLE IF EXISTS visits")
        c.execute("CREATE TABLE visits AS SELECT x AS id, 'user-' || (x::bigint * 7919 %% 120000) AS v,"
                  " x %% 40 AS page FROM generate_series(1, %s) x", (PARALLEL_ROWS,))
        c.execute("ANALYZE visits")
    yield "visits"
    with pg.connect() as c:
        c.execute("DROP TABLE visits")


def _plan(conn, sql):
    return "\n".join(r[0] for r in conn.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql))


@pytest.mark.parametrize("sql", [
    "SELECT hll_agg(v)::text FROM visits",
    "SELECT hll_agg(v, 10)::text FROM visits",
    "SELECT hll_agg(id)::text FROM visits",
    "SELECT hll_count(hll_agg(v)) FROM visits WHERE page < 5",
])
def test_parallel_plan_gives_the_serial_result(conn, big_table, sql):
    conn.execute(PARALLEL)
    plan = _plan(conn, sql)
    assert "Gather" in plan and "Partial Aggregate" in plan, plan
    assert "Workers Launched: 2" in plan, plan  # the states went through serialize
    parallel = value(conn, sql)
    conn.execute(SERIAL)
    plan = _plan(conn, sql)
    assert "Gather" not in plan and "Partial" not in plan, plan
    assert value(conn, sql) == parallel


def test_parallel_union_of_sketches_and_grouped_aggregation(conn, big_table):
    conn.execute("DROP TABLE IF EXISTS daily")
    conn.execute("CREATE TABLE daily AS SELECT page, id % 50 AS day, hll_agg(v) AS s"
                 " FROM visits GROUP BY 1, 2")
    conn.execute("ANALYZE daily")
    queries = ["SELECT hll_union_agg(s)::text FROM daily",
               "SELECT page, hll_agg(v)::text FROM visits GROUP BY page ORDER BY page"]
    conn.execute(PARALLEL)
    results = {}
    for sql in queries:
        plan = _plan(conn, sql)
        assert "Gather" in plan and "Partial" in plan, plan
        results[sql] = conn.execute(sql).fetchall()
    conn.execute(SERIAL)
    for sql in queries:
        assert conn.execute(sql).fetchall() == results[sql]
    # the union of the daily sketches is the sketch of all the visits
    assert results[queries[0]][0][0] == value(conn, "SELECT hll_agg(v)::text FROM visits")
    conn.execute("DROP TABLE daily")


def test_parallel_count_is_near_the_exact_count(conn, big_table):
    conn.execute(PARALLEL)
    exact = value(conn, "SELECT count(DISTINCT v) FROM visits")
    count = value(conn, "SELECT hll_count(hll_agg(v)) FROM visits")
    assert abs(count - exact) <= SIGMAS * relative_error(DEFAULT_P) * exact


def test_errors_in_parallel_workers_are_errors(conn, big_table):
    conn.execute(PARALLEL)
    assert "Partial Aggregate" in _plan(conn, "SELECT hll_agg(v, 12) FROM visits")
    for sql, state in (("SELECT hll_agg(v, 19) FROM visits", INVALID_PARAMETER),
                       ("SELECT hll_agg(v, CASE WHEN id = 250000 THEN 13 ELSE 12 END)"
                        " FROM visits", INVALID_PARAMETER)):
        assert fails(conn, sql).sqlstate == state, sql
