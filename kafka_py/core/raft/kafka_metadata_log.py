"""Port of core/src/main/scala/kafka/raft/KafkaMetadataLog.scala (Kafka 3.0.0).

The raft client's ReplicatedLog over the broker's own Log (log/log.py): the metadata
partition ``@metadata-0`` is an ordinary segmented log in the metadata log dir, written in
Kafka's on-disk format, whose leader-epoch cache answers ``end_offset_for_epoch``.

* Appends as leader go through ``Log.append_as_leader`` with the RaftLeader origin: the raft
  client has already assigned offsets and stamped each batch with its epoch, so the log only
  checks the batches and that every batch carries the leader's epoch. Appends as follower keep
  the leader's offsets and epochs.
* Reads return whole batches from an offset, up to the log end (what a follower fetches) or
  the high watermark (what listeners read), at most ``max_fetch_size_in_bytes`` but always at
  least one batch; an offset below the log start is refused (OffsetOutOfRangeException). Log.read
  answers with a slice of the segment file; the raft client works on MemoryRecords, so the
  slice is read into memory here.
* Offsets carry a SegmentPosition, so the high watermark the client sets keeps its segment and
  position.
* The log is opened as after an unclean shutdown (recovery point 0), as Kafka does: the
  metadata log is small and every start checks all of it.

Snapshots (KIP-630) live in the partition directory beside the segments
(``<end offset>-<epoch>.checkpoint``, kafka_py/raft/snapshot/). The log keeps a sorted map of the
snapshot ids it holds, each with its reader once opened; the map is shared with the thread
that writes the controller's snapshots (``on_snapshot_frozen``), so it is guarded by a lock.
At startup the directory is scanned: ``.part`` files (snapshots that never finished) and
``.deleted`` ones are removed, and the log is emptied up to the latest snapshot if that lies
past its end (a follower that crashed between fetching a snapshot and truncating).

The log start moves only onto a snapshot (``delete_before_snapshot``): segments wholly below
it are deleted and older snapshots are renamed ``.deleted`` and removed after
``file.delete.delay.ms``. ``maybe_clean``, which the raft client runs every minute, does
that while ``metadata.max.retention.bytes`` (the log's size plus the snapshots') or
``metadata.max.retention.ms`` (the age of a snapshot's last record) is exceeded, always
keeping the latest snapshot. Segments roll at ``metadata.log.segment.bytes`` and
``metadata.log.segment.ms``. The Log's own time and size retention is off (retention.ms -1,
as Kafka 3.3 set it, since 3.0.0 could delete segments no snapshot covered yet), so nothing
but a snapshot ever moves the log start.
"""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

from kafka_py.clients.common.errors import InvalidConfigurationException, KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import Log
from kafka_py.log.log_append_info import LogStartOffsetIncrementReason
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.log.log_offset_metadata import LogOffsetMetadata as LogLogOffsetMetadata
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.raft.control_record_utils import deserialized_snapshot_header_record
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_fetch_info import LogFetchInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.replicated_log import ReplicatedLog
from kafka_py.core.raft.segment_position import SegmentPosition
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpochType
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot import snapshots
from kafka_py.raft.snapshot.file_raw_snapshot_reader import FileRawSnapshotReader
from kafka_py.raft.snapshot.file_raw_snapshot_writer import FileRawSnapshotWriter
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

# Kafka's KafkaRaftServer.MetadataTopic and MetadataPartition: the one partition the KRaft
# quorum replicates. Its name starts with '@', which no client topic may, so it can never
# clash with a topic. The one home of the name: log/log_manager.py and server/kafka_raft_server.py
# take it from here.
METADATA_TOPIC = "@metadata"
METADATA_PARTITION = TopicPartition(METADATA_TOPIC, 0)


