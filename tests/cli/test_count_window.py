# SPDX-License-Identifier: BSD-3-Clause
"""sketch count --window (a sliding distinct count per step) and the window
sketch files of sketch hll add --time / --at, hll count --window --at, hll
info and hll merge on them.

The expected rows come from a simulation, in this file, of the documented
rule: the input is read in order; step T (a multiple of --every) prints
when a line of time >= T is read, with the distinct items of the lines read
before it whose times t have T - W <= t < T; the step after the newest time
prints at the end; a line older than the window of the next step to print
counts nowhere. Each row must equal, exactly, what `sketch count` says of
that window's items alone (a window's estimate is the plain HyperLogLog's
of its items), and lie within the HyperLogLog's error of the exact count."""
import datetime
import math
import os
import random
import select
import subprocess

import pytest

SIGMA_14 = 1.04 / math.sqrt(1 << 14)
EPOCH = 1700000000  # 2023-11-14T22:13:20Z


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def from_iso(text):
    return int(datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp())


def timeline(seed, steps, every, window=None, groups=1, late_share=0.1, too_old=0,
             burst_items=300):
    """Lines (t, group, item) in input order over `steps` steps: ordinary
    seconds, bursts of many distinct items, quiet stretches with no line,
    lines that come late (their time before the newest read) and, at the
    end, `too_old` lines older than any window still to print."""
    rng = random.Random(seed)
    lines = []
    t = EPOCH
    end = EPOCH + steps * every
    while t < end:
        kind = rng.random()
        if kind < 0.1:  # a quiet stretch, up to longer than the window
            t += rng.randint(every, (window or every) + 3 * every)
            continue
        if kind < 0.15:  # a burst
            for _ in range(burst_items):
                lines.append((t, f"g{rng.randrange(groups)}", f"b{rng.getrandbits(32)}"))
        else:
            for _ in range(rng.randint(0, 4)):
                lines.append((t, f"g{rng.randrange(groups)}", f"i{rng.randrange(60)}"))
        if lines and rng.random() < late_share:  # a late line, up to a window behind
            g = f"g{rng.randrange(groups)}"
            lag = rng.randint(1, window or 2 * every)
            lines.append((t - lag, g, f"late{rng.randrange(40)}"))
        t += rng.randint(1, max(1, every // 3))
    newest = max(x[0] for x in lines)
    for k in range(too_old):
        lines.append((newest - 10 * every - k, "g0", f"old{k}"))
    return lines


def simulate(lines, window, every, by):
    """The rows the documented rule prints: [(T, group, exact item set)] and
    the number of lines counted nowhere."""
    rows, held, too_old, nxt = [], [], 0, None

    def emit(step):
        per = {}
        for t, g, item in held:
            if step - window <= t < step:
                per.setdefault(g if by else "", set()).add(item)
        if not by:
            rows.append((step, "", per.get("", set())))
        for g in sorted(per):
            if by:
                rows.append((step, g, per[g]))

    for t, g, item in lines:
        if nxt is None:
            nxt = t // every * every + every
        while nxt <= t:
            emit(nxt)
            nxt += every
            held = [x for x in held if x[0] >= nxt - window]
        if t < nxt - window:
            too_old += 1
            continue
        held.append((t, g, item))
    if nxt is not None:
        emit(nxt)
    return rows, too_old


def to_bytes(lines, by):
    if by:
        return "".join(f"{t}\t{g}\t{i}\n" for t, g, i in lines).encode()
    return "".join(f"{t}\t{i}\n" for t, _, i in lines).encode()


def parse_rows(stdout, by):
    rows = []
    for line in stdout.decode().splitlines():
        fields = line.split("\t")
        if by:
            rows.append((from_iso(fields[0]), fields[1], int(fields[2])))
        else:
            assert len(fields) == 2, line
            rows.append((from_iso(fields[0]), "", int(fields[1])))
    return rows


def plain_counts(sk, tmp_path, rows):
    """What `sketch count` says of each row's items alone, through --by:
    each group's count is exactly the count of its items alone."""
    path = tmp_path / "windows.tsv"
    path.write_bytes("".join(f"{n}\t{item}\n" for n, (_, _, items) in enumerate(rows)
                             for item in items).encode())
    out = sk.ok("count", "--by", "1", "-f", "2", path).stdout.decode()
    counts = {int(k): int(v) for k, v in (line.split("\t") for line in out.splitlines())}
    return [counts.get(n, 0) for n in range(len(rows))]


def check_rows(sk, tmp_path, lines, window, every, by, extra=()):
    path = tmp_path / "lines.tsv"
    path.write_bytes(to_bytes(lines, by))
    args = ["count", "--time", "1", "-f", "3" if by else "2", "--window", f"{window}s",
            "--every", f"{every}s", *extra]
    if by:
        args += ["--by", "2"]
    result = sk.ok(*args, path)
    got = parse_rows(result.stdout, by)
    want, too_old = simulate(lines, window, every, by)
    assert [(t, g) for t, g, _ in got] == [(t, g) for t, g, _ in want]
    plain = plain_counts(sk, tmp_path, want)
    for (t, g, count), (_, _, items), same in zip(got, want, plain):
        assert count == same, (iso(t), g, count, same, len(items))
        n = len(items)
        if n <= 100:
            assert abs(count - n) <= 2, (iso(t), g, count, n)
        else:
            assert abs(count - n) <= 4 * SIGMA_14 * n + 1, (iso(t), g, count, n)
    return got, want, too_old, result.stderr.decode()


@pytest.mark.parametrize("window,every,seed", [(60, 10, 1), (600, 60, 2), (30, 30, 3),
                                               (7, 1, 4)])
def test_sliding_rows_equal_the_windows(sk, tmp_path, window, every, seed):
    lines = timeline(seed, steps=120, every=every, window=window)
    got, want, too_old, stderr = check_rows(sk, tmp_path, lines, window, every, by=False)
    assert (stderr == "") == (too_old == 0), stderr
    assert any(c == 0 for _, _, c in got), "no quiet step in the timeline"
    assert any(len(items) > 100 for _, _, items in want), "no burst in the timeline"
    steps = [t for t, _, _ in got]
    assert steps == list(range(steps[0], steps[-1] + every, every))
    assert steps[0] == lines[0][0] // every * every + every
    assert steps[-1] == max(t for t, _, _ in lines) // every * every + every


def test_groups(sk, tmp_path):
    lines = timeline(7, steps=90, every=60, window=300, groups=12, burst_items=150)
    got, want, _, _ = check_rows(sk, tmp_path, lines, 300, 60, by=True)
    assert len({g for _, g, _ in got}) == 12
    # within a step, groups in byte order; a group with nothing in the window prints no row
    for step in {t for t, _, _ in got}:
        names = [g for t, g, _ in got if t == step]
        assert names == sorted(names, key=str.encode)
    assert all(c > 0 for _, _, c in got)


def test_csv_and_low_precision(sk, tmp_path):
    lines = timeline(9, steps=40, every=60, groups=3)
    path = tmp_path / "l.tsv"
    path.write_bytes(to_bytes(lines, True))
    out = sk.ok("count", "--time", "1", "--by", "2", "-f", "3", "--window", "2m", "--every",
                "1m", "--csv", "-p", "10", path).stdout.decode().splitlines()
    assert out[0] == "time,field2,count"
    want, _ = simulate(lines, 120, 60, True)
    assert len(out) == len(want) + 1
    for line, (t, g, items) in zip(out[1:], want):
        when, group, count = line.split(",")
        assert (from_iso(when), group) == (t, g)
        assert abs(int(count) - len(items)) <= 4 * 1.04 / 32 * len(items) + 2


def test_window_equal_to_every_is_count_per_window(sk, tmp_path):
    """With --window = --every, the row at T counts [T - W, T): the window
    that --time --every prints as T - W."""
    lines = sorted(timeline(11, steps=50, every=60, late_share=0), key=lambda x: x[0])
    path = tmp_path / "l.tsv"
    path.write_bytes(to_bytes(lines, False))
    sliding = parse_rows(sk.ok("count", "--time", "1", "-f", "2", "--window", "1m", "--every",
                               "1m", path).stdout, False)
    tumbling = {}
    for line in sk.ok("count", "--time", "1", "-f", "2", "--every", "1m",
                      path).stdout.decode().splitlines():
        when, count = line.split("\t")
        tumbling[from_iso(when)] = int(count)
    for t, _, count in sliding:
        assert count == tumbling.get(t - 60, 0), iso(t)


def test_lines_older_than_the_window_are_reported(sk, tmp_path):
    lines = timeline(5, steps=60, every=60, window=300, too_old=7)
    got, want, too_old, stderr = check_rows(sk, tmp_path, lines, 300, 60, by=False)
    assert too_old >= 7
    assert f"{too_old} of {len(lines)} lines are older than the window" in stderr
    assert stderr.count("\n") == 1


def test_lines_without_time_as_count_time(sk, tmp_path):
    data = (f"{EPOCH}\ta\nnot-a-time\tb\n{EPOCH + 5}\tc\nshort\n{EPOCH + 70}\td\n").encode()
    result = sk.ok("count", "--time", "1", "-f", "2", "--window", "1m", "--every", "1m",
                   input=data)
    assert result.stdout.decode() == (f"{iso(EPOCH - 20 + 60)}\t2\n"
                                      f"{iso(EPOCH - 20 + 120)}\t1\n")
    err = result.stderr.decode()
    assert "1 of 5 lines have no time in field 1" in err and "'not-a-time'" in err
    assert "1 of 5 lines have fewer fields" in err


def test_streaming_rows_before_the_end(sk):
    """A pipe that stays open gets a step's rows once a line passes it."""
    proc = subprocess.Popen([sk.binary, "count", "--time", "1", "--window", "10s", "--every",
                             "10s"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdin.write(f"{EPOCH}\n{EPOCH + 1}\n{EPOCH + 2}\n".encode())
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], 0.5)[0] == []  # step not passed yet
        proc.stdin.write(f"{EPOCH + 15}\n".encode())
        proc.stdin.flush()
        ready = select.select([proc.stdout], [], [], 10)[0]
        assert ready, "no row while the input is open"
        assert os.read(proc.stdout.fileno(), 4096).decode() == f"{iso(EPOCH + 10)}\t3\n"
        proc.stdin.close()
        rest = proc.stdout.read().decode()
        assert rest == f"{iso(EPOCH + 20)}\t1\n"
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---- window sketch files ------------------------------------------------------


def write_lines(path, lines):
    path.write_bytes(to_bytes(lines, False))


def test_file_across_runs_equals_one_run(sk, tmp_path):
    lines = timeline(13, steps=80, every=60, late_share=0.2)
    one, many = tmp_path / "one.whll", tmp_path / "many.whll"
    write_lines(tmp_path / "all.tsv", lines)
    sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "30m", one, tmp_path / "all.tsv")
    cuts = [0, len(lines) // 5, len(lines) // 2, len(lines) * 4 // 5, len(lines)]
    for k in range(4):
        part = tmp_path / f"part{k}.tsv"
        write_lines(part, lines[cuts[k]:cuts[k + 1]])
        if k % 2:
            sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "30m", many, stdin=open(part, "rb"))
        else:
            sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "30m", many, part)
    info_one, info_many = sk.info(one), sk.info(many)
    newest = max(t for t, _, _ in lines)
    assert info_one["newest"] == info_many["newest"] == iso(newest)
    assert info_one["count over the horizon"] == info_many["count over the horizon"]
    for window in ("1s", "1m", "10m", "30m"):
        for at in (newest + 1, newest + 61, newest + 600):
            a = sk.hll_count("--window", window, "--at", str(at), one)
            b = sk.hll_count("--window", window, "--at", str(at), many)
            assert a == b, (window, at)
    # and what count --window prints for its last step
    last = parse_rows(sk.ok("count", "--time", "1", "-f", "2", "--window", "10m", "--every",
                            "1m", tmp_path / "all.tsv").stdout, False)[-1]
    assert sk.hll_count("--window", "10m", "--at", iso(last[0]), one) == last[2]


