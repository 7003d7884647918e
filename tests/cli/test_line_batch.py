# SPDX-License-Identifier: BSD-3-Clause
"""One line loop and one field splitter (cli/line_batch.h, cli/fields.h) serve
count, count --by and --time, bloom add, bloom check and hll add: each must
see the same lines (CR, NUL and empty lines kept, a last line without its
newline, lines longer than the loop's 64-byte windows, batches cut anywhere)
and the same fields as -f N, --by N and --time N."""
import json
import re

import pytest

from sketch_cli_helpers import split_lines

# Odd lines: CRLF, a lone CR, NUL, empty lines, blanks, and lines across the
# loop's 64-byte windows; the last has no newline.
ODD = (b"a\r\nb\r\na\n\n\nc\rd\nx\0y\n\t\n  \n"
       + b"w" * 63 + b"\n" + b"v" * 64 + b"\n" + b"u" * 65 + b"\n"
       + b"long," + b"z" * 200_000 + b",tail\n" + b"end")


def blanks_split(line):
    """awk's default split, on blanks (space and tab) only."""
    return [f for f in re.split(rb"[ \t]+", line) if f]


def field(line, n, delimiter=None):
    """Field n (from 1) of a line as the command splits it, or None."""
    fields = blanks_split(line) if delimiter is None else line.split(delimiter)
    return fields[n - 1] if n <= len(fields) else None


def new_filter(sk, path):
    sk.ok("bloom", "create", "-n", "100000", "-p", "1e-9", path)
    return path


def test_every_path_sees_the_same_lines(sk, tmp_path):
    lines = split_lines(ODD)
    distinct = len(set(lines))
    assert sk.count("-j", "1", input=ODD) == distinct
    assert sk.count("-j", "2", input=ODD) == distinct
    h = tmp_path / "odd.skh"
    sk.ok("hll", "add", h, input=ODD)
    assert sk.hll_count(h) == distinct
    f = new_filter(sk, tmp_path / "odd.bloom")
    out = sk.ok("bloom", "add", "-v", f, input=ODD)
    assert b"new items: %d\n" % distinct in out.stderr
    # check prints every line, in order, each with its newline
    assert sk.ok("bloom", "check", f, input=ODD).stdout == b"".join(l + b"\n" for l in lines)
    # a line is its bytes: "b" was never added, only "b\r"
    assert sk.run("bloom", "check", f, "b", "c", "").stdout == b"\n"
    # --by 1 of comma-separated fields: a line without a comma is its own group
    groups = json.loads(sk.ok("count", "--by", "1", "-d", ",", "--json", input=ODD).stdout)
    want = {}
    for line in lines:
        want.setdefault(line.split(b",")[0].decode(), set()).add(line)
    assert {g["group"]: g["count"] for g in groups} == {k: len(v) for k, v in want.items()}


@pytest.mark.parametrize("n", [1, 63, 64, 65, 255, 256, 257, 1000])
def test_batches_cut_anywhere(sk, tmp_path, n):
    """bloom batches 64 lines, count --by 256: a batch may end on any line."""
    data = b"".join(b"g%d\titem%d\n" % (i % 300, i) for i in range(n))
    f = new_filter(sk, tmp_path / "b.bloom")
    assert b"new items: %d\n" % n in sk.ok("bloom", "add", "-v", "-f", "2", f,
                                            input=data).stderr
    assert sk.ok("bloom", "check", "-f", "2", f, input=data).stdout == data
    assert sk.ok("bloom", "check", "-c", "-v", f, input=data).stdout == b"%d\n" % n
    items = [b"item%d" % i for i in range(n)]
    assert sk.run("bloom", "check", f, *items).stdout == b"".join(i + b"\n" for i in items)
    groups = sk.ok("count", "-j", "1", "--by", "1", "-f", "2", input=data).stdout
    want = {}
    for i in range(n):
        want[b"g%d" % (i % 300)] = want.get(b"g%d" % (i % 300), 0) + 1
    assert dict(l.split(b"\t") for l in groups.splitlines()) == {
        k: b"%d" % v for k, v in want.items()}


