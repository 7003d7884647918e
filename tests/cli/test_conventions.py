# SPDX-License-Identifier: BSD-3-Clause
"""Conventions people rely on: --version everywhere, one message style
naming the subcommand, hints where a likely cause is known, and no
progress bar over what a person types."""
import os
import pty
import re
import select
import subprocess

import pytest

SUBCOMMANDS = [["count"], ["hll", "add"], ["hll", "count"], ["hll", "merge"],
               ["hll", "info"], ["hll", "export"], ["bloom", "create"], ["bloom", "add"],
               ["bloom", "check"], ["bloom", "info"], ["bloom", "merge"]]


@pytest.mark.parametrize("words", [[]] + [["hll"], ["bloom"]] + SUBCOMMANDS, ids=" ".join)
def test_version_everywhere(sk, words):
    out = sk.ok(*words, "--version")
    assert re.fullmatch(rb"sketch \d+\.\d+\.\d+\n", out.stdout), out.stdout


@pytest.mark.parametrize("words", SUBCOMMANDS, ids=" ".join)
def test_help_has_an_example_for_every_subcommand(sk, words):
    out = sk.ok(*words, "--help").stdout.decode()
    assert out.startswith("Usage: sketch " + " ".join(words))
    example = out[out.index("Example"):]
    assert ("  sketch " + " ".join(words)) in example or ("| sketch " + " ".join(words)) in example


def test_messages_name_the_subcommand(sk, tmp_path):
    missing = tmp_path / "missing"
    assert sk.fail("hll", "count", missing).startswith("sketch hll count: %s: " % missing)
    assert sk.fail("bloom", "check", missing, "x").startswith("sketch bloom check: ")
    assert sk.fail("count", missing).startswith("sketch count: ")
    assert sk.fail("nosuch").startswith("sketch: unknown command")


def test_hints(sk, tmp_path):
    """A Redis string saved by `redis-cli --raw GET` ends with a newline; a
    compressed sketch is not a sketch; a filter too large for memory says
    how large it is."""
    h = tmp_path / "h.hll"
    sk.ok("hll", "add", h, "a", "b")
    redis = sk.ok("hll", "export", "-o", "-", h).stdout
    with_newline = tmp_path / "saved.hyll"
    with_newline.write_bytes(redis + b"\n")
    msg = sk.fail("hll", "count", with_newline)
    assert "ends with a newline" in msg and "head -c -1" in msg
    gz = tmp_path / "h.hll.gz"
    gz.write_bytes(subprocess.run(["gzip", "-c", str(h)], stdout=subprocess.PIPE,
                                  check=True).stdout)
    assert "gzip-compressed" in sk.fail("hll", "count", gz)
    big = tmp_path / "big.bloom"
    with open("/proc/sys/vm/overcommit_memory") as f:
        overcommit = f.read().strip()
    if overcommit != "1":
        # 16 TB of bits: more than the kernel's overcommit heuristic lets one
        # mapping have, with no limit set (which a sanitizer's own address
        # space reservations would not survive); blocked, so that the size does
        # not follow the automatic layout's rule
        msg = sk.fail("bloom", "create", "-n", "9000000000000", "-p", "0.001", "-l", "blocked",
                      big)
        assert "takes 17488690888576 bytes (16287.6 GiB)" in msg, msg
    else:
        import resource
        msg = sk.fail("bloom", "create", "-n", "10000000000", "-p", "0.001", "-l", "blocked", big,
                      preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                            (2 << 30, 2 << 30)))
        assert "takes 19431878848 bytes (18.1 GiB)" in msg, msg
    assert "more memory than could be had" in msg
    assert not big.exists()


def run_on_terminal(args, stdin_terminal, data=None):
    """Runs with standard error on a pseudo-terminal (and standard input on
    one too, or from data); returns what appeared on the terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdin=slave if stdin_terminal else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    if stdin_terminal:
        os.write(master, b"typed\n\x04")
    else:
        proc.stdin.write(data)
        proc.stdin.close()
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(master)
    return proc, seen


def test_no_progress_over_typed_input(sk, tmp_path):
    """Standard error on a terminal draws a progress bar for a stream, but
    not when the stream is the terminal a person types on."""
    proc, seen = run_on_terminal([sk.binary, "count"], stdin_terminal=False,
                                 data=b"x\n" * 3000000)
    assert proc.returncode == 0
    assert b"MiB read" in seen
    proc, seen = run_on_terminal([sk.binary, "count"], stdin_terminal=True)
    assert proc.returncode == 0
    assert b"MiB" not in seen and b"\r[" not in seen


def test_json_says_what_the_text_says(sk, tmp_path):
    """--json of count, hll count, hll info, bloom info and bloom check -c:
    one JSON object with the same numbers as the text."""
    import json
    data = b"".join(b"item-%d\n" % (i % 700) for i in range(5000))
    out = json.loads(sk.ok("count", "--json", "-w", "-f", "1", input=data).stdout)
    assert out["count"] == sk.count(input=data) and out["lines"] == 5000
    assert out["lines_without_field"] == 0 and out["precision"] == 14
    assert len(out["bounds"]) == 3 and out["bounds"][0][0] <= out["estimate"] <= out["bounds"][0][1]
    h = tmp_path / "h.hll"
    sk.ok("hll", "add", h, input=data)
    text = sk.info(h)
    info = json.loads(sk.ok("hll", "info", "--json", h).stdout)
    assert info["encoding"] == text["encoding"] and str(info["estimate"]) == text["estimate"]
    assert str(info["size_bytes"]) + " bytes" == text["size"]
    assert json.loads(sk.ok("hll", "count", "--json", h).stdout)["count"] == sk.hll_count(h)
    f = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.01", f)
    sk.ok("bloom", "add", f, input=data)
    lines = dict(l.split(": ", 1) for l in sk.ok("bloom", "info", f).stdout.decode().splitlines())
    binfo = json.loads(sk.ok("bloom", "info", "--json", f).stdout)
    assert str(binfo["bits"]) == lines["bits"] and str(binfo["items"]) == lines["items"]
    assert lines["bit arrays"].startswith(str(binfo["bit_arrays_bytes"]) + " bytes")
    checked = json.loads(sk.ok("bloom", "check", "-c", "--json", f, input=data).stdout)
    assert checked == {"matched": 5000, "checked": 5000}
    assert "--json goes with -c" in sk.fail("bloom", "check", "--json", f, "x")


def test_counts_in_powers_of_ten(sk, tmp_path):
    """-n 1e9 as people write large counts; anything else that is not a
    whole number is refused with the range."""
    f = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "2e5", "-p", "0.01", f)
    assert "capacity: 200000" in sk.ok("bloom", "info", f).stdout.decode()
    for bad in ("1e30", "1e", "1.5e6", "e5", "0e99999999999999", "1e-3"):
        msg = sk.fail("bloom", "create", "-f", "-n", bad, "-p", "0.01", f)
        assert "capacity must be a whole number" in msg, (bad, msg)
    assert sk.count("-j", "2e0", input=b"a\n") == 1
