"""Port of raft/src/main/java/org/apache/kafka/snapshot/RawSnapshotReader.java (Kafka 3.0.0).

The bytes of a frozen snapshot: its size, an unaligned slice (what a leader sends in one
FetchSnapshot answer), and all of it as record batches (what a node loads).
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.memory_records import MemoryRecords

logger = logging.getLogger(__name__)


class RawSnapshotReader(ABC):
    @abstractmethod
    def snapshot_id(self) -> OffsetAndEpoch:
        ...

    @abstractmethod
    def size_in_bytes(self) -> int:
        ...

    @abstractmethod
    def slice(self, position: int, size: int) -> bytes:
        """At most ``size`` bytes from ``position``; the slice may end inside a batch."""

    @abstractmethod
    def records(self) -> MemoryRecords:
        """The whole snapshot as record batches."""

    def close(self) -> None:
        pass
