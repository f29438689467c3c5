"""Port of core/src/main/scala/kafka/log/LogValidator.scala, for magic 2 only.

The leader runs every client (and coordinator) append through here before it
reaches the log: the batch is checked, given its offsets and partition leader
epoch, and possibly re-stamped with the log append time or re-compressed to the
topic's ``compression.type``.

This broker only writes record batches of magic 2, so Kafka's conversions from
and to the v0/v1 message formats have no counterpart here; such input is refused
with UnsupportedForMessageFormatException.

Kafka decodes every record of every produced batch. Here, as in DESIGN.md section
3, the common path stays at batch level: the header carries everything needed to
check a batch (CRC, count against lastOffsetDelta, producer fields, the first
and the largest timestamp) and to assign offsets, which are written in place
into fields the CRC does not cover. Records are only decoded when something
really depends on them:

* a compacted topic (every record needs a key);
* a codec conversion (the batch is rebuilt with the topic's codec);
* a header timestamp outside ``message.timestamp.difference.max.ms`` or a batch
  claiming LogAppendTime: the records are then decoded to report, per record,
  which ones are at fault (``RecordError``), as Kafka's produce response does.

Two consequences of not decoding the common path, both deliberate:

* The timestamp range check reads the batch's first and maximum timestamps; a
  record whose timestamp lies below the batch's first timestamp is not seen.
  The check is off by default (``message.timestamp.difference.max.ms`` is
  Long.MaxValue) and clients write non-decreasing timestamps.
* For an uncompressed batch Kafka reports the offset of the record with the
  largest timestamp as ``shallow_offset_of_max_timestamp``; without decoding we
  report the batch's last offset, which is what Kafka's own LogSegment recovery
  writes into the time index for the same batch. When the records were decoded
  anyway, the exact record offset is reported.
* A compressed batch kept in place is not decompressed, so the offset deltas
  of its records are trusted (the CRC vouches for the bytes). Kafka rebuilds a
  batch whose inner offsets are not 0..n-1; so does this port whenever it has
  decoded the records for another reason.

Per-record failures raise InvalidRecordException or InvalidTimestampException
(Kafka's RecordValidationException) with a ``record_errors`` attribute: a list
of ``RecordError(batch_index, message)`` for the produce response.
"""
from __future__ import annotations

import logging
import struct
import time as _time
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import crc32c as _crc32c

