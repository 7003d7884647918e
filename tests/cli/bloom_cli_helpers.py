# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the tests of `sketch bloom` (test_bloom_*.py), on top of
sketch_cli_helpers.py.

The file format is the table of src/common/format.h, whose offsets format_h.py
reads: a header, then one entry per layer (bits, hashes, capacity, items,
offset of the bit array, 0), then the bit arrays, each at a page-aligned
offset, then one XXH3-64 sum per chunk of the arrays and one change mark
bit per chunk.
"""
import ctypes
import ctypes.util
import math
import mmap
import os
import re
import struct

from format_h import FORMAT
from sketch_cli_helpers import join_lines, parse_info

HEADER_SIZE = FORMAT["SK_BF_HEADER_SIZE"]
LAYER_ENTRY_SIZE = FORMAT["SK_BF_LAYER_SIZE"]
ARRAY_ALIGN = FORMAT["SK_BF_FILE_ALIGN"]
MAGIC = FORMAT["SK_BF_MAGIC"]
FILE_VERSION = FORMAT["SK_BF_VERSION_FILE"]
SPLIT_VERSION = FORMAT["SK_BF_VERSION_SPLIT"]
# The layout byte of each layout's name.
LAYOUT_BYTES = {"blocked": FORMAT["SK_BF_LAYOUT_BLOCKED"], "classic": FORMAT["SK_BF_LAYOUT_CLASSIC"],
                "split": FORMAT["SK_BF_LAYOUT_SPLIT"]}
CHUNK = 1 << FORMAT["SK_BF_CHUNK_SHIFT"]
assert FORMAT["SK_BF_LAYER_OFF_CHECKSUM"] + 8 == LAYER_ENTRY_SIZE  # the struct layouts below

NOT_A_FILTER = "not a valid Bloom filter"

CREATE_FIELDS = ["layout", "bits", "hashes", "bit arrays"]
INFO_FIELDS = ["layout", "bits", "hashes", "bit arrays", "capacity", "requested fp rate",
               "items", "estimated items", "expected fp rate now",
               "expected fp rate at capacity", "bits per item at capacity", "layers"]

# "1280 bytes (1.2 KiB)", or "8 bytes" below 1 KiB (print_size in cmd_bloom.c)
SIZE_TEXT = re.compile(r"\A(\d+) bytes(?: \((\d+\.\d) (KiB|MiB|GiB|TiB)\))?\Z")


def items(prefix, n, start=0):
    return [b"%s%d" % (prefix, i) for i in range(start, start + n)]


def parse_size(text):
    """The byte count of a 'bit arrays:' value, checking its form."""
    m = SIZE_TEXT.match(text)
    assert m, f"not a size: {text!r}"
    n = int(m.group(1))
    if n < 1024:
        assert m.group(2) is None, text
    else:
        assert m.group(2) is not None, text
        units = ["KiB", "MiB", "GiB", "TiB"]
        shown = n / 1024 ** (units.index(m.group(3)) + 1)
        assert 1 <= shown < 1024 or m.group(3) == "TiB", text
        assert abs(float(m.group(2)) - shown) <= 0.051, text
    return n


def create(sk, path, n, p, *options):
    """`sketch bloom create -n N -p P OPTIONS PATH`: asserts success and the
    four lines it prints; returns them as a dict (bits, hashes, size as int)."""
    result = sk.ok("bloom", "create", "-n", str(n), "-p", str(p), *options, path)
    assert result.stderr == b""
    fields = parse_info(result.stdout.decode())
    assert list(fields) == CREATE_FIELDS, result.stdout
    assert fields["layout"] in LAYOUT_BYTES
    fields["bits"] = int(fields["bits"])
    fields["hashes"] = int(fields["hashes"])
    fields["size"] = parse_size(fields.pop("bit arrays"))
    return fields


def info(sk, path, *options):
    """`sketch bloom info OPTIONS PATH` as a dict of its 'name: value' lines,
    checking the order of the fields that every filter has."""
    result = sk.ok("bloom", "info", *options, path)
    assert result.stderr == b""
    fields = parse_info(result.stdout.decode())
    names = list(fields)
    assert names[:len(INFO_FIELDS)] == INFO_FIELDS, names
    rest = names[len(INFO_FIELDS):]
    assert rest in ([], ["expansion"], ["checksums"], ["expansion", "checksums"]), names
    return fields


def check(sk, path, *items, opts=(), input=None, **kwargs):
    """`sketch bloom check OPTS PATH ITEMS`: returns (exit status, printed
    lines), or with -c (exit status, the count). Asserts that the status (0
    when something matched, else 1) agrees with the output."""
    result = sk.run("bloom", "check", *opts, path, *items, input=input, **kwargs)
    assert result.returncode in (0, 1), (result.returncode, result.stderr)
    assert result.stderr == b""
    out = result.stdout
    if any(o in ("-c", "--count", "-vc", "-cv") for o in opts):
        assert re.fullmatch(rb"(0|[1-9][0-9]*)\n", out), out
        assert result.returncode == (0 if int(out) > 0 else 1)
        return result.returncode, int(out)
    assert out == b"" or out.endswith(b"\n"), out[-50:]
    lines = out.split(b"\n")[:-1] if out else []
    assert result.returncode == (0 if lines else 1), (result.returncode, out[:100])
    return result.returncode, lines


def count_maybe(sk, path, lines, invert=False):
    """How many of `lines` check reports as maybe present (or, with invert,
    definitely absent)."""
    opts = ("-v", "-c") if invert else ("-c",)
    return check(sk, path, opts=opts, input=join_lines(lines))[1]


def new_items(stderr):
    """The count of `add -v`: exactly one line 'new items: N'."""
    m = re.fullmatch(rb"new items: (0|[1-9][0-9]*)\n", stderr)
    assert m, f"not a 'new items' report: {stderr!r}"
    return int(m.group(1))


def layer_table(data):
    """The layers of a filter file, from its header and table."""
    assert data[:4] == MAGIC
    nlayers = struct.unpack_from("<I", data, 8)[0]
    layers = []
    for i in range(nlayers):
        e = HEADER_SIZE + LAYER_ENTRY_SIZE * i
        bits, hashes, zero, capacity, count, offset, checksum = struct.unpack_from(
            "<QIIQQQQ", data, e)
        layers.append(dict(bits=bits, hashes=hashes, zero=zero, capacity=capacity,
                           items=count, offset=offset, checksum=checksum))
    return layers


def header(data):
    magic, version, layout, hash_id, zero, nlayers, expansion, fp_rate = struct.unpack_from(
        "<4sBBBBIId", data, 0)
    return dict(magic=magic, version=version, layout=layout, hash=hash_id, zero=zero,
                layers=nlayers, expansion=expansion, fp_rate=fp_rate)


def array_bytes(layer):
    return (layer["bits"] + 63) // 64 * 8


def bit_arrays(data):
    """Everything from the first layer's bit array to the end of the last."""
    table = layer_table(data)
    return data[table[0]["offset"]:table[-1]["offset"] + array_bytes(table[-1])]


