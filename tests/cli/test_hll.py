# SPDX-License-Identifier: BSD-3-Clause
"""`sketch hll add|count|merge|info|export` on valid sketch files."""
import random

import pytest
from format_h import FORMAT

from sketch_cli_helpers import (
    BARE_INT, DENSE_SIZE_P14, assert_close, assert_one_error_line, join_lines,
    no_temporary_files, parse_verbose)


def items(prefix, n, start=0):
    return [b"%s%d" % (prefix, i) for i in range(start, start + n)]


def native_dense_size(precision):
    # docs of the native format (src/hll/hll.c): a 16-byte header and 6-bit registers
    return 16 + 2 ** precision * 6 // 8


# ---- add ------------------------------------------------------------------------------


def test_add_creates_the_file_from_arguments(sk, tmp_path):
    path = tmp_path / "new.hll"
    assert not path.exists()
    result = sk.ok("hll", "add", path, "alice", "bob", "carol")
    assert result.stdout == b"" and result.stderr == b""
    data = path.read_bytes()
    assert data[:4] == b"SKHL"
    assert sk.hll_count(path) == 3
    info = sk.info(path)
    assert info["format"] == "sketch 1"
    assert info["registers"] == "16384"
    assert info["encoding"] == "sparse"
    no_temporary_files(tmp_path)


def test_add_without_items_reads_standard_input(sk, tmp_path):
    path = tmp_path / "stdin.hll"
    data = join_lines(items(b"s", 40) + items(b"s", 10) + [b""])
    sk.ok("hll", "add", path, input=data)
    assert sk.hll_count(path) == 41
    # and an empty standard input creates an empty sketch
    empty = tmp_path / "empty.hll"
    sk.ok("hll", "add", empty, input=b"")
    assert sk.hll_count(empty) == 0
    assert sk.info(empty)["estimate"] == "0"


def test_arguments_after_file_are_items(sk, tmp_path):
    path = tmp_path / "dash.hll"
    sk.ok("hll", "add", path, "-p", "12", "--redis", "--", "-", "-h")
    assert sk.hll_count(path) == 6
    info = sk.info(path)
    assert info["registers"] == "16384"       # -p 12 after FILE was an item
    assert info["format"] == "sketch 1"       # and so was --redis


def test_argument_items_are_taken_verbatim(sk, tmp_path):
    one = tmp_path / "one.hll"
    sk.ok("hll", "add", one, "a\nb")           # one item holding a newline
    assert sk.hll_count(one) == 1
    two = tmp_path / "two.hll"
    sk.ok("hll", "add", two, input=b"a\nb\n")  # two lines
    assert sk.hll_count(two) == 2
    empty_item = tmp_path / "e.hll"
    sk.ok("hll", "add", empty_item, "")
    assert sk.hll_count(empty_item) == 1


def test_arguments_stdin_and_count_give_identical_files(sk, tmp_path):
    words = [b"", b"a b", b"x\ty", b"\xc3\xa9t\xc3\xa9", b"\r", b"z" * 1000]
    by_args, by_stdin, by_count = (tmp_path / n for n in ("args", "stdin", "count"))
    sk.ok("hll", "add", by_args, *[w.decode("utf-8", "surrogateescape") for w in words])
    sk.ok("hll", "add", by_stdin, input=join_lines(words))
    assert sk.count("-o", by_count, input=join_lines(words)) == len(words)
    assert by_args.read_bytes() == by_stdin.read_bytes() == by_count.read_bytes()


def test_add_is_idempotent(sk, tmp_path):
    path = tmp_path / "idem.hll"
    sk.ok("hll", "add", path, "a", "b", "c")
    before = path.read_bytes()
    sk.ok("hll", "add", path, "c", "b", "a", "a")
    assert path.read_bytes() == before
    sk.ok("hll", "add", path, input=b"b\na\n")
    assert path.read_bytes() == before
    assert sk.hll_count(path) == 3
    # also once dense
    dense = tmp_path / "dense.hll"
    data = join_lines(items(b"d", 20000))
    sk.ok("hll", "add", dense, input=data)
    before = dense.read_bytes()
    sk.ok("hll", "add", dense, input=data)
    sk.ok("hll", "add", dense, "d5", "d19999")
    assert dense.read_bytes() == before