FIELDS = [b"a,b,c", b",b,", b"a", b"", b"a,,c", b",,", b"a,b,c,d,e", b"a\r,b\r",
          b"  one two\tthree ", b"\tone", b" ", b"one"]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("split", [[], ["-d", ","]], ids=["blanks", "comma"])
def test_fields_alike_everywhere(sk, tmp_path, n, split):
    """-f N of bloom add, bloom check and count, and --by N, take the same field
    of each line, and skip the same lines."""
    delimiter = b"," if split else None
    args = split if split else ["-w"]
    data = b"".join(l + b"\n" for l in FIELDS)
    want = [field(l, n, delimiter) for l in FIELDS]
    present = [w for w in want if w is not None]
    missing = len(want) - len(present)

    f = new_filter(sk, tmp_path / "f.bloom")
    out = sk.ok("bloom", "add", "-v", *args, "-f", str(n), f, input=data)
    assert b"new items: %d\n" % len(set(present)) in out.stderr
    assert b"lines without field %d: %d\n" % (n, missing) in out.stderr
    # every field added is found as an item; check -f prints the lines that have one
    assert sk.ok("bloom", "check", "-c", f, *present).stdout == b"%d\n" % len(present)
    printed = sk.run("bloom", "check", *args, "-f", str(n), f, input=data).stdout
    assert printed == b"".join(l + b"\n" for l, w in zip(FIELDS, want) if w is not None)

    r = sk.ok("count", "-v", *args, "-f", str(n), input=data)
    assert r.stdout == b"%d\n" % len(set(present))
    assert b"lines without field %d: %d" % (n, missing) in r.stderr

    groups = sk.run("count", *args, "--by", str(n), input=data)
    counts = dict(l.rsplit(b"\t", 1) for l in groups.stdout.split(b"\n")[:-1])
    per_group = {}
    for line, w in zip(FIELDS, want):
        if w is not None:
            per_group.setdefault(w, set()).add(line)
    assert counts == {k: b"%d" % len(v) for k, v in per_group.items()}
    if missing:
        assert b"%d of %d lines have fewer fields" % (missing, len(FIELDS)) in groups.stderr


def test_time_field_with_crlf_and_blanks(sk):
    """--time reads its field (and the next, for a zone) as --by does."""
    rows = (b"1700000000,u1\r\n1700000001,u2\r\n1700000100,u1\n\n"
            b"[14/Nov/2023:22:13:20 +0000] u3\n")
    out = sk.ok("count", "-d", ",", "-f", "2", "--time", "1", "--every", "1m",
                input=rows)
    assert out.stdout == b"2023-11-14T22:13:00Z\t2\n2023-11-14T22:15:00Z\t1\n"
    assert b"2 of 5 lines have fewer fields" in out.stderr   # the empty line, the log line
    out = sk.ok("count", "-w", "-f", "3", "--time", "1", "--every", "1h",
                input=b"[14/Nov/2023:22:13:20 +0100] u3\n  [14/Nov/2023:22:14:20 +0100]\tu4\n")
    assert out.stdout == b"2023-11-14T21:00:00Z\t2\n"


@pytest.mark.parametrize("args,message", [
    (["hll", "count", "--raw"], "unknown option '--raw'"),
    (["hll", "info", "--no-wait"], "unknown option '--no-wait'"),
    (["bloom", "create", "--max-line-length", "9"], "unknown option '--max-line-length'"),
    (["bloom", "info", "--field", "2"], "unknown option '--field'"),
])
def test_shared_long_options_only_where_taken(sk, args, message):
    """--no-wait, --raw, --max-line-length, --help and --version are added to every
    subcommand's table, each taken only where its letter is."""
    assert message in sk.fail(*args, "x")


def test_shared_long_options_where_taken(sk, tmp_path):
    h = tmp_path / "h.skh"
    sk.ok("hll", "add", "--no-wait", "--raw", "--max-line-length", "4", h, input=b"abcd\n")
    assert "longer than 4 bytes" in sk.fail("count", "--max-line-length=4", input=b"abcde\n")
    assert sk.ok("bloom", "check", "--version").stdout.startswith(b"sketch ")