def chunk_count(data):
    return sum(-(-array_bytes(t) // CHUNK) for t in layer_table(data))


def file_size(data):
    """Where a filter file whose header and table are `data`'s ends: after
    its last array, the chunk sums and the change marks."""
    table = layer_table(data)
    chunks = chunk_count(data)
    return table[-1]["offset"] + array_bytes(table[-1]) + 8 * chunks + -(-chunks // 64) * 8


def marked_chunks(data):
    """The chunks (numbered over all layers) a file marks as changing."""
    chunks = chunk_count(data)
    marks = data[file_size(data) - -(-chunks // 64) * 8:file_size(data)]
    return [c for c in range(chunks) if marks[c // 8] >> (c % 8) & 1]


def change_marks(data):
    return len(marked_chunks(data))


def fp_bound(p, n, sigmas=4):
    """The most false positives among n absent items that a filter of rate p
    may show: n (p + sigmas sqrt(p (1 - p) / n)), from the binomial law."""
    return n * (p + sigmas * math.sqrt(p * (1 - p) / n))


def flip(data, offset, mask=0x01):
    data = bytearray(data)
    data[offset] ^= mask
    return bytes(data)


# ---- page-cache residency, to see how much of a file a command read ----------------

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def drop_from_page_cache(path):
    """Writes the file's pages back and asks the kernel to drop them."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident_pages(path):
    """(pages of the file in the page cache, pages of the file), by mincore."""
    size = os.path.getsize(path)
    page = mmap.PAGESIZE
    npages = (size + page - 1) // page
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            vec = (ctypes.c_ubyte * npages)()
            if _libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
            return sum(b & 1 for b in vec), npages
        finally:
            _libc.munmap(addr, size)
    finally:
        os.close(fd)