@dataclass(frozen=True, slots=True)
class MetadataLogConfig:
    """Kafka 3.0's MetadataLogConfig: the metadata.log.* and metadata.max.retention.* settings."""
    log_segment_bytes: int = 1024 * 1024 * 1024
    log_segment_min_bytes: int = 8 * 1024 * 1024
    log_segment_millis: int = 7 * 24 * 60 * 60 * 1000
    retention_max_bytes: int = -1
    retention_millis: int = 7 * 24 * 60 * 60 * 1000
    max_batch_size_in_bytes: int = 8 * 1024 * 1024
    max_fetch_size_in_bytes: int = 8 * 1024 * 1024
    file_delete_delay_ms: int = 60000
    node_id: int = -1

    @classmethod
    def from_config(cls, config: Any, max_batch_size_in_bytes: int, max_fetch_size_in_bytes: int
                    ) -> "MetadataLogConfig":
        """From a KafkaConfig (Kafka's MetadataLogConfig.apply)."""
        return cls(config.metadata_log_segment_bytes, config.metadata_log_segment_min_bytes,
                   config.metadata_log_segment_millis, config.metadata_retention_bytes,
                   config.metadata_retention_millis, max_batch_size_in_bytes, max_fetch_size_in_bytes,
                   LogConfig().file_delete_delay_ms, config.node_id)


