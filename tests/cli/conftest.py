# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the tests of the `sketch` command; see sketch_cli_helpers.py
for the conventions the tests rely on and for how the binary is found
($SKETCH_BIN, else /work/main/build/cli/sketch).

SKETCH_CLI_WRAPPER, when set, is a command line that every run of the
binary goes through, e.g.
    SKETCH_CLI_WRAPPER="valgrind -q --vgdb=no --error-exitcode=97 --leak-check=full"
so that a memory error or leak fails the test that caused it (the wrapper's
error exit code differs from the command's 0, 1 and 2). The tests then run
a small script that execs the wrapper with the real binary."""
import os
import shlex
import shutil
import stat
import sys
import tempfile

import pytest

# tests/common: what the suites share (format_h, the byte layouts of src/common/format.h).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))

from sketch_cli_helpers import SKETCH_BIN, Sketch


@pytest.fixture(scope="session")
def sk():
    if not (os.path.isfile(SKETCH_BIN) and os.access(SKETCH_BIN, os.X_OK)):
        pytest.fail(f"sketch binary not found or not executable: {SKETCH_BIN} "
                    "(build it, or set SKETCH_BIN)", pytrace=False)
    wrapper = os.environ.get("SKETCH_CLI_WRAPPER", "").strip()
    if not wrapper:
        yield Sketch(SKETCH_BIN)
        return
    # A directory, script and copy of the binary that any user may read and
    # run: some tests run the command as the user nobody, who may not be able
    # to reach the build tree (a checkout under a mode-0700 directory).
    directory = tempfile.mkdtemp(prefix="sketch-wrapper-")
    everyone = (stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH
                | stat.S_IXOTH)
    try:
        os.chmod(directory, 0o755)
        binary = os.path.join(directory, "sketch-under-test")
        shutil.copy(SKETCH_BIN, binary)
        os.chmod(binary, everyone)
        script = os.path.join(directory, "sketch")
        with open(script, "w") as f:
            f.write("#!/bin/sh\nexec %s %s \"$@\"\n"
                    % (" ".join(shlex.quote(w) for w in shlex.split(wrapper)),
                       shlex.quote(binary)))
        os.chmod(script, everyone)
        yield Sketch(script)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
