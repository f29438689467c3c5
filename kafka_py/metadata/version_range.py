"""Port of metadata/src/main/java/org/apache/kafka/metadata/VersionRange.java.

An inclusive range of feature versions, as a broker registers what it supports.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_py.core.utils.java_limits import SHORT_MAX


@dataclass(frozen=True, slots=True)
class VersionRange:
    min: int
    max: int

    ALL: ClassVar[VersionRange]

    def contains(self, other: VersionRange) -> bool:
        """Whether every version of ``other`` is in this range."""
        return other.min >= self.min and other.max <= self.max

    def __str__(self) -> str:
        if self.min == self.max:
            return str(self.min)
        if self.max == SHORT_MAX:
            return f"{self.min}+"
        return f"{self.min}-{self.max}"


VersionRange.ALL = VersionRange(0, SHORT_MAX)
