"""Port of core/src/main/scala/kafka/log/LogCleaner.scala.

Compaction of logs whose ``cleanup.policy`` includes ``compact``: a record is
obsolete once a later record in the same log has the same key, and the
cleaner removes obsolete records in the background.

A compacted log has a *clean* head (already compacted; it starts at the log
start offset and ends at the partition's ``cleaner-offset-checkpoint`` entry)
and a *dirty* tail. The dirty tail splits into a cleanable part and an
uncleanable part: the active segment, anything at or past the first unstable
offset (open transactions), and segments with records younger than
``min.compaction.lag.ms`` are never cleaned.

Each cleaner thread (``kafka-log-cleaner-thread-N``, ``log.cleaner.threads`` of
them) repeatedly:

1. asks the LogCleanerManager for the log with the largest cleanable share
   (over ``min.cleanable.dirty.ratio``, or overdue by ``max.compaction.lag.ms``);
2. reads the cleanable section into an OffsetMap (digest of key -> latest
   offset), as far as the map's memory allows (``log.cleaner.dedupe.buffer.size``
   shared by the threads, filled to ``log.cleaner.io.buffer.load.factor``); the
   offset after the last mapped record becomes the new checkpoint;
3. copies every segment from the start of the log up to that offset, in groups
   that fit in one segment (``segment.bytes`` and the index size limit), into
   one ``.cleaned`` segment per group, keeping a record only if no later
   offset for its key is in the map (records past the map are all kept);
4. swaps each cleaned segment in for its group through ``Log.replace_segments``
   (``.cleaned`` -> ``.swap`` -> final name, old files -> ``.deleted``), which
   loading the log completes or rolls back after a crash;
5. writes the checkpoint, then runs retention on the compacted logs (their
   retention runs here instead of in LogManager's retention task).

A record with a null value is a tombstone: it deletes its key. Tombstones
survive cleaning for ``delete.retention.ms`` after their segment became clean
(so that a consumer that has read the key has time to see the delete); the
horizon is the last-modified time of the last clean segment less that
retention, and a segment last modified before the horizon loses its
tombstones on the next clean.

Idempotent and transactional producers: the batch holding the last sequence
of a still active producer is kept (emptied of its records if need be) so
that the broker can go on checking that producer's sequence numbers after a
restart; records of aborted transactions are dropped regardless of keys; a
transaction marker is dropped only once no batch of its transaction is left
and the tombstone horizon has passed.

Batches keep their base and last offsets, producer fields, compression codec
and timestamp type; a batch that loses records is re-encoded (and recompressed)
with the survivors at their original offsets, a batch that keeps all of them
is copied byte for byte. A log of message format v0/v1 is cleaned the same way,
entry by entry: a wrapper that loses messages becomes a new wrapper of the
survivors at their offsets, with the same codec.
"""
from __future__ import annotations

import heapq
import logging
import os
import struct
import threading
import time as _time
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    KafkaException,
    KafkaStorageException,
    LogSegmentOffsetOverflowException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files, log_segment
