# SPDX-License-Identifier: BSD-3-Clause
"""Damaged sketch files: every `sketch hll` subcommand refuses them with exit
status 2 and a one-line message, and a failed `hll add` leaves the file as it
was (and no temporary file behind)."""
import random

import pytest

from format_h import FORMAT
from sketch_cli_helpers import DENSE_SIZE_P14, join_lines, no_temporary_files


def flip(data, offset, mask=0x01):
    data = bytearray(data)
    data[offset] ^= mask
    return bytes(data)


@pytest.fixture(scope="module")
def valid(sk, tmp_path_factory):
    """Valid sketches to damage: native sparse and dense, Redis sparse and
    dense, each as bytes."""
    d = tmp_path_factory.mktemp("valid")
    few = join_lines(b"item%d" % i for i in range(20))
    many = join_lines(b"item%d" % i for i in range(50000))
    out = {}
    for name, args, data in (("native_sparse", [], few), ("native_dense", [], many),
                             ("redis_sparse", ["--redis"], few),
                             ("redis_dense", ["--redis"], many)):
        path = d / name
        sk.ok("hll", "add", *args, path, input=data)
        out[name] = path.read_bytes()
    native, redis = FORMAT["SK_HLL_OFF_ENCODING"], FORMAT["SK_REDIS_HLL_OFF_ENCODING"]
    assert out["native_sparse"][native] == FORMAT["SK_HLL_NATIVE_SPARSE"]
    assert out["native_dense"][native] == FORMAT["SK_HLL_NATIVE_DENSE"]
    assert out["redis_sparse"][redis] == FORMAT["SK_REDIS_HLL_SPARSE"]
    assert out["redis_dense"][redis] == FORMAT["SK_REDIS_HLL_DENSE"]
    assert len(out["native_dense"]) == len(out["redis_dense"]) == DENSE_SIZE_P14
    return out


def redis_sparse_body(valid, body):
    return valid["redis_sparse"][:16] + body


# name -> (function of the valid sketches giving the damaged bytes, a word the
# message must contain, or None)
CORRUPTIONS = {
    "empty": (lambda v: b"", None),
    "garbage": (lambda v: bytes(random.Random(1).getrandbits(8) for _ in range(2000)), None),
    "text": (lambda v: b"hello world\n", None),
    "magic_only": (lambda v: b"SKHL", "truncated"),
    "partial_magic": (lambda v: b"SK", None),
    "redis_magic_only": (lambda v: b"HYLL", "truncated"),
    "native_header_cut": (lambda v: v["native_sparse"][:10], "truncated"),
    "native_sparse_cut": (lambda v: v["native_sparse"][:-1], "truncated"),
    "native_sparse_extra": (lambda v: v["native_sparse"] + b"\0", None),
    "native_dense_cut": (lambda v: v["native_dense"][:-100], "truncated"),
    "native_dense_extra": (lambda v: v["native_dense"] + b"\0\0\0", None),
    "native_body_flip": (lambda v: flip(v["native_dense"], 5000), "checksum"),
    "native_sparse_body_flip": (lambda v: flip(v["native_sparse"], 20, 0x40), "checksum"),
    "native_checksum_flip": (lambda v: flip(v["native_sparse"], 12), "checksum"),
    "native_version": (lambda v: flip(v["native_sparse"], 4, 0x02), "version"),
    "native_precision": (lambda v: flip(v["native_sparse"], 6, 0x40), None),
    "native_hash_id": (lambda v: flip(v["native_sparse"], 7, 0x80), None),
    "native_entries": (lambda v: flip(v["native_sparse"], 8, 0x01), None),
    "redis_dense_cut": (lambda v: v["redis_dense"][:-1], "truncated"),
    "redis_header_cut": (lambda v: v["redis_dense"][:12], "truncated"),
    "redis_bad_encoding": (lambda v: flip(v["redis_sparse"], 4, 0x02), None),
    # a register of 63 in a dense string: no hash can produce it
    "redis_dense_register": (lambda v: v["redis_dense"][:16] + b"\x3f" + v["redis_dense"][17:],
                             "corrupt"),
    # sparse opcodes covering fewer than 16384 registers (one ZERO run of 1)
    "redis_sparse_short": (lambda v: redis_sparse_body(v, b"\x00"), "corrupt"),
    # sparse opcodes covering more than 16384 (XZERO 16384, then one more)
    "redis_sparse_long": (lambda v: redis_sparse_body(v, b"\x7f\xff\x00"), "corrupt"),
    # an XZERO opcode cut after its first byte
    "redis_sparse_cut_opcode": (lambda v: redis_sparse_body(v, b"\x7f\xfe\x40"), "corrupt"),
    # one byte above the 4 MiB that cli/util.c reads at most
    "too_large": (lambda v: b"SKHL" + b"\0" * ((4 << 20) - 3), "too large"),
}


