"""LogValidator's paths for the message formats v0 and v1 (log/log_validator.py, port of
LogValidator.scala): a current producer's v2 batch converted down to a topic of format v0/v1,
an old producer's v0/v1 message set kept in place or rebuilt in its own format or converted
up to v2, and the input Kafka refuses.

Old producers' sets are built by kafka-python's LegacyRecordBatchBuilder (kafka-python's
``api_version=(0, 10)`` producer writes them so), and every result is read back by
kafka-python's reader, an independent decoder that checks each message's CRC.
"""
from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_validator import LogValidator, LongRef
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.record.compression import CompressionType, compress
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.legacy_record import write_entry
from kafka_py.clients.common.record.memory_records import MemoryRecords

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000
LEGACY_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]


def old_producer_set(magic: int, n: int, codec=CompressionType.NONE, base_ts=NOW - 1000) -> bytearray:
    """A message set as kafka-python's producer of format ``magic`` sends it."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20)
    for i in range(n):
        assert builder.append(i, timestamp=base_ts + i if magic else None, key=b"k%d" % i,
                              value=b"value-%d-" % i + b"x" * 50) is not None
    return bytearray(builder.build())


def v2_batch(n: int, codec=CompressionType.NONE, headers=(), **kwargs) -> bytearray:
    return bytearray(build_batch([SimpleRecord(b"k%d" % i, b"value-%d-" % i + b"x" * 50, NOW - 1000 + i,
                                               headers=tuple(headers)) for i in range(n)],
                                 compression=codec, **kwargs))


def validate(data, magic: int, counter: int = 100, **kwargs):
    kwargs.setdefault("time", None)
    kwargs.setdefault("now_ms", NOW)
    ref = LongRef(counter)
    result = LogValidator.validate_messages_and_assign_offsets(MemoryRecords(data), TP, ref, magic=magic,
                                                               **kwargs)
    return result, ref


def read_back(buffer):
    """[(magic, codec id, [(offset, timestamp, timestamp type, key, value)...]) per batch], each
    message's CRC checked by kafka-python."""
    out = []
    records = KpMemoryRecords(bytes(buffer))
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        rows = []
        for r in batch:
            if batch.magic < 2:
                assert r.validate_crc()
            rows.append((r.offset, r.timestamp, r.timestamp_type, r.key, r.value))
        out.append((batch.magic, batch.compression_type, rows))
    return out


def values(n):
    return [(b"k%d" % i, b"value-%d-" % i + b"x" * 50) for i in range(n)]


# --- a current producer's batch to a topic of format v0/v1 --------------------------------------

@pytest.mark.parametrize("codec", LEGACY_CODECS)
@pytest.mark.parametrize("to_magic", [0, 1])
def test_a_v2_batch_is_converted_down_to_the_logs_format(to_magic, codec):
    result, counter = validate(v2_batch(5, codec), to_magic)
    assert counter.value == 105 and result.message_size_maybe_changed
    batches = read_back(result.validated_records.buffer)
    assert {m for m, _, _ in batches} == {to_magic}
    # uncompressed: one entry per message; compressed: one wrapper keeping the codec
    assert len(batches) == (5 if codec is CompressionType.NONE else 1)
    assert {c for _, c, _ in batches} == {int(codec)}
    rows = [row for _, _, rs in batches for row in rs]
    assert [(o, k, v) for o, _, _, k, v in rows] == [(100 + i, k, v) for i, (k, v) in enumerate(values(5))]
    if to_magic == 1:
        assert [ts for _, ts, *_ in rows] == [NOW - 1000 + i for i in range(5)]
        assert result.max_timestamp == NOW - 996
        # an uncompressed set names the message holding the max timestamp, a wrapper its last offset
        assert result.shallow_offset_of_max_timestamp == 104
    else:
        assert result.max_timestamp == -1


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_log_append_time_is_stamped_on_converted_v1_messages(codec):
    result, _ = validate(v2_batch(3, codec), 1, timestamp_type=TimestampType.LOG_APPEND_TIME)
    rows = [row for _, _, rs in read_back(result.validated_records.buffer) for row in rs]
    assert [(ts, tt) for _, ts, tt, _, _ in rows] == [(NOW, 1)] * 3
    assert result.max_timestamp == NOW
    assert result.shallow_offset_of_max_timestamp == (100 if codec is CompressionType.NONE else 102)


