# SPDX-License-Identifier: BSD-3-Clause
"""Damaged, foreign and missing filter files: every `sketch bloom` subcommand
refuses them with exit status 2 and a one-line message, writes nothing, and
a failed `bloom add` leaves the file as it was with no temporary file
behind."""
import os
import random
import struct
import subprocess

import pytest

from bloom_cli_helpers import (
    HEADER_SIZE, LAYER_ENTRY_SIZE, NOT_A_FILTER, create, flip, info, items, layer_table)
from sketch_cli_helpers import join_lines, no_temporary_files


@pytest.fixture(scope="module")
def valid(sk, tmp_path_factory):
    """The bytes of valid files to damage: a fixed-size filter, a scalable one
    of three layers, and a HyperLogLog sketch."""
    d = tmp_path_factory.mktemp("valid")
    fixed, scalable, hll = d / "fixed", d / "scalable", d / "hll"
    create(sk, fixed, 1000, 0.01)
    sk.ok("bloom", "add", fixed, input=join_lines(items(b"v", 500)))
    create(sk, scalable, 100, 0.01, "-s")
    sk.ok("bloom", "add", scalable, input=join_lines(items(b"s", 500)))
    assert len(layer_table(scalable.read_bytes())) == 3
    sk.ok("hll", "add", hll, input=join_lines(items(b"h", 100)))
    return {"fixed": fixed.read_bytes(), "scalable": scalable.read_bytes(),
            "hll": hll.read_bytes()}


def set_u32(data, offset, value):
    data = bytearray(data)
    struct.pack_into("<I", data, offset, value)
    return bytes(data)


def table_end(data):
    return HEADER_SIZE + LAYER_ENTRY_SIZE * struct.unpack_from("<I", data, 8)[0]


# name -> (function of the valid files giving the damaged bytes, a word the
# message must contain besides "not a valid Bloom filter", or None)
CORRUPTIONS = {
    "hll_sketch": (lambda v: v["hll"], None),
    "random": (lambda v: bytes(random.Random(1).getrandbits(8) for _ in range(5000)), None),
    "random_page_sized": (lambda v: bytes(random.Random(2).getrandbits(8)
                                          for _ in range(8192)), None),
    "text": (lambda v: b"alice\nbob\n", None),
    "empty": (lambda v: b"", None),
    "one_byte": (lambda v: b"S", "truncated"),
    "partial_magic": (lambda v: b"SKB", "truncated"),
    "magic_only": (lambda v: b"SKBF", "truncated"),
    "header_cut": (lambda v: v["fixed"][:HEADER_SIZE - 1], "truncated"),
    "header_only": (lambda v: v["fixed"][:HEADER_SIZE], "truncated"),
    "table_cut": (lambda v: v["fixed"][:HEADER_SIZE + 20], "truncated"),
    "no_bit_array": (lambda v: v["fixed"][:table_end(v["fixed"])], "truncated"),
    "array_cut": (lambda v: v["fixed"][:-1], "truncated"),
    "array_half": (lambda v: v["fixed"][:len(v["fixed"]) - 600], "truncated"),
    "extra_byte": (lambda v: v["fixed"] + b"\0", None),
    "extra_page": (lambda v: v["fixed"] + bytes(4096), None),
    "scalable_last_layer_cut": (lambda v: v["scalable"][:-8], "truncated"),
    "scalable_one_layer_missing": (
        lambda v: v["scalable"][:layer_table(v["scalable"])[2]["offset"]], "truncated"),
    # 0x80: a version no file has, whichever layout auto gave the filter
    # (flipping 0x02 turns split's 3 into 1, which is refused as corrupt)
    "version": (lambda v: flip(v["fixed"], 4, 0x80), "version"),
    "magic": (lambda v: flip(v["fixed"], 0, 0x20), None),
    "layout_byte": (lambda v: flip(v["fixed"], 5, 0x02), None),
    "hash_byte": (lambda v: flip(v["fixed"], 6, 0x04), None),
    "header_checksum": (lambda v: flip(v["fixed"], 33), "checksum"),
    "fp_rate": (lambda v: flip(v["fixed"], 17), "checksum"),
    "layer_bits": (lambda v: flip(v["fixed"], HEADER_SIZE + 1), "checksum"),
    "layer_items": (lambda v: flip(v["fixed"], HEADER_SIZE + 24), "checksum"),
    "layer_offset": (lambda v: flip(v["fixed"], HEADER_SIZE + 33), "checksum"),
    "zero_layers": (lambda v: set_u32(v["fixed"], 8, 0), None),
    "many_layers": (lambda v: set_u32(v["fixed"], 8, 65), None),
    "layers_without_expansion": (lambda v: set_u32(v["scalable"], 12, 0), None),
    "huge_layer_count_in_small_file": (lambda v: set_u32(v["fixed"][:200], 8, 64), None),
}

