#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""pg_bench.py: times the PostgreSQL extension's hll_agg against postgresql-hll's
hll_add_agg, exact count(DISTINCT) and the floor count(v), side by side on one
private PostgreSQL 15 server, and measures each estimate's error against the
exact count.

Usage: bench/pg_bench.py [BUILD_DIR]       (default: ../build from here)

BUILD_DIR must hold the extension (a build with SKETCH_POSTGRES on). Needs
Debian's postgresql-15, postgresql-15-hll (the peer, created in a schema of
its own, pghll, since both extensions name their type hll) and
python3-psycopg. The server is started as tests/postgres/pg_server.py
starts the tests' own (as nobody under root), with the settings printed
under the table.

Environment:
  PG_ROWS="10000000 100000000"  rows of each table (one table each)
  PG_GROUPS="1000 100000"       GROUP BY sizes, besides no GROUP BY (may be "")
  RUNS=3                        timed rounds (median shown)
  EXACT_RUNS=1                  rounds of count(DISTINCT) on tables of over
                                20M rows (RUNS on smaller ones)
  BENCH_DIR=/tmp/sketch-bench   where the server's cluster lives while it runs
  PG_SETTINGS=                  more server settings, "name=value ..." (jit=off)

Each table has rows (v text, g1000 int, g100000 int) for i = 1..N: v is the
decimal text of hashint8(i) masked to the next power of two above N/3 (so
about 38% of the rows are distinct values), and gG = i mod G, each group
getting N/G rows. Queries, each returning per group an estimate and the
stored size of the sketch:
  count(v)                                     the floor: the scan and one
                                               aggregate call a row
  hll_agg(v)                                   this extension, p = 14
  pghll.hll_add_agg(pghll.hll_hash_text(v), 14)  postgresql-hll, 2^14
                                               registers of 5 bits
  count(DISTINCT v)                            exact: the truth
