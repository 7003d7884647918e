# SPDX-License-Identifier: BSD-3-Clause
"""The command line as a whole (help, version, unknown commands) and the
atomic replacement of sketch files."""
import os
import pathlib
import pty
import re
import shutil
import subprocess
import tempfile
import threading

import pytest

from sketch_cli_helpers import assert_one_error_line, join_lines, no_temporary_files

# ---- help, version, no arguments ------------------------------------------------------

HELP_COMMANDS = [
    ["--help"], ["-h"], ["help"],
    ["count", "--help"], ["count", "-h"],
    ["hll", "--help"], ["hll", "-h"],
    ["hll", "add", "--help"], ["hll", "count", "--help"], ["hll", "merge", "--help"],
    ["hll", "info", "--help"], ["hll", "export", "--help"],
    ["hll", "add", "-h"], ["hll", "count", "-h"], ["hll", "merge", "-h"],
    ["hll", "info", "-h"], ["hll", "export", "-h"],
]


@pytest.mark.parametrize("args", HELP_COMMANDS, ids=" ".join)
def test_help(sk, args):
    result = sk.ok(*args)
    assert result.stderr == b""
    text = result.stdout.decode()
    first = text.splitlines()[0]
    assert first.startswith("Usage: sketch")
    # the usage line names the subcommand it documents
    words = [a for a in args if not a.startswith("-") and a != "help"]
    assert first.startswith("Usage: sketch " + " ".join(words)), first


def test_help_mentions_every_subcommand(sk):
    top = sk.ok("--help").stdout.decode()
    assert "count" in top and "hll" in top
    hll = sk.ok("hll", "--help").stdout.decode()
    for sub in ("add", "count", "merge", "info", "export"):
        assert re.search(rf"^\s+{sub}\b", hll, re.M), sub


def test_count_help_lists_its_options(sk):
    text = sk.ok("count", "--help").stdout.decode()
    for option in ("--precision", "--field", "--delimiter", "--output", "--threads",
                   "--verbose", "--help"):
        assert option in text


def test_version(sk):
    result = sk.ok("--version")
    assert re.fullmatch(rb"sketch \d+\.\d+\.\d+\S*\n", result.stdout), result.stdout
    assert result.stderr == b""


def test_no_arguments_is_a_usage_error(sk):
    result = sk.run()
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"Usage: sketch" in result.stderr


def test_hll_without_a_subcommand_is_a_usage_error(sk):
    result = sk.run("hll")
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"Usage: sketch hll" in result.stderr


@pytest.mark.parametrize("args", [
    ["bogus"], ["Count"], ["--bogus"], ["-x"], [""], ["hll", "bogus"], ["hll", "ADD"],
    ["hll", ""], ["hll", "--bogus"],
])
def test_unknown_commands(sk, args):
    sk.fail(*args)


@pytest.fixture
def terminal():
    """A pseudo-terminal: the slave end to hand to the command, and a function
    that drains what was written to it."""
    try:
        master, slave = pty.openpty()
    except OSError as e:
        pytest.skip(f"no pseudo-terminal: {e}")
    os.set_blocking(master, False)

    def drain():
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except (BlockingIOError, OSError):
                return out
            if not chunk:
                return out
            out += chunk

    yield slave, drain
    os.close(slave)
    os.close(master)


def test_export_refuses_to_write_to_a_terminal(sk, tmp_path, terminal):
    slave, drain = terminal
    path = tmp_path / "t.hll"
    sk.ok("hll", "add", path, "a")
    result = sk.run("hll", "export", path, stdout=slave)
    assert result.returncode == 2
    assert_one_error_line(result.stderr)
    assert b"HYLL" not in drain()
    # -o is fine with a terminal on standard output
    out = tmp_path / "t.redis"
    sk.run("hll", "export", "-o", out, path, stdout=slave).check_returncode()
    assert out.read_bytes()[:4] == b"HYLL"