from kafka_py.log.cleaner_config import CleanerConfig
from kafka_py.log.log_cleaner_manager import (
    LogCleanerManager,
    LogCleaningAbortedException,
    LogCleaningException,
    LogToClean,
    PreCleanStats,
)
from kafka_py.log.log import Log
from kafka_py.log.log_segment import LogSegment
from kafka_py.log.transaction_index import AbortedTxn, TransactionIndex
from kafka_py.log.offset_map import OffsetMap, SkimpyOffsetMap
from kafka_py.log.producer_state_manager import LastRecord
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.clients.common.record.control_record_type import ControlRecordType
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyEntry, build_legacy_records
from kafka_py.clients.common.record.default_record_batch import (
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TimestampType,
    assemble_batch,
    build_empty_batch,
    write_record,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

__all__ = [
    "LogCleaner", "Cleaner", "CleanerThread", "CleanerStats", "CleanedTransactionMetadata", "Throttler",
    "LogToClean", "PreCleanStats", "CleanerConfig", "ThreadShutdownException",
]

_LENGTH = struct.Struct(">i")

# KafkaConfig names of the settings a running cleaner can take without a broker restart.
RECONFIGURABLE_CONFIGS = frozenset({
    "log.cleaner.threads",
    "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size",
    "message.max.bytes",
    "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
})


class ThreadShutdownException(LogCleaningAbortedException):
    """A cleaner thread noticed its shutdown mid-clean.

    Kafka lets this escape the clean; here it is a kind of abort, so the
    half-written ``.cleaned`` segment is removed on the way out just as for an
    abort, instead of waiting for the next start to sweep it up.
    """


class Throttler:
    """Port of kafka.utils.Throttler: sleeps when the observed rate of bytes exceeds the desired rate."""

    def __init__(self, desired_rate_per_sec: float, check_interval_ms: int = 100, throttle_down: bool = True,
                 metric_name: str = "throttler", units: str = "entries", time: Optional[Time] = None):
        self.desired_rate_per_sec = desired_rate_per_sec
        self.check_interval_ns = check_interval_ms * 1_000_000
        self.throttle_down = throttle_down
        self.metric_name = metric_name
        self.units = units
        self.time = time if time is not None else Time.SYSTEM
        self._lock = threading.Lock()
        self._period_start_ns = self.time.nanoseconds()
        self._observed_so_far = 0.0

    def maybe_throttle(self, observed: float) -> None:
        with self._lock:
            self._observed_so_far += observed
            now = self.time.nanoseconds()
            elapsed_ns = now - self._period_start_ns
            # check once per interval, and only when something was observed in it
            if elapsed_ns > self.check_interval_ns and self._observed_so_far > 0:
                rate_per_sec = self._observed_so_far * 1e9 / elapsed_ns
                if self.throttle_down == (rate_per_sec > self.desired_rate_per_sec):
                    desired_rate_ms = self.desired_rate_per_sec / 1000.0
                    sleep_ms = round(self._observed_so_far / desired_rate_ms - elapsed_ns // 1_000_000)
                    if sleep_ms > 0:
                        logger.debug("Natural rate is %f per second but desired rate is %f, sleeping for %d ms "
                                     "to compensate.", rate_per_sec, self.desired_rate_per_sec, sleep_ms)
                        self.time.sleep(sleep_ms)
                self._period_start_ns = self.time.nanoseconds()
                self._observed_so_far = 0.0


class CleanerStats:
    """Counters of one cleaning run (Kafka's CleanerStats)."""

    def __init__(self, time: Optional[Time] = None):
        self._time = time if time is not None else Time.SYSTEM
        self.start_time = self._time.milliseconds()
        self.map_complete_time = -1
        self.end_time = -1
        self.bytes_read = 0
        self.bytes_written = 0
        self.map_bytes_read = 0
        self.map_messages_read = 0
        self.messages_read = 0
        self.invalid_messages_read = 0
        self.messages_written = 0
        self.buffer_utilization = 0.0

    def read_messages(self, messages_read: int, bytes_read: int) -> None:
        self.messages_read += messages_read
        self.bytes_read += bytes_read

    def invalid_message(self) -> None:
        self.invalid_messages_read += 1

    def recopy_messages(self, messages_written: int, bytes_written: int) -> None:
        self.messages_written += messages_written
        self.bytes_written += bytes_written

    def index_messages_read(self, size: int) -> None:
        self.map_messages_read += size

    def index_bytes_read(self, size: int) -> None:
        self.map_bytes_read += size

    def index_done(self) -> None:
        self.map_complete_time = self._time.milliseconds()

    def all_done(self) -> None:
        self.end_time = self._time.milliseconds()

    @property
    def elapsed_secs(self) -> float:
        return (self.end_time - self.start_time) / 1000.0

    @property
    def elapsed_index_secs(self) -> float:
        return (self.map_complete_time - self.start_time) / 1000.0


class _AbortedTransactionMetadata:
    __slots__ = ("aborted_txn", "last_observed_batch_offset")

    def __init__(self, aborted_txn: AbortedTxn) -> None:
        self.aborted_txn = aborted_txn
        self.last_observed_batch_offset: Optional[int] = None


class CleanedTransactionMetadata:
    """Transactions seen while walking the log: which batches belong to aborted ones and which markers may go.

    Aborted transactions come from ``Log.collect_aborted_transactions`` (objects with
    ``producer_id`` and ``first_offset``), consumed in first-offset order as the walk passes them.
    """

    def __init__(self) -> None:
        self._ongoing_committed_txns: set = set()
        self._ongoing_aborted_txns: Dict[int, _AbortedTransactionMetadata] = {}
        self._aborted_transactions: list = []
        self._seq = 0
        # the transaction index of the segment being written, for the aborts whose markers stay
        self.cleaned_index: Optional[TransactionIndex] = None

    def add_aborted_transactions(self, aborted_transactions: Iterable) -> None:
        for txn in aborted_transactions:
            self._seq += 1
            heapq.heappush(self._aborted_transactions, (txn.first_offset, self._seq, txn))

    def on_control_batch_read(self, control_batch) -> bool:
        """Account for a marker batch; True if it may be discarded."""
        self._consume_aborted_txns_up_to(control_batch.last_offset)
        first = next(iter(_load(control_batch).records()), None)
        if first is None:
            # already emptied by an earlier clean
            return True
        try:
            control_type = ControlRecordType.parse(first.key)
        except Exception:  # noqa: BLE001 - an unknown control type is kept, as Kafka keeps it
            return False
        producer_id = control_batch.producer_id
        if control_type == ControlRecordType.ABORT:
            aborted = self._ongoing_aborted_txns.pop(producer_id, None)
            # keep the marker while a batch of its transaction is still in the log
            if aborted is not None and aborted.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted.aborted_txn)
                return False
            return True
        if control_type == ControlRecordType.COMMIT:
            if producer_id in self._ongoing_committed_txns:
                self._ongoing_committed_txns.discard(producer_id)
                return False
            return True
        return False

    def _consume_aborted_txns_up_to(self, offset: int) -> None:
        heap = self._aborted_transactions
        while heap and heap[0][0] <= offset:
            _, _, txn = heapq.heappop(heap)
            self._ongoing_aborted_txns.setdefault(txn.producer_id, _AbortedTransactionMetadata(txn))

    def on_batch_read(self, batch) -> bool:
        """Account for a data batch; True if it belongs to an aborted transaction (and may be discarded)."""
        self._consume_aborted_txns_up_to(batch.last_offset)
        if batch.is_transactional:
            aborted = self._ongoing_aborted_txns.get(batch.producer_id)
            if aborted is not None:
                aborted.last_observed_batch_offset = batch.last_offset
                return True
            self._ongoing_committed_txns.add(batch.producer_id)
        return False


def _load(batch):
    """A DefaultRecordBatch for either kind of batch (file batches hold only their header)."""
    return batch.load() if hasattr(batch, "load") else batch


class _FilterResult:
    """What one pass of the record filter over a buffer of batches kept (Kafka's FilterResult)."""

    __slots__ = ("output", "messages_read", "bytes_read", "messages_retained", "bytes_retained", "max_offset",
                 "max_timestamp", "shallow_offset_of_max_timestamp")

    def __init__(self) -> None:
        self.output = bytearray()
        self.messages_read = 0
        self.bytes_read = 0
        self.messages_retained = 0
        self.bytes_retained = 0
        self.max_offset = -1
        self.max_timestamp = NO_TIMESTAMP
        self.shallow_offset_of_max_timestamp = -1

    def update_retained_batch_metadata(self, max_timestamp: int, shallow_offset_of_max_timestamp: int,
                                       max_offset: int, messages_retained: int, bytes_retained: int) -> None:
        self.messages_retained += messages_retained
        self.bytes_retained += bytes_retained
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.shallow_offset_of_max_timestamp = shallow_offset_of_max_timestamp
        self.max_offset = max(max_offset, self.max_offset)


# what checkBatchRetention may answer (Kafka's RecordFilter.BatchRetention)
_DELETE = 0         # drop the batch whatever its records
_DELETE_EMPTY = 1   # keep the batch only if a record survives
_RETAIN_EMPTY = 2   # keep the batch, as an empty header if no record survives


class Cleaner:
    """The cleaning work itself; one per cleaner thread, with its own offset map and I/O buffers.

    ``check_done(topic_partition)`` is called between chunks and raises to stop a clean
    (an abort, or the thread shutting down).
    """

    def __init__(self, id: int, offset_map: OffsetMap, io_buffer_size: int, max_io_buffer_size: int,
                 dup_buffer_load_factor: float, throttler: Throttler, time: Time,
                 check_done: Callable[[TopicPartition], None]):
        self.id = id
        self.offset_map = offset_map
        self.io_buffer_size = io_buffer_size
        self.max_io_buffer_size = max_io_buffer_size
        self.dup_buffer_load_factor = dup_buffer_load_factor
        self.throttler = throttler
        self.time = time
        self.check_done = check_done
        self.logger = IdentLogger(logger, f"Cleaner {id}: ")
        self._read_buffer = bytearray(io_buffer_size)
        self._write_buffer_size = io_buffer_size
        if not offset_map.slots * dup_buffer_load_factor > 1:
            raise ValueError("offset map is too small to fit in even a single message, so log cleaning will never "
                             "make progress. You can increase log.cleaner.dedupe.buffer.size or decrease "
                             "log.cleaner.threads")

    # ------------------------------------------------------------------ one clean

    def clean(self, cleanable: LogToClean) -> Tuple[int, CleanerStats]:
        """Clean the log up to the end of what fits in the offset map; returns (first offset not cleaned, stats)."""
        # tombstones in segments last modified before this time may go
        clean_segments = cleanable.log.log_segments_range(0, cleanable.first_dirty_offset)
        if clean_segments:
            delete_horizon_ms = clean_segments[-1].last_modified - cleanable.log.config.delete_retention_ms
        else:
            delete_horizon_ms = 0
        return self.do_clean(cleanable, delete_horizon_ms)

    def do_clean(self, cleanable: LogToClean, delete_horizon_ms: int) -> Tuple[int, CleanerStats]:
        log = cleanable.log
        self.logger.info("Beginning cleaning of log %s.", log.name)
        stats = CleanerStats(self.time)

        self.logger.info("Building offset map for %s...", log.name)
        upper_bound_offset = cleanable.first_uncleanable_offset
        self.build_offset_map(log, cleanable.first_dirty_offset, upper_bound_offset, self.offset_map, stats)
        end_offset = self.offset_map.latest_offset + 1
        stats.index_done()

        uncleanable_segments = log.log_segments_range(0, cleanable.first_uncleanable_offset)
        cleanable_horizon_ms = uncleanable_segments[-1].last_modified if uncleanable_segments else 0
        self.logger.info("Cleaning log %s (cleaning prior to %s, discarding tombstones prior to %s)...",
                         log.name, _format_ms(cleanable_horizon_ms), _format_ms(delete_horizon_ms))
        transaction_metadata = CleanedTransactionMetadata()
        grouped_segments = self.group_segments_by_size(log.log_segments_range(0, end_offset), log.config.segment_size,
                                                       log.config.max_index_size, cleanable.first_uncleanable_offset)
        for group in grouped_segments:
            self.clean_segments(log, group, self.offset_map, delete_horizon_ms, stats, transaction_metadata)

        stats.buffer_utilization = self.offset_map.utilization
        stats.all_done()
        return end_offset, stats

    def clean_segments(self, log, segments: Sequence[LogSegment], offset_map: OffsetMap, delete_horizon_ms: int,
                       stats: CleanerStats, transaction_metadata: CleanedTransactionMetadata) -> None:
        """Copy the retained records of ``segments`` into one new segment and swap it in for them."""
        cleaned = LogCleaner.create_new_cleaned_segment(log, segments[0].base_offset)
        # aborted transactions whose markers survive are listed in the cleaned segment's index
        transaction_metadata.cleaned_index = cleaned.txn_index
        try:
            last_records_of_active_producers = _last_records_of_active_producers(log)
            for i, current_segment in enumerate(segments):
                next_segment = segments[i + 1] if i + 1 < len(segments) else None
                # the whole segment's range: the cleaned segment's transaction state must cover all of it
                start_offset = current_segment.base_offset
                upper_bound_offset = (next_segment.base_offset if next_segment is not None
                                      else current_segment.read_next_offset())
                transaction_metadata.add_aborted_transactions(
                    log.collect_aborted_transactions(start_offset, upper_bound_offset))
                retain_deletes_and_txn_markers = current_segment.last_modified > delete_horizon_ms
                self.logger.info("Cleaning %s in log %s into %d with deletion horizon %d, %s deletes.",
                                 current_segment, log.name, cleaned.base_offset, delete_horizon_ms,
                                 "retaining" if retain_deletes_and_txn_markers else "discarding")
                try:
                    self.clean_into(log.topic_partition, current_segment.log, cleaned, offset_map,
                                    retain_deletes_and_txn_markers, log.config.max_message_size,
                                    transaction_metadata, last_records_of_active_producers, stats)
                except LogSegmentOffsetOverflowException as e:
                    # Only logs written by old message formats can hold such a segment; this broker
                    # writes magic 2 only, so give up on this clean rather than split the segment.
                    self.logger.info("Caught segment overflow error during cleaning: %s", e)
                    raise LogCleaningAbortedException() from e

            cleaned.on_become_inactive_segment()
            # on disk before the swap makes it the segment of record
            cleaned.flush()
            # carry the group's age over, so the tombstone horizon keeps measuring from the data's writes
            cleaned.last_modified = segments[-1].last_modified
            crash_point("cleaner.after_cleaned_segment_written")
            self.logger.info("Swapping in cleaned segment %s for segment(s) %s in log %s", cleaned,
                             list(segments), log)
            log.replace_segments([cleaned], list(segments))
        except LogCleaningAbortedException:
            try:
                cleaned.close_handlers()
                cleaned.delete_if_exists()
            except Exception:  # noqa: BLE001 - the abort is what matters; a stray .cleaned goes at next load
                self.logger.warning("Could not delete aborted cleaned segment %s", cleaned,
                                    exc_info=True)
            raise

    def clean_into(self, topic_partition: TopicPartition, source_records, dest: LogSegment, offset_map: OffsetMap,
                   retain_deletes_and_txn_markers: bool, max_log_message_size: int,
                   transaction_metadata: CleanedTransactionMetadata,
                   last_records_of_active_producers: Mapping[int, LastRecord], stats: CleanerStats) -> None:
        """Copy the records of one segment (``source_records``, a FileRecords) that are to be kept into ``dest``."""
        position = 0
        while position < source_records.size_in_bytes():
            self.check_done(topic_partition)
            records = source_records.read_into(self._read_buffer, position)
            if records.size_in_bytes == 0:
                # the file ended before its recorded size: never loop on a read that returns nothing
                raise CorruptRecordException(f"Unexpected end of log segment {source_records.file} at position "
                                             f"{position} of {source_records.size_in_bytes()}")
            self.throttler.maybe_throttle(records.size_in_bytes)
            result = self._filter_to(topic_partition, records, offset_map, retain_deletes_and_txn_markers,
                                     max_log_message_size, transaction_metadata, last_records_of_active_producers,
                                     stats)
            stats.read_messages(result.messages_read, result.bytes_read)
            stats.recopy_messages(result.messages_retained, result.bytes_retained)
            position += result.bytes_read

            if result.output:
                # No Log lock needed: nothing else sees this segment before replace_segments.
                dest.append(result.max_offset, result.max_timestamp, result.shallow_offset_of_max_timestamp,
                            MemoryRecords(result.output))
                self.throttler.maybe_throttle(len(result.output))

            # not even one whole batch fitted: the buffer is too small for the next batch
            if records.size_in_bytes > 0 and result.bytes_read == 0:
                self._grow_buffers_or_fail(source_records, position, max_log_message_size, records)
        self.restore_buffers()

    def _filter_to(self, topic_partition: TopicPartition, records: MemoryRecords, offset_map: OffsetMap,
                   retain_deletes_and_txn_markers: bool, max_log_message_size: int,
                   transaction_metadata: CleanedTransactionMetadata,
                   last_records_of_active_producers: Mapping[int, LastRecord], stats: CleanerStats) -> _FilterResult:
        """Kafka's MemoryRecords.filterTo with the cleaner's RecordFilter, over the whole batches in ``records``."""
        result = _FilterResult()
        output = result.output
        latest_offset = offset_map.latest_offset
        for batch in records.batches(strict=False):
            # A CRC check costs little and keeps a damaged batch from being re-encoded under a fresh,
            # valid checksum.
            batch.ensure_valid()
            batch_size = batch.size_in_bytes
            result.bytes_read += batch_size

            discard_batch_records = self._should_discard_batch(batch, transaction_metadata,
                                                               retain_deletes_and_txn_markers)
            if batch.has_producer_id and _is_batch_last_record_of_producer(batch, last_records_of_active_producers):
                retention = _RETAIN_EMPTY
            elif discard_batch_records:
                retention = _DELETE
            else:
                retention = _DELETE_EMPTY
            if retention == _DELETE:
                continue

            retained = []
            write_original_batch = True
            max_offset = -1
            for record in batch.records():
                result.messages_read += 1
                # a batch kept only for its producer state loses all its records
                if not discard_batch_records and self._should_retain_record(
                        offset_map, latest_offset, retain_deletes_and_txn_markers, record, stats):
                    if record.offset > max_offset:
                        max_offset = record.offset
                    retained.append(record)
                else:
                    write_original_batch = False

            if retained:
                if write_original_batch:
                    output += batch.buffer
                    result.update_retained_batch_metadata(batch.max_timestamp, batch.last_offset, batch.last_offset,
                                                          len(retained), batch_size)
                else:
                    if batch.magic < CURRENT_MAGIC_VALUE:
                        data, max_timestamp, shallow_offset = _build_retained_legacy_entries(batch, retained)
                    else:
                        data, max_timestamp = _build_retained_batch(batch, retained)
                        shallow_offset = batch.last_offset
                    if len(data) > batch_size and len(data) > max_log_message_size:
                        logger.warning("Record batch from %s with last offset %d exceeded max record batch size %d "
                                       "after cleaning (new size is %d). Consumers with version earlier than "
                                       "0.10.1.0 may need to increase their fetch sizes.", topic_partition,
                                       batch.last_offset, max_log_message_size, len(data))
                    output += data
                    result.update_retained_batch_metadata(max_timestamp, shallow_offset, max_offset,
                                                          len(retained), len(data))
            elif retention == _RETAIN_EMPTY:
                output += build_empty_batch(
                    base_offset=batch.base_offset, last_offset=batch.last_offset, producer_id=batch.producer_id,
                    producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                    timestamp=batch.max_timestamp, is_transactional=batch.is_transactional,
                    is_control_batch=batch.is_control_batch, partition_leader_epoch=batch.partition_leader_epoch,
                    timestamp_type=batch.timestamp_type)
                result.update_retained_batch_metadata(batch.max_timestamp, batch.last_offset, batch.last_offset, 0,
                                                      RECORD_BATCH_OVERHEAD)
        return result

    @staticmethod
    def _should_discard_batch(batch, transaction_metadata: CleanedTransactionMetadata,
                              retain_txn_markers: bool) -> bool:
        if batch.is_control_batch:
            # markers share the tombstone horizon, and never go before their transaction's batches
            return transaction_metadata.on_control_batch_read(batch) and not retain_txn_markers
        return transaction_metadata.on_batch_read(batch)

    @staticmethod
    def _should_retain_record(offset_map: OffsetMap, latest_offset: int, retain_deletes: bool, record,
                              stats: CleanerStats) -> bool:
        # the map knows nothing past its last offset, so everything there is kept
        if record.offset > latest_offset:
            return True
        key = record.key
        if key is None:
            # a compacted topic takes no null keys; whatever got in anyway cannot be compacted
            stats.invalid_message()
            return False
        # kept only if it is the key's latest, and (for a tombstone) the delete is still to be seen
        return record.offset >= offset_map.get(key) and (record.value is not None or retain_deletes)

    # ------------------------------------------------------------------ I/O buffers

    def _grow_buffers_or_fail(self, source_records, position: int, max_log_message_size: int,
                              memory_records: MemoryRecords) -> None:
        """Double the buffers (up to the largest allowed batch) so the next batch fits.

        A batch may legitimately exceed the topic's max.message.bytes (recompression
        during cleaning, or a limit lowered after the write); then the buffer grows to
        exactly that batch.
        """
        capacity = len(self._read_buffer)
        if capacity >= max_log_message_size:
            log_desc = f"log segment {source_records.file} at position {position}"
            buf = memory_records.buffer
            if len(buf) < LOG_OVERHEAD:
                raise RuntimeError(f"Could not determine next batch size for {log_desc}")
            next_batch_size = LOG_OVERHEAD + _LENGTH.unpack_from(buf, 8)[0]
            if next_batch_size <= 0:
                raise RuntimeError(f"Invalid batch size {next_batch_size} for {log_desc}")
            if next_batch_size <= capacity:
                raise RuntimeError(f"Batch size {next_batch_size} < buffer size {capacity}, but not processed for "
                                   f"{log_desc}")
            bytes_left = source_records.size_in_bytes() - position
            if next_batch_size > bytes_left:
                raise CorruptRecordException(f"Log segment may be corrupt, batch size {next_batch_size} > "
                                             f"{bytes_left} bytes left in segment for {log_desc}")
            max_size = next_batch_size
        else:
            max_size = max_log_message_size
        self.grow_buffers(max_size)

    def grow_buffers(self, max_log_message_size: int) -> None:
        max_buffer_size = max(max_log_message_size, self.max_io_buffer_size)
        capacity = len(self._read_buffer)
        if capacity >= max_buffer_size or self._write_buffer_size >= max_buffer_size:
            raise RuntimeError(f"This log contains a message larger than maximum allowable size of "
                               f"{max_buffer_size}.")
        new_size = min(capacity * 2, max_buffer_size)
        self.logger.info("Growing cleaner I/O buffers from %d bytes to %d bytes.", capacity, new_size)
        self._read_buffer = bytearray(new_size)
        self._write_buffer_size = new_size

    def restore_buffers(self) -> None:
        if len(self._read_buffer) > self.io_buffer_size:
            self._read_buffer = bytearray(self.io_buffer_size)
        self._write_buffer_size = self.io_buffer_size

    @property
    def read_buffer_size(self) -> int:
        return len(self._read_buffer)

    # ------------------------------------------------------------------ grouping

    @staticmethod
    def group_segments_by_size(segments: Iterable[LogSegment], max_size: int, max_index_size: int,
                               first_uncleanable_offset: int) -> List[List[LogSegment]]:
        """Runs of consecutive segments whose logs, offset indexes and time indexes each fit the limits.

        Each group becomes one cleaned segment, so segments do not shrink forever. A group
        also stays within 2^31 offsets of its base (relative offsets in the indexes are 4 bytes);
        a segment's last offset is bounded by the next segment's base offset (or the first
        uncleanable offset), which avoids scanning segments for their real last offset.
        """
        segs = list(segments)
        grouped: List[List[LogSegment]] = []
        i = 0
        n = len(segs)
        while i < n:
            head = segs[i]
            group = [head]
            log_size = head.size
            index_size = head.offset_index.size_in_bytes
            time_index_size = head.time_index.size_in_bytes
            i += 1
            while i < n:
                candidate = segs[i]
                last_offset_bound = (segs[i + 1].base_offset - 1 if i + 1 < n else first_uncleanable_offset - 1)
                if (log_size + candidate.size <= max_size
                        and index_size + candidate.offset_index.size_in_bytes <= max_index_size
                        and time_index_size + candidate.time_index.size_in_bytes <= max_index_size
                        and last_offset_bound - group[-1].base_offset <= INT_MAX):
                    group.append(candidate)
                    log_size += candidate.size
                    index_size += candidate.offset_index.size_in_bytes
                    time_index_size += candidate.time_index.size_in_bytes
                    i += 1
                else:
                    break
            grouped.append(group)
        return grouped

    # ------------------------------------------------------------------ the offset map

    def build_offset_map(self, log, start: int, end: int, offset_map: OffsetMap, stats: CleanerStats) -> None:
        """Map each key in [start, end) to its latest offset, segment by segment, until the map is full."""
        offset_map.clear()
        dirty = list(log.log_segments_range(start, end))
        next_segment_start_offsets = [s.base_offset for s in dirty[1:]] + ([end] if dirty else [])
        self.logger.info("Building offset map for log %s for %d segments in offset range [%d, %d).",
                         log.name, len(dirty), start, end)
        transaction_metadata = CleanedTransactionMetadata()
        transaction_metadata.add_aborted_transactions(log.collect_aborted_transactions(start, end))
        # at least as many segments as fit slots * load factor entries; more if keys repeat a lot
        for i, (segment, next_segment_start_offset) in enumerate(zip(dirty, next_segment_start_offsets)):
            self.check_done(log.topic_partition)
            full = self._build_offset_map_for_segment(log.topic_partition, segment, offset_map, start,
                                                      next_segment_start_offset, log.config.max_message_size,
                                                      transaction_metadata, stats)
            if full:
                self.logger.debug("Offset map is full, %d segments fully mapped, segment with base offset %d is "
                                  "partially mapped", i, segment.base_offset)
                break
        self.logger.info("Offset map for log %s complete.", log.name)

    def _build_offset_map_for_segment(self, topic_partition: TopicPartition, segment: LogSegment,
                                      offset_map: OffsetMap, start_offset: int, next_segment_start_offset: int,
                                      max_log_message_size: int, transaction_metadata: CleanedTransactionMetadata,
                                      stats: CleanerStats) -> bool:
        """Add one segment's keys to the map; True if the map filled up part way."""
        position = segment.offset_index.lookup(start_offset).position
        max_desired_map_size = int(offset_map.slots * self.dup_buffer_load_factor)
        while position < segment.log.size_in_bytes():
            self.check_done(topic_partition)
            try:
                records = segment.log.read_into(self._read_buffer, position)
            except Exception as e:  # noqa: BLE001 - rethrown with the segment named
                raise KafkaException(f"Failed to read from segment {segment} of partition {topic_partition} while "
                                     f"loading offset map: {e}") from e
            self.throttler.maybe_throttle(records.size_in_bytes)
            start_position = position
            bytes_read = 0
            for batch in records.batches(strict=False):
                bytes_read += batch.size_in_bytes
                if batch.is_control_batch:
                    transaction_metadata.on_control_batch_read(batch)
                    stats.index_messages_read(1)
                elif transaction_metadata.on_batch_read(batch):
                    # aborted data never survives cleaning; its keys must not hide older values
                    stats.index_messages_read(batch.record_count)
                else:
                    for record in batch.records():
                        if record.key is not None and record.offset >= start_offset:
                            if offset_map.size < max_desired_map_size:
                                offset_map.put(record.key, record.offset)
                            else:
                                return True
                        stats.index_messages_read(1)
                if batch.last_offset >= start_offset:
                    offset_map.update_latest_offset(batch.last_offset)
            position += bytes_read
            stats.index_bytes_read(bytes_read)
            if position == start_position:
                self._grow_buffers_or_fail(segment.log, position, max_log_message_size, records)
        # offsets may have gaps (earlier cleaning); the map covers the segment up to the next one
        offset_map.update_latest_offset(next_segment_start_offset - 1)
        self.restore_buffers()
        return False


def _format_ms(ms: int) -> str:
    return _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(ms / 1000.0)) + f".{ms % 1000:03d}"