class KafkaMetadataLog(ReplicatedLog):
    def __init__(self, log: Log, time: Time, scheduler: Any, snapshots: dict[OffsetAndEpoch,
                 Optional[FileRawSnapshotReader]], topic_partition: TopicPartition,
                 config: MetadataLogConfig) -> None:
        self._log = log
        self._time = time
        self._scheduler = scheduler
        self._topic_partition = topic_partition
        self._config = config
        # Snapshot id -> its reader once opened. The controller's snapshot thread adds to it
        # (on_snapshot_frozen) while the raft thread reads it, hence the lock; a re-entrant one,
        # as Scala's ``synchronized`` is, since the cleaning methods call each other under it.
        self._snapshots_lock = threading.RLock()
        self._snapshots = snapshots
        self.logger = IdentLogger(logger, f"[MetadataLog partition={topic_partition}, nodeId={config.node_id}] ")

    @classmethod
    def apply(cls, topic_partition: TopicPartition, data_dir: str, time: Time, scheduler: Any,
              config: Optional[MetadataLogConfig] = None, *, max_batch_size_in_bytes: Optional[int] = None,
              max_fetch_size_in_bytes: Optional[int] = None) -> "KafkaMetadataLog":
        """Open (recovering) the log and its snapshots in ``data_dir`` (Kafka's KafkaMetadataLog.apply)."""
        if config is None:
            config = MetadataLogConfig()
        if max_batch_size_in_bytes is not None or max_fetch_size_in_bytes is not None:
            config = replace(config,
                             max_batch_size_in_bytes=(config.max_batch_size_in_bytes if max_batch_size_in_bytes is None
                                                      else max_batch_size_in_bytes),
                             max_fetch_size_in_bytes=(config.max_fetch_size_in_bytes if max_fetch_size_in_bytes is None
                                                      else max_fetch_size_in_bytes))
        if config.log_segment_bytes < config.log_segment_min_bytes:
            raise InvalidConfigurationException(
                f"Cannot set metadata.log.segment.bytes below {config.log_segment_min_bytes}")
        # A batch of the largest size the raft client builds must pass the log's size check.
        # Retention by time and size is off: only a snapshot may move the log start.
        log_config = LogConfig(max_message_size=config.max_batch_size_in_bytes,
                               segment_size=config.log_segment_bytes, segment_ms=config.log_segment_millis,
                               file_delete_delay_ms=config.file_delete_delay_ms, retention_ms=-1,
                               retention_size=-1)
        from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel

        log = Log(os.fspath(data_dir), log_config, log_start_offset=0, recovery_point=0, scheduler=scheduler,
                  time=time, max_producer_id_expiration_ms=INT_MAX,
                  producer_id_expiration_check_interval_ms=INT_MAX, topic_partition=topic_partition,
                  log_dir_failure_channel=LogDirFailureChannel(5), had_clean_shutdown=False)
        metadata_log = cls(log, time, scheduler, _recover_snapshots(log), topic_partition, config)
        if config.log_segment_min_bytes != MetadataLogConfig().log_segment_min_bytes:
            metadata_log.logger.error("Overriding metadata.log.segment.min.bytes is only supported for testing. "
                                      "Setting this value too low may lead to an inability to write batches of "
                                      "metadata records.")
        # A follower that crashed after fetching a snapshot but before truncating its log.
        metadata_log.truncate_to_latest_snapshot()
        return metadata_log

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
        fetch_info = self._log.read(start_offset_inclusive, max_length=self._config.max_fetch_size_in_bytes,
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

    def _handle_and_convert_log_append_info(self, append_info: Any) -> LogAppendInfo:
        first_offset = append_info.first_offset
        if first_offset is None or append_info.shallow_count == 0:
            raise KafkaException(f"Append failed unexpectedly: {append_info.error_message}")
        return LogAppendInfo(first_offset.message_offset, append_info.last_offset)

    # ---- epochs and offsets -----------------------------------------------------------
    def last_fetched_epoch(self) -> int:
        latest = self._log.latest_epoch
        if latest is not None:
            return latest
        snapshot_id = self.latest_snapshot_id()
        if snapshot_id is None:
            return 0
        log_end_offset = self.end_offset().offset
        if snapshot_id.offset == self.start_offset() and snapshot_id.offset == log_end_offset:
            # The log is empty past a snapshot: its last record is the snapshot's.
            return snapshot_id.epoch
        raise KafkaException(f"Log doesn't have a last fetch epoch and there is a snapshot ({snapshot_id}). Expected "
                             f"the snapshot's end offset to match the log's end offset ({log_end_offset}) and the log "
                             f"start offset ({self.start_offset()})")

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        found = self._log.end_offset_for_epoch(epoch)
        if found is None:
            # An epoch past the latest one (or an empty cache): the whole log is in that epoch's past.
            return OffsetAndEpoch(self.end_offset().offset, self.last_fetched_epoch())
        end_offset, found_epoch = found
        earliest_snapshot_id = self.earliest_snapshot_id()
        if (earliest_snapshot_id is not None and end_offset == earliest_snapshot_id.offset
                and found_epoch == epoch):
            # The epoch is older than any the log still holds: the divergence point is the
            # snapshot at the log start.
            return OffsetAndEpoch(earliest_snapshot_id.offset, earliest_snapshot_id.epoch)
        return OffsetAndEpoch(end_offset, found_epoch)

    def end_offset(self) -> LogOffsetMetadata:
        return _raft_offset_metadata(self._log.log_end_offset_metadata)

    def start_offset(self) -> int:
        return self._log.log_start_offset

    def truncate_to(self, offset: int) -> None:
        high_watermark = self.high_watermark().offset
        if offset < high_watermark:
            raise ValueError(f"Attempt to truncate to offset {offset}, which is below the current high watermark "
                             f"{high_watermark}")
        self._log.truncate_to(offset)

    def truncate_to_latest_snapshot(self) -> bool:
        latest_epoch = self._log.latest_epoch or 0
        snapshot_id = self.latest_snapshot_id()
        if snapshot_id is None or not (snapshot_id.epoch > latest_epoch or
                                       (snapshot_id.epoch == latest_epoch and
                                        snapshot_id.offset > self.end_offset().offset)):
            return False
        self.logger.info("Truncating fully and starting at the latest snapshot %s", snapshot_id)
        self._log.truncate_fully_and_start_at(snapshot_id.offset)
        with self._snapshots_lock:
            forgotten = self._forget_snapshots_before(snapshot_id)
        self._remove_snapshots(forgotten)
        return True

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
        # Kafka attaches the position only when it is unknown (an inverted test); the
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

    # ---- snapshots --------------------------------------------------------------------
    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        if snapshot_id.offset < self.start_offset():
            self.logger.info("Cannot create a snapshot with an id (%s) less than the log start offset (%d)",
                             snapshot_id, self.start_offset())
            return None
        high_watermark_offset = self.high_watermark().offset
        if snapshot_id.offset > high_watermark_offset:
            raise ValueError(f"Cannot create a snapshot with an id ({snapshot_id}) greater than the high-watermark "
                             f"({high_watermark_offset})")
        valid = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if valid.type is not ValidOffsetAndEpochType.VALID:
            raise ValueError(f"Snapshot id ({snapshot_id}) is not valid according to the log: {valid}")
        return self.store_snapshot(snapshot_id)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        with self._snapshots_lock:
            if snapshot_id in self._snapshots:
                return None
        return FileRawSnapshotWriter.create(self._log.dir, snapshot_id, self)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotReader]:
        with self._snapshots_lock:
            if snapshot_id not in self._snapshots:
                return None
            reader = self._snapshots[snapshot_id]
            if reader is not None:
                return reader
            try:
                reader = FileRawSnapshotReader.open(self._log.dir, snapshot_id)
            except FileNotFoundError:
                self.logger.warning("Couldn't read %s; expected to find snapshot file %s", snapshot_id,
                                    snapshots.snapshot_path(self._log.dir, snapshot_id))
                del self._snapshots[snapshot_id]
                return None
            self._snapshots[snapshot_id] = reader
            return reader

    def latest_snapshot(self) -> Optional[RawSnapshotReader]:
        with self._snapshots_lock:
            snapshot_id = self.latest_snapshot_id()
            return None if snapshot_id is None else self.read_snapshot(snapshot_id)

    def latest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        with self._snapshots_lock:
            return max(self._snapshots, key=_snapshot_order, default=None)

    def earliest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        with self._snapshots_lock:
            return min(self._snapshots, key=_snapshot_order, default=None)

    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        with self._snapshots_lock:
            self._snapshots[snapshot_id] = None

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        """Only when ``snapshot_id`` is a snapshot of this log, above the log start and not past
        the latest snapshot, and the Log agrees to move its start there."""
        with self._snapshots_lock:
            latest_snapshot_id = self.latest_snapshot_id()
            if (latest_snapshot_id is not None and snapshot_id in self._snapshots
                    and self.start_offset() < snapshot_id.offset <= latest_snapshot_id.offset
                    and self._log.maybe_increment_log_start_offset(snapshot_id.offset,
                                                                   LogStartOffsetIncrementReason.SNAPSHOT_GENERATED)):
                self._log.delete_old_segments()
                forgotten = self._forget_snapshots_before(snapshot_id)
                deleted = True
            else:
                forgotten = {}
                deleted = False
        self._remove_snapshots(forgotten)
        return deleted

    def maybe_clean(self) -> bool:
        with self._snapshots_lock:
            did_clean = self._clean_snapshots_retention_size()
            did_clean |= self._clean_snapshots_retention_ms()
            return did_clean

    def _load_snapshot_sizes(self) -> dict[OffsetAndEpoch, int]:
        sizes = {}
        for snapshot_id in sorted(self._snapshots, key=_snapshot_order):
            reader = self.read_snapshot(snapshot_id)
            if reader is not None:
                sizes[snapshot_id] = reader.size_in_bytes()
        return sizes

    def _read_snapshot_timestamp(self, snapshot_id: OffsetAndEpoch) -> Optional[int]:
        """The header's last contained log timestamp, if the snapshot starts with one."""
        reader = self.read_snapshot(snapshot_id)
        if reader is None:
            return None
        first_batch = reader.records().first_batch()
        if first_batch is None or not first_batch.is_control_batch:
            self.logger.warning("Did not find control record at beginning of snapshot")
            return None
        header = deserialized_snapshot_header_record(next(iter(first_batch.records())))
        return header.last_contained_log_timestamp

    def _clean_snapshots(self, predicate: Callable[[OffsetAndEpoch], bool]) -> bool:
        """Oldest first, while ``predicate`` says a snapshot should go, move the log start to
        the next one. The latest snapshot always stays."""
        ordered = sorted(self._snapshots, key=_snapshot_order)
        did_clean = False
        for snapshot_id, next_snapshot_id in zip(ordered, ordered[1:]):
            if predicate(snapshot_id) and self.delete_before_snapshot(next_snapshot_id):
                did_clean = True
            else:
                return did_clean
        return did_clean

    def _clean_snapshots_retention_ms(self) -> bool:
        if self._config.retention_millis < 0:
            return False

        def should_clean(snapshot_id: OffsetAndEpoch) -> bool:
            timestamp = self._read_snapshot_timestamp(snapshot_id)
            return timestamp is not None and self._time.milliseconds() - timestamp > self._config.retention_millis

        return self._clean_snapshots(should_clean)

    def _clean_snapshots_retention_size(self) -> bool:
        if self._config.retention_max_bytes < 0:
            return False
        snapshot_sizes = self._load_snapshot_sizes()
        snapshot_total_size = [sum(snapshot_sizes.values())]

        def should_clean(snapshot_id: OffsetAndEpoch) -> bool:
            snapshot_size = snapshot_sizes.get(snapshot_id)
            if snapshot_size is None:
                return False
            if self._log.size + snapshot_total_size[0] > self._config.retention_max_bytes:
                snapshot_total_size[0] -= snapshot_size
                return True
            return False

        return self._clean_snapshots(should_clean)

    def _forget_snapshots_before(self, log_start_snapshot_id: OffsetAndEpoch
                                 ) -> dict[OffsetAndEpoch, Optional[FileRawSnapshotReader]]:
        """Drop the snapshots ordered before ``log_start_snapshot_id`` from the map; the caller
        holds the lock."""
        expired = {snapshot_id: reader for snapshot_id, reader in self._snapshots.items()
                   if _snapshot_order(snapshot_id) < _snapshot_order(log_start_snapshot_id)}
        for snapshot_id in expired:
            del self._snapshots[snapshot_id]
        return expired

    def _remove_snapshots(self, expired: dict[OffsetAndEpoch, Optional[FileRawSnapshotReader]]) -> None:
        """Rename the snapshots ``.deleted`` now; close and delete them after the file delete
        delay, so a FetchSnapshot answer still reading one can finish."""
        if not expired:
            return
        log_dir = self._log.dir
        for snapshot_id in sorted(expired, key=_snapshot_order):
            self.logger.info("Marking snapshot %s for deletion", snapshot_id)
            snapshots.mark_for_delete(log_dir, snapshot_id)

        def delete_snapshot_files() -> None:
            for snapshot_id, reader in expired.items():
                if reader is not None:
                    try:
                        reader.close()
                    except Exception:
                        self.logger.exception("Error closing snapshot reader %s", reader)
                snapshots.delete_if_exists(log_dir, snapshot_id)

        if self._scheduler is not None:
            self._scheduler.schedule("delete-snapshot-files", delete_snapshot_files,
                                     delay_ms=self._config.file_delete_delay_ms)
        else:
            delete_snapshot_files()

    def snapshot_count(self) -> int:
        with self._snapshots_lock:
            return len(self._snapshots)

    def close(self) -> None:
        self._log.close()
        with self._snapshots_lock:
            for reader in self._snapshots.values():
                if reader is not None:
                    reader.close()
            self._snapshots.clear()

    def __repr__(self) -> str:
        return f"KafkaMetadataLog(topicPartition={self._topic_partition}, dir={self._log.dir})"


def _snapshot_order(snapshot_id: OffsetAndEpoch) -> tuple[int, int]:
    # Kafka's TreeMap of snapshots orders by OffsetAndEpoch.compareTo; snapshots of one log
    # grow in offset and epoch together, and offset first is the order of their files.
    return (snapshot_id.offset, snapshot_id.epoch)


def _recover_snapshots(log: Log) -> dict[OffsetAndEpoch, Optional[FileRawSnapshotReader]]:
    """The frozen snapshots in the log's directory; partial and deleted ones, and any below the
    log start, are removed."""
    found: dict[OffsetAndEpoch, Optional[FileRawSnapshotReader]] = {}
    for name in os.listdir(log.dir):
        snapshot_path = snapshots.parse(os.path.join(log.dir, name))
        if snapshot_path is None:
            continue
        if snapshot_path.partial or snapshot_path.deleted or snapshot_path.snapshot_id.offset < log.log_start_offset:
            try:
                os.remove(snapshot_path.path)
            except FileNotFoundError:
                pass
            logger.info("Deleted unneeded snapshot file %s", snapshot_path.path)
        else:
            found[snapshot_path.snapshot_id] = None
    return found


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