def test_add_accumulates_the_union(sk, tmp_path):
    path = tmp_path / "acc.hll"
    first, second = items(b"u", 30), items(b"u", 30, start=20)
    sk.ok("hll", "add", path, input=join_lines(first))
    assert sk.hll_count(path) == 30
    sk.ok("hll", "add", path, *[i.decode() for i in second])
    assert sk.hll_count(path) == 50
    at_once = tmp_path / "once.hll"
    sk.ok("hll", "add", at_once, input=join_lines(first + second))
    assert path.read_bytes() == at_once.read_bytes()


def test_add_large_stream_matches_count(sk, tmp_path):
    rng = random.Random(3)
    data = join_lines(b"%x" % rng.getrandbits(40) for _ in range(100000))
    path = tmp_path / "large.hll"
    sk.ok("hll", "add", path, input=data)
    estimate = sk.hll_count(path)
    assert estimate == sk.count(input=data)
    assert_close(estimate, len(set(data.split(b"\n")[:-1])))
    assert sk.info(path)["encoding"] == "dense"


def test_precision_on_creation_and_mismatch(sk, tmp_path):
    path = tmp_path / "p10.hll"
    sk.ok("hll", "add", "-p", "10", path, "a", "b")
    assert sk.info(path)["registers"] == "1024"
    sk.ok("hll", "add", path, "c")                    # no -p: the file's own
    sk.ok("hll", "add", "--precision", "10", path, "d")
    assert sk.info(path)["registers"] == "1024"
    before = path.read_bytes()
    message = sk.fail("hll", "add", "-p", "12", path, "e")
    assert "10" in message and "12" in message
    message = sk.fail("hll", "add", "-p", "14", path, input=b"e\n")
    assert path.read_bytes() == before
    assert sk.hll_count(path) == 4
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("precision", ["3", "19", "x", "", "10x"])
def test_add_bad_precision_creates_nothing(sk, tmp_path, precision):
    path = tmp_path / "bad.hll"
    sk.fail("hll", "add", "-p", precision, path, "a")
    assert not path.exists()
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("precision", [4, 9, 16, 18])
def test_add_at_other_precisions(sk, tmp_path, precision):
    data = join_lines(items(b"q", 3000))
    path = tmp_path / "p.hll"
    sk.ok("hll", "add", "-p", str(precision), path, input=data)
    assert sk.info(path)["registers"] == str(2 ** precision)
    assert sk.hll_count(path) == sk.count("-p", str(precision), input=data)
    assert_close(sk.hll_count(path), 3000, precision)


def test_redis_creation_and_the_file_keeps_its_format(sk, tmp_path):
    path = tmp_path / "r.hll"
    sk.ok("hll", "add", "--redis", path, "a", "b")
    assert path.read_bytes()[:4] == b"HYLL"
    assert sk.info(path)["format"] == "redis"
    assert sk.info(path)["registers"] == "16384"
    # later adds, from arguments and from standard input, without --redis
    sk.ok("hll", "add", path, "c")
    assert path.read_bytes()[:4] == b"HYLL"
    sk.ok("hll", "add", path, input=join_lines(items(b"r", 30)))
    assert path.read_bytes()[:4] == b"HYLL"
    assert sk.hll_count(path) == 33
    assert sk.info(path)["encoding"] == "sparse"
    # still Redis once it has grown dense
    sk.ok("hll", "add", path, input=join_lines(items(b"R", 30000)))
    data = path.read_bytes()
    assert data[:4] == b"HYLL"
    assert len(data) == DENSE_SIZE_P14
    info = sk.info(path)
    assert info["format"] == "redis" and info["encoding"] == "dense"
    assert info["size"] == "%d bytes" % DENSE_SIZE_P14
    # -r is --redis, and --redis on an existing Redis file is fine
    short = tmp_path / "short.hll"
    sk.ok("hll", "add", "-r", short, "x")
    sk.ok("hll", "add", "--redis", short, "y")
    sk.ok("hll", "add", "-p", "14", short, "z")
    assert short.read_bytes()[:4] == b"HYLL"
    assert sk.hll_count(short) == 3
    no_temporary_files(tmp_path)


def test_redis_and_native_files_count_the_same(sk, tmp_path):
    for n in (5, 2500, 40000):
        data = join_lines(items(b"n%d-" % n, n))
        native, redis = tmp_path / f"n{n}.hll", tmp_path / f"r{n}.hll"
        sk.ok("hll", "add", native, input=data)
        sk.ok("hll", "add", "--redis", redis, input=data)
        assert sk.hll_count(redis) == sk.hll_count(native) == sk.count(input=data)
        assert sk.hll_count(redis, native) == sk.hll_count(native)


