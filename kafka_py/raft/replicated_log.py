"""Port of raft/src/main/java/org/apache/kafka/raft/ReplicatedLog.java (Kafka 3.0.0).

The log a raft node replicates, as the raft client needs it: append as leader (stamping
the epoch) or as follower (batches as the leader wrote them), read from an offset, know the
end offset and the epoch of the last record, find where an epoch ends, truncate, keep the
high watermark, flush. Core's KafkaMetadataLog implements it over log/log.py's Log, whose
leader-epoch cache answers ``end_offset_for_epoch``; the tests use an in-memory log.

Epochs start at 1. An empty log's last fetched epoch is 0, the "primordial" epoch, which
never has a leader or records.

``validate_offset_and_epoch`` and ``truncate_to_end_offset`` are Kafka's default methods,
the log-reconciliation rules: the leader answers a follower's (fetch offset, last fetched
epoch) with the position both logs share when they differ, and the follower truncates to
that position.

Snapshots (KIP-630, Kafka 3.0): a snapshot, named by its id (the end offset it covers and
that offset's epoch), replaces the log up to that offset. ``create_new_snapshot`` starts one
at a committed position of this log; ``store_snapshot`` one fetched from the leader, which
may lie past this log's end. Once a snapshot exists the log start may move up to it
(``delete_before_snapshot``, called by ``maybe_clean`` when the retention limits are passed),
and a position before the log start is answered SNAPSHOT by ``validate_offset_and_epoch``:
the fetcher must fetch the latest snapshot first. ``truncate_to_latest_snapshot`` empties the
log when the latest snapshot lies past its end (a follower that has just fetched one).
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_fetch_info import LogFetchInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpoch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter

logger = logging.getLogger(__name__)


class ReplicatedLog(ABC):
    @abstractmethod
    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        """Append ``records`` (one or more batches) at the log end with leader epoch ``epoch``,
        all or nothing. Raises ValueError for an empty set, and an error when the first batch's
        base offset is not the log end."""

    @abstractmethod
    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """Append batches replicated from the leader, keeping their offsets and epochs."""

    @abstractmethod
    def read(self, start_offset_inclusive: int, isolation: Isolation) -> LogFetchInfo:
        """Whole batches from ``start_offset_inclusive`` up to the log end (UNCOMMITTED) or the
        high watermark (COMMITTED)."""

    @abstractmethod
    def last_fetched_epoch(self) -> int:
        """The epoch of the last record, 0 for an empty log."""

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """Is (``offset``, ``epoch`` of the record before it) a position of this log? If not,
        the largest position at or below it that is (DIVERGING)."""
        if self.start_offset() == 0 and offset == 0:
            return ValidOffsetAndEpoch.valid(OffsetAndEpoch(0, 0))
        earliest_snapshot_id = self.earliest_snapshot_id()
        if earliest_snapshot_id is not None and (
                offset < self.start_offset()
                or (offset == self.start_offset() and epoch != earliest_snapshot_id.epoch)
                or epoch < earliest_snapshot_id.epoch):
            # The fetcher's position is not in this log (before its start, or at its start in
            # another epoch, or in an epoch the log no longer holds): it must load a snapshot,
            # the latest one, since it covers everything the older ones do.
            latest_snapshot_id = self.latest_snapshot_id()
            if latest_snapshot_id is None:
                raise RuntimeError(f"Log start offset ({self.start_offset()}) is greater than zero but latest "
                                   f"snapshot was not found")
            return ValidOffsetAndEpoch.snapshot(latest_snapshot_id)
        end_offset_and_epoch = self.end_offset_for_epoch(epoch)
        if end_offset_and_epoch.epoch != epoch or end_offset_and_epoch.offset < offset:
            return ValidOffsetAndEpoch.diverging(end_offset_and_epoch)
        return ValidOffsetAndEpoch.valid(OffsetAndEpoch(offset, epoch))

    @abstractmethod
    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The largest epoch at most ``epoch`` in this log, and the offset where it ends (the
        start of the next epoch, or the log end)."""

    @abstractmethod
    def end_offset(self) -> LogOffsetMetadata:
        """One past the last record; the start offset when the log is empty."""

    @abstractmethod
    def high_watermark(self) -> LogOffsetMetadata:
        ...

    @abstractmethod
    def start_offset(self) -> int:
        ...

    @abstractmethod
    def initialize_leader_epoch(self, epoch: int) -> None:
        """Record that ``epoch`` starts at the current log end (called on becoming leader), so
        ``end_offset_for_epoch`` can answer for every earlier epoch."""

    @abstractmethod
    def truncate_to(self, offset: int) -> None:
        """Remove every record at ``offset`` and above."""

    @abstractmethod
    def truncate_to_latest_snapshot(self) -> bool:
        """Empty the log and start it at the latest snapshot's end offset if that snapshot lies
        past the log end (or in a later epoch); True if it did."""

    @abstractmethod
    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        ...

    @abstractmethod
    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Move the log start up to ``snapshot_id`` (a snapshot of this log, not past the latest)
        and forget the older snapshots and segments; True if the start moved."""

    @abstractmethod
    def maybe_clean(self) -> bool:
        """Apply the retention limits to the snapshots and the log; True if anything went."""

    @abstractmethod
    def flush(self) -> None:
        ...

    @abstractmethod
    def last_flushed_offset(self) -> int:
        ...

    @abstractmethod
    def topic_partition(self) -> TopicPartition:
        ...

    def truncate_to_end_offset(self, end_offset: OffsetAndEpoch) -> int:
        """Truncate to the diverging position a leader sent; returns the truncation offset."""
        leader_epoch = end_offset.epoch
        if leader_epoch == 0:
            truncation_offset = min(end_offset.offset, self.end_offset().offset)
        else:
            local_end_offset = self.end_offset_for_epoch(leader_epoch)
            if local_end_offset.epoch == leader_epoch:
                truncation_offset = min(local_end_offset.offset, end_offset.offset)
            else:
                truncation_offset = local_end_offset.offset
        self.truncate_to(truncation_offset)
        return truncation_offset

    @abstractmethod
    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        """A writer for a snapshot of this log at ``snapshot_id``, or None if that snapshot
        exists or lies before the log start. Raises ValueError if ``snapshot_id`` is past the
        high watermark or not a position of this log. The caller closes the writer."""

    @abstractmethod
    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        """A writer for a snapshot from a trusted source (the leader), not checked against this
        log; None if it exists already."""

    @abstractmethod
    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotReader]:
        ...

    def latest_snapshot(self) -> Optional[RawSnapshotReader]:
        snapshot_id = self.latest_snapshot_id()
        return None if snapshot_id is None else self.read_snapshot(snapshot_id)

    @abstractmethod
    def latest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        ...

    @abstractmethod
    def earliest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        """The oldest snapshot kept; when the log start is above zero, the one at the log start."""

    @abstractmethod
    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        """A snapshot writer of this log has frozen ``snapshot_id``: it is now readable."""

    def close(self) -> None:
        pass
