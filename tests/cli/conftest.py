"""Fixtures for the tests of the `sketch` command; see sketch_cli_helpers.py
for the conventions the tests rely on and for how the binary is found
($SKETCH_BIN, else /work/main/build/cli/sketch)."""
import os

import pytest

from sketch_cli_helpers import SKETCH_BIN, Sketch


@pytest.fixture(scope="session")
def sk():
    if not (os.path.isfile(SKETCH_BIN) and os.access(SKETCH_BIN, os.X_OK)):
        pytest.fail(f"sketch binary not found or not executable: {SKETCH_BIN} "
                    "(build it, or set SKETCH_BIN)", pytrace=False)
    return Sketch(SKETCH_BIN)
