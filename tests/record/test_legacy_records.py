"""Message formats v0 and v1 (kafka_py/clients/common/record/legacy_record.py, abstract_legacy_record_batch.py):
written, read back, converted from v2 (records_util.py) and back, and refused when corrupt."""
from __future__ import annotations

import lz4.frame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyEntry, build_legacy_records, legacy_batches
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.legacy_record import LegacyRecord
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.records_util import down_convert

LEGACY_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]

records_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=40)), st.one_of(st.none(), st.binary(max_size=200)),
              st.integers(min_value=0, max_value=2**41)),
    min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.tuples(records_strategy, st.sampled_from(LEGACY_CODECS),
                                  st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])),
                        min_size=1, max_size=3),
       base_offset=st.integers(min_value=0, max_value=2**40),
       to_magic=st.sampled_from([0, 1]))
def test_v2_converted_to_legacy_and_back_keeps_offsets_keys_values_and_v1_timestamps(
        batches, base_offset, to_magic) -> None:
    v2 = bytearray()
    expected = []
    offset = base_offset
    for records, codec, timestamp_type in batches:
        append_time = 1_700_000_000_000
        v2 += build_batch([SimpleRecord(k, v, ts) for k, v, ts in records], base_offset=offset,
                          compression=codec, timestamp_type=timestamp_type,
                          log_append_time=append_time if timestamp_type == TimestampType.LOG_APPEND_TIME else None)
        for i, (k, v, ts) in enumerate(records):
            expected.append((offset + i, k, v, append_time if timestamp_type == TimestampType.LOG_APPEND_TIME
                             else ts))
        offset += len(records)
    legacy = down_convert(MemoryRecords(v2).batches(), to_magic, base_offset).records
    read = [(r.offset, r.key, r.value, r.timestamp) for batch in legacy_batches(legacy)
            for r in (batch.ensure_valid() or batch.records())]
    assert [(o, k, v) for o, k, v, _ in read] == [(o, k, v) for o, k, v, _ in expected]
    if to_magic == 1:
        assert [ts for *_, ts in read] == [ts for *_, ts in expected]
    else:
        assert all(ts == -1 for *_, ts in read)
    # and back to v2: the same records at the same offsets
    back = MemoryRecords(build_batch([SimpleRecord(k, v, max(ts, -1)) for _, k, v, ts in read],
                                     base_offset=read[0][0], offsets=[o for o, *_ in read]))
    assert [(r.offset, r.key, r.value) for r in back.records()] == [(o, k, v) for o, k, v, _ in expected]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_written_entries_read_back(magic, codec) -> None:
    entries = [LegacyEntry(100 + i, 1000 + i, b"k%d" % i, b"v%d" % i) for i in range(5)]
    data = build_legacy_records(entries, magic, codec)
    batches = list(legacy_batches(data))
    assert len(batches) == (5 if codec is CompressionType.NONE else 1)
    for batch in batches:
        batch.ensure_valid()
        assert batch.magic == magic and batch.compression_type is codec
    records = [r for b in batches for r in b.records()]
    assert [(r.offset, r.key, r.value) for r in records] == [(e.offset, e.key, e.value) for e in entries]
    assert batches[-1].last_offset == 104 and batches[0].base_offset == 100


def test_lz4_in_v0_has_kafkas_old_header_checksum() -> None:
    """Magic 0 wrappers carry the pre-0.10 frame descriptor checksum (KAFKA-3160), which a
    standard LZ4 reader refuses; v1's is the standard one."""
    v0 = next(legacy_batches(build_legacy_records([LegacyEntry(0, -1, None, b"x" * 100)], 0,
                                                  CompressionType.LZ4)))
    v1 = next(legacy_batches(build_legacy_records([LegacyEntry(0, 5, None, b"x" * 100)], 1,
                                                  CompressionType.LZ4)))
    assert lz4.frame.decompress(v1.outer_record.value)[-100:] == b"x" * 100
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(v0.outer_record.value)
    assert v0.records()[0].value == b"x" * 100


def test_a_bad_crc_is_corrupt() -> None:
    data = bytearray(build_legacy_records([LegacyEntry(0, 5, b"k", b"value")], 1))
    data[-1] ^= 0xFF
    [batch] = legacy_batches(data)
    with pytest.raises(CorruptRecordException):
        batch.ensure_valid()


def test_a_v1_wrapper_below_its_last_inner_offset_is_invalid() -> None:
    inner = bytearray()
    from kafka_py.clients.common.record.legacy_record import write_entry

    for i in range(3):
        write_entry(inner, i, 1, 10, None, b"v")
    out = bytearray()
    write_entry(out, 1, 1, 10, None, _gzip(inner), CompressionType.GZIP)
    [batch] = legacy_batches(out)
    batch.ensure_valid()
    with pytest.raises(InvalidRecordException):
        batch.records()


def _gzip(data) -> bytes:
    from kafka_py.clients.common.record.compression import compress

    return compress(CompressionType.GZIP, bytes(data))


def test_control_batches_are_not_down_converted() -> None:
    from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker

    marker = MemoryRecords.with_end_transaction_marker(5, 10, 0, 7, 0, EndTransactionMarker(ControlRecordType.COMMIT, 0))
    data = build_batch([SimpleRecord(b"k", b"v", 10)], base_offset=4, producer_id=7, producer_epoch=0,
                       is_transactional=True) + bytes(marker.buffer)
    legacy = down_convert(MemoryRecords(data).batches(), 1, 0).records
    assert [(r.offset, r.value) for b in legacy_batches(legacy) for r in b.records()] == [(4, b"v")]


def test_legacy_record_fields() -> None:
    data = build_legacy_records([LegacyEntry(3, 77, None, b"v")], 1, timestamp_type=TimestampType.LOG_APPEND_TIME,
                                log_append_time=99)
    record = LegacyRecord(memoryview(data)[12:])
    assert (record.magic, record.timestamp, record.timestamp_type, record.key, record.value) == (
        1, 99, TimestampType.LOG_APPEND_TIME, None, b"v")


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kafka_python_reads_what_is_written_here_and_the_other_way_round(magic, codec) -> None:
    """An independent v0/v1 implementation (kafka-python's) as the reference."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords as KafkaPythonRecords

    if magic == 0 and codec is CompressionType.LZ4:
        pytest.importorskip("xxhash", reason="kafka-python's magic-0 LZ4 needs xxhash")
    entries = [LegacyEntry(10 + i, 1000 + i, b"k%d" % i if i % 2 else None, b"v%d" % i) for i in range(4)]
    ours = build_legacy_records(entries, magic, codec)
    theirs = KafkaPythonRecords(ours)
    read = []
    while theirs.has_next():
        batch = theirs.next_batch()
        read.extend((r.offset, r.key, r.value, r.timestamp if magic else -1) for r in batch)
    assert read == [(e.offset, e.key, e.value, e.timestamp if magic else -1) for e in entries]

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20)
    for i, e in enumerate(entries):
        builder.append(i, timestamp=e.timestamp if magic else None, key=e.key, value=e.value)
    built = bytes(builder.build())
    records = [r for b in legacy_batches(built) for r in (b.ensure_valid() or b.records())]
    assert [(r.key, r.value) for r in records] == [(e.key, e.value) for e in entries]
    assert [r.offset for r in records] == list(range(4))
