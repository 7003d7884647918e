# SPDX-License-Identifier: BSD-3-Clause
"""sketch: fast, exact-to-theory probabilistic data structures (docs/python.md).

HyperLogLog and HyperLogLogMap count distinct items, in total and per group;
BloomFilter and CuckooFilter answer membership; CountMinSketch, TopK and
TDigest count frequencies, find the heaviest items and estimate quantiles;
WindowHyperLogLog counts distinct items over sliding windows of time, and
AgingBloomFilter answers membership within a window, forgetting older items.
Every class is a thin shell over libsketch: the same items make the same
sketch, byte for byte, as the command `sketch`, the Redis module and the
PostgreSQL extension.
"""
from . import _sketch
from ._sketch import *  # noqa: F401,F403 (the classes)
from ._sketch import __version__  # noqa: F401

__all__ = [name for name in dir(_sketch) if not name.startswith("_")]
