"""Port of core/src/main/scala/kafka/log/Log.scala.

A partition's log: an ordered run of LogSegments in one directory, of which
only the last (the active segment) takes appends. The Log assigns offsets,
keeps the high watermark, the log start offset and the recovery point (the
first offset not yet known to be on disk), loads and recovers its segments at
startup, rolls, truncates and deletes segments, and keeps producer state and
the leader epoch cache in step with the data.

Concurrency follows Kafka: every mutation holds ``_lock`` (reentrant, like a
JVM monitor); reads do not. Readers stay safe because the segment list is
replaced, never edited, in place (copy on write), and because the log end
offset metadata that bounds a read is published only after the bytes it
covers have been written.

The append path works on batch headers only: one ``struct`` unpack and one
CRC-32C per batch, offsets written in place by the LogValidator. Record bytes
are never decoded here.
"""
from __future__ import annotations

import bisect
import logging
import os
import shutil
import struct
import threading
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Sequence, Tuple

import crc32c as _crc32c

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidOffsetException,
    InvalidRecordException,
    InvalidTxnStateException,
    KafkaException,
    KafkaStorageException,
    LogSegmentOffsetOverflowException,
    OffsetOutOfRangeException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
    UnsupportedForMessageFormatException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.abstract_index import CorruptIndexException, OffsetPosition
from kafka_py.log.log_config import ApiVersion
from kafka_py.log.log_append_info import (
    LeaderHwChange,
    LogAppendInfo,
    LogOffsetSnapshot,
    LogReadInfo,
    LogStartOffsetIncrementReason,
    RollParams,
    SegmentDeletionReason,
)
from kafka_py.log.log_files import (
    CLEANED_FILE_SUFFIX,
    DELETE_DIR_SUFFIX,
    DELETED_FILE_SUFFIX,
    FUTURE_DIR_SUFFIX,
    SWAP_FILE_SUFFIX,
    TMP_FILE_SUFFIX,
)
from kafka_py.log.log_offset_metadata import (
    FetchDataInfo,
    FetchIsolation,
    LogOffsetMetadata,
)
from kafka_py.log.log_segment import LogSegment
from kafka_py.log.log_validator import LogValidator, LongRef
from kafka_py.log.producer_state_manager import AppendOrigin, ProducerAppendInfo, ProducerStateManager
from kafka_py.log.verification_guard import SENTINEL, VerificationGuard
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.protocol.requests import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, UNDEFINED_EPOCH_OFFSET
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyRecordBatch
from kafka_py.clients.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CURRENT_MAGIC_VALUE,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    TimestampType,
)
from kafka_py.clients.common.record.file_records import ClosedChannelException, TimestampAndOffset
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.java_limits import INT_MAX, LONG_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.tuning import page_cache_prefaulter
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # imported where used (_initialize_leader_epoch_cache): kafka_py.server depends on kafka_py.log
    from kafka_py.server.epoch.leader_epoch_file_cache import LeaderEpochFileCache

logger = logging.getLogger(__name__)

__all__ = [
    "Log", "LogAppendInfo", "LogOffsetMetadata", "FetchDataInfo", "FetchIsolation", "LogOffsetSnapshot",
    "LogReadInfo", "RollParams", "LeaderHwChange", "LogStartOffsetIncrementReason", "SegmentDeletionReason",
    "OffsetsOutOfOrderException", "UnexpectedAppendOffsetException",
]

_DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86400000
# Kafka's LogManager.ProducerIdExpirationCheckIntervalMs, Log.apply's default; defined here, below
# log_manager.py (which imports Log), and imported there.
PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 10 * 60 * 1000

# The magic-2 batch header up to the first record: baseOffset, length, partitionLeaderEpoch,
# magic, crc, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId,
# producerEpoch, baseSequence, recordCount.
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
_I32 = struct.Struct(">i")


class OffsetsOutOfOrderException(KafkaException):
    """Kafka's kafka.common.OffsetsOutOfOrderException: a follower append whose offsets are not increasing."""


class UnexpectedAppendOffsetException(KafkaException):
    """Kafka's kafka.common.UnexpectedAppendOffsetException: a follower append starting below the log end offset."""

    def __init__(self, message: str, first_offset: int, last_offset: int):
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class _SegmentView:
    """An immutable, sorted view of the segments; the Log swaps in a new one on every change.

    Readers take the current view once and search it without a lock.
    """

    __slots__ = ("offsets", "segments")

    def __init__(self, offsets: Tuple[int, ...] = (), segments: Tuple[LogSegment, ...] = ()):
        self.offsets = offsets
        self.segments = segments

    def floor_index(self, offset: int) -> int:
        return bisect.bisect_right(self.offsets, offset) - 1

    def floor(self, offset: int) -> Optional[LogSegment]:
        i = bisect.bisect_right(self.offsets, offset) - 1
        return self.segments[i] if i >= 0 else None

    def lower(self, offset: int) -> Optional[LogSegment]:
        i = bisect.bisect_left(self.offsets, offset) - 1
        return self.segments[i] if i >= 0 else None

    def higher(self, offset: int) -> Optional[LogSegment]:
        i = bisect.bisect_right(self.offsets, offset)
        return self.segments[i] if i < len(self.segments) else None

    def with_segment(self, segment: LogSegment) -> "_SegmentView":
        offsets = list(self.offsets)
        segments = list(self.segments)
        i = bisect.bisect_left(offsets, segment.base_offset)
        if i < len(offsets) and offsets[i] == segment.base_offset:
            segments[i] = segment
        else:
            offsets.insert(i, segment.base_offset)
            segments.insert(i, segment)
        return _SegmentView(tuple(offsets), tuple(segments))

    def without(self, base_offsets: Iterable[int]) -> "_SegmentView":
        drop = set(base_offsets)
        keep = [(o, s) for o, s in zip(self.offsets, self.segments) if o not in drop]
        return _SegmentView(tuple(o for o, _ in keep), tuple(s for _, s in keep))

    def range(self, start: int, end: int) -> Tuple[LogSegment, ...]:
        """Segments from the one holding ``start`` (or the first) to the last with base offset < ``end``."""
        i = bisect.bisect_right(self.offsets, start) - 1
        if i < 0:
            i = 0
        j = bisect.bisect_left(self.offsets, end)
        return self.segments[i:j]


_CODECS = tuple(CompressionType(i) for i in range(len(CompressionType)))


class LogMetricNames:
    """``kafka.log:type=Log,name=<name>,topic=<t>,partition=<p>[,is-future=true]`` gauges."""

    NUM_LOG_SEGMENTS = "NumLogSegments"
    LOG_START_OFFSET = "LogStartOffset"
    LOG_END_OFFSET = "LogEndOffset"
    SIZE = "Size"
    ALL = (NUM_LOG_SEGMENTS, LOG_START_OFFSET, LOG_END_OFFSET, SIZE)


class _LogMetricsGroup(KafkaMetricsGroup):
    metrics_group = "kafka.log"
    metrics_type_name = "Log"


class LogFlushStats(KafkaMetricsGroup):
    """``kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs``: each segment fsync's time."""

    metrics_group = "kafka.log"
    metrics_type_name = "LogFlushStats"

    def __init__(self) -> None:
        self.log_flush_timer = self.new_timer("LogFlushRateAndTimeMs")


_LOG_METRICS = _LogMetricsGroup()
_log_flush_stats: Optional[LogFlushStats] = None


def log_flush_stats() -> LogFlushStats:
    global _log_flush_stats
    if _log_flush_stats is None:
        _log_flush_stats = LogFlushStats()
    return _log_flush_stats


def _log_gauge(ref: "weakref.ref[Log]", read: Callable[["Log"], int]) -> Callable[[], int]:
    # by weak reference: a log nobody closed (tests, tools) must not stay alive for its gauges
    def value() -> int:
        log = ref()
        return 0 if log is None else read(log)
    return value


