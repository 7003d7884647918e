# SPDX-License-Identifier: BSD-3-Clause
"""docs/python.md's examples run as written, in order, in a directory that
holds the files they read (made by the command, a window sketch among
them), with the names they assume (urls, new_urls, more_visitors)
defined, and redis.Redis() pointed at the suite's private server."""
import os
import re

import sketch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DOCS = os.path.join(ROOT, "docs", "python.md")
README = os.path.join(ROOT, "README.md")


def python_blocks(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_readme_example_runs(tmp_path, run_sketch, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run_sketch("bloom", "create", "-n", "1000", "-p", "0.01", "urls.bloom")
    run_sketch("bloom", "add", "urls.bloom", "a.example")
    blocks = python_blocks(README)
    assert len(blocks) == 1
    exec(compile(blocks[0], README, "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("5 (5, ") and lines[1] == "[True, False]"


def test_examples_run(tmp_path, run_sketch, redis_client, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open("visits.csv", "w") as f:
        f.write("page,user_id\n")
        for i in range(20000):
            f.write("/p%d,%d\n" % (i % 13, i * 7 % 5003))
    for day, start in (("monday", 0), ("tuesday", 3000)):
        items = "".join("u%d\n" % i for i in range(start, start + 6000))
        run_sketch("count", "-o", day + ".hll", "-", input=items)
    run_sketch("bloom", "create", "-n", "10000", "-p", "0.01", "bad-urls.bloom")
    run_sketch("bloom", "add", "bad-urls.bloom", input="".join("http://bad/%d\n" % i
                                                                for i in range(500)))
    run_sketch("hll", "add", "--time", "1", "-f", "2", "--horizon", "1d", "sources.whll",
               input="".join("%d\t10.0.%d.%d\n" % (1700000000 + i, i % 7, i % 50)
                             for i in range(1000)))
    blocks = python_blocks(DOCS)
    assert len(blocks) >= 5
    port = redis_client.connection_pool.connection_kwargs["port"]
    namespace = {"urls": ["http://bad/1", "http://good/1"], "new_urls": ["http://bad/new"],
                 "more_visitors": ["v1", "v2"]}
    for block in blocks:
        exec(compile(block.replace("redis.Redis()", "redis.Redis(port=%d)" % port), DOCS, "exec"),
             namespace)
    assert namespace["flags"][0] is True
    assert sketch.BloomFilter.open("bad-urls.bloom").contains("http://bad/new")
    assert redis_client.pfcount("visitors:2026-12-05") == 2
    assert os.path.exists("both.hll")
    assert sketch.HyperLogLog.open("last-hour.hll").count() == namespace["clients"].count(3600)
