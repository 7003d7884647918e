# SPDX-License-Identifier: BSD-3-Clause
"""`sketch bloom create|add|check|info|merge` on valid filter files, their
options, usage errors and help. Damaged files are in test_bloom_corrupt.py;
large inputs, threads and large filters in test_bloom_large.py."""
import os

import pytest

from bloom_cli_helpers import (
    ARRAY_ALIGN, INFO_FIELDS, check, count_maybe, create, fp_bound, header, info, items,
    layer_table, new_items, bit_arrays, file_size, FILE_VERSION, SPLIT_VERSION, LAYOUT_BYTES)
from sketch_cli_helpers import assert_one_error_line, join_lines, no_temporary_files


@pytest.fixture
def filt(sk, tmp_path):
    """An empty fixed-size filter for 1000 items at 1%."""
    path = tmp_path / "f.bloom"
    create(sk, path, 1000, 0.01)
    return path


# ---- create ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["auto", "blocked", "classic", "split"])
@pytest.mark.parametrize("n,p", [(1000, 0.01), (123457, 0.001), (50, 0.5), (1000, 1e-15)])
def test_create_prints_the_shape_it_writes(sk, tmp_path, layout, n, p):
    path = tmp_path / "new.bloom"
    shape = create(sk, path, n, p, "--layout", layout)
    if layout != "auto":
        assert shape["layout"] == layout
    data = path.read_bytes()
    h = header(data)
    split = shape["layout"] == "split"
    assert h == dict(magic=b"SKBF", version=SPLIT_VERSION if split else FILE_VERSION,
                     layout=LAYOUT_BYTES[shape["layout"]], hash=1, zero=0, layers=1, expansion=0,
                     fp_rate=p)
    [layer] = layer_table(data)
    assert layer["bits"] == shape["bits"] and layer["hashes"] == shape["hashes"]
    assert layer["capacity"] == n and layer["items"] == 0 and layer["zero"] == 0
    assert layer["offset"] == ARRAY_ALIGN
    if shape["layout"] != "classic":
        assert shape["bits"] % 512 == 0
    if split:
        assert shape["hashes"] in (8, 16)
    assert shape["size"] == (shape["bits"] + 63) // 64 * 8
    # the file ends with the (empty) bit array
    assert len(data) == file_size(data) > ARRAY_ALIGN + shape["size"]
    assert bit_arrays(data) == bytes(shape["size"])
    assert 1 <= shape["hashes"] <= 64
    no_temporary_files(tmp_path)

    fields = info(sk, path)
    assert fields["layout"] == shape["layout"]
    assert int(fields["bits"]) == shape["bits"]
    assert int(fields["hashes"]) == shape["hashes"]
    assert fields["bit arrays"].split()[0] == str(shape["size"])
    assert int(fields["capacity"]) == n
    assert float(fields["requested fp rate"]) == pytest.approx(p, rel=1e-5)
    assert fields["items"] == "0" and fields["estimated items"] == "0"
    assert float(fields["expected fp rate now"]) == 0
    # sized to meet the rate at capacity (printed with 3 digits)
    assert float(fields["expected fp rate at capacity"]) <= p * 1.005
    assert fields["bits per item at capacity"] == f"{shape['bits'] / n:.2f}"
    assert fields["layers"] == "1"
    assert "expansion" not in fields


@pytest.mark.parametrize("p", [0.5, 0.1, 0.03, 0.02, 0.01, 0.001, 5e-4, 3e-4, 1.6e-4, 1e-4,
                               1e-5, 1e-10])
def test_auto_layout_is_split_within_five_percent_of_blocked(sk, tmp_path, p):
    # docs/bloom-format.md: blocked while it needs at most 10% more bits than
    # classic, and there split where that needs at most 5% more than
    # blocked; else classic.
    shapes = {layout: create(sk, tmp_path / layout, 100000, p, "-l", layout)
              for layout in ("auto", "blocked", "classic", "split")}
    auto, blocked, classic, split = (shapes[x] for x in ("auto", "blocked", "classic", "split"))
    assert [blocked["layout"], classic["layout"], split["layout"]] == [
        "blocked", "classic", "split"]
    # the classic layout needs the fewest bits
    assert classic["bits"] <= blocked["bits"] and classic["bits"] <= split["bits"]
    if blocked["bits"] > 1.10 * classic["bits"]:
        assert auto == classic
    elif split["bits"] <= 1.05 * blocked["bits"]:
        assert auto == split
    else:
        assert auto == blocked


def test_auto_layout_at_the_documented_rates(sk, tmp_path):
    assert create(sk, tmp_path / "a", 1000000, 0.01)["layout"] == "split"
    assert create(sk, tmp_path / "b", 1000000, 0.1)["layout"] == "blocked"
    assert create(sk, tmp_path / "e", 1000000, 1e-5)["layout"] == "classic"
    assert create(sk, tmp_path / "f", 1000000, 1e-9)["layout"] == "classic"
    # the default is auto
    assert (create(sk, tmp_path / "c", 1000000, 0.01) ==
            create(sk, tmp_path / "d", 1000000, 0.01, "--layout", "auto"))


