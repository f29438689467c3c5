"""Port of clients/src/main/java/org/apache/kafka/common/utils/Utils.java ``abs``, the one
home for the modules that hash a key to a partition or a slot (the group and transaction
coordinators' partitionFor, the fetcher manager's fetcher id, the cleaner's offset map),
with ``to_int32``, the Java int arithmetic those hashes wrap in (also used by the
ZooKeeper data's Scala hash of a topic's assignment), and ``Utils.writeFully`` for a file
descriptor (``os.write`` may write only part of what it is given).

``Utils.loadProps`` is ported in kafka_py/core/utils/properties.py.
"""
from __future__ import annotations

import os

from kafka_py.core.utils.java_limits import INT_MIN


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: |n|, except that Integer.MIN_VALUE (whose |n| overflows) maps to 0."""
    return 0 if n == INT_MIN else abs(n)


def to_int32(n: int) -> int:
    """``n`` wrapped to a Java int, as 32-bit signed arithmetic overflows (Java's ``(int) n``)."""
    n &= 0xFFFFFFFF
    return n - 0x100000000 if n & 0x80000000 else n


def write_fully(fd: int, data) -> None:
    """Kafka's ``Utils.writeFully``: every byte of ``data`` (bytes-like) to ``fd``, however many
    ``os.write`` calls that takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


__all__ = ["to_int32", "utils_abs", "write_fully"]
