"""The bounds of Java's short, int and long: Short/Integer/Long.MIN_VALUE and MAX_VALUE
(Scala's Short/Int/Long.MinValue and MaxValue), one home for every module that ports them.

Kafka uses them as defaults ("no limit": Long.MaxValue for a quota or a flush interval),
as sentinels, and as the range a field of that type can hold (an offset relative to a
segment's base, a producer epoch, a value parsed as a Java int). A constant with a Kafka
name of its own (MetadataResponse.AUTHORIZED_OPERATIONS_OMITTED, a config's default)
keeps that name where it lives and takes its value from here.
"""
from __future__ import annotations

SHORT_MIN = -(2**15)
SHORT_MAX = 2**15 - 1
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1

__all__ = ["SHORT_MIN", "SHORT_MAX", "INT_MIN", "INT_MAX", "LONG_MIN", "LONG_MAX"]
