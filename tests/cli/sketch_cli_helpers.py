# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the tests of the `sketch` command (imported by conftest.py
and the test modules; named uniquely so that it cannot clash with the helpers
of another suite).

The binary under test is $SKETCH_BIN, or the default build's
/work/main/build/cli/sketch when that is unset. Every test drives the real
command through subprocess, with real files under pytest's tmp_path.

Conventions that the tests rely on (from cli/util.c and cli/main.c):
  * exit status 0 on success, 2 on bad usage or bad input;
  * an error is exactly one line on standard error, beginning with "sketch";
  * `sketch count` and `sketch hll count` print a bare integer.
"""
import math
import os
import re
import subprocess

DEFAULT_BIN = "/work/main/build/cli/sketch"
SKETCH_BIN = os.path.abspath(os.environ.get("SKETCH_BIN") or DEFAULT_BIN)

DEFAULT_PRECISION = 14
# A Redis HyperLogLog string is always precision 14; its dense form and
# sketch's dense form are both a 16-byte header and 16384 6-bit registers.
DENSE_SIZE_P14 = 16 + 16384 * 6 // 8

BARE_INT = re.compile(rb"\A(0|[1-9][0-9]*)\n\Z")


def relative_standard_error(precision):
    """The HyperLogLog relative standard error, 1.04/sqrt(2^p)."""
    return 1.04 / math.sqrt(2 ** precision)


def assert_close(estimate, truth, precision=DEFAULT_PRECISION, sigmas=4):
    """The estimate lies within `sigmas` standard errors of the truth."""
    allowed = sigmas * relative_standard_error(precision) * truth
    assert abs(estimate - truth) <= allowed, (
        f"estimate {estimate} is more than {sigmas} standard errors "
        f"({allowed:.1f}) away from the true count {truth}")


def split_lines(data):
    """The lines of `data` as sketch defines them: every byte up to a '\\n'
    (not included); a last line without '\\n' counts; no line after a final
    '\\n'. Bytes are kept exactly (NUL, '\\r' and all)."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def distinct_lines(data):
    return len(set(split_lines(data)))


def join_lines(items):
    return b"".join(item + b"\n" for item in items)


def parse_info(text):
    """`sketch hll info` prints one 'name: value' per line."""
    fields = {}
    for line in text.splitlines():
        name, sep, value = line.partition(": ")
        assert sep, f"info line without 'name: value': {line!r}"
        assert name not in fields, f"duplicate info field {name!r}"
        fields[name] = value
    return fields


def parse_verbose(stderr_text):
    """The 'name: value' lines of -v (count and hll count) on stderr."""
    return parse_info(stderr_text)


class Sketch:
    """Runs the sketch binary and checks the shape of its results."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, input=None, stdin=None, timeout=120, **kwargs):
        if input is not None and stdin is not None:
            raise ValueError("input and stdin are exclusive")
        if input is None and stdin is None:
            stdin = subprocess.DEVNULL
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        result = subprocess.run([self.binary, *map(os.fsdecode, args)], input=input,
                                stdin=stdin, timeout=timeout, **kwargs)
        assert result.returncode >= 0, (
            f"sketch {' '.join(map(str, args))} was killed by signal "
            f"{-result.returncode}; stderr: {result.stderr!r}")
        return result

    def ok(self, *args, **kwargs):
        """Runs and asserts success; returns the CompletedProcess."""
        result = self.run(*args, **kwargs)
        assert result.returncode == 0, (
            f"sketch {' '.join(map(str, args))} exited {result.returncode}; "
            f"stderr: {result.stderr!r}")
        return result

    def fail(self, *args, stdout_empty=True, **kwargs):
        """Runs and asserts exit status 2 with exactly one line on stderr that
        begins with 'sketch'; returns that line (decoded, without '\\n')."""
        result = self.run(*args, **kwargs)
        assert result.returncode == 2, (
            f"sketch {' '.join(map(str, args))} exited {result.returncode}, "
            f"expected 2; stdout {result.stdout[:200]!r}, stderr {result.stderr!r}")
        assert_one_error_line(result.stderr)
        if stdout_empty:
            assert result.stdout == b"", f"stdout on failure: {result.stdout[:200]!r}"
        return result.stderr.decode("utf-8", "replace").rstrip("\n")

    def count(self, *args, verbose=False, **kwargs):
        """`sketch count ARGS`: asserts a bare integer on stdout (and, without
        -v, nothing on stderr) and returns it."""
        return self._integer("count", *args, verbose=verbose, **kwargs)

    def hll_count(self, *args, verbose=False, **kwargs):
        return self._integer("hll", "count", *args, verbose=verbose, **kwargs)

    def _integer(self, *args, verbose, **kwargs):
        result = self.ok(*args, **kwargs)
        assert BARE_INT.match(result.stdout), f"not a bare integer: {result.stdout!r}"
        if not verbose:
            assert result.stderr == b"", f"unexpected stderr: {result.stderr!r}"
        return int(result.stdout)

    def info(self, path):
        result = self.ok("hll", "info", path)
        assert result.stderr == b""
        return parse_info(result.stdout.decode())


def assert_one_error_line(stderr):
    assert stderr.startswith(b"sketch"), f"error does not begin with 'sketch': {stderr!r}"
    assert stderr.endswith(b"\n"), f"error does not end with a newline: {stderr!r}"
    assert stderr.count(b"\n") == 1, f"error is not exactly one line: {stderr!r}"


def no_temporary_files(directory):
    leftovers = [name for name in os.listdir(directory) if ".tmp." in name]
    assert leftovers == [], f"temporary files left behind: {leftovers}"