def test_count_with_a_terminal_on_stderr(sk, terminal):
    # With standard error a terminal, reading a pipe shows a progress bar
    # (cli/util.c) and every reader runs in a thread of its own; the count
    # on standard output must not change.
    slave, drain = terminal
    data = join_lines(b"%d" % i for i in range(300000))
    expected = sk.count(input=data)
    for args in (["count"], ["count", "-v"], ["count", "-j", "2", "-"]):
        result = sk.run(*args, input=data, stderr=slave)
        assert result.returncode == 0
        assert result.stdout == b"%d\n" % expected
    shown = drain()
    assert b"estimate: %d" % expected in shown


# ---- atomic writes ----------------------------------------------------------------------


def test_writes_leave_no_temporary_files(sk, tmp_path):
    a, b = tmp_path / "a.hll", tmp_path / "b.hll"
    sk.ok("hll", "add", a, "x", "y")                           # create
    sk.ok("hll", "add", a, "z")                                # replace
    sk.ok("hll", "add", a, input=join_lines(b"%d" % i for i in range(20000)))
    sk.ok("hll", "add", "--redis", b, "x")
    sk.count("-o", tmp_path / "c.hll", input=b"1\n2\n")
    sk.ok("hll", "merge", "-o", tmp_path / "m.hll", a, b)
    sk.ok("hll", "merge", "-o", a, a, b)                       # onto an input
    sk.ok("hll", "export", "-o", tmp_path / "e.redis", a)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.hll", "b.hll", "c.hll", "e.redis", "m.hll"]
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o027, 0o640)])
def test_new_files_get_the_umask(sk, tmp_path, umask, mode):
    path = tmp_path / "new.hll"
    sk.ok("hll", "add", path, "a", umask=umask)
    assert path.stat().st_mode & 0o7777 == mode


def test_replacing_keeps_the_mode(sk, tmp_path):
    path = tmp_path / "mode.hll"
    sk.ok("hll", "add", path, "a")
    os.chmod(path, 0o604)
    sk.ok("hll", "add", path, "b", umask=0o077)
    assert path.stat().st_mode & 0o7777 == 0o604
    sk.count("-o", path, input=b"c\n")
    assert path.stat().st_mode & 0o7777 == 0o604
    assert sk.hll_count(path) == 1


def write_commands(target, source):
    """Every way of writing a sketch file, to `target`."""
    return [
        ["count", "-o", target, source["text"]],
        ["hll", "add", target, "x"],
        ["hll", "merge", "-o", target, source["sketch"]],
        ["hll", "export", "-o", target, source["sketch"]],
    ]


@pytest.fixture
def source(sk, tmp_path):
    text = tmp_path / "in.txt"
    text.write_bytes(b"a\nb\n")
    sketch = tmp_path / "in.hll"
    sk.ok("hll", "add", sketch, "a", "b")
    return {"text": text, "sketch": sketch}


@pytest.mark.parametrize("which", range(4))
def test_writing_under_a_missing_directory_fails(sk, tmp_path, source, which):
    target = tmp_path / "no" / "such" / "dir" / "out.hll"
    message = sk.fail(*write_commands(target, source)[which])
    assert "out.hll" in message
    assert not (tmp_path / "no").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.hll", "in.txt"]


@pytest.mark.parametrize("which", range(4))
def test_writing_to_proc_fails(sk, source, which):
    with open("/proc/version", "rb") as f:
        before = f.read()
    message = sk.fail(*write_commands("/proc/version", source)[which])
    assert "/proc/version" in message
    with open("/proc/version", "rb") as f:
        assert f.read() == before


@pytest.mark.parametrize("which", range(4))
def test_a_directory_in_the_way_is_left_alone(sk, tmp_path, source, which):
    target = tmp_path / "out.hll"
    target.mkdir()
    (target / "precious").write_bytes(b"keep")
    sk.fail(*write_commands(target, source)[which])
    assert target.is_dir()
    assert [p.name for p in target.iterdir()] == ["precious"]
    assert (target / "precious").read_bytes() == b"keep"
    no_temporary_files(tmp_path)


