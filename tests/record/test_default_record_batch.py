"""DefaultRecordBatch: header views, in-place updates, validation, and record
decoding against corrupt and malformed input."""
import struct

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    UnsupportedForMessageFormatException,
)
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    CRC_OFFSET,
    CURRENT_MAGIC_VALUE,
    LAST_OFFSET_DELTA_OFFSET,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORDS_COUNT_OFFSET,
    RECORDS_OFFSET,
    DefaultRecordBatch,
    Record,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_empty_batch,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords

CODECS = list(CompressionType)
RECORD_ERRORS = (CorruptRecordException, InvalidRecordException)

SAMPLE = [
    SimpleRecord(b"key-0", b"value-0", 1_600_000_000_000, (("h1", b"v1"), ("h2", None))),
    SimpleRecord(None, b"value-1" * 30, 1_600_000_000_007),
    SimpleRecord(b"k" * 200, None, 1_599_999_999_990, (("\u00e9t\u00e9", b"x" * 300),)),
]


def sample_batch(**kw) -> bytearray:
    return bytearray(build_batch(SAMPLE, **kw))


def refresh_crc(buf: bytearray) -> None:
    struct.pack_into(">I", buf, CRC_OFFSET, crc32c(bytes(buf[ATTRIBUTES_OFFSET:])))


def drain(batch):
    return list(batch.records())


# ---- layout and header fields ---------------------------------------------------

def test_header_fields_at_kafkas_offsets():
    buf = sample_batch(base_offset=1000, producer_id=77, producer_epoch=3, base_sequence=10,
                       is_transactional=True, partition_leader_epoch=9, compression=CompressionType.GZIP)
    def at(fmt, off):
        return struct.unpack_from(fmt, buf, off)[0]
    assert at(">q", BASE_OFFSET_OFFSET) == 1000
    assert at(">i", LENGTH_OFFSET) == len(buf) - LOG_OVERHEAD
    assert at(">i", PARTITION_LEADER_EPOCH_OFFSET) == 9
    assert at(">b", MAGIC_OFFSET) == CURRENT_MAGIC_VALUE
    assert at(">I", CRC_OFFSET) == crc32c(bytes(buf[ATTRIBUTES_OFFSET:]))
    assert at(">h", ATTRIBUTES_OFFSET) == 0x10 | 1
    assert at(">i", LAST_OFFSET_DELTA_OFFSET) == 2
    assert at(">q", BASE_TIMESTAMP_OFFSET) == 1_600_000_000_000
    assert at(">q", MAX_TIMESTAMP_OFFSET) == 1_600_000_000_007
    assert at(">q", PRODUCER_ID_OFFSET) == 77
    assert at(">h", PRODUCER_EPOCH_OFFSET) == 3
    assert at(">i", BASE_SEQUENCE_OFFSET) == 10
    assert at(">i", RECORDS_COUNT_OFFSET) == 3
    assert RECORDS_OFFSET == RECORD_BATCH_OVERHEAD == 61


def test_properties():
    buf = sample_batch(base_offset=1000, producer_id=77, producer_epoch=3, base_sequence=10,
                       is_transactional=True, partition_leader_epoch=9, compression=CompressionType.ZSTD)
    b = DefaultRecordBatch(buf)
    assert (b.base_offset, b.last_offset_delta, b.last_offset, b.next_offset) == (1000, 2, 1002, 1003)
    assert b.size_in_bytes == len(buf)
    assert b.partition_leader_epoch == 9
    assert b.magic == 2
    assert b.checksum == b.compute_checksum()
    assert b.compression_type is CompressionType.ZSTD
    assert b.timestamp_type is TimestampType.CREATE_TIME
    assert b.is_transactional and not b.is_control_batch
    assert (b.base_timestamp, b.max_timestamp) == (1_600_000_000_000, 1_600_000_000_007)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (77, 3, 10, 12)
    assert b.has_producer_id
    assert b.record_count == 3
    assert b.is_valid()
    b.ensure_valid()


def test_defaults_mean_no_producer_and_no_epoch():
    b = DefaultRecordBatch(sample_batch())
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (-1, -1, -1, -1)
    assert not b.has_producer_id
    assert b.partition_leader_epoch == -1
    assert [r.sequence for r in b] == [-1, -1, -1]


def test_header_reads_do_not_copy_the_buffer():
    buf = sample_batch()
    b = DefaultRecordBatch(buf)
    assert b.buffer.obj is buf
    struct.pack_into(">q", buf, 0, 123456)
    assert b.base_offset == 123456
    # A view over part of a larger buffer also shares it.
    big = bytearray(b"\0" * 10) + buf
    view = memoryview(big)[10:]
    assert DefaultRecordBatch(view).buffer.obj is big