@pytest.fixture(params=sorted(CORRUPTIONS))
def damaged(request, valid, tmp_path):
    make, word = CORRUPTIONS[request.param]
    path = tmp_path / f"{request.param}.hll"
    path.write_bytes(make(valid))
    return path, word


def check_message(message, path, word):
    assert str(path) in message, message
    if word is not None:
        assert word in message, message


@pytest.mark.parametrize("subcommand", [["count"], ["count", "-v"], ["info"], ["export"]])
def test_reading_commands_refuse_damaged_files(sk, damaged, subcommand):
    path, word = damaged
    check_message(sk.fail("hll", *subcommand, path), path, word)


def test_merge_refuses_damaged_inputs(sk, damaged, valid, tmp_path):
    path, word = damaged
    good = tmp_path / "good.hll"
    good.write_bytes(valid["native_sparse"])
    out = tmp_path / "out.hll"
    check_message(sk.fail("hll", "merge", "-o", out, good, path), path, word)
    assert not out.exists()
    check_message(sk.fail("hll", "count", good, path), path, word)
    check_message(sk.fail("hll", "export", "-o", out, path), path, word)
    assert not out.exists()
    no_temporary_files(tmp_path)


def test_failed_add_leaves_the_file_unchanged(sk, damaged):
    path, word = damaged
    before = path.read_bytes()
    if before == b"":
        # An empty file is no sketch yet to writers (cli/file_lock.h): it is
        # what a first writer creates to lock, so an add starts the sketch.
        sk.ok("hll", "add", path, "new", "items")
        assert sk.hll_count(path) == 2
        return
    check_message(sk.fail("hll", "add", path, "new", "items"), path, word)
    assert path.read_bytes() == before
    check_message(sk.fail("hll", "add", path, input=b"more\nitems\n"), path, word)
    assert path.read_bytes() == before
    check_message(sk.fail("hll", "add", "--redis", path, "x"), path, word)
    assert path.read_bytes() == before
    no_temporary_files(path.parent)


def test_directory_instead_of_a_sketch(sk, tmp_path, valid):
    directory = tmp_path / "dir.hll"
    directory.mkdir()
    (directory / "inside").write_bytes(b"keep")
    for args in (["count"], ["info"], ["export"], ["add"], ["add", "--redis"]):
        check_message(sk.fail("hll", *args, directory, *(["x"] if "add" in args else [])),
                      directory, None)
    good = tmp_path / "good.hll"
    good.write_bytes(valid["native_sparse"])
    sk.fail("hll", "merge", "-o", tmp_path / "out.hll", good, directory)
    assert directory.is_dir() and [p.name for p in directory.iterdir()] == ["inside"]
    assert not (tmp_path / "out.hll").exists()
    no_temporary_files(tmp_path)


def test_every_single_byte_flip_of_a_native_sketch_is_caught(sk, valid, tmp_path):
    # The native format is checksummed: any one changed byte is refused.
    original = valid["native_sparse"]
    path = tmp_path / "flip.hll"
    for offset in range(len(original)):
        for mask in (0x01, 0x80):
            path.write_bytes(flip(original, offset, mask))
            sk.fail("hll", "count", path)


def test_valid_sketches_still_load(sk, valid, tmp_path):
    # the undamaged originals are fine, so the failures above are the damage's
    for name, data in valid.items():
        path = tmp_path / name
        path.write_bytes(data)
        expected = 20 if "sparse" in name else None
        count = sk.hll_count(path)
        if expected is not None:
            assert count == expected
        else:
            assert abs(count - 50000) <= 4 * 0.0082 * 50000