def test_file_counts_are_the_windows(sk, tmp_path):
    rng = random.Random(17)
    lines = [(EPOCH + rng.randrange(3600), "", f"u{rng.randrange(500)}") for _ in range(3000)]
    path = tmp_path / "w.whll"
    write_lines(tmp_path / "in.tsv", lines)
    sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "1h", path, tmp_path / "in.tsv")
    newest = max(t for t, _, _ in lines)
    assert sk.hll_count(path) == sk.hll_count("--window", "1h", "--at", str(newest + 1), path)
    for window in (1, 10, 60, 600, 3600):
        for at in (newest + 1, newest + 30, newest + 400):
            exact = {i for t, _, i in lines if at - window <= t < at}
            got = sk.hll_count("--window", f"{window}s", "--at", str(at), path)
            bound = 2 if len(exact) <= 100 else 4 * SIGMA_14 * len(exact) + 1
            assert abs(got - len(exact)) <= bound, (window, at, got, len(exact))
    # and hll merge of two halves is the union
    a, b = tmp_path / "a.whll", tmp_path / "b.whll"
    write_lines(tmp_path / "a.tsv", lines[::2])
    write_lines(tmp_path / "b.tsv", lines[1::2])
    sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "1h", a, tmp_path / "a.tsv")
    sk.ok("hll", "add", "--time", "1", "-f", "2", "--horizon", "1h", b, tmp_path / "b.tsv")
    sk.ok("hll", "merge", "-o", tmp_path / "ab.whll", a, b)
    for window in ("1m", "1h"):
        assert (sk.hll_count("--window", window, tmp_path / "ab.whll")
                == sk.hll_count("--window", window, path))