UNPRIVILEGED = 65534   # nobody


@pytest.fixture
def read_only_dir(sk, tmp_path):
    """A directory the sketch command may read but not write, and keyword
    arguments for subprocess that run it so. Root ignores permission bits, so
    as root the command runs as the user nobody in a directory that root owns;
    otherwise the directory is made read-only."""
    if os.geteuid() != 0:
        directory = tmp_path / "ro"
        directory.mkdir()
        yield directory, {}
        os.chmod(directory, 0o755)
        return
    # pytest's tmp_path is private to root: use a directory nobody can reach
    directory = tempfile.mkdtemp(prefix="sketch-cli-ro-", dir="/tmp")
    os.chmod(directory, 0o755)
    as_nobody = {"user": UNPRIVILEGED, "group": UNPRIVILEGED, "extra_groups": []}
    try:
        probe = subprocess.run([sk.binary, "--version"], capture_output=True, **as_nobody)
    except (OSError, subprocess.SubprocessError) as e:
        shutil.rmtree(directory)
        pytest.skip(f"cannot run the command as an unprivileged user: {e}")
    if probe.returncode != 0:
        shutil.rmtree(directory)
        pytest.skip("the sketch binary cannot be run by the user nobody")
    try:
        yield pathlib.Path(directory), as_nobody
    finally:
        shutil.rmtree(directory)


def test_unwritable_directory_keeps_the_previous_file(sk, read_only_dir):
    directory, how = read_only_dir
    path = directory / "kept.hll"
    sk.ok("hll", "add", path, "a", "b", "c")
    other = directory / "other.hll"
    sk.ok("hll", "add", other, "d")
    text = directory / "in.txt"
    text.write_bytes(b"e\nf\n")
    for p in (path, other, text):
        os.chmod(p, 0o644)
    if not how:
        os.chmod(directory, 0o555)
    before = path.read_bytes()
    for args in (["hll", "add", path, "x"],
                 ["hll", "add", path],
                 ["count", "-o", path, text],
                 ["hll", "merge", "-o", path, path, other],
                 ["hll", "export", "-o", path, other]):
        message = sk.fail(*args, input=b"y\n", **how)
        assert str(path) in message
        assert path.read_bytes() == before
        assert sorted(p.name for p in directory.iterdir()) == ["in.txt", "kept.hll",
                                                                "other.hll"]
    assert sk.hll_count(path) == 3


def test_readers_never_see_a_partial_file(sk, tmp_path):
    # Writers replace the file by rename, so a reader running at the same time
    # sees the old sketch or the new one, never a half-written file. (Updates
    # may be lost between concurrent writers; that is not checked.)
    path = tmp_path / "busy.hll"
    big = join_lines(b"%d" % i for i in range(30000))
    sk.ok("hll", "add", path, input=big)
    failures = []

    def writer(k):
        for j in range(6):
            r = sk.run("hll", "add", path, input=join_lines(b"w%d-%d-%d" % (k, j, i)
                                                           for i in range(500)))
            if r.returncode != 0:
                failures.append(("writer", r.returncode, r.stderr))

    def reader():
        for _ in range(25):
            r = sk.run("hll", "count", path)
            if r.returncode != 0:
                failures.append(("reader", r.returncode, r.stderr))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sk.hll_count(path) >= 30000 * 0.96
    no_temporary_files(tmp_path)


def test_error_messages_are_one_line(sk, tmp_path):
    # a sample of failures from every subcommand, checked by sk.fail and here
    for args in (["count", tmp_path / "missing"], ["hll", "count", tmp_path / "missing"],
                 ["hll", "info", tmp_path], ["count", "-p", "99"], ["hll", "merge"]):
        result = sk.run(*args)
        assert result.returncode == 2
        assert_one_error_line(result.stderr)
