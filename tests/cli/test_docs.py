# SPDX-License-Identifier: BSD-3-Clause
"""sketch(1) and the bash completion, written at build time from --help:
the page renders without warnings and has a section with the text of every
subcommand's --help; the completion offers every option each --help names."""
import os
import re
import subprocess

import pytest

GROUPS = {"hll": ["add", "count", "merge", "info", "export", "fold", "compare",
                  "retention"],
          "bloom": ["create", "add", "check", "info", "merge"]}
MAN = os.environ.get("SKETCH_MAN_PAGE", "")
COMPLETION = os.environ.get("SKETCH_COMPLETION", "")


def generated(path, what):
    if not path or not os.path.isfile(path):
        pytest.fail("%s not found at %r (build the sketch_docs target; ctest sets "
                    "SKETCH_MAN_PAGE and SKETCH_COMPLETION)" % (what, path), pytrace=False)
    return path


def help_of(sk, words):
    return sk.ok(*words, "--help").stdout.decode()


def all_words():
    yield ["count"]
    yield ["top"]
    for group, subs in GROUPS.items():
        for sub in subs:
            yield [group, sub]


def test_man_page(sk):
    page = generated(MAN, "sketch(1)")
    check = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    text = subprocess.run(["groff", "-man", "-Tascii", "-P", "-cbou", page], capture_output=True,
                          text=True, check=True).stdout
    for words in all_words():
        assert ("SKETCH " + " ".join(words).upper()) in text, words
        for option in set(re.findall(r"--[a-z][a-z-]*", help_of(sk, words))):
            assert option in text, (words, option)


def complete(line_words, cword):
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=%d; _sketch; '
              'printf "%%s\\n" "${COMPREPLY[@]}"' % cword)
    out = subprocess.run(["bash", "-c", script, "bash", generated(COMPLETION, "completion")]
                         + line_words, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_completion(sk):
    assert complete(["sketch", "b"], 1) == {"bloom"}
    assert complete(["sketch", "hll", ""], 2) == set(GROUPS["hll"])
    assert complete(["sketch", "bloom", ""], 2) == set(GROUPS["bloom"])
    for words in all_words():
        offered = complete(["sketch"] + words + ["--"], len(words) + 1)
        wanted = set(re.findall(r"--[a-z][a-z-]*", help_of(sk, words))) | {"--version"}
        assert wanted <= offered, (words, wanted - offered)