def _last_records_of_active_producers(log) -> Dict[int, LastRecord]:
    """Kafka's Log.lastRecordsOfActiveProducers: per producer id, its last data offset and epoch."""
    result = {}
    for producer_id, entry in log.active_producers.items():
        last_data_offset = entry.last_data_offset
        result[producer_id] = LastRecord(last_data_offset if last_data_offset >= 0 else None, entry.producer_epoch)
    return result


def _is_batch_last_record_of_producer(batch, last_records_of_active_producers: Mapping[int, LastRecord]) -> bool:
    """Whether ``batch`` carries state an active producer still needs.

    That is its last data batch (the last sequence number lives there) or, when the
    producer's last entry is a marker, that marker (it carries the latest epoch, for fencing).
    """
    last_record = last_records_of_active_producers.get(batch.producer_id)
    if last_record is None:
        return False
    if last_record.last_data_offset is not None:
        return batch.last_offset == last_record.last_data_offset
    return batch.is_control_batch and batch.producer_epoch == last_record.producer_epoch


def _build_retained_batch(batch, retained) -> Tuple[bytes, int]:
    """Re-encode ``batch`` with only the ``retained`` records; returns (bytes, max timestamp).

    The batch keeps its base offset and its last offset delta even if its last record is
    gone: the producer's last sequence number is derived from them.
    """
    base_offset = batch.base_offset
    first_timestamp = retained[0].timestamp
    body = bytearray()
    max_timestamp = NO_TIMESTAMP
    for record in retained:
        ts = record.timestamp
        write_record(body, record.offset - base_offset, ts - first_timestamp, record.key, record.value,
                     record.headers)
        if ts > max_timestamp:
            max_timestamp = ts
    timestamp_type = batch.timestamp_type
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        max_timestamp = batch.max_timestamp
    data = assemble_batch(
        body,
        base_offset=base_offset,
        last_offset_delta=batch.last_offset_delta,
        record_count=len(retained),
        base_timestamp=first_timestamp,
        max_timestamp=max_timestamp,
        compression=batch.compression_type,
        timestamp_type=timestamp_type,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        is_transactional=batch.is_transactional,
        is_control_batch=batch.is_control_batch,
        partition_leader_epoch=batch.partition_leader_epoch,
    )
    return data, max_timestamp


