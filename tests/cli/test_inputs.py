"""Inputs as they are: files whose size lies (procfs), long lines from pipes,
and more FILE arguments than the process may have open at once."""
import os
import resource
import subprocess

import pytest


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
