# SPDX-License-Identifier: BSD-3-Clause
"""sketch top: the most frequent lines (or fields), overall, per group and per
time window, against exact counts computed here from seeded Zipf streams.

What must hold whatever the summary did (the guarantee of sketch/frequent.h):
every printed count is the upper bound; every true count lies within the
printed [lower, upper]; and a line that is not printed was seen no more often
than the K-th printed count. On Zipf data the top 10 is found (recall >= 0.9,
a line tied with the exact 10th counting as found)."""
import collections
import csv
import gzip
import io
import json
import lzma
import random
import subprocess

import pytest


def zipf_items(distinct, rows, seed, s=1.0, prefix="item"):
    rng = random.Random(seed)
    weights = [1 / (r + 1) ** s for r in range(distinct)]
    # the names do not sort by rank
    names = [f"{prefix}-{rng.randrange(1 << 40):x}" for _ in range(distinct)]
    return [names[i] for i in rng.choices(range(distinct), weights=weights, k=rows)]


def lines_of(items):
    return "".join(i + "\n" for i in items).encode()


def parse_plain(stdout, bounds=False):
    """uniq -c's format: count, then with --bounds lower and upper, then the line."""
    rows = []
    for line in stdout.decode().splitlines():
        parts = line.split(None, 3 if bounds else 1)
        if bounds:
            rows.append((parts[3], int(parts[0]), int(parts[1]), int(parts[2])))
        else:
            rows.append((parts[1], int(parts[0]), None, None))
    return rows


def check_top(rows, exact, k):
    """The guarantee, and the recall of the top k; returns the recall."""
    assert 0 < len(rows) <= k
    counts = [c for _, c, _, _ in rows]
    assert counts == sorted(counts, reverse=True)
    printed = {item for item, *_ in rows}
    assert len(printed) == len(rows)
    for item, count, lower, upper in rows:
        assert item in exact, item
        if upper is not None:
            assert count == upper
            assert lower <= exact[item] <= upper, (item, lower, exact[item], upper)
        assert exact[item] <= count, (item, exact[item], count)
    kth = rows[-1][1]
    if len(rows) == k:
        for item, n in exact.items():
            if item not in printed:
                assert n <= kth, (item, n, kth)
    else:  # fewer distinct lines than k: all of them
        assert printed == set(exact)
    truth = sorted(exact.values(), reverse=True)
    tenth = truth[min(k, len(truth)) - 1]
    return sum(exact[item] >= tenth for item in printed) / min(k, len(truth))


@pytest.mark.parametrize("distinct,rows,s", [(100000, 400000, 1.0), (20000, 300000, 1.2),
                                             (50, 10000, 0.5)])
def test_top10_against_exact(sk, tmp_path, distinct, rows, s):
    items = zipf_items(distinct, rows, seed=distinct, s=s)
    exact = collections.Counter(items)
    path = tmp_path / "lines.txt"
    path.write_bytes(lines_of(items))
    got = parse_plain(sk.ok("top", "--bounds", path).stdout, bounds=True)
    assert check_top(got, exact, 10) >= 0.9
    plain = parse_plain(sk.ok("top", path).stdout)
    assert [(i, c) for i, c, _, _ in plain] == [(i, c) for i, c, _, _ in got]
    js = json.loads(sk.ok("top", "--json", path).stdout)
    assert [(o["item"], o["count"], o["lower"], o["upper"]) for o in js] == got


def test_few_counters_keep_the_bounds(sk, tmp_path):
    """With -m far below the distinct lines the counts are rough, but every
    bound still holds, and -v's threshold is at most N/m."""
    items = zipf_items(5000, 100000, seed=11, s=0.8)
    exact = collections.Counter(items)
    path = tmp_path / "lines.txt"
    path.write_bytes(lines_of(items))
    for m in ["20", "64", "300"]:
        r = sk.ok("top", "-k", "20", "-m", m, "--bounds", "-v", path)
        rows = parse_plain(r.stdout, bounds=True)
        check_top(rows, exact, 20)
        info = dict(line.split(": ", 1) for line in r.stderr.decode().splitlines())
        threshold = int(info["threshold"].split()[0])
        assert int(info["lines"]) == len(items)
        assert threshold <= len(items) // int(m)
        for _, _, lower, upper in rows:
            assert upper - lower <= threshold