def test_long_and_short_options_agree(sk, tmp_path):
    short = create(sk, tmp_path / "s", 5000, 0.02, "-l", "classic", "-s", "-e", "3")
    long = create(sk, tmp_path / "l", 5000, 0.02, "--layout=classic", "--scalable",
                  "--expansion", "3")
    assert short == long
    r = sk.ok("bloom", "create", "--capacity=5000", "--fp-rate", "0.02", "-lclassic", "-se3",
              tmp_path / "b")
    assert (tmp_path / "b").read_bytes() == (tmp_path / "s").read_bytes()
    assert r.stdout.startswith(b"layout: classic\n")


@pytest.mark.parametrize("expansion", [None, "1", "3", "1024"])
def test_create_scalable(sk, tmp_path, expansion):
    path = tmp_path / "s.bloom"
    extra = ["-e", expansion] if expansion else []
    shape = create(sk, path, 1000, 0.01, "--scalable", *extra)
    fixed = create(sk, tmp_path / "fixed", 1000, 0.005, "-l", shape["layout"])
    # the first layer is built at half the rate
    assert shape == fixed
    fields = info(sk, path)
    assert fields["expansion"] == (expansion or "2")
    assert fields["layers"] == "1"
    assert float(fields["requested fp rate"]) == 0.01
    assert float(fields["expected fp rate at capacity"]) <= 0.005 * 1.005
    h = header(path.read_bytes())
    assert h["expansion"] == int(expansion or 2) and h["layers"] == 1


def test_expansion_needs_scalable(sk, tmp_path):
    path = tmp_path / "x.bloom"
    msg = sk.fail("bloom", "create", "-n", "100", "-p", "0.01", "-e", "3", path)
    assert "--scalable" in msg
    msg = sk.fail("bloom", "create", "-n", "100", "-p", "0.01", "--expansion=2", path)
    assert "--scalable" in msg
    assert not path.exists()
    # order does not matter
    create(sk, path, 100, 0.01, "-e", "3", "-s")


@pytest.mark.parametrize("args,word", [
    (["-p", "0.01"], "-n"),
    (["-n", "100"], "-p"),
    ([], "-n"),
    (["-n", "100", "-p", "0.01"], "FILE"),
])
def test_create_missing_arguments(sk, tmp_path, args, word):
    with_file = args + ([] if word == "FILE" else [tmp_path / "f"])
    msg = sk.fail("bloom", "create", *with_file)
    assert word in msg
    assert msg.startswith("sketch bloom create: ")
    assert os.listdir(tmp_path) == []


def test_create_one_file_at_a_time(sk, tmp_path):
    msg = sk.fail("bloom", "create", "-n", "10", "-p", "0.1", tmp_path / "a", tmp_path / "b")
    assert "one FILE" in msg
    assert os.listdir(tmp_path) == []


BAD_VALUES = [
    ("-p", "0", "false-positive rate"), ("-p", "1", "false-positive rate"),
    ("-p", "0.6", "false-positive rate"), ("-p", "1e-16", "false-positive rate"),
    ("-p", "x", "false-positive rate"), ("-p", "", "false-positive rate"),
    ("-p", "-0.01", "false-positive rate"), ("-p", "nan", "false-positive rate"),
    ("-p", "inf", "false-positive rate"), ("-p", "0.01x", "false-positive rate"),
    ("-n", "0", "capacity"), ("-n", "x", "capacity"), ("-n", "", "capacity"),
    ("-n", "-5", "capacity"), ("-n", "1.5", "capacity"), ("-n", "1e", "capacity"),
    ("-n", "1125899906842625", "capacity"), ("-n", "99999999999999999999999", "capacity"),
    ("-l", "foo", "layout"), ("-l", "", "layout"), ("-l", "Blocked", "layout"),
]


@pytest.mark.parametrize("option,value,word", BAD_VALUES,
                         ids=[f"{o}={v!r}" for o, v, _ in BAD_VALUES])
def test_create_bad_values(sk, tmp_path, option, value, word):
    opts = {"-n": "1000", "-p": "0.01"}
    opts[option] = value
    args = [a for kv in opts.items() for a in kv]
    msg = sk.fail("bloom", "create", *args, tmp_path / "f")
    assert word in msg
    if value:
        assert f"'{value}'" in msg
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["0", "32769", "x", "-1", ""])
def test_create_bad_expansion(sk, tmp_path, value):
    msg = sk.fail("bloom", "create", "-n", "100", "-p", "0.01", "-s", "-e", value,
                  tmp_path / "f")
    assert "expansion" in msg
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("p", ["0.5", "1e-15", "1E-15", "5e-1"])
def test_create_accepts_the_limits_of_the_rate(sk, tmp_path, p):
    create(sk, tmp_path / "f", 100, p)


@pytest.mark.parametrize("args", [
    ["-n", "1125899906842624", "-p", "0.5"],
    ["-n", "1000000000000000", "-p", "0.01"],
    ["-n", "1000000000000000", "-p", "0.01", "-l", "blocked"],
    ["-n", "1000000000000000", "-p", "0.01", "-l", "classic"],
    ["-n", "10000000000000", "-p", "1e-15"],
    ["-n", "1000000000000000", "-p", "0.01", "--scalable"],
])
def test_create_beyond_2_to_48_bits(sk, tmp_path, args):
    path = tmp_path / "huge.bloom"
    msg = sk.fail("bloom", "create", *args, path)
    assert "2^48" in msg
    assert os.listdir(tmp_path) == []


