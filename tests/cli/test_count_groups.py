# SPDX-License-Identifier: BSD-3-Clause
"""sketch count --by and --time: a distinct count per group and per time window.

Every expected count here is computed exactly in the test from the generated
rows. Small groups must come out exact or within two items; large groups
within the HyperLogLog's bounds at their nominal coverage. Each group's count
must also be exactly what `sketch count` says of that group's rows alone,
since a group's sketch is the sketch of its items."""
import csv
import io
import json
import math
import random

import pytest

SIGMA_14 = 1.04 / math.sqrt(1 << 14)


def zipf_rows(groups, rows, seed, sep="\t"):
    """Rows `group<sep>user` whose group sizes follow a Zipf law (s = 1.1);
    returns the bytes and the exact distinct users per group."""
    rng = random.Random(seed)
    weights = [1 / (g + 1) ** 1.1 for g in range(groups)]
    picks = rng.choices(range(groups), weights=weights, k=rows)
    exact = {}
    lines = []
    for g in picks:
        user = rng.randrange(1 << 40)
        exact.setdefault(f"g{g}", set()).add(user)
        lines.append(f"g{g}{sep}u{user}\n")
    return "".join(lines).encode(), {k: len(v) for k, v in exact.items()}


def parse_counts(stdout):
    out = {}
    for line in stdout.decode().splitlines():
        *key, count = line.split("\t")
        out["\t".join(key)] = int(count)
    return out


@pytest.mark.parametrize("groups,rows", [(10, 300000), (1000, 200000), (100000, 400000)])
def test_per_group_counts_against_exact(sk, tmp_path, groups, rows):
    data, exact = zipf_rows(groups, rows, seed=groups)
    path = tmp_path / "rows.tsv"
    path.write_bytes(data)
    got = parse_counts(sk.ok("count", "--by", "1", "-f", "2", path).stdout)
    assert set(got) == set(exact)
    large = within_2sd = 0
    for group, n in exact.items():
        if n <= 100:
            assert abs(got[group] - n) <= 2, (group, n, got[group])
        else:
            large += 1
            within_2sd += abs(got[group] - n) <= 2 * SIGMA_14 * n + 1
    if large >= 20:
        # 95.4% nominal; 88% leaves room for the binomial spread of few groups
        assert within_2sd / large >= 0.88, (within_2sd, large)
    # the rows are output sorted by group, bytewise
    keys = [line.split(b"\t")[0] for line in sk.ok("count", "--by", "1", "-f", "2", path)
            .stdout.splitlines()]
    assert keys == sorted(keys)


def test_a_group_is_the_sketch_of_its_rows(sk, tmp_path):
    data, exact = zipf_rows(50, 200000, seed=7)
    path = tmp_path / "rows.tsv"
    path.write_bytes(data)
    got = parse_counts(sk.ok("count", "--by", "1", "-f", "2", path).stdout)
    by_group = {}
    for line in data.splitlines():
        g, u = line.split(b"\t")
        by_group.setdefault(g.decode(), []).append(u)
    for group in ["g0", "g1", "g5", "g20"]:
        alone = sk.ok("count", input=b"\n".join(by_group[group]) + b"\n").stdout
        assert got[group] == int(alone)


def test_threads_give_the_same_counts(sk, tmp_path):
    data, _ = zipf_rows(5000, 300000, seed=3)
    path = tmp_path / "rows.tsv"
    path.write_bytes(data)
    one = sk.ok("count", "--by", "1", "-f", "2", "-j", "1", path).stdout
    two = sk.ok("count", "--by", "1", "-f", "2", "-j", "2", path).stdout
    piped = sk.ok("count", "--by", "1", "-f", "2", input=data).stdout
    assert one == two == piped


def test_several_by_fields_and_whole_lines(sk):
    rows = b"a,x,1\na,x,2\na,y,1\nb,x,1\nb,x,1\n"
    out = sk.ok("count", "-d", ",", "--by", "1,2", input=rows).stdout
    assert out == b"a\tx\t2\na\ty\t1\nb\tx\t1\n"
    # the fields' order is the key's
    out = sk.ok("count", "-d", ",", "--by", "2,1", "-f", "3", input=rows).stdout
    assert out == b"x\ta\t2\nx\tb\t1\ny\ta\t1\n"
    # -w splits on runs of blanks
    out = sk.ok("count", "-w", "--by", "2", "-f", "1", input=b" u1  p1\nu2 p1\n u1 p2\n").stdout
    assert out == b"p1\t2\np2\t1\n"


