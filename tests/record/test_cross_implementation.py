"""Batches cross between implementations both ways: kafka-python's builders ->
our reader, and our builder -> kafka-python's reader and kio's record reader."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords as KpMemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder as KpBatchBuilder
from kafka.record.memory_records import MemoryRecordsBuilder as KpMemoryRecordsBuilder
from kio.records.readers import read_batch as kio_read_batch

from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch, SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords

CODECS = list(CompressionType)

headers_st = st.lists(
    st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=20)), max_size=3
).map(tuple)
record_st = st.builds(
    SimpleRecord,
    key=st.none() | st.binary(max_size=40),
    value=st.none() | st.binary(max_size=300),
    timestamp=st.integers(0, 2**41),
    headers=headers_st,
)
records_st = st.lists(record_st, min_size=1, max_size=8)

COMPRESSIBLE = [
    SimpleRecord(b"user-1", b'{"event": "click", "page": "/home"}' * 5, 1_650_000_000_000, (("trace", b"abc"),)),
    SimpleRecord(None, b'{"event": "view", "page": "/cart"}' * 5, 1_650_000_000_010, (("n", None),)),
    SimpleRecord(b"user-3", None, 1_649_999_999_000),
    SimpleRecord(b"", b"", 1_650_000_000_005, (("", b""),)),
]


def as_tuples(records, base_offset=0):
    return [(base_offset + i, r.timestamp, r.key, r.value, list(r.headers)) for i, r in enumerate(records)]


def ours_as_tuples(batch):
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]


def kp_batches(buf):
    mr = KpMemoryRecords(bytes(buf))
    out = []
    while mr.has_next():
        out.append(mr.next_batch())
    return out


def kp_as_tuples(kp_batch):
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in kp_batch]


def kp_build(records, codec, base_offset=0, **producer):
    builder = KpMemoryRecordsBuilder(magic=2, compression_type=int(codec), batch_size=1 << 24,
                                     offset=base_offset, **producer)
    for r in records:
        assert builder.append(r.timestamp, r.key, r.value, list(r.headers)) is not None
    builder.close()
    return bytearray(builder.buffer())


# ---- kafka-python -> kafka_py ------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_batches_read_here(codec):
    buf = kp_build(COMPRESSIBLE, codec, base_offset=0)
    [batch] = MemoryRecords(buf).batches()
    batch.ensure_valid()
    assert batch.compression_type is codec
    assert batch.record_count == 4 and batch.last_offset_delta == 3
    assert batch.base_timestamp == 1_650_000_000_000
    assert batch.max_timestamp == 1_650_000_000_010
    assert ours_as_tuples(batch) == as_tuples(COMPRESSIBLE)


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_transactional_batches_read_here(codec):
    buf = kp_build(COMPRESSIBLE, codec, transactional=True, producer_id=4242, producer_epoch=7,
                   base_sequence=100)
    batch = MemoryRecords(buf).first_batch()
    batch.ensure_valid()
    assert batch.is_transactional and not batch.is_control_batch
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (4242, 7, 100, 103)
    assert [r.sequence for r in batch] == [100, 101, 102, 103]


def test_kafka_python_low_level_builder_with_offset_gaps():
    builder = KpBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                             producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, 1000, b"a", b"1", [])
    builder.append(3, 1001, b"b", b"2", [("h", b"v")])
    batch = DefaultRecordBatch(builder.build())
    batch.ensure_valid()
    assert (batch.last_offset_delta, batch.record_count) == (3, 2)
    assert ours_as_tuples(batch) == [(0, 1000, b"a", b"1", []), (3, 1001, b"b", b"2", [("h", b"v")])]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_st, codec=st.sampled_from(CODECS))
def test_kafka_python_to_ours_property(records, codec):
    buf = kp_build(records, codec)
    batch = DefaultRecordBatch(buf)
    batch.ensure_valid()
    assert ours_as_tuples(batch) == as_tuples(records)
    assert batch.max_timestamp == max(r.timestamp for r in records)


# ---- kafka_py -> kafka-python ------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_our_batches_read_by_kafka_python(codec):
    buf = build_batch(COMPRESSIBLE, base_offset=900, compression=codec, producer_id=11, producer_epoch=2,
                      base_sequence=5, is_transactional=True, partition_leader_epoch=4)
    [kp] = kp_batches(buf)
    assert kp.validate_crc()
    assert kp.compression_type == int(codec)
    assert (kp.base_offset, kp.last_offset_delta, kp.producer_id, kp.producer_epoch, kp.base_sequence) == (
        900, 3, 11, 2, 5)
    assert kp.is_transactional and kp.leader_epoch == 4
    assert kp.max_timestamp == 1_650_000_000_010
    assert kp_as_tuples(kp) == as_tuples(COMPRESSIBLE, 900)


def test_in_place_assignment_seen_by_kafka_python():
    buf = bytearray(build_batch(COMPRESSIBLE, compression=CompressionType.SNAPPY))
    batch = DefaultRecordBatch(buf)
    batch.set_last_offset(53)
    batch.set_partition_leader_epoch(6)
    batch.set_max_timestamp(TimestampType.LOG_APPEND_TIME, 1_700_000_000_000)
    [kp] = kp_batches(buf)
    assert kp.validate_crc()
    assert (kp.base_offset, kp.leader_epoch, kp.timestamp_type) == (50, 6, 1)
    assert [(r.offset, r.timestamp) for r in kp] == [(50 + i, 1_700_000_000_000) for i in range(4)]


def test_several_batches_in_one_buffer_read_by_kafka_python():
    parts = [build_batch(COMPRESSIBLE[:2], base_offset=0, compression=CompressionType.GZIP),
             build_batch(COMPRESSIBLE[2:], base_offset=2, compression=CompressionType.LZ4)]
    batches = kp_batches(b"".join(parts))
    assert [b.base_offset for b in batches] == [0, 2]
    assert [t for b in batches for t in kp_as_tuples(b)] == as_tuples(COMPRESSIBLE)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_st, codec=st.sampled_from(CODECS), base_offset=st.integers(0, 2**40))
def test_ours_to_kafka_python_property(records, codec, base_offset):
    buf = build_batch(records, base_offset=base_offset, compression=codec)
    [kp] = kp_batches(buf)
    assert kp.validate_crc()
    assert kp_as_tuples(kp) == as_tuples(records, base_offset)
    # and back through our reader
    assert ours_as_tuples(DefaultRecordBatch(buf)) == as_tuples(records, base_offset)


# ---- kafka_py -> kio ---------------------------------------------------------------
# kio's reader handles uncompressed batches only and keeps timestamps to the second.

def kio_as_tuples(kio_batch):
    return [
        (r.offset, int(r.timestamp.timestamp()), r.key, r.value, [(h.key, h.value) for h in r.headers])
        for r in kio_batch.records
    ]


def expected_for_kio(records, base_offset):
    return [
        (base_offset + i, r.timestamp // 1000, r.key, r.value,
         [(k.encode("utf-8"), v) for k, v in r.headers])
        for i, r in enumerate(records)
    ]


def test_our_batch_read_by_kio():
    buf = build_batch(COMPRESSIBLE, base_offset=77, producer_id=5, producer_epoch=1, base_sequence=9,
                      partition_leader_epoch=3)
    batch, size = kio_read_batch(buf, 0)
    assert size == len(buf)
    ours = DefaultRecordBatch(buf)
    assert (batch.base_offset, batch.crc, batch.partition_leader_epoch, batch.producer_id,
            batch.producer_epoch, batch.base_sequence, batch.last_offset_delta) == (
        77, ours.checksum, 3, 5, 1, 9, 3)
    assert kio_as_tuples(batch) == expected_for_kio(COMPRESSIBLE, 77)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_st, base_offset=st.integers(0, 2**40))
def test_ours_to_kio_property(records, base_offset):
    buf = build_batch(records, base_offset=base_offset)
    batch, size = kio_read_batch(buf, 0)  # kio checks the CRC and every length itself
    assert size == len(buf)
    assert kio_as_tuples(batch) == expected_for_kio(records, base_offset)
