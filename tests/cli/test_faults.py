# SPDX-License-Identifier: BSD-3-Clause
"""Faults around the `sketch` command: a full disk, a file-size limit,
permission denied, missing, truncated and binary inputs, lines of many
megabytes, and kill -9 while a file is being written.

Every failure must be one line on stderr beginning with "sketch" and exit
status 2 (sk.fail checks both), and must leave the file the command would
have replaced byte for byte as it was, with no temporary file left behind by
a command that exited. Inputs that are merely unusual (binary bytes, NULs,
huge lines) are not failures: they are counted and stored exactly.

Disk full: standard output is /dev/full (ENOSPC). Files cannot be put on a
full file system without mounting one, so writes are made to fail with
RLIMIT_FSIZE instead (EFBIG, with SIGXFSZ ignored as a shell's ulimit -f
would leave it), which takes the same error path as ENOSPC: a write(2) that
fails part way through the temporary file.

Permission denied: root ignores permission bits, so as root the command runs
as the user nobody (uid 65534) on files that root owns with mode 0600.
"""
import gzip
import os
import pathlib
import random
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from sketch_cli_helpers import assert_close, join_lines

TEMP_NAME = re.compile(r"\.tmp\.[A-Za-z0-9]{6}\Z")


def temporary_files(directory):
    return sorted(p.name for p in directory.iterdir() if TEMP_NAME.search(p.name))


