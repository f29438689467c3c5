"""Port of raft/src/main/java/org/apache/kafka/raft/ReplicatedLog.java (Kafka 2.8.2).

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
that position. The snapshot ids of KIP-630 (latest/oldest snapshot, reading and creating
snapshots, deleting before one) come with Kafka 3.0 and are not part of this interface yet;
``validate_offset_and_epoch`` is where a log start above zero would answer SNAPSHOT.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod

from kafka_py.common.topic_partition import TopicPartition
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_fetch_info import LogFetchInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpoch
from kafka_py.record.memory_records import MemoryRecords

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
        # KIP-630: with snapshots, a position before the oldest snapshot answers SNAPSHOT here.
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
    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        ...

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

    def close(self) -> None:
        pass