def test_records_decode():
    b = DefaultRecordBatch(sample_batch(base_offset=50))
    assert drain(b) == [
        Record(50, 1_600_000_000_000, b"key-0", b"value-0", (("h1", b"v1"), ("h2", None)), -1),
        Record(51, 1_600_000_000_007, None, b"value-1" * 30, (), -1),
        Record(52, 1_599_999_999_990, b"k" * 200, None, (("\u00e9t\u00e9", b"x" * 300),), -1),
    ]
    assert list(b) == drain(b)


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_decodes_the_same_records(codec):
    plain = drain(DefaultRecordBatch(sample_batch()))
    b = DefaultRecordBatch(sample_batch(compression=codec))
    b.ensure_valid()
    assert b.compression_type is codec
    assert drain(b) == plain


def test_sequences_wrap_at_int32_max():
    records = [SimpleRecord(None, b"v", 1)] * 3
    b = DefaultRecordBatch(build_batch(records, producer_id=1, producer_epoch=0, base_sequence=2**31 - 2))
    assert b.last_sequence == 0
    assert [r.sequence for r in b] == [2**31 - 2, 2**31 - 1, 0]


def test_explicit_offsets_keep_gaps():
    records = [SimpleRecord(b"a", b"1", 5), SimpleRecord(b"b", b"2", 6)]
    b = DefaultRecordBatch(build_batch(records, base_offset=100, offsets=[100, 104]))
    assert (b.last_offset_delta, b.record_count) == (4, 2)
    assert [r.offset for r in b] == [100, 104]
    b.ensure_valid()
    with pytest.raises(ValueError):
        build_batch(records, base_offset=100, offsets=[104, 100])


def test_log_append_time_batch():
    b = DefaultRecordBatch(build_batch(SAMPLE, timestamp_type=TimestampType.LOG_APPEND_TIME,
                                       log_append_time=1_700_000_000_000))
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert b.max_timestamp == 1_700_000_000_000
    assert [r.timestamp for r in b] == [1_700_000_000_000] * 3


def test_build_rejects_bad_input():
    with pytest.raises(ValueError):
        build_batch([])
    with pytest.raises(TypeError):
        build_batch([SimpleRecord("not bytes", b"v")])
    with pytest.raises(ValueError):
        build_batch([SimpleRecord(b"k", b"v", -5)])
    with pytest.raises(ValueError):
        build_batch([SimpleRecord(b"k", b"v")], is_transactional=True)


def test_empty_batch_keeps_producer_state():
    buf = build_empty_batch(base_offset=10, last_offset=14, producer_id=3, producer_epoch=1,
                            base_sequence=20, timestamp=99, is_transactional=True, is_control_batch=False)
    b = DefaultRecordBatch(buf)
    b.ensure_valid()
    assert (b.record_count, b.base_offset, b.last_offset, b.last_sequence) == (0, 10, 14, 24)
    assert drain(b) == []


def test_end_transaction_marker_batch():
    marker = EndTransactionMarker(ControlRecordType.COMMIT, 42)
    mr = MemoryRecords.with_end_transaction_marker(500, 1234, 7, 88, 2, marker)
    b = mr.first_batch()
    b.ensure_valid()
    assert b.is_control_batch and b.is_transactional
    assert (b.base_offset, b.partition_leader_epoch, b.producer_id, b.producer_epoch) == (500, 7, 88, 2)
    [record] = drain(b)
    assert ControlRecordType.parse(record.key) is ControlRecordType.COMMIT
    assert EndTransactionMarker.deserialize(record) == marker
    with pytest.raises(InvalidRecordException):
        ControlRecordType.parse(b"\x00")
    with pytest.raises(InvalidRecordException):
        ControlRecordType.parse(b"\xff\xff\x00\x01")
    assert ControlRecordType.parse(b"\x00\x00\x00\x09") is ControlRecordType.UNKNOWN


# ---- in-place updates ----------------------------------------------------------

@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.LZ4])
def test_offset_and_epoch_assignment_keep_the_crc(codec):
    buf = sample_batch(compression=codec)
    b = DefaultRecordBatch(buf)
    crc = b.checksum
    b.set_last_offset(1_000_002)
    b.set_partition_leader_epoch(17)
    assert b.checksum == crc
    b.ensure_valid()
    assert (b.base_offset, b.last_offset, b.partition_leader_epoch) == (1_000_000, 1_000_002, 17)
    assert [r.offset for r in b] == [1_000_000, 1_000_001, 1_000_002]


