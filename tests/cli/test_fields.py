# SPDX-License-Identifier: BSD-3-Clause
"""Fields for Bloom filters as for counts: -f N with -d C or -w (runs of
blanks, as awk splits), in bloom add and bloom check, which prints the whole
line of a field that may be in the filter, as grep prints lines."""
import pytest

LOG = (b"10.0.0.1 - - GET /a 200\n"
       b"10.0.0.2 - - GET /b 404\n"
       b"  10.0.0.3\t-  - GET /c 200\n"
       b"\n"
       b"10.0.0.1 - - GET /d 200\n")


def test_whitespace_fields_like_awk(sk, tmp_path):
    f = tmp_path / "clients.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.0001", f)
    out = sk.ok("bloom", "add", "-v", "-w", "-f", "1", f, input=LOG)
    assert b"new items: 3" in out.stderr and b"lines without field 1: 1" in out.stderr
    seen = b"x 10.0.0.2 y\n10.0.0.9 z\n 10.0.0.3\n"
    out = sk.run("bloom", "check", "-w", "-f", "2", f, input=seen)
    assert out.returncode == 0 and out.stdout == b"x 10.0.0.2 y\n"
    out = sk.run("bloom", "check", "-v", "-w", "-f", "2", f, input=seen)
    assert out.stdout == b"10.0.0.9 z\n 10.0.0.3\n"   # the last line has no field 2
    assert sk.ok("bloom", "check", "-c", "-w", "-f", "1", f, input=LOG).stdout == b"4\n"
    assert sk.count("-w", "-f", "1", input=LOG) == 3


def test_delimiter_fields(sk, tmp_path):
    f = tmp_path / "users.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.0001", f)
    sk.ok("bloom", "add", "-d", ",", "-f", "2", f, input=b"1,alice,x\n2,bob,y\n3\n")
    out = sk.run("bloom", "check", "-d", ",", "-f", "2", f, input=b"9,alice\n8,carol\n")
    assert out.stdout == b"9,alice\n"
    # the fields of the items named on the command line too
    assert sk.run("bloom", "check", "-d", ",", "-f", "2", f, "x,bob").stdout == b"x,bob\n"
    # tab is the default delimiter
    g = tmp_path / "tab.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.0001", g)
    sk.ok("bloom", "add", "-f", "2", g, input=b"1\tk1\n2\tk2\n")
    assert sk.run("bloom", "check", g, "k1", "1").stdout == b"k1\n"


@pytest.mark.parametrize("args,message", [
    (["add", "-f", "0"], "field must be"),
    (["add", "-d", "ab", "-f", "1"], "exactly one byte"),
    (["check", "--field"], "field must be a whole number"),
    (["create", "--field", "3", "-n", "10", "-p", "0.1"], "unknown option '--field'"),
])
def test_field_options_refused(sk, tmp_path, args, message):
    f = tmp_path / "f.bloom"
    if args[0] != "create":
        sk.ok("bloom", "create", "-n", "10", "-p", "0.1", f)
    msg = sk.fail("bloom", *args, f)
    assert message in msg, msg
