# SPDX-License-Identifier: BSD-3-Clause
"""Inputs as they are: files whose size lies (procfs), long lines from pipes,
more FILE arguments than the process may have open at once, files cut short
while they are read, and sketch files that come through pipes."""
import os
import resource
import signal
import subprocess
import time

import pytest

from sketch_cli_helpers import join_lines


def exact_distinct(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return len(set(lines)), data


@pytest.mark.parametrize("path", ["/proc/cpuinfo", "/proc/devices", "/proc/filesystems"])
def test_files_that_claim_no_size(sk, path):
    """procfs files say 0 bytes and are read to their end, as a FILE and as
    standard input: the count is the one of their bytes read by Python, and
    within the sketch's error of `sort -u | wc -l` (a few dozen lines share
    one of 16,384 registers now and then, so not always exactly). Their
    values may change between two reads (a clock rate), so the
    reads are repeated until they agree."""
    assert os.stat(path).st_size == 0
    for attempt in range(20):
        with open(path, "rb") as f:
            snapshot = f.read()
        counted = sk.count(path)
        with open(path, "rb") as f:
            piped = sk.count(stdin=f)
        if counted == piped == sk.count(input=snapshot):
            break
    assert counted == piped == sk.count(input=snapshot)
    truth = len(set(snapshot.rstrip(b"\n").split(b"\n")))
    assert truth > 5 and abs(counted - truth) <= 2, (counted, truth)


def test_procfs_into_sketch_files(sk, tmp_path):
    """hll add and bloom add read such files from standard input too."""
    path = "/proc/filesystems"
    truth, data = exact_distinct(path)
    h = tmp_path / "p.hll"
    with open(path, "rb") as f:
        sk.ok("hll", "add", h, stdin=f)
    assert sk.hll_count(h) == sk.count(input=data) and abs(truth - sk.hll_count(h)) <= 2
    b = tmp_path / "p.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.01", b)
    with open(path, "rb") as f:
        sk.ok("bloom", "add", b, stdin=f)
    lines = [x for x in data.split(b"\n") if x]
    out = sk.ok("bloom", "check", "-c", b, input=b"\n".join(lines) + b"\n")
    assert int(out.stdout) == len(lines)