def test_create_refuses_to_replace_a_file(sk, tmp_path):
    path = tmp_path / "f.bloom"
    create(sk, path, 1000, 0.01)
    sk.ok("bloom", "add", path, "kept")
    before = path.read_bytes()
    msg = sk.fail("bloom", "create", "-n", "5000", "-p", "0.001", path)
    assert "already exists" in msg and "--force" in msg and str(path) in msg
    assert path.read_bytes() == before
    no_temporary_files(tmp_path)
    # nor any other kind of file
    other = tmp_path / "notes.txt"
    other.write_bytes(b"precious\n")
    sk.fail("bloom", "create", "-n", "10", "-p", "0.1", other)
    assert other.read_bytes() == b"precious\n"


@pytest.mark.parametrize("force", ["-f", "--force"])
def test_create_force_replaces(sk, tmp_path, force):
    path = tmp_path / "f.bloom"
    create(sk, path, 1000, 0.01)
    sk.ok("bloom", "add", path, "old")
    shape = create(sk, path, 5000, 0.001, force)
    fields = info(sk, path)
    assert int(fields["bits"]) == shape["bits"] and fields["capacity"] == "5000"
    assert fields["items"] == "0"
    assert check(sk, path, "old")[0] == 1
    no_temporary_files(tmp_path)


def test_create_under_a_missing_directory(sk, tmp_path):
    msg = sk.fail("bloom", "create", "-n", "10", "-p", "0.1", tmp_path / "no" / "f")
    assert "No such file or directory" in msg


# ---- add ------------------------------------------------------------------------------


def test_add_arguments_and_verbose(sk, filt):
    r = sk.ok("bloom", "add", "-v", filt, "alice", "bob", "carol")
    assert r.stdout == b""
    assert new_items(r.stderr) == 3
    r = sk.ok("bloom", "add", "--verbose", filt, "alice", "bob", "carol")
    assert new_items(r.stderr) == 0
    r = sk.ok("bloom", "add", "-v", filt, "bob", "dave")
    assert new_items(r.stderr) == 1
    # without -v nothing is printed
    r = sk.ok("bloom", "add", filt, "erin")
    assert r.stdout == b"" and r.stderr == b""
    assert info(sk, filt)["items"] == "5"
    assert check(sk, filt, "alice", "bob", "carol", "dave", "erin") == (
        0, [b"alice", b"bob", b"carol", b"dave", b"erin"])


def test_add_lines_of_any_bytes(sk, filt):
    data = b"a\0b\nc\r\n\nlast"        # NUL, CR, an empty line, no final newline
    r = sk.ok("bloom", "add", "-v", filt, input=data)
    assert new_items(r.stderr) == 4
    # each line is an item, byte for byte
    query = [b"a\0b", b"c\r", b"", b"last", b"a", b"b", b"c", b"last\r", b"a\0b\0"]
    assert check(sk, filt, input=join_lines(query)) == (0, query[:4])
    # the same again is nothing new; a duplicate within the input counts once
    r = sk.ok("bloom", "add", "-v", filt, input=data + b"\n")
    assert new_items(r.stderr) == 0
    r = sk.ok("bloom", "add", "-v", filt, input=b"dup\ndup\ndup\n")
    assert new_items(r.stderr) == 1
    assert info(sk, filt)["items"] == "5"


def test_add_empty_input_changes_nothing(sk, filt):
    sk.ok("bloom", "add", filt, "x")
    before = filt.read_bytes()
    r = sk.ok("bloom", "add", "-v", filt, input=b"")
    assert new_items(r.stderr) == 0
    assert filt.read_bytes() == before
    # standard input closed (/dev/null) is the same
    r = sk.ok("bloom", "add", "-v", filt)
    assert new_items(r.stderr) == 0
    assert filt.read_bytes() == before


def test_add_arguments_are_items_verbatim(sk, filt):
    sk.ok("bloom", "add", filt, "x\ny", "-v", "--", "-", "")
    # options after FILE were items, and nothing was reported
    r = sk.run("bloom", "check", filt, "x\ny", "x", "y", "-v", "--", "-", "", "-j")
    assert r.returncode == 0
    assert r.stdout == b"x\ny\n-v\n--\n-\n\n"
    assert info(sk, filt)["items"] == "5"


def test_arguments_and_lines_give_the_same_filter(sk, tmp_path):
    words = [b"", b"a b", b"x\ty", b"\xc3\xa9t\xc3\xa9", b"\r", b"z" * 1000]
    by_args, by_stdin = tmp_path / "args", tmp_path / "stdin"
    create(sk, by_args, 100, 0.01)
    create(sk, by_stdin, 100, 0.01)
    sk.ok("bloom", "add", by_args, *[w.decode("utf-8", "surrogateescape") for w in words])
    sk.ok("bloom", "add", by_stdin, input=join_lines(words))
    assert by_args.read_bytes() == by_stdin.read_bytes()


