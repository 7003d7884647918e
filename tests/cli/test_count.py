# SPDX-License-Identifier: BSD-3-Clause
"""`sketch count`: what is an item, where items come from, the options, and
the errors. Small inputs (at most 64 distinct items at precision 14) are
counted exactly, so their expected value is the true distinct count computed
here; larger ones are checked against the truth within 4 standard errors.
(Exactness does not reach a few hundred: `seq 200 | sketch count` prints 201,
as Redis's PFCOUNT does for the same items.)"""
import os
import random
import subprocess

import pytest

from sketch_cli_helpers import (
    BARE_INT, assert_close, assert_one_error_line, distinct_lines, join_lines,
    parse_verbose, split_lines)


def write(path, data):
    path.write_bytes(data)
    return path


# ---- what a line is -------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 40, 64])
def test_small_counts_are_exact(sk, n):
    rng = random.Random(n)
    items = [b"item-%d" % i for i in range(n)]
    stream = items * 3
    rng.shuffle(stream)
    assert sk.count(input=join_lines(stream)) == n


@pytest.mark.parametrize("data, expected", [
    (b"", 0),
    (b"a", 1),                   # a final line without newline counts
    (b"a\nb", 2),
    (b"a\nb\n", 2),              # the final newline does not start an empty item
    (b"a\nb\na", 2),
    (b"\n", 1),                  # an empty line is an item
    (b"\n\n\n", 1),
    (b"a\n\nb\n", 3),
    (b"a\n\n", 2),
    (b"a\r\nb\r\na\n", 3),       # '\r' is part of the line: "a\r" != "a"
    (b"a\rb\n", 1),              # a lone '\r' does not end a line
    (b"a\x00b\na\x00c\na\na\x00\n\x00\n", 5),   # NUL bytes are ordinary bytes
    (b" a\na\na \n", 3),         # no trimming
    (b"A\na\n", 2),              # no case folding
])
def test_line_semantics(sk, data, expected):
    assert distinct_lines(data) == expected   # the rule, as the tests read it
    assert sk.count(input=data) == expected


def test_empty_inputs_count_zero(sk, tmp_path):
    empty = write(tmp_path / "empty", b"")
    assert sk.count(input=b"") == 0
    assert sk.count(empty) == 0
    assert sk.count("-", input=b"") == 0
    assert sk.count("/dev/null") == 0
    assert sk.count(empty, empty) == 0


def test_final_line_without_newline_gives_the_same_sketch(sk, tmp_path):
    with_nl, without_nl = tmp_path / "with.hll", tmp_path / "without.hll"
    assert sk.count("-o", with_nl, input=b"x\ny\nz\n") == 3
    assert sk.count("-o", without_nl, input=b"x\ny\nz") == 3
    assert with_nl.read_bytes() == without_nl.read_bytes()


def test_stdin_file_and_dash_agree(sk, tmp_path):
    items = [b"k%03d" % i for i in range(50)] + [b"k007", b"k042", b""]
    data = join_lines(items)
    path = write(tmp_path / "in.txt", data)
    truth = distinct_lines(data)
    assert truth == 51
    assert sk.count(path) == truth                      # a file (read with pread)
    assert sk.count(input=data) == truth                # standard input, a pipe
    assert sk.count("-", input=data) == truth           # '-' is standard input
    with open(path, "rb") as f:                         # standard input, a file
        assert sk.count(stdin=f) == truth
    with open(path, "rb") as f:
        assert sk.count("-", stdin=f) == truth


def test_several_files_count_their_union(sk, tmp_path):
    a = [b"a%d" % i for i in range(20)]
    b = [b"a%d" % i for i in range(10, 35)]
    c = [b"c%d" % i for i in range(5)] + a[:3]
    fa = write(tmp_path / "a", join_lines(a))
    fb = write(tmp_path / "b", join_lines(b))
    fc = write(tmp_path / "c", join_lines(c))
    union = len(set(a) | set(b) | set(c))
    assert union == 40
    assert sk.count(fa, fb, fc) == union
    assert sk.count(fc, fb, fa) == union
    # '-' among files reads standard input in its place
    assert sk.count(fa, "-", fc, input=join_lines(b)) == union
    # the same file twice adds the same items twice
    assert sk.count(fa, fa) == len(set(a))


def test_last_line_of_each_file_is_a_line_of_its_own(sk, tmp_path):
    # lines.h: "a last line without '\n' counts" for every input; files are
    # not glued together like `cat` would.
    x = write(tmp_path / "x", b"x")
    y = write(tmp_path / "y", b"y\n")
    x2 = write(tmp_path / "x2", b"x\n")
    assert sk.count(x, y) == 2
    assert sk.count(x, x2) == 1