def test_file_at_items_info_and_late(sk, tmp_path):
    path = tmp_path / "w.whll"
    sk.ok("hll", "add", "--at", "2023-11-14T22:13:20Z", "--horizon", "1h", path, "a", "b", "c")
    sk.ok("hll", "add", "--at", str(EPOCH + 1800), path, input=b"c\nd\n")
    assert sk.hll_count("--window", "1s", path) == 2
    assert sk.hll_count(path) == 4
    assert sk.hll_count("--window", "1800s", path) == 2   # [EPOCH + 1, EPOCH + 1801)
    assert sk.hll_count("--window", "1801s", path) == 4
    info = sk.info(path)
    assert info["format"] == "sketch window 1"
    assert info["horizon seconds"] == "3600" and info["resolution seconds"] == "1"
    assert info["newest"] == iso(EPOCH + 1800) and info["count over the horizon"] == "4"
    result = sk.ok("hll", "add", "--at", str(EPOCH - 3600), path, "old", "older")
    assert "2 items are older than the horizon" in result.stderr.decode()
    assert sk.hll_count(path) == 4
    js = sk.ok("hll", "count", "--json", "--window", "1h", path).stdout.decode()
    assert '"count": 4' in js and f'"until": "{iso(EPOCH + 1801)}"' in js