def test_add_a_multi_megabyte_line(sk, filt, tmp_path):
    big = bytes(range(256)).replace(b"\n", b"") * (5 * 4096) + b"\0\r"   # ~5 MB
    data = b"before\n" + big + b"\nafter"
    r = sk.ok("bloom", "add", "-v", filt, input=data)              # from a pipe
    assert new_items(r.stderr) == 3
    assert check(sk, filt, opts=("-c",), input=big + b"\n") == (0, 1)
    assert check(sk, filt, opts=("-c",), input=big[:-1] + b"\n" + big[1:]) == (1, 0)
    # the same from a regular file on standard input
    other = tmp_path / "g.bloom"
    create(sk, other, 1000, 0.01)
    src = tmp_path / "lines"
    src.write_bytes(data)
    with open(src, "rb") as f:
        sk.ok("bloom", "add", other, stdin=f)
    assert other.read_bytes() == filt.read_bytes()
    # check prints the line back whole
    code, lines = check(sk, other, input=data)
    assert lines == [b"before", big, b"after"]


def test_add_reads_standard_input_from_where_it_stands(sk, filt, tmp_path):
    src = tmp_path / "lines"
    src.write_bytes(b"skipped\nfirst\nsecond\n")
    with open(src, "rb") as f:
        f.seek(len(b"skipped\n"))
        r = sk.ok("bloom", "add", "-v", filt, stdin=f)
    assert new_items(r.stderr) == 2
    assert check(sk, filt, "skipped", "first", "second") == (0, [b"first", b"second"])


@pytest.mark.parametrize("threads", ["1", "2", "7", "256"])
def test_add_threads_option(sk, filt, threads):
    r = sk.ok("bloom", "add", "-v", "-j", threads, filt, input=join_lines(items(b"t", 3000)))
    assert new_items(r.stderr) == int(info(sk, filt)["items"])
    assert count_maybe(sk, filt, items(b"t", 3000)) == 3000


@pytest.mark.parametrize("threads", ["0", "257", "x", "-1", ""])
def test_add_bad_threads(sk, filt, threads):
    before = filt.read_bytes()
    msg = sk.fail("bloom", "add", "-j", threads, filt, "x")
    assert "threads" in msg
    assert filt.read_bytes() == before


def test_add_missing_file_argument(sk):
    msg = sk.fail("bloom", "add")
    assert "missing FILE" in msg


def test_add_does_not_create_a_filter(sk, tmp_path):
    msg = sk.fail("bloom", "add", tmp_path / "none.bloom", "x")
    assert "No such file or directory" in msg
    assert os.listdir(tmp_path) == []


def test_add_rejects_invert_and_check_rejects_verbose(sk, filt):
    before = filt.read_bytes()
    msg = sk.fail("bloom", "add", "--invert", filt, "x")
    assert "--invert" in msg
    assert filt.read_bytes() == before
    msg = sk.fail("bloom", "check", "--verbose", filt, "x")
    assert "--verbose" in msg


def test_scalable_filter_grows(sk, tmp_path):
    path = tmp_path / "s.bloom"
    shape = create(sk, path, 1000, 0.01, "-s")
    added = items(b"grow", 20000)
    r = sk.ok("bloom", "add", "-v", path, input=join_lines(added))
    n_new = new_items(r.stderr)
    fields = info(sk, path)
    layers = int(fields["layers"])
    assert layers > 1
    assert fields["expansion"] == "2"
    assert int(fields["items"]) == n_new
    # layers of 1000, 2000, 4000...: all but the newest are full
    assert int(fields["capacity"]) == 1000 * (2 ** layers - 1)
    assert 1000 * (2 ** (layers - 1) - 1) < n_new <= int(fields["capacity"])
    assert int(fields["bits"]) > shape["bits"] * (2 ** layers - 1) / 2
    # the file holds every layer, each page-aligned, the newest last
    data = path.read_bytes()
    table = layer_table(data)
    assert len(table) == layers
    assert header(data)["expansion"] == 2
    assert [t["capacity"] for t in table] == [1000 * 2 ** i for i in range(layers)]
    assert sum(t["items"] for t in table) == n_new
    assert all(t["offset"] % ARRAY_ALIGN == 0 for t in table)
    assert len(data) == file_size(data)
    # nothing lost, and the rate of the whole chain is still met
    assert count_maybe(sk, path, added) == len(added)
    absent = items(b"not-there", 100000)
    assert count_maybe(sk, path, absent) <= fp_bound(0.01, len(absent))
    assert float(fields["expected fp rate now"]) <= 0.01
    assert "checksums" in info(sk, path, "--verify")


def test_scalable_filter_with_expansion_3(sk, tmp_path):
    path = tmp_path / "s3.bloom"
    create(sk, path, 100, 0.05, "-s", "-e", "3")
    sk.ok("bloom", "add", path, input=join_lines(items(b"e", 5000)))
    table = layer_table(path.read_bytes())
    assert len(table) > 2
    assert [t["capacity"] for t in table] == [100 * 3 ** i for i in range(len(table))]
    assert count_maybe(sk, path, items(b"e", 5000)) == 5000