def test_fields_and_csv(sk, tmp_path):
    items = zipf_items(1000, 50000, seed=5)
    exact = collections.Counter(items)
    rng = random.Random(1)
    data = "".join(f"{rng.randrange(100)},{i},x\n" for i in items) + "short\n"
    r = sk.ok("top", "-d", ",", "-f", "2", "-k", "5", "--csv", input=data.encode())
    assert b"1 of 50001 lines have fewer fields" in r.stderr
    table = list(csv.reader(io.StringIO(r.stdout.decode())))
    assert table[0] == ["item", "count", "lower", "upper"]
    rows = [(t[0], int(t[1]), int(t[2]), int(t[3])) for t in table[1:]]
    assert check_top(rows, exact, 5) >= 0.8
    # -w: runs of blanks
    r = sk.ok("top", "-w", "-f", "2", "-k", "2", input=b" a  x\nb x\n c   y\n")
    assert parse_plain(r.stdout) == [("x", 2, None, None), ("y", 1, None, None)]


def group_rows(seed, groups=30, rows=200000):
    rng = random.Random(seed)
    items = zipf_items(3000, rows, seed=seed + 1)
    gs = rng.choices(range(groups), weights=[1 / (g + 1) for g in range(groups)], k=rows)
    return [(f"g{g}", i) for g, i in zip(gs, items)]


def test_by_groups_against_exact(sk, tmp_path):
    pairs = group_rows(3)
    exact = collections.defaultdict(collections.Counter)
    for g, i in pairs:
        exact[g][i] += 1
    path = tmp_path / "rows.tsv"
    path.write_bytes("".join(f"{g}\t{i}\n" for g, i in pairs).encode())
    for threads in ["1", "2"]:
        out = sk.ok("top", "--by", "1", "-f", "2", "-k", "5", "-j", threads, "--bounds",
                    "-m", "200", path).stdout
        got = collections.defaultdict(list)
        order = []
        for line in out.decode().splitlines():
            g, c, lo, hi, item = line.split("\t")
            if g not in got:
                order.append(g)
            got[g].append((item, int(c), int(lo), int(hi)))
        assert order == sorted(exact)  # every group, bytewise
        recalls = [check_top(got[g], exact[g], 5) for g in exact if sum(exact[g].values()) > 5000]
        assert sum(recalls) / len(recalls) >= 0.9


def test_time_windows_with_groups(sk, tmp_path):
    rng = random.Random(8)
    items = zipf_items(500, 60000, seed=9)
    start = 1700000000 - 1700000000 % 3600
    rows = [(start + rng.randrange(3 * 3600), rng.choice("ab"), i) for i in items]
    exact = collections.defaultdict(collections.Counter)
    for t, g, i in rows:
        exact[(t - t % 3600, g)][i] += 1
    data = "".join(f"{t}\t{g}\t{i}\n" for t, g, i in rows).encode() + b"never\ta\tz\n"
    r = sk.ok("top", "--time", "1", "--every", "1h", "--by", "2", "-f", "3", "-k", "3",
              "--json", input=data)
    assert b"1 of 60001 lines have no time in field 1" in r.stderr
    got = collections.defaultdict(list)
    import datetime
    for o in json.loads(r.stdout):
        t = int(datetime.datetime.strptime(o["window"], "%Y-%m-%dT%H:%M:%SZ")
                .replace(tzinfo=datetime.timezone.utc).timestamp())
        got[(t, o["group"])].append((o["item"], o["count"], o["lower"], o["upper"]))
    assert set(got) == set(exact)
    for key in exact:
        assert check_top(got[key], exact[key], 3) >= 2 / 3