def cpu_seconds(args, stdin):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(args, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, result.stdout


def test_long_line_through_a_pipe_is_linear(sk, tmp_path):
    """A 200 MB line read through a pipe, in 64 KB pieces, costs about what
    the same file costs: each byte is searched for '\\n' once. A rescanning
    reader takes about 50 times the CPU here; the margin below is 10."""
    path = tmp_path / "long.txt"
    with open(path, "wb") as f:
        f.write(b"x" * (200 << 20) + b"\nshort\nx\n")
    with open(path, "rb") as f:
        file_cpu, out = cpu_seconds([sk.binary, "count", "-"], f)
    assert int(out) == 3
    cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    pipe_cpu, out = cpu_seconds([sk.binary, "count"], cat.stdout)
    cat.wait()
    assert int(out) == 3
    assert pipe_cpu < 10 * file_cpu + 1.0, (pipe_cpu, file_cpu)


def test_more_files_than_descriptors(sk, tmp_path):
    """5,000 FILE arguments under `ulimit -n 64`: read a batch at a time."""
    names = []
    for i in range(5000):
        p = tmp_path / ("f%d" % i)
        p.write_bytes(b"line%d\nshared\n" % (i % 50))
        names.append(str(p))

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    result = subprocess.run([sk.binary, "count"] + names, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=low_limit, timeout=300)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == 51
    # a file that cannot be read is named before any work starts
    os.chmod(names[4000], 0)
    if os.geteuid() != 0:
        message = sk.fail("count", *names)
        assert names[4000] in message and "Permission denied" in message
    os.unlink(names[4000])
    message = sk.fail("count", *names)
    assert names[4000] in message and "No such file" in message


def read_io(pid):
    """Bytes the process has read so far (rchar of /proc/PID/io)."""
    with open("/proc/%d/io" % pid) as f:
        return int(next(l for l in f if l.startswith("rchar:")).split()[1])


def has_open(pid, path):
    try:
        return any(os.readlink("/proc/%d/fd/%s" % (pid, fd)) == str(path)
                   for fd in os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return False


def test_a_file_cut_short_while_counted_is_an_error(sk, tmp_path):
    """A regular file that shrinks while `sketch count` reads it (cp or a
    log rotation truncating it in place) is an error, exit 2, naming the
    file, as for a filter: not a partial count with exit 0. The command is
    stopped (SIGSTOP) once it has read a few MB of a 160 MB file, the file
    is cut to 1000 bytes, and the command continued, so that its remaining
    reads find the end before the size it had when it opened the file. If
    the command had already read it all when stopped, it is run again."""
    path = tmp_path / "big.txt"
    block = join_lines(b"line-%d" % i for i in range(100000))
    for attempt in range(6):
        with open(path, "wb") as f:
            for _ in range((160 << 20) // len(block)):
                f.write(block)
        size = path.stat().st_size
        proc = subprocess.Popen([sk.binary, "count", "-j", "1", str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stopped = False
        try:
            deadline = time.monotonic() + 60
            while not has_open(proc.pid, path) and proc.poll() is None:
                assert time.monotonic() < deadline, "the command never opened the file"
            if proc.poll() is None:
                # from here on, what it reads is the file (and the size it
                # had at open is taken before the first read)
                start = read_io(proc.pid)
                while proc.poll() is None and read_io(proc.pid) < start + (4 << 20):
                    assert time.monotonic() < deadline, "the command never read the file"
                proc.send_signal(signal.SIGSTOP)
                stopped = True
                if (proc.poll() is None and has_open(proc.pid, path)
                        and read_io(proc.pid) < start + size - (16 << 20)):
                    os.truncate(path, 1000)
                else:
                    stopped = "late"
        finally:
            if stopped:
                proc.send_signal(signal.SIGCONT)
            out, err = proc.communicate(timeout=300)
        if stopped is True:
            assert proc.returncode == 2, (proc.returncode, out, err)
            assert out == b""
            message = err.decode()
            assert message.count("\n") == 1 and message.startswith("sketch count: ")
            assert "%s: changed while being read" % path in message, message
            return
    pytest.fail("the command read the whole file before it could be stopped, 6 times")


def test_a_sketch_through_a_pipe(sk, tmp_path):
    """A sketch or group file that comes through a pipe (/dev/stdin,
    <(...)) is read whole into memory once and read as the file would be,
    in either format, alone or beside files; garbage from a pipe is not a
    sketch, and an endless stream is too large for one, at once."""
    h = tmp_path / "h.skh"
    sk.ok("hll", "add", h, "a", "b", "c")
    other = tmp_path / "o.skh"
    sk.ok("hll", "add", other, "c", "d")
    data = h.read_bytes()
    assert sk.hll_count("/dev/stdin", input=data) == 3
    assert sk.hll_count(other, "/dev/stdin", input=data) == 4
    redis = sk.ok("hll", "export", h).stdout
    assert sk.hll_count("/dev/stdin", input=redis) == 3
    info = sk.ok("hll", "info", "/dev/stdin", input=redis).stdout.decode()
    assert "format: redis" in info and "estimate: 3" in info
    out = tmp_path / "merged.skh"
    sk.ok("hll", "merge", "-o", out, "/dev/stdin", other, input=data)
    assert sk.hll_count(out) == 4
    assert sk.ok("hll", "export", "/dev/stdin", input=data).stdout == redis
    sk.ok("hll", "fold", "-p", "10", "-o", out, "/dev/stdin", input=data)
    assert sk.hll_count(out) == 3
    result = subprocess.run(["bash", "-c", '"$1" hll count <(cat "$2") "$3"', "bash",
                             sk.binary, str(h), str(other)],
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == b"4\n", result.stderr
    # a group file too
    groups = tmp_path / "g.skg"
    sk.ok("count", "--by", "1", "-o", groups, input=b"x\ty1\nx\ty2\nz\ty1\n")
    result = sk.ok("hll", "count", "/dev/stdin", input=groups.read_bytes())
    assert result.stdout == sk.ok("hll", "count", groups).stdout == b"x\t2\nz\t1\n"
    # what is no sketch says so
    message = sk.fail("hll", "count", "/dev/stdin", input=b"no sketch at all\n")
    assert "/dev/stdin: not a valid HyperLogLog sketch" in message
    message = sk.fail("hll", "count", "/dev/stdin", input=data[:-3])
    assert "/dev/stdin: not a valid HyperLogLog sketch" in message
    message = sk.fail("hll", "count", "/dev/zero", timeout=20)
    assert "/dev/zero: too large to be a HyperLogLog sketch" in message
