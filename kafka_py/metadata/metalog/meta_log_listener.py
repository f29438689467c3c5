"""Port of metadata/src/main/java/org/apache/kafka/metalog/MetaLogListener.java.

What a MetaLogManager tells the component that registered with it. The calls come from
the manager's own thread, so a listener hands them to its own thread (the quorum
controller queues an event for each).

``handle_commit_batch`` and ``handle_snapshot`` carry what Kafka 3.0.0's RaftClient.Listener
adds (a batch's append time and size; snapshots to load).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader

if TYPE_CHECKING:
    from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
    from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader


class MetaLogListener:
    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        """``messages`` are committed; ``last_offset`` is the offset of the last one."""
        raise NotImplementedError

    def handle_commit_batch(self, last_offset: int, epoch: int, append_timestamp: int, size_in_bytes: int,
                            messages: Sequence[ApiMessage]) -> None:
        """``handle_commits`` with what Kafka 3.0's Batch also carries: the batch's epoch,
        append time and size in bytes (-1, -1 and 0 where the log does not know them)."""
        self.handle_commits(last_offset, messages)

    def handle_commits_read_to(self, last_offset: int) -> None:
        """The committed log has been handed over up to ``last_offset``, control batches (which
        carry no messages and are not handed over) included: a listener that compares its
        position with the high watermark compares this one."""

    def handle_snapshot(self, reader: "SnapshotReader[ApiMessageAndVersion]") -> None:
        """Replace the state with the snapshot's records (Kafka 3.0's handleSnapshot); commits
        that follow start at the snapshot's end offset. The listener closes ``reader``."""
        reader.close()
        raise NotImplementedError(f"{type(self).__name__} cannot load snapshot {reader.snapshot_id()}")

    def handle_new_leader(self, leader: MetaLogLeader) -> None:
        """A leader (possibly this node) has been elected for ``leader.epoch``."""

    def handle_renounce(self, epoch: int) -> None:
        """This node's leadership of ``epoch`` has ended."""

    def begin_shutdown(self) -> None:
        """The manager has shut down; the listener may shut down too."""
