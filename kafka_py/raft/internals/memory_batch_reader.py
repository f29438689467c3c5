"""Port of raft/src/main/java/org/apache/kafka/raft/internals/MemoryBatchReader.java
(Kafka 2.8.2).

A BatchReader over batches already in memory: how the leader hands its own appended records
to its listeners once committed, without reading them back from the log.
"""
from __future__ import annotations

import logging
from typing import Generic, Optional, Sequence, TypeVar

from kafka_py.raft.batch_reader import Batch, BatchReader
from kafka_py.raft.internals.close_listener import CloseListener

logger = logging.getLogger(__name__)

T = TypeVar("T")


class MemoryBatchReader(BatchReader[T], Generic[T]):
    def __init__(self, batches: Sequence[Batch[T]], close_listener: CloseListener["BatchReader[T]"]) -> None:
        if not batches:
            raise ValueError("MemoryBatchReader requires at least one batch to iterate, but an empty list was "
                             "provided")
        self._close_listener = close_listener
        self._batches = list(batches)
        self._position = 0
        self._base_offset = self._batches[0].base_offset
        self._last_offset = self._batches[-1].last_offset()

    def has_next(self) -> bool:
        return self._position < len(self._batches)

    def next(self) -> Batch[T]:
        if not self.has_next():
            raise StopIteration
        batch = self._batches[self._position]
        self._position += 1
        return batch

    def base_offset(self) -> int:
        return self._base_offset

    def last_offset(self) -> Optional[int]:
        return self._last_offset

    def close(self) -> None:
        self._close_listener.on_close(self)