Each is run serially (max_parallel_workers_per_gather = 0) and with 2
workers (= 2; count(DISTINCT) has no parallel plan), every query once a
round in a fixed order, so that the peers share each round's conditions.
Times are the client's wall clock of the whole query with its rows read;
"x floor" is a median over count(v)'s with as many workers, "speedup" the
serial median over the parallel one, "x exact" count(DISTINCT)'s median
over the query's. The error is the relative error of the estimate without
GROUP BY, and the root mean square of the groups' relative errors with it,
against the theory's 1.04/sqrt(2^14) = 0.81% (a sketch of fewer distinct
items than 2.5 * 2^14 is near exact, for both).
"""
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
from pg_server import PgServer, PgServerError  # noqa: E402

PRECISION = 14
THEORY = 1.04 / math.sqrt(1 << PRECISION)
DATABASE = "sketch_bench"
# Enough memory that no query spills its hash table or sort because of the
# server's defaults (4 MB of work_mem); the rest are as Debian ships them.
SETTINGS = ("shared_buffers=2GB", "work_mem=256MB", "max_worker_processes=8",
            "max_parallel_workers=8", "max_wal_size=8GB")

METHODS = (  # name, aggregate of v, estimate of it, stored bytes of it
    ("count(v)", "count(v)", "{}", "0"),
    ("sketch hll_agg(v)", "hll_agg(v)", "hll_count({})", "pg_column_size({})"),
    ("postgresql-hll hll_add_agg", "pghll.hll_add_agg(pghll.hll_hash_text(v), %d)" % PRECISION,
     "pghll.hll_cardinality({})::bigint", "pg_column_size({})"),
    ("count(DISTINCT v) (exact)", "count(DISTINCT v)", "{}", "0"),
)
FLOOR, SKETCH, PGHLL, EXACT = (m[0] for m in METHODS)
METHOD = {m[0]: m for m in METHODS}


def die(message):
    print("pg_bench: " + message, file=sys.stderr)
    sys.exit(2)


def positive(name, default):
    value = os.environ.get(name, default)
    if not value.isdigit() or int(value) < 1:
        die("%s must be a positive integer, not '%s'" % (name, value))
    return int(value)


def positives(name, default, may_be_empty=False):
    words = os.environ.get(name, default).split()
    if (not words and not may_be_empty) or not all(w.isdigit() and int(w) > 0 for w in words):
        die("%s must be positive integers, not '%s'" % (name, os.environ.get(name)))
    return [int(w) for w in words]


def query(method, table, groups):
    _, agg, estimate, size = METHOD[method]
    inner = ("SELECT g{g} AS k, {a} AS x FROM {t} GROUP BY 1" if groups else
             "SELECT 0 AS k, {a} AS x FROM {t}").format(g=groups, a=agg, t=table)
    return "SELECT k, {e}, {s} FROM ({i}) q".format(e=estimate.format("x"),
                                                     s=size.format("x"), i=inner)


def make_table(conn, rows, groups):
    table = "t%d" % rows
    mask = (1 << max(1, math.ceil(math.log2(rows / 3)))) - 1
    columns = "".join(", (i %% %d)::int AS g%d" % (g, g) for g in groups)
    print("pg_bench: generating %s (%d rows)..." % (table, rows), file=sys.stderr, flush=True)
    conn.execute("CREATE UNLOGGED TABLE %s AS SELECT (hashint8(i) & %d)::text AS v%s "
                 "FROM generate_series(1::bigint, %d) i" % (table, mask, columns, rows))
    conn.execute("VACUUM ANALYZE " + table)
    return table


def plan_workers(conn, sql):
    """The workers the plan gathers, or 0 for a plan without Gather."""
    for (line,) in conn.execute("EXPLAIN " + sql).fetchall():
        if "Workers Planned:" in line:
            return int(line.split(":")[1])
    return 0


def timed(conn, sql):
    t0 = time.perf_counter()
    rows = conn.execute(sql).fetchall()
    return time.perf_counter() - t0, rows


def error_of(rows, exact):
    truth = {k: n for k, n, _ in exact}
    if {k for k, _, _ in rows} != set(truth):
        return None
    errs = [(e - truth[k]) / truth[k] for k, e, _ in rows if truth[k] > 0]
    if len(errs) == 1:
        return errs[0]
    return math.sqrt(sum(e * e for e in errs) / len(errs))


def main():
    build_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build"))
    if len(sys.argv) > 2 or not os.path.isdir(build_dir):
        die("usage: bench/pg_bench.py [BUILD_DIR] (a build directory; '%s' is none)" % build_dir)
    all_rows = positives("PG_ROWS", "10000000 100000000")
    all_groups = positives("PG_GROUPS", "1000 100000", may_be_empty=True)
    runs = positive("RUNS", "3")
    exact_runs = positive("EXACT_RUNS", "1")
    bench_dir = os.environ.get("BENCH_DIR", "/tmp/sketch-bench")
    os.makedirs(bench_dir, exist_ok=True)
    if not os.path.exists("/usr/share/postgresql/15/extension/hll.control"):
        die("postgresql-hll is missing (apt-get install postgresql-15-hll)")

    settings = SETTINGS + tuple(os.environ.get("PG_SETTINGS", "").split())
    server = PgServer(build_dir, DATABASE, settings=settings, parent=bench_dir)
    try:
        server.start()
        conn = server.connect()
        conn.execute("CREATE SCHEMA pghll")
        conn.execute("CREATE EXTENSION hll SCHEMA pghll")
        peer_version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'hll'").fetchone()[0]
        package = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "postgresql-15-hll"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if package.returncode == 0:
            peer_version += " (Debian package %s)" % package.stdout
        server_version = conn.execute("SHOW server_version").fetchone()[0]
        jit = conn.execute("SHOW jit").fetchone()[0]
        print("%-10s %-7s %-27s %7s %9s %8s %8s %8s %9s %10s" % (
            "rows", "groups", "query", "workers", "median s", "x floor", "speedup", "x exact",
            "bytes", "error"))
        for rows in all_rows:
            table = make_table(conn, rows, all_groups)
            for groups in [0] + all_groups:
                run_table(conn, table, rows, groups,
                          runs, exact_runs if rows > 20000000 else runs)
            conn.execute("DROP TABLE " + table)
        conn.close()
        crashes = server.crashes()
        if crashes:
            die("the server log shows crashed backends:\n" + "\n".join(crashes))
    except PgServerError as e:
        die(str(e))
    finally:
        server.stop()
    print()
    print("PostgreSQL %s, postgresql-hll %s, jit %s, %s; medians of %d rounds "
          "(count(DISTINCT) on over 20M rows: %d)." % (
              server_version, peer_version, jit, ", ".join(settings), runs, exact_runs))
    print("x floor: time over count(v)'s with as many workers; speedup: serial over 2 "
          "workers; x exact: count(DISTINCT)'s time over the query's; bytes: the stored "
          "sketch (mean over groups); error: relative error, or its RMS over the groups "
          "(theory %.2f%%)." % (100 * THEORY))


def run_table(conn, table, rows, groups, runs, exact_runs):
    cases = []  # (method, workers)
    for method, *_ in METHODS:
        cases.append((method, 0))
        if method != EXACT:
            cases.append((method, 2))
    times = {c: [] for c in cases}
    results = {}
    planned = {}
    for round_ in range(max(runs, exact_runs)):
        for method, workers in cases:
            if round_ >= (exact_runs if method == EXACT else runs):
                continue
            conn.execute("SET max_parallel_workers_per_gather = %d" % workers)
            sql = query(method, table, groups)
            if round_ == 0:
                planned[(method, workers)] = plan_workers(conn, sql)
            t, out = timed(conn, sql)
            times[(method, workers)].append(t)
            results.setdefault((method, workers), out)
    median = {c: statistics.median(ts) for c, ts in times.items()}
    exact = results[(EXACT, 0)]
    for method, workers in cases:
        c = (method, workers)
        out = results[c]
        floor = median[(FLOOR, workers)]
        speedup = (median[(method, 0)] / median[c]) if workers else None
        err = error_of(out, exact) if method in (SKETCH, PGHLL) else None
        size = statistics.mean(r[2] for r in out) if method in (SKETCH, PGHLL) else None
        print("%-10d %-7s %-27s %7s %9.3f %7.2fx %8s %7.1fx %9s %10s" % (
            rows, groups or "-", method,
            "%d" % planned[c] if planned[c] == workers else "%d/%d" % (planned[c], workers),
            median[c], median[c] / floor,
            "%.2fx" % speedup if speedup else "",
            median[(EXACT, 0)] / median[c],
            "%.0f" % size if size is not None else "",
            "%+.2f%%" % (100 * err) if err is not None and len(out) == 1 else
            "%.2f%%" % (100 * err) if err is not None else ""), flush=True)


if __name__ == "__main__":
    main()
