#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""python_bench.py: the Python package's bulk calls against what a Python
user would do instead and against the library itself, in one run.

Usage: python3 bench/python_bench.py [BUILD_DIR]     (default: build)

BUILD_DIR (a Release build) must hold src/libsketch.so and cli/sketch; the
package is built into BUILD_DIR/python-site by tests/python/build.sh if it
is not there. Rows, on N distinct items "user-<i>" (1,000,000; env N):
  - HyperLogLog.update of a list of str, against len(set(list)), the exact
    answer Python users reach for;
  - HyperLogLog.update of a numpy str array, against the library's own
    sk_hll_add_batch over the same UTF-8 items in batches of 1024 (called
    through ctypes on arrays built before the clock starts);
  - BloomFilter(N, 1%) update and contains_many of a list and of a numpy
    array, against sk_bloom_add_batch and sk_bloom_contains_batch likewise;
  - the command on the same items written to a file (page cache): sketch
    count, sketch bloom create + add, sketch bloom check.
ROUNDS rounds (env, default 7) run every row in turn; the table shows each
row's median and its ratio to the row it is compared with.
"""
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
SITE = os.path.join(BUILD, "python-site")
N = int(os.environ.get("N", "1000000"))
ROUNDS = int(os.environ.get("ROUNDS", "7"))

if not os.path.isdir(SITE):
    subprocess.run([os.path.join(ROOT, "tests", "python", "build.sh"), ROOT, BUILD], check=True,
                   env=dict(os.environ, SKETCH_PYTHON=sys.executable))
sys.path.insert(0, SITE)
import numpy as np  # noqa: E402

import sketch  # noqa: E402

lib = ctypes.CDLL(os.path.join(BUILD, "src", "libsketch.so"))
SKETCH = os.path.join(BUILD, "cli", "sketch")


class BloomOptions(ctypes.Structure):
    # sk_bloom_options (include/sketch/bloom.h), in its order.
    _fields_ = [("capacity", ctypes.c_uint64), ("fp_rate", ctypes.c_double),
                ("layout", ctypes.c_int), ("expansion", ctypes.c_uint),
                ("bits", ctypes.c_uint64), ("hashes", ctypes.c_uint),
                ("max_memory", ctypes.c_uint64), ("allocator", ctypes.c_void_p),
                ("refuse_when_full", ctypes.c_int), ("concurrent_writers", ctypes.c_int)]


def c_batches(items):
    """The items as the library's batched calls take them, in batches of 1024."""
    encoded = [s.encode() for s in items]
    out = []
    for start in range(0, len(encoded), 1024):
        part = encoded[start:start + 1024]
        ptrs = (ctypes.c_char_p * len(part))(*part)
        lens = (ctypes.c_size_t * len(part))(*map(len, part))
        out.append((ptrs, lens, len(part)))
    return encoded, out


def library_hll(batches):
    h = ctypes.c_void_p()
    lib.sk_hll_new(ctypes.byref(h), 14)
    start = time.perf_counter()
    for ptrs, lens, n in batches:
        lib.sk_hll_add_batch(h, ptrs, lens, ctypes.c_size_t(n))
    elapsed = time.perf_counter() - start
    lib.sk_hll_free(h)
    return elapsed


