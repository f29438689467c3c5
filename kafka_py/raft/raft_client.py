"""Port of raft/src/main/java/org/apache/kafka/raft/RaftClient.java (Kafka 2.8.2), with
Kafka 3.0.0's snapshots.

What the metadata layer sees of raft: register a Listener, append records while leader,
learn the current leader, shut down. A Listener is told of every committed batch
(``handle_commit``), of becoming leader once it has seen everything committed before the
new epoch began (``handle_claim``), and of stepping down (``handle_resign``).

Snapshots (KIP-630, Kafka 3.0): ``create_snapshot`` gives the state machine a writer for a
snapshot of its state at a committed offset; ``handle_snapshot`` hands a listener a snapshot
to load, replacing its state, when the records it would read next are no longer in the log
(on startup after the log start moved, or on a follower that fetched a snapshot).
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Generic, Optional, Sequence, TypeVar

from kafka_py.raft.batch_reader import BatchReader
from kafka_py.raft.internals.completable_future import CompletableFuture
from kafka_py.raft.leader_and_epoch import LeaderAndEpoch

if TYPE_CHECKING:
    from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
    from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Listener(ABC, Generic[T]):
    @abstractmethod
    def handle_commit(self, reader: BatchReader[T]) -> None:
        """Committed batches, in log order. The listener must close ``reader`` when done.

        Batches need not match appends one to one; an atomic append is always inside one batch.
        """

    def handle_snapshot(self, reader: "SnapshotReader[T]") -> None:
        """Replace the state with the snapshot's records; the next commit handed over follows
        the snapshot's end offset. The listener must close ``reader`` when done."""
        reader.close()
        raise NotImplementedError(f"{type(self).__name__} cannot load snapshot {reader.snapshot_id()}")

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

    def resign(self, epoch: int) -> None:
        """Give up the leadership of ``epoch`` (Kafka 3.x's RaftClient.resign): the leader
        resigns as at shutdown and the voters elect a leader of a later epoch, which may be
        this node again. A call for an epoch already over does nothing."""
        raise NotImplementedError

    @abstractmethod
    def shutdown(self, timeout_ms: int) -> CompletableFuture[None]:
        """Begin a graceful shutdown: a leader resigns so the others elect a successor at
        once. The future completes when done, or fails when ``timeout_ms`` passes first."""

    def create_snapshot(self, committed_offset: int, committed_epoch: int,
                        last_contained_log_time: int) -> Optional["SnapshotWriter[T]"]:
        """A writer for the snapshot whose last record is the committed ``committed_offset`` (of
        epoch ``committed_epoch``, appended at ``last_contained_log_time``); None if that snapshot
        exists already. The caller freezes (or abandons) and closes it."""
        raise NotImplementedError

    def close(self) -> None:
        pass