def test_scalable_filter_of_one_item_per_layer(sk, tmp_path):
    # Expansion 1 at capacity 1: every new item needs a layer, and layers are
    # bounded by memory alone, so 200 items from standard input or from the
    # arguments make about 200 layers, all in the file.
    for source in ("stdin", "args"):
        path = tmp_path / ("tiny-%s.bloom" % source)
        create(sk, path, 1, 0.01, "-s", "-e", "1")
        new = items(b"f", 200)
        if source == "stdin":
            sk.ok("bloom", "add", path, input=join_lines(new))
        else:
            sk.ok("bloom", "add", path, *[i.decode() for i in new])
        fields = info(sk, path)
        assert 150 <= int(fields["layers"]) <= 200, fields
        assert check(sk, path, opts=("-c",), input=join_lines(new)) == (0, 200)
    no_temporary_files(tmp_path)


# ---- check ----------------------------------------------------------------------------


def test_check_prints_matches_like_grep(sk, filt):
    sk.ok("bloom", "add", filt, "a", "b", "c")
    assert check(sk, filt, input=b"a\nnope\nc\nb\nzz\na\n") == (0, [b"a", b"c", b"b", b"a"])
    assert check(sk, filt, input=b"nope\nzz\n") == (1, [])
    assert check(sk, filt, input=b"") == (1, [])
    assert check(sk, filt, opts=("-v",), input=b"a\nnope\nc\nzz") == (0, [b"nope", b"zz"])
    assert check(sk, filt, opts=("--invert",), input=b"a\nb\n") == (1, [])
    assert check(sk, filt, opts=("-c",), input=b"a\nnope\nc\nb\nzz\na\n") == (0, 4)
    assert check(sk, filt, opts=("--count",), input=b"nope\n") == (1, 0)
    assert check(sk, filt, opts=("-c",), input=b"") == (1, 0)
    assert check(sk, filt, opts=("-v", "-c"), input=b"a\nnope\nc\nzz") == (0, 2)
    assert check(sk, filt, opts=("-vc",), input=b"a\nb\n") == (1, 0)
    # items as arguments, in the order given
    assert check(sk, filt, "c", "x", "a") == (0, [b"c", b"a"])
    assert check(sk, filt, "x", "y") == (1, [])
    assert check(sk, filt, "c", "x", "a", opts=("-v",)) == (0, [b"x"])
    assert check(sk, filt, "c", "x", "a", opts=("-c",)) == (0, 2)
    # arguments win over standard input
    assert check(sk, filt, "x", input=b"a\n") == (1, [])


def test_check_an_empty_filter(sk, filt):
    lines = items(b"e", 500)
    assert check(sk, filt, input=join_lines(lines)) == (1, [])
    assert check(sk, filt, opts=("-v",), input=join_lines(lines)) == (0, lines)


def test_check_keeps_input_order_and_partitions_it(sk, tmp_path):
    path = tmp_path / "o.bloom"
    create(sk, path, 5000, 0.01)
    present = items(b"in", 3000)
    sk.ok("bloom", "add", path, input=join_lines(present))
    # interleaved, in an order unlike the order of adding, across many batches
    absent = items(b"out", 3000)
    query = [x for pair in zip(reversed(present), absent) for x in pair]
    _, maybe = check(sk, path, input=join_lines(query))
    _, definitely_not = check(sk, path, opts=("-v",), input=join_lines(query))
    maybe_set = set(maybe)
    assert maybe == [q for q in query if q in maybe_set]
    assert definitely_not == [q for q in query if q not in maybe_set]
    assert set(present) <= maybe_set                       # no false negatives
    assert len(maybe) - len(present) <= fp_bound(0.01, len(absent))


def test_check_output_bytes_are_the_input_bytes(sk, filt):
    lines = [b"\0", b"\r", b"\xff\xfe", b"tab\there", b" lead", b"trail ", b""]
    sk.ok("bloom", "add", filt, input=join_lines(lines))
    code, out = check(sk, filt, input=join_lines(lines))
    assert out == lines
    r = sk.run("bloom", "check", filt, input=b"\r\n\0")     # last line without newline
    assert r.stdout == b"\r\n\0\n" and r.returncode == 0


def test_check_missing_file_argument(sk):
    assert "missing FILE" in sk.fail("bloom", "check")
    assert "missing FILE" in sk.fail("bloom", "check", "-c")


@pytest.mark.parametrize("layout,p", [("auto", 0.01), ("blocked", 0.01), ("classic", 0.01),
                                      ("auto", 0.001), ("blocked", 0.1), ("split", 0.01),
                                      ("split", 1e-5)])
def test_no_false_negatives_and_the_false_positive_rate(sk, tmp_path, layout, p):
    n = 100000
    path = tmp_path / "fp.bloom"
    create(sk, path, n, p, "-l", layout)
    present = items(b"present-", n)
    r = sk.ok("bloom", "add", "-v", path, input=join_lines(present))
    assert new_items(r.stderr) <= n
    # every added line is reported
    assert count_maybe(sk, path, present) == n
    assert count_maybe(sk, path, present, invert=True) == 0
    # and no more absent ones than the requested rate allows
    absent = items(b"absent-", 100000)
    false_positives = count_maybe(sk, path, absent)
    assert false_positives <= fp_bound(p, len(absent)), (
        f"{false_positives} false positives in {len(absent)} at requested rate {p}")
    fields = info(sk, path)
    # the estimate of the number of items from the bits set is close
    assert abs(int(fields["estimated items"]) - n) <= 0.02 * n
    assert float(fields["expected fp rate now"]) <= p * 1.005