from kafka_py.common.errors import (
    ApiException,
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
    UnsupportedForMessageFormatException,
)
from kafka_py.record.compression import CompressionType
from kafka_py.record.default_record_batch import (
    CURRENT_MAGIC_VALUE,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.record.memory_records import MemoryRecords

logger = logging.getLogger(__name__)

# Kafka's default message.timestamp.difference.max.ms (Long.MaxValue): no range check.
MAX_TIMESTAMP_DIFF_MS = (1 << 63) - 1

# The v2 batch header (DefaultRecordBatch's layout), read in one call by the fast path.
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET = struct.Struct(">q")
_PARTITION_LEADER_EPOCH = struct.Struct(">i")
_CRC_START = 21  # attributes onwards
_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_MASK = 0x08
_CONTROL_MASK = 0x20


class LongRef:
    """Port of core/src/main/scala/kafka/common/LongRef.scala: a mutable long.

    The log hands the validator its next offset in one of these so the validator
    can advance it by the number of records it assigned.
    """

    __slots__ = ("value",)

    def __init__(self, value: int = 0) -> None:
        self.value = value

    def add_and_get(self, delta: int) -> int:
        self.value += delta
        return self.value

    def get_and_add(self, delta: int) -> int:
        previous = self.value
        self.value += delta
        return previous

    def get_and_increment(self) -> int:
        return self.get_and_add(1)

    def increment_and_get(self) -> int:
        return self.add_and_get(1)

    def __repr__(self) -> str:
        return f"LongRef({self.value})"


@dataclass(frozen=True, slots=True)
class RecordConversionStats:
    """Port of clients/.../common/record/RecordConversionStats.java."""

    temporary_memory_bytes: int = 0
    num_records_converted: int = 0
    conversion_time_nanos: int = 0


RecordConversionStats.EMPTY = RecordConversionStats()  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class RecordError:
    """Port of ProduceResponse.RecordError: which record of the batch failed, and why."""

    batch_index: int
    message: Optional[str] = None


@dataclass(frozen=True, slots=True)
class ValidationAndOffsetAssignResult:
    validated_records: MemoryRecords
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    message_size_maybe_changed: bool
    record_conversion_stats: RecordConversionStats


def _compression_type(codec: Any) -> CompressionType:
    if isinstance(codec, CompressionType):
        return codec
    if isinstance(codec, str):
        name = codec.strip().lower()
        # The broker config accepts "uncompressed" for the absence of a codec.
        return CompressionType.NONE if name == "uncompressed" else CompressionType.for_name(name)
    return CompressionType(int(codec))


def get_target_compression_codec(compression_type_config: str, source_codec: Any) -> CompressionType:
    """Port of BrokerCompressionCodec.getTargetCompressionCodec.

    ``producer`` keeps what the producer used; any other value of the topic's
    ``compression.type`` is the codec the log stores.
    """
    if compression_type_config.strip().lower() == "producer":
        return _compression_type(source_codec)
    return _compression_type(compression_type_config)


def _is_client(origin: Any) -> bool:
    # AppendOrigin belongs to producer_state_manager; compare by name so this
    # module does not depend on it (and None means a client, the common case).
    if origin is None:
        return True
    name = getattr(origin, "name", origin)
    return str(name).upper() == "CLIENT"


def _nanoseconds(clock: Any) -> int:
    if clock is not None and hasattr(clock, "nanoseconds"):
        return clock.nanoseconds()
    return _time.monotonic_ns()


@dataclass(slots=True)
class _RecordScan:
    """What one pass over a batch's records found."""

    records: list
    errors: list
    has_timestamp_error: bool
    max_timestamp: int
    index_of_max_timestamp: int
    offsets_consecutive: bool
    uncompressed_bytes: int


class LogValidator:
    """Kafka's LogValidator object; its entry point is ``validate_messages_and_assign_offsets``."""

    @staticmethod
    def validate_messages_and_assign_offsets(
        records: MemoryRecords,
        topic_partition: Any,
        offset_counter: LongRef,
        time: Any,
        now_ms: int,
        source_codec: Any = None,
        target_codec: Any = None,
        compacted_topic: bool = False,
        magic: int = CURRENT_MAGIC_VALUE,
        timestamp_type: TimestampType = TimestampType.CREATE_TIME,
        timestamp_diff_max_ms: int = MAX_TIMESTAMP_DIFF_MS,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        origin: Any = None,
        inter_broker_protocol_version: Any = None,
        broker_topic_stats: Any = None,
        check_crc: bool = True,
    ) -> ValidationAndOffsetAssignResult:
        """Validate ``records`` (one magic-2 batch) and give it offsets from ``offset_counter``.

        ``source_codec`` defaults to the batch's own codec; ``target_codec`` is a
        CompressionType, a codec name, or ``"producer"`` (keep the source codec),
        and defaults to the source codec. ``origin`` is an AppendOrigin (or its
        name); None means a client. When the codecs agree the batch is updated in
        place and returned as ``validated_records`` (copied first if its buffer is
        read-only); otherwise a new batch is built.
        """
        if magic != CURRENT_MAGIC_VALUE:
            raise UnsupportedForMessageFormatException(
                f"This broker writes message format v{CURRENT_MAGIC_VALUE} only, not v{magic}")
        fast = _assign_offsets_fast(records, offset_counter, source_codec, target_codec, compacted_topic,
                                    timestamp_type, timestamp_diff_max_ms, partition_leader_epoch, origin,
                                    check_crc)
        if fast is not None:
            return fast
        return _validate_and_assign_offsets_general(
            records, topic_partition, offset_counter, time, now_ms, source_codec, target_codec, compacted_topic,
            timestamp_type, timestamp_diff_max_ms, partition_leader_epoch, origin, check_crc)


validate_messages_and_assign_offsets = LogValidator.validate_messages_and_assign_offsets


def _validate_and_assign_offsets_general(
        records: MemoryRecords, topic_partition: Any, offset_counter: LongRef, time: Any, now_ms: int,
        source_codec: Any, target_codec: Any, compacted_topic: bool, timestamp_type: Any,
        timestamp_diff_max_ms: int, partition_leader_epoch: int, origin: Any,
        check_crc: bool) -> ValidationAndOffsetAssignResult:
    """Every case: the batch viewed through DefaultRecordBatch, records decoded when needed."""
    batch = _first_and_only_batch(records, topic_partition)
    source = batch.compression_type if source_codec is None else _compression_type(source_codec)
    if target_codec is None:
        target = source
    elif isinstance(target_codec, str) and target_codec.strip().lower() == "producer":
        target = source
    else:
        target = _compression_type(target_codec)

    client = _is_client(origin)
    _validate_batch(topic_partition, batch, client, check_crc)
    if isinstance(timestamp_type, str):  # message.timestamp.type as configured
        timestamp_type = TimestampType.for_name(timestamp_type)
    timestamp_type = TimestampType(timestamp_type)

    # Control records are only compressed if they were written compressed.
    in_place = batch.compression_type == target or (
        batch.compression_type == CompressionType.NONE and batch.is_control_batch)
    if in_place:
        if records.buffer.readonly:
            records = MemoryRecords(bytearray(records.buffer))
            batch = next(iter(records.batches()))
        result = _assign_offsets_in_place(
            records, batch, topic_partition, offset_counter, now_ms, compacted_topic,
            timestamp_type, timestamp_diff_max_ms, partition_leader_epoch)
        if result is not None:
            return result
        # Some old clients number the records of a compressed batch wrongly;
        # Kafka repairs that by rebuilding the batch, and so do we.
    return _build_records_and_assign_offsets(
        batch, topic_partition, offset_counter, time, now_ms, target, compacted_topic,
        timestamp_type, timestamp_diff_max_ms, partition_leader_epoch)


def _codec_id(codec: Any) -> Optional[int]:
    """The id of a CompressionType (or a plain int); None for anything the slow path must parse."""
    if isinstance(codec, int):
        return int(codec)
    return None


def _assign_offsets_fast(records: MemoryRecords, offset_counter: LongRef, source_codec: Any, target_codec: Any,
                         compacted_topic: bool, timestamp_type: Any, timestamp_diff_max_ms: int,
                         partition_leader_epoch: int, origin: Any,
                         check_crc: bool) -> Optional[ValidationAndOffsetAssignResult]:
    """The common produce, settled from the header alone: one writable magic-2 batch from a
    client, kept in its codec, CreateTime, no timestamp range, not a compacted topic, and
    every check of ``_validate_batch`` passing. Returns None for anything else (including
    every batch with a problem), which the general path then handles and reports.

    Kafka's assignOffsetsNonCompressed/in-place compressed path does the same work per
    record; nothing here depends on the records themselves.
    """
    buf = records.buffer
    if (compacted_topic or buf.readonly or timestamp_diff_max_ms < MAX_TIMESTAMP_DIFF_MS
            or not (timestamp_type is TimestampType.CREATE_TIME or (type(timestamp_type) is int
                                                                   and timestamp_type == 0))
            or not (origin is None or getattr(origin, "name", None) == "CLIENT")):
        return None
    size = len(buf)
    if size < RECORD_BATCH_OVERHEAD:
        return None
    (_base, length, _epoch, magic, stored_crc, attributes, last_offset_delta, _first_ts, max_timestamp,
     producer_id, _producer_epoch, base_sequence, count) = _BATCH_HEADER.unpack_from(buf, 0)
    if length + 12 != size or magic != CURRENT_MAGIC_VALUE:
        return None
    codec = attributes & _CODEC_MASK
    source = codec if source_codec is None else _codec_id(source_codec)
    if target_codec is None:
        target = source
    elif isinstance(target_codec, str):
        if target_codec.strip().lower() != "producer":
            return None
        target = source
    else:
        target = _codec_id(target_codec)
    if target is None or target != codec:
        return None
    if (attributes & (_TIMESTAMP_TYPE_MASK | _CONTROL_MASK) or last_offset_delta < 0 or count <= 0
            or count != last_offset_delta + 1 or (producer_id >= 0 and base_sequence < 0)):
        return None
    if check_crc and _crc32c.crc32c(buf[_CRC_START:]) != stored_crc:
        return None
    first_offset = offset_counter.value
    last_offset = first_offset + count - 1
    offset_counter.value = last_offset + 1
    # baseOffset and partitionLeaderEpoch lie before the CRC'd range: no re-checksum.
    _BASE_OFFSET.pack_into(buf, 0, last_offset - last_offset_delta)
    _PARTITION_LEADER_EPOCH.pack_into(buf, 12, partition_leader_epoch)
    if codec:
        offset_of_max = last_offset
    elif max_timestamp == NO_TIMESTAMP:
        offset_of_max = -1
    else:
        offset_of_max = last_offset
    return ValidationAndOffsetAssignResult(records, max_timestamp, offset_of_max, False,
                                           RecordConversionStats.EMPTY)


def _first_and_only_batch(records: MemoryRecords, topic_partition: Any) -> DefaultRecordBatch:
    batches = records.batches()
    batch = next(batches, None)
    if batch is None:
        raise InvalidRecordException("Record batch has no batches at all")
    if batch.magic != CURRENT_MAGIC_VALUE:
        if batch.magic > CURRENT_MAGIC_VALUE or batch.magic < 0:
            raise CorruptRecordException(
                f"Invalid magic {batch.magic} of the record batch in topic partition {topic_partition}.")
        raise UnsupportedForMessageFormatException(
            f"Message format v{batch.magic} is not supported by this broker (v{CURRENT_MAGIC_VALUE} only) "
            f"in topic partition {topic_partition}.")
    # A magic-2 produce request carries exactly one batch (Kafka says "compressed
    # outer record" here for historical reasons; the rule is the same).
    if next(batches, None) is not None:
        raise InvalidRecordException(
            f"Compressed outer record has more than one batch in topic partition {topic_partition}.")
    return batch


def _validate_batch(topic_partition: Any, batch: DefaultRecordBatch, client: bool, check_crc: bool) -> None:
    if batch.size_in_bytes < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordException(
            f"Record batch size {batch.size_in_bytes} is smaller than the minimum batch overhead "
            f"{RECORD_BATCH_OVERHEAD} in topic partition {topic_partition}.")
    if check_crc and not batch.is_valid():
        raise CorruptRecordException(
            f"Record is corrupt (stored crc = {batch.checksum}, computed crc = {batch.compute_checksum()}) "
            f"in topic partition {topic_partition}.")
    if client:
        last_offset_delta = batch.last_offset_delta
        if last_offset_delta < 0:
            raise InvalidRecordException(
                f"Batch has an invalid offset range: [{batch.base_offset}, {batch.last_offset}] "
                f"in topic partition {topic_partition}.")
        count = batch.record_count
        if count <= 0:
            raise InvalidRecordException(
                f"Invalid reported count for record batch: {count} in topic partition {topic_partition}.")
        if count != last_offset_delta + 1:
            raise InvalidRecordException(
                f"Inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] "
                f"and count of records {count} in topic partition {topic_partition}.")
        if batch.is_control_batch:
            raise InvalidRecordException(
                f"Clients are not allowed to write control records in topic partition {topic_partition}.")
        if batch.has_producer_id and batch.base_sequence < 0:
            raise InvalidRecordException(
                f"Invalid sequence number {batch.base_sequence} in record batch with producerId "
                f"{batch.producer_id} in topic partition {topic_partition}.")


def _timestamp_out_of_range(ts: int, now_ms: int, diff_max_ms: int) -> bool:
    return ts != NO_TIMESTAMP and abs(ts - now_ms) > diff_max_ms


def _header_needs_record_scan(batch: DefaultRecordBatch, now_ms: int, timestamp_type: TimestampType,
                              diff_max_ms: int) -> bool:
    """Whether the header alone suggests a timestamp problem worth decoding the records for."""
    if batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
        return True
    if timestamp_type != TimestampType.CREATE_TIME or diff_max_ms >= MAX_TIMESTAMP_DIFF_MS:
        return False
    return (_timestamp_out_of_range(batch.base_timestamp, now_ms, diff_max_ms)
            or _timestamp_out_of_range(batch.max_timestamp, now_ms, diff_max_ms))


def _scan_records(batch: DefaultRecordBatch, topic_partition: Any, now_ms: int, compacted_topic: bool,
                  timestamp_type: TimestampType, diff_max_ms: int) -> _RecordScan:
    """Decode every record once and collect Kafka's per-record verdicts (key first, then timestamp)."""
    errors: list = []
    has_timestamp_error = False
    max_timestamp = NO_TIMESTAMP
    index_of_max = -1
    consecutive = True
    uncompressed = 0
    check_range = timestamp_type == TimestampType.CREATE_TIME
    claims_log_append_time = batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    base_offset = batch.base_offset
    try:
        decoded = list(batch.records())
    except ApiException:
        raise
    except Exception as e:  # malformed varints, bad compressed framing, ...
        raise CorruptRecordException(
            f"Record batch in topic partition {topic_partition} cannot be decoded: {e}") from e
    if len(decoded) != batch.record_count:
        raise InvalidRecordException(
            f"Incorrect declared batch size: header says {batch.record_count} records, "
            f"found {len(decoded)} in topic partition {topic_partition}.")
    for index, record in enumerate(decoded):
        ts = record.timestamp
        if compacted_topic and record.key is None:
            errors.append(RecordError(
                index, f"Compacted topic cannot accept message without key in topic partition {topic_partition}."))
        elif check_range and _timestamp_out_of_range(ts, now_ms, diff_max_ms):
            has_timestamp_error = True
            errors.append(RecordError(
                index, f"Timestamp {ts} of message with offset {record.offset} is out of range. The timestamp "
                       f"should be within [{now_ms - diff_max_ms}, {now_ms + diff_max_ms}]"))
        elif claims_log_append_time:
            has_timestamp_error = True
            errors.append(RecordError(
                index, f"Invalid timestamp type in message with offset {record.offset}. Producer should not "
                       f"set timestamp type to LogAppendTime."))
        if ts > max_timestamp:
            max_timestamp = ts
            index_of_max = index
        if record.offset - base_offset != index:
            consecutive = False
        uncompressed += len(record.key or b"") + len(record.value or b"")
    return _RecordScan(decoded, errors, has_timestamp_error, max_timestamp, index_of_max, consecutive,
                       uncompressed)


def _raise_record_errors(scan: _RecordScan) -> None:
    """Kafka's processRecordErrors: one exception for the batch, listing each failed record."""
    if not scan.errors:
        return
    if scan.has_timestamp_error:
        exc: ApiException = InvalidTimestampException(
            "One or more records have been rejected due to invalid timestamp")
    else:
        exc = InvalidRecordException("One or more records have been rejected")
    exc.record_errors = list(scan.errors)  # type: ignore[attr-defined]
    # The first reason is the useful one in a log line or a test failure.
    exc.args = (f"{exc.args[0]}: {scan.errors[0].message}",)
    raise exc


def _assign_offsets_in_place(records: MemoryRecords, batch: DefaultRecordBatch, topic_partition: Any,
                             offset_counter: LongRef, now_ms: int, compacted_topic: bool,
                             timestamp_type: TimestampType, diff_max_ms: int,
                             partition_leader_epoch: int) -> Optional[ValidationAndOffsetAssignResult]:
    """Kafka's assignOffsetsNonCompressed and the in-place half of the compressed path.

    Returns None when the batch turned out to need rebuilding after all.
    """
    compressed = batch.compression_type != CompressionType.NONE
    scan: Optional[_RecordScan] = None
    if compacted_topic or _header_needs_record_scan(batch, now_ms, timestamp_type, diff_max_ms):
        scan = _scan_records(batch, topic_partition, now_ms, compacted_topic, timestamp_type, diff_max_ms)
        _raise_record_errors(scan)
        if compressed and not scan.offsets_consecutive:
            return None

    count = batch.record_count
    first_offset = offset_counter.value
    last_offset = offset_counter.add_and_get(count) - 1
    # baseOffset and partitionLeaderEpoch lie before the CRC'd range: no re-checksum.
    batch.set_last_offset(last_offset)
    batch.set_partition_leader_epoch(partition_leader_epoch)

    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        batch.set_max_timestamp(TimestampType.LOG_APPEND_TIME, now_ms)
        max_timestamp = now_ms
        offset_of_max = last_offset
    else:
        if scan is not None:
            max_timestamp = scan.max_timestamp
            if max_timestamp != batch.max_timestamp:
                # The header disagreed with its records; Kafka rewrites it from the records.
                batch.set_max_timestamp(timestamp_type, max_timestamp)
        else:
            max_timestamp = batch.max_timestamp
        if compressed:
            offset_of_max = last_offset
        elif max_timestamp == NO_TIMESTAMP:
            offset_of_max = -1
        elif scan is not None:
            offset_of_max = first_offset + scan.index_of_max_timestamp
        else:
            offset_of_max = last_offset

    stats = RecordConversionStats(scan.uncompressed_bytes, 0, 0) if (compressed and scan) \
        else RecordConversionStats.EMPTY
    return ValidationAndOffsetAssignResult(
        validated_records=records,
        max_timestamp=max_timestamp,
        shallow_offset_of_max_timestamp=offset_of_max,
        message_size_maybe_changed=False,
        record_conversion_stats=stats,
    )


def _build_records_and_assign_offsets(batch: DefaultRecordBatch, topic_partition: Any,
                                      offset_counter: LongRef, clock: Any, now_ms: int,
                                      target: CompressionType, compacted_topic: bool,
                                      timestamp_type: TimestampType, diff_max_ms: int,
                                      partition_leader_epoch: int) -> ValidationAndOffsetAssignResult:
    """Kafka's buildRecordsAndAssignOffsets: decode, validate and re-encode with the target codec."""
    start_nanos = _nanoseconds(clock)
    scan = _scan_records(batch, topic_partition, now_ms, compacted_topic, timestamp_type, diff_max_ms)
    _raise_record_errors(scan)
    if not scan.records:
        return ValidationAndOffsetAssignResult(MemoryRecords.EMPTY, NO_TIMESTAMP, -1, True,
                                               RecordConversionStats.EMPTY)

    base_offset = offset_counter.value
    built = build_batch(
        _simple_records(scan.records),
        base_offset=base_offset,
        compression=target,
        timestamp_type=timestamp_type,
        # Producer identity and sequence survive the rebuild, or idempotence and
        # transactions would break for any topic with a broker-side codec.
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        is_transactional=batch.is_transactional,
        is_control_batch=batch.is_control_batch,
        partition_leader_epoch=partition_leader_epoch,
    )
    buffer = bytearray(built)
    new_batch = DefaultRecordBatch(buffer)
    count = len(scan.records)
    last_offset = offset_counter.add_and_get(count) - 1
    if new_batch.last_offset != last_offset:
        # The builder numbers records consecutively from base_offset; this cannot
        # differ unless it changed, and a wrong offset must never reach the log.
        raise CorruptRecordException(
            f"Rebuilt batch ends at offset {new_batch.last_offset}, expected {last_offset}")
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        if new_batch.timestamp_type != TimestampType.LOG_APPEND_TIME or new_batch.max_timestamp != now_ms:
            new_batch.set_max_timestamp(TimestampType.LOG_APPEND_TIME, now_ms)
        max_timestamp = now_ms
    else:
        max_timestamp = scan.max_timestamp
        if new_batch.max_timestamp != max_timestamp:
            new_batch.set_max_timestamp(timestamp_type, max_timestamp)

    stats = RecordConversionStats(
        scan.uncompressed_bytes + len(buffer), count, _nanoseconds(clock) - start_nanos)
    return ValidationAndOffsetAssignResult(
        validated_records=MemoryRecords(buffer),
        max_timestamp=max_timestamp,
        # A magic-2 batch is "shallow": its last offset stands for all its records.
        shallow_offset_of_max_timestamp=last_offset,
        message_size_maybe_changed=True,
        record_conversion_stats=stats,
    )


def _simple_records(decoded: Iterable[Any]) -> list:
    return [SimpleRecord(r.key, r.value, timestamp=r.timestamp, headers=tuple(r.headers or ()))
            for r in decoded]
