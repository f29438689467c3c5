"""Port of raft/src/main/java/org/apache/kafka/raft/BatchReader.java (Kafka 2.8.2).

How committed records reach a RaftClient.Listener: an iterator of batches, each with its
base offset, leader epoch and decoded records. The listener must ``close`` every reader it
is given; only then does the client know how far the listener has read and hand it more,
which lets a slow state machine read at its own pace without holding up replication.

A Batch carries Kafka 3.0.0's append timestamp and size in bytes as well.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Generic, Optional, Sequence, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Batch(Generic[T]):
    base_offset: int
    epoch: int
    records: Sequence[T]
    # Kafka 3.0's: the batch's append time and encoded size (the controller counts the bytes
    # it has read since its last snapshot); -1 and 0 where they are not known.
    append_timestamp: int = -1
    size_in_bytes: int = 0

    def last_offset(self) -> int:
        return self.base_offset + len(self.records) - 1

    def __str__(self) -> str:
        return f"Batch(baseOffset={self.base_offset}, epoch={self.epoch}, records={list(self.records)})"


class BatchReader(ABC, Generic[T], Iterator[Batch[T]]):
    Batch = Batch

    @abstractmethod
    def base_offset(self) -> int:
        """The offset the reader starts at (fixed when it is made)."""

    @abstractmethod
    def last_offset(self) -> Optional[int]:
        """The last offset the reader covers, if known yet (a reader over log bytes only knows
        it once read to the end and closed)."""

    @abstractmethod
    def has_next(self) -> bool:
        ...

    @abstractmethod
    def next(self) -> Batch[T]:
        ...

    @abstractmethod
    def close(self) -> None:
        """Tell the client the listener is done with this reader."""

    def __iter__(self) -> "BatchReader[T]":
        return self

    def __next__(self) -> Batch[T]:
        if not self.has_next():
            raise StopIteration
        return self.next()

    def __enter__(self) -> "BatchReader[T]":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