@pytest.mark.parametrize("capacity,instances", [(1, 100), (10, 100)])
def test_small_filters_meet_their_false_positive_rate(sk, tmp_path, capacity, instances):
    # The rate is an average over filters (over the items they hold), so
    # average the rate of many filters, each at its capacity, and allow four
    # standard errors of that mean. (At capacity 1 and 10 the auto layout is
    # classic, of 10 and 96 bits.)
    p = 0.01
    absent = join_lines(items(b"absent-", 20000))
    rates = []
    for i in range(instances):
        path = tmp_path / f"small{i}.bloom"
        create(sk, path, capacity, p)
        sk.ok("bloom", "add", path, input=join_lines(items(b"i%d-" % i, capacity)))
        rates.append(check(sk, path, opts=("-c",), input=absent)[1] / 20000)
        path.unlink()
    mean = sum(rates) / instances
    sd = (sum((r - mean) ** 2 for r in rates) / (instances - 1)) ** 0.5
    bound = p + 4 * max(sd / instances ** 0.5, (p * (1 - p) / (20000 * instances)) ** 0.5)
    assert mean <= bound, (
        f"filters for {capacity} items at rate {p} hold {capacity} items and show "
        f"a mean false-positive rate of {mean:.4f} (bound {bound:.4f}) over "
        f"{instances} filters")


@pytest.mark.parametrize("capacity", [1, 10])
def test_scalable_filters_from_a_small_capacity_meet_their_rate(sk, tmp_path, capacity):
    p = 0.01
    absent = join_lines(items(b"absent-", 20000))
    rates = []
    for i in range(10):
        path = tmp_path / f"s{i}.bloom"
        create(sk, path, capacity, p, "-s")
        sk.ok("bloom", "add", path, input=join_lines(items(b"s%d-" % i, 5000)))
        rates.append(check(sk, path, opts=("-c",), input=absent)[1] / 20000)
    mean = sum(rates) / len(rates)
    sd = (sum((r - mean) ** 2 for r in rates) / (len(rates) - 1)) ** 0.5
    bound = p + 4 * max(sd / len(rates) ** 0.5, (p * (1 - p) / 200000) ** 0.5)
    assert mean <= bound, (
        f"scalable filters from capacity {capacity} at rate {p} after 5000 items: "
        f"mean false-positive rate {mean:.4f}, bound {bound:.4f}, rates {rates}")


# ---- info -----------------------------------------------------------------------------


def test_info_after_adding(sk, tmp_path):
    path = tmp_path / "i.bloom"
    shape = create(sk, path, 10000, 0.01, "-l", "classic")
    sk.ok("bloom", "add", path, input=join_lines(items(b"i", 5000)))
    fields = info(sk, path)
    assert list(fields) == INFO_FIELDS
    assert fields["layout"] == "classic"
    assert int(fields["bits"]) == shape["bits"]
    assert int(fields["items"]) <= 5000 and int(fields["items"]) >= 4990
    assert abs(int(fields["estimated items"]) - 5000) <= 100
    now = float(fields["expected fp rate now"])
    at_capacity = float(fields["expected fp rate at capacity"])
    assert 0 < now < at_capacity <= 0.01 * 1.005
    assert fields["bits per item at capacity"] == f"{shape['bits'] / 10000:.2f}"
    verified = info(sk, path, "--verify")
    assert verified.pop("checksums") == "ok"
    assert verified == fields


def test_info_usage_errors(sk, filt):
    assert "missing FILE" in sk.fail("bloom", "info")
    assert "missing FILE" in sk.fail("bloom", "info", "--verify")
    assert "one FILE" in sk.fail("bloom", "info", filt, filt)


def test_a_flipped_bit_fails_only_verify(sk, filt, tmp_path):
    sk.ok("bloom", "add", filt, input=join_lines(items(b"v", 500)))
    data = filt.read_bytes()
    offset = layer_table(data)[0]["offset"]
    bad = tmp_path / "bad.bloom"
    bad.write_bytes(data[:offset + 100] + bytes([data[offset + 100] ^ 0x10]) +
                    data[offset + 101:])
    msg = sk.fail("bloom", "info", "--verify", bad)
    assert "checksum" in msg and str(bad) in msg
    # without --verify the header is all that is checked
    fields = info(sk, bad)
    assert fields["items"] == info(sk, filt)["items"]
    assert check(sk, bad, opts=("-c",), input=join_lines(items(b"v", 500)))[0] == 0


# ---- merge ----------------------------------------------------------------------------