def test_set_max_timestamp_recomputes_the_crc():
    buf = sample_batch(compression=CompressionType.GZIP, is_transactional=True, producer_id=4,
                       producer_epoch=0, base_sequence=0)
    b = DefaultRecordBatch(buf)
    old_crc = b.checksum
    b.set_max_timestamp(TimestampType.LOG_APPEND_TIME, 1_800_000_000_000)
    b.ensure_valid()
    assert b.checksum != old_crc
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert b.max_timestamp == 1_800_000_000_000
    assert b.compression_type is CompressionType.GZIP and b.is_transactional
    assert [r.timestamp for r in b] == [1_800_000_000_000] * 3
    b.set_max_timestamp(TimestampType.CREATE_TIME, 1_600_000_000_007)
    b.ensure_valid()
    assert b.checksum == old_crc


def test_in_place_updates_need_a_writable_buffer():
    b = DefaultRecordBatch(bytes(sample_batch()))
    with pytest.raises(TypeError):
        b.set_last_offset(5)


# ---- validation: corruption must never pass -------------------------------------

CORRUPTION_CASES = [
    dict(),
    dict(compression=CompressionType.GZIP),
    dict(compression=CompressionType.SNAPPY, producer_id=1, producer_epoch=0, base_sequence=0),
    dict(compression=CompressionType.LZ4),
    dict(compression=CompressionType.ZSTD, is_transactional=True, producer_id=9, producer_epoch=1, base_sequence=3),
]


@pytest.mark.parametrize("kw", CORRUPTION_CASES)
def test_every_flipped_byte_in_crc_region_is_detected(kw):
    good = sample_batch(**kw)
    for pos in range(CRC_OFFSET, len(good)):
        for mask in (0x01, 0x80, 0xFF):
            bad = bytearray(good)
            bad[pos] ^= mask
            b = DefaultRecordBatch(bad)
            assert not b.is_valid(), (pos, mask)
            with pytest.raises(CorruptRecordException):
                b.ensure_valid()


def test_flips_outside_the_crc_are_offset_epoch_length_or_magic():
    good = sample_batch()
    for pos in range(0, CRC_OFFSET):
        bad = bytearray(good)
        bad[pos] ^= 0x01
        b = DefaultRecordBatch(bad)
        if pos < LENGTH_OFFSET or PARTITION_LEADER_EPOCH_OFFSET <= pos < MAGIC_OFFSET:
            b.ensure_valid()  # base offset and leader epoch are outside the CRC by design
        elif pos == MAGIC_OFFSET:
            with pytest.raises((CorruptRecordException, UnsupportedForMessageFormatException)):
                b.ensure_valid()
        else:
            with pytest.raises(CorruptRecordException, match="length field|smaller than"):
                b.ensure_valid()


@pytest.mark.parametrize("kw", CORRUPTION_CASES[:2])
def test_truncation_at_any_length(kw):
    good = sample_batch(**kw)
    for n in range(len(good)):
        cut = bytearray(good[:n])
        with pytest.raises(CorruptRecordException):
            DefaultRecordBatch(cut).ensure_valid()
        if n:
            with pytest.raises(CorruptRecordException, match="Truncated"):
                list(MemoryRecords(cut).batches())
            assert list(MemoryRecords(cut).batches(strict=False)) == []


def test_trailing_bytes_after_the_batch_are_rejected():
    buf = sample_batch() + b"\0"
    with pytest.raises(CorruptRecordException, match="buffer holds"):
        DefaultRecordBatch(buf).ensure_valid()


@pytest.mark.parametrize("length", [-1, 0, 13, 48, 49 + 1, 2**31 - 1])
def test_wrong_length_field(length):
    buf = sample_batch()
    struct.pack_into(">i", buf, LENGTH_OFFSET, length)
    with pytest.raises(CorruptRecordException):
        DefaultRecordBatch(buf).ensure_valid()
    with pytest.raises(CorruptRecordException):
        list(MemoryRecords(buf).batches())


@pytest.mark.parametrize("magic", [0, 1, 3, -1, 127])
def test_other_magic_values(magic):
    buf = sample_batch()
    buf[MAGIC_OFFSET] = magic & 0xFF
    expected = UnsupportedForMessageFormatException if magic in (0, 1) else CorruptRecordException
    with pytest.raises(expected, match=f"magic.*{magic}|{magic}.*magic|v{magic}"):
        DefaultRecordBatch(buf).ensure_valid()
    if magic in (0, 1):
        # read as a log entry of that message format, which fails its own CRC
        [entry] = MemoryRecords(buf).batches()
        with pytest.raises(CorruptRecordException):
            entry.ensure_valid()
    else:
        with pytest.raises(CorruptRecordException):
            list(MemoryRecords(buf).batches())


