"""LogValidator's header-only fast path against its general path: whenever the fast path
takes a batch it must leave exactly the bytes, offsets and result the general path
leaves; whenever it declines, it must not have touched anything."""
from __future__ import annotations

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.common.topic_partition import TopicPartition
from kafka_py.log.log_validator import (
    LogValidator,
    LongRef,
    _assign_offsets_fast,
    _validate_and_assign_offsets_general,
)
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.record.compression import CompressionType
from kafka_py.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    DefaultRecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.record.memory_records import MemoryRecords

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000


@st.composite
def batches(draw) -> bytearray:
    records = [SimpleRecord(draw(st.one_of(st.none(), st.binary(max_size=8))), draw(st.binary(max_size=40)),
                            timestamp=draw(st.one_of(st.just(-1), st.integers(NOW - 10_000, NOW + 10_000))))
               for _ in range(draw(st.integers(1, 5)))]
    producer = draw(st.sampled_from([(-1, -1, -1), (7, 0, 0), (7, 1, 40), (9, 0, -1)]))
    buffer = bytearray(build_batch(
        records, compression=draw(st.sampled_from([CompressionType.NONE, CompressionType.GZIP,
                                                    CompressionType.LZ4])),
        timestamp_type=draw(st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])),
        producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2],
        is_control_batch=draw(st.booleans()) and draw(st.booleans())))
    damage = draw(st.sampled_from(["none", "none", "none", "none", "crc", "count", "delta", "trailing"]))
    if damage == "crc":
        buffer[ATTRIBUTES_OFFSET + 5 + draw(st.integers(0, len(buffer) - ATTRIBUTES_OFFSET - 6))] ^= 0x40
    elif damage == "count":
        # a count that disagrees with lastOffsetDelta, CRC made to match
        buffer[60] ^= 0x01
        buffer[CRC_OFFSET:CRC_OFFSET + 4] = crc32c.crc32c(bytes(buffer[ATTRIBUTES_OFFSET:])).to_bytes(4, "big")
    elif damage == "delta":
        buffer[26] ^= 0x02
        buffer[CRC_OFFSET:CRC_OFFSET + 4] = crc32c.crc32c(bytes(buffer[ATTRIBUTES_OFFSET:])).to_bytes(4, "big")
    elif damage == "trailing":
        buffer += b"\x00" * draw(st.integers(1, 70))
    return buffer


parameters = st.fixed_dictionaries({
    "source_codec": st.sampled_from([None, CompressionType.NONE, CompressionType.GZIP]),
    "target_codec": st.sampled_from([None, "producer", CompressionType.NONE, CompressionType.GZIP,
                                     CompressionType.LZ4, "zstd"]),
    # the common case (what the fast path takes) weighted up
    "compacted_topic": st.sampled_from([False, False, False, True]),
    "timestamp_type": st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME, 0,
                                       "CreateTime"]),
    "timestamp_diff_max_ms": st.sampled_from([(1 << 63) - 1, (1 << 63) - 1, 60_000]),
    "partition_leader_epoch": st.integers(-1, 50),
    "origin": st.sampled_from([None, AppendOrigin.CLIENT, AppendOrigin.CLIENT, AppendOrigin.COORDINATOR]),
    "check_crc": st.booleans(),
})


def general(buffer: bytearray, offset: int, p: dict):
    counter = LongRef(offset)
    try:
        result = _validate_and_assign_offsets_general(
            MemoryRecords(buffer), TP, counter, None, NOW, p["source_codec"], p["target_codec"],
            p["compacted_topic"], p["timestamp_type"], p["timestamp_diff_max_ms"], p["partition_leader_epoch"],
            p["origin"], p["check_crc"])
    except Exception as e:  # noqa: BLE001 - the general path's verdict, compared below
        return e, counter
    return result, counter


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.integers(0, 2**40), parameters)
def test_fast_path_agrees_with_the_general_path(buffer: bytearray, offset: int, p: dict) -> None:
    fast_buffer = bytearray(buffer)
    counter = LongRef(offset)
    fast = _assign_offsets_fast(MemoryRecords(fast_buffer), counter, p["source_codec"], p["target_codec"],
                                p["compacted_topic"], p["timestamp_type"], p["timestamp_diff_max_ms"],
                                p["partition_leader_epoch"], p["origin"], p["check_crc"])
    general_buffer = bytearray(buffer)
    expected, general_counter = general(general_buffer, offset, p)
    if fast is None:
        assert fast_buffer == buffer and counter.value == offset
        return
    assert not isinstance(expected, Exception), f"general path refused what the fast path took: {expected!r}"
    assert counter.value == general_counter.value
    assert fast_buffer == general_buffer
    assert bytes(fast.validated_records.buffer) == bytes(expected.validated_records.buffer)
    assert (fast.max_timestamp, fast.shallow_offset_of_max_timestamp, fast.message_size_maybe_changed,
            fast.record_conversion_stats) == (expected.max_timestamp, expected.shallow_offset_of_max_timestamp,
                                              expected.message_size_maybe_changed,
                                              expected.record_conversion_stats)
    batch = DefaultRecordBatch(fast_buffer)
    assert batch.base_offset == offset and batch.partition_leader_epoch == p["partition_leader_epoch"]
    assert batch.is_valid()


def test_the_common_produce_takes_the_fast_path_in_place() -> None:
    buffer = bytearray(build_batch([SimpleRecord(None, b"v%d" % i, timestamp=NOW + i) for i in range(3)]))
    records = MemoryRecords(buffer)
    counter = LongRef(100)
    result = LogValidator.validate_messages_and_assign_offsets(
        records, TP, counter, None, NOW, CompressionType.NONE, CompressionType.NONE,
        partition_leader_epoch=4, origin=AppendOrigin.CLIENT, check_crc=True)
    assert result.validated_records is records  # no copy, no new object around the buffer
    assert counter.value == 103
    batch = DefaultRecordBatch(buffer)
    assert (batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (100, 102, 4)
    assert result.max_timestamp == NOW + 2 and result.shallow_offset_of_max_timestamp == 102


@pytest.mark.parametrize("readonly", [True, False])
def test_a_corrupt_batch_is_refused_by_either_path(readonly: bool) -> None:
    buffer = bytearray(build_batch([SimpleRecord(None, b"value", timestamp=NOW)]))
    buffer[-1] ^= 0xFF
    data = bytes(buffer) if readonly else buffer
    from kafka_py.common.errors import CorruptRecordException

    with pytest.raises(CorruptRecordException, match="corrupt"):
        LogValidator.validate_messages_and_assign_offsets(MemoryRecords(data), TP, LongRef(0), None, NOW)