def limit_file_size(limit):
    """preexec_fn: writes beyond `limit` bytes fail with EFBIG."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


# ---------------------------------------------------------------------------
# Standard output on a full disk
# ---------------------------------------------------------------------------

@pytest.fixture
def files(sk, tmp_path):
    text = tmp_path / "in.txt"
    text.write_bytes(join_lines(b"line-%d" % i for i in range(2000)))
    hll = tmp_path / "s.skh"
    sk.ok("hll", "add", hll, input=text.read_bytes())
    bloom = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "5000", "-p", "0.01", bloom)
    sk.ok("bloom", "add", bloom, input=text.read_bytes())
    return {"text": text, "hll": hll, "bloom": bloom, "dir": tmp_path}


STDOUT_COMMANDS = {
    "version": lambda f: ["--version"],
    "help": lambda f: ["--help"],
    "count": lambda f: ["count", f["text"]],
    "hll_count": lambda f: ["hll", "count", f["hll"]],
    "hll_info": lambda f: ["hll", "info", f["hll"]],
    "hll_export": lambda f: ["hll", "export", f["hll"]],
    "bloom_check": lambda f: ["bloom", "check", f["bloom"], "line-1", "line-2"],
    "bloom_check_count": lambda f: ["bloom", "check", "-c", f["bloom"], "line-1"],
    "bloom_info": lambda f: ["bloom", "info", f["bloom"]],
    "bloom_create": lambda f: ["bloom", "create", "-n", "100", "-p", "0.01",
                               f["dir"] / "new.bloom"],
}


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_standard_output_on_a_full_disk(sk, files, name):
    with open("/dev/full", "wb") as full:
        message = sk.fail(*STDOUT_COMMANDS[name](files), stdout=full, stdout_empty=False)
    assert "standard output" in message and "No space left on device" in message


def test_bloom_check_of_standard_input_to_a_full_disk(sk, files):
    # many lines: the output buffer fills and is written long before exit
    lines = files["text"].read_bytes() * 20
    with open("/dev/full", "wb") as full:
        message = sk.fail("bloom", "check", files["bloom"], input=lines, stdout=full,
                          stdout_empty=False)
    assert "No space left on device" in message


# ---------------------------------------------------------------------------
# Files that cannot be written in full
# ---------------------------------------------------------------------------

def writers(f):
    """Commands that replace an existing file, the file, and the size limit
    that makes their write fail part way (below the size of the new file)."""
    d = f["dir"]
    many = d / "many.txt"
    many.write_bytes(join_lines(b"m%d" % i for i in range(20000)))
    dense = d / "dense.skh"
    return [
        # hll add turns the sparse sketch dense: 12 KB
        (["hll", "add", f["hll"]], f["hll"], many.read_bytes(), 4096),
        (["hll", "add", f["hll"], "x", "y"], f["hll"], None, 0),
        (["count", "-o", f["hll"], many], f["hll"], None, 4096),
        (["hll", "merge", "-o", f["hll"], f["hll"], dense], f["hll"], None, 4096),
        (["hll", "export", "-o", f["hll"], dense], f["hll"], None, 4096),
        (["bloom", "create", "-f", "-n", "100000", "-p", "0.01", f["bloom"]], f["bloom"],
         None, 65536),
        (["bloom", "merge", "-o", f["bloom"], f["bloom"], f["bloom"]], f["bloom"], None, 4096),
    ]


def test_writes_that_fail_part_way_keep_the_previous_file(sk, files):
    dense = files["dir"] / "dense.skh"
    sk.ok("hll", "add", dense, input=join_lines(b"d%d" % i for i in range(20000)))
    for args, target, stdin, limit in writers(files):
        before = target.read_bytes()
        message = sk.fail(*args, input=stdin if stdin is not None else b"",
                          preexec_fn=limit_file_size(limit))
        assert "File too large" in message, (args, message)
        assert str(target) in message, (args, message)
        assert target.read_bytes() == before, args
        assert temporary_files(files["dir"]) == [], args
    # and the files are still good
    assert_close(sk.hll_count(files["hll"]), 2000)
    sk.ok("bloom", "info", "--verify", files["bloom"])


def test_an_add_in_place_writes_no_new_file(sk, files):
    """`bloom add` changes the pages of the file in place: a limit on the
    size of files written, below the size of the filter, does not stop it."""
    many = join_lines(b"m%d" % i for i in range(20000))
    sk.ok("bloom", "add", files["bloom"], "new-item", preexec_fn=limit_file_size(4096))
    sk.ok("bloom", "add", files["bloom"], input=many, preexec_fn=limit_file_size(4096))
    sk.ok("bloom", "info", "--verify", files["bloom"])
    out = sk.ok("bloom", "check", "-c", files["bloom"], input=b"new-item\n" + many).stdout
    assert int(out) == 20001
    assert temporary_files(files["dir"]) == []


def test_a_write_that_fits_under_the_limit_succeeds(sk, files):
    # the limit alone is not what fails: a write below it goes through
    sk.ok("hll", "add", files["hll"], "fits", preexec_fn=limit_file_size(1 << 20))
    assert_close(sk.hll_count(files["hll"]), 2001)


# ---------------------------------------------------------------------------
# Permission denied
# ---------------------------------------------------------------------------

NOBODY = 65534


@pytest.fixture
def private(sk, tmp_path):
    """(directory, run-kwargs, binary): files in `directory` made unreadable
    to the command. As root, the command runs as nobody from a copy of the
    binary that nobody may execute, in a directory nobody may enter and
    write; files that root owns with mode 0600 are then out of its reach."""
    if os.geteuid() != 0:
        yield tmp_path, {}, sk.binary
        return
    directory = tempfile.mkdtemp(prefix="sketch-faults-")
    try:
        os.chmod(directory, 0o777)
        binary = os.path.join(directory, "sketch")
        shutil.copy(sk.binary, binary)
        os.chmod(binary, 0o755)
        yield (pathlib.Path(directory),
               {"user": NOBODY, "group": NOBODY, "extra_groups": []}, binary)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run_as(binary, how, *args, input=b""):
    return subprocess.run([binary, *map(os.fsdecode, args)], input=input,
                          capture_output=True, timeout=120, **how)


def assert_failed(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.decode(errors="replace").splitlines()
    assert len(lines) == 1 and lines[0].startswith("sketch"), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def test_unreadable_inputs(sk, private):
    directory, how, binary = private
    text = directory / "secret.txt"
    text.write_bytes(b"a\nb\n")
    hll = directory / "secret.skh"
    sk.ok("hll", "add", hll, "a", "b")
    bloom = directory / "secret.bloom"
    sk.ok("bloom", "create", "-n", "100", "-p", "0.01", bloom)
    for p in (text, hll, bloom):
        os.chmod(p, 0o600 if how else 0o000)
    saved = {p: p.read_bytes() for p in (hll, bloom)} if how else {}
    cases = [["count", text], ["hll", "count", hll], ["hll", "info", hll],
             ["hll", "add", hll, "x"], ["hll", "export", hll],
             ["hll", "merge", "-o", directory / "out.skh", hll],
             ["bloom", "check", bloom, "a"], ["bloom", "info", bloom],
             ["bloom", "add", bloom, "x"],
             ["bloom", "merge", "-o", directory / "out.bloom", bloom]]
    try:
        for args in cases:
            result = run_as(binary, how, *args)
            assert_failed(result, "Permission denied")
            assert result.stdout == b""
    finally:
        for p in (text, hll, bloom):
            os.chmod(p, 0o644)
    for p, data in saved.items():
        assert p.read_bytes() == data
    assert not (directory / "out.skh").exists() and not (directory / "out.bloom").exists()
    assert temporary_files(directory) == []


def test_unwritable_file_in_a_writable_directory_is_replaced_only_by_rename(sk, private):
    # A file the user may not write, in a directory the user may write: the
    # atomic write replaces it by rename, as mv would. What matters is that
    # it is never truncated or written in place.
    directory, how, binary = private
    hll = directory / "readonly.skh"
    sk.ok("hll", "add", hll, "a", "b")
    os.chmod(hll, 0o444)
    ino = hll.stat().st_ino
    result = run_as(binary, how, "hll", "add", hll, "c")
    assert result.returncode == 0, result.stderr
    assert hll.stat().st_ino != ino
    assert sk.hll_count(hll) == 3


# ---------------------------------------------------------------------------
# Missing, truncated, empty and foreign inputs
# ---------------------------------------------------------------------------

MISSING = [["count", "{m}"], ["count", "{t}", "{m}"], ["hll", "count", "{m}"],
           ["hll", "count", "{h}", "{m}"], ["hll", "info", "{m}"], ["hll", "export", "{m}"],
           ["hll", "merge", "-o", "{o}", "{h}", "{m}"], ["bloom", "check", "{m}", "x"],
           ["bloom", "info", "{m}"], ["bloom", "add", "{m}", "x"],
           ["bloom", "merge", "-o", "{o}", "{b}", "{m}"]]


@pytest.mark.parametrize("args", MISSING, ids=lambda a: "-".join(a))
def test_missing_inputs(sk, files, args):
    names = {"m": files["dir"] / "missing", "t": files["text"], "h": files["hll"],
             "b": files["bloom"], "o": files["dir"] / "out"}
    argv = [names[a[1]] if a.startswith("{") else a for a in args]
    message = sk.fail(*argv)
    assert "missing" in message and "No such file or directory" in message
    assert not (files["dir"] / "out").exists()
    assert not (files["dir"] / "missing").exists()


def cut_versions(data):
    """Truncations of a file: empty, one byte, half, all but the last byte."""
    return {"empty": b"", "one_byte": data[:1], "half": data[:len(data) // 2],
            "all_but_one": data[:-1]}


@pytest.mark.parametrize("kind", ["hll", "bloom"])
def test_truncated_files_are_refused_and_left_alone(sk, files, kind):
    whole = files[kind].read_bytes()
    for name, data in cut_versions(whole).items():
        path = files["dir"] / ("cut-" + name)
        path.write_bytes(data)
        if kind == "hll":
            cases = [["hll", "count", path], ["hll", "add", path, "x"], ["hll", "info", path],
                     ["hll", "merge", "-o", path, files["hll"], path]]
        else:
            cases = [["bloom", "check", path, "x"], ["bloom", "add", path, "x"],
                     ["bloom", "info", path], ["bloom", "merge", "-o", path, path, path]]
        for args in cases:
            if name == "empty" and args[1] == "add" and kind == "hll":
                continue  # an empty file is no sketch yet: hll add may start one
            message = sk.fail(*args)
            assert str(path) in message, (args, message)
            assert path.read_bytes() == data, (name, args)
    assert temporary_files(files["dir"]) == []


def test_binary_garbage_is_not_a_sketch_or_filter(sk, files):
    rng = random.Random(6)
    for i in range(20):
        junk = files["dir"] / ("junk%d" % i)
        junk.write_bytes(rng.randbytes(rng.choice([3, 17, 4096, 70000])))
        for args in (["hll", "count", junk], ["bloom", "info", junk],
                     ["bloom", "check", junk, "x"]):
            message = sk.fail(*args)
            assert "junk" in message


def test_a_directory_or_a_device_as_input(sk, files):
    for args in (["hll", "count", files["dir"]], ["bloom", "info", files["dir"]],
                 ["count", files["dir"]], ["bloom", "info", "/dev/null"],
                 ["hll", "count", "/dev/null"]):
        sk.fail(*args)


# ---------------------------------------------------------------------------
# Binary data, NUL bytes and huge lines as input: counted exactly as bytes
# ---------------------------------------------------------------------------

def test_binary_input_with_nul_bytes(sk, tmp_path):
    rng = random.Random(7)
    items = list({rng.randbytes(rng.randint(0, 40)).replace(b"\n", b"\0") for _ in range(3000)})
    data = join_lines(items * 3)
    path = tmp_path / "binary.dat"
    path.write_bytes(data)
    assert_close(sk.count(path), len(items))
    assert_close(sk.count(input=data), len(items))
    bloom = tmp_path / "b.bloom"
    sk.ok("bloom", "create", "-n", "5000", "-p", "0.001", bloom)
    sk.ok("bloom", "add", bloom, input=data)
    # every item is found again, NULs and all
    result = sk.run("bloom", "check", "-c", bloom, input=data)
    assert result.returncode == 0 and int(result.stdout) == len(items) * 3


def test_lines_of_many_megabytes(sk, tmp_path):
    # Lines longer than a read (1 MB) and than a thread's range (32 MB): the
    # reader grows its buffer and keeps each line whole, once, whichever
    # range it starts in.
    huge = [bytes([65 + i]) * size for i, size in enumerate((3 << 20, 40 << 20, 9 << 20))]
    data = b"short\n" + huge[0] + b"\n" + huge[1] + b"\nshort\n" + huge[2] + b"\n" + huge[1]
    path = tmp_path / "huge.txt"
    path.write_bytes(data)
    assert sk.count(path) == 4
    assert sk.count(path, "-j", "4") == 4
    assert sk.count(input=data) == 4
    hll = tmp_path / "huge.skh"
    sk.ok("hll", "add", hll, input=data)
    assert sk.hll_count(hll) == 4
    bloom = tmp_path / "huge.bloom"
    sk.ok("bloom", "create", "-n", "100", "-p", "0.001", bloom)
    sk.ok("bloom", "add", bloom, "short")
    sk.ok("bloom", "add", bloom, input=huge[2] + b"\n")
    result = sk.run("bloom", "check", "-c", bloom, input=huge[2] + b"\nshort\n" + huge[0])
    assert result.returncode == 0 and int(result.stdout) == 2


def test_a_line_longer_than_the_limit_is_an_error(sk, tmp_path):
    """--max-line-length BYTES, taken by every command that reads lines: a
    longer line is an error naming the input and the line's number, exit 2,
    wherever it is (a last line without a newline, a line past the 32 MB
    range of the first thread, compressed input, standard input); a line of
    exactly BYTES is read. /dev/zero, one endless line, stops at the limit
    instead of taking all memory. --help states the default."""
    limit = 1000
    fits = join_lines([b"short", b"x" * limit, b"y"])
    assert sk.count("--max-line-length", str(limit), input=fits) == 3
    assert sk.count("--max-line-length", "1K", input=b"x" * 1024) == 1
    over = join_lines([b"a", b"b", b"c", b"z" * (limit + 1), b"d"])
    path = tmp_path / "over.txt"
    path.write_bytes(over)
    want = "line 4 is longer than 1000 bytes"
    message = sk.fail("count", "--max-line-length", "1000", path, timeout=60)
    assert "%s: %s" % (path, want) in message, message
    assert want in sk.fail("count", "--max-line-length", "1000", input=over, timeout=60)
    gz = tmp_path / "over.txt.gz"
    gz.write_bytes(gzip.compress(over))
    assert "%s: %s" % (gz, want) in sk.fail("count", "--max-line-length", "1000", gz,
                                              timeout=60)
    last = tmp_path / "last.txt"
    last.write_bytes(b"a\n" + b"z" * (limit + 1))
    assert "%s: line 2 is longer" % last in sk.fail("count", "--max-line-length", "1000",
                                                    last, timeout=60)
    # 40 MB of short lines, then the long one: found by the thread whose
    # range it starts in, and numbered from the start of the file
    far = tmp_path / "far.txt"
    short = join_lines(b"%09d" % i for i in range(4 << 20))
    far.write_bytes(short + b"z" * (limit + 1) + b"\nend\n")
    message = sk.fail("count", "-j", "2", "--max-line-length", "1000", far, timeout=120)
    assert "%s: line %d is longer than 1000 bytes" % (far, (4 << 20) + 1) in message
    # the other readers of lines
    for args in (["hll", "add", "--max-line-length", "1000", tmp_path / "h.hll"],
                 ["bloom", "check", "--max-line-length", "1000", tmp_path / "f.bloom"]):
        if args[0] == "bloom":
            sk.ok("bloom", "create", "-n", "100", "-p", "0.01", args[-1])
        assert want in sk.fail(*args, input=over, timeout=60)
    # an add in place keeps the lines before the long one, and says so
    message = sk.fail("bloom", "add", "--max-line-length", "1000", tmp_path / "f.bloom",
                      input=over, timeout=60)
    assert want in message and "the lines before it were added" in message
    assert sk.ok("bloom", "check", "-c", tmp_path / "f.bloom", "a", "b", "c").stdout == b"3\n"
    message = sk.fail("count", "--max-line-length", "1M", "/dev/zero", timeout=60)
    assert "/dev/zero: line 1 is longer than 1048576 bytes" in message
    for bad in ("0", "x", "1Q", "-5", ""):
        assert "max-line-length" in sk.fail("count", "--max-line-length", bad, input=b"a\n")
    for words in (["count"], ["hll", "add"], ["bloom", "add"], ["bloom", "check"]):
        text = sk.ok(*words, "--help").stdout.decode()
        assert "--max-line-length BYTES" in text and "default 256M" in text, words


def test_an_add_in_place_on_a_full_disk_says_so(sk, tmp_path):
    """`bloom add` changes pages of the mapped filter; on a full file system
    a page that needs a block faults (SIGBUS), which must be reported as
    "No space left on device", not as a file changed while read. The filter
    is copied sparse (its zero pages are holes, as cp --sparse=always or
    rsync -S leave them) onto a 1 MB tmpfs mounted in a mount namespace of
    its own, which a filler file then fills. Once there is room again the
    next add finishes, as after a killed add, and the filter verifies."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    source = tmp_path / "f.bloom"
    sk.ok("bloom", "create", "-n", "200000", "-p", "0.01", source)
    items = tmp_path / "items.txt"
    items.write_bytes(join_lines(b"item-%d" % i for i in range(2000)))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = r"""
        mount -t tmpfs -o size=1m tmpfs "$1" || exit 77
        cp --sparse=always "$2" "$1/f.bloom" || exit 78
        head -c 4m /dev/zero > "$1/fill" 2>/dev/null
        "$3" bloom add "$1/f.bloom" < "$4" 2> "$5/full.err"
        echo $? > "$5/full.rc"
        rm "$1/fill"
        "$3" bloom add "$1/f.bloom" < "$4" 2> "$5/again.err" || exit 79
        cp "$1/f.bloom" "$5/after.bloom"
    """
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    result = subprocess.run(unshare + ["sh", "-c", script, "sh", str(mnt), str(source),
                                       sk.binary, str(items), str(tmp_path)],
                            capture_output=True, timeout=300)
    if result.returncode in (1, 77) and not (tmp_path / "full.rc").exists():
        pytest.skip("cannot mount a tmpfs here: %r" % result.stderr)
    assert result.returncode == 0, (result.returncode, result.stderr,
                                    (tmp_path / "again.err").read_bytes())
    assert (tmp_path / "full.rc").read_text().strip() == "2"
    message = (tmp_path / "full.err").read_text()
    assert message.count("\n") == 1 and message.startswith("sketch"), message
    assert "f.bloom: No space left on device" in message, message
    assert "changed while being read" not in message
    after = tmp_path / "after.bloom"
    sk.ok("bloom", "info", "--verify", after)
    out = sk.ok("bloom", "check", "-c", after, input=items.read_bytes()).stdout
    assert int(out) == 2000