def test_a_broker_side_codec_compresses_the_converted_messages_into_one_wrapper():
    result, _ = validate(v2_batch(4), 1, target_codec=CompressionType.SNAPPY)
    [(magic, codec, rows)] = read_back(result.validated_records.buffer)
    assert (magic, codec, [r[0] for r in rows]) == (1, int(CompressionType.SNAPPY), [100, 101, 102, 103])


def test_record_headers_cannot_be_written_below_v2():
    """Kafka's MemoryRecordsBuilder refuses them with an IllegalArgumentException, which the
    producer gets as UNKNOWN_SERVER_ERROR; ours is a ValueError, answered the same way."""
    with pytest.raises(ValueError, match="Magic v1 does not support record headers"):
        validate(v2_batch(2, headers=[("h", b"x")]), 1)


# --- an old producer's message set -----------------------------------------------------------

@pytest.mark.parametrize("magic", [0, 1])
def test_an_uncompressed_set_of_the_logs_format_gets_its_offsets_in_place(magic):
    data = old_producer_set(magic, 4)
    before = bytes(data)
    result, counter = validate(data, magic)
    assert counter.value == 104 and not result.message_size_maybe_changed
    # in place: only the offsets (outside the CRC) changed
    assert bytes(result.validated_records.buffer) == bytes(data)
    changed = [i for i in range(len(before)) if before[i] != data[i]]
    entry_size = len(before) // 4
    assert all(i % entry_size < 8 for i in changed)
    rows = [row for _, _, rs in read_back(data) for row in rs]
    assert [(o, k, v) for o, _, _, k, v in rows] == [(100 + i, k, v) for i, (k, v) in enumerate(values(4))]
    if magic == 1:
        assert (result.max_timestamp, result.shallow_offset_of_max_timestamp) == (NOW - 997, 103)
    else:
        assert (result.max_timestamp, result.shallow_offset_of_max_timestamp) == (-1, -1)


def test_log_append_time_rewrites_each_v1_message_with_a_new_crc():
    data = old_producer_set(1, 3)
    result, _ = validate(data, 1, timestamp_type=TimestampType.LOG_APPEND_TIME)
    rows = [row for _, _, rs in read_back(result.validated_records.buffer) for row in rs]
    assert [(o, ts, tt) for o, ts, tt, _, _ in rows] == [(100 + i, NOW, 1) for i in range(3)]
    assert (result.max_timestamp, result.shallow_offset_of_max_timestamp) == (NOW, 100)


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:])
def test_a_v1_wrapper_with_the_topics_codec_is_kept_with_its_offset_rewritten(codec):
    data = old_producer_set(1, 5, codec)
    payload = bytes(data[12 + 22:])  # the wrapper's compressed value, after its v1 header
    result, counter = validate(data, 1, counter=1000)
    assert counter.value == 1005 and not result.message_size_maybe_changed
    assert result.record_conversion_stats.num_records_converted == 0
    out = bytes(result.validated_records.buffer)
    assert out[12 + 22:] == payload
    assert struct.unpack_from(">q", out)[0] == 1004
    [(magic, _, rows)] = read_back(out)
    assert magic == 1 and [o for o, *_ in rows] == list(range(1000, 1005))
    assert (result.max_timestamp, result.shallow_offset_of_max_timestamp) == (NOW - 996, 1004)