@pytest.fixture
def pair(sk, tmp_path):
    """Two filters of one shape holding disjoint sets a0.. and b0.."""
    a, b = tmp_path / "a.bloom", tmp_path / "b.bloom"
    for path, prefix in ((a, b"a"), (b, b"b")):
        create(sk, path, 2000, 0.01)
        sk.ok("bloom", "add", path, input=join_lines(items(prefix, 1000)))
    return a, b


def or_bytes(x, y):
    return bytes(i | j for i, j in zip(x, y))


def and_bytes(x, y):
    return bytes(i & j for i, j in zip(x, y))


def test_merge_union(sk, pair, tmp_path):
    a, b = pair
    out = tmp_path / "u.bloom"
    r = sk.ok("bloom", "merge", "-o", out, a, b)
    assert r.stdout == b"" and r.stderr == b""
    everything = items(b"a", 1000) + items(b"b", 1000)
    assert count_maybe(sk, out, everything) == 2000
    assert bit_arrays(out.read_bytes()) == or_bytes(bit_arrays(a.read_bytes()),
                                                   bit_arrays(b.read_bytes()))
    fields = info(sk, out, "--verify")
    assert abs(int(fields["items"]) - 2000) <= 60       # the estimate from the bits
    assert fields["capacity"] == "2000"
    no_temporary_files(tmp_path)


def test_merge_intersect(sk, pair, tmp_path):
    a, b = pair
    out = tmp_path / "i.bloom"
    sk.ok("bloom", "merge", "--intersect", "-o", out, a, b)
    both = items(b"a", 1000) + items(b"b", 1000)
    assert count_maybe(sk, out, both) <= 0.05 * 2000
    assert bit_arrays(out.read_bytes()) == and_bytes(bit_arrays(a.read_bytes()),
                                                    bit_arrays(b.read_bytes()))
    # what is in both stays
    c = tmp_path / "c.bloom"
    create(sk, c, 2000, 0.01)
    sk.ok("bloom", "add", c, input=join_lines(items(b"a", 500) + items(b"c", 500)))
    sk.ok("bloom", "merge", "-i", "-o", out, a, c)
    assert count_maybe(sk, out, items(b"a", 500)) == 500
    info(sk, out, "--verify")


def test_merge_many_and_one(sk, pair, tmp_path):
    a, b = pair
    c = tmp_path / "c.bloom"
    create(sk, c, 2000, 0.01)
    sk.ok("bloom", "add", c, "extra")
    out = tmp_path / "m.bloom"
    sk.ok("bloom", "merge", "--output", out, a, b, c)
    assert count_maybe(sk, out, items(b"a", 1000) + items(b"b", 1000) + [b"extra"]) == 2001
    # one input is a copy of its bits
    sk.ok("bloom", "merge", "-o", out, a)
    assert bit_arrays(out.read_bytes()) == bit_arrays(a.read_bytes())


@pytest.mark.parametrize("which", [0, 1])
def test_merge_into_an_input(sk, pair, tmp_path, which):
    a, b = pair
    target = pair[which]
    sk.ok("bloom", "merge", "-o", target, a, b)
    assert count_maybe(sk, target, items(b"a", 1000) + items(b"b", 1000)) == 2000
    info(sk, target, "--verify")
    no_temporary_files(tmp_path)