def test_multi_megabyte_lines(sk, tmp_path):
    big = b"A" * (6 << 20)
    items = [big, big + b"B", big[:-1], b"short", big, b"short", big + b"B"]
    data = join_lines(items)
    path = write(tmp_path / "long.txt", data)
    assert distinct_lines(data) == 4
    assert sk.count(path) == 4
    assert sk.count(input=data) == 4
    assert sk.count("-j", "2", path) == 4
    # the same without the final newline: the last (6 MB) line still counts
    write(path, data[:-1])
    assert sk.count(path) == 4


def test_binary_input(sk, tmp_path):
    rng = random.Random(20240229)
    data = bytes(rng.getrandbits(8) for _ in range(12000))
    data += b"\x00\x00\n\r\n\xff\xfe\n\x00\x00\n"   # some repeats and odd bytes
    truth = distinct_lines(data)
    assert 20 <= truth <= 64, truth        # small enough to be counted exactly
    path = write(tmp_path / "random.bin", data)
    assert sk.count(path) == truth
    assert sk.count(input=data) == truth
    # the same items through `hll add` give the very same sketch
    saved, added = tmp_path / "count.hll", tmp_path / "add.hll"
    sk.count("-o", saved, path)
    sk.ok("hll", "add", added, input=data)
    assert saved.read_bytes() == added.read_bytes()


def test_medium_input_is_close_to_the_truth(sk, tmp_path):
    rng = random.Random(5)
    items = [b"user-%d@example.org" % rng.randrange(30000) for _ in range(60000)]
    data = join_lines(items)
    truth = len(set(items))
    path = write(tmp_path / "users.txt", data)
    estimate = sk.count(path)
    assert_close(estimate, truth)
    assert sk.count(input=data) == estimate
    assert sk.count("-j", "1", path) == sk.count("-j", "2", path) == estimate


# ---- fields -----------------------------------------------------------------


TSV = (b"alice\tparis\t1\n"
       b"bob\tlondon\t2\n"
       b"carol\tparis\n"          # no third field
       b"dave\n"                  # only a first field
       b"\n"                      # an empty line: field 1 is the empty string
       b"alice\trome\t3\t\n"      # a fourth, empty field
       b"erin\t\t4\n")            # an empty second field


def fields_of(data, n, delimiter):
    """Field n (from 1) of every line that has one."""
    out = []
    for line in split_lines(data):
        parts = line.split(delimiter)
        if len(parts) >= n:
            out.append(parts[n - 1])
    return out


@pytest.mark.parametrize("field", [1, 2, 3, 4, 5])
def test_field_mode_default_tab(sk, tmp_path, field):
    path = write(tmp_path / "t.tsv", TSV)
    selected = fields_of(TSV, field, b"\t")
    expected = len(set(selected))
    assert sk.count("-f", str(field), path) == expected
    assert sk.count("--field", str(field), input=TSV) == expected
    assert sk.count("--field=%d" % field, "-d", "\t", path) == expected
    # -v reports the lines lacking the field, which were skipped
    result = sk.ok("count", "-v", "-f", str(field), path)
    info = parse_verbose(result.stderr.decode())
    assert int(info["lines"]) == len(split_lines(TSV))
    assert int(info["lines without field %d" % field]) == len(split_lines(TSV)) - len(selected)


def test_field_mode_expected_values(sk):
    # spelled out, so that a wrong fields_of() cannot hide a wrong command
    assert sk.count("-f", "1", input=TSV) == 6      # alice bob carol dave "" erin
    assert sk.count("-f", "2", input=TSV) == 4      # paris london rome ""
    #   ("paris" twice; the lines "dave" and "" lack field 2)
    assert sk.count("-f", "3", input=TSV) == 4      # 1 2 3 4
    assert sk.count("-f", "4", input=TSV) == 1      # ""
    assert sk.count("-f", "5", input=TSV) == 0


def test_field_mode_comma_delimiter(sk, tmp_path):
    csv = (b"id,name,city\n1,ann,oslo\n2,bo,oslo\n3,cy,\n4\n5,ann,bergen\n"
           b"6,\"x,y\",z\n")
    path = write(tmp_path / "t.csv", csv)
    for field in (1, 2, 3, 4):
        expected = len(set(fields_of(csv, field, b",")))
        assert sk.count("-d", ",", "-f", str(field), path) == expected
        assert sk.count("--delimiter", ",", "-f", str(field), path) == expected
    assert sk.count("-d", ",", "-f", "2", path) == 5   # name ann bo cy "x
    assert sk.count("-d", ",", "-f", "3", path) == 5   # city oslo "" bergen y"
    # with the comma delimiter, tabs are ordinary bytes and vice versa
    assert sk.count("-f", "2", path) == 0
    assert sk.count("-d", ",", "-f", "1", input=TSV) == distinct_lines(TSV)