class Log:
    """An append-only log of record batches for one partition."""

    # Kafka's Log companion object (file names, suffixes, directory names) is log/log_files.py.

    def __init__(self, dir: str, config, log_start_offset: int = 0, recovery_point: int = 0,
                 scheduler=None, time=None,
                 max_producer_id_expiration_ms: int = _DEFAULT_PRODUCER_ID_EXPIRATION_MS,
                 producer_id_expiration_check_interval_ms: int = PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
                 topic_partition: Optional[TopicPartition] = None, producer_state_manager=None,
                 log_dir_failure_channel=None, had_clean_shutdown: bool = True, broker_topic_stats=None):
        """Open (loading and, after an unclean shutdown, recovering) the log in ``dir``.

        ``scheduler`` runs async segment deletion, post-roll flushes and producer
        expiry; without one, those run inline (tests, tools).
        """
        dir = os.fspath(dir)
        self._dir = dir
        self._parent_dir = os.path.dirname(os.path.abspath(dir))
        self._config = config
        self.log_start_offset = log_start_offset
        self.recovery_point = recovery_point
        self.scheduler = scheduler
        self.time = time if time is not None else Time.SYSTEM
        self.max_producer_id_expiration_ms = max_producer_id_expiration_ms
        self.producer_id_expiration_check_interval_ms = producer_id_expiration_check_interval_ms
        self.topic_partition = topic_partition if topic_partition is not None else log_files.parse_topic_partition_name(dir)
        self.producer_state_manager = (producer_state_manager if producer_state_manager is not None else
                                       ProducerStateManager(self.topic_partition, dir, max_producer_id_expiration_ms))
        self.log_dir_failure_channel = log_dir_failure_channel
        self.broker_topic_stats = broker_topic_stats
        self._had_clean_shutdown = had_clean_shutdown
        self.logger = IdentLogger(logger, f"[Log partition={self.topic_partition}, dir={self._parent_dir}] ")

        self._lock = threading.RLock()
        self._is_memory_mapped_buffer_closed = False
        self._closed = False
        self._last_flushed_time = self.time.milliseconds()
        self._next_offset_metadata: LogOffsetMetadata = LogOffsetMetadata(0)
        self._log_dir_offline = False
        self._first_unstable_offset_metadata: Optional[LogOffsetMetadata] = None
        self._high_watermark_metadata = LogOffsetMetadata(log_start_offset)
        self._segments = _SegmentView()
        self.leader_epoch_cache: Optional[LeaderEpochFileCache] = None
        self._producer_expire_check = None
        # Segments past the recovery point that loading recovered (after an unclean shutdown).
        self.recovered_segments = 0

        os.makedirs(dir, exist_ok=True)
        self._initialize_leader_epoch_cache()

        next_offset = self._load_segments()
        active = self._segments.segments[-1]
        self._next_offset_metadata = LogOffsetMetadata(next_offset, active.base_offset, active.size)
        # Both truncations are written later, if at all (LeaderEpochFileCache.truncate_from_end):
        # a restart finds the same entries to drop, and the first append writes them.
        if self.leader_epoch_cache is not None:
            self.leader_epoch_cache.truncate_from_end(next_offset, write=False)
        self._update_log_start_offset(max(self.log_start_offset, self._segments.offsets[0]))
        # The earliest epoch entry may not have been flushed before a hard failure; trim it here.
        if self.leader_epoch_cache is not None:
            self.leader_epoch_cache.truncate_from_start(self.log_start_offset, write=False)

        # Recovery used its own producer state managers, so the real one starts from scratch here.
        if not self.producer_state_manager.is_empty:
            raise RuntimeError("Producer state must be empty during log initialization")
        self.producer_state_manager.remove_stray_snapshots(list(self._segments.offsets))
        self._load_producer_state(self.log_end_offset, reload_from_clean_shutdown=had_clean_shutdown)

        if self.scheduler is not None:
            self._producer_expire_check = self.scheduler.schedule(
                "PeriodicProducerExpirationCheck", self._expire_producers,
                delay_ms=producer_id_expiration_check_interval_ms,
                period_ms=producer_id_expiration_check_interval_ms)
        self._metric_gauges: list = []
        self.new_metrics()

    # ------------------------------------------------------------------ metrics

    def new_metrics(self) -> None:
        """Kafka's Log gauges: Size, NumLogSegments, LogStartOffset, LogEndOffset, read on
        scrape. The newest log of a partition owns them (a log opened again replaces them)."""
        tags = {"topic": self.topic_partition.topic, "partition": str(self.topic_partition.partition)}
        if self.is_future:
            tags["is-future"] = "true"
        registry = _LOG_METRICS.metrics_registry
        ref = weakref.ref(self)
        reads = {LogMetricNames.NUM_LOG_SEGMENTS: lambda log: log.number_of_segments,
                 LogMetricNames.LOG_START_OFFSET: lambda log: log.log_start_offset,
                 LogMetricNames.LOG_END_OFFSET: lambda log: log.log_end_offset,
                 LogMetricNames.SIZE: lambda log: log.size}
        gauges = []
        for name in LogMetricNames.ALL:
            metric_name = _LOG_METRICS.metric_name(name, tags)
            registry.remove_metric(metric_name)
            gauges.append((metric_name, registry.new_gauge(metric_name, _log_gauge(ref, reads[name]))))
        self._metric_gauges = gauges

    def remove_log_metrics(self) -> None:
        """Take this log's gauges away (deleted, closed, renamed), unless a newer log of the
        partition has replaced them."""
        registry = _LOG_METRICS.metrics_registry
        gauges, self._metric_gauges = self._metric_gauges, []
        for metric_name, gauge in gauges:
            if registry.get(metric_name) is gauge:
                registry.remove_metric(metric_name)

    # ------------------------------------------------------------------ basic accessors

    @property
    def dir(self) -> str:
        return self._dir

    @property
    def parent_dir(self) -> str:
        return self._parent_dir

    @property
    def name(self) -> str:
        return os.path.basename(self._dir)

    @property
    def is_future(self) -> bool:
        return self._dir.endswith(FUTURE_DIR_SUFFIX)

    @property
    def init_file_size(self) -> int:
        return self.config.segment_size if self.config.preallocate else 0

    @property
    def config(self):
        return self._config

    @config.setter
    def config(self, new_config) -> None:
        self._config = new_config

    @property
    def max_segment_ms(self) -> int:
        return self._config.max_segment_ms

    def update_config(self, new_config) -> None:
        old_record_version = self._config.record_version
        self.config = new_config
        new_record_version = new_config.record_version
        if new_record_version < old_record_version:
            self.logger.warning("Record format version has been downgraded from V%d to V%d.", old_record_version,
                                new_record_version)
        if new_record_version != old_record_version:
            self._initialize_leader_epoch_cache()

    def _check_if_memory_mapped_buffer_closed(self) -> None:
        if self._is_memory_mapped_buffer_closed:
            raise KafkaStorageException(f"The memory mapped buffer for log of {self.topic_partition} is already closed")

    def _check_for_log_dir_failure(self) -> None:
        if self._log_dir_offline:
            raise KafkaStorageException(f"The log dir {self._parent_dir} is offline due to a previous IO exception.")

    def _io_failed(self, msg: str, e: OSError) -> KafkaStorageException:
        """Mark the log dir offline (as Kafka's maybeHandleIOException) and return the exception to raise."""
        self._log_dir_offline = True
        if self.log_dir_failure_channel is not None:
            self.log_dir_failure_channel.maybe_add_offline_log_dir(self._parent_dir, msg, e)
        exc = KafkaStorageException(f"{msg}: {e}")
        exc.__cause__ = e
        return exc

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._next_offset_metadata

    @property
    def log_end_offset(self) -> int:
        return self._next_offset_metadata.message_offset

    @property
    def active_segment(self) -> LogSegment:
        return self._segments.segments[-1]

    @property
    def log_segments(self) -> Tuple[LogSegment, ...]:
        return self._segments.segments

    def log_segments_range(self, from_offset: int, to_offset: int) -> Tuple[LogSegment, ...]:
        """Kafka's logSegments(from, to): the segment holding ``from`` through the one holding ``to - 1``."""
        if from_offset == to_offset:
            return ()
        if to_offset < from_offset:
            raise ValueError(f"Invalid log segment range: requested segments in {self.topic_partition} from "
                             f"offset {from_offset} which is greater than limit offset {to_offset}")
        return self._segments.range(from_offset, to_offset)

    def non_active_log_segments_from(self, from_offset: int) -> Tuple[LogSegment, ...]:
        with self._lock:
            active = self.active_segment
            if from_offset > active.base_offset:
                return ()
            return self.log_segments_range(from_offset, active.base_offset)

    @property
    def number_of_segments(self) -> int:
        return len(self._segments.segments)

    @property
    def size(self) -> int:
        return log_files.size_in_bytes(self._segments.segments)

    @property
    def last_flush_time(self) -> int:
        return self._last_flushed_time

    def _add_segment(self, segment: LogSegment) -> LogSegment:
        self._segments = self._segments.with_segment(segment)
        page_cache_prefaulter.segment_added(self, segment)  # tuning: kafka_py/tuning
        return segment

    # ------------------------------------------------------------------ leader epochs

    def _initialize_leader_epoch_cache(self) -> None:
        # imported here: kafka_py.server depends on kafka_py.log, not the other way round at import time
        from kafka_py.server.checkpoints.leader_epoch_checkpoint_file import LeaderEpochCheckpointFile
        from kafka_py.server.epoch.leader_epoch_file_cache import LeaderEpochFileCache

        with self._lock:
            path = os.path.join(self._dir, log_files.LEADER_EPOCH_CHECKPOINT_FILE)
            if self._config.record_version < CURRENT_MAGIC_VALUE:
                # Entries of message format v0/v1 carry no leader epoch: a log of such a format
                # keeps none, and its followers truncate to the high watermark (as in Kafka).
                if os.path.exists(path) and os.path.getsize(path) > 0 and LeaderEpochFileCache(
                        self.topic_partition, lambda: self.log_end_offset,
                        LeaderEpochCheckpointFile(path, self.log_dir_failure_channel)).latest_epoch is not None:
                    self.logger.warning("Deleting non-empty leader epoch cache due to incompatible message format "
                                        "v%d", self._config.record_version)
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
                self.leader_epoch_cache = None
                return
            checkpoint = LeaderEpochCheckpointFile(path, self.log_dir_failure_channel)
            self.leader_epoch_cache = LeaderEpochFileCache(self.topic_partition, lambda: self.log_end_offset,
                                                           checkpoint)

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        cache = self.leader_epoch_cache
        if cache is not None:
            cache.assign(leader_epoch, start_offset)

    @property
    def latest_epoch(self) -> Optional[int]:
        cache = self.leader_epoch_cache
        return None if cache is None else cache.latest_epoch

    def end_offset_for_epoch(self, leader_epoch: int) -> Optional[Tuple[int, int]]:
        """(end offset, epoch) of the largest epoch <= ``leader_epoch``, or None (Kafka's OffsetAndEpoch)."""
        cache = self.leader_epoch_cache
        if cache is None:
            return None
        found_epoch, found_offset = cache.end_offset_for(leader_epoch)
        if found_offset == UNDEFINED_EPOCH_OFFSET:
            return None
        return found_offset, found_epoch

    # ------------------------------------------------------------------ loading

    def _remove_temp_files_and_collect_swap_files(self) -> List[str]:
        """Delete stray .deleted/.cleaned/.tmp files and return the .swap log files worth completing."""
        def delete_indices_if_exist(base_file: str, suffix: str = "") -> None:
            offset = log_files.offset_from_file(base_file)
            log_files.delete_file_if_exists(log_files.offset_index_file(self._dir, offset, suffix))
            log_files.delete_file_if_exists(log_files.time_index_file(self._dir, offset, suffix))
            log_files.delete_file_if_exists(log_files.transaction_index_file(self._dir, offset, suffix))

        swap_files: List[str] = []
        clean_files: List[str] = []
        min_cleaned_file_offset = LONG_MAX
        for name in os.listdir(self._dir):
            path = os.path.join(self._dir, name)
            if not os.path.isfile(path):
                continue
            if name.endswith(DELETED_FILE_SUFFIX) or name.endswith(TMP_FILE_SUFFIX):
                self.logger.debug("Deleting stray temporary file %s", path)
                log_files.delete_file_if_exists(path)
            elif name.endswith(CLEANED_FILE_SUFFIX):
                try:
                    min_cleaned_file_offset = min(log_files.offset_from_file_name(name), min_cleaned_file_offset)
                except ValueError:
                    pass
                clean_files.append(path)
            elif name.endswith(SWAP_FILE_SUFFIX):
                # A crash mid-swap: index swaps are simply dropped (they get rebuilt),
                # a log swap is completed after the segments are loaded.
                base_file = log_files.replace_suffix(path, SWAP_FILE_SUFFIX, "")
                self.logger.info("Found file %s from interrupted swap operation.", path)
                if log_files.is_index_file(base_file):
                    delete_indices_if_exist(base_file)
                elif log_files.is_log_file(base_file):
                    delete_indices_if_exist(base_file)
                    swap_files.append(path)

        # A .swap above the smallest .cleaned offset belongs to a split that never finished; drop it.
        valid_swap_files = []
        for file in swap_files:
            if log_files.offset_from_file(file) >= min_cleaned_file_offset:
                base_file = log_files.replace_suffix(file, SWAP_FILE_SUFFIX, "")
                delete_indices_if_exist(base_file, SWAP_FILE_SUFFIX)
                log_files.delete_file_if_exists(file)
            else:
                valid_swap_files.append(file)
        for file in clean_files:
            log_files.delete_file_if_exists(file)
        return valid_swap_files

    def _load_segment_files(self) -> None:
        for name in sorted(os.listdir(self._dir)):
            path = os.path.join(self._dir, name)
            if not os.path.isfile(path):
                continue
            if log_files.is_index_file(path):
                try:
                    offset = log_files.offset_from_file(path)
                except ValueError:
                    continue
                if not os.path.exists(log_files.log_file(self._dir, offset)):
                    self.logger.warning("Found an orphaned index file %s, with no corresponding log file.",
                                        path)
                    log_files.delete_file_if_exists(path)
            elif log_files.is_log_file(path):
                base_offset = log_files.offset_from_file(path)
                time_index_file_newly_created = not os.path.exists(log_files.time_index_file(self._dir, base_offset))
                segment = LogSegment.open(self._dir, base_offset, self.config, self.time, file_already_exists=True)
                try:
                    segment.sanity_check(time_index_file_newly_created)
                except FileNotFoundError:
                    self.logger.error("Could not find offset index file corresponding to log file %s, "
                                      "recovering segment and rebuilding index files...", path)
                    self._recover_segment(segment)
                except CorruptIndexException as e:
                    self.logger.warning("Found a corrupted index file corresponding to log file %s due to %s, "
                                        "recovering segment and rebuilding index files...", path, e)
                    self._recover_segment(segment)
                self._add_segment(segment)

    def _recover_segment(self, segment: LogSegment, leader_epoch_cache=None) -> int:
        with self._lock:
            psm = ProducerStateManager(self.topic_partition, self._dir, self.max_producer_id_expiration_ms)
            self._rebuild_producer_state(segment.base_offset, False, psm)
            try:
                bytes_truncated = segment.recover(psm, leader_epoch_cache)
            except LogSegmentOffsetOverflowException as e:
                # Kafka splits such a segment (Log.splitOverflowedSegment), a repair for
                # segments of message formats before v2 that this broker does not port: the
                # log is refused, naming the file, and its directory goes offline.
                raise KafkaStorageException(f"Cannot recover {segment.log.file}: {e}") from e
            # snapshot now so recovering the next segment need not replay this one
            psm.take_snapshot()
            return bytes_truncated

    def _complete_swap_operations(self, swap_files: List[str]) -> None:
        for swap_file in swap_files:
            log_file = log_files.replace_suffix(swap_file, SWAP_FILE_SUFFIX, "")
            base_offset = log_files.offset_from_file(log_file)
            swap_segment = LogSegment.open(os.path.dirname(swap_file), base_offset, self.config, self.time,
                                           file_already_exists=True, file_suffix=SWAP_FILE_SUFFIX)
            self.logger.info("Found log file %s from interrupted swap operation, repairing.", swap_file)
            self._recover_segment(swap_segment)
            swap_next = swap_segment.read_next_offset()
            old_segments = [s for s in self._segments.range(swap_segment.base_offset, swap_next)
                            if s.read_next_offset() > swap_segment.base_offset]
            self.replace_segments([swap_segment], old_segments, is_recovered_swap_file=True)

    def _load_segments(self) -> int:
        swap_files = self._remove_temp_files_and_collect_swap_files()
        for segment in self._segments.segments:
            segment.close()
        self._segments = _SegmentView()
        self._load_segment_files()
        self._complete_swap_operations(swap_files)
        if not self._dir.endswith(DELETE_DIR_SUFFIX):
            next_offset = self._recover_log()
            # the active segment gets its indexes back at full size, ready for appends
            self.active_segment.resize_indexes(self.config.max_index_size)
            return next_offset
        if not self._segments.segments:
            self._add_segment(LogSegment.open(self._dir, 0, self.config, self.time,
                                              init_file_size=self.init_file_size))
        return 0

    def _recover_log(self) -> int:
        """Recover segments above the recovery point (unless the shutdown was clean); return the log end offset."""
        if not self._had_clean_shutdown:
            unflushed = list(self._segments.range(self.recovery_point, LONG_MAX))
            for i, segment in enumerate(unflushed):
                self.logger.info("Recovering unflushed segment %d", segment.base_offset)
                self.recovered_segments += 1
                try:
                    truncated_bytes = self._recover_segment(segment, self.leader_epoch_cache)
                except InvalidOffsetException:
                    self.logger.warning("Found invalid offset during recovery. Deleting the corrupt segment and "
                                        "creating an empty one with starting offset %d", segment.base_offset)
                    truncated_bytes = segment.truncate_to(segment.base_offset)
                if truncated_bytes > 0:
                    # whatever follows a corrupt batch cannot be trusted: drop the later segments
                    self.logger.warning("Corruption found in segment %d, truncating to offset %d",
                                        segment.base_offset, segment.read_next_offset())
                    self._remove_and_delete_segments(unflushed[i + 1:], True, SegmentDeletionReason.LOG_RECOVERY)
                    break

        log_end_offset_option: Optional[int] = None
        if self._segments.segments:
            log_end_offset = self.active_segment.read_next_offset()
            if log_end_offset >= self.log_start_offset:
                log_end_offset_option = log_end_offset
            else:
                self.logger.warning("Deleting all segments because logEndOffset (%d) is smaller than logStartOffset "
                                    "(%d). This could happen if segment files were deleted from the file system.",
                                    log_end_offset, self.log_start_offset)
                self._remove_and_delete_segments(self._segments.segments, True, SegmentDeletionReason.LOG_RECOVERY)
                if self.leader_epoch_cache is not None:
                    self.leader_epoch_cache.clear_and_flush()
                self.producer_state_manager.truncate_fully_and_start_at(self.log_start_offset)

        if not self._segments.segments:
            self._add_segment(LogSegment.open(self._dir, self.log_start_offset, self.config, self.time,
                                              init_file_size=self.init_file_size,
                                              preallocate=self.config.preallocate))

        # Only flush() advances the recovery point past unflushed data; here it may only move back.
        if self._had_clean_shutdown and log_end_offset_option is not None:
            self.recovery_point = log_end_offset_option
            return log_end_offset_option
        log_end_offset = (log_end_offset_option if log_end_offset_option is not None
                          else self.active_segment.read_next_offset())
        self.recovery_point = min(self.recovery_point, log_end_offset)
        return log_end_offset

    # ------------------------------------------------------------------ producer state

    def _rebuild_producer_state(self, last_offset: int, reload_from_clean_shutdown: bool, psm) -> None:
        """Bring ``psm`` to ``last_offset`` from its newest snapshot plus a scan of later batches.

        Free of side effects on the Log itself: recovery calls it with a scratch manager.
        """
        with self._lock:
            self._check_if_memory_mapped_buffer_closed()
            view = self._segments
            if view.segments:
                last_base = view.offsets[-1]
                lower = view.lower(last_base)
                offsets_to_snapshot = [lower.base_offset if lower is not None else None, last_base, last_offset]
            else:
                offsets_to_snapshot = [last_offset]
            self.logger.info("Loading producer state till offset %d", last_offset)

            if psm.latest_snapshot_offset is None and reload_from_clean_shutdown:
                # After a clean shutdown with no snapshots (an upgrade), write empty snapshots
                # instead of scanning the whole log for producers that cannot be there.
                for offset in offsets_to_snapshot:
                    if offset is not None:
                        psm.update_map_end_offset(offset)
                        psm.take_snapshot()
                return

            is_empty_before_truncation = psm.is_empty and psm.map_end_offset >= last_offset
            psm.truncate_and_reload(self.log_start_offset, last_offset, self.time.milliseconds())

            if last_offset > psm.map_end_offset and not is_empty_before_truncation:
                segment_of_last_offset = view.floor(last_offset)
                for segment in view.range(psm.map_end_offset, last_offset):
                    start_offset = max(segment.base_offset, psm.map_end_offset, self.log_start_offset)
                    psm.update_map_end_offset(start_offset)
                    if segment.base_offset in offsets_to_snapshot:
                        psm.take_snapshot()
                    if segment is segment_of_last_offset:
                        found = segment.translate_offset(last_offset)
                        max_position = found.position if found is not None else segment.size
                    else:
                        max_position = segment.size
                    fetch_data_info = segment.read(start_offset, INT_MAX, max_position, False)
                    if fetch_data_info is not None:
                        self._load_producers_from_records(psm, fetch_data_info.records)
            psm.update_map_end_offset(last_offset)
            psm.take_snapshot()

    @staticmethod
    def _load_producers_from_records(psm, records) -> None:
        loaded: dict[int, ProducerAppendInfo] = {}
        completed_txns = []
        for batch in records.batches():
            if batch.producer_id >= 0:
                info = loaded.get(batch.producer_id)
                if info is None:
                    info = loaded[batch.producer_id] = psm.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
                completed = info.append(batch, None)
                if completed is not None:
                    completed_txns.append(completed)
        for info in loaded.values():
            psm.update(info)
        for txn in completed_txns:
            psm.complete_txn(txn)

    def _load_producer_state(self, last_offset: int, reload_from_clean_shutdown: bool) -> None:
        with self._lock:
            self._rebuild_producer_state(last_offset, reload_from_clean_shutdown, self.producer_state_manager)
            self._maybe_increment_first_unstable_offset()

    def _expire_producers(self) -> None:
        with self._lock:
            if not self._is_memory_mapped_buffer_closed:
                self.producer_state_manager.remove_expired_producers(self.time.milliseconds())

    @property
    def active_producers(self) -> dict:
        with self._lock:
            return dict(self.producer_state_manager.active_producers)

    # ------------------------------------------------------------------ transaction verification

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer has a transaction open on this partition at this epoch (its
        first batch was verified and appended: later batches need no verification)."""
        entry = self.producer_state_manager.last_entry(producer_id)
        return (entry is not None and entry.current_txn_first_offset is not None
                and entry.producer_epoch == producer_epoch)

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int,
                                             epoch: int) -> VerificationGuard:
        """SENTINEL when the producer's transaction is already open here at ``epoch``; else the
        guard of the verification to make with the coordinator (log/verification_guard.py),
        kept in the producer state until a transactional append of the producer uses it."""
        if self.has_ongoing_transaction(producer_id, epoch):
            # without the lock: should the transaction end meanwhile, the append refuses the
            # batch under the lock (it carries no guard), as it must
            return SENTINEL
        with self._lock:
            if self.has_ongoing_transaction(producer_id, epoch):
                return SENTINEL
            return self.producer_state_manager.maybe_create_verification_state_entry(
                producer_id, sequence, epoch, self.time.milliseconds()).verification_guard

    def verification_guard(self, producer_id: int) -> VerificationGuard:
        with self._lock:
            entry = self.producer_state_manager.verification_state_entry(producer_id)
            return SENTINEL if entry is None else entry.verification_guard

    def take_producer_snapshot(self) -> None:
        with self._lock:
            self._check_if_memory_mapped_buffer_closed()
            self.producer_state_manager.take_snapshot()

    @property
    def latest_producer_snapshot_offset(self) -> Optional[int]:
        with self._lock:
            return self.producer_state_manager.latest_snapshot_offset

    @property
    def oldest_producer_snapshot_offset(self) -> Optional[int]:
        with self._lock:
            return self.producer_state_manager.oldest_snapshot_offset

    @property
    def latest_producer_state_end_offset(self) -> int:
        with self._lock:
            return self.producer_state_manager.map_end_offset

    # ------------------------------------------------------------------ offsets: HW, LSO, start

    @property
    def high_watermark(self) -> int:
        return self._high_watermark_metadata.message_offset

    def update_high_watermark(self, hw) -> int:
        """Set the high watermark, clamped to [log start offset, log end offset]; returns the value set."""
        hw_metadata = hw if isinstance(hw, LogOffsetMetadata) else LogOffsetMetadata(hw)
        end_offset_metadata = self._next_offset_metadata
        if hw_metadata.message_offset < self.log_start_offset:
            new_hw = LogOffsetMetadata(self.log_start_offset)
        elif hw_metadata.message_offset >= end_offset_metadata.message_offset:
            new_hw = end_offset_metadata
        else:
            new_hw = hw_metadata
        self._update_high_watermark_metadata(new_hw)
        return new_hw.message_offset

    def maybe_increment_high_watermark(self, new_high_watermark: LogOffsetMetadata) -> Optional[LogOffsetMetadata]:
        """Advance the high watermark (leader side); returns the old one if it moved."""
        if new_high_watermark.message_offset > self._next_offset_metadata.message_offset:
            raise ValueError(f"High watermark {new_high_watermark} update exceeds current log end offset "
                             f"{self._next_offset_metadata}")
        with self._lock:
            old = self._fetch_high_watermark_metadata()
            # also move when the same offset now points into a newer segment (after a roll)
            if (old.message_offset < new_high_watermark.message_offset
                    or (old.message_offset == new_high_watermark.message_offset
                        and not new_high_watermark.message_offset_only
                        and old.on_older_segment(new_high_watermark))):
                self._update_high_watermark_metadata(new_high_watermark)
                return old
            return None

    def _fetch_high_watermark_metadata(self) -> LogOffsetMetadata:
        if self._is_memory_mapped_buffer_closed:  # the check's call only when it raises: every append comes here
            self._check_if_memory_mapped_buffer_closed()
        offset_metadata = self._high_watermark_metadata
        if offset_metadata.message_offset_only:
            with self._lock:
                full = self.convert_to_offset_metadata_or_throw(self.high_watermark)
                self._update_high_watermark_metadata(full)
                return full
        return offset_metadata

    def _update_high_watermark_metadata(self, new_hw: LogOffsetMetadata) -> None:
        if new_hw.message_offset < 0:
            raise ValueError("High watermark offset should be non-negative")
        with self._lock:
            if new_hw.message_offset < self._high_watermark_metadata.message_offset:
                self.logger.warning("Non-monotonic update of high watermark from %s to %s",
                                    self._high_watermark_metadata, new_hw)
            self._high_watermark_metadata = new_hw
            self.producer_state_manager.on_high_watermark_updated(new_hw.message_offset)
            self._maybe_increment_first_unstable_offset()

    @property
    def first_unstable_offset(self) -> Optional[int]:
        md = self._first_unstable_offset_metadata
        return None if md is None else md.message_offset

    def _fetch_last_stable_offset_metadata(self) -> LogOffsetMetadata:
        self._check_if_memory_mapped_buffer_closed()
        hw_metadata = self._fetch_high_watermark_metadata()
        fuo = self._first_unstable_offset_metadata
        if fuo is not None and fuo.message_offset < hw_metadata.message_offset:
            if fuo.message_offset_only:
                with self._lock:
                    full = self.convert_to_offset_metadata_or_throw(fuo.message_offset)
                    if self._first_unstable_offset_metadata == fuo:
                        self._first_unstable_offset_metadata = full
                    return full
            return fuo
        return hw_metadata

    @property
    def last_stable_offset(self) -> int:
        fuo = self._first_unstable_offset_metadata
        hw = self.high_watermark
        if fuo is not None and fuo.message_offset < hw:
            return fuo.message_offset
        return hw

    @property
    def last_stable_offset_lag(self) -> int:
        return self.high_watermark - self.last_stable_offset

    def fetch_offset_snapshot(self) -> LogOffsetSnapshot:
        last_stable = self._fetch_last_stable_offset_metadata()
        high_watermark = self._fetch_high_watermark_metadata()
        return LogOffsetSnapshot(self.log_start_offset, self._next_offset_metadata, high_watermark, last_stable)

    def _maybe_increment_first_unstable_offset(self) -> None:
        with self._lock:
            if self._is_memory_mapped_buffer_closed:  # as above: every high watermark move comes here
                self._check_if_memory_mapped_buffer_closed()
            found = self.producer_state_manager.first_unstable_offset
            if found is not None and (found.message_offset_only or found.message_offset < self.log_start_offset):
                found = self.convert_to_offset_metadata_or_throw(max(found.message_offset, self.log_start_offset))
            if found != self._first_unstable_offset_metadata:
                self.logger.debug("First unstable offset updated to %s", found)
                self._first_unstable_offset_metadata = found

    def _update_log_end_offset(self, offset: int) -> None:
        active = self._segments.segments[-1]
        self._next_offset_metadata = LogOffsetMetadata(offset, active.base_offset, active.log.size_in_bytes())
        # the high watermark may now be ahead (truncation) or on an old segment (roll)
        if self._high_watermark_metadata.message_offset >= offset:
            self._update_high_watermark_metadata(self._next_offset_metadata)
        if self.recovery_point > offset:
            self.recovery_point = offset

    def _update_log_start_offset(self, offset: int) -> None:
        self.log_start_offset = offset
        if self.high_watermark < offset:
            self.update_high_watermark(offset)
        if self.recovery_point < offset:
            self.recovery_point = offset

    def maybe_increment_log_start_offset(self, new_log_start_offset: int,
                                         reason: LogStartOffsetIncrementReason =
                                         LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION) -> bool:
        """Move the log start offset forward (DeleteRecords, retention); never past the high watermark."""
        try:
            self._check_for_log_dir_failure()
            with self._lock:
                if new_log_start_offset > self.high_watermark:
                    raise OffsetOutOfRangeException(
                        f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                        f"{self.topic_partition} since it is larger than the high watermark {self.high_watermark}")
                self._check_if_memory_mapped_buffer_closed()
                if new_log_start_offset > self.log_start_offset:
                    self._update_log_start_offset(new_log_start_offset)
                    self.logger.info("Incremented log start offset to %d due to %s",
                                     new_log_start_offset, reason)
                    if self.leader_epoch_cache is not None:
                        self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
                    self.producer_state_manager.on_log_start_offset_incremented(new_log_start_offset)
                    self._maybe_increment_first_unstable_offset()
                    return True
                return False
        except OSError as e:
            raise self._io_failed(f"Exception while increasing log start offset for {self.topic_partition} to "
                                  f"{new_log_start_offset} in dir {self._parent_dir}", e) from e

    # ------------------------------------------------------------------ append

    def append_as_leader(self, records: MemoryRecords, leader_epoch: int, origin: Optional[AppendOrigin] = None,
                         inter_broker_protocol_version: Optional[ApiVersion] = None,
                         verification_guard: Optional[VerificationGuard] = None) -> LogAppendInfo:
        """Validate ``records`` (a MemoryRecords), assign offsets and the leader epoch in place, and append.

        ``verification_guard`` (a client's produce with transaction verification on, see
        ``maybe_start_transaction_verification``): a transactional batch of a producer with no
        transaction open here at its epoch is appended only if this is the guard its verification
        left in the producer state, else InvalidTxnStateException; SENTINEL passes nothing but
        batches of open transactions. None checks nothing (Kafka 2.8's append)."""
        if origin is None:
            origin = AppendOrigin.CLIENT
        validate_and_assign = origin is not AppendOrigin.RAFT_LEADER
        return self._append(records, origin, validate_and_assign, leader_epoch, False, verification_guard,
                            inter_broker_protocol_version)

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """Append batches replicated from the leader, keeping their offsets and epochs."""
        # record size was checked by the leader; a follower must take what the leader accepted
        return self._append(records, AppendOrigin.REPLICATION, False, -1, True)

    def _append(self, records: MemoryRecords, origin: AppendOrigin, validate_and_assign_offsets: bool,
                leader_epoch: int, ignore_record_size: bool, verification_guard: Optional[VerificationGuard] = None,
                inter_broker_protocol_version: Optional[ApiVersion] = None) -> LogAppendInfo:
        append_info, batch_epochs, has_producer_ids, has_legacy_batches = self._analyze_and_validate_records(
            records, origin, ignore_record_size, leader_epoch)
        if append_info.shallow_count == 0:
            return append_info
        # trim a partial trailing batch before it reaches the file
        valid_records = (records if append_info.valid_bytes == records.size_in_bytes
                         else self._trim_invalid_bytes(records, append_info))

        with self._lock:
            try:
                if self._log_dir_offline:
                    self._check_for_log_dir_failure()
                if self._is_memory_mapped_buffer_closed:
                    self._check_if_memory_mapped_buffer_closed()
                config = self._config
                now = self.time.milliseconds()
                epoch_cache = self.leader_epoch_cache
                if epoch_cache is not None and epoch_cache._truncation_unwritten:
                    epoch_cache.write_unwritten_truncation()
                if validate_and_assign_offsets:
                    first_offset = self._next_offset_metadata.message_offset
                    valid_records = self._validate_and_assign_offsets(valid_records, append_info, origin,
                                                                      leader_epoch, ignore_record_size, now,
                                                                      inter_broker_protocol_version)
                    # every batch now carries leader_epoch; the first starts at the first offset
                    if leader_epoch >= 0:
                        self._maybe_assign_epoch(leader_epoch, first_offset)
                else:
                    next_offset = self._next_offset_metadata.message_offset
                    if not append_info.offsets_monotonic:
                        raise OffsetsOutOfOrderException(
                            f"Out of order offsets found in append to {self.topic_partition}: "
                            f"{[base for _, base in batch_epochs]}")
                    if append_info.first_or_last_offset_of_first_batch < next_offset:
                        first = append_info.first_or_last_offset_of_first_batch
                        raise UnexpectedAppendOffsetException(
                            f"Unexpected offset in append to {self.topic_partition}. First offset {first} is less "
                            f"than the next offset {next_offset}. Last offset in append: "
                            f"{append_info.last_offset}. Log start offset = {self.log_start_offset}",
                            first, append_info.last_offset)
                    first_offset = append_info.first_or_last_offset_of_first_batch
                    for epoch, base_offset in batch_epochs:
                        if epoch >= 0:
                            self._maybe_assign_epoch(epoch, base_offset)
                    if has_legacy_batches and epoch_cache is not None and epoch_cache.latest_epoch is not None:
                        # A leader part way through a downgrade of its message format sent entries
                        # without epochs: truncation falls back to the high watermark until the
                        # next leader election, as in Kafka.
                        self.logger.warning("Clearing leader epoch cache after unexpected append with message "
                                            "format v0/v1")
                        epoch_cache.clear_and_flush()

                valid_size = valid_records.size_in_bytes
                if valid_size > config.segment_size:
                    raise RecordBatchTooLargeException(
                        f"Message batch size is {valid_size} bytes in append to partition {self.topic_partition}, "
                        f"which exceeds the maximum configured segment size of {config.segment_size}.")

                segment = self._maybe_roll(valid_size, append_info, now)
                segment_position = segment.log.size_in_bytes()

                if has_producer_ids:
                    updated_producers, completed_txns, maybe_duplicate = self._analyze_and_validate_producer_state(
                        LogOffsetMetadata(first_offset, segment.base_offset, segment_position), valid_records,
                        origin, verification_guard)
                    if maybe_duplicate is not None:
                        # a retry of a batch already in the log: answer with where it went
                        append_info.first_offset = LogOffsetMetadata(maybe_duplicate.first_offset)
                        append_info.last_offset = maybe_duplicate.last_offset
                        append_info.log_append_time = maybe_duplicate.timestamp
                        append_info.log_start_offset = self.log_start_offset
                        return append_info
                else:
                    updated_producers = completed_txns = None

                append_info.first_offset = LogOffsetMetadata(first_offset, segment.base_offset, segment_position)
                last_offset = append_info.last_offset
                segment.append(last_offset, append_info.max_timestamp, append_info.offset_of_max_timestamp,
                               valid_records)
                # Publish the new end offset right after the bytes are in, so offsets keep growing
                # even if the producer state bookkeeping below fails.
                self._update_log_end_offset(last_offset + 1)

                psm = self.producer_state_manager
                if updated_producers:
                    for info in updated_producers.values():
                        psm.update(info)
                    for txn in completed_txns:
                        # an abort goes into the segment's transaction index with the LSO it leaves
                        segment.update_txn_index(txn, psm.last_stable_offset(txn))
                        psm.complete_txn(txn)
                psm.update_map_end_offset(last_offset + 1)
                if has_producer_ids or self._first_unstable_offset_metadata is not None:
                    self._maybe_increment_first_unstable_offset()

                if last_offset + 1 - self.recovery_point >= config.flush_interval:
                    self.flush()
                return append_info
            except OSError as e:
                raise self._io_failed(f"Error while appending records to {self.topic_partition} in dir "
                                      f"{self._parent_dir}", e) from e

    def _maybe_assign_epoch(self, epoch: int, start_offset: int) -> None:
        cache = self.leader_epoch_cache
        # the cache ignores a repeat of its latest epoch; checking here skips its lock on every append
        if cache is not None and cache.latest_epoch != epoch:
            cache.assign(epoch, start_offset)

    def _validate_and_assign_offsets(self, valid_records: MemoryRecords, append_info: LogAppendInfo,
                                     origin: AppendOrigin, leader_epoch: int, ignore_record_size: bool, now: int,
                                     inter_broker_protocol_version: Optional[ApiVersion] = None) -> MemoryRecords:
        config = self._config
        offset = LongRef(self._next_offset_metadata.message_offset)
        timestamp_type = config.message_timestamp_type
        result = LogValidator.validate_messages_and_assign_offsets(
            valid_records,
            topic_partition=self.topic_partition,
            offset_counter=offset,
            time=self.time,
            now_ms=now,
            source_codec=append_info.source_codec,
            target_codec=append_info.target_codec,
            compacted_topic=config.compact,
            # the topic's message.format.version: what any producer sent is converted to it
            magic=config.record_version,
            timestamp_type=timestamp_type,
            timestamp_diff_max_ms=config.message_timestamp_difference_max_ms,
            partition_leader_epoch=leader_epoch,
            origin=origin,
            inter_broker_protocol_version=inter_broker_protocol_version,
            # _analyze_and_validate_records has already checked every batch's CRC
            check_crc=False,
        )
        validated = result.validated_records
        append_info.max_timestamp = result.max_timestamp
        append_info.offset_of_max_timestamp = result.shallow_offset_of_max_timestamp
        append_info.last_offset = offset.value - 1
        append_info.record_conversion_stats = result.record_conversion_stats
        if timestamp_type == TimestampType.LOG_APPEND_TIME:
            append_info.log_append_time = now
        # recompression or conversion may have grown a batch past the limit
        if not ignore_record_size and result.message_size_maybe_changed:
            max_message_size = config.max_message_size
            for batch in validated.batches():
                if batch.size_in_bytes > max_message_size:
                    raise RecordTooLargeException(
                        f"Message batch size is {batch.size_in_bytes} bytes in append to partition "
                        f"{self.topic_partition} which exceeds the maximum configured size of "
                        f"{max_message_size}.")
        return validated

    def _analyze_and_validate_producer_state(self, append_offset_metadata: LogOffsetMetadata, records, origin,
                                             verification_guard: Optional[VerificationGuard] = None):
        psm = self.producer_state_manager
        updated_producers: dict = {}
        completed_txns: list = []
        relative_position = append_offset_metadata.relative_position_in_segment
        for batch in records.batches():
            if batch.producer_id >= 0:
                # a retried client batch already in the log gets the original offsets back
                if origin is AppendOrigin.CLIENT:
                    entry = psm.last_entry(batch.producer_id)
                    if entry is not None:
                        duplicate = entry.find_duplicate_batch(batch)
                        if duplicate is not None:
                            return updated_producers, completed_txns, duplicate
                info = updated_producers.get(batch.producer_id)
                if verification_guard is not None and batch.is_transactional and not batch.is_control_batch:
                    # the first batch of a transaction here goes in only with the guard of its verification
                    state = psm.last_entry(batch.producer_id) if info is None else info.to_entry()
                    if state is None or state.current_txn_first_offset is None \
                            or state.producer_epoch != batch.producer_epoch:
                        entry = psm.verification_state_entry(batch.producer_id)
                        if entry is None or not entry.verification_guard.verify(verification_guard):
                            raise InvalidTxnStateException("Record was not part of an ongoing transaction")
                # transactions remember where they start, for the last stable offset
                first_offset_metadata = (
                    LogOffsetMetadata(batch.base_offset, append_offset_metadata.segment_base_offset, relative_position)
                    if batch.is_transactional else None)
                if info is None:
                    info = updated_producers[batch.producer_id] = psm.prepare_update(batch.producer_id, origin)
                completed = info.append(batch, first_offset_metadata)
                if completed is not None:
                    completed_txns.append(completed)
                if batch.is_transactional:
                    # its first batch or its marker: a verification of the producer is used up
                    psm.clear_verification_state_entry(batch.producer_id)
                    info.verification_state_entry = None
            relative_position += batch.size_in_bytes
        return updated_producers, completed_txns, None

    def _analyze_and_validate_records(self, records: MemoryRecords, origin: AppendOrigin, ignore_record_size: bool,
                                      leader_epoch: int):
        """One pass over the batch headers: sizes, CRC-32C, offsets, timestamps, codecs.

        A log entry of message format v0/v1 is checked as Kafka checks any batch here (size,
        the message's CRC-32); its first offset is not known without decompressing a wrapper,
        so the append info then carries the last offset of the first entry instead, as Kafka's.

        Returns (LogAppendInfo, [(partition leader epoch, base offset) per batch], any producer
        id, any v0/v1 entry).
        """
        buf = records.buffer
        total = len(buf)
        is_client = origin is AppendOrigin.CLIENT
        is_raft_leader = origin is AppendOrigin.RAFT_LEADER
        config = self._config
        max_message_size = config.max_message_size
        unpack = _BATCH_HEADER.unpack_from
        crc = _crc32c.crc32c

        shallow_count = 0
        valid_bytes = 0
        first_offset = None
        last_offset = -1
        last_leader_epoch = NO_PARTITION_LEADER_EPOCH
        source_codec = 0
        monotonic = True
        max_timestamp = NO_TIMESTAMP
        offset_of_max_timestamp = -1
        last_offset_of_first_batch = -1
        has_producer_ids = False
        has_legacy_batches = False
        batch_epochs = []

        pos = 0
        # A partial trailing batch ends the set (and is trimmed), as Kafka's batch iterator does.
        while total - pos > MAGIC_OFFSET:
            magic = buf[pos + MAGIC_OFFSET]
            if magic != CURRENT_MAGIC_VALUE:
                if magic != MAGIC_VALUE_V0 and magic != MAGIC_VALUE_V1:
                    raise CorruptRecordException(f"Invalid magic found in record: {magic}")
                # A log entry of message format v0/v1: what Kafka's loop reads of any batch,
                # from the entry (its offset is the last one; a wrapper's first is inside it).
                entry = _legacy_entry(buf, pos, self.topic_partition)
                if entry is None:
                    break
                size = entry.size_in_bytes
                batch_last_offset = entry.last_offset
                if last_offset_of_first_batch < 0 and shallow_count == 0:
                    last_offset_of_first_batch = batch_last_offset
                if last_offset >= batch_last_offset:
                    monotonic = False
                last_offset = batch_last_offset
                last_leader_epoch = NO_PARTITION_LEADER_EPOCH
                if size > max_message_size and not ignore_record_size:
                    raise RecordTooLargeException(
                        f"The record batch size in the append to {self.topic_partition} is {size} bytes which "
                        f"exceeds the maximum configured value of {max_message_size}.")
                if not entry.is_valid():
                    raise CorruptRecordException(
                        f"Record is corrupt (stored crc = {entry.checksum}) in topic partition "
                        f"{self.topic_partition}.")
                if entry.max_timestamp > max_timestamp:
                    max_timestamp = entry.max_timestamp
                    offset_of_max_timestamp = batch_last_offset
                batch_epochs.append((NO_PARTITION_LEADER_EPOCH, batch_last_offset))
                has_legacy_batches = True
                shallow_count += 1
                valid_bytes += size
                codec = entry.attributes & COMPRESSION_CODEC_MASK
                if codec:
                    source_codec = codec
                pos += size
                continue
            if total - pos < RECORD_BATCH_OVERHEAD:
                break
            (base_offset, length, partition_leader_epoch, magic, stored_crc, attributes, last_offset_delta,
             _base_ts, batch_max_ts, producer_id, _pepoch, _bseq, _count) = unpack(buf, pos)
            size = length + LOG_OVERHEAD
            if size < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordException(
                    f"Record batch size {size} in the append to {self.topic_partition} is smaller than the minimum "
                    f"batch overhead {RECORD_BATCH_OVERHEAD}")
            if total - pos < size:
                break
            if is_raft_leader and partition_leader_epoch != leader_epoch:
                raise InvalidRecordException("Append from Raft leader did not set the batch epoch correctly")
            if is_client and base_offset != 0:
                raise InvalidRecordException(
                    f"The baseOffset of the record batch in the append to {self.topic_partition} should be 0, "
                    f"but it is {base_offset}")
            batch_last_offset = base_offset + last_offset_delta
            if shallow_count == 0:
                first_offset = base_offset
                last_offset_of_first_batch = batch_last_offset
            if last_offset >= batch_last_offset:
                monotonic = False
            last_offset = batch_last_offset
            last_leader_epoch = partition_leader_epoch
            if size > max_message_size and not ignore_record_size:
                raise RecordTooLargeException(
                    f"The record batch size in the append to {self.topic_partition} is {size} bytes which exceeds "
                    f"the maximum configured value of {max_message_size}.")
            if crc(buf[pos + ATTRIBUTES_OFFSET:pos + size]) != stored_crc:
                raise CorruptRecordException(
                    f"Record is corrupt (stored crc = {stored_crc}) in topic partition {self.topic_partition}.")
            if batch_max_ts > max_timestamp:
                max_timestamp = batch_max_ts
                offset_of_max_timestamp = batch_last_offset
            if producer_id >= 0:
                has_producer_ids = True
            batch_epochs.append((partition_leader_epoch, base_offset))
            shallow_count += 1
            valid_bytes += size
            codec = attributes & COMPRESSION_CODEC_MASK
            if codec:
                source_codec = codec
            pos += size

        try:
            source = _CODECS[source_codec]
        except IndexError:
            raise CorruptRecordException(f"Unknown compression codec id {source_codec} in the append to "
                                         f"{self.topic_partition}") from None
        target = config.target_compression if config.target_compression is not None else source
        info = LogAppendInfo(
            LogOffsetMetadata(first_offset) if first_offset is not None else None,
            last_offset,
            last_leader_epoch if last_leader_epoch != NO_PARTITION_LEADER_EPOCH else None,
            max_timestamp,
            offset_of_max_timestamp,
            NO_TIMESTAMP,
            self.log_start_offset,
            None,
            source,
            target,
            shallow_count,
            valid_bytes,
            monotonic,
            last_offset_of_first_batch,
        )
        return info, batch_epochs, has_producer_ids, has_legacy_batches

    def _trim_invalid_bytes(self, records: MemoryRecords, info: LogAppendInfo) -> MemoryRecords:
        valid_bytes = info.valid_bytes
        if valid_bytes < 0:
            raise CorruptRecordException(
                f"Cannot append record batch with illegal length {valid_bytes} to log for {self.topic_partition}. "
                "A possible cause is a corrupted produce request.")
        if valid_bytes == records.size_in_bytes:
            return records
        return MemoryRecords(records.buffer[:valid_bytes])

    # ------------------------------------------------------------------ roll

    def _maybe_roll(self, messages_size: int, append_info: LogAppendInfo, now: Optional[int] = None) -> LogSegment:
        segment = self._segments.segments[-1]
        if now is None:
            now = self.time.milliseconds()
        config = self._config
        params = RollParams(config.max_segment_ms, config.segment_size, append_info.max_timestamp,
                            append_info.last_offset, messages_size, now)
        if segment.should_roll(params):
            self.logger.debug("Rolling new log segment (log_size = %d/%d, offset_index_size = %d/%d, "
                              "time_index_size = %d/%d, inactive_time_ms = %d/%d).", segment.size,
                              config.segment_size, segment.offset_index.entries, segment.offset_index.max_entries,
                              segment.time_index.entries, segment.time_index.max_entries,
                              segment.time_waited_for_roll(now, append_info.max_timestamp),
                              config.max_segment_ms - segment.roll_jitter_ms)
            first = append_info.first_offset
            # Without a first offset (never for magic 2) Kafka bounds it from the last offset instead.
            roll_offset = first.message_offset if first is not None else append_info.last_offset - INT_MAX
            return self.roll(roll_offset)
        return segment

    def roll(self, expected_next_offset: Optional[int] = None) -> LogSegment:
        """Start a new active segment at max(``expected_next_offset``, log end offset) and seal the old one."""
        start = self.time.milliseconds()
        try:
            self._check_for_log_dir_failure()
            with self._lock:
                self._check_if_memory_mapped_buffer_closed()
                new_offset = max(expected_next_offset or 0, self.log_end_offset)
                log_file = log_files.log_file(self._dir, new_offset)
                view = self._segments
                active = view.segments[-1] if view.segments else None
                if new_offset in view.offsets:
                    if active is not None and active.base_offset == new_offset and active.size == 0:
                        # an empty active segment whose index reports full: replace it (KAFKA-6388)
                        self.logger.warning("Trying to roll a new log segment with start offset %d while it already "
                                            "exists and is active with size 0.", new_offset)
                        self._remove_and_delete_segments([active], True, SegmentDeletionReason.LOG_ROLL)
                    else:
                        raise KafkaException(
                            f"Trying to roll a new log segment for topic partition {self.topic_partition} with start "
                            f"offset {new_offset} while it already exists. Existing segment is "
                            f"{view.floor(new_offset)}.")
                elif active is not None and new_offset < active.base_offset:
                    raise KafkaException(
                        f"Trying to roll a new log segment for topic partition {self.topic_partition} with start "
                        f"offset {new_offset} lower than start offset of the active segment {active}")
                else:
                    for file in (log_file, log_files.offset_index_file(self._dir, new_offset),
                                 log_files.time_index_file(self._dir, new_offset),
                                 log_files.transaction_index_file(self._dir, new_offset)):
                        if os.path.exists(file):
                            self.logger.warning("Newly rolled segment file %s already exists; deleting it first",
                                                file)
                            os.remove(file)
                    if active is not None:
                        active.on_become_inactive_segment()

                # A snapshot at the new base offset lets recovery of this segment start from it.
                self.producer_state_manager.update_map_end_offset(new_offset)
                self.producer_state_manager.take_snapshot()
                crash_point("log.roll.after_producer_snapshot")

                segment = LogSegment.open(self._dir, new_offset, self.config, self.time,
                                          init_file_size=self.init_file_size, preallocate=self.config.preallocate)
                self._add_segment(segment)
                crash_point("log.roll.after_new_segment")
                # same end offset, new segment position
                self._update_log_end_offset(self._next_offset_metadata.message_offset)
                self._schedule_or_run("flush-log", lambda: self._flush_unless_offline(new_offset))
                self.logger.info("Rolled new log segment at offset %d in %d ms.", new_offset,
                                 self.time.milliseconds() - start)
                return segment
        except OSError as e:
            raise self._io_failed(f"Error while rolling log segment for {self.topic_partition} in dir "
                                  f"{self._parent_dir}", e) from e

    def _schedule_or_run(self, name: str, fun: Callable[[], None], delay_ms: int = 0) -> None:
        if self.scheduler is not None:
            self.scheduler.schedule(name, fun, delay_ms=delay_ms)
        else:
            fun()

    # ------------------------------------------------------------------ flush

    @property
    def unflushed_messages(self) -> int:
        return self.log_end_offset - self.recovery_point

    def flush(self, offset: Optional[int] = None) -> None:
        """fsync every segment holding offsets below ``offset`` (default: the log end) and advance the recovery point."""
        if offset is None:
            offset = self.log_end_offset
        if self._closed:
            # a post-roll flush scheduled before close() found the files already closed (and synced)
            return
        try:
            self._check_for_log_dir_failure()
            if offset > self.recovery_point:
                self.logger.debug("Flushing log up to offset %d, last flushed: %d, unflushed: %d",
                                  offset, self._last_flushed_time, self.unflushed_messages)
                flush_timer = log_flush_stats().log_flush_timer
                for segment in self.log_segments_range(self.recovery_point, offset):
                    try:
                        with flush_timer.time():
                            segment.flush()
                    except ClosedChannelException:
                        # Deleted (retention, truncation) while we were flushing: nothing left to sync.
                        # Any other closed file is a real failure.
                        if segment in self._segments.segments and not self._closed:
                            raise
                # an epoch change deferred by a LeaderAndIsr being handled is durable before the
                # recovery point moves past its data (recovery would not assign it again)
                if self.leader_epoch_cache is not None:
                    self.leader_epoch_cache.flush_pending()
                with self._lock:
                    self._check_if_memory_mapped_buffer_closed()
                    if offset > self.recovery_point:
                        self.recovery_point = offset
                        self._last_flushed_time = self.time.milliseconds()
        except OSError as e:
            raise self._io_failed(f"Error while flushing log for {self.topic_partition} in dir {self._parent_dir} "
                                  f"with offset {offset}", e) from e

    def _flush_unless_offline(self, offset: int) -> None:
        """The post-roll flush-log task: a log whose dir has failed (or whose files the
        LogManager closed when the dir went offline) has nothing left to sync, and saying so
        with a KafkaStorageException traceback from the scheduler would only repeat the
        error already logged when the dir failed."""
        if self._log_dir_offline or self._is_memory_mapped_buffer_closed:
            self.logger.debug("Skipping flush-log up to offset %d: the log dir %s is offline",
                              offset, self._parent_dir)
            return
        self.flush(offset)

    # ------------------------------------------------------------------ read

    def read(self, start_offset: int, max_length: int, isolation: FetchIsolation = FetchIsolation.LOG_END,
             min_one_message: bool = False) -> FetchDataInfo:
        """Batches starting at the one holding ``start_offset``, up to ``max_length`` bytes, bounded by ``isolation``.

        Raises OffsetOutOfRangeException below the log start offset or beyond the log end offset.
        """
        try:
            self._check_for_log_dir_failure()
            include_aborted_txns = isolation is FetchIsolation.TXN_COMMITTED
            # One snapshot of the end offset and the segment list: later appends cannot widen the read.
            end_offset_metadata = self._next_offset_metadata
            end_offset = end_offset_metadata.message_offset
            view = self._segments
            index = view.floor_index(start_offset)
            if start_offset > end_offset or index < 0 or start_offset < self.log_start_offset:
                raise OffsetOutOfRangeException(
                    f"Received request for offset {start_offset} for partition {self.topic_partition}, but we only "
                    f"have log segments in the range {self.log_start_offset} to {end_offset}.")
            if isolation is FetchIsolation.LOG_END:
                max_offset_metadata = end_offset_metadata
            elif isolation is FetchIsolation.HIGH_WATERMARK:
                max_offset_metadata = self._fetch_high_watermark_metadata()
            else:
                max_offset_metadata = self._fetch_last_stable_offset_metadata()

            if start_offset == max_offset_metadata.message_offset:
                return self._empty_fetch_data_info(max_offset_metadata, include_aborted_txns)
            if start_offset > max_offset_metadata.message_offset:
                return self._empty_fetch_data_info(self.convert_to_offset_metadata_or_throw(start_offset),
                                                   include_aborted_txns)

            segments = view.segments
            n = len(segments)
            while index < n:
                segment = segments[index]
                if max_offset_metadata.segment_base_offset == segment.base_offset:
                    max_position = max_offset_metadata.relative_position_in_segment
                else:
                    max_position = segment.size
                fetch_data_info = segment.read(start_offset, max_length, max_position, min_one_message)
                if fetch_data_info is not None:
                    if include_aborted_txns:
                        fetch_data_info = self._add_aborted_transactions(start_offset, view, index, fetch_data_info)
                    return fetch_data_info
                index += 1
            # In range, but everything above start_offset is gone (e.g. deleted segments).
            return FetchDataInfo(self._next_offset_metadata, _empty_records())
        except OSError as e:
            raise self._io_failed(f"Exception while reading from {self.topic_partition} in dir {self._parent_dir}",
                                  e) from e

    @staticmethod
    def _empty_fetch_data_info(fetch_offset_metadata: LogOffsetMetadata, include_aborted_txns: bool) -> FetchDataInfo:
        return FetchDataInfo(fetch_offset_metadata, _empty_records(), False,
                             [] if include_aborted_txns else None)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list:
        """The aborted transactions (AbortedTxn) of the transaction indexes from the segment holding
        ``start_offset`` on that overlap [log start offset, ``upper_bound_offset``) (the cleaner's
        question: as Kafka, the range starts at the log start offset)."""
        view = self._segments
        index = view.floor_index(start_offset)
        if index < 0:
            return []
        aborted: list = []
        self._collect_aborted_transactions(self.log_start_offset, upper_bound_offset, view, index, aborted)
        return aborted

    def _add_aborted_transactions(self, start_offset: int, view: "_SegmentView", index: int,
                                  fetch_info: FetchDataInfo) -> FetchDataInfo:
        """``fetch_info`` with the aborted transactions overlapping what it returns."""
        segment = view.segments[index]
        fetch_size = _records_size(fetch_info.records)
        start_metadata = fetch_info.fetch_offset_metadata
        upper_bound_offset = segment.fetch_upper_bound_offset(
            OffsetPosition(start_metadata.message_offset, start_metadata.relative_position_in_segment), fetch_size)
        if upper_bound_offset is not None:
            pass
        elif index + 1 < len(view.segments):
            upper_bound_offset = view.segments[index + 1].base_offset
        else:
            upper_bound_offset = self.log_end_offset
        aborted: list = []
        self._collect_aborted_transactions(start_offset, upper_bound_offset, view, index, aborted)
        return replace(fetch_info, aborted_transactions=aborted)

    @staticmethod
    def _collect_aborted_transactions(start_offset: int, upper_bound_offset: int, view: "_SegmentView",
                                      index: int, into: list) -> None:
        segments = view.segments
        while index < len(segments):
            result = segments[index].collect_aborted_txns(start_offset, upper_bound_offset)
            into.extend(result.aborted_transactions)
            if result.is_complete:
                return
            index += 1

    def convert_to_offset_metadata_or_throw(self, offset: int) -> LogOffsetMetadata:
        return self.read(offset, 1, FetchIsolation.LOG_END, False).fetch_offset_metadata

    def fetch_offset_by_timestamp(self, target_timestamp: int):
        """ListOffsets: EARLIEST (-2), LATEST (-1) or the first batch with timestamp >= target.

        Returns a TimestampAndOffset (leader epoch included when known) or None.
        """
        try:
            self._check_for_log_dir_failure()
            cache = self.leader_epoch_cache
            if target_timestamp == EARLIEST_TIMESTAMP:
                # the earliest epoch entry may predate the log start offset only if it covers it
                epoch = None
                if cache is not None:
                    entry = cache.earliest_entry
                    if entry is not None and entry.start_offset <= self.log_start_offset:
                        epoch = entry.epoch
                return TimestampAndOffset(NO_TIMESTAMP, self.log_start_offset, epoch)
            if target_timestamp == LATEST_TIMESTAMP:
                epoch = cache.latest_epoch if cache is not None else None
                return TimestampAndOffset(NO_TIMESTAMP, self.log_end_offset, epoch)
            if self.config.record_version < MAGIC_VALUE_V1:
                raise UnsupportedForMessageFormatException(
                    f"Cannot search offsets based on timestamp because message format version for partition "
                    f"{self.topic_partition} is {self.config.message_format_version} which is earlier than the "
                    f"minimum required version 0.10.0-IV0")
            for segment in self._segments.segments:
                if segment.largest_timestamp >= target_timestamp:
                    return segment.find_offset_by_timestamp(target_timestamp, self.log_start_offset)
            return None
        except OSError as e:
            raise self._io_failed(f"Error while fetching offset by timestamp for {self.topic_partition} in dir "
                                  f"{self._parent_dir}", e) from e

    def legacy_fetch_offsets_before(self, timestamp: int, max_num_offsets: int) -> List[int]:
        """ListOffsets v0: segment base offsets by last-modified time, newest first."""
        segments = self._segments.segments
        offset_time = [(max(s.base_offset, self.log_start_offset), s.last_modified) for s in segments]
        if segments[-1].size > 0:
            offset_time.append((self.log_end_offset, self.time.milliseconds()))
        if timestamp == LATEST_TIMESTAMP:
            start_index = len(offset_time) - 1
        elif timestamp == EARLIEST_TIMESTAMP:
            start_index = 0
        else:
            start_index = len(offset_time) - 1
            while start_index >= 0 and offset_time[start_index][1] > timestamp:
                start_index -= 1
        ret_size = min(max_num_offsets, start_index + 1)
        ret = [offset_time[start_index - j][0] for j in range(ret_size)]
        return sorted(ret, reverse=True)

    # ------------------------------------------------------------------ retention

    def delete_old_segments(self) -> int:
        """Retention: by time and size when cleanup.policy has delete, and always below the log start offset."""
        if self.config.delete:
            return (self._delete_retention_ms_breached_segments() + self._delete_retention_size_breached_segments()
                    + self._delete_log_start_offset_breached_segments())
        return self._delete_log_start_offset_breached_segments()

    def _delete_retention_ms_breached_segments(self) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0
        start_ms = self.time.milliseconds()
        return self._delete_old_segments(
            lambda segment, _next: start_ms - segment.largest_timestamp > retention_ms,
            SegmentDeletionReason.RETENTION_MS_BREACH)

    def _delete_retention_size_breached_segments(self) -> int:
        retention_size = self.config.retention_size
        size = self.size
        if retention_size < 0 or size < retention_size:
            return 0
        diff = [size - retention_size]

        def should_delete(segment: LogSegment, _next) -> bool:
            if diff[0] - segment.size >= 0:
                diff[0] -= segment.size
                return True
            return False

        return self._delete_old_segments(should_delete, SegmentDeletionReason.RETENTION_SIZE_BREACH)

    def _delete_log_start_offset_breached_segments(self) -> int:
        return self._delete_old_segments(
            lambda segment, next_segment: next_segment is not None and next_segment.base_offset <= self.log_start_offset,
            SegmentDeletionReason.START_OFFSET_BREACH)

    def _delete_old_segments(self, predicate, reason: SegmentDeletionReason) -> int:
        with self._lock:
            deletable = self._deletable_segments(predicate)
            if deletable:
                return self._delete_segments(deletable, reason)
            return 0

    def _deletable_segments(self, predicate) -> List[LogSegment]:
        """Oldest-first run of segments matching ``predicate`` that lie wholly below the high watermark.

        An empty last segment is never returned: it would only be recreated.
        """
        segments = self._segments.segments
        deletable = []
        hw = self.high_watermark
        for i, segment in enumerate(segments):
            if i + 1 < len(segments):
                next_segment = segments[i + 1]
                upper_bound = next_segment.base_offset
                is_last_and_empty = False
            else:
                next_segment = None
                upper_bound = self.log_end_offset
                is_last_and_empty = segment.size == 0
            if hw >= upper_bound and predicate(segment, next_segment) and not is_last_and_empty:
                deletable.append(segment)
            else:
                break
        return deletable

    def _delete_segments(self, deletable: List[LogSegment], reason: SegmentDeletionReason) -> int:
        try:
            self._check_for_log_dir_failure()
            num_to_delete = len(deletable)
            if num_to_delete > 0:
                # a log always keeps one segment; roll first if all are going
                if len(self._segments.segments) == num_to_delete:
                    self.roll()
                with self._lock:
                    self._check_if_memory_mapped_buffer_closed()
                    self._remove_and_delete_segments(deletable, True, reason)
                    self.maybe_increment_log_start_offset(self._segments.offsets[0],
                                                          LogStartOffsetIncrementReason.SEGMENT_DELETION)
            return num_to_delete
        except OSError as e:
            raise self._io_failed(f"Error while deleting segments for {self.topic_partition} in dir "
                                  f"{self._parent_dir}", e) from e

    def _remove_and_delete_segments(self, segments: Sequence[LogSegment], async_delete: bool,
                                    reason: SegmentDeletionReason) -> None:
        to_delete = list(segments)
        if not to_delete:
            return
        with self._lock:
            self.logger.info("Deleting segments due to %s: %s", reason, to_delete)
            self._segments = self._segments.without(s.base_offset for s in to_delete)
            self._delete_segment_files(to_delete, async_delete)

    def _delete_segment_files(self, segments: Sequence[LogSegment], async_delete: bool,
                              delete_producer_state_snapshots: bool = True) -> None:
        """Rename to ``.deleted`` now (so a crash finishes the job at load) and delete now or later.

        The delay lets in-flight reads that still hold the segment finish before its files go.
        """
        segments = list(segments)
        for segment in segments:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
        crash_point("log.delete_segment_files.after_rename")

        def delete_segments() -> None:
            self.logger.info("Deleting segment files %s", segments)
            try:
                for segment in segments:
                    segment.close_handlers()
                    segment.delete_if_exists()
                    if delete_producer_state_snapshots:
                        self.producer_state_manager.remove_and_delete_snapshot(segment.base_offset)
            except OSError as e:
                raise self._io_failed(f"Error while deleting segments for {self.topic_partition} in dir "
                                      f"{self._parent_dir}", e) from e

        if async_delete and self.scheduler is not None:
            self.scheduler.schedule("delete-file", delete_segments, delay_ms=self.config.file_delete_delay_ms)
        else:
            delete_segments()

    def replace_segments(self, new_segments: Sequence[LogSegment], old_segments: Sequence[LogSegment],
                         is_recovered_swap_file: bool = False) -> None:
        """Swap ``new_segments`` (named ``.cleaned``) in for ``old_segments``, crash-safely.

        Order: new files ``.cleaned`` -> ``.swap`` (highest offset first), old files
        -> ``.deleted``, new files ``.swap`` -> final name. Loading after a crash
        at any step either discards the new files or completes the swap.
        """
        with self._lock:
            sorted_new = sorted(new_segments, key=lambda s: s.base_offset)
            current = set(self._segments.offsets)
            sorted_old = sorted((s for s in old_segments if s.base_offset in current), key=lambda s: s.base_offset)
            self._check_if_memory_mapped_buffer_closed()
            if not is_recovered_swap_file:
                for segment in reversed(sorted_new):
                    segment.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
                crash_point("log.replace_segments.after_swap_rename")
            for segment in reversed(sorted_new):
                self._add_segment(segment)
            new_base_offsets = {s.base_offset for s in sorted_new}
            for segment in sorted_old:
                if segment.base_offset != sorted_new[0].base_offset:
                    self._segments = self._segments.without([segment.base_offset])
                self._delete_segment_files([segment], True,
                                           delete_producer_state_snapshots=segment.base_offset not in new_base_offsets)
            crash_point("log.replace_segments.after_old_segments_renamed")
            for segment in sorted_new:
                segment.change_file_suffixes(SWAP_FILE_SUFFIX, "")

    # ------------------------------------------------------------------ truncation

    def truncate_to(self, target_offset: int) -> bool:
        """Drop every offset >= ``target_offset`` (whole batches). Returns True if anything was removed."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic_partition} to a negative offset "
                             f"({target_offset}).")
        try:
            self._check_for_log_dir_failure()
            if target_offset >= self.log_end_offset:
                self.logger.info("Truncating to %d has no effect as the largest offset in the log is %d",
                                 target_offset, self.log_end_offset - 1)
                # The leader may have written an epoch entry without data; drop it anyway.
                with self._lock:
                    if self.leader_epoch_cache is not None:
                        self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
                return False
            self.logger.info("Truncating to offset %d", target_offset)
            with self._lock:
                self._check_if_memory_mapped_buffer_closed()
                if self._segments.offsets[0] > target_offset:
                    self.truncate_fully_and_start_at(target_offset)
                else:
                    deletable = [s for s in self._segments.segments if s.base_offset > target_offset]
                    self._remove_and_delete_segments(deletable, True, SegmentDeletionReason.LOG_TRUNCATION)
                    self.active_segment.truncate_to(target_offset)
                    if self.leader_epoch_cache is not None:
                        self.leader_epoch_cache.truncate_from_end(target_offset)
                    self._complete_truncation(min(target_offset, self.log_start_offset), target_offset)
                return True
        except OSError as e:
            raise self._io_failed(f"Error while truncating log to offset {target_offset} for {self.topic_partition} "
                                  f"in dir {self._parent_dir}", e) from e

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Delete all data and restart the log, empty, at ``new_offset``."""
        try:
            self._check_for_log_dir_failure()
            self.logger.debug("Truncate and start at offset %d", new_offset)
            with self._lock:
                self._check_if_memory_mapped_buffer_closed()
                self._remove_and_delete_segments(self._segments.segments, True, SegmentDeletionReason.LOG_TRUNCATION)
                self._add_segment(LogSegment.open(self._dir, new_offset, self.config, self.time,
                                                  init_file_size=self.init_file_size,
                                                  preallocate=self.config.preallocate))
                if self.leader_epoch_cache is not None:
                    self.leader_epoch_cache.clear_and_flush()
                self.producer_state_manager.truncate_fully_and_start_at(new_offset)
                self._complete_truncation(new_offset, new_offset)
        except OSError as e:
            raise self._io_failed(f"Error while truncating the entire log for {self.topic_partition} in dir "
                                  f"{self._parent_dir}", e) from e

    def _complete_truncation(self, start_offset: int, end_offset: int) -> None:
        self.log_start_offset = start_offset
        active = self.active_segment
        self._next_offset_metadata = LogOffsetMetadata(end_offset, active.base_offset, active.size)
        self.recovery_point = min(self.recovery_point, end_offset)
        self._rebuild_producer_state(end_offset, False, self.producer_state_manager)
        self.update_high_watermark(min(self.high_watermark, end_offset))

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the segments; a producer snapshot at the end offset spares the next start a log scan."""
        self.logger.debug("Closing log")
        self.remove_log_metrics()
        with self._lock:
            self._check_if_memory_mapped_buffer_closed()
            self._cancel_producer_expire_check()
            self._closed = True
            try:
                self.producer_state_manager.take_snapshot()
                for segment in self._segments.segments:
                    segment.close()
            except OSError as e:
                raise self._io_failed(f"Error while closing log for {self.topic_partition} in dir "
                                      f"{self._parent_dir}", e) from e

    def _cancel_producer_expire_check(self) -> None:
        check = self._producer_expire_check
        self._producer_expire_check = None
        if check is not None and hasattr(check, "cancel"):
            try:
                check.cancel()
            except Exception:  # noqa: BLE001 - the task also checks the closed flag
                pass

    def close_handlers(self) -> None:
        """Release file handles without writing (the disk may be gone)."""
        with self._lock:
            for segment in self._segments.segments:
                segment.close_handlers()
            self._is_memory_mapped_buffer_closed = True

    def rename_dir(self, name: str) -> None:
        with self._lock:
            try:
                self._check_for_log_dir_failure()
                renamed_dir = os.path.join(os.path.dirname(os.path.abspath(self._dir)), name)
                os.replace(self._dir, renamed_dir)
                if renamed_dir != self._dir:
                    was_future = self.is_future
                    self._dir = renamed_dir
                    self._parent_dir = os.path.dirname(renamed_dir)
                    for segment in self._segments.segments:
                        segment.update_parent_dir(renamed_dir)
                    self.producer_state_manager.update_parent_dir(renamed_dir)
                    # the epoch checkpoint file moved with the directory
                    self._initialize_leader_epoch_cache()
                    if self._dir.endswith(DELETE_DIR_SUFFIX):
                        # on its way to deletion: no longer one of the broker's logs
                        self.remove_log_metrics()
                    elif was_future != self.is_future:
                        # a future log become the current one
                        self.remove_log_metrics()
                        self.new_metrics()
            except OSError as e:
                raise self._io_failed(f"Error while renaming dir for {self.topic_partition} in log dir "
                                      f"{self._parent_dir}", e) from e

    def delete(self) -> None:
        """Delete the whole log directory now."""
        self.remove_log_metrics()
        with self._lock:
            try:
                self._check_for_log_dir_failure()
                self._check_if_memory_mapped_buffer_closed()
                self._cancel_producer_expire_check()
                self._closed = True
                self._remove_and_delete_segments(self._segments.segments, False, SegmentDeletionReason.LOG_DELETION)
                crash_point("log.delete.after_segments_deleted")
                shutil.rmtree(self._dir, ignore_errors=True)
                self._is_memory_mapped_buffer_closed = True
            except OSError as e:
                raise self._io_failed(f"Error while deleting log for {self.topic_partition} in dir "
                                      f"{self._parent_dir}", e) from e

    def __repr__(self) -> str:
        return (f"Log(dir={self._dir}, topic={self.topic_partition.topic}, partition={self.topic_partition.partition}, "
                f"highWatermark={self.high_watermark}, lastStableOffset={self.last_stable_offset}, "
                f"logStartOffset={self.log_start_offset}, logEndOffset={self.log_end_offset})")


def _legacy_entry(buf, pos: int, topic_partition) -> Optional[LegacyRecordBatch]:
    """The v0/v1 log entry at ``pos`` of ``buf``, or None if the buffer ends inside it."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    length = _I32.unpack_from(buf, pos + LENGTH_OFFSET)[0]
    if length < RECORD_OVERHEAD_V0:
        raise CorruptRecordException(f"Record size {length} in the append to {topic_partition} is less than the "
                                     f"minimum record overhead ({RECORD_OVERHEAD_V0})")
    if len(buf) - pos < LOG_OVERHEAD + length:
        return None
    return LegacyRecordBatch(buf[pos:pos + LOG_OVERHEAD + length])


def _empty_records():
    return MemoryRecords.EMPTY


def _records_size(records) -> int:
    size = records.size_in_bytes
    return size() if callable(size) else size
