# SPDX-License-Identifier: BSD-3-Clause
"""The parallel reader of `sketch count` on a file of about 100 MB, which it
cuts into 32 MB ranges (cli/lines.c, RANGE_SIZE): threads must neither drop
nor double-count the lines that straddle a range boundary.

The file is built once per module so that it has
  * lines of varied lengths (so boundaries fall in the middle of lines),
  * a '\\n' exactly on the last byte of the first and of the third range (a
    boundary that falls exactly at the start of a line),
  * a single line longer than a whole range, which starts at the beginning of
    the second range and ends inside the third (a range that owns no line
    start at all),
  * a last line without a final newline.
The true number of lines and of distinct lines is known by construction.
`count -v` prints the number of lines it read, which must be exact.
"""
import os
import random
import subprocess

import pytest

from sketch_cli_helpers import BARE_INT, assert_close, parse_verbose

MiB = 1 << 20
RANGE = 32 * MiB
TARGET_SIZE = 100 * MiB
IDS = 400000


class BigFile:
    def __init__(self, path, lines, distinct, without_field2):
        self.path = path
        self.lines = lines
        self.distinct = distinct
        self.without_field2 = without_field2


def filler(i):
    # 0 to 250 bytes, a different length for most neighbouring ids
    return b"x" * ((i * 7919) % 251)


def random_lines(rng, start, limit, seen, out):
    """Appends random lines "<id>:<filler>\\n" while they fit below `limit`
    bytes; returns the new size and the number of lines added."""
    size, added = start, 0
    chunk = []
    while True:
        i = rng.randrange(IDS)
        line = b"%d:%s\n" % (i, filler(i))
        if size + len(line) > limit:
            break
        chunk.append(line)
        size += len(line)
        added += 1
        seen.add(i)
        if len(chunk) == 20000:
            out.write(b"".join(chunk))
            chunk = []
    out.write(b"".join(chunk))
    return size, added


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("parallel") / "big.txt"
    rng = random.Random(1234)
    seen = set()
    lines = 0
    with open(path, "wb") as out:
        size, added = random_lines(rng, 0, RANGE - 1000, seen, out)
        lines += added
        # a line whose '\n' is the last byte of the first range
        pad = RANGE - size
        out.write(b"pad:" + b"p" * (pad - 5) + b"\n")
        size += pad
        lines += 1
        assert size == RANGE
        # a line that covers the whole second range and ends in the third
        huge_len = RANGE + 123457
        out.write(b"huge:" + b"h" * (huge_len - 6) + b"\n")
        size += huge_len
        lines += 1
        # and again a '\n' on the last byte of the third range, followed this
        # time by ordinary lines
        size, added = random_lines(rng, size, 3 * RANGE - 1000, seen, out)
        lines += added
        pad = 3 * RANGE - size
        out.write(b"pad2:" + b"q" * (pad - 6) + b"\n")
        size += pad
        lines += 1
        assert size == 3 * RANGE
        size, added = random_lines(rng, size, TARGET_SIZE - 100, seen, out)
        lines += added
        # the last line, without '\n' and without a second field
        out.write(b"last-line-without-newline")
        size += 25
        lines += 1
    assert os.path.getsize(path) == size
    assert size > 3 * RANGE          # four ranges
    distinct = len(seen) + 4         # the random ids, pad, huge, pad2, last
    yield BigFile(path, lines, distinct, without_field2=1)
    path.unlink()                    # pytest keeps old tmp dirs: free 100 MB


def verbose_count(sk, *args, **kwargs):
    result = sk.ok("count", "-v", *args, **kwargs)
    assert BARE_INT.match(result.stdout), result.stdout
    info = parse_verbose(result.stderr.decode())
    assert int(info["estimate"]) == int(result.stdout)
    return int(result.stdout), info


def test_one_and_two_threads_read_every_line_once(sk, big):
    one, info1 = verbose_count(sk, "-j", "1", big.path)
    two, info2 = verbose_count(sk, "-j", "2", big.path)
    assert int(info1["lines"]) == big.lines
    assert int(info2["lines"]) == big.lines
    assert one == two
    assert_close(one, big.distinct)


@pytest.mark.parametrize("threads", ["3", "4", "16"])
def test_more_threads_than_cores_or_ranges(sk, big, threads):
    reference = sk.count("-j", "1", big.path)
    estimate, info = verbose_count(sk, "-j", threads, big.path)
    assert int(info["lines"]) == big.lines
    assert estimate == reference