def test_field_one_without_delimiter_is_the_whole_line(sk):
    data = b"a b\nc d\na b\n"
    assert sk.count("-f", "1", input=data) == sk.count(input=data) == 2


def test_field_mode_matches_hll_add_of_the_fields(sk, tmp_path):
    rng = random.Random(11)
    rows = [b"%d\t%d\tx" % (rng.randrange(100000), i) for i in range(20000)]
    data = join_lines(rows)
    firsts = fields_of(data, 1, b"\t")
    saved, added = tmp_path / "f.hll", tmp_path / "a.hll"
    estimate = sk.count("-f", "1", "-o", saved, input=data)
    assert_close(estimate, len(set(firsts)))
    sk.ok("hll", "add", added, input=join_lines(firsts))
    assert saved.read_bytes() == added.read_bytes()


# ---- precision, -o and -v ---------------------------------------------------------


@pytest.mark.parametrize("precision", [4, 10, 14, 16, 18])
def test_precision_option(sk, tmp_path, precision):
    items = [b"p-item-%d" % i for i in range(5000)]
    data = join_lines(items)
    out = tmp_path / "p.hll"
    estimate = sk.count("-p", str(precision), "-o", out, input=data)
    assert_close(estimate, len(items), precision)
    info = sk.info(out)
    assert info["registers"] == str(2 ** precision)
    assert info["precision"] == str(precision)
    assert info["estimate"] == str(estimate)
    assert sk.hll_count(out) == estimate
    assert sk.count("--precision", str(precision), input=data) == estimate
    # the same items through `hll add -p` give the same sketch
    added = tmp_path / "added.hll"
    sk.ok("hll", "add", "-p", str(precision), added, input=data)
    assert added.read_bytes() == out.read_bytes()


def test_default_precision_is_14(sk, tmp_path):
    out = tmp_path / "d.hll"
    sk.count("-o", out, input=b"a\nb\n")
    assert sk.info(out)["registers"] == "16384"


def test_output_file_is_a_sketch_with_the_same_count(sk, tmp_path):
    data = join_lines(b"o%d" % i for i in range(3000))
    out = tmp_path / "out.hll"
    estimate = sk.count("-o", out, input=data)
    assert out.read_bytes()[:4] == b"SKHL"
    assert sk.hll_count(out) == estimate
    assert sk.info(out)["format"] == "sketch 1"
    # --output, and an existing file is replaced
    sk.count("--output", out, input=b"only\n")
    assert sk.hll_count(out) == 1


def test_verbose_prints_bounds_on_stderr_only(sk, tmp_path):
    items = [b"v%d" % i for i in range(20000)] * 2
    path = write(tmp_path / "v.txt", join_lines(items))
    result = sk.ok("count", "-v", path)
    assert BARE_INT.match(result.stdout), result.stdout
    estimate = int(result.stdout)
    assert_close(estimate, 20000)
    info = parse_verbose(result.stderr.decode())
    assert int(info["lines"]) == 40000
    assert int(info["estimate"]) == estimate
    assert info["precision"] == "14"
    assert info["standard error"].endswith("%")
    assert 0 < float(info["standard error"][:-1]) <= 0.82
    previous = (estimate, estimate)
    for k, confidence in ((1, "68.27%"), (2, "95.45%"), (3, "99.73%")):
        low, sep, high = info[f"{k} sd ({confidence})"].partition(" .. ")
        assert sep
        low, high = float(low), float(high)
        assert low <= previous[0] and high >= previous[1]     # widening intervals
        previous = (low, high)
    assert previous[0] < estimate < previous[1]
    # without -v, nothing on stderr and the same number
    assert sk.count(path) == estimate
    assert sk.count("--verbose", path, verbose=True) == estimate


def test_verbose_with_fields(sk):
    result = sk.ok("count", "-v", "-f", "2", input=TSV)
    assert BARE_INT.match(result.stdout)
    info = parse_verbose(result.stderr.decode())
    assert info["lines"] == "7"
    assert info["lines without field 2"] == "2"
    assert info["estimate"] == result.stdout.decode().strip() == "4"