def test_a_v1_wrapper_under_log_append_time_gets_the_time_on_the_wrapper():
    result, _ = validate(old_producer_set(1, 3, CompressionType.GZIP), 1,
                         timestamp_type=TimestampType.LOG_APPEND_TIME)
    [(_, _, rows)] = read_back(result.validated_records.buffer)
    assert [(ts, tt) for _, ts, tt, _, _ in rows] == [(NOW, 1)] * 3
    assert result.max_timestamp == NOW


def test_a_v0_wrapper_is_always_rebuilt_its_inner_offsets_being_absolute():
    result, counter = validate(old_producer_set(0, 3, CompressionType.GZIP), 0, counter=50)
    assert result.message_size_maybe_changed and counter.value == 53
    [(magic, codec, rows)] = read_back(result.validated_records.buffer)
    assert (magic, codec, [o for o, *_ in rows]) == (0, int(CompressionType.GZIP), [50, 51, 52])


def test_a_v1_wrapper_whose_inner_offsets_skip_is_rebuilt_not_refused():
    """Some old clients numbered a wrapper's messages wrongly; Kafka rewrites such a wrapper."""
    inner = bytearray()
    for relative in (0, 2, 5):
        write_entry(inner, relative, 1, NOW, b"k%d" % relative, b"v")
    data = bytearray()
    write_entry(data, 5, 1, NOW, None, compress(CompressionType.GZIP, bytes(inner)), CompressionType.GZIP)
    result, counter = validate(data, 1, counter=10)
    assert result.message_size_maybe_changed and counter.value == 13
    [(magic, _, rows)] = read_back(result.validated_records.buffer)
    assert magic == 1 and [(o, k) for o, _, _, k, _ in rows] == [(10, b"k0"), (11, b"k2"), (12, b"k5")]


@pytest.mark.parametrize("codec", LEGACY_CODECS)
@pytest.mark.parametrize("magic", [0, 1])
def test_an_old_producers_set_is_converted_up_to_a_v2_log(magic, codec):
    result, counter = validate(old_producer_set(magic, 4, codec), 2, partition_leader_epoch=3)
    assert counter.value == 104
    [batch] = MemoryRecords(result.validated_records.buffer).batches()
    batch.ensure_valid()
    assert (batch.magic, batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (2, 100, 103, 3)
    assert batch.compression_type is codec
    records = list(batch.records())
    assert [(r.key, r.value) for r in records] == values(4)
    assert [r.timestamp for r in records] == ([NOW - 1000 + i for i in range(4)] if magic else [-1] * 4)


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(st.one_of(st.none(), st.binary(min_size=1, max_size=16)), st.binary(max_size=64)),
                      min_size=1, max_size=12),
       source=st.sampled_from([0, 1, 2]), to_magic=st.sampled_from([0, 1, 2]),
       codec=st.sampled_from(LEGACY_CODECS), target=st.sampled_from([None] + LEGACY_CODECS),
       base=st.integers(min_value=0, max_value=2 ** 40))
def test_every_path_keeps_keys_values_and_order_and_numbers_from_the_counter(pairs, source, to_magic, codec,
                                                                             target, base):
    if source == 2:
        data = bytearray(build_batch([SimpleRecord(k, v, NOW) for k, v in pairs], compression=codec))
    else:
        builder = LegacyRecordBatchBuilder(magic=source, compression_type=int(codec), batch_size=1 << 20)
        for i, (k, v) in enumerate(pairs):
            builder.append(i, timestamp=NOW if source else None, key=k, value=v)
        data = bytearray(builder.build())
    result, counter = validate(data, to_magic, counter=base, target_codec=target)
    assert counter.value == base + len(pairs)
    batches = read_back(result.validated_records.buffer)
    assert {m for m, _, _ in batches} == {to_magic}
    rows = [row for _, _, rs in batches for row in rs]
    assert [(o, k, v) for o, _, _, k, v in rows] == [(base + i, k, v) for i, (k, v) in enumerate(pairs)]
    if to_magic and source:
        assert {ts for _, ts, *_ in rows} == {NOW}


# --- what Kafka refuses --------------------------------------------------------------------