def test_redis_needs_precision_14(sk, tmp_path):
    path = tmp_path / "r12.hll"
    sk.fail("hll", "add", "--redis", "-p", "12", path, "a")
    assert not path.exists()
    sk.fail("hll", "add", "--redis", "-p", "16", path, "a")
    assert not path.exists()
    sk.ok("hll", "add", "--redis", "-p", "14", path, "a")
    assert path.read_bytes()[:4] == b"HYLL"
    before = path.read_bytes()
    sk.fail("hll", "add", "-p", "12", path, "b")
    assert path.read_bytes() == before


def test_redis_option_on_a_native_file_is_refused(sk, tmp_path):
    path = tmp_path / "native.hll"
    sk.ok("hll", "add", path, "a")
    before = path.read_bytes()
    sk.fail("hll", "add", "--redis", path, "b")
    assert path.read_bytes() == before
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("args", [
    [], ["-p"], ["-p", "12"], ["--bogus", "f"], ["-v", "f"], ["-o", "x", "f"],
])
def test_add_usage_errors(sk, tmp_path, args):
    sk.fail("hll", "add", *args, cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []


# ---- count ---------------------------------------------------------------------------


def test_count_of_several_files_is_the_union(sk, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    sk.ok("hll", "add", a, *[i.decode() for i in items(b"k", 20)])
    sk.ok("hll", "add", b, *[i.decode() for i in items(b"k", 20, start=15)])
    sk.ok("hll", "add", "--redis", c, *[i.decode() for i in items(b"z", 7)])
    assert sk.hll_count(a) == 20
    assert sk.hll_count(a, b) == 35
    assert sk.hll_count(a, b, c) == 42
    assert sk.hll_count(c, a, b, a) == 42


def test_count_verbose(sk, tmp_path):
    path = tmp_path / "v.hll"
    sk.ok("hll", "add", path, input=join_lines(items(b"v", 10000)))
    result = sk.ok("hll", "count", "-v", path)
    assert BARE_INT.match(result.stdout)
    info = parse_verbose(result.stderr.decode())
    assert info["estimate"] == result.stdout.decode().strip()
    assert info["precision"] == "14"
    assert {"standard error", "1 sd (68.27%)", "2 sd (95.45%)", "3 sd (99.73%)"} <= set(info)
    assert sk.hll_count("--verbose", path, verbose=True) == int(result.stdout)
    assert sk.hll_count(path, "-v", verbose=True) == int(result.stdout)


@pytest.mark.parametrize("args", [[], ["-v"], ["-p", "12"], ["--bogus"], ["-o", "x"]])
def test_count_usage_errors(sk, tmp_path, args):
    path = tmp_path / "ok.hll"
    sk.ok("hll", "add", path, "a")
    sk.fail("hll", "count", *args, *([path] if args and args != ["-v"] else []))


def test_count_missing_file(sk, tmp_path):
    good = tmp_path / "good.hll"
    sk.ok("hll", "add", good, "a")
    missing = tmp_path / "missing.hll"
    assert str(missing) in sk.fail("hll", "count", missing)
    sk.fail("hll", "count", good, missing)


# ---- merge ---------------------------------------------------------------------------


def test_merge_of_several_files_counts_the_union(sk, tmp_path):
    sets = [items(b"m", 25), items(b"m", 25, start=10), items(b"w", 12) + items(b"m", 3)]
    paths = []
    for k, s in enumerate(sets):
        paths.append(tmp_path / f"in{k}.hll")
        sk.ok("hll", "add", paths[-1], input=join_lines(s))
    union = len(set().union(*map(set, sets)))
    assert union == 47
    out = tmp_path / "out.hll"
    sk.ok("hll", "merge", "-o", out, *paths)
    assert out.read_bytes()[:4] == b"SKHL"
    assert sk.hll_count(out) == union
    assert sk.hll_count(*paths) == union
    # the same as a sketch of all the items at once
    once = tmp_path / "once.hll"
    sk.ok("hll", "add", once, input=join_lines(sum(sets, [])))
    assert out.read_bytes() == once.read_bytes()
    no_temporary_files(tmp_path)


def test_merge_equals_count_of_the_concatenation(sk, tmp_path):
    rng = random.Random(8)
    parts = [[b"c%d" % rng.randrange(60000) for _ in range(25000)] for _ in range(3)]
    paths, texts = [], []
    for k, part in enumerate(parts):
        texts.append(tmp_path / f"part{k}.txt")
        texts[-1].write_bytes(join_lines(part))
        paths.append(tmp_path / f"part{k}.hll")
        sk.count("-o", paths[-1], texts[-1])
    whole = tmp_path / "whole.txt"
    whole.write_bytes(b"".join(t.read_bytes() for t in texts))
    expected = sk.count(whole)
    assert_close(expected, len(set().union(*map(set, parts))))
    out = tmp_path / "merged.hll"
    sk.ok("hll", "merge", "--output", out, *paths)
    assert sk.hll_count(out) == expected
    assert sk.hll_count(*paths) == expected
    assert sk.count(*texts) == expected
    saved = tmp_path / "whole.hll"
    sk.count("-o", saved, whole)
    assert out.read_bytes() == saved.read_bytes()


def test_merge_into_one_of_its_inputs(sk, tmp_path):
    a, b = tmp_path / "a.hll", tmp_path / "b.hll"
    sk.ok("hll", "add", a, "1", "2", "3")
    sk.ok("hll", "add", b, "3", "4")
    sk.ok("hll", "merge", "-o", a, a, b)
    assert sk.hll_count(a) == 4
    no_temporary_files(tmp_path)


def test_merge_redis_output(sk, tmp_path):
    a, b = tmp_path / "a.hll", tmp_path / "b.hll"
    sk.ok("hll", "add", a, input=join_lines(items(b"a", 30)))
    sk.ok("hll", "add", "--redis", b, input=join_lines(items(b"a", 30, start=25)))
    native, redis = tmp_path / "n.out", tmp_path / "r.out"
    sk.ok("hll", "merge", "-o", native, a, b)
    sk.ok("hll", "merge", "--redis", "-o", redis, a, b)
    assert native.read_bytes()[:4] == b"SKHL"
    assert redis.read_bytes()[:4] == b"HYLL"
    assert sk.hll_count(native) == sk.hll_count(redis) == 55
    short = tmp_path / "short.out"
    sk.ok("hll", "merge", "-r", "-o", short, b, a)
    assert short.read_bytes() == redis.read_bytes()


@pytest.mark.parametrize("n", [40, 30000])
def test_merge_of_different_precisions_folds_to_the_smallest(sk, tmp_path, n):
    rng = random.Random(n)
    all_items = items(b"f", n)
    rng.shuffle(all_items)
    thirds = [all_items[k::3] for k in range(3)]
    sketches = []
    for precision, part in zip((16, 12, 14), thirds):
        sketches.append(tmp_path / f"p{precision}.hll")
        sk.ok("hll", "add", "-p", str(precision), sketches[-1], input=join_lines(part))
    out = tmp_path / "folded.hll"
    sk.ok("hll", "merge", "-o", out, *sketches)
    info = sk.info(out)
    assert info["registers"] == "4096"
    assert info["precision"] == "12"
    # folding is exact: the very sketch the items would have built at p = 12
    direct = tmp_path / "direct.hll"
    expected = sk.count("-p", "12", "-o", direct, input=join_lines(all_items))
    assert sk.hll_count(out) == expected
    assert sk.hll_count(*sketches) == expected
    assert out.read_bytes() == direct.read_bytes()
    assert_close(expected, n, 12)
    # two precisions above 12: the union is at the smaller one, 14
    both = tmp_path / "both.hll"
    sk.ok("hll", "merge", "-o", both, sketches[0], sketches[2])
    assert sk.info(both)["registers"] == "16384"
    assert sk.hll_count(both) == sk.count("-p", "14", input=join_lines(thirds[0] + thirds[2]))


def test_merge_redis_below_precision_14_fails(sk, tmp_path):
    low = tmp_path / "low.hll"
    sk.ok("hll", "add", "-p", "12", low, "a")
    out = tmp_path / "out.hll"
    assert "14" in sk.fail("hll", "merge", "--redis", "-o", out, low)
    assert not out.exists()
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("args", [
    [], ["-o"], ["-o", "OUT"], ["IN"], ["-p", "12", "-o", "OUT", "IN"], ["-v", "-o", "OUT", "IN"],
    ["--bogus", "-o", "OUT", "IN"],
])
def test_merge_usage_errors(sk, tmp_path, args):
    good = tmp_path / "IN"
    sk.ok("hll", "add", good, "a")
    sk.fail("hll", "merge", *args, cwd=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["IN"]


def test_merge_with_a_missing_input_writes_nothing(sk, tmp_path):
    good, out = tmp_path / "good.hll", tmp_path / "out.hll"
    sk.ok("hll", "add", good, "a")
    sk.fail("hll", "merge", "-o", out, good, tmp_path / "missing.hll")
    assert not out.exists()
    # and an existing OUT is left as it was
    sk.ok("hll", "add", out, "keep", "me")
    before = out.read_bytes()
    sk.fail("hll", "merge", "-o", out, good, tmp_path / "missing.hll")
    assert out.read_bytes() == before


# ---- info ----------------------------------------------------------------------------


INFO_FIELDS = ["format", "registers", "encoding", "size", "estimate", "precision",
               "standard error", "1 sd (68.27%)", "2 sd (95.45%)", "3 sd (99.73%)"]


def test_info_fields_of_a_small_sketch(sk, tmp_path):
    path = tmp_path / "small.hll"
    sk.ok("hll", "add", path, "a", "b", "c", "d", "e")
    result = sk.ok("hll", "info", path)
    lines = result.stdout.decode().splitlines()
    assert [line.split(": ")[0] for line in lines] == INFO_FIELDS
    info = sk.info(path)
    assert info["format"] == "sketch 1"
    assert info["registers"] == "16384"
    assert info["encoding"] == "sparse"
    size = path.stat().st_size
    assert info["size"] == f"{size} bytes"
    assert size == 16 + 4 * 5          # header and one 4-byte entry per register
    assert info["estimate"] == "5"
    assert info["precision"] == "14"
    for k in (1, 2, 3):
        low, high = info[INFO_FIELDS[6 + k]].split(" .. ")
        assert float(low) <= 5 <= float(high)


def test_info_of_an_empty_sketch(sk, tmp_path):
    path = tmp_path / "empty.hll"
    sk.ok("hll", "add", path, input=b"")
    info = sk.info(path)
    assert info["estimate"] == "0"
    assert info["encoding"] == "sparse"
    assert info["size"] == f"{path.stat().st_size} bytes" == "16 bytes"


@pytest.mark.parametrize("precision", [4, 8, 12, 14])
def test_info_of_a_dense_sketch(sk, tmp_path, precision):
    path = tmp_path / "dense.hll"
    estimate = sk.count("-p", str(precision), "-o", path,
                        input=join_lines(items(b"D", 50000)))
    info = sk.info(path)
    assert info["encoding"] == "dense"
    assert info["registers"] == str(2 ** precision)
    assert info["precision"] == str(precision)
    assert info["estimate"] == str(estimate)
    assert path.stat().st_size == native_dense_size(precision)
    assert info["size"] == f"{native_dense_size(precision)} bytes"
    assert float(info["standard error"].rstrip("%")) == pytest.approx(
        100 * 1.0389618 / 2 ** (precision / 2), abs=0.002)


def test_info_of_redis_files(sk, tmp_path):
    small, large = tmp_path / "small.hll", tmp_path / "large.hll"
    sk.ok("hll", "add", "--redis", small, "a", "b", "c")
    sk.ok("hll", "add", "--redis", large, input=join_lines(items(b"L", 50000)))
    for path, encoding in ((small, "sparse"), (large, "dense")):
        info = sk.info(path)
        assert info["format"] == "redis"
        assert info["registers"] == "16384"
        assert info["encoding"] == encoding
        assert info["size"] == f"{path.stat().st_size} bytes"
        assert info["estimate"] == str(sk.hll_count(path))
    assert large.stat().st_size == DENSE_SIZE_P14
    assert sk.info(small)["estimate"] == "3"


@pytest.mark.parametrize("n", [10, 1000, 2600, 2900, 20000])
def test_info_size_is_the_file_size(sk, tmp_path, n):
    path = tmp_path / "s.hll"
    sk.ok("hll", "add", path, input=join_lines(items(b"S", n)))
    assert sk.info(path)["size"] == f"{path.stat().st_size} bytes"


def test_info_encoding_matches_the_file(sk, tmp_path):
    # The native writer keeps a sparse body while it is smaller than the dense
    # one (fewer than 3072 registers set at p = 14), but the sketch in memory
    # turns dense at 2048. `info` must describe the sketch in FILE: a file
    # whose header says sparse and whose size is below the dense
    # size must not be reported as dense.
    path = tmp_path / "mid.hll"
    sk.ok("hll", "add", path, input=join_lines(items(b"M", 2600)))
    data = path.read_bytes()
    assert data[FORMAT["SK_HLL_OFF_ENCODING"]] == FORMAT["SK_HLL_NATIVE_SPARSE"]
    assert len(data) < DENSE_SIZE_P14                        # sparse on disk
    assert sk.info(path)["encoding"] == "sparse"


@pytest.mark.parametrize("args", [[], ["A", "A"], ["-v", "A"], ["-o", "x", "A"]])
def test_info_usage_errors(sk, tmp_path, args):
    sk.ok("hll", "add", tmp_path / "A", "a")
    sk.fail("hll", "info", *args, cwd=tmp_path)


# ---- export --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 1500, 40000])
def test_export_writes_a_redis_string_with_the_same_count(sk, tmp_path, n):
    path = tmp_path / "n.hll"
    sk.ok("hll", "add", path, input=join_lines(items(b"e", n)))
    result = sk.ok("hll", "export", path)
    assert result.stderr == b""
    assert result.stdout[:4] == b"HYLL"
    exported = tmp_path / "exported.redis"
    exported.write_bytes(result.stdout)
    assert sk.hll_count(exported) == sk.hll_count(path)
    assert sk.info(exported)["format"] == "redis"
    # -o writes the same bytes
    out = tmp_path / "out.redis"
    sk.ok("hll", "export", "-o", out, path)
    assert out.read_bytes() == result.stdout
    sk.ok("hll", "export", "--output", out, path)
    assert out.read_bytes() == result.stdout
    # and they are what `hll add --redis` makes of the same items
    direct = tmp_path / "direct.redis"
    sk.ok("hll", "add", "--redis", direct, input=join_lines(items(b"e", n)))
    assert direct.read_bytes() == result.stdout
    # exporting a Redis file gives it back
    assert sk.ok("hll", "export", direct).stdout == result.stdout
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("precision", [15, 16, 18])
@pytest.mark.parametrize("n", [50, 30000])
def test_export_folds_higher_precisions_to_14(sk, tmp_path, precision, n):
    data = join_lines(items(b"h", n))
    path = tmp_path / "high.hll"
    sk.count("-p", str(precision), "-o", path, input=data)
    exported = tmp_path / "high.redis"
    sk.ok("hll", "export", "-o", exported, path)
    assert exported.read_bytes()[:4] == b"HYLL"
    assert sk.info(exported)["registers"] == "16384"
    assert sk.hll_count(exported) == sk.count("-p", "14", input=data)


@pytest.mark.parametrize("precision", [4, 12, 13])
def test_export_refuses_precisions_below_14(sk, tmp_path, precision):
    path = tmp_path / "low.hll"
    sk.ok("hll", "add", "-p", str(precision), path, "a", "b")
    message = sk.fail("hll", "export", path)
    assert "14" in message
    out = tmp_path / "low.redis"
    sk.fail("hll", "export", "-o", out, path)
    assert not out.exists()
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("args", [[], ["A", "A"], ["-v", "A"], ["-p", "14", "A"], ["-o"]])
def test_export_usage_errors(sk, tmp_path, args):
    sk.ok("hll", "add", tmp_path / "A", "a")
    sk.fail("hll", "export", *args, cwd=tmp_path)


# ---- output errors ---------------------------------------------------------------------


@pytest.mark.parametrize("subcommand", ["count", "info", "export"])
def test_write_error_on_standard_output_is_reported(sk, tmp_path, subcommand):
    # `sketch count > /dev/full` exits 2 with a message; the hll subcommands
    # that print must not report success when their output was lost.
    path = tmp_path / "a.hll"
    sk.ok("hll", "add", path, "a")
    with open("/dev/full", "wb") as full:
        result = sk.run("hll", subcommand, path, stdout=full)
    assert result.returncode == 2, (subcommand, result.returncode, result.stderr)
    assert_one_error_line(result.stderr)