def _build_retained_legacy_entries(batch, retained) -> Tuple[bytes, int, int]:
    """Kafka's buildRetainedRecordsInto for a log entry of message format v0/v1: the retained
    messages at their offsets, each its own entry, or one wrapper (at the last retained offset)
    when the entry was compressed; returns (bytes, max timestamp, offset of the entry holding it)."""
    timestamp_type = batch.timestamp_type
    log_append_time = timestamp_type == TimestampType.LOG_APPEND_TIME
    data = build_legacy_records([LegacyEntry(r.offset, r.timestamp, r.key, r.value) for r in retained],
                                batch.magic, batch.compression_type, timestamp_type,
                                batch.max_timestamp if log_append_time else NO_TIMESTAMP)
    last_offset = retained[-1].offset
    if batch.magic == MAGIC_VALUE_V0:
        return data, NO_TIMESTAMP, last_offset
    if log_append_time:
        return data, batch.max_timestamp, last_offset if batch.is_compressed else retained[0].offset
    max_timestamp, offset_of_max = NO_TIMESTAMP, last_offset
    for record in retained:
        if record.timestamp > max_timestamp:
            max_timestamp, offset_of_max = record.timestamp, record.offset
    return data, max_timestamp, last_offset if batch.is_compressed else offset_of_max


