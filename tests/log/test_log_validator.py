"""Tests for log/log_validator.py (port of LogValidator.scala, magic 2).

Batches are built the way a real client builds them (kafka-python's
MemoryRecordsBuilder) and read back with kafka-python's reader, an independent
decoder: offsets, CRCs and timestamps must come out as a consumer would see them.
"""
from __future__ import annotations

import struct

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords
from kafka.record.memory_records import MemoryRecordsBuilder as KpBuilder

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
    UnsupportedForMessageFormatException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_validator import (
    LogValidator,
    LongRef,
    RecordError,
)
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    CRC_OFFSET,
    RECORDS_COUNT_OFFSET,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000
CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4,
          CompressionType.ZSTD]


def client_batch(entries, compression=CompressionType.NONE, producer=None) -> bytearray:
    """A batch as kafka-python's producer writes it: base offset 0, CREATE_TIME."""
    builder = KpBuilder(magic=2, compression_type=int(compression), batch_size=1 << 20)
    if producer is not None:
        pid, epoch, seq, txn = producer
        builder.set_producer_state(pid, epoch, seq, txn)
    for ts, key, value, headers in entries:
        assert builder.append(ts, key, value, list(headers)) is not None
    builder.close()
    return bytearray(builder.buffer())


def codec_of(buffer) -> CompressionType:
    # kafka-python sends a batch uncompressed when compressing would not shrink it.
    return CompressionType(struct.unpack_from(">h", buffer, 21)[0] & 0x07)


def entries_of(n, base_ts=NOW - 1000, with_keys=True):
    # Repetitive values, so that every codec actually compresses them.
    return [(base_ts + i, (b"k%d" % i) if with_keys else None, b"value-%d-" % i + b"x" * 100, [("h", b"x")])
            for i in range(n)]


def read_back(buffer):
    """Decode with kafka-python: [(batch, [records...])] and check every CRC."""
    out = []
    records = KpMemoryRecords(bytes(buffer))
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc(), "CRC must stay valid after validation"
        out.append((batch, list(batch)))
    return out


def validate(buffer, counter=0, **kwargs):
    kwargs.setdefault("time", None)
    kwargs.setdefault("now_ms", NOW)
    ref = LongRef(counter)
    records = MemoryRecords(buffer)
    result = LogValidator.validate_messages_and_assign_offsets(records, TP, ref, **kwargs)
    return result, ref


def rewrite_crc(buffer: bytearray) -> None:
    struct.pack_into(">I", buffer, CRC_OFFSET, crc32c.crc32c(bytes(buffer[CRC_OFFSET + 4:])))


# --- LongRef -----------------------------------------------------------------------------

def test_long_ref_arithmetic():
    ref = LongRef(5)
    assert ref.get_and_add(3) == 5 and ref.value == 8
    assert ref.add_and_get(2) == 10
    assert ref.get_and_increment() == 10 and ref.value == 11


# --- the in-place path ---------------------------------------------------------------------

def test_offsets_assigned_in_place_and_crc_still_valid():
    buffer = client_batch(entries_of(3))
    crc_before = bytes(buffer[CRC_OFFSET:CRC_OFFSET + 4])
    result, counter = validate(buffer, counter=100, partition_leader_epoch=7)

    assert counter.value == 103
    # In place: the caller's buffer itself now holds the assigned offsets.
    assert bytes(result.validated_records.buffer) == bytes(buffer)
    assert struct.unpack_from(">q", buffer, 0)[0] == 100
    assert bytes(buffer[CRC_OFFSET:CRC_OFFSET + 4]) == crc_before
    assert not result.message_size_maybe_changed

    [(batch, records)] = read_back(buffer)
    assert batch.base_offset == 100 and batch.leader_epoch == 7
    assert [r.offset for r in records] == [100, 101, 102]
    assert [r.key for r in records] == [b"k0", b"k1", b"k2"]
    assert result.max_timestamp == NOW - 1000 + 2
    assert result.shallow_offset_of_max_timestamp == 102


def test_read_only_input_is_copied_not_rejected():
    original = bytes(client_batch(entries_of(2)))
    result, counter = validate(original, counter=10)
    assert counter.value == 12
    [(batch, records)] = read_back(result.validated_records.buffer)
    assert [r.offset for r in records] == [10, 11]
    assert struct.unpack_from(">q", original, 0)[0] == 0