def test_merge_scalable_filters(sk, tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "o"
    for path, prefix in ((a, b"a"), (b, b"b")):
        create(sk, path, 100, 0.01, "-s")
        sk.ok("bloom", "add", path, input=join_lines(items(prefix, 150)))
    sk.ok("bloom", "merge", "-o", out, a, b)
    assert count_maybe(sk, out, items(b"a", 150) + items(b"b", 150)) == 300
    assert info(sk, out)["layers"] == "2"


@pytest.mark.parametrize("other", [
    ["-n", "3000", "-p", "0.01"],
    ["-n", "2000", "-p", "0.001"],
    ["-n", "2000", "-p", "0.01", "-l", "classic"],
    ["-n", "2000", "-p", "0.01", "-s"],
])
def test_merge_shape_mismatch(sk, pair, tmp_path, other):
    a, b = pair
    c = tmp_path / "other.bloom"
    sk.ok("bloom", "create", *other, c)
    before = a.read_bytes()
    for inputs in ([a, c], [a, b, c]):
        msg = sk.fail("bloom", "merge", "-o", a, *inputs)
        assert str(c) in msg
        assert a.read_bytes() == before
    out = tmp_path / "out.bloom"
    msg = sk.fail("bloom", "merge", "-o", out, c, a)
    assert str(a) in msg
    assert not out.exists()
    no_temporary_files(tmp_path)


def test_merge_usage_errors(sk, pair, tmp_path):
    a, b = pair
    msg = sk.fail("bloom", "merge", a, b)
    assert "-o" in msg and msg.startswith("sketch bloom merge: ")
    msg = sk.fail("bloom", "merge", "-o", tmp_path / "x")
    assert "missing FILE" in msg
    msg = sk.fail("bloom", "merge", a, b, "-o")
    assert "-o" in msg
    assert not (tmp_path / "x").exists()


def test_merge_to_a_missing_directory(sk, pair, tmp_path):
    a, b = pair
    msg = sk.fail("bloom", "merge", "-o", tmp_path / "no" / "x", a, b)
    assert "No such file or directory" in msg


# ---- help, usage and options ----------------------------------------------------------

SUBCOMMANDS = ["create", "add", "check", "info", "merge"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_subcommand_help(sk, sub, flag):
    r = sk.ok("bloom", sub, flag)
    assert r.stderr == b""
    assert r.stdout.decode().splitlines()[0].startswith(f"Usage: sketch bloom {sub}")


def test_help_wins_over_other_arguments(sk, tmp_path):
    r = sk.ok("bloom", "create", "-n", "5", "--help", tmp_path / "f")
    assert r.stdout.startswith(b"Usage: sketch bloom create")
    assert not (tmp_path / "f").exists()


def test_bloom_help(sk):
    for flag in ("--help", "-h"):
        r = sk.ok("bloom", flag)
        assert r.stdout.startswith(b"Usage: sketch bloom") and r.stderr == b""
        for sub in SUBCOMMANDS:
            assert f"\n  {sub} ".encode() in r.stdout
    assert b"bloom" in sk.ok("--help").stdout


def test_bloom_without_a_subcommand(sk):
    r = sk.run("bloom")
    assert r.returncode == 2
    assert r.stdout == b""
    assert b"Usage: sketch bloom" in r.stderr


@pytest.mark.parametrize("sub", ["foo", "", "Create", "--bogus", "-x", "remove", "check2"])
def test_unknown_subcommand(sk, sub):
    msg = sk.fail("bloom", sub)
    assert msg.startswith("sketch bloom: ")


@pytest.mark.parametrize("args,option", [
    (["info", "--verbose"], "--verbose"),
    (["create", "-n", "1", "-p", "0.1", "--count"], "--count"),
    (["check", "--intersect"], "--intersect"),
    (["add", "-x"], "-x"),
    (["check", "-cx"], "-x"),
    (["info", "-v"], "-v"),
    (["merge", "-j", "2", "-o", "OUT"], "-j"),
    (["create", "-n", "1", "-p", "0.1", "--bogus"], "--bogus"),
])
def test_unknown_options(sk, tmp_path, args, option):
    f = tmp_path / "f.bloom"
    create(sk, f, 10, 0.1)
    before = f.read_bytes()
    sub, rest = args[0], [a if a != "OUT" else str(tmp_path / "o") for a in args[1:]]
    msg = sk.fail("bloom", sub, *rest, f)
    assert msg.startswith(f"sketch bloom {sub}: ")
    assert f"'{option}'" in msg
    assert f.read_bytes() == before


# An option of another subcommand that takes a value, or a value given to
# an option that takes none: the message should name the option, as typed.
@pytest.mark.parametrize("args,option", [
    (["merge", "--threads", "3", "-o", "OUT"], "--threads"),
    (["add", "--expansion", "3"], "--expansion"),
    (["info", "--output", "x"], "--output"),
    (["check", "--capacity", "5"], "--capacity"),
    (["info", "--verify=yes"], "--verify"),
    (["check", "--invert=1"], "--invert"),
])
def test_unknown_options_are_named_as_typed(sk, tmp_path, args, option):
    f = tmp_path / "f.bloom"
    create(sk, f, 10, 0.1)
    sub, rest = args[0], [a if a != "OUT" else str(tmp_path / "o") for a in args[1:]]
    msg = sk.fail("bloom", sub, *rest, f)
    assert option in msg, msg


@pytest.mark.parametrize("args,option", [
    (["create", "-n"], "-n"), (["create", "-n", "5", "-p"], "-p"),
    (["create", "-n", "5", "-p", "0.1", "-l"], "-l"), (["merge", "-o"], "-o"),
    (["add", "-j"], "-j"), (["create", "-s", "-n", "5", "-p", "0.1", "-e"], "-e"),
])
def test_options_without_their_value(sk, args, option):
    msg = sk.fail("bloom", *args)
    assert "needs a value" in msg and f"'{option}'" in msg


def test_abbreviated_long_options(sk, tmp_path):
    f = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "--cap", "100", "--fp", "0.01", "--lay", "classic", f)
    sk.ok("bloom", "add", "--verb", f, "x")
    assert check(sk, f, "x", "y", opts=("--inv",)) == (0, [b"y"])
    r = sk.ok("bloom", "check", "--cou", f, "x", "y")
    assert r.stdout == b"1\n"
    assert "checksums" in info(sk, f, "--veri")


def test_every_error_is_one_line(sk, tmp_path, filt):
    # sk.fail checks each; this runs a sample of every kind in one place
    cases = [
        ["bloom", "create", "-n", "0", "-p", "0.01", tmp_path / "x"],
        ["bloom", "create", "-n", "10", "-p", "0.01", filt],
        ["bloom", "add", tmp_path / "missing"],
        ["bloom", "check", tmp_path],
        ["bloom", "info", "--verify", tmp_path / "missing"],
        ["bloom", "merge", "-o", tmp_path / "x"],
        ["bloom", "nope"],
        ["bloom", "check", "--verbose", filt],
    ]
    for args in cases:
        r = sk.run(*args)
        assert r.returncode == 2, args
        assert_one_error_line(r.stderr)
        assert r.stdout == b""