# ---------------------------------------------------------------------------
# kill -9 while a file is being written
# ---------------------------------------------------------------------------

def kill_when_writing(argv, directory, timeout=60.0):
    """Starts argv and SIGKILLs it as soon as a temporary file appears in
    directory (the write is under way). Returns whether it was caught
    mid-write (False: it finished first)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout
    caught = False
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if temporary_files(directory):
                proc.send_signal(signal.SIGKILL)
                caught = True
                break
            time.sleep(0.0005)
    finally:
        if proc.poll() is None and not caught:
            proc.kill()
        proc.wait(timeout=60)
        proc.stderr.close()
    return caught and proc.returncode == -signal.SIGKILL


def test_kill_during_bloom_create_keeps_the_previous_filter(sk, tmp_path):
    path = tmp_path / "big.bloom"
    sk.ok("bloom", "create", "-n", "1000", "-p", "0.01", path)
    sk.ok("bloom", "add", path, "kept-1", "kept-2")
    before = path.read_bytes()
    caught = 0
    for attempt in range(5):
        # about 60 MB: the write takes long enough to be caught in the act
        if kill_when_writing([sk.binary, "bloom", "create", "-f", "-n", "50000000",
                              "-p", "0.01", str(path)], tmp_path):
            caught += 1
            assert path.read_bytes() == before
            result = sk.run("bloom", "check", path, "kept-1", "kept-2")
            assert result.stdout == b"kept-1\nkept-2\n"
            sk.ok("bloom", "info", "--verify", path)
            break
    assert caught, "never caught the command while it wrote the file"
    # The killed command's temporary file is left, under a name no command
    # takes for a filter; the next write is not disturbed by it.
    leftovers = temporary_files(tmp_path)
    assert len(leftovers) == 1 and leftovers[0].startswith("big.bloom.tmp.")
    sk.ok("bloom", "add", path, "after")
    result = sk.run("bloom", "check", path, "kept-1", "after")
    assert result.stdout == b"kept-1\nafter\n"
    assert temporary_files(tmp_path) == leftovers


def test_kill_at_random_moments_of_sketch_writes(sk, tmp_path):
    # A sketch file is small and written in microseconds, so the kill lands
    # mostly while the input is read, sometimes during the write: whenever
    # it lands, the file is the old sketch or the new one, never anything
    # else.
    path = tmp_path / "s.skh"
    sk.ok("hll", "add", path, "seed")
    valid = {path.read_bytes()}
    rng = random.Random(9)
    data = join_lines(b"r%d" % i for i in range(400000))
    for attempt in range(12):
        proc = subprocess.Popen([sk.binary, "hll", "add", str(path)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.stdin.write(data[:rng.randrange(len(data))])
            proc.stdin.close()
        except BrokenPipeError:
            pass
        time.sleep(rng.random() * 0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        now = path.read_bytes()
        if proc.returncode == 0:
            valid.add(now)
        assert now in valid or sk.run("hll", "count", path).returncode == 0
        sk.ok("hll", "count", path)
        valid.add(now)
    for name in temporary_files(tmp_path):
        assert name.startswith("s.skh.tmp.")


# ---------------------------------------------------------------------------
# Documented limits (docs/limits.md) not probed elsewhere
# ---------------------------------------------------------------------------

def test_a_sketch_file_over_four_megabytes_is_refused(sk, tmp_path):
    path = tmp_path / "huge.skh"
    with open(path, "wb") as f:
        f.write(b"SKHL")
        f.truncate((4 << 20) + 1)
    for args in (["hll", "count", path], ["hll", "info", path], ["hll", "add", path, "x"]):
        assert "too large to be a HyperLogLog sketch" in sk.fail(*args)
    assert path.stat().st_size == (4 << 20) + 1


def test_a_scalable_filter_grows_past_64_layers(sk, tmp_path):
    """The number of layers is bounded by memory alone: a chain of one item
    per layer grows on, and every item stays in the file."""
    path = tmp_path / "chain.bloom"
    sk.ok("bloom", "create", "-s", "-e", "1", "-n", "1", "-p", "0.01", path)
    added = ["c%d" % i for i in range(80)]
    sk.ok("bloom", "add", path, *added[:40])   # a file of 40 layers, added to
    sk.ok("bloom", "add", path, *added[40:])
    info = dict(line.split(": ", 1) for line in
                sk.ok("bloom", "info", path).stdout.decode().splitlines())
    assert int(info["layers"]) > 64, info
    result = sk.run("bloom", "check", "-c", path, *added)
    assert int(result.stdout) == len(added)