@pytest.mark.parametrize("args,message", [
    (["--time", "1", "--every", "1m", "--window", "10x"], "--window takes a whole number"),
    (["--time", "1", "--every", "1m", "--window", "500ms"], "--window takes a whole number"),
    (["--time", "1", "--every", "1s", "--window", "0s"], "--window takes a whole number"),
    (["--window", "10m"], "--window needs --time N"),
    (["--time", "1", "--window", "10m"], "--time and --every go together"),
    (["--time", "1", "--every", "10m", "--window", "1m"], "--every is longer than --window"),
    (["--time", "1", "--every", "1m", "--window", "200d"], "--window is at most 16777216"),
    (["--time", "1", "--every", "1m", "--window", "1h", "--json"], "do not apply to --window"),
    (["--time", "1", "--every", "1m", "--window", "1h", "--top", "3"], "do not apply"),
    (["--time", "1", "--every", "1m", "--window", "1h", "-o", "x"], "saves no file"),
])
def test_count_errors(sk, tmp_path, args, message):
    line = sk.fail("count", *args, input=b"1 a\n")
    assert line.startswith("sketch count: ") and message in line, line


def test_file_errors(sk, tmp_path):
    w, plain = tmp_path / "w.whll", tmp_path / "p.skh"
    sk.ok("hll", "add", "--at", str(EPOCH), "--horizon", "1h", w, "a")
    sk.ok("hll", "add", plain, "a")
    cases = [
        (["hll", "add", "--time", "1", plain], "not a window sketch"),
        (["hll", "add", w, "x"], "give the items' times"),
        (["hll", "add", "--time", "1", "--at", str(EPOCH), w], "not both"),
        (["hll", "add", "-f", "2", w], "-f, -d and -w pick the item"),
        (["hll", "add", "--at", "yesterday", w, "x"], "--at takes a time"),
        (["hll", "add", "--at", str(EPOCH), "--horizon", "2h", w, "x"], "horizon of 3600"),
        (["hll", "add", "--at", str(EPOCH), "-p", "12", w, "x"], "precision 14, not 12"),
        (["hll", "add", "--at", str(EPOCH), "--horizon", "0d", w, "x"], "--horizon takes"),
        (["hll", "add", "--at", str(EPOCH), "--redis", w, "x"], "not both"),
        (["hll", "count", "--window", "2h", w], "longer than the horizon"),
        (["hll", "count", "--at", str(EPOCH), w], "is not after the newest time"),
        (["hll", "count", "--window", "1h", plain], "are for window sketches"),
        (["hll", "count", w, plain], "not a window sketch"),
        (["hll", "export", w], "it is a window sketch"),
    ]
    for args, message in cases:
        line = sk.fail(*args)
        assert message in line, (args, line)
    other = tmp_path / "o.whll"
    sk.ok("hll", "add", "--at", str(EPOCH), "--horizon", "2h", other, "a")
    assert "merge only with alike" in sk.fail("hll", "merge", "-o", tmp_path / "m", w, other)
    damaged = tmp_path / "d.whll"
    damaged.write_bytes(w.read_bytes()[:60])
    assert "not a valid window sketch" in sk.fail("hll", "count", damaged)
