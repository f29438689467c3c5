"""Port of metadata/src/main/java/org/apache/kafka/metalog/MetaLogManager.java.

Stores the metadata records and elects the leader that may write them. The contract is
Kafka's: a write is only scheduled, never confirmed or refused directly; the writer
learns it succeeded when the log's committed offset (handle_commits) reaches the offset
schedule_write returned, before its leadership ended (handle_renounce / a new leader).
"""
from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Optional, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener

if TYPE_CHECKING:
    from kafka_py.raft.snapshot.snapshot_writer import SnapshotWriter


class MetaLogManager(abc.ABC):
    @abc.abstractmethod
    def initialize(self) -> None:
        """Start the manager; it accepts calls once this returns. Called once."""

    @abc.abstractmethod
    def register(self, listener: MetaLogListener) -> None:
        """Add a listener, ready for calls at once. The manager must be initialized."""

    @abc.abstractmethod
    def schedule_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        """Schedule ``batch`` for writing as leader of ``epoch``; the offset its last record
        will have. Raises ValueError when the batch cannot be buffered (back off)."""

    @abc.abstractmethod
    def schedule_atomic_write(self, epoch: int, batch: Sequence[ApiMessageAndVersion]) -> int:
        """As schedule_write, but the records are appended together or not at all."""

    @abc.abstractmethod
    def renounce(self, epoch: int) -> None:
        """Give up the leadership of ``epoch``; ignored if that is not the current epoch."""

    @abc.abstractmethod
    def leader(self) -> MetaLogLeader:
        """The current leader, as far as this node knows; it may change at any time."""

    @abc.abstractmethod
    def node_id(self) -> int:
        """This node's id."""

    def create_snapshot(self, committed_offset: int, committed_epoch: int,
                        last_contained_log_time: int) -> Optional["SnapshotWriter[ApiMessageAndVersion]"]:
        """A writer for a snapshot ending with the committed ``committed_offset`` (Kafka 3.0's
        RaftClient.createSnapshot); None when the log keeps no snapshots or has this one."""
        return None
