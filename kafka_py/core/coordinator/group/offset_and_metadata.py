"""Port of core/src/main/scala/kafka/common/OffsetAndMetadata.scala (Kafka 2.8.2).

A committed offset as the coordinator keeps it: the offset, the leader epoch of the record
it follows (None when the client sent none), the client's metadata string, when it was
committed and, only for commits made with an explicit retention (OffsetCommit v1-v4
``retention_time``), when it expires.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

NO_METADATA = ""


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: Optional[int]
    metadata: str
    commit_timestamp: int
    expire_timestamp: Optional[int] = None

    @classmethod
    def of(cls, offset: int, metadata: str = NO_METADATA, commit_timestamp: int = -1,
           expire_timestamp: Optional[int] = None) -> "OffsetAndMetadata":
        return cls(offset, None, metadata, commit_timestamp, expire_timestamp)

    def __str__(self) -> str:
        return (f"OffsetAndMetadata(offset={self.offset}, leaderEpoch={self.leader_epoch}, "
                f"metadata={self.metadata}, commitTimestamp={self.commit_timestamp}, "
                f"expireTimestamp={self.expire_timestamp})")


__all__ = ["NO_METADATA", "OffsetAndMetadata"]
