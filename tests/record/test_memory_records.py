"""MemoryRecords batch splitting and MemoryRecordsBuilder."""
import io
import os
import socket
import struct

import pytest

from kafka_py.clients.common.errors import CorruptRecordException
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    LENGTH_OFFSET,
    MAGIC_OFFSET,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.memory_records_builder import MemoryRecordsBuilder

RECORDS = [SimpleRecord(b"k%d" % i, b"v%d" % i, 1000 + i) for i in range(5)]


def three_batches() -> bytearray:
    return bytearray(
        build_batch(RECORDS[:2], base_offset=0)
        + build_batch(RECORDS[2:3], base_offset=2, compression=CompressionType.GZIP)
        + build_batch(RECORDS[3:], base_offset=3, compression=CompressionType.ZSTD)
    )


def test_batches_are_views_of_the_buffer():
    buf = three_batches()
    mr = MemoryRecords(buf)
    batches = list(mr.batches())
    assert [b.base_offset for b in batches] == [0, 2, 3]
    assert sum(b.size_in_bytes for b in batches) == mr.size_in_bytes == len(buf)
    for b in batches:
        b.ensure_valid()
        assert b.buffer.obj is buf
    # In-place assignment through a batch view lands in the shared buffer.
    batches[1].set_last_offset(500)
    assert list(MemoryRecords(buf).batches())[1].base_offset == 500
    assert [r.offset for r in mr.records()] == [0, 1, 500, 3, 4]
    assert mr.first_batch().base_offset == 0


def test_empty():
    assert list(MemoryRecords.EMPTY.batches()) == []
    assert MemoryRecords.EMPTY.size_in_bytes == 0
    assert MemoryRecords.EMPTY.first_batch() is None
    assert MemoryRecords.with_records([]) is MemoryRecords.EMPTY


def test_with_records():
    mr = MemoryRecords.with_records(RECORDS, base_offset=10, compression=CompressionType.LZ4,
                                    producer_id=1, producer_epoch=0, base_sequence=0)
    [b] = mr.batches()
    b.ensure_valid()
    assert (b.base_offset, b.record_count, b.compression_type) == (10, 5, CompressionType.LZ4)
    assert mr.buffer.readonly is False  # writable, so offsets can be assigned in place


def test_truncated_tail_strict_and_lenient():
    buf = three_batches()
    sizes = [b.size_in_bytes for b in MemoryRecords(buf).batches()]
    for cut in (1, 11, 12, 30, sizes[2] - 1):
        data = buf[: len(buf) - cut]
        with pytest.raises(CorruptRecordException, match="Truncated"):
            list(MemoryRecords(data).batches())
        lenient = list(MemoryRecords(data).batches(strict=False))
        assert [b.base_offset for b in lenient] == [0, 2]


def test_malformed_header_after_good_batches_raises_even_when_lenient():
    buf = three_batches()
    first = MemoryRecords(buf).first_batch().size_in_bytes
    struct.pack_into(">i", buf, first + LENGTH_OFFSET, 3)
    with pytest.raises(CorruptRecordException, match="minimum record overhead"):
        list(MemoryRecords(buf).batches(strict=False))


def test_a_magic_of_0_or_1_is_read_as_a_log_entry_of_that_format():
    """Magic 0 and 1 mark log entries of the old message formats (in logs whose
    message.format.version is below 0.11.0): a v2 batch whose magic byte says 1 is read as
    such an entry, whose CRC-32 over the bytes after it then fails."""
    buf = three_batches()
    buf[MAGIC_OFFSET] = 1
    first = next(MemoryRecords(buf).batches())
    assert first.magic == 1 and type(first).__name__ == "LegacyRecordBatch"
    assert not first.is_valid()
    with pytest.raises(CorruptRecordException):
        first.ensure_valid()


