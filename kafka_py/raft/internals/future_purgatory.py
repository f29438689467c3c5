"""Port of raft/src/main/java/org/apache/kafka/raft/internals/FuturePurgatory.java (Kafka 2.8.2).

Futures that wait for a value to reach a threshold (the log end for a parked Fetch, the high
watermark for an append), completed with the completion time, or failed when they expire
or when all waiting is called off (leadership lost).
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_py.raft.internals.completable_future import CompletableFuture

logger = logging.getLogger(__name__)


class FuturePurgatory(ABC):
    @abstractmethod
    def await_(self, threshold: int, max_wait_time_ms: int) -> CompletableFuture[int]:
        """A future completed once ``maybe_complete`` sees a value of at least ``threshold``; fails with
        a TimeoutException after ``max_wait_time_ms``."""

    @abstractmethod
    def maybe_complete(self, value: int, current_time_ms: int) -> None:
        """Complete every waiting future whose threshold is at most ``value``, on this thread."""

    @abstractmethod
    def complete_all(self, current_time_ms: int) -> None:
        ...

    @abstractmethod
    def complete_all_exceptionally(self, exception: BaseException) -> None:
        ...

    @abstractmethod
    def num_waiting(self) -> int:
        ...