def test_a_message_with_a_bad_crc_is_corrupt():
    data = old_producer_set(1, 3)
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordException, match="corrupt"):
        validate(data, 1)


def test_an_inner_message_with_a_bad_crc_is_corrupt():
    """Only the wrapper's CRC is checked when the set arrives; the validator checks each inner
    message's as it decompresses them (LogValidator.validateRecord)."""
    inner = bytearray()
    for i in range(3):
        write_entry(inner, i, 1, NOW, b"k", b"v%d" % i)
    inner[-1] ^= 0xFF
    data = bytearray()
    write_entry(data, 2, 1, NOW, None, compress(CompressionType.GZIP, bytes(inner)), CompressionType.GZIP)
    with pytest.raises(CorruptRecordException, match="in topic partition t-0"):
        validate(data, 1)


def test_a_v1_wrapper_below_its_last_inner_offset_is_invalid():
    inner = bytearray()
    for i in range(3):
        write_entry(inner, i, 1, NOW, b"k", b"v")
    data = bytearray()
    write_entry(data, 1, 1, NOW, None, compress(CompressionType.GZIP, bytes(inner)), CompressionType.GZIP)
    with pytest.raises(InvalidRecordException, match="wrapper offset '1' is less than the last inner"):
        validate(data, 1)


def test_a_compressed_set_holds_one_wrapper():
    data = old_producer_set(1, 2, CompressionType.GZIP) + old_producer_set(1, 2, CompressionType.GZIP)
    with pytest.raises(InvalidRecordException, match="more than one batch"):
        validate(data, 1)


def test_entries_of_two_formats_in_one_set_are_invalid():
    with pytest.raises(InvalidRecordException, match="is not the same as the first batch"):
        validate(old_producer_set(1, 2) + old_producer_set(0, 2), 1)


def test_a_v1_producer_claiming_log_append_time_is_refused():
    data = old_producer_set(1, 2)
    for entry in (0, len(data) // 2):
        data[entry + 12 + 5] |= 0x08  # the timestamp type bit of each message's attributes
        struct.pack_into(">I", data, entry + 12, zlib.crc32(bytes(data[entry + 16:entry + len(data) // 2])))
    with pytest.raises(InvalidTimestampException, match="should not set timestamp type to LogAppendTime"):
        validate(data, 1)


def test_a_timestamp_too_far_from_the_brokers_clock_is_refused():
    with pytest.raises(InvalidTimestampException) as info:
        validate(old_producer_set(1, 3, base_ts=NOW - 10_000), 1, timestamp_diff_max_ms=5_000)
    assert [e.batch_index for e in info.value.record_errors] == [0]


def test_a_message_without_key_on_a_compacted_topic_is_refused():
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=int(CompressionType.GZIP), batch_size=1 << 20)
    builder.append(0, timestamp=NOW, key=b"k", value=b"v")
    builder.append(1, timestamp=NOW, key=None, value=b"v")
    with pytest.raises(InvalidRecordException) as info:
        validate(bytearray(builder.build()), 1, compacted_topic=True)
    assert [e.batch_index for e in info.value.record_errors] == [1]


def test_a_v0_message_with_the_timestamp_type_bit_is_taken_as_kafka_takes_it():
    """Format v0 has no timestamp type: Kafka reads a v0 message's attribute bit 3 as nothing
    (LegacyRecord.timestampType), and so does this validator; the message is appended."""
    data = old_producer_set(0, 1)
    data[12 + 5] |= 0x08
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    result, counter = validate(data, 0)
    assert counter.value == 101
    [(magic, _, [(offset, ts, _, key, _)])] = read_back(result.validated_records.buffer)
    assert (magic, offset, ts, key) == (0, 100, None, b"k0")


def test_coordinator_appends_follow_the_same_format_rules():
    result, _ = validate(v2_batch(2), 1, origin=AppendOrigin.COORDINATOR)
    assert [m for m, _, _ in read_back(result.validated_records.buffer)] == [1, 1]