def test_default_threads(sk, big):
    estimate, info = verbose_count(sk, big.path)
    assert int(info["lines"]) == big.lines
    assert estimate == sk.count("-j", "1", big.path)


def test_sketches_of_one_and_two_threads_are_identical(sk, big, tmp_path):
    one, two = tmp_path / "one.hll", tmp_path / "two.hll"
    estimate = sk.count("-j", "1", "-o", one, big.path)
    assert sk.count("-j", "2", "-o", two, big.path) == estimate
    assert one.read_bytes() == two.read_bytes()
    assert sk.hll_count(one) == estimate
    assert sk.info(one)["encoding"] == "dense"


def test_parallel_count_equals_sequential_hll_add(sk, big, tmp_path):
    # `hll add` reads standard input with one thread: through a pipe it is a
    # single sequential stream, with no ranges at all.
    added = tmp_path / "added.hll"
    with subprocess.Popen(["cat", str(big.path)], stdout=subprocess.PIPE) as cat:
        sk.ok("hll", "add", added, stdin=cat.stdout)
        cat.stdout.close()
    assert cat.returncode == 0
    counted = tmp_path / "counted.hll"
    estimate = sk.count("-j", "2", "-o", counted, big.path)
    assert sk.hll_count(added) == estimate
    assert added.read_bytes() == counted.read_bytes()


def test_pipe_and_redirected_stdin_agree_with_the_file(sk, big):
    reference = sk.count("-j", "2", big.path)
    with open(big.path, "rb") as f:                 # stdin is a regular file
        estimate, info = verbose_count(sk, "-j", "2", stdin=f)
    assert int(info["lines"]) == big.lines
    assert estimate == reference
    with subprocess.Popen(["cat", str(big.path)], stdout=subprocess.PIPE) as cat:
        estimate, info = verbose_count(sk, "-j", "2", stdin=cat.stdout)
        cat.stdout.close()
    assert int(info["lines"]) == big.lines
    assert estimate == reference


def test_field_mode_in_parallel(sk, big):
    one, info1 = verbose_count(sk, "-j", "1", "-d", ":", "-f", "2", big.path)
    two, info2 = verbose_count(sk, "-j", "2", "-d", ":", "-f", "2", big.path)
    assert one == two
    for info in (info1, info2):
        assert int(info["lines"]) == big.lines
        assert int(info["lines without field 2"]) == big.without_field2
    first, info = verbose_count(sk, "-j", "2", "-d", ":", "-f", "1", big.path)
    assert int(info["lines without field 1"]) == 0
    # field 1 is the id (or pad, huge, pad2, the last line): one per distinct line
    assert_close(first, big.distinct)
    assert first == sk.count("-j", "1", "-d", ":", "-f", "1", big.path)


def test_several_parts_merge_to_the_whole(sk, big, tmp_path):
    # Cut the file into three parts at line boundaries: counting the parts
    # together, merging their sketches, and counting the whole file must all
    # give the same registers, hence the same number.
    data = big.path.read_bytes()
    cuts = [0]
    for fraction in (0.3, 0.55):
        cuts.append(data.index(b"\n", int(len(data) * fraction)) + 1)
    cuts.append(len(data))
    parts, sketches = [], []
    for k in range(3):
        part = tmp_path / f"part{k}.txt"
        part.write_bytes(data[cuts[k]:cuts[k + 1]])
        parts.append(part)
        sketches.append(tmp_path / f"part{k}.hll")
        sk.count("-j", "2", "-o", sketches[-1], part)
    del data
    whole = sk.count("-j", "2", big.path)
    try:
        assert sk.count("-j", "2", *parts) == whole
        assert sk.count("-j", "1", *reversed(parts)) == whole
    finally:
        for part in parts:
            part.unlink()
    assert sk.hll_count(*sketches) == whole
    merged = tmp_path / "merged.hll"
    sk.ok("hll", "merge", "-o", merged, *sketches)
    assert sk.hll_count(merged) == whole


def test_standard_input_twice_is_read_once(sk, big):
    # `sketch count - -` with a pipe: the second '-' finds the stream at its
    # end (as with `cat - -`), so the result is that of the file. Two threads
    # must not read the same pipe at once and cut its lines apart.
    reference = sk.count("-j", "1", big.path)
    with subprocess.Popen(["cat", str(big.path)], stdout=subprocess.PIPE) as cat:
        estimate, info = verbose_count(sk, "-j", "2", "-", "-", stdin=cat.stdout)
        cat.stdout.close()
    assert int(info["lines"]) == big.lines
    assert estimate == reference