def library_bloom(batches, query):
    f = ctypes.c_void_p()
    opts = BloomOptions(capacity=N, fp_rate=0.01)
    lib.sk_bloom_create(ctypes.byref(f), ctypes.byref(opts))
    out = (ctypes.c_uint8 * 1024)()
    add_start = time.perf_counter()
    for ptrs, lens, n in batches:
        lib.sk_bloom_add_batch(f, ptrs, lens, ctypes.c_size_t(n), out)
    added = time.perf_counter() - add_start
    query_start = time.perf_counter()
    for ptrs, lens, n in query:
        lib.sk_bloom_contains_batch(f, ptrs, lens, ctypes.c_size_t(n), out)
    queried = time.perf_counter() - query_start
    lib.sk_bloom_free(f)
    return added, queried


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    words = ["user-%d" % i for i in range(N)]
    probes = ["user-%d" % i for i in range(N // 2, N + N // 2)]  # half present
    array, probe_array = np.array(words), np.array(probes)
    _, batches = c_batches(words)
    _, probe_batches = c_batches(probes)
    tmp = tempfile.mkdtemp(prefix="python-bench-")
    lines = os.path.join(tmp, "items.txt")
    with open(lines, "w") as f:
        f.write("\n".join(words) + "\n")
    probe_lines = os.path.join(tmp, "probes.txt")
    with open(probe_lines, "w") as f:
        f.write("\n".join(probes) + "\n")
    bloom_file = os.path.join(tmp, "items.bloom")

    def hll_list():
        sketch.HyperLogLog().update(words)

    def hll_array():
        sketch.HyperLogLog().update(array)

    def bloom(source, query):
        f = sketch.BloomFilter(N, 0.01)
        t0 = time.perf_counter()
        f.update(source)
        t1 = time.perf_counter()
        f.contains_many(query)
        return t1 - t0, time.perf_counter() - t1

    def command(*args, stdin=None):
        with open(stdin) if stdin else open(os.devnull) as f:
            subprocess.run([SKETCH, *args], stdin=f, stdout=subprocess.DEVNULL, check=True)

    def bloom_command():
        if os.path.exists(bloom_file):
            os.unlink(bloom_file)
        t0 = time.perf_counter()
        command("bloom", "create", "-n", str(N), "-p", "0.01", bloom_file)
        command("bloom", "add", bloom_file, stdin=lines)
        return time.perf_counter() - t0

    rows = {}

    def record(name, seconds):
        rows.setdefault(name, []).append(seconds)

    for _ in range(ROUNDS):
        record("len(set(list))", timed(lambda: len(set(words))))
        record("HyperLogLog.update(list)", timed(hll_list))
        record("HyperLogLog.update(numpy)", timed(hll_array))
        record("library sk_hll_add_batch", library_hll(batches))
        record("sketch count FILE", timed(lambda: command("count", lines)))
        for label, source, query in (("list", words, probes), ("numpy", array, probe_array)):
            added, queried = bloom(source, query)
            record("BloomFilter.update(%s)" % label, added)
            record("BloomFilter.contains_many(%s)" % label, queried)
        added, queried = library_bloom(batches, probe_batches)
        record("library sk_bloom_add_batch", added)
        record("library sk_bloom_contains_batch", queried)
        record("sketch bloom create + add FILE", bloom_command())
        record("sketch bloom check FILE", timed(
            lambda: subprocess.run([SKETCH, "bloom", "check", bloom_file], stdin=open(probe_lines),
                                   stdout=subprocess.DEVNULL)))

    compare = {
        "HyperLogLog.update(list)": "len(set(list))",
        "HyperLogLog.update(numpy)": "library sk_hll_add_batch",
        "sketch count FILE": "HyperLogLog.update(list)",
        "BloomFilter.update(list)": "library sk_bloom_add_batch",
        "BloomFilter.update(numpy)": "library sk_bloom_add_batch",
        "BloomFilter.contains_many(list)": "library sk_bloom_contains_batch",
        "BloomFilter.contains_many(numpy)": "library sk_bloom_contains_batch",
        "sketch bloom create + add FILE": "BloomFilter.update(list)",
        "sketch bloom check FILE": "BloomFilter.contains_many(list)",
    }
    print("python_bench: N=%d items, %d rounds, medians; Python %s, numpy %s"
          % (N, ROUNDS, sys.version.split()[0], np.__version__))
    print("| row | ms | ns/item | vs | ratio |")
    print("|---|--:|--:|---|--:|")
    for name, samples in rows.items():
        ms = statistics.median(samples) * 1e3
        base = compare.get(name)
        ratio = "%.2f" % (ms / (statistics.median(rows[base]) * 1e3)) if base else ""
        print("| %s | %.1f | %.1f | %s | %s |" % (name, ms, ms * 1e6 / N, base or "", ratio))


if __name__ == "__main__":
    main()
