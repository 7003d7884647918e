"""The byte layouts of src/format.h, read from the header itself, so that
the Python tests name the same offsets as the library instead of copies."""
import os
import re

_HEADER = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "src", "format.h")


def _defines(path):
    values = {}
    for name, value in re.findall(r"^#define (SK_\w+) (\d+|0x[0-9a-fA-F]+|\"\w+\")\s*$",
                                  open(path).read(), re.M):
        values[name] = value.strip('"').encode() if value.startswith('"') else int(value, 0)
    return values


FORMAT = _defines(_HEADER)