def test_lines_without_the_fields_are_reported(sk):
    r = sk.ok("count", "-d", ",", "--by", "3", input=b"a,b,c\na,b\nx,y,c\n")
    assert r.stdout == b"c\t2\n"
    assert b"1 of 3 lines have fewer fields" in r.stderr


def test_sort_top_json_and_csv(sk):
    rows = "".join(f"g{g}\tu{u}\n" for g in range(6) for u in range(g * 10 + 1)).encode()
    by_count = sk.ok("count", "--by", "1", "-f", "2", "--sort", "count", input=rows).stdout
    assert [line.split(b"\t")[0] for line in by_count.splitlines()] == \
        [b"g5", b"g4", b"g3", b"g2", b"g1", b"g0"]
    top = sk.ok("count", "--by", "1", "-f", "2", "--top", "2", input=rows).stdout
    assert top == b"g5\t51\ng4\t41\n"
    top_by_group = sk.ok("count", "--by", "1", "-f", "2", "--top", "2", "--sort", "group",
                         input=rows).stdout
    assert top_by_group == b"g4\t41\ng5\t51\n"
    js = json.loads(sk.ok("count", "--by", "1", "-f", "2", "--json", input=rows).stdout)
    assert js[0] == {"group": "g0", "count": 1} and len(js) == 6
    quoted = b'a,"x, y"\nb,"say ""hi"""\n'
    out = sk.ok("count", "-d", "\t", "--by", "1", "--csv", input=quoted.replace(b",", b"\t", 1)
                .replace(b'\nb,', b'\nb\t')).stdout
    table = list(csv.reader(io.StringIO(out.decode())))
    assert table[0] == ["field1", "count"]
    assert table[1:] == [["a", "1"], ["b", "1"]]
    # a group with a comma and a quote survives CSV and JSON
    odd = b'we, "they"\tu1\nwe, "they"\tu2\n'
    table = list(csv.reader(io.StringIO(
        sk.ok("count", "--by", "1", "-f", "2", "--csv", input=odd).stdout.decode())))
    assert table[1] == ['we, "they"', "2"]
    js = json.loads(sk.ok("count", "--by", "1", "-f", "2", "--json", input=odd).stdout)
    assert js == [{"group": 'we, "they"', "count": 2}]
    js = json.loads(sk.ok("count", "-d", ",", "--by", "1,2", "--json", input=b"a,b\n").stdout)
    assert js == [{"group": ["a", "b"], "count": 1}]


def test_empty_input_and_json(sk):
    assert sk.ok("count", "--by", "1", input=b"").stdout == b""
    assert json.loads(sk.ok("count", "--by", "1", "--json", input=b"").stdout) == []


# ---- time windows ------------------------------------------------------------------


def test_windows_at_their_edges(sk):
    # 59 and 60 are in different minutes; -1 is in the minute before the epoch
    rows = b"59 a\n60 b\n61 a\n119 c\n120 d\n-1 x\n0 e\n"
    r = sk.ok("count", "-d", " ", "--time", "1", "--every", "1m", "-f", "2", input=rows)
    assert r.stdout == (b"1970-01-01T00:00:00Z\t2\n"
                        b"1970-01-01T00:01:00Z\t3\n"
                        b"1970-01-01T00:02:00Z\t1\n")
    # "-1" is no time this command reads: reported, not dropped silently
    assert b"1 of 7 lines have no time in field 1" in r.stderr and b"'-1'" in r.stderr


@pytest.mark.parametrize("stamp", [
    "1700000000", "1700000000.75", "1700000000123",
    "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.5Z", "2023-11-14T23:13:20+01:00",
    "2023-11-14T17:13:20-0500", "2023-11-14 22:13:20", "2023-11-15T03:43:20+05:30",
    "[14/Nov/2023:22:13:20 +0000]", "14/Nov/2023:14:13:20 -0800",
])
def test_time_formats(sk, stamp):
    # every stamp is 2023-11-14T22:13:20Z; with tabs the whole stamp is one field
    out = sk.ok("count", "--time", "1", "--every", "1s", "-f", "2",
                input=f"{stamp}\tuser\n".encode()).stdout
    assert out == b"2023-11-14T22:13:20Z\t1\n"