def test_valid_bytes_stops_at_first_bad_batch():
    buf = three_batches()
    sizes = [b.size_in_bytes for b in MemoryRecords(buf).batches()]
    assert MemoryRecords(buf).valid_bytes() == len(buf)
    buf[sizes[0] + 40] ^= 0xFF  # inside the CRC'd range of batch 2
    assert MemoryRecords(buf).valid_bytes() == sizes[0]


def test_write_fully_to_fd_file_and_socket(tmp_path):
    mr = MemoryRecords(three_batches())
    path = tmp_path / "out"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        assert mr.write_fully_to(fd) == mr.size_in_bytes
    finally:
        os.close(fd)
    assert path.read_bytes() == bytes(mr.buffer)
    bio = io.BytesIO()
    assert mr.write_fully_to(bio) == mr.size_in_bytes
    assert bio.getvalue() == bytes(mr.buffer)
    a, b = socket.socketpair()
    with a, b:
        assert mr.write_fully_to(a) == mr.size_in_bytes
        got = b""
        while len(got) < mr.size_in_bytes:
            got += b.recv(65536)
    assert got == bytes(mr.buffer)


# ---- MemoryRecordsBuilder ------------------------------------------------------------

@pytest.mark.parametrize("codec", list(CompressionType))
def test_builder_matches_build_batch(codec):
    builder = MemoryRecordsBuilder(codec, TimestampType.CREATE_TIME, base_offset=40,
                                   producer_id=8, producer_epoch=1, base_sequence=3)
    for r in RECORDS:
        builder.append(r.timestamp, r.key, r.value, r.headers)
    built = builder.build()
    expected = build_batch(RECORDS, base_offset=40, compression=codec, producer_id=8, producer_epoch=1,
                           base_sequence=3)
    assert bytes(built.buffer) == expected
    assert list(built.records()) == list(MemoryRecords(expected).records())
    assert builder.info().max_timestamp == 1004
    assert builder.info().shallow_offset_of_max_timestamp == 44
    assert builder.is_closed() and builder.is_full()
    with pytest.raises(RuntimeError):
        builder.append(1, b"k", b"v")


def test_builder_offsets_must_increase_and_gaps_are_kept():
    builder = MemoryRecordsBuilder(base_offset=100)
    builder.append_with_offset(100, 1, b"a", b"1")
    builder.append_with_offset(105, 2, b"b", b"2")
    with pytest.raises(ValueError, match="Offsets must increase"):
        builder.append_with_offset(105, 3, b"c", b"3")
    [b] = builder.build().batches()
    assert (b.base_offset, b.last_offset, b.record_count) == (100, 105, 2)
    assert [r.offset for r in b] == [100, 105]


def test_builder_log_append_time():
    builder = MemoryRecordsBuilder(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=77_000)
    builder.append(5, b"a", b"1")
    builder.append(9, b"b", b"2")
    b = builder.build().first_batch()
    b.ensure_valid()
    assert b.max_timestamp == 77_000 and [r.timestamp for r in b] == [77_000, 77_000]
    assert builder.info().max_timestamp == 77_000


def test_builder_write_limit():
    builder = MemoryRecordsBuilder(write_limit=200)
    assert builder.has_room_for(0, b"k", b"v" * 500)  # the first record always fits
    builder.append(0, b"k", b"v" * 500)
    assert builder.is_full()
    assert not builder.has_room_for(0, b"k", b"v")


def test_builder_control_records():
    builder = MemoryRecordsBuilder(producer_id=5, producer_epoch=0, is_transactional=True,
                                   is_control_batch=True, base_offset=9)
    marker = EndTransactionMarker(ControlRecordType.ABORT, 3)
    builder.append_end_txn_marker(123, marker)
    with pytest.raises(ValueError):
        builder.append(1, b"k", b"v")
    b = builder.build().first_batch()
    assert b.is_control_batch and b.is_transactional
    assert EndTransactionMarker.deserialize(next(iter(b))) == marker


def test_empty_builder_builds_empty_records():
    assert MemoryRecordsBuilder().build() is MemoryRecords.EMPTY
