"""Port of core/src/main/scala/kafka/raft/KafkaMetadataLog.scala (Kafka 2.8.2).

The raft client's ReplicatedLog over the broker's own Log (log/log.py): the metadata
partition ``@metadata-0`` is an ordinary segmented log in the metadata log dir, written in
Kafka's on-disk format, whose leader-epoch cache answers ``end_offset_for_epoch``.

* Appends as leader go through ``Log.append_as_leader`` with the RaftLeader origin: the raft
  client has already assigned offsets and stamped each batch with its epoch, so the log only
  checks the batches and that every batch carries the leader's epoch. Appends as follower keep
  the leader's offsets and epochs.
* Reads return whole batches from an offset, up to the log end (what a follower fetches) or
  the high watermark (what listeners read), at most ``max_fetch_size_in_bytes`` but always at
  least one batch. Log.read answers with a slice of the segment file; the raft client works on
  MemoryRecords (it decodes committed batches for its listeners and copies fetched batches into
  its Fetch answers), so the slice is read into memory here.
* Offsets carry a SegmentPosition, so the high watermark the client sets keeps its segment and
  position.
* The log is opened as after an unclean shutdown (recovery point 0), as Kafka 2.8.2 does: the
  metadata log is small and every start checks all of it.

KIP-630's snapshots (create, read, delete before, truncate to the latest) are Kafka 3.0's and
not part of the ReplicatedLog of this port.
"""
from __future__ import annotations

import logging
import os
from typing import Optional

from kafka_py.common.errors import KafkaException
from kafka_py.common.topic_partition import TopicPartition
from kafka_py.log.log import Log
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.log.log_offset_metadata import LogOffsetMetadata as LogLogOffsetMetadata
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_fetch_info import LogFetchInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.replicated_log import ReplicatedLog
from kafka_py.raft.segment_position import SegmentPosition
from kafka_py.record.memory_records import MemoryRecords
from kafka_py.utils.java_limits import INT_MAX
from kafka_py.utils.time import Time

logger = logging.getLogger(__name__)

# Kafka's KafkaRaftServer.MetadataTopic and MetadataPartition: the one partition the KRaft
# quorum replicates. Its name starts with '@', which no client topic may, so it can never
# clash with a topic. The one home of the name: log/log_manager.py and server/kafka_raft_server.py
# take it from here.
METADATA_TOPIC = "@metadata"
METADATA_PARTITION = TopicPartition(METADATA_TOPIC, 0)