# The subcommands, with {F} for the damaged file and {G} a valid filter of
# the same shape; `stdin` marks those that read lines.
COMMANDS = {
    "add": ["add", "{F}", "x"],
    "add_stdin": ["add", "{F}"],
    "add_verbose": ["add", "-v", "{F}"],
    "check": ["check", "{F}", "x"],
    "check_stdin": ["check", "{F}"],
    "check_count": ["check", "-c", "{F}"],
    "info": ["info", "{F}"],
    "info_verify": ["info", "--verify", "{F}"],
    "merge_first": ["merge", "-o", "{O}", "{F}", "{G}"],
    "merge_second": ["merge", "-o", "{O}", "{G}", "{F}"],
    "merge_into": ["merge", "-o", "{F}", "{G}", "{F}"],
    "merge_intersect": ["merge", "-i", "-o", "{O}", "{G}", "{F}"],
}


def run_on(sk, tmp_path, valid, command, damaged_path):
    good = tmp_path / "good.bloom"
    good.write_bytes(valid["fixed"])
    out = tmp_path / "out.bloom"
    args = [a.format(F=damaged_path, G=good, O=out) for a in COMMANDS[command]]
    msg = sk.fail("bloom", *args, input=b"y\nz\n")
    assert not out.exists()
    assert good.read_bytes() == valid["fixed"]
    no_temporary_files(tmp_path)
    return msg


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_damaged_files_are_refused(sk, tmp_path, valid, corruption, command):
    make, word = CORRUPTIONS[corruption]
    damaged = make(valid)
    path = tmp_path / "damaged.bloom"
    path.write_bytes(damaged)
    msg = run_on(sk, tmp_path, valid, command, path)
    assert str(path) in msg
    assert NOT_A_FILTER in msg
    if word:
        assert word in msg
    assert path.read_bytes() == damaged


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_file(sk, tmp_path, valid, command):
    path = tmp_path / "missing.bloom"
    msg = run_on(sk, tmp_path, valid, command, path)
    assert f"{path}: No such file or directory" in msg
    if command != "merge_into":
        assert not path.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_directory(sk, tmp_path, valid, command):
    path = tmp_path / "dir.bloom"
    path.mkdir()
    msg = run_on(sk, tmp_path, valid, command, path)
    assert f"{path}: Is a directory" in msg
    assert path.is_dir() and os.listdir(path) == []


@pytest.mark.parametrize("command", ["check", "info", "info_verify", "merge_first"])
def test_unreadable_special_files(sk, tmp_path, valid, command):
    # a character device and a pipe are not filters either
    for special in ("/dev/null", "/dev/zero"):
        msg = run_on(sk, tmp_path, valid, command, special)
        assert special in msg


def test_a_bit_array_checksum_mismatch_is_found_by_verify_only(sk, tmp_path, valid):
    data = valid["scalable"]
    table = layer_table(data)
    for layer in table:
        bad = tmp_path / "bad.bloom"
        damaged = flip(data, layer["offset"] + 7, 0x80)
        bad.write_bytes(damaged)
        msg = sk.fail("bloom", "info", "--verify", bad)
        assert "checksum" in msg and NOT_A_FILTER in msg
        assert info(sk, bad)["layers"] == "3"
        sk.ok("bloom", "check", bad, "s1")
        assert bad.read_bytes() == damaged


def test_failed_add_leaves_the_file_alone(sk, tmp_path, valid):
    path = tmp_path / "f.bloom"
    path.write_bytes(valid["fixed"])
    # standard input that cannot be read: a directory
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        msg = sk.fail("bloom", "add", path, stdin=fd)
    finally:
        os.close(fd)
    assert "directory" in msg
    assert path.read_bytes() == valid["fixed"]
    no_temporary_files(tmp_path)
    # bad options after a valid file
    sk.fail("bloom", "add", "-j", "0", path)
    assert path.read_bytes() == valid["fixed"]
    no_temporary_files(tmp_path)


def test_a_failed_create_does_not_damage_a_directory(sk, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    msg = sk.fail("bloom", "create", "-f", "-n", "10", "-p", "0.1", d)
    assert str(d) in msg
    assert d.is_dir() and os.listdir(d) == []
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("args", [["info", "{F}"], ["add", "{F}", "x"]], ids=" ".join)
def test_a_fifo_is_refused_without_waiting_for_a_writer(sk, tmp_path, args):
    # A filter is a mapped regular file; a named pipe with no writer should
    # be refused at once, not block the command in open().
    fifo = tmp_path / "pipe.bloom"
    os.mkfifo(fifo)
    try:
        msg = sk.fail("bloom", *[a.format(F=fifo) for a in args], timeout=3)
    except subprocess.TimeoutExpired:
        pytest.fail(f"sketch bloom {args[0]} on a FIFO without a writer still runs "
                    "after 3 s (blocked opening it)")
    assert str(fifo) in msg
