# SPDX-License-Identifier: BSD-3-Clause
"""Files written by the previous release (0.1.0) open and answer exactly as
they did: tests/fixtures/v0.1 holds them with the answers that release gave
(expected.json, recorded by its own `sketch` command). Its dumps are checked
against its files by tests/unit/test_bloom.c."""
import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "v0.1"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
PROBES = [b"probe-%d" % i for i in range(10000)]
# The lines of `bloom info` whose values do not depend on the release.
STABLE_INFO = ["layout", "bits", "hashes", "capacity", "requested fp rate", "items",
               "estimated items", "expected fp rate now", "expected fp rate at capacity",
               "bits per item at capacity", "layers", "expansion"]


def items_of(entry):
    return [b"item-%d" % i for i in range(entry["item_count"])]


def info_dict(text):
    return dict(line.split(": ", 1) for line in text.splitlines())


@pytest.mark.parametrize("name", sorted(EXPECTED["bloom"]))
def test_old_bloom_files_answer_the_same(sk, name):
    entry = EXPECTED["bloom"][name]
    path = FIXTURES / (name + ".bloom")
    result = sk.run("bloom", "check", path, *PROBES)
    positives = sorted(int(line.split(b"-")[1]) for line in result.stdout.split())
    assert positives == entry["positive_probes"]
    found = sk.run("bloom", "check", "-c", path, *items_of(entry))
    assert int(found.stdout) == entry["item_count"]
    info = info_dict(sk.ok("bloom", "info", "--verify", path).stdout.decode())
    assert info["checksums"] == "ok"
    for field in STABLE_INFO:
        assert info.get(field) == entry["info"].get(field), field


@pytest.mark.parametrize("name", sorted(EXPECTED["hll"]))
def test_old_hll_files_answer_the_same(sk, name):
    info = info_dict(sk.ok("hll", "info", FIXTURES / (name + ".hll")).stdout.decode())
    assert info == EXPECTED["hll"][name]