class KafkaMetadataLog(ReplicatedLog):
    def __init__(self, log: Log, topic_partition: TopicPartition, max_fetch_size_in_bytes: int) -> None:
        self._log = log
        self._topic_partition = topic_partition
        self._max_fetch_size_in_bytes = max_fetch_size_in_bytes

    @classmethod
    def apply(cls, topic_partition: TopicPartition, data_dir: str, time: Time, scheduler,
              max_batch_size_in_bytes: int, max_fetch_size_in_bytes: int) -> "KafkaMetadataLog":
        """Open (recovering) the log in ``data_dir`` (Kafka's KafkaMetadataLog.apply)."""
        # A batch of the largest size the raft client builds must pass the log's size check.
        config = LogConfig(max_message_size=max_batch_size_in_bytes)
        from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel

        log = Log(os.fspath(data_dir), config, log_start_offset=0, recovery_point=0, scheduler=scheduler,
                  time=time, max_producer_id_expiration_ms=INT_MAX,
                  producer_id_expiration_check_interval_ms=INT_MAX, topic_partition=topic_partition,
                  log_dir_failure_channel=LogDirFailureChannel(5), had_clean_shutdown=False)
        return cls(log, topic_partition, max_fetch_size_in_bytes)

    @property
    def log(self) -> Log:
        return self._log

    # ---- reads ------------------------------------------------------------------------
    def read(self, start_offset_inclusive: int, isolation: Isolation) -> LogFetchInfo:
        if isolation is Isolation.COMMITTED:
            fetch_isolation = FetchIsolation.HIGH_WATERMARK
        elif isolation is Isolation.UNCOMMITTED:
            fetch_isolation = FetchIsolation.LOG_END
        else:
            raise ValueError(f"Unhandled read isolation {isolation}")
        fetch_info = self._log.read(start_offset_inclusive, max_length=self._max_fetch_size_in_bytes,
                                    isolation=fetch_isolation, min_one_message=True)
        return LogFetchInfo(_in_memory(fetch_info.records), _raft_offset_metadata(fetch_info.fetch_offset_metadata))

    # ---- appends ----------------------------------------------------------------------
    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        if records.size_in_bytes == 0:
            raise ValueError("Attempt to append an empty record set")
        return self._handle_and_convert_log_append_info(
            self._log.append_as_leader(records, leader_epoch=epoch, origin=AppendOrigin.RAFT_LEADER))

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        if records.size_in_bytes == 0:
            raise ValueError("Attempt to append an empty record set")
        return self._handle_and_convert_log_append_info(self._log.append_as_follower(records))

    def _handle_and_convert_log_append_info(self, append_info) -> LogAppendInfo:
        first_offset = append_info.first_offset
        if first_offset is None or append_info.shallow_count == 0:
            raise KafkaException(f"Append failed unexpectedly: {append_info.error_message}")
        if first_offset.relative_position_in_segment == 0:
            # The append opened a new segment: a chance for retention to drop old ones.
            self._log.delete_old_segments()
        return LogAppendInfo(first_offset.message_offset, append_info.last_offset)

    # ---- epochs and offsets -----------------------------------------------------------
    def last_fetched_epoch(self) -> int:
        latest = self._log.latest_epoch
        return 0 if latest is None else latest

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        found = self._log.end_offset_for_epoch(epoch)
        if found is None:
            # An epoch past the latest one (or an empty cache): the whole log is in that epoch's past.
            return OffsetAndEpoch(self.end_offset().offset, self.last_fetched_epoch())
        end_offset, found_epoch = found
        return OffsetAndEpoch(end_offset, found_epoch)

    def end_offset(self) -> LogOffsetMetadata:
        return _raft_offset_metadata(self._log.log_end_offset_metadata)

    def start_offset(self) -> int:
        return self._log.log_start_offset

    def truncate_to(self, offset: int) -> None:
        self._log.truncate_to(offset)

    def initialize_leader_epoch(self, epoch: int) -> None:
        self._log.maybe_assign_epoch_start_offset(epoch, self._log.log_end_offset)

    # ---- high watermark ---------------------------------------------------------------
    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        position = offset_metadata.metadata
        if isinstance(position, SegmentPosition):
            self._log.update_high_watermark(LogLogOffsetMetadata(offset_metadata.offset, position.base_offset,
                                                                 position.relative_position))
        else:
            self._log.update_high_watermark(offset_metadata.offset)

    def high_watermark(self) -> LogOffsetMetadata:
        hwm = self._log.fetch_offset_snapshot().high_watermark
        # Kafka 2.8.2 attaches the position only when it is unknown (an inverted test); the
        # position is passed on here when the log knows it, which is what the metadata is for.
        position: Optional[SegmentPosition] = None
        if not hwm.message_offset_only:
            position = SegmentPosition(hwm.segment_base_offset, hwm.relative_position_in_segment)
        return LogOffsetMetadata(hwm.message_offset, position)

    # ---- durability -------------------------------------------------------------------
    def flush(self) -> None:
        self._log.flush()

    def last_flushed_offset(self) -> int:
        return self._log.recovery_point

    def topic_partition(self) -> TopicPartition:
        return self._topic_partition

    def close(self) -> None:
        self._log.close()

    def __repr__(self) -> str:
        return f"KafkaMetadataLog(topicPartition={self._topic_partition}, dir={self._log.dir})"


def _raft_offset_metadata(metadata: LogLogOffsetMetadata) -> LogOffsetMetadata:
    return LogOffsetMetadata(metadata.message_offset,
                             SegmentPosition(metadata.segment_base_offset, metadata.relative_position_in_segment))


def _in_memory(records) -> MemoryRecords:
    """The batches of a read as MemoryRecords: a FileRecords slice is read from the segment."""
    if isinstance(records, MemoryRecords):
        return records
    size = records.size_in_bytes()
    if size == 0:
        return MemoryRecords.EMPTY
    return records.read_into(bytearray(size), 0)
