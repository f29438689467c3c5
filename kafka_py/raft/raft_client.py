"""Port of raft/src/main/java/org/apache/kafka/raft/RaftClient.java (Kafka 2.8.2).

What the metadata layer sees of raft: register a Listener, append records while leader,
learn the current leader, shut down. A Listener is told of every committed batch
(``handle_commit``), of becoming leader once it has seen everything committed before the
new epoch began (``handle_claim``), and of stepping down (``handle_resign``).

Snapshots (``create_snapshot``, ``handle_snapshot``) are KIP-630's, added in Kafka 3.0 and
not part of this port.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Generic, Optional, Sequence, TypeVar

from kafka_py.raft.batch_reader import BatchReader
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.raft.leader_and_epoch import LeaderAndEpoch

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Listener(ABC, Generic[T]):
    @abstractmethod
    def handle_commit(self, reader: BatchReader[T]) -> None:
        """Committed batches, in log order. The listener must close ``reader`` when done.

        Batches need not match appends one to one; an atomic append is always inside one batch.
        """

    def handle_claim(self, epoch: int) -> None:
        """This node leads ``epoch`` and every commit before the epoch's start has been delivered;
        it may now append."""

    def handle_resign(self, epoch: int) -> None:
        """This node no longer leads ``epoch`` (the next leader may not be known yet)."""


class RaftClient(ABC, Generic[T]):
    Listener = Listener

    @abstractmethod
    def initialize(self) -> None:
        """Load the persisted state; called once at startup."""

    @abstractmethod
    def register(self, listener: Listener[T]) -> None:
        ...

    @abstractmethod
    def leader_and_epoch(self) -> LeaderAndEpoch:
        ...

    @abstractmethod
    def schedule_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        """Queue ``records`` for the log, possibly split over batches, in order. Returns the
        offset the last record is expected at, or Long.MAX_VALUE when ``epoch`` is not the
        current leader epoch (the records can never commit). Raises
        RecordBatchTooLargeException when one record does not fit a batch."""

    @abstractmethod
    def schedule_atomic_append(self, epoch: int, records: Sequence[T]) -> Optional[int]:
        """As ``schedule_append``, but all records go in one batch: all commit or none do."""

    @abstractmethod
    def shutdown(self, timeout_ms: int) -> CompletableFuture[None]:
        """Begin a graceful shutdown: a leader resigns so the others elect a successor at
        once. The future completes when done, or fails when ``timeout_ms`` passes first."""

    def close(self) -> None:
        pass
