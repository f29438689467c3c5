"""Port of core/src/main/scala/kafka/log/LogValidator.scala.

The leader runs every client (and coordinator) append through here before it
reaches the log: the batch is checked, given its offsets and partition leader
epoch, possibly re-stamped with the log append time or re-compressed to the
topic's ``compression.type``, and converted to the message format the log
writes (``magic``, from the topic's ``message.format.version``).

As in Kafka, every record of every batch is walked before the batch may be
appended, whatever its codec: a batch no consumer could read must never reach the
log. Kafka's paths are kept:

* ``assign_offsets_non_compressed``: uncompressed input already of the log's
  format. A v2 batch's records are walked in place (lengths, deltas, headers;
  keys and values skipped, never copied), then the offsets and leader epoch are
  written into the header, which the CRC does not cover. A v0/v1 message set
  (one log entry per message) gets each entry's offset written, and for v1 its
  timestamp and timestamp type (with a new CRC) when the topic uses LogAppendTime;
* ``convert_and_assign_offsets_non_compressed``: uncompressed input of another
  format (a current producer's v2 batch to a topic of format v0/v1, an old
  producer's v0/v1 messages to a v2 topic), rebuilt record by record in the log's;
* ``validate_messages_and_assign_offsets_compressed``: the records are
  decompressed (a v0/v1 wrapper's inner messages each checked against their own
  CRC) and walked the same way; the batch is kept as it is when its codec is the
  topic's, its format the log's (never for v0, whose inner offsets are absolute)
  and its inner offsets run 0..n-1, and rebuilt otherwise: one v2 batch, or one
  v0/v1 wrapper whose inner offsets are relative in v1 and absolute in v0.

Idempotent and transactional batches cannot be written below v2: they are refused
with UnsupportedForMessageFormatException (UNSUPPORTED_FOR_MESSAGE_FORMAT), as Kafka
refuses them. Record headers have no place in v0/v1 either; Kafka's builder refuses
them with an IllegalArgumentException, which reaches the producer as
UNKNOWN_SERVER_ERROR, and so does ours (a ValueError).

The walk of v2 records is ``kafka_py.clients.common.record.partial_default_record.walk_records``,
Kafka's skip-key-value iterator. A framing fault raises InvalidRecordException and
undecodable compressed data or a v0/v1 message failing its CRC
CorruptRecordException (CORRUPT_MESSAGE). Per-record rule failures (a null key on a
compacted topic, a timestamp outside ``message.timestamp.difference.max.ms``, a
producer claiming LogAppendTime, offset deltas out of order in an uncompressed v2
batch) raise InvalidRecordException or InvalidTimestampException with a
``record_errors`` attribute: a list of ``RecordError(batch_index, message)`` for the
produce response (Kafka's RecordValidationException). Either way nothing is appended.

A log of format v0 has no timestamps, so its appends report no max timestamp
(NO_TIMESTAMP), whatever ``message.timestamp.type`` says; Kafka reports the append
time there under LogAppendTime, which nothing stored in the log backs and which
recovery would not find again.
"""
from __future__ import annotations

import logging
import time as _time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, cast