def test_compacted_topic_reports_exact_offset_of_max_timestamp():
    entries = [(NOW - 50, b"a", b"1", []), (NOW - 10, b"b", b"2", []), (NOW - 30, b"c", b"3", [])]
    result, _ = validate(client_batch(entries), counter=40, compacted_topic=True)
    assert result.max_timestamp == NOW - 10
    assert result.shallow_offset_of_max_timestamp == 41


def test_log_append_time_rewrites_max_timestamp_and_crc():
    buffer = client_batch(entries_of(3))
    result, counter = validate(buffer, counter=5, timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert result.max_timestamp == NOW
    assert result.shallow_offset_of_max_timestamp == 7
    [(batch, records)] = read_back(result.validated_records.buffer)
    assert batch.timestamp_type == 1 and batch.max_timestamp == NOW
    assert [r.timestamp for r in records] == [NOW] * 3
    assert [r.offset for r in records] == [5, 6, 7]


@pytest.mark.parametrize("codec", CODECS[1:])
def test_same_codec_compressed_batch_stays_in_place(codec):
    buffer = client_batch(entries_of(4), compression=codec)
    assert codec_of(buffer) == codec
    result, counter = validate(buffer, counter=20, target_codec=codec)
    assert counter.value == 24
    assert not result.message_size_maybe_changed
    assert bytes(result.validated_records.buffer) == bytes(buffer)
    [(batch, records)] = read_back(buffer)
    assert batch.compression_type == int(codec)
    assert [r.offset for r in records] == [20, 21, 22, 23]
    assert result.shallow_offset_of_max_timestamp == 23


def test_no_target_codec_keeps_the_batch():
    # compression.type=producer: LogConfig.target_compression is None
    buffer = client_batch(entries_of(2), compression=CompressionType.LZ4)
    result, _ = validate(buffer, target_codec=None)
    assert not result.message_size_maybe_changed
    assert read_back(result.validated_records.buffer)[0][0].compression_type == int(CompressionType.LZ4)


# --- codec conversion ----------------------------------------------------------------------

@pytest.mark.parametrize("source,target", [
    (CompressionType.NONE, CompressionType.GZIP),
    (CompressionType.GZIP, CompressionType.NONE),
    (CompressionType.LZ4, CompressionType.SNAPPY),
    (CompressionType.SNAPPY, CompressionType.ZSTD),
])
def test_codec_conversion_round_trip_preserves_records_and_producer_fields(source, target):
    entries = entries_of(5)
    buffer = client_batch(entries, compression=source, producer=(4242, 3, 17, False))
    assert codec_of(buffer) == source
    result, counter = validate(buffer, counter=1000, target_codec=target, partition_leader_epoch=2)
    assert counter.value == 1005
    assert result.message_size_maybe_changed
    assert result.record_conversion_stats.num_records_converted == 5
    [(batch, records)] = read_back(result.validated_records.buffer)
    assert batch.compression_type == int(target)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (4242, 3, 17)
    assert batch.leader_epoch == 2
    assert [r.offset for r in records] == list(range(1000, 1005))
    assert [(r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers]) for r in records] == \
        [(ts, k, v, h) for ts, k, v, h in entries]
    assert result.max_timestamp == entries[-1][0]
    assert result.shallow_offset_of_max_timestamp == 1004


def test_codec_conversion_with_log_append_time():
    buffer = client_batch(entries_of(3), compression=CompressionType.NONE)
    result, _ = validate(buffer, target_codec=CompressionType.GZIP, timestamp_type=TimestampType.LOG_APPEND_TIME)
    [(batch, records)] = read_back(result.validated_records.buffer)
    assert batch.timestamp_type == 1 and batch.compression_type == int(CompressionType.GZIP)
    assert [r.timestamp for r in records] == [NOW] * 3
    assert result.max_timestamp == NOW and result.shallow_offset_of_max_timestamp == 2


def test_transactional_flag_survives_conversion():
    buffer = client_batch(entries_of(2), producer=(9, 0, 0, True))
    result, _ = validate(buffer, target_codec=CompressionType.SNAPPY)
    [(batch, _)] = read_back(result.validated_records.buffer)
    assert batch.is_transactional and batch.producer_id == 9


# --- rejections ----------------------------------------------------------------------------

