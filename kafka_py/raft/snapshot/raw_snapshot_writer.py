"""Port of raft/src/main/java/org/apache/kafka/snapshot/RawSnapshotWriter.java (Kafka 3.0.0).

The bytes of a snapshot being written: whole record batches appended in order (a snapshot
the node builds itself), or unaligned chunks of another snapshot's file (one fetched from the
leader with FetchSnapshot, whose chunks may end mid-batch). ``freeze`` makes it immutable and
visible under its final name; ``close`` without ``freeze`` abandons it.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Union

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.memory_records import MemoryRecords

logger = logging.getLogger(__name__)

# Kafka's UnalignedMemoryRecords: bytes of a snapshot file that need not end on a batch boundary.
UnalignedMemoryRecords = Union[bytes, bytearray, memoryview]


class RawSnapshotWriter(ABC):
    @abstractmethod
    def snapshot_id(self) -> OffsetAndEpoch:
        """The end offset and epoch of the snapshot."""

    @abstractmethod
    def size_in_bytes(self) -> int:
        ...

    @abstractmethod
    def append(self, records: Union[MemoryRecords, UnalignedMemoryRecords]) -> None:
        """Write all of ``records`` at the end, or raise."""

    @abstractmethod
    def is_frozen(self) -> bool:
        ...

    @abstractmethod
    def freeze(self) -> None:
        """Make the snapshot immutable and durable under its final name."""

    @abstractmethod
    def close(self) -> None:
        """Release the writer; a snapshot not frozen is discarded."""

    def __enter__(self) -> "RawSnapshotWriter":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