from kafka_py.clients.common.errors import (
    ApiException,
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
    UnsupportedCompressionTypeException,
    UnsupportedForMessageFormatException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_config import ApiVersion
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyEntry, LegacyRecordBatch, build_legacy_records
from kafka_py.clients.common.record.compression import CompressionType, decompress
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    DefaultRecordBatch,
    Record,
    SimpleRecord,
    CONTROL_FLAG_MASK,
    NO_PRODUCER_ID,
    TIMESTAMP_TYPE_MASK,
    TimestampType,
    build_batch,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.partial_default_record import RecordsWalk, walk_records
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats
from kafka_py.core.utils.java_limits import LONG_MAX, LONG_MIN
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # kafka_py.server depends on kafka_py.log, not the other way round at import time
    from kafka_py.server.broker_topic_stats import BrokerTopicStats

logger = logging.getLogger(__name__)

# Kafka's default message.timestamp.difference.max.ms (Long.MaxValue): no range check.
MAX_TIMESTAMP_DIFF_MS = LONG_MAX


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
class RecordError:
    """Port of ProduceResponse.RecordError: which record of the batch failed, and why."""

    batch_index: int
    message: Optional[str] = None


@dataclass(frozen=True, slots=True, init=False)
class ValidationAndOffsetAssignResult:
    validated_records: MemoryRecords
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    message_size_maybe_changed: bool
    record_conversion_stats: RecordConversionStats

    def __init__(self, validated_records: MemoryRecords, max_timestamp: int, shallow_offset_of_max_timestamp: int,
                 message_size_maybe_changed: bool, record_conversion_stats: RecordConversionStats) -> None:
        # One per append: the fields are written through their slots' setters, where the frozen
        # dataclass's own __init__ calls object.__setattr__ for each.
        _set_validated_records(self, validated_records)
        _set_max_timestamp(self, max_timestamp)
        _set_shallow_offset_of_max_timestamp(self, shallow_offset_of_max_timestamp)
        _set_message_size_maybe_changed(self, message_size_maybe_changed)
        _set_record_conversion_stats(self, record_conversion_stats)


_set_validated_records = ValidationAndOffsetAssignResult.__dict__["validated_records"].__set__
_set_max_timestamp = ValidationAndOffsetAssignResult.__dict__["max_timestamp"].__set__
_set_shallow_offset_of_max_timestamp = ValidationAndOffsetAssignResult.__dict__[
    "shallow_offset_of_max_timestamp"].__set__
_set_message_size_maybe_changed = ValidationAndOffsetAssignResult.__dict__["message_size_maybe_changed"].__set__
_set_record_conversion_stats = ValidationAndOffsetAssignResult.__dict__["record_conversion_stats"].__set__


def _nanoseconds(clock: Any) -> int:
    if clock is not None and hasattr(clock, "nanoseconds"):
        return clock.nanoseconds()
    return _time.monotonic_ns()


class LogValidator:
    """Kafka's LogValidator object; its entry point is ``validate_messages_and_assign_offsets``."""

    @staticmethod
    def validate_messages_and_assign_offsets(
        records: MemoryRecords,
        topic_partition: TopicPartition,
        offset_counter: LongRef,
        time: Time,
        now_ms: int,
        source_codec: Optional[CompressionType] = None,
        target_codec: Optional[CompressionType] = None,
        compacted_topic: bool = False,
        magic: int = CURRENT_MAGIC_VALUE,
        timestamp_type: TimestampType = TimestampType.CREATE_TIME,
        timestamp_diff_max_ms: int = MAX_TIMESTAMP_DIFF_MS,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        inter_broker_protocol_version: Optional[ApiVersion] = None,
        broker_topic_stats: Optional[BrokerTopicStats] = None,
        check_crc: bool = True,
    ) -> ValidationAndOffsetAssignResult:
        """Validate ``records`` and give them offsets from ``offset_counter``, in message
        format ``magic`` (the log's).

        ``source_codec`` defaults to the first batch's own codec, ``target_codec`` (the
        topic's, LogConfig.target_compression) to the source codec. When a batch can be
        kept it is updated in place and returned as ``validated_records`` (copied first
        if its buffer is read-only); otherwise new records are built.
        """
        if magic not in (MAGIC_VALUE_V0, MAGIC_VALUE_V1, CURRENT_MAGIC_VALUE):
            raise ValueError(f"Invalid message format magic {magic}")
        rules = _RecordRules(topic_partition, now_ms, timestamp_type, timestamp_diff_max_ms, compacted_topic)
        buf = records.buffer
        if magic == CURRENT_MAGIC_VALUE and len(buf) > MAGIC_OFFSET and buf[MAGIC_OFFSET] == CURRENT_MAGIC_VALUE:
            # what every current producer sends to a current topic
            batch = get_first_batch_and_maybe_validate_no_more_batches(records, topic_partition)
            validate_batch(topic_partition, batch, origin is AppendOrigin.CLIENT, check_crc)
            source = batch.compression_type if source_codec is None else source_codec
            target = source if target_codec is None else target_codec
            if source == CompressionType.NONE and target == CompressionType.NONE:
                return assign_offsets_non_compressed(records, batch, offset_counter, rules, partition_leader_epoch)
            return validate_messages_and_assign_offsets_compressed(
                records, batch, offset_counter, time, source, target, rules, partition_leader_epoch)
        first = records.first_batch()
        if first is None:
            raise InvalidRecordException("Record batch has no batches at all")
        source = first.compression_type if source_codec is None else source_codec
        target = source if target_codec is None else target_codec
        formats = _Formats(topic_partition, origin is AppendOrigin.CLIENT, magic, check_crc)
        if source == CompressionType.NONE and target == CompressionType.NONE:
            if not records.has_matching_magic(magic):
                return convert_and_assign_offsets_non_compressed(records, offset_counter, time, rules, formats,
                                                                 partition_leader_epoch)
            return assign_offsets_non_compressed_legacy(records, offset_counter, rules, formats)
        return validate_legacy_messages_and_assign_offsets_compressed(
            records, offset_counter, time, source, target, rules, formats, partition_leader_epoch,
            inter_broker_protocol_version)


validate_messages_and_assign_offsets = LogValidator.validate_messages_and_assign_offsets


def get_first_batch_and_maybe_validate_no_more_batches(records: MemoryRecords, topic_partition: Any,
                                                       source_codec: CompressionType = CompressionType.NONE):
    """The first batch; a v2 batch or a compressed message set must be the only one (an
    uncompressed v0/v1 set is one log entry per message)."""
    batches = records.batches()
    batch = next(batches, None)
    if batch is None:
        raise InvalidRecordException("Record batch has no batches at all")
    # Kafka says "compressed outer record" here for v2 too, for historical reasons; the rule is the same.
    if (batch.magic >= CURRENT_MAGIC_VALUE or source_codec != CompressionType.NONE) \
            and next(batches, None) is not None:
        raise InvalidRecordException(
            f"Compressed outer record has more than one batch in topic partition {topic_partition}.")
    return batch


def validate_batch(topic_partition: Any, batch: DefaultRecordBatch, client: bool, check_crc: bool) -> None:
    # the header's fields read with one struct call rather than a property each
    (base_offset, length, _epoch, _magic, _crc, attributes, last_offset_delta, _base_ts, _max_ts, producer_id,
     _producer_epoch, base_sequence, count) = batch.header()
    if length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordException(
            f"Record batch size {length + LOG_OVERHEAD} is smaller than the minimum batch overhead "
            f"{RECORD_BATCH_OVERHEAD} in topic partition {topic_partition}.")
    if check_crc and not batch.is_valid():
        raise CorruptRecordException(
            f"Record is corrupt (stored crc = {batch.checksum}, computed crc = {batch.compute_checksum()}) "
            f"in topic partition {topic_partition}.")
    codec = attributes & COMPRESSION_CODEC_MASK
    if codec not in _KNOWN_CODECS:
        raise CorruptRecordException(
            f"Unknown compression codec id {codec} in the record batch in topic partition {topic_partition}.")
    if client:
        if last_offset_delta < 0:
            raise InvalidRecordException(
                f"Batch has an invalid offset range: [{base_offset}, {base_offset + last_offset_delta}] "
                f"in topic partition {topic_partition}.")
        if count <= 0:
            raise InvalidRecordException(
                f"Invalid reported count for record batch: {count} in topic partition {topic_partition}.")
        if count != last_offset_delta + 1:
            raise InvalidRecordException(
                f"Inconsistent batch offset range [{base_offset}, {base_offset + last_offset_delta}] "
                f"and count of records {count} in topic partition {topic_partition}.")
        if attributes & CONTROL_FLAG_MASK:
            raise InvalidRecordException(
                f"Clients are not allowed to write control records in topic partition {topic_partition}.")
        if producer_id > NO_PRODUCER_ID and base_sequence < 0:
            raise InvalidRecordException(
                f"Invalid sequence number {base_sequence} in record batch with producerId "
                f"{producer_id} in topic partition {topic_partition}.")
    elif count < 0:
        raise InvalidRecordException(
            f"Invalid reported count for record batch: {count} in topic partition {topic_partition}.")


_KNOWN_CODECS = frozenset(int(c) for c in CompressionType)


@dataclass(slots=True)
class _RecordRules:
    """The topic's rules every record is held to (the arguments of Kafka's validateRecord).

    Not frozen: one is made per append, and only this module reads it."""

    topic_partition: Any
    now_ms: int
    timestamp_type: TimestampType
    timestamp_diff_max_ms: int
    compacted_topic: bool

    def walk(self, batch: DefaultRecordBatch, data) -> RecordsWalk:
        """Walk the batch's records (``data``: its record bytes, uncompressed) under these rules."""
        base_timestamp = batch.base_timestamp
        # A record's timestamp is the batch's base timestamp plus its delta, which Kafka adds in
        # a Java long and lets wrap: a base of Long.MAX_VALUE and a delta of 1 make
        # Long.MIN_VALUE, a time no producer can give (ProducerRecord refuses negative
        # timestamps) and one validateTimestamp judges out of range under any
        # message.timestamp.difference.max.ms short of Long.MAX_VALUE. A record whose timestamp
        # does not fit in 64 bits is refused here as that check refuses a timestamp,
        # INVALID_TIMESTAMP naming the record, whatever the topic's limit and timestamp type:
        # every 64-bit value the log could store for it would be a different time.
        low, high = LONG_MIN - base_timestamp, LONG_MAX - base_timestamp
        if self.timestamp_type == TimestampType.CREATE_TIME and self.timestamp_diff_max_ms < MAX_TIMESTAMP_DIFF_MS:
            low = max(low, self.now_ms - self.timestamp_diff_max_ms - base_timestamp)
            high = min(high, self.now_ms + self.timestamp_diff_max_ms - base_timestamp)
        try:
            return walk_records(data, batch.record_count, check_keys=self.compacted_topic,
                                timestamp_delta_range=(low, high),
                                exempt_timestamp_delta=NO_TIMESTAMP - base_timestamp)
        except InvalidRecordException as e:
            raise InvalidRecordException(f"{e} in topic partition {self.topic_partition}.") from None

    def raise_record_errors(self, batch: DefaultRecordBatch, walk: RecordsWalk, compressed: bool) -> None:
        """Kafka's validateRecord for every record, then its processRecordErrors: one
        exception for the batch listing each failed record, or nothing."""
        if (not walk.null_key_indexes and not walk.timestamps_out_of_range
                and (compressed or walk.offsets_consecutive)
                and not batch.attributes & TIMESTAMP_TYPE_MASK):
            return  # what every well-formed batch finds: no record to name
        tp = self.topic_partition
        errors: dict[int, str] = {}
        has_timestamp_error = False
        for index in walk.null_key_indexes:
            errors[index] = f"Compacted topic cannot accept message without key in topic partition {tp}."
        base_offset = batch.base_offset
        base_timestamp = batch.base_timestamp
        for index, delta in walk.timestamps_out_of_range:
            if index not in errors:
                has_timestamp_error = True
                timestamp = base_timestamp + delta
                if not LONG_MIN <= timestamp <= LONG_MAX:
                    errors[index] = (
                        f"Timestamp {base_timestamp} + {delta} of message with offset {base_offset + index} is out "
                        f"of range. The timestamp should be within [{LONG_MIN}, {LONG_MAX}]")
                else:
                    errors[index] = (
                        f"Timestamp {timestamp} of message with offset {base_offset + index} is out of "
                        f"range. The timestamp should be within [{self.now_ms - self.timestamp_diff_max_ms}, "
                        f"{self.now_ms + self.timestamp_diff_max_ms}]")
        if batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
            for index in range(walk.count):
                if index not in errors:
                    has_timestamp_error = True
                    errors[index] = (f"Invalid timestamp type in message with offset {base_offset + index}. "
                                     f"Producer should not set timestamp type to LogAppendTime.")
        if not compressed and not walk.offsets_consecutive:
            # Writers number a batch's records 0, 1, 2, ...; an uncompressed batch is
            # kept byte for byte, so any other numbering would reach consumers.
            for index in range(walk.count):
                errors.setdefault(index, f"The records of an uncompressed batch in topic partition {tp} "
                                         f"must have offset deltas 0 to {walk.count - 1} in order.")
        process_record_errors(errors, has_timestamp_error)

    def raise_legacy_record_errors(self, batch: LegacyRecordBatch, messages: list) -> None:
        """Kafka's validateRecord for the (offset, LegacyRecord) messages of a v0/v1 entry."""
        errors: dict[int, str] = {}
        has_timestamp_error = False
        low, high = self.now_ms - self.timestamp_diff_max_ms, self.now_ms + self.timestamp_diff_max_ms
        for index, (offset, message) in enumerate(messages):
            timestamp = message.timestamp
            if self.compacted_topic and message.key_view() is None:
                errors[index] = (f"Compacted topic cannot accept message without key in topic partition "
                                 f"{self.topic_partition}.")
            elif (self.timestamp_type == TimestampType.CREATE_TIME and timestamp != NO_TIMESTAMP
                  and not low <= timestamp <= high):
                has_timestamp_error = True
                errors[index] = (f"Timestamp {timestamp} of message with offset {offset} is out of range. "
                                 f"The timestamp should be within [{low}, {high}]")
            elif batch.timestamp_type == TimestampType.LOG_APPEND_TIME:
                has_timestamp_error = True
                errors[index] = (f"Invalid timestamp type in message with offset {offset}. "
                                 f"Producer should not set timestamp type to LogAppendTime.")
        process_record_errors(errors, has_timestamp_error)

    def max_timestamp(self, batch: DefaultRecordBatch, walk: RecordsWalk) -> int:
        """The batch's max timestamp as the log stores it."""
        if self.timestamp_type == TimestampType.LOG_APPEND_TIME:
            return self.now_ms
        if walk.max_timestamp_delta is None:
            return NO_TIMESTAMP
        return batch.base_timestamp + walk.max_timestamp_delta


def process_record_errors(errors: dict[int, str], has_timestamp_error: bool) -> None:
    """Kafka's processRecordErrors: one exception for the batch listing each failed record
    (by its index in the batch), or nothing."""
    if not errors:
        return
    if has_timestamp_error:
        exc: ApiException = InvalidTimestampException(
            "One or more records have been rejected due to invalid timestamp")
    else:
        exc = InvalidRecordException("One or more records have been rejected")
    record_errors = [RecordError(index, errors[index]) for index in sorted(errors)]
    exc.record_errors = record_errors  # type: ignore[attr-defined]
    # The first reason is the useful one in a log line or a test failure.
    exc.args = (f"{exc.args[0]}: {record_errors[0].message}",)
    raise exc


def _writable(records: MemoryRecords, batch: DefaultRecordBatch) -> tuple[MemoryRecords, DefaultRecordBatch]:
    """``records`` and its first batch ``batch``, copied first if their buffer is read-only."""
    if records.buffer.readonly:
        records = MemoryRecords(bytearray(records.buffer))
        # a copy of the bytes of ``batch``: its first batch is of the same (v2) format
        return records, cast(DefaultRecordBatch, next(iter(records.batches())))
    return records, batch


def assign_offsets_non_compressed(records: MemoryRecords, batch: DefaultRecordBatch, offset_counter: LongRef,
                                  rules: _RecordRules,
                                  partition_leader_epoch: int) -> ValidationAndOffsetAssignResult:
    """Kafka's assignOffsetsNonCompressed: every record walked in place, offsets written into the header."""
    walk = rules.walk(batch, batch.buffer[RECORD_BATCH_OVERHEAD:batch.size_in_bytes])
    rules.raise_record_errors(batch, walk, compressed=False)
    records, batch = _writable(records, batch)
    first_offset = offset_counter.value
    last_offset = offset_counter.add_and_get(walk.count) - 1
    # baseOffset and partitionLeaderEpoch lie before the CRC'd range: no re-checksum.
    batch.set_last_offset(last_offset)
    batch.set_partition_leader_epoch(partition_leader_epoch)
    max_timestamp = rules.max_timestamp(batch, walk)
    # A header that disagrees with its records is rewritten from them (with a new CRC).
    batch.set_max_timestamp(rules.timestamp_type, max_timestamp)
    if rules.timestamp_type == TimestampType.LOG_APPEND_TIME:
        offset_of_max = last_offset
    elif max_timestamp == NO_TIMESTAMP:
        offset_of_max = -1
    else:
        offset_of_max = first_offset + walk.index_of_max_timestamp
    return ValidationAndOffsetAssignResult(records, max_timestamp, offset_of_max, False,
                                           RecordConversionStats.EMPTY)


def validate_messages_and_assign_offsets_compressed(
        records: MemoryRecords, batch: DefaultRecordBatch, offset_counter: LongRef, clock: Any,
        source: CompressionType, target: CompressionType, rules: _RecordRules,
        partition_leader_epoch: int) -> ValidationAndOffsetAssignResult:
    """Kafka's validateMessagesAndAssignOffsetsCompressed: the records are decompressed and
    walked; the batch is kept when its codec is the target's and its inner offsets run
    0..n-1, and rebuilt with the target codec otherwise."""
    start_nanos = _nanoseconds(clock)
    in_place = source == target
    # Control records are only compressed if they were written compressed.
    if source == CompressionType.NONE and batch.is_control_batch:
        in_place = True
    body = batch.buffer[RECORD_BATCH_OVERHEAD:batch.size_in_bytes]
    codec = batch.compression_type
    data: bytes | memoryview
    if codec == CompressionType.NONE:
        data = body
    else:
        try:
            data = decompress(codec, body)
        except CorruptRecordException as e:
            raise CorruptRecordException(
                f"Record batch in topic partition {rules.topic_partition} cannot be decompressed: {e}") from None
    walk = rules.walk(batch, data)
    rules.raise_record_errors(batch, walk, compressed=True)
    if not walk.offsets_consecutive:
        # Some old clients number the records of a compressed batch wrongly;
        # Kafka repairs that by rebuilding the batch, and so do we.
        in_place = False
    if not in_place:
        return _build_records_and_assign_offsets(batch, data, walk, offset_counter, clock, start_nanos, target,
                                                 rules, partition_leader_epoch)
    records, batch = _writable(records, batch)
    last_offset = offset_counter.add_and_get(walk.count) - 1
    batch.set_last_offset(last_offset)
    max_timestamp = rules.max_timestamp(batch, walk)
    batch.set_max_timestamp(rules.timestamp_type, max_timestamp)
    batch.set_partition_leader_epoch(partition_leader_epoch)
    # A compressed batch is "shallow": its last offset stands for all its records.
    return ValidationAndOffsetAssignResult(records, max_timestamp, last_offset, False,
                                           RecordConversionStats(walk.size, 0, 0))


def _build_records_and_assign_offsets(batch: DefaultRecordBatch, data, walk: RecordsWalk,
                                      offset_counter: LongRef, clock: Any, start_nanos: int,
                                      target: CompressionType, rules: _RecordRules,
                                      partition_leader_epoch: int) -> ValidationAndOffsetAssignResult:
    """Kafka's buildRecordsAndAssignOffsets: the walked records decoded and re-encoded with the target codec."""
    if walk.count == 0:
        return ValidationAndOffsetAssignResult(MemoryRecords.EMPTY, NO_TIMESTAMP, -1, True,
                                               RecordConversionStats.EMPTY)
    timestamp_type = rules.timestamp_type
    decoded = list(batch.records_from(data))
    refuse_negative_timestamps(decoded)
    records = [SimpleRecord(r.key, r.value, timestamp=r.timestamp, headers=tuple(r.headers or ()))
               for r in decoded]
    built = build_batch(
        records,
        base_offset=offset_counter.value,
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
    last_offset = offset_counter.add_and_get(walk.count) - 1
    if new_batch.last_offset != last_offset:
        # The builder numbers records consecutively from base_offset; this cannot
        # differ unless it changed, and a wrong offset must never reach the log.
        raise CorruptRecordException(
            f"Rebuilt batch ends at offset {new_batch.last_offset}, expected {last_offset}")
    max_timestamp = rules.max_timestamp(batch, walk)
    new_batch.set_max_timestamp(timestamp_type, max_timestamp)
    stats = RecordConversionStats(walk.size + len(buffer), walk.count, _nanoseconds(clock) - start_nanos)
    return ValidationAndOffsetAssignResult(
        validated_records=MemoryRecords(buffer),
        max_timestamp=max_timestamp,
        shallow_offset_of_max_timestamp=last_offset,
        message_size_maybe_changed=True,
        record_conversion_stats=stats,
    )


def refuse_negative_timestamps(records: list[Record]) -> None:
    """Kafka's MemoryRecordsBuilder refuses a negative timestamp other than NO_TIMESTAMP (an
    IllegalArgumentException, which Kafka answers UNKNOWN_SERVER_ERROR); a batch kept as it is
    never meets the builder. Such a record is refused as the timestamp check refuses one."""
    negative = [RecordError(i, f"Invalid negative timestamp {r.timestamp} of message with offset {r.offset}")
                for i, r in enumerate(records) if r.timestamp < 0 and r.timestamp != NO_TIMESTAMP]
    if negative:
        exc = InvalidTimestampException(
            f"One or more records have been rejected due to invalid timestamp: {negative[0].message}")
        exc.record_errors = negative  # type: ignore[attr-defined]
        raise exc


# ---------------------------------------------------------------- message formats v0 and v1


@dataclass(frozen=True, slots=True)
class _Formats:
    """The append's side of the format rules: who appends, and the log's message format."""

    topic_partition: Any
    client: bool
    to_magic: int
    check_crc: bool


def _validate_batch_any_format(formats: _Formats, first: Any, batch: Any) -> None:
    """Kafka's validateBatch for a batch of any format, appended to a log of ``to_magic``."""
    tp = formats.topic_partition
    to_magic = formats.to_magic
    if batch.magic != first.magic:
        raise InvalidRecordException(f"Batch magic {batch.magic} is not the same as the first batch'es magic "
                                     f"byte {first.magic} in topic partition {tp}.")
    if batch.magic >= CURRENT_MAGIC_VALUE:
        validate_batch(tp, batch, formats.client, formats.check_crc)
    elif formats.check_crc:
        try:
            batch.ensure_valid()
        except CorruptRecordException as e:
            raise CorruptRecordException(f"{e} in topic partition {tp}.") from None
    if batch.is_transactional and to_magic < CURRENT_MAGIC_VALUE:
        raise UnsupportedForMessageFormatException(
            f"Transactional records cannot be used with magic version {to_magic}")
    if batch.has_producer_id and to_magic < CURRENT_MAGIC_VALUE:
        raise UnsupportedForMessageFormatException(f"Idempotent records cannot be used with magic version {to_magic}")


def _validated_records(batch: Any, rules: _RecordRules, decode: bool = True) -> tuple[list[Record], int]:
    """The records of ``batch`` (a v2 batch, or a v0/v1 entry's messages, a wrapper's inner
    ones each checked against its CRC) held to the topic's rules, and their uncompressed size;
    with ``decode`` False a v0/v1 entry is only checked (no records are returned)."""
    tp = rules.topic_partition
    if batch.magic >= CURRENT_MAGIC_VALUE:
        body = batch.buffer[RECORD_BATCH_OVERHEAD:batch.size_in_bytes]
        codec = batch.compression_type
        if codec == CompressionType.NONE:
            data = body
        else:
            try:
                data = decompress(codec, body)
            except CorruptRecordException as e:
                raise CorruptRecordException(
                    f"Record batch in topic partition {tp} cannot be decompressed: {e}") from None
        walk = rules.walk(batch, data)
        # the records are rebuilt, so how the batch numbered them does not matter
        rules.raise_record_errors(batch, walk, compressed=True)
        return list(batch.records_from(data)), walk.size
    try:
        messages = batch.legacy_records()
    except CorruptRecordException as e:
        raise CorruptRecordException(f"{e} in topic partition {tp}.") from None
    rules.raise_legacy_record_errors(batch, messages)
    size = sum(LOG_OVERHEAD + message.size_in_bytes() for _offset, message in messages)
    if not decode:
        return [], size
    return [Record(offset, message.timestamp, message.key, message.value) for offset, message in messages], size


def convert_and_assign_offsets_non_compressed(records: MemoryRecords, offset_counter: LongRef, clock: Any,
                                              rules: _RecordRules, formats: _Formats,
                                              partition_leader_epoch: int) -> ValidationAndOffsetAssignResult:
    """Kafka's convertAndAssignOffsetsNonCompressed: uncompressed records of another message
    format than the log's, rebuilt in the log's with new offsets."""
    start_nanos = _nanoseconds(clock)
    first = get_first_batch_and_maybe_validate_no_more_batches(records, formats.topic_partition)
    validated: list[Record] = []
    for batch in records.batches():
        _validate_batch_any_format(formats, first, batch)
        validated.extend(_validated_records(batch, rules)[0])
    return _build_records_in_format(formats.to_magic, validated, first, offset_counter, clock, start_nanos,
                                    CompressionType.NONE, rules, partition_leader_epoch, 0)


def assign_offsets_non_compressed_legacy(records: MemoryRecords, offset_counter: LongRef, rules: _RecordRules,
                                         formats: _Formats) -> ValidationAndOffsetAssignResult:
    """Kafka's assignOffsetsNonCompressed for a v0/v1 message set appended to a log of its own
    format: each entry (one message) gets its offset written in place, and in v1 the log
    append time when the topic uses it (the message's CRC then rewritten)."""
    to_magic = formats.to_magic
    if records.buffer.readonly:
        records = MemoryRecords(bytearray(records.buffer))
    batches = list(records.batches())
    first = batches[0]
    for batch in batches:
        _validate_batch_any_format(formats, first, batch)
        _validated_records(batch, rules, decode=False)
    log_append_time = rules.timestamp_type == TimestampType.LOG_APPEND_TIME
    initial_offset = offset_counter.value
    max_timestamp = NO_TIMESTAMP
    offset_of_max_timestamp = -1
    # every entry checked before the first is written to: a refused set leaves the buffer as it was
    for batch in batches:
        offset = offset_counter.get_and_increment()
        batch.set_last_offset(offset)
        if to_magic > MAGIC_VALUE_V0:
            timestamp = batch.max_timestamp
            if timestamp > max_timestamp:
                max_timestamp, offset_of_max_timestamp = timestamp, offset
            if log_append_time:
                batch.set_max_timestamp(TimestampType.LOG_APPEND_TIME, rules.now_ms)
    if log_append_time and to_magic > MAGIC_VALUE_V0:
        max_timestamp, offset_of_max_timestamp = rules.now_ms, initial_offset
    return ValidationAndOffsetAssignResult(records, max_timestamp, offset_of_max_timestamp, False,
                                           RecordConversionStats.EMPTY)


def validate_legacy_messages_and_assign_offsets_compressed(
        records: MemoryRecords, offset_counter: LongRef, clock: Any, source: CompressionType,
        target: CompressionType, rules: _RecordRules, formats: _Formats, partition_leader_epoch: int,
        inter_broker_protocol_version: Any) -> ValidationAndOffsetAssignResult:
    """Kafka's validateMessagesAndAssignOffsetsCompressed where the records or the log are of
    format v0/v1: a v1 wrapper appended to a v1 log with the topic's codec and inner offsets
    0..n-1 keeps its bytes (its offset, and timestamp under LogAppendTime, rewritten); anything
    else is rebuilt in the log's format with the target codec."""
    start_nanos = _nanoseconds(clock)
    to_magic = formats.to_magic
    if target == CompressionType.ZSTD and inter_broker_protocol_version is not None:
        from kafka_py.log.log_config import api_version

        if inter_broker_protocol_version < api_version("2.1-IV0"):
            raise UnsupportedCompressionTypeException("Produce requests to inter.broker.protocol.version < 2.1 "
                                                      "broker are not allowed to use ZStandard compression")
    in_place = source == target
    first = get_first_batch_and_maybe_validate_no_more_batches(records, formats.topic_partition, source)
    # A v0 wrapper's inner offsets are absolute: they are written anew, so it is rebuilt.
    if first.magic != to_magic or to_magic == MAGIC_VALUE_V0:
        in_place = False
    validated: list[Record] = []
    uncompressed_size = 0
    max_timestamp = NO_TIMESTAMP
    for batch in records.batches():
        _validate_batch_any_format(formats, first, batch)
        batch_records, size = _validated_records(batch, rules)
        uncompressed_size += size
        if batch.magic > MAGIC_VALUE_V0 and to_magic > MAGIC_VALUE_V0:
            for expected_offset, record in enumerate(batch_records, len(validated)):
                if record.timestamp > max_timestamp:
                    max_timestamp = record.timestamp
                # Some old clients number a wrapper's inner messages wrongly; Kafka has always
                # repaired that by rebuilding the wrapper rather than refusing it.
                if record.offset != expected_offset:
                    in_place = False
        validated.extend(batch_records)
    if not in_place:
        return _build_records_in_format(to_magic, validated, first, offset_counter, clock, start_nanos, target,
                                        rules, partition_leader_epoch, uncompressed_size)
    if records.buffer.readonly:
        records = MemoryRecords(bytearray(records.buffer))
    batch = next(records.batches())
    last_offset = offset_counter.add_and_get(len(validated)) - 1
    batch.set_last_offset(last_offset)
    if rules.timestamp_type == TimestampType.LOG_APPEND_TIME:
        max_timestamp = rules.now_ms
    batch.set_max_timestamp(rules.timestamp_type, max_timestamp)
    return ValidationAndOffsetAssignResult(records, max_timestamp, last_offset, False,
                                           RecordConversionStats(uncompressed_size, 0, 0))


def _build_records_in_format(to_magic: int, records: list[Record], first: Any, offset_counter: LongRef,
                             clock: Any, start_nanos: int, target: CompressionType, rules: _RecordRules,
                             partition_leader_epoch: int, uncompressed_size: int) -> ValidationAndOffsetAssignResult:
    """Kafka's buildRecordsAndAssignOffsets (MemoryRecords.builder in the log's format): the
    records with new offsets from ``offset_counter``, as one v2 batch (carrying the first
    batch's producer fields) or as v0/v1 log entries, one wrapper when compressed."""
    if not records:
        return ValidationAndOffsetAssignResult(MemoryRecords.EMPTY, NO_TIMESTAMP, -1, True,
                                               RecordConversionStats.EMPTY)
    refuse_negative_timestamps(records)
    timestamp_type = rules.timestamp_type
    now = rules.now_ms
    log_append_time = timestamp_type == TimestampType.LOG_APPEND_TIME
    base_offset = offset_counter.value
    if to_magic == CURRENT_MAGIC_VALUE:
        built = build_batch(
            [SimpleRecord(r.key, r.value, timestamp=r.timestamp, headers=tuple(r.headers or ())) for r in records],
            base_offset=base_offset, compression=target, timestamp_type=timestamp_type,
            producer_id=first.producer_id, producer_epoch=first.producer_epoch, base_sequence=first.base_sequence,
            is_transactional=first.is_transactional, partition_leader_epoch=partition_leader_epoch,
            log_append_time=now if log_append_time else None)
        last_offset = offset_counter.add_and_get(len(records)) - 1
        max_timestamp = now if log_append_time else max(NO_TIMESTAMP, *(r.timestamp for r in records))
        shallow_offset_of_max_timestamp = last_offset
    else:
        if any(r.headers for r in records):
            # Kafka's MemoryRecordsBuilder.appendWithOffset (an IllegalArgumentException there)
            raise ValueError(f"Magic v{to_magic} does not support record headers")
        entries = [LegacyEntry(offset_counter.get_and_increment(), r.timestamp, r.key, r.value) for r in records]
        built = build_legacy_records(entries, to_magic, target, timestamp_type, now)
        last_offset = entries[-1].offset
        # MemoryRecordsBuilder.info: an uncompressed set names the message itself, a wrapper its last offset
        compressed = target != CompressionType.NONE
        if to_magic == MAGIC_VALUE_V0:
            max_timestamp, shallow_offset_of_max_timestamp = NO_TIMESTAMP, last_offset
        elif log_append_time:
            max_timestamp = now
            shallow_offset_of_max_timestamp = last_offset if compressed else base_offset
        else:
            max_timestamp, offset_of_max = NO_TIMESTAMP, last_offset
            for entry in entries:
                if entry.timestamp > max_timestamp:
                    max_timestamp, offset_of_max = entry.timestamp, entry.offset
            shallow_offset_of_max_timestamp = last_offset if compressed else offset_of_max
    stats = RecordConversionStats(uncompressed_size + len(built), len(records), _nanoseconds(clock) - start_nanos)
    return ValidationAndOffsetAssignResult(MemoryRecords(bytearray(built)), max_timestamp,
                                           shallow_offset_of_max_timestamp, True, stats)