def test_threads_option(sk, tmp_path):
    data = join_lines(b"t%d" % i for i in range(50))
    path = write(tmp_path / "t.txt", data)
    for threads in ("1", "2", "7", "256"):
        assert sk.count("-j", threads, path) == 50
        assert sk.count("--threads", threads, path, input=data) == 50


def test_options_after_files(sk, tmp_path):
    path = write(tmp_path / "o.txt", b"a,1\nb,2\nc,1\n")
    out = tmp_path / "after.hll"
    assert sk.count(path, "-d", ",", "-f", "2", "-o", out, "-p", "12") == 2
    assert sk.info(out)["registers"] == "4096"


# ---- errors -------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["-p", "3"], ["-p", "19"], ["-p", "x"], ["-p", ""], ["-p", "-14"], ["-p", "14x"],
    ["-p", "99999999999999999999999"], ["--precision=0"],
    ["-f", "0"], ["-f", "x"], ["-f", "-1"], ["--field", ""],
    ["-d", ",,"], ["-d", ""], ["-d", "\u00e9"], ["-d", "\\t"], ["--delimiter", "ab"],
    ["-j", "0"], ["-j", "x"], ["-j", "257"],
    ["--bogus"], ["-x"], ["-p"], ["-f"], ["-d"], ["-o"], ["-j"], ["--precision"],
])
def test_bad_options(sk, args):
    sk.fail("count", *args, input=b"a\n")


@pytest.mark.parametrize("args, word", [
    (["-p", "3"], "precision"), (["-p", "19"], "precision"), (["-p", "x"], "precision"),
    (["-f", "0"], "field"), (["-d", "ab"], "delimiter"), (["-j", "0"], "threads"),
    (["--bogus"], "--bogus"),
])
def test_bad_option_messages_name_the_problem(sk, args, word):
    assert word in sk.fail("count", *args, input=b"a\n")


@pytest.mark.parametrize("command", [["count"], ["hll", "count"], ["hll", "add"]])
def test_unknown_option_in_a_bundle_is_named(sk, tmp_path, command):
    # `-xv`: getopt has not moved past the bundle when it meets 'x', so the
    # message must not name the argument before it (the subcommand's name).
    message = sk.fail(*command, "-xv", tmp_path / "f", input=b"a\n")
    assert "-x" in message or "'x'" in message, message


def test_missing_file(sk, tmp_path):
    missing = tmp_path / "missing.txt"
    message = sk.fail("count", missing)
    assert str(missing) in message
    # a missing file among good ones: no number is printed at all
    good = write(tmp_path / "good.txt", b"a\nb\n")
    sk.fail("count", good, missing)
    sk.fail("count", missing, good)
    # nor is -o written
    out = tmp_path / "out.hll"
    sk.fail("count", "-o", out, good, missing)
    assert not out.exists()


def test_directory_as_input(sk, tmp_path):
    message = sk.fail("count", tmp_path)
    assert str(tmp_path) in message
    sk.fail("count", "-j", "2", tmp_path)


def test_directory_as_standard_input(sk, tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        sk.fail("count", stdin=fd)
    finally:
        os.close(fd)


def test_output_write_error_is_reported(sk):
    with open("/dev/full", "wb") as full:
        result = sk.run("count", input=b"a\nb\n", stdout=full)
    assert result.returncode == 2
    assert_one_error_line(result.stderr)


def test_stdin_is_read_from_its_current_offset(sk, tmp_path):
    # `(read header; sketch count) < file`: standard input that is a regular
    # file must be read from where it stands, as cat, wc or sort do, not from
    # byte 0.
    path = write(tmp_path / "with-header.txt",
                 b"header\n" + join_lines(b"row%d" % i for i in range(10)))
    with open(path, "rb") as f:
        os.lseek(f.fileno(), len(b"header\n"), os.SEEK_SET)
        counted = subprocess.run([sk.binary, "count"], stdin=f, capture_output=True)
    assert counted.returncode == 0
    assert counted.stdout == b"10\n", (counted.stdout, counted.stderr)


def test_hll_add_reads_stdin_from_its_current_offset(sk, tmp_path):
    path = write(tmp_path / "with-header.txt",
                 b"header\n" + join_lines(b"row%d" % i for i in range(10)))
    sketch = tmp_path / "rows.hll"
    with open(path, "rb") as f:
        os.lseek(f.fileno(), len(b"header\n"), os.SEEK_SET)
        sk.ok("hll", "add", sketch, stdin=f)
    assert sk.hll_count(sketch) == 10
