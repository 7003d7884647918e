# SPDX-License-Identifier: BSD-3-Clause
"""Adds in place (SK_BLOOM_IN_PLACE, and `sketch bloom add`, which uses it)
under kill -9: every item whose add had returned is in the file afterwards,
the chunks the add was changing are reported, the next add re-sums them,
and damage anywhere else stays reported.

The items whose add has returned are known exactly from a process that
drives the library itself (through ctypes, as SKETCH_LIB names it) and
prints each item's number once sk_bloom_add has returned."""
import os
import random
import signal
import subprocess
import sys

import pytest

from bloom_cli_helpers import (CHUNK, change_marks, chunk_count, create, layer_table,
                               marked_chunks)
from sketch_cli_helpers import join_lines

LIB = os.environ.get("SKETCH_LIB")

ADDER = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.sk_bloom_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                              ctypes.c_uint, ctypes.c_void_p]
lib.sk_bloom_add.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
f = ctypes.c_void_p()
rc = lib.sk_bloom_open(ctypes.byref(f), sys.argv[2].encode(), int(sys.argv[3]), None)
if rc != 0:
    sys.exit("open: %d" % rc)
i = 0
while True:
    item = b"item-%d" % i
    rc = lib.sk_bloom_add(f, item, len(item))
    if rc < 0:
        sys.exit("add: %d" % rc)
    sys.stdout.write("%d\n" % i)
    sys.stdout.flush()
    i += 1
"""


def in_place_flag():
    with open(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "include",
                           "sketch", "bloom.h")) as f:
        for line in f:
            if line.startswith("#define SK_BLOOM_IN_PLACE "):
                return int(line.split()[2].rstrip("u"))
    raise AssertionError("SK_BLOOM_IN_PLACE not found")


def killed_adder(path, returned):
    """Runs the ctypes adder on path until `returned` adds have returned,
    kills it with SIGKILL, and gives the number of the last item it printed
    (every item up to it had been added)."""
    if not LIB:
        pytest.fail("SKETCH_LIB is not set (ctest sets it)", pytrace=False)
    env = dict(os.environ)
    if os.environ.get("SKETCH_LIB_PRELOAD"):  # a sanitized library (tests/CMakeLists.txt)
        env.update(LD_PRELOAD=os.environ["SKETCH_LIB_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
    p = subprocess.Popen([sys.executable, "-c", ADDER, LIB, str(path), str(in_place_flag())],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    last = -1
    try:
        while last + 1 < returned:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            last = int(line)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        # what it printed before the kill landed counts too
        for line in p.stdout.read().split(b"\n"):
            if line:
                last = int(line)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -signal.SIGKILL
    return last


def added(last):
    return [b"item-%d" % i for i in range(last + 1)]


def present(sk, path, lines):
    out = sk.ok("bloom", "check", "-c", path, input=join_lines(lines)).stdout
    return int(out)


@pytest.fixture
def filter_file(sk, tmp_path):
    """A fixed filter of 2M items at 1% (about 2.4 MiB: 37 chunks)."""
    path = tmp_path / "f.bloom"
    create(sk, path, 2000000, 0.01)
    return path


def test_items_whose_add_returned_survive_kill_9(sk, filter_file):
    last = killed_adder(filter_file, 20000)
    assert present(sk, filter_file, added(last)) == last + 1
    data = filter_file.read_bytes()
    marks = change_marks(data)
    assert marks > 0
    fields = sk.ok("bloom", "info", "--verify", filter_file).stdout.decode()
    assert "chunks of an unfinished add: %d\n" % marks in fields
    assert "checksums: ok\n" in fields
    # the next add re-sums the marked chunks, says so, and leaves none marked
    r = sk.run("bloom", "add", filter_file, "after")
    assert r.returncode == 0, r.stderr
    assert r.stderr == (b"sketch bloom add: %s: an earlier add was interrupted; the %d chunks "
                        b"it was changing are checksummed again\n" % (bytes(filter_file), marks))
    assert change_marks(filter_file.read_bytes()) == 0
    fields = sk.ok("bloom", "info", "--verify", filter_file).stdout.decode()
    assert "unfinished" not in fields and "checksums: ok\n" in fields
    assert present(sk, filter_file, added(last) + [b"after"]) == last + 2


def test_damage_beside_an_interrupted_add_stays_reported(sk, filter_file):
    killed_adder(filter_file, 5)
    data = bytearray(filter_file.read_bytes())
    arrays = layer_table(data)[0]["offset"]
    unmarked = sorted(set(range(chunk_count(data))) - set(marked_chunks(data)))
    assert unmarked, "every chunk is marked: the filter is too small for this test"
    data[arrays + unmarked[0] * CHUNK + 100] ^= 0x10
    filter_file.write_bytes(bytes(data))
    assert "checksum mismatch" in sk.fail("bloom", "info", "--verify", filter_file)
    # and an add in place, which re-sums only the marked chunks, leaves it so
    # (unless it lands in the damaged chunk, which it then refuses)
    r = sk.run("bloom", "add", filter_file, "after")
    assert r.returncode in (0, 2), r.stderr
    assert "checksum mismatch" in sk.fail("bloom", "info", "--verify", filter_file)


def test_kill_9_of_the_command_at_any_moment(sk, filter_file):
    """The command killed at random moments of an add of 300,000 lines, the
    commit included: the file always verifies, earlier adds are always
    there, and one finished add leaves it as good as new."""
    rng = random.Random(14)
    first = [b"first-%d" % i for i in range(50000)]
    sk.ok("bloom", "add", filter_file, input=join_lines(first))
    lines = join_lines(b"more-%d" % i for i in range(300000))
    for trial in range(6):
        p = subprocess.Popen([sk.binary, "bloom", "add", str(filter_file)],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        cut = rng.randrange(len(lines))
        try:
            p.stdin.write(lines[:cut])
            p.stdin.flush()
        except BrokenPipeError:
            pass
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdin.close()
        fields = sk.ok("bloom", "info", "--verify", filter_file).stdout.decode()
        assert "checksums: ok\n" in fields, (trial, fields)
        assert present(sk, filter_file, first) == len(first), trial
    sk.ok("bloom", "add", filter_file, input=lines)
    assert change_marks(filter_file.read_bytes()) == 0
    sk.ok("bloom", "info", "--verify", filter_file)
    assert present(sk, filter_file, first) == len(first)
