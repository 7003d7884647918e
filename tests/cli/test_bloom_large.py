# SPDX-License-Identifier: BSD-3-Clause
"""`sketch bloom` on inputs large enough to be read by several threads, and on
a filter of about 118 MiB, of which a check should read only a few pages."""
import os
import resource

import pytest

from bloom_cli_helpers import (
    bit_arrays, check, count_maybe, create, drop_from_page_cache, fp_bound, info, items,
    layer_table, new_items, resident_pages)
from sketch_cli_helpers import no_temporary_files

# lines.c cuts regular files into ranges of 32 MiB, one thread per range
RANGE_SIZE = 32 << 20
LINE = 32            # bytes per line, newline included


def lines_file(path, shift):
    """A file of 32-byte lines a little over 40 MiB long, preceded by `shift`
    bytes of one line: with shift 0 a line ends exactly at each range
    boundary, otherwise one line straddles it. Returns the lines."""
    count = (RANGE_SIZE + (8 << 20)) // LINE
    lines = [b"L%030d" % i for i in range(count)]
    head = [b"h" * (shift - 1)] if shift else []
    data = b"".join(line + b"\n" for line in head + lines)
    path.write_bytes(data)
    if shift == 0:
        assert data[RANGE_SIZE - 1:RANGE_SIZE + 1] == b"\nL"
    else:
        assert b"\n" not in data[RANGE_SIZE - 2:RANGE_SIZE + 2]
    return head + lines


@pytest.mark.parametrize("shift", [0, 17])
def test_one_and_two_threads_give_the_same_bits(sk, tmp_path, shift):
    src = tmp_path / "lines"
    lines = lines_file(src, shift)
    files = {}
    for threads in ("1", "2"):
        path = tmp_path / f"j{threads}.bloom"
        create(sk, path, len(lines), 0.01)
        with open(src, "rb") as f:
            r = sk.ok("bloom", "add", "-v", "-j", threads, path, stdin=f)
        n_new = new_items(r.stderr)
        # items counts those adds that changed a bit, which depends on order
        assert 0.99 * len(lines) <= n_new <= len(lines)
        files[threads] = path.read_bytes()
    one, two = files["1"], files["2"]
    # the bits are the OR of the items' bits, whatever the order
    assert layer_table(one)[0]["offset"] == layer_table(two)[0]["offset"]
    assert bit_arrays(one) == bit_arrays(two)
    # every line, including the ones at the range boundary, is in
    with open(src, "rb") as f:
        assert check(sk, tmp_path / "j2.bloom", opts=("-v", "-c"), stdin=f) == (1, 0)
    # the checksum written matches the bits
    assert info(sk, tmp_path / "j2.bloom", "--verify")["checksums"] == "ok"
    no_temporary_files(tmp_path)


def test_default_threads_on_a_scalable_filter(sk, tmp_path):
    # scalable filters are grown by one thread, whatever -j says
    src = tmp_path / "lines"
    lines_file(src, 0)
    path = tmp_path / "s.bloom"
    create(sk, path, 100000, 0.01, "-s")
    with open(src, "rb") as f:
        r = sk.ok("bloom", "add", "-v", "-j", "2", path, stdin=f)
    n_new = new_items(r.stderr)
    fields = info(sk, path)
    assert int(fields["items"]) == n_new
    assert int(fields["layers"]) > 1
    with open(src, "rb") as f:
        assert check(sk, path, opts=("-v", "-c"), stdin=f) == (1, 0)
    absent = items(b"absent", 100000)
    assert count_maybe(sk, path, absent) <= fp_bound(0.01, len(absent))