def test_timestamp_outside_allowed_difference_is_rejected():
    entries = [(NOW, b"a", b"1", []), (NOW + 1, b"b", b"2", []), (NOW + 60_000, b"c", b"3", [])]
    buffer = client_batch(entries)
    before = bytes(buffer)
    with pytest.raises(InvalidTimestampException) as info:
        validate(buffer, counter=50, timestamp_diff_max_ms=10_000)
    assert [e.batch_index for e in info.value.record_errors] == [2]
    assert "out of range" in info.value.record_errors[0].message
    assert bytes(buffer) == before, "a rejected batch must not be modified"


def _with_base_timestamp(buffer: bytearray, base_timestamp: int) -> bytearray:
    struct.pack_into(">qq", buffer, 27, base_timestamp, base_timestamp)  # base and max timestamp
    rewrite_crc(buffer)
    return buffer


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
@pytest.mark.parametrize("target", [None, CompressionType.LZ4])
@pytest.mark.parametrize("timestamp_type", [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
def test_timestamp_beyond_a_long_is_refused(codec, target, timestamp_type):
    """Base Long.MAX_VALUE plus a delta of 1: Kafka's long wraps to a time its timestamp check
    refuses, so it is INVALID_TIMESTAMP naming the record, whatever the topic's settings."""
    buffer = _with_base_timestamp(client_batch([(NOW, b"a", b"1", []), (NOW + 1, b"b", b"2", [])],
                                               compression=codec), 2**63 - 1)
    with pytest.raises(InvalidTimestampException) as info:
        validate(buffer, target_codec=target, timestamp_type=timestamp_type)
    assert [e.batch_index for e in info.value.record_errors] == [1]
    assert "out of range" in info.value.record_errors[0].message


def test_negative_timestamp_in_a_rebuilt_batch_is_refused():
    """A batch kept as it is keeps its timestamps; one the topic's codec rebuilds meets the
    builder's refusal of negative timestamps, answered as an invalid timestamp."""
    buffer = _with_base_timestamp(client_batch([(NOW, b"a", b"1", []), (NOW + 1, b"b", b"2", [])]), -5)
    validate(bytearray(buffer))  # kept in place: accepted, as in Kafka
    with pytest.raises(InvalidTimestampException) as info:
        validate(buffer, target_codec=CompressionType.GZIP)
    assert [e.batch_index for e in info.value.record_errors] == [0, 1]  # -5 and -4


def test_old_first_timestamp_is_rejected():
    with pytest.raises(InvalidTimestampException) as info:
        validate(client_batch(entries_of(2, base_ts=NOW - 3_600_000)), timestamp_diff_max_ms=1000)
    assert [e.batch_index for e in info.value.record_errors] == [0, 1]


def test_timestamp_range_ignored_for_log_append_time_topics():
    result, _ = validate(client_batch(entries_of(2, base_ts=1)), timestamp_diff_max_ms=1000,
                         timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert result.max_timestamp == NOW
    # The topic config's spelling works too.
    result, _ = validate(client_batch(entries_of(2, base_ts=1)), timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert result.max_timestamp == NOW


def test_producer_may_not_claim_log_append_time():
    raw = build_batch([SimpleRecord(b"k", b"v", timestamp=NOW)], timestamp_type=TimestampType.LOG_APPEND_TIME)
    with pytest.raises(InvalidTimestampException):
        validate(bytearray(raw))


def test_compacted_topic_rejects_null_key():
    entries = [(NOW, b"a", b"1", []), (NOW, None, b"2", []), (NOW, b"c", b"3", [])]
    counter_start = 7
    with pytest.raises(InvalidRecordException) as info:
        validate(client_batch(entries), counter=counter_start, compacted_topic=True)
    assert info.value.record_errors == [RecordError(1, info.value.record_errors[0].message)]
    assert "without key" in info.value.record_errors[0].message


def test_compacted_topic_rejects_null_key_in_compressed_batch():
    entries = [(NOW, None, b"1", [])]
    with pytest.raises(InvalidRecordException):
        validate(client_batch(entries, compression=CompressionType.GZIP), compacted_topic=True,
                 target_codec=CompressionType.GZIP)


def test_null_keys_fine_on_non_compacted_topic():
    result, counter = validate(client_batch(entries_of(3, with_keys=False)))
    assert counter.value == 3


def test_corrupt_crc_is_rejected():
    buffer = client_batch(entries_of(3))
    buffer[-2] ^= 0xFF
    with pytest.raises(CorruptRecordException):
        validate(buffer)


def test_record_count_mismatch_is_rejected():
    buffer = client_batch(entries_of(3))
    struct.pack_into(">i", buffer, RECORDS_COUNT_OFFSET, 2)
    rewrite_crc(buffer)
    with pytest.raises(InvalidRecordException, match="Inconsistent batch offset range"):
        validate(buffer)


def test_zero_record_count_is_rejected():
    buffer = client_batch(entries_of(1))
    struct.pack_into(">i", buffer, RECORDS_COUNT_OFFSET, 0)
    struct.pack_into(">i", buffer, 23, -1)  # lastOffsetDelta
    rewrite_crc(buffer)
    with pytest.raises(InvalidRecordException):
        validate(buffer)


def test_more_than_one_batch_is_rejected():
    with pytest.raises(InvalidRecordException, match="more than one batch"):
        validate(client_batch(entries_of(1)) + client_batch(entries_of(1)))


def test_empty_records_rejected():
    with pytest.raises(InvalidRecordException):
        validate(bytearray())


def test_idempotent_batch_needs_a_sequence():
    buffer = client_batch(entries_of(1), producer=(5, 0, 0, False))
    struct.pack_into(">i", buffer, 53, -1)  # baseSequence
    rewrite_crc(buffer)
    with pytest.raises(InvalidRecordException, match="sequence"):
        validate(buffer)


def test_control_batch_only_from_coordinator():
    raw = build_batch([SimpleRecord(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05", timestamp=NOW)],
                      producer_id=3, producer_epoch=0, is_transactional=True, is_control_batch=True)
    with pytest.raises(InvalidRecordException, match="control"):
        validate(bytearray(raw))
    # The transaction coordinator writes markers; a broker-side codec does not compress them.
    result, counter = validate(bytearray(raw), counter=30, origin=AppendOrigin.COORDINATOR,
                               target_codec=CompressionType.GZIP)
    assert counter.value == 31 and not result.message_size_maybe_changed
    [(batch, _)] = read_back(result.validated_records.buffer)
    assert batch.is_control_batch and batch.base_offset == 30


def test_a_v2_batch_whose_magic_byte_says_1_fails_the_v1_crc():
    buffer = client_batch(entries_of(1))
    buffer[16] = 1
    with pytest.raises(CorruptRecordException):
        validate(buffer)


def test_idempotent_and_transactional_batches_are_refused_below_format_v2():
    """LogValidator.validateBatch: no producer id can be written in format v0/v1."""
    for transactional in (False, True):
        buffer = client_batch(entries_of(2), producer=(7, 0, 0, transactional))
        for magic in (0, 1):
            with pytest.raises(UnsupportedForMessageFormatException,
                               match="Transactional" if transactional else "Idempotent"):
                validate(bytearray(buffer), magic=magic)


# --- property test --------------------------------------------------------------------------

record_strategy = st.tuples(
    st.integers(min_value=NOW - 10_000, max_value=NOW + 10_000),
    st.one_of(st.none(), st.binary(max_size=20)),
    st.one_of(st.none(), st.binary(max_size=200)),
    st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(record_strategy, min_size=1, max_size=12),
    source=st.sampled_from(CODECS),
    target=st.sampled_from(CODECS),
    start=st.integers(min_value=0, max_value=1 << 40),
    log_append=st.booleans(),
    epoch=st.integers(min_value=-1, max_value=1000),
)
def test_random_batches_validate_and_read_back(entries, source, target, start, log_append, epoch):
    buffer = client_batch(entries, compression=source)
    source = codec_of(buffer)
    timestamp_type = TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME
    result, counter = validate(buffer, counter=start, target_codec=target, timestamp_type=timestamp_type,
                               partition_leader_epoch=epoch, timestamp_diff_max_ms=20_000)
    n = len(entries)
    assert counter.value == start + n
    [(batch, records)] = read_back(result.validated_records.buffer)
    assert batch.compression_type == int(target)
    assert batch.leader_epoch == epoch
    assert [r.offset for r in records] == list(range(start, start + n))
    assert [(r.key, r.value) for r in records] == [(k, v) for _, k, v, _ in entries]
    if log_append:
        assert result.max_timestamp == NOW
        assert all(r.timestamp == NOW for r in records)
        assert result.shallow_offset_of_max_timestamp == start + n - 1
    else:
        assert [r.timestamp for r in records] == [ts for ts, _, _, _ in entries]
        assert result.max_timestamp == max(ts for ts, _, _, _ in entries)
        assert start <= result.shallow_offset_of_max_timestamp <= start + n - 1
    assert result.message_size_maybe_changed == (source != target)