def test_access_log_split_on_spaces(sk, tmp_path):
    """nginx/Apache combined log: field 4 is '[10/Oct/2000:13:55:36', its zone
    '-0700]' is field 5."""
    log = tmp_path / "access.log"
    lines = []
    for minute, clients in [(55, ["1.1.1.1", "2.2.2.2", "1.1.1.1"]), (56, ["3.3.3.3"])]:
        for i, ip in enumerate(clients):
            lines.append(f'{ip} - - [10/Oct/2000:13:{minute}:{10 + i:02d} -0700] '
                         f'"GET /a HTTP/1.1" 200 2326 "-" "curl/8"\n')
    log.write_text("".join(lines))
    out = sk.ok("count", "--time", "4", "--every", "1m", "-d", " ", "-f", "1", log).stdout
    assert out == b"2000-10-10T20:55:00Z\t2\n2000-10-10T20:56:00Z\t1\n"
    # per path within each window, the window first
    out = sk.ok("count", "--time", "4", "--every", "1h", "-d", " ", "-f", "1", "--by", "7",
                log).stdout
    assert out == b"2000-10-10T20:00:00Z\t/a\t3\n"
    js = json.loads(sk.ok("count", "--time", "4", "--every", "1d", "-d", " ", "-f", "1",
                          "--by", "7", "--json", log).stdout)
    assert js == [{"window": "2000-10-10T00:00:00Z", "group": "/a", "count": 3}]


def test_windows_with_groups_and_top(sk):
    rows = []
    for day in range(3):
        for g in range(4):
            for u in range((g + 1) * (day + 1)):
                rows.append(f"{86400 * day + 3600 * g}\tg{g}\tu{u}\n")
    data = "".join(rows).encode()
    out = sk.ok("count", "--time", "1", "--every", "1d", "--by", "2", "-f", "3", "--top", "1",
                input=data).stdout
    assert out == (b"1970-01-01T00:00:00Z\tg3\t4\n"
                   b"1970-01-02T00:00:00Z\tg3\t8\n"
                   b"1970-01-03T00:00:00Z\tg3\t12\n")
    table = list(csv.reader(io.StringIO(sk.ok(
        "count", "--time", "1", "--every", "1d", "--by", "2", "-f", "3", "--csv",
        input=data).stdout.decode())))
    assert table[0] == ["window", "field2", "count"]
    assert table[1] == ["1970-01-01T00:00:00Z", "g0", "1"] and len(table) == 13


@pytest.mark.parametrize("bad", ["yesterday", "2023-13-01T00:00:00Z", "2023-02-29",
                                 "[31/Feb/2023:10:00:00 +0000]", "2023-11-14T25:00:00Z",
                                 "12:00", "1e9", ""])
def test_unreadable_times_are_counted_and_reported(sk, bad):
    r = sk.ok("count", "--time", "1", "--every", "1h", "-f", "2",
              input=f"{bad}\tu\n1700000000\tv\n".encode())
    assert r.stdout == b"2023-11-14T22:00:00Z\t1\n"
    assert b"1 of 2 lines have no time in field 1" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["--time", "1"], "--time and --every go together"),
    (["--every", "1m"], "--time and --every go together"),
    (["--time", "1", "--every", "5x"], "--every takes"),
    (["--time", "1", "--every", "0m"], "--every takes"),
    (["--time", "1", "--every", "m"], "--every takes"),
    (["--by", "0"], "--by takes field numbers"),
    (["--by", "1,,2"], "--by takes field numbers"),
    (["--by", "a"], "--by takes field numbers"),
    (["--by", "1", "--sort", "size"], "--sort is"),
    (["--sort", "count"], "apply to --by and --time"),
    (["--top", "3"], "apply to --by and --time"),
    (["--by", "1", "--per-file"], "not with --per-file"),
    (["--by", "1", "--csv", "--json"], "not both"),
])
def test_bad_usage(sk, args, message):
    assert message in sk.fail("count", *args, input=b"a\n")


# ---- group files -------------------------------------------------------------------


def test_group_files_count_merge_and_filter(sk, tmp_path):
    day1, exact1 = zipf_rows(300, 60000, seed=11)
    day2, exact2 = zipf_rows(300, 60000, seed=12)
    (tmp_path / "d1.tsv").write_bytes(day1)
    (tmp_path / "d2.tsv").write_bytes(day2)
    (tmp_path / "both.tsv").write_bytes(day1 + day2)
    printed = {}
    for name in ["d1", "d2", "both"]:
        r = sk.ok("count", "--by", "1", "-f", "2", "-o", tmp_path / f"{name}.skg",
                  tmp_path / f"{name}.tsv")
        printed[name] = r.stdout
    # a group file counts as the command printed
    assert sk.ok("hll", "count", tmp_path / "d1.skg").stdout == printed["d1"]
    # the union of two days is the sketch of the concatenated input, byte for byte
    sk.ok("hll", "merge", "-o", tmp_path / "week.skg", tmp_path / "d1.skg", tmp_path / "d2.skg")
    assert sk.ok("hll", "count", tmp_path / "week.skg").stdout == printed["both"]
    assert sk.ok("hll", "count", tmp_path / "d1.skg", tmp_path / "d2.skg").stdout == \
        printed["both"]
    for group in ["g0", "g7", "g150"]:
        a = sk.ok("hll", "export", "--group", group, tmp_path / "week.skg").stdout
        b = sk.ok("hll", "export", "--group", group, tmp_path / "both.skg").stdout
        assert a == b and a.startswith(b"HYLL")
        one = sk.ok("hll", "count", "--group", group, tmp_path / "week.skg").stdout
        assert int(one) == parse_counts(printed["both"])[group]
    assert sk.ok("hll", "count", "--group", "nope", tmp_path / "week.skg").stdout == b"0\n"
    js = json.loads(sk.ok("hll", "count", "--json", tmp_path / "d1.skg").stdout)
    assert {row["group"]: row["count"] for row in js} == parse_counts(printed["d1"])
    info = sk.ok("hll", "info", tmp_path / "week.skg").stdout.decode()
    assert "format: sketch groups 1" in info and "precision: 14" in info
    assert f"groups: {len(set(exact1) | set(exact2))}" in info


