# SPDX-License-Identifier: BSD-3-Clause
"""Commands that write files, as people run them: many at once on one file
(xargs -P, cron), through symbolic links, into devices and standard output,
and into filters that were damaged."""
import fcntl
import os
import stat
import subprocess
import time

import pytest

from bloom_cli_helpers import CHUNK, bit_arrays, layer_table
from sketch_cli_helpers import no_temporary_files


def run_all(commands, inputs, directory):
    """Starts every command at once, each reading its input from a file (a
    command reads its input after it has the lock: with pipes, the test
    would have to feed them in the order they get it), and waits."""
    procs = []
    for i, (cmd, data) in enumerate(zip(commands, inputs)):
        path = directory / ("input-%d" % i)
        path.write_bytes(data)
        with open(path, "rb") as f:
            procs.append(subprocess.Popen(cmd, stdin=f, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        results.append((p.returncode, out, err))
    for i in range(len(inputs)):
        (directory / ("input-%d" % i)).unlink()
    return results


def ranges(n, size):
    return [b"".join(b"item-%d\n" % j for j in range(i * size, (i + 1) * size))
            for i in range(n)]


def test_concurrent_bloom_adds_lose_nothing(sk, tmp_path):
    """Eight `bloom add` runs at once on disjoint items: each waits for the
    one before it, so every item is in the filter afterwards."""
    path = tmp_path / "c.bloom"
    sk.ok("bloom", "create", "-n", "1000000", "-p", "0.01", path)
    parts = ranges(8, 50000)
    results = run_all([[sk.binary, "bloom", "add", str(path)]] * 8, parts, tmp_path)
    assert [r[0] for r in results] == [0] * 8, results
    out = sk.ok("bloom", "check", "-c", path, input=b"".join(parts))
    assert int(out.stdout) == 8 * 50000, "false negatives after concurrent adds"
    no_temporary_files(tmp_path)


def test_concurrent_hll_adds_equal_one_run(sk, tmp_path):
    """Eight `hll add` runs at once, the first of them creating the file: the
    sketch equals the one a single run over all the items makes."""
    path = tmp_path / "c.hll"
    parts = ranges(8, 20000)
    results = run_all([[sk.binary, "hll", "add", str(path)]] * 8, parts, tmp_path)
    assert [r[0] for r in results] == [0] * 8, results
    one = tmp_path / "one.hll"
    sk.ok("hll", "add", one, input=b"".join(parts))
    assert path.read_bytes() == one.read_bytes()
    assert sk.hll_count(path) == sk.hll_count(one)
    no_temporary_files(tmp_path)


@pytest.mark.parametrize("args", [
    ["hll", "add", "{F}", "x"], ["bloom", "add", "{F}", "x"],
    ["hll", "merge", "-o", "{F}", "{G}"], ["count", "-o", "{F}"]])
def test_a_locked_file_waits_or_fails_with_no_wait(sk, tmp_path, args):
    path = tmp_path / ("f.bloom" if "bloom" in args else "f.hll")
    if "bloom" in args:
        sk.ok("bloom", "create", "-n", "100", "-p", "0.01", path)
    else:
        sk.ok("hll", "add", path, "a")
    other = tmp_path / "g.hll"
    sk.ok("hll", "add", other, "b")
    before = path.read_bytes()
    argv = [a.format(F=path, G=other) for a in args]
    with open(path, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        words = 1 if argv[0] == "count" else 2
        msg = sk.fail(*argv[:words], "--no-wait", *argv[words:], input=b"line\n")
        assert str(path) in msg and "another sketch command is writing it" in msg
        assert path.read_bytes() == before
        waiting = subprocess.Popen([sk.binary] + argv, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        waiting.stdin.write(b"line\n")
        waiting.stdin.close()
        time.sleep(0.5)
        assert waiting.poll() is None, "wrote while another process held the lock"
        assert path.read_bytes() == before
    assert waiting.wait(timeout=60) == 0, waiting.stderr.read()
    assert path.read_bytes() != before
    # commands that only read take no --no-wait
    sk.fail("hll", "count", "--no-wait", other)


def test_a_failed_first_add_leaves_no_file(sk, tmp_path):
    """The empty file a first writer creates to lock is gone if it fails."""
    path = tmp_path / "new.hll"
    msg = sk.fail("hll", "add", "--redis", "-p", "12", path, "x")
    assert "precision 14" in msg
    assert not path.exists()
    no_temporary_files(tmp_path)


def test_an_empty_file_is_no_sketch_yet(sk, tmp_path):
    """An empty file is what a first writer creates to lock; another writer
    can lock it before its creator does (between the creator's open and its
    flock), and must then start the sketch, not call the file corrupt."""
    hll = tmp_path / "e.hll"
    hll.write_bytes(b"")
    sk.ok("hll", "add", hll, "a", "b")
    assert sk.hll_count(hll) == 2
    bloom = tmp_path / "e.bloom"
    bloom.write_bytes(b"")
    sk.ok("bloom", "create", "-n", "100", "-p", "0.01", bloom)
    sk.ok("bloom", "info", "--verify", bloom)
    assert "already exists" in sk.fail("bloom", "create", "-n", "100", "-p", "0.01", bloom)


def test_symlinks_keep_the_link(sk, tmp_path):
    target = tmp_path / "real.hll"
    sk.ok("hll", "add", target, "a")
    link = tmp_path / "link.hll"
    link.symlink_to("real.hll")
    sk.ok("hll", "add", link, "b", "c")
    assert link.is_symlink() and os.readlink(link) == "real.hll"
    assert sk.hll_count(target) == 3
    b = tmp_path / "real.bloom"
    sk.ok("bloom", "create", "-n", "100", "-p", "0.01", b)
    bl = tmp_path / "link.bloom"
    bl.symlink_to(b)
    sk.ok("bloom", "add", bl, "x")
    assert bl.is_symlink()
    sk.ok("bloom", "check", b, "x")
    no_temporary_files(tmp_path)


def test_dash_is_standard_output(sk, tmp_path):
    a = tmp_path / "a.hll"
    sk.ok("hll", "add", a, "x", "y")
    out = sk.ok("hll", "merge", "-o", "-", a)
    assert out.stdout == a.read_bytes()
    assert not (tmp_path / "-").exists()
    out = sk.ok("count", "-o", "-", input=b"x\ny\n")
    assert out.stdout.startswith(b"SKHL") and out.stdout.endswith(b"2\n")
    # a filter goes out packed, as a dump is: a filter file all the same
    f = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "100", "-p", "0.01", f)
    sk.ok("bloom", "add", f, "in")
    out = sk.ok("bloom", "merge", "-o", "-", f)
    copy = tmp_path / "copy.bloom"
    copy.write_bytes(out.stdout)
    assert sk.ok("bloom", "info", copy).stdout == sk.ok("bloom", "info", f).stdout
    assert sk.ok("bloom", "check", copy, "in", "out").stdout == b"in\n"
    redis = sk.ok("hll", "export", "-o", "-", a)
    assert redis.stdout.startswith(b"HYLL")


def device_nodes(tmp_path):
    """A null and a full device, and a link like /dev/stdout. As root, nodes
    of our own in tmp_path, so that a command that wrongly renames over them
    cannot damage the machine's /dev; otherwise the machine's own, which a
    user cannot rename over."""
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/proc/self/fd/1")
    if os.geteuid() != 0:
        return "/dev/null", "/dev/full", str(stdout)
    null, full = tmp_path / "null", tmp_path / "full"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    return str(null), str(full), str(stdout)


def test_devices_are_written_through(sk, tmp_path):
    """A device is written, not replaced by a regular file (as root, a rename
    over it would succeed), and a full one says why it failed; a link such as
    /dev/stdout writes where it points."""
    a = tmp_path / "a.hll"
    sk.ok("hll", "add", a, "x")
    null, full, stdout = device_nodes(tmp_path)
    sk.ok("hll", "merge", "-o", null, a)
    assert stat.S_ISCHR(os.stat(null).st_mode)
    msg = sk.fail("hll", "merge", "-o", full, a)
    assert full in msg and "No space left on device" in msg
    assert stat.S_ISCHR(os.stat(full).st_mode)
    out = sk.ok("hll", "merge", "-o", stdout, a)
    assert out.stdout == a.read_bytes()
    assert os.path.islink(stdout)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    sk.ok("hll", "merge", "-o", fifo, a)
    assert reader.communicate(timeout=30)[0] == a.read_bytes()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_damaged_filter_is_not_rewritten(sk, tmp_path):
    """`bloom add` checks each chunk before its first change and `bloom
    merge` all of them before it writes: new checksums over damaged bits
    would hide the damage from --verify. Here every chunk is damaged."""
    path = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "100000", "-p", "0.01", path)
    data = bytearray(path.read_bytes())
    arrays = layer_table(data)[0]["offset"]
    for at in range(arrays, arrays + len(bit_arrays(data)), CHUNK):
        data[at + 1000] ^= 0x5A
    path.write_bytes(bytes(data))
    for args in (["bloom", "add", path, "x"], ["bloom", "add", path],
                 ["bloom", "merge", "-o", tmp_path / "out.bloom", path]):
        msg = sk.fail(*args, input=b"y\n")
        assert "checksum mismatch" in msg and str(path) in msg
    assert path.read_bytes() == bytes(data)
    assert not (tmp_path / "out.bloom").exists()
    assert "checksum" in sk.fail("bloom", "info", "--verify", path)


def wait_until(predicate, what, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.01)
    pytest.fail("timed out waiting until " + what)


def maps_file(pid, path):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return str(path) in f.read()
    except OSError:
        return False


def holds_open(pid, path):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == str(path):
                return True
        except OSError:
            pass
    return False


def test_a_filter_cut_short_while_checked_is_an_error(sk, tmp_path):
    """`cp new.bloom live.bloom` truncates the file in place: a check that
    has it mapped stops with exit 2 and a message, never with SIGBUS."""
    path = tmp_path / "live.bloom"
    sk.ok("bloom", "create", "-n", "2000000", "-p", "0.01", path)
    check = subprocess.Popen([sk.binary, "bloom", "check", "-c", str(path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    wait_until(lambda: maps_file(check.pid, path), "the check maps the filter")
    os.truncate(path, 4096)
    try:
        check.stdin.write(b"".join(b"probe-%d\n" % i for i in range(100000)))
        check.stdin.close()
    except BrokenPipeError:
        pass
    out, err = check.communicate(timeout=60)
    assert check.returncode == 2, (check.returncode, err)
    assert b"changed while being read" in err and str(path).encode() in err
    assert out == b""


def test_an_add_refuses_pages_rewritten_under_it(sk, tmp_path):
    """A file rewritten in place while `bloom add` runs (rsync --inplace):
    the add finds the chunks it is about to change no longer matching their
    sums and refuses them, rather than writing fresh sums over a mix of old
    and new pages; --verify then reports the damage."""
    path = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "200000", "-p", "0.01", path)
    first = b"".join(b"old-%d\n" % i for i in range(50000))
    sk.ok("bloom", "add", path, input=first)
    size = path.stat().st_size
    add = subprocess.Popen([sk.binary, "bloom", "add", str(path)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until(lambda: holds_open(add.pid, path), "the add holds the file")
    time.sleep(0.5)  # it reads the file right after it has the lock
    with open(path, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xa5" * (size - size // 2))
    second = b"".join(b"new-%d\n" % i for i in range(50000))
    out, err = add.communicate(second, timeout=60)
    assert add.returncode == 2 and b"checksum mismatch" in err, err
    assert "checksum" in sk.fail("bloom", "info", "--verify", path)


def test_an_add_keeps_a_file_whole(sk, tmp_path):
    """Adds in place change the chunks they touch, write their sums, and
    leave no mark: the file verifies and holds every item, as one written
    whole would."""
    path = tmp_path / "f.bloom"
    whole = tmp_path / "whole.bloom"
    for p in (path, whole):
        sk.ok("bloom", "create", "-n", "200000", "-p", "0.01", p)
    first = b"".join(b"old-%d\n" % i for i in range(50000))
    second = b"".join(b"new-%d\n" % i for i in range(50000))
    sk.ok("bloom", "add", path, input=first)
    sk.ok("bloom", "add", path, input=second)
    sk.ok("bloom", "add", path, "one", "two")
    sk.ok("bloom", "add", whole, input=first + second + b"one\ntwo\n")
    assert path.read_bytes() == whole.read_bytes()
    sk.ok("bloom", "info", "--verify", path)
    out = sk.ok("bloom", "check", "-c", path, input=first + second)
    assert int(out.stdout) == 100000


def run_briefly(sk, *args, seconds=20, **kwargs):
    """Runs the command and fails the test, instead of hanging it, if the
    command is still running after `seconds`."""
    try:
        return sk.run(*args, timeout=seconds, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail("sketch %s still runs after %d s" % (" ".join(map(str, args)), seconds))


def dangling_writers(d, out):
    """Every command that writes a sketch or filter file, writing `out`."""
    h, f = d / "in.hll", d / "in.bloom"
    return [["count", "-o", out, d / "lines.txt"],
            ["hll", "add", out, "a", "b"],
            ["hll", "merge", "-o", out, h],
            ["hll", "export", "-o", out, h],
            ["hll", "fold", "-p", "10", "-o", out, h],
            ["bloom", "create", "-n", "100", "-p", "0.01", out],
            ["bloom", "merge", "-o", out, f]]


def test_a_link_to_nothing_yet_creates_its_target(sk, tmp_path):
    """Through a symbolic link whose file does not exist yet, every writer
    creates that file and keeps the link (as the README says of links),
    instead of spinning between "no such file" and "file exists"; a chain of
    links is followed to its end. A link into a directory that does not
    exist is an error naming it, at once; a writer that fails leaves the
    link as it found it."""
    (tmp_path / "lines.txt").write_bytes(b"a\nb\n")
    sk.ok("hll", "add", tmp_path / "in.hll", "a", "b")
    sk.ok("bloom", "create", "-n", "100", "-p", "0.01", tmp_path / "in.bloom")
    for i, args in enumerate(dangling_writers(tmp_path, tmp_path / "link")):
        link, middle, target = tmp_path / "link", tmp_path / "middle", tmp_path / "target"
        link.symlink_to("middle" if i % 2 else "target")
        middle.symlink_to("target")
        result = run_briefly(sk, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert link.is_symlink() and target.is_file() and not target.is_symlink(), args
        assert os.readlink(link) == ("middle" if i % 2 else "target")
        if args[0] == "bloom":
            sk.ok("bloom", "info", "--verify", target)
        else:
            assert sk.hll_count(target) == 2, args
        for p in (link, middle, target):
            p.unlink()
    no_temporary_files(tmp_path)

    link = tmp_path / "nowhere.hll"
    link.symlink_to(tmp_path / "missing-dir" / "s.hll")
    for args in dangling_writers(tmp_path, link):
        result = run_briefly(sk, *args)
        assert result.returncode == 2, (args, result.stderr)
        message = result.stderr.decode()
        assert str(link) in message and "No such file or directory" in message, message
        assert link.is_symlink() and not (tmp_path / "missing-dir").exists()

    # bloom add never creates a filter: the link's missing file is the error
    link = tmp_path / "to-missing.bloom"
    link.symlink_to("missing.bloom")
    result = run_briefly(sk, "bloom", "add", link, "x")
    assert result.returncode == 2 and b"No such file or directory" in result.stderr
    # a first add that fails removes the file it created, not the link
    link = tmp_path / "to-new.hll"
    link.symlink_to("new.hll")
    result = run_briefly(sk, "hll", "add", "--redis", "-p", "12", link, "x")
    assert result.returncode == 2 and b"precision 14" in result.stderr
    assert link.is_symlink() and not (tmp_path / "new.hll").exists()
    no_temporary_files(tmp_path)


def test_hll_writers_refuse_a_fifo_or_a_device_at_once(sk, tmp_path):
    """`hll add` and an in-place `hll fold` read the file they rewrite: a
    FIFO (or a device) is refused as `bloom add` refuses it, "not a regular
    file", at once and with or without --no-wait, instead of blocking in
    open() until some writer comes. Written through as an output (-o) it
    stays what test_devices_are_written_through checks."""
    fifo = tmp_path / "pipe.hll"
    os.mkfifo(fifo)
    for args, data, name in ((["hll", "add", fifo, "x"], None, fifo),
                             (["hll", "add", "--no-wait", fifo, "x"], None, fifo),
                             (["hll", "add", fifo], b"x\ny\n", fifo),
                             (["hll", "fold", "-p", "10", fifo], None, fifo),
                             (["hll", "fold", "--no-wait", "-p", "10", fifo], None, fifo),
                             (["hll", "add", "/dev/null", "x"], None, "/dev/null")):
        result = run_briefly(sk, *args, seconds=5, input=data)
        assert result.returncode == 2, (args, result.stderr)
        message = result.stderr.decode()
        assert "%s: not a regular file" % name in message, message
        assert message.count("\n") == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    # bloom's own refusal, for the same words
    assert "not a regular file" in run_briefly(sk, "bloom", "add", "/dev/null", "x",
                                               seconds=5).stderr.decode()