class CleanerThread(ShutdownableThread):
    """One cleaner thread: clean the filthiest log, or sleep ``log.cleaner.backoff.ms`` when there is none."""

    def __init__(self, log_cleaner: "LogCleaner", thread_id: int):
        # daemon: a cleaner stuck in a long clean must not keep an exiting interpreter alive
        super().__init__(name=f"kafka-log-cleaner-thread-{thread_id}", is_interruptible=False, daemon=True)
        self.log_cleaner = log_cleaner
        self.thread_id = thread_id
        config = log_cleaner.current_config
        if config.dedupe_buffer_size // config.num_threads > INT_MAX:
            logger.warning("Cannot use more than 2G of cleaner buffer space per cleaner thread, ignoring excess "
                           "buffer space...")
        self.cleaner = Cleaner(
            id=thread_id,
            offset_map=SkimpyOffsetMap(min(config.dedupe_buffer_size // config.num_threads, INT_MAX),
                                       config.hash_algorithm),
            io_buffer_size=config.io_buffer_size // config.num_threads // 2,
            max_io_buffer_size=config.max_message_size,
            dup_buffer_load_factor=config.dedupe_buffer_load_factor,
            throttler=log_cleaner.throttler,
            time=log_cleaner.time,
            check_done=self._check_done,
        )
        self.last_stats = CleanerStats(log_cleaner.time)
        self.last_pre_clean_stats = PreCleanStats()

    def _check_done(self, topic_partition: TopicPartition) -> None:
        if not self.is_running:
            raise ThreadShutdownException()
        self.log_cleaner.cleaner_manager.check_cleaning_aborted(topic_partition)

    def do_work(self) -> None:
        cleaned = self.try_clean_filthiest_log()
        if not cleaned:
            self.pause(self.log_cleaner.current_config.back_off_ms)

    def try_clean_filthiest_log(self) -> bool:
        try:
            return self.clean_filthiest_log()
        except LogCleaningException as e:
            logger.warning("Unexpected exception thrown when cleaning log %s. Marking its partition (%s) as "
                           "uncleanable", e.log, e.log.topic_partition, exc_info=True)
            self.log_cleaner.cleaner_manager.mark_partition_uncleanable(e.log.parent_dir, e.log.topic_partition)
            return False

    def clean_filthiest_log(self) -> bool:
        manager = self.log_cleaner.cleaner_manager
        pre_clean_stats = PreCleanStats()
        cleanable = manager.grab_filthiest_compacted_log(self.log_cleaner.time, pre_clean_stats)
        if cleanable is None:
            cleaned = False
        else:
            self.last_pre_clean_stats = pre_clean_stats
            try:
                self.clean_log(cleanable)
                cleaned = True
            except ThreadShutdownException:
                raise
            except Exception as e:  # noqa: BLE001 - pinned on this log, which is then left alone
                raise LogCleaningException(cleanable.log, str(e), e) from e

        # Retention for compacted logs runs here, so it never races a clean of the same log.
        deletable = manager.deletable_logs()
        try:
            for _, log in deletable:
                try:
                    log.delete_old_segments()
                except ThreadShutdownException:
                    raise
                except Exception as e:  # noqa: BLE001
                    raise LogCleaningException(log, str(e), e) from e
        finally:
            manager.done_deleting([tp for tp, _ in deletable])
        return cleaned

    def clean_log(self, cleanable: LogToClean) -> None:
        start_offset = cleanable.first_dirty_offset
        end_offset = start_offset
        try:
            end_offset, stats = self.cleaner.clean(cleanable)
            self.record_stats(self.cleaner.id, cleanable.log.name, start_offset, end_offset, stats)
        except ThreadShutdownException:
            pass
        except LogCleaningAbortedException:
            pass  # truncation or deletion wanted the log; the abort is the expected outcome
        except KafkaStorageException:
            pass  # the log dir is already offline
        except OSError as e:
            log_dir = cleanable.log.parent_dir
            msg = f"Failed to clean up log for {cleanable.topic_partition} in dir {log_dir} due to IOException"
            channel = self.log_cleaner.log_dir_failure_channel
            if channel is not None:
                channel.maybe_add_offline_log_dir(log_dir, msg, e)
            else:
                logger.error("%s: %s", msg, e)
        finally:
            self.log_cleaner.cleaner_manager.done_cleaning(cleanable.topic_partition, cleanable.log.parent_dir,
                                                           end_offset)

    def record_stats(self, id: int, name: str, from_offset: int, to_offset: int, stats: CleanerStats) -> None:
        """Log a summary of one clean (Kafka's multi-line report)."""
        self.last_stats = stats

        def mb(n: float) -> float:
            return n / (1024 * 1024)

        def ratio(a: float, b: float) -> float:
            return a / b if b else 0.0

        elapsed = stats.elapsed_secs
        index_secs = stats.elapsed_index_secs
        clean_secs = elapsed - index_secs
        message = (
            f"\n\tLog cleaner thread {id} cleaned log {name} (dirty section = [{from_offset}, {to_offset}])\n"
            f"\t{mb(stats.bytes_read):,.1f} MB of log processed in {elapsed:,.1f} seconds "
            f"({ratio(mb(stats.bytes_read), elapsed):,.1f} MB/sec).\n"
            f"\tIndexed {mb(stats.map_bytes_read):,.1f} MB in {index_secs:.1f} seconds "
            f"({ratio(mb(stats.map_bytes_read), index_secs):,.1f} Mb/sec, {100 * ratio(index_secs, elapsed):.1f}% "
            f"of total time)\n"
            f"\tBuffer utilization: {100 * stats.buffer_utilization:.1f}%\n"
            f"\tCleaned {mb(stats.bytes_read):,.1f} MB in {clean_secs:.1f} seconds "
            f"({ratio(mb(stats.bytes_read), clean_secs):,.1f} Mb/sec, {100 * ratio(clean_secs, elapsed):.1f}% "
            f"of total time)\n"
            f"\tStart size: {mb(stats.bytes_read):,.1f} MB ({stats.messages_read:,d} messages)\n"
            f"\tEnd size: {mb(stats.bytes_written):,.1f} MB ({stats.messages_written:,d} messages)\n"
            f"\t{100.0 * (1.0 - ratio(stats.bytes_written, stats.bytes_read)):.1f}% size reduction "
            f"({100.0 * (1.0 - ratio(stats.messages_written, stats.messages_read)):.1f}% fewer messages)\n")
        logger.info(message)
        pre = self.last_pre_clean_stats
        if pre.delayed_partitions > 0:
            logger.info("\tCleanable partitions: %d, Delayed partitions: %d, max delay: %d",
                        pre.cleanable_partitions, pre.delayed_partitions, pre.max_compaction_delay_ms)
        if stats.invalid_messages_read > 0:
            logger.warning("\tFound %d invalid messages during compaction.", stats.invalid_messages_read)


class LogCleaner(KafkaMetricsGroup):
    """The log cleaner: a pool of CleanerThreads over the LogManager's logs.

    ``logs`` is the LogManager's live mapping of TopicPartition -> Log; logs with
    ``cleanup.policy`` containing ``compact`` are cleaned.

    Gauges ``kafka.log:type=LogCleaner``, over each thread's last cleaning:
    max-buffer-utilization-percent, cleaner-recopy-percent, max-clean-time-secs,
    max-compaction-delay-secs, DeadThreadCount; removed at shutdown.
    """

    metrics_group = "kafka.log"
    metrics_type_name = "LogCleaner"

    def __init__(self, initial_config: CleanerConfig, log_dirs: Iterable[str], logs: Mapping[TopicPartition, Log],
                 log_dir_failure_channel=None, time: Optional[Time] = None):
        self._config = initial_config
        self.log_dirs = [os.path.abspath(os.fspath(d)) for d in log_dirs]
        self.logs = logs
        self.log_dir_failure_channel = log_dir_failure_channel
        self.time = time if time is not None else Time.SYSTEM
        self.cleaner_manager = LogCleanerManager(self.log_dirs, logs, log_dir_failure_channel)
        # one throttle for the reads and writes of all threads together
        self.throttler = Throttler(initial_config.max_io_bytes_per_second, check_interval_ms=300,
                                   throttle_down=True, metric_name="cleaner-io", units="bytes", time=self.time)
        self.cleaners: List[CleanerThread] = []
        self._lock = threading.Lock()
        self._gauges = [(name, self.replace_gauge(name, read)) for name, read in (
            ("max-buffer-utilization-percent", lambda: self.max_buffer_utilization_percent),
            ("cleaner-recopy-percent", lambda: self.cleaner_recopy_percent),
            ("max-clean-time-secs", lambda: max(0, int(max(
                (c.last_stats.elapsed_secs for c in list(self.cleaners)), default=0.0)))),
            ("max-compaction-delay-secs", lambda: max(0, max(
                (c.last_pre_clean_stats.max_compaction_delay_ms for c in list(self.cleaners)), default=0) // 1000)),
            ("DeadThreadCount", lambda: self.dead_thread_count))]

    # ------------------------------------------------------------------ lifecycle

    def startup(self) -> None:
        logger.info("Starting the log cleaner")
        with self._lock:
            for i in range(self._config.num_threads):
                cleaner = CleanerThread(self, i)
                self.cleaners.append(cleaner)
                cleaner.start()

    def shutdown(self) -> None:
        logger.info("Shutting down the log cleaner.")
        with self._lock:
            # ask them all first, so the threads wind down together
            for cleaner in self.cleaners:
                cleaner.initiate_shutdown()
            for cleaner in self.cleaners:
                cleaner.await_shutdown()
                offset_map = cleaner.cleaner.offset_map
                if isinstance(offset_map, SkimpyOffsetMap):
                    offset_map.close()
            self.cleaners.clear()
        for name, gauge in self._gauges:
            self.remove_metric_if_same(name, gauge)
        self.cleaner_manager.remove_metrics()

    # ------------------------------------------------------------------ dynamic reconfiguration

    reconfigurable_configs = RECONFIGURABLE_CONFIGS

    def validate_reconfiguration(self, new_config) -> None:
        """``new_config`` is a KafkaConfig; thread count changes are limited to halving or doubling."""
        from kafka_py.clients.common.config.config_def import ConfigException

        num_threads = LogCleaner.cleaner_config(new_config).num_threads
        current_threads = self._config.num_threads
        name = "log.cleaner.threads"
        if num_threads < 1:
            raise ConfigException(name, num_threads, "Log cleaner threads should be at least 1")
        if num_threads < current_threads // 2:
            raise ConfigException(name, num_threads, f"Log cleaner threads cannot be reduced to less than half "
                                                     f"the current value {current_threads}")
        if num_threads > current_threads * 2:
            raise ConfigException(name, num_threads, f"Log cleaner threads cannot be increased to more than double "
                                                     f"the current value {current_threads}")

    def reconfigure(self, old_config, new_config) -> None:
        """Apply a new KafkaConfig by replacing the threads (which also replaces any that died)."""
        self._config = LogCleaner.cleaner_config(new_config)
        self.throttler.desired_rate_per_sec = self._config.max_io_bytes_per_second
        self.shutdown()
        self.startup()

    @property
    def current_config(self) -> CleanerConfig:
        return self._config

    # ------------------------------------------------------------------ delegations to the manager

    def abort_cleaning(self, topic_partition: TopicPartition) -> None:
        """Stop any clean of the partition in progress, waiting for it."""
        self.cleaner_manager.abort_cleaning(topic_partition)

    def update_checkpoints(self, data_dir: str, partition_to_remove: Optional[TopicPartition] = None) -> None:
        self.cleaner_manager.update_checkpoints(data_dir, partition_to_remove=partition_to_remove)

    def alter_checkpoint_dir(self, topic_partition: TopicPartition, source_log_dir: str, dest_log_dir: str) -> None:
        self.cleaner_manager.alter_checkpoint_dir(topic_partition, source_log_dir, dest_log_dir)

    def handle_log_dir_failure(self, dir: str) -> None:
        self.cleaner_manager.handle_log_dir_failure(dir)

    def maybe_truncate_checkpoint(self, data_dir: str, topic_partition: TopicPartition, offset: int) -> None:
        self.cleaner_manager.maybe_truncate_checkpoint(data_dir, topic_partition, offset)

    def abort_and_pause_cleaning(self, topic_partition: TopicPartition) -> None:
        """Stop any clean of the partition and keep it from being cleaned until ``resume_cleaning``."""
        self.cleaner_manager.abort_and_pause_cleaning(topic_partition)

    def resume_cleaning(self, topic_partitions: Iterable[TopicPartition]) -> None:
        self.cleaner_manager.resume_cleaning(topic_partitions)

    def pause_cleaning_for_non_compacted_partitions(self) -> List[Tuple[TopicPartition, Log]]:
        return self.cleaner_manager.pause_cleaning_for_non_compacted_partitions()

    def await_cleaned(self, topic_partition: TopicPartition, offset: int, max_wait_ms: int = 60000) -> bool:
        """Wait until the partition's cleaner checkpoint reaches ``offset`` (tests and tools)."""
        return self.cleaner_manager.await_checkpoint(topic_partition, offset, max_wait_ms)

    # ------------------------------------------------------------------ state

    @property
    def cleaner_count(self) -> int:
        return len(self.cleaners)

    @property
    def dead_thread_count(self) -> int:
        return sum(1 for c in self.cleaners if c.is_thread_failed)

    @property
    def max_buffer_utilization_percent(self) -> int:
        return int(max((c.last_stats.buffer_utilization for c in self.cleaners), default=0.0) * 100)

    @property
    def cleaner_recopy_percent(self) -> int:
        stats = [c.last_stats for c in self.cleaners]
        written = sum(s.bytes_written for s in stats)
        read = max(sum(s.bytes_read for s in stats), 1)
        return int(100 * written / read)

    # ------------------------------------------------------------------ Kafka's companion object

    @staticmethod
    def cleaner_config(config) -> CleanerConfig:
        """The CleanerConfig of a KafkaConfig."""
        return CleanerConfig(
            num_threads=config.log_cleaner_threads,
            dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size,
            dedupe_buffer_load_factor=config.log_cleaner_dedupe_buffer_load_factor,
            io_buffer_size=config.log_cleaner_io_buffer_size,
            max_message_size=config.message_max_bytes,
            max_io_bytes_per_second=config.log_cleaner_io_max_bytes_per_second,
            back_off_ms=config.log_cleaner_backoff_ms,
            enable_cleaner=config.log_cleaner_enable,
        )

    @staticmethod
    def create_new_cleaned_segment(log, base_offset: int) -> LogSegment:
        """An empty ``.cleaned`` segment at ``base_offset`` in the log's directory (leftovers removed first)."""
        log_segment.delete_if_exists(log.dir, base_offset, file_suffix=log_files.CLEANED_FILE_SUFFIX)
        return LogSegment.open(log.dir, base_offset, log.config, Time.SYSTEM,
                               init_file_size=log.init_file_size, preallocate=log.config.preallocate,
                               file_suffix=log_files.CLEANED_FILE_SUFFIX)