@pytest.mark.parametrize("count,delta,message", [
    (-1, 2, "invalid record count"),
    (4, 2, "offset range"),
    (3, -1, "last offset delta"),
    (10_000, 20_000, "cannot fit"),
])
def test_inconsistent_counts_with_valid_crc(count, delta, message):
    buf = sample_batch()
    struct.pack_into(">i", buf, RECORDS_COUNT_OFFSET, count)
    struct.pack_into(">i", buf, LAST_OFFSET_DELTA_OFFSET, delta)
    refresh_crc(buf)
    b = DefaultRecordBatch(buf)
    assert b.is_valid()  # the CRC is intact: only the header consistency check fails
    with pytest.raises(InvalidRecordException, match=message):
        b.ensure_valid()


def test_too_few_records_for_the_count():
    buf = sample_batch()
    struct.pack_into(">i", buf, RECORDS_COUNT_OFFSET, 2)
    refresh_crc(buf)
    with pytest.raises(InvalidRecordException, match="records still remaining"):
        drain(DefaultRecordBatch(buf))


def test_more_records_claimed_than_present():
    buf = bytearray(build_batch([SimpleRecord(b"k", b"v", 0)]))
    struct.pack_into(">i", buf, RECORDS_COUNT_OFFSET, 2)
    struct.pack_into(">i", buf, LAST_OFFSET_DELTA_OFFSET, 1)
    refresh_crc(buf)
    with pytest.raises(InvalidRecordException):
        drain(DefaultRecordBatch(buf))


def test_unknown_codec_bits():
    buf = sample_batch()
    struct.pack_into(">h", buf, ATTRIBUTES_OFFSET, 6)
    refresh_crc(buf)
    with pytest.raises(CorruptRecordException, match="compression type id 6"):
        drain(DefaultRecordBatch(buf))


def _handcrafted(body: bytes, count: int, codec: int = 0) -> bytearray:
    header = struct.pack(">qiibIhiqqqhii", 0, RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(body), -1, 2, 0,
                         codec, max(count - 1, 0), 0, 0, -1, -1, -1, count)
    buf = bytearray(header + body)
    refresh_crc(buf)
    return buf


@pytest.mark.parametrize("body,message", [
    # record length 7, but its fields need 8 bytes
    (b"\x0e\x00\x00\x00\x02k\x02v\x00", "runs past the end"),
    # record length 8, fields take 7: one stray byte inside the record
    (b"\x10\x00\x00\x00\x01\x01\x00\x00\x00", "expected to read 8 bytes"),
    # key length -64
    (b"\x0c\x00\x00\x00\x7f\x01\x00", "key length -64"),
    # value length 5 but only 1 byte left in the record
    (b"\x0c\x00\x00\x00\x01\x0a\x00", "Value of 5 bytes"),
    # header count -1
    (b"\x0c\x00\x00\x00\x01\x01\x01", "number of record headers -1"),
    # header key length -2
    (b"\x12\x00\x00\x00\x01\x01\x02\x03\x00\x00", "negative header key size -2"),
    # header value length -3
    (b"\x12\x00\x00\x00\x01\x01\x02\x02a\x05", "header value length -3"),
    # timestamp delta varlong of 11 bytes
    (b"\x20\x00" + b"\xff" * 10 + b"\x01\x00\x01\x01\x00", "longer than 10 bytes"),
    # record length -64
    (b"\x7f" + b"\x00" * 12, "record size -64"),
    # two headers announced, bytes for one
    (b"\x12\x00\x00\x00\x01\x01\x04\x02a\x01", "headers cannot fit"),
])
def test_malformed_records_raise_invalid_record(body, message):
    with pytest.raises(InvalidRecordException, match=message):
        drain(DefaultRecordBatch(_handcrafted(body, 1)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=120), count=st.integers(0, 6), codec=st.sampled_from([0, 0, 1, 2, 3, 4]))
def test_random_record_bytes_never_crash(body, count, codec):
    buf = _handcrafted(body, count, codec)
    b = DefaultRecordBatch(buf)
    try:
        b.ensure_valid()
        drain(b)
    except RECORD_ERRORS:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kw=st.sampled_from(CORRUPTION_CASES), data=st.data())
def test_mutated_records_with_fixed_crc_never_crash(kw, data):
    """Bytes of the record area (or compressed payload) change and the CRC is recomputed,
    as a buggy client would send: decoding fails cleanly or yields records."""
    buf = sample_batch(**kw)
    n = data.draw(st.integers(1, 4))
    for _ in range(n):
        pos = data.draw(st.integers(RECORDS_OFFSET, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    refresh_crc(buf)
    b = DefaultRecordBatch(buf)
    try:
        b.ensure_valid()
        for r in drain(b):
            assert isinstance(r, Record)
    except RECORD_ERRORS:
        pass