def test_group_files_of_windows_name_groups_as_printed(sk, tmp_path):
    rows = b"0\ta\tu1\n10\ta\tu2\n70\tb\tu1\n"
    out = sk.ok("count", "--time", "1", "--every", "1m", "--by", "2", "-f", "3",
                "-o", tmp_path / "w.skg", input=rows).stdout
    assert out == b"1970-01-01T00:00:00Z\ta\t2\n1970-01-01T00:01:00Z\tb\t1\n"
    assert sk.ok("hll", "count", tmp_path / "w.skg").stdout == out
    assert sk.ok("hll", "count", "--group", "1970-01-01T00:00:00Z\ta",
                 tmp_path / "w.skg").stdout == b"2\n"


def test_group_files_lower_precisions_fold(sk, tmp_path):
    rows = "".join(f"g\tu{i}\n" for i in range(5000)).encode()
    sk.ok("count", "-p", "16", "--by", "1", "-f", "2", "-o", tmp_path / "p16.skg", input=rows)
    sk.ok("count", "-p", "12", "--by", "1", "-f", "2", "-o", tmp_path / "p12.skg", input=rows)
    merged = sk.ok("hll", "count", tmp_path / "p16.skg", tmp_path / "p12.skg").stdout
    assert merged == sk.ok("count", "-p", "12", "--by", "1", "-f", "2", input=rows).stdout


def test_group_file_errors(sk, tmp_path):
    sk.ok("count", "--by", "1", "-o", tmp_path / "g.skg", input=b"a\nb\n")
    sk.ok("count", "-o", tmp_path / "one.skh", input=b"a\nb\n")
    data = (tmp_path / "g.skg").read_bytes()
    (tmp_path / "cut.skg").write_bytes(data[:-3])
    assert "not a valid group file" in sk.fail("hll", "count", tmp_path / "cut.skg")
    flipped = bytearray(data)
    flipped[30] ^= 1
    (tmp_path / "flip.skg").write_bytes(bytes(flipped))
    assert "not a valid group file" in sk.fail("hll", "count", tmp_path / "flip.skg")
    assert "group files only" in sk.fail("hll", "count", tmp_path / "g.skg", tmp_path / "one.skh")
    assert "group file" in sk.fail("hll", "add", tmp_path / "g.skg", "x")
    assert "--group is for group files" in sk.fail("hll", "count", "--group", "a",
                                                   tmp_path / "one.skh")
    assert "not a Redis string" in sk.fail("hll", "merge", "-r", "-o", tmp_path / "o",
                                           tmp_path / "g.skg")
    assert "not to -o FILE" in sk.fail("hll", "export", "-o", tmp_path / "x", tmp_path / "g.skg")
    assert "standard output" in sk.fail("count", "--by", "1", "-o", "-", input=b"a\n")
    # the -o file is written whole, or not at all
    assert sk.ok("hll", "count", tmp_path / "g.skg").stdout == b"a\t1\nb\t1\n"


def test_group_names_are_escaped_in_json(sk, tmp_path):
    odd = 'a "quoted"\\name'
    sk.ok("count", "--by", "1", "-f", "2", "-o", tmp_path / "q.skg",
          input=f"{odd}\tu1\n{odd}\tu2\n".encode())
    js = json.loads(sk.ok("hll", "count", "--json", "--group", odd, tmp_path / "q.skg").stdout)
    assert js["group"] == odd and js["count"] == 2
    js = json.loads(sk.ok("hll", "count", "--json", tmp_path / "q.skg").stdout)
    assert js == [{"group": odd, "count": 2}]