def test_compressed_input_gives_the_same_answer(sk, tmp_path):
    data = lines_of(zipf_items(20000, 100000, seed=21))
    plain = tmp_path / "lines.txt"
    plain.write_bytes(data)
    want = sk.ok("top", "-j", "1", "--bounds", plain).stdout
    (tmp_path / "lines.gz").write_bytes(gzip.compress(data))
    (tmp_path / "lines.xz").write_bytes(lzma.compress(data))
    (tmp_path / "lines.zst").write_bytes(
        subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout)
    for name in ["lines.gz", "lines.xz", "lines.zst"]:
        assert sk.ok("top", "-j", "1", "--bounds", tmp_path / name).stdout == want, name
    # standard input, and --raw reads the bytes as they are
    assert sk.ok("top", "--bounds", input=gzip.compress(data)).stdout == want
    raw = sk.ok("top", "--raw", "-k", "1", tmp_path / "lines.gz").stdout
    assert raw != want[:len(raw)]


def test_threads_agree_within_bounds(sk, tmp_path):
    items = zipf_items(200000, 500000, seed=33)
    exact = collections.Counter(items)
    path = tmp_path / "lines.txt"
    path.write_bytes(lines_of(items))
    one = parse_plain(sk.ok("top", "-j", "1", "--bounds", path).stdout, bounds=True)
    two = parse_plain(sk.ok("top", "-j", "2", "--bounds", path).stdout, bounds=True)
    for rows in (one, two):
        assert check_top(rows, exact, 10) >= 0.9
    # each answer's interval for a line overlaps the other's: both hold the truth
    b = {item: (lo, hi) for item, _, lo, hi in two}
    for item, _, lo, hi in one:
        if item in b:
            assert lo <= b[item][1] and b[item][0] <= hi


def test_several_files_and_standard_input(sk, tmp_path):
    (tmp_path / "a").write_bytes(b"x\ny\nx\n")
    (tmp_path / "b").write_bytes(b"y\ny\nz")
    out = sk.ok("top", tmp_path / "a", "-", tmp_path / "b", input=b"z\nz\nz\n").stdout
    assert parse_plain(out) == [("z", 4, None, None), ("y", 3, None, None),
                                ("x", 2, None, None)]


def test_empty_input(sk, tmp_path):
    assert sk.ok("top", input=b"").stdout == b""
    assert json.loads(sk.ok("top", "--json", input=b"").stdout) == []
    assert sk.ok("top", "--csv", input=b"").stdout == b"item,count,lower,upper\n"
    assert json.loads(sk.ok("top", "--by", "1", "--json", input=b"").stdout) == []
    (tmp_path / "empty").write_bytes(b"")
    assert sk.ok("top", tmp_path / "empty").stdout == b""


def test_line_longer_than_the_limit(sk):
    message = sk.fail("top", "--max-line-length", "1K", input=b"a\n" + b"x" * 2000 + b"\n")
    assert "line 2" in message and "longer" in message
    out = sk.ok("top", "--max-line-length", "1K", input=b"x" * 1024 + b"\n").stdout
    assert parse_plain(out) == [("x" * 1024, 1, None, None)]


@pytest.mark.parametrize("args,message", [
    (["-k", "0"], "-k must be a whole number from 1"),
    (["-k", "x"], "-k must be a whole number"),
    (["--bogus"], "'--bogus'"),
    (["-q"], "'-q'"),
    (["--time", "1"], "--time and --every go together"),
    (["--every", "1m"], "--time and --every go together"),
    (["--time", "1", "--every", "5x"], "--every takes"),
    (["-k", "20", "-m", "10"], "must be at least -k"),
    (["--csv", "--json"], "not both"),
    (["--by", "0"], "--by takes field numbers"),
    (["-d", "ab"], "exactly one byte"),
    (["/nonexistent/file"], "/nonexistent/file"),
])
def test_bad_usage(sk, args, message):
    error = sk.fail("top", *args, input=b"a\n")
    assert error.startswith("sketch top") or error.startswith("sketch:"), error
    assert message in error, error


def test_help(sk):
    r = sk.ok("top", "--help")
    text = r.stdout.decode()
    assert text.startswith("Usage: sketch top [OPTION]... [FILE]...")
    for option in ["--top", "--counters", "--field", "--by", "--time", "--every", "--json",
                   "--csv", "--bounds", "--threads", "--raw", "--max-line-length"]:
        assert option in text, option
    assert max(len(line) for line in text.splitlines()) <= 80
    assert sk.ok("top", "-h").stdout == r.stdout
    assert "top" in sk.ok("--help").stdout.decode()
