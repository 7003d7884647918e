# SPDX-License-Identifier: BSD-3-Clause
"""The byte layouts of src/common/format.h, read from the header itself, so that
the Python tests name the same offsets as the library instead of copies."""
import os
import re

_HEADER = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "src", "common", "format.h")


def _defines(path):
    values = {}
    for name, value in re.findall(r"^#define (SK_\w+) (\w+|\"\w+\")\s*$",
                                  open(path).read(), re.M):
        if value.startswith('"'):
            values[name] = value.strip('"').encode()
        elif value in values:                  # one name defined as another
            values[name] = values[value]
        elif re.fullmatch(r"\d+|0x[0-9a-fA-F]+", value):
            values[name] = int(value, 0)
    return values


FORMAT = _defines(_HEADER)