def read_ahead_kb(path):
    """The read-ahead window of the block device holding path, or '?'."""
    try:
        dev = os.stat(path).st_dev
        with open(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/queue/read_ahead_kb") as f:
            return f.read().strip()
    except OSError:
        try:
            with open(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/../queue/"
                      "read_ahead_kb") as f:
                return f.read().strip()
        except OSError:
            return "?"


@pytest.fixture(scope="module")
def big_filter(sk, tmp_path_factory):
    """A filter for 10^8 items at 1% (about 118 MiB) holding three items;
    deleted after the tests of this module."""
    path = tmp_path_factory.mktemp("big") / "big.bloom"
    shape = create(sk, path, 100000000, 0.01)
    try:
        assert os.path.getsize(path) > 100 << 20
        assert shape["size"] > 100 << 20
        sk.ok("bloom", "add", path, "alpha", "beta", "gamma")
        yield path
    finally:
        path.unlink()


def child_faults(run):
    """Minor plus major page faults of the child processes that run() starts."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_minflt - before.ru_minflt) + (after.ru_majflt - before.ru_majflt)


def test_checking_a_118_mib_filter_faults_few_pages(sk, big_filter, tmp_path):
    # Page faults of the check process beyond those of the same check against
    # a tiny filter (the binary's own start-up: about a hundred, thousands
    # under AddressSanitizer): far fewer than the pages of the file.
    pages = os.path.getsize(big_filter) // 4096
    small = tmp_path / "small.bloom"
    create(sk, small, 100, 0.01)
    sk.ok("bloom", "add", small, "alpha", "beta", "gamma")
    items = ("alpha", "beta", "gamma", "delta")
    baseline = child_faults(lambda: check(sk, small, *items))
    drop_from_page_cache(big_filter)
    result = []
    faults = child_faults(lambda: result.append(check(sk, big_filter, *items)))
    assert result == [(0, [b"alpha", b"beta", b"gamma"])]
    assert faults - baseline < 3000 < pages, (
        f"{faults} page faults for a check of 4 items, {baseline} against a tiny filter")


def test_adding_to_a_118_mib_filter_faults_few_pages(sk, big_filter, tmp_path):
    # An add in place reads and writes the 64 KiB chunks its items fall in,
    # the chunk sums (8 bytes a chunk) and the marks, not the whole file;
    # page faults beyond those of the same add to a tiny filter stay far
    # below the pages of the file.
    pages = os.path.getsize(big_filter) // 4096
    small = tmp_path / "small.bloom"
    create(sk, small, 100, 0.01)
    baseline = child_faults(lambda: sk.ok("bloom", "add", small, "one", "two", "three"))
    drop_from_page_cache(big_filter)
    faults = child_faults(lambda: sk.ok("bloom", "add", big_filter, "one", "two", "three"))
    assert faults - baseline < 3000 < pages, (
        f"{faults} page faults for an add of 3 items, {baseline} to a tiny filter")
    assert check(sk, big_filter, "alpha", "one", "two", "three") == (
        0, [b"alpha", b"one", b"two", b"three"])
    sk.ok("bloom", "info", "--verify", big_filter)


def test_checking_a_118_mib_filter_reads_few_pages(sk, big_filter):
    # Faults undercount what is read (a fault maps a large folio, or reads a
    # whole read-ahead window), so look at what the check brought into the
    # page cache instead.
    drop_from_page_cache(big_filter)
    resident, npages = resident_pages(big_filter)
    if resident > npages // 10:
        pytest.skip("the page cache of this file system cannot be dropped "
                    f"({resident} of {npages} pages stay)")
    assert check(sk, big_filter, "gamma", "alpha", "beta") == (
        0, [b"gamma", b"alpha", b"beta"])
    after_check, _ = resident_pages(big_filter)
    # (A fault on a file mapping reads the read-ahead window around it unless
    # the mapping is advised MADV_RANDOM: with read_ahead_kb at 8192, each
    # item costs 8 MiB.)
    assert after_check - resident < npages // 10, (
        f"a check of 3 items brought {after_check - resident} of {npages} pages "
        "of the filter into memory (read_ahead_kb of the device: "
        f"{read_ahead_kb(big_filter)})")
    # the measure works: info --verify reads the whole file
    sk.ok("bloom", "info", "--verify", big_filter)
    assert resident_pages(big_filter)[0] > npages // 2
