"""Port of raft/src/main/java/org/apache/kafka/raft/OffsetAndEpoch.java (Kafka 2.8.2).

An offset paired with the leader epoch it belongs to. Ordering compares the epoch first
and the offset second: that is how a voter decides whether a candidate's log is at least
as up to date as its own (a later epoch wins regardless of length).
"""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@functools.total_ordering
@dataclass(frozen=True, slots=True)
class OffsetAndEpoch:
    offset: int
    epoch: int

    def compare_to(self, other: "OffsetAndEpoch") -> int:
        """Java's compareTo: negative, zero or positive."""
        mine, theirs = (self.epoch, self.offset), (other.epoch, other.offset)
        return (mine > theirs) - (mine < theirs)

    def __lt__(self, other: "OffsetAndEpoch") -> bool:
        if not isinstance(other, OffsetAndEpoch):
            return NotImplemented
        return (self.epoch, self.offset) < (other.epoch, other.offset)

    def __str__(self) -> str:
        return f"OffsetAndEpoch(offset={self.offset}, epoch={self.epoch})"
