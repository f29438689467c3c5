"""Down-conversion for Fetch v0-v3 (kafka_py/clients/common/record/records_util.py,
lazy_down_conversion_records.py): the compiled per-record step equals the Python one; a
LazyDownConversionRecords is framed as Kafka frames it (the stored size, or the first converted
batch when larger, or an overflow batch's room) and its send writes exactly that many bytes over
a real non-blocking socket, converting a chunk at a time; a slice several MB long arrives whole
and in order; control batches, zstd and a partial trailing batch are handled as Kafka handles them."""
from __future__ import annotations

import selectors
import socket
import struct
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.network.send import MultiRecordsSend
from kafka_py.clients.common.record import records_util
from kafka_py.clients.common.record.abstract_legacy_record_batch import legacy_batches
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import RECORD_BATCH_OVERHEAD, SimpleRecord, TimestampType, build_batch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.lazy_down_conversion_records import (
    MAX_READ_SIZE,
    MIN_OVERFLOW_MESSAGE_LENGTH,
    LazyDownConversionRecords,
    has_compatible_magic,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords

TP = TopicPartition("old", 0)
LEGACY_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]

records_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=300)),
              st.integers(min_value=-1, max_value=2**41),
              st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5))), max_size=2)),
    min_size=1, max_size=25)


@pytest.mark.skipif(records_util._compiled is None, reason="the compiled conversion was not built")
@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.tuples(records_strategy, st.sampled_from(LEGACY_CODECS),
                                  st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])),
                        min_size=1, max_size=3),
       base_offset=st.integers(min_value=0, max_value=2**40), skip=st.integers(min_value=0, max_value=30),
       to_magic=st.sampled_from([0, 1]))
def test_the_compiled_conversion_writes_the_bytes_the_python_one_writes(batches, base_offset, skip,
                                                                        to_magic) -> None:
    data = bytearray()
    offset = base_offset
    for records, codec, timestamp_type in batches:
        if codec is CompressionType.SNAPPY:
            data += _marker(offset)  # a control batch between the others: dropped
            offset += 1
        data += build_batch([SimpleRecord(k, v, ts, headers=h) for k, v, ts, h in records], base_offset=offset,
                            compression=codec, timestamp_type=timestamp_type,
                            log_append_time=1_700_000_000_000 if timestamp_type == TimestampType.LOG_APPEND_TIME
                            else None)
        offset += len(records)
    compiled = records_util.down_convert(MemoryRecords(data).batches(), to_magic, base_offset + skip)
    # whole runs of batches at once, as the lazy send converts a chunk
    compiled_runs, consumed = records_util.down_convert_buffer(bytes(data) + bytes(data[:30]), to_magic,
                                                               base_offset + skip)
    assert consumed == len(data)  # the partial batch after them left
    with pytest.MonkeyPatch.context() as m:
        m.setattr(records_util, "_compiled", None)
        python = records_util.down_convert(MemoryRecords(data).batches(), to_magic, base_offset + skip)
    assert compiled.records == python.records == compiled_runs.records
    assert (compiled.record_conversion_stats.num_records_converted
            == python.record_conversion_stats.num_records_converted
            == compiled_runs.record_conversion_stats.num_records_converted)
    for batch in legacy_batches(compiled.records):
        batch.ensure_valid()
        assert batch.magic == to_magic


def _batch(offset: int, count: int, value_size: int = 100, codec=CompressionType.NONE) -> bytes:
    return build_batch([SimpleRecord(b"key-%d" % (offset + i), b"%08d" % (offset + i) + b"v" * (value_size - 8),
                                     1_700_000_000_000 + offset + i) for i in range(count)],
                       base_offset=offset, compression=codec)


def _marker(offset: int) -> bytes:
    return bytes(MemoryRecords.with_end_transaction_marker(
        offset, 1_700_000_000_000, 0, 7, 0, EndTransactionMarker(ControlRecordType.COMMIT, 0)).buffer)


def _send_all(records: LazyDownConversionRecords, sndbuf: int = 8192) -> bytes:
    """The bytes records' send writes to a non-blocking socket with a small buffer, read on the
    other side by a thread: every partial write resumed where it stopped."""
    send = records.to_send()
    writer, reader = socket.socketpair()
    writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    writer.setblocking(False)
    received = bytearray()
    size = len(records)

    def read() -> None:
        while len(received) < size:
            data = reader.recv(65536)
            if not data:
                return
            received.extend(data)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    selector = selectors.DefaultSelector()
    selector.register(writer, selectors.EVENT_WRITE)
    try:
        written = 0
        for _ in range(1_000_000):
            if written >= size:
                break
            n = send.write_to(writer, written, size - written)
            written += n
            if n == 0:
                assert selector.select(10), "the reader stopped reading"
        assert written == size
        thread.join(30)
        assert not thread.is_alive()
    finally:
        selector.close()
        writer.close()
        reader.close()
    assert len(received) == size
    return bytes(received)


def _entries(data: bytes) -> tuple[list[tuple[int, bytes, bytes]], bytes]:
    """(offset, key, value) of every whole legacy message in ``data`` (a wrapper's inner ones
    included), and the bytes after the last whole entry."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        offset, length = struct.unpack_from(">qi", data, pos)
        if offset < 0 or pos + 12 + length > len(data):
            break
        for batch in legacy_batches(data[pos:pos + 12 + length]):
            batch.ensure_valid()
            out.extend((r.offset, r.key, r.value) for r in batch.records())
        pos += 12 + length
    return out, data[pos:]


def _file(tmp_path, *parts: bytes) -> FileRecords:
    records = FileRecords.open(tmp_path / "00000000000000000000.log")
    for part in parts:
        records.append(MemoryRecords(part))
    return records


def test_a_slice_of_several_megabytes_arrives_whole_and_in_order_a_chunk_at_a_time(tmp_path) -> None:
    """5.6 MB of 16 KiB batches (a mix of codecs), read from a file slice and written through a
    socket with an 8 KiB buffer: every record once, in offset order, from the fetch offset (the
    records before it in its uncompressed batch left out), and no chunk converted from more than
    MAX_READ_SIZE stored bytes plus one batch."""
    parts = []
    offset = 0
    codecs = [CompressionType.NONE, CompressionType.LZ4, CompressionType.NONE, CompressionType.SNAPPY]
    while sum(map(len, parts)) < 5_600_000:
        parts.append(_batch(offset, 140, 100, codecs[len(parts) % len(codecs)]))
        offset += 140
    segment = _file(tmp_path, *parts)
    try:
        fetch_offset = 3
        records = LazyDownConversionRecords(TP, segment.slice(0, segment.size_in_bytes()), 1, fetch_offset)
        chunk_sizes = [chunk.record_conversion_stats.temporary_memory_bytes for chunk in
                       LazyDownConversionRecords(TP, segment, 1, fetch_offset).iterator(MAX_READ_SIZE)]
        assert len(chunk_sizes) > 40
        # stored bytes plus a compressed batch's records decompressed
        assert max(chunk_sizes) <= 2 * (MAX_READ_SIZE + max(map(len, parts)))
        assert len(records) == segment.size_in_bytes()
        data = _send_all(records)
        got, _tail = _entries(data)
        offsets = [o for o, _, _ in got]
        assert offsets == sorted(set(offsets))
        assert offsets[0] == fetch_offset
        assert offsets == list(range(fetch_offset, fetch_offset + len(offsets)))
        # v1 messages of 100-byte values outgrow the v2 batches they came from: the answer is
        # cut at the stored size and the rest is for the next fetch
        assert 0.6 * offset < len(offsets) < offset
        assert all(value[:8] == b"%08d" % o and key == b"key-%d" % o for o, key, value in got)
    finally:
        segment.close_handlers()


def test_the_first_converted_batch_is_framed_whole_when_it_outgrows_the_stored_bytes() -> None:
    """One batch of empty records: 7 bytes a record in v2, 26 in format 0 (plus 12 of log
    overhead): the answer is framed for the whole converted batch, not the stored size."""
    stored = build_batch([SimpleRecord(None, b"", 1) for _ in range(50)], base_offset=10)
    records = LazyDownConversionRecords(TP, MemoryRecords(stored), 0, 10)
    assert len(records) > len(stored)
    data = _send_all(records)
    got, tail = _entries(data)
    assert [o for o, _, _ in got] == list(range(10, 60)) and tail == b""


def test_control_batches_only_frame_an_overflow_batch_and_are_not_converted_twice() -> None:
    """A slice of a commit marker alone is answered with an overflow entry (offset -1, a length
    past the end); a slice starting with one converts the records after it once."""
    only_marker = LazyDownConversionRecords(TP, MemoryRecords(_marker(5)), 1, 5)
    assert len(only_marker) == MIN_OVERFLOW_MESSAGE_LENGTH
    data = _send_all(only_marker)
    assert struct.unpack(">qi", data) == (-1, RECORD_BATCH_OVERHEAD)

    stored = _marker(5) + _batch(6, 3) + _marker(9) + _batch(10, 2)
    records = LazyDownConversionRecords(TP, MemoryRecords(stored), 1, 5)
    got, tail = _entries(_send_all(records))
    assert [o for o, _, _ in got] == [6, 7, 8, 10, 11]
    # what the conversion did not fill: an overflow entry no consumer reads
    assert struct.unpack_from(">q", tail)[0] == -1 and struct.unpack_from(">i", tail, 8)[0] > len(tail) - 12


def test_zstd_first_is_refused_and_zstd_later_ends_the_records() -> None:
    zstd = _batch(3, 3, codec=CompressionType.ZSTD)
    with pytest.raises(UnsupportedCompressionTypeException):
        LazyDownConversionRecords(TP, MemoryRecords(zstd), 1, 3)
    records = LazyDownConversionRecords(TP, MemoryRecords(_batch(0, 3) + zstd + _batch(6, 3)), 1, 0)
    got, tail = _entries(_send_all(records))
    assert [o for o, _, _ in got] == [0, 1, 2]
    assert struct.unpack_from(">q", tail)[0] == -1


def test_a_partial_trailing_batch_is_not_sent_and_the_records_before_it_are(tmp_path) -> None:
    first, second = _batch(0, 5), _batch(5, 5)
    segment = _file(tmp_path, first, second)
    try:
        cut = segment.slice(0, len(first) + len(second) // 2)
        got, _tail = _entries(_send_all(LazyDownConversionRecords(TP, cut, 1, 0)))
        assert [o for o, _, _ in got] == [0, 1, 2, 3, 4]
    finally:
        segment.close_handlers()


def test_compatible_magic_is_told_by_the_batches() -> None:
    legacy = records_util.down_convert(MemoryRecords(_batch(0, 4) + _batch(4, 4, codec=CompressionType.GZIP)
                                                     ).batches(), 1, 0).records
    assert has_compatible_magic(legacy, 1)
    assert not has_compatible_magic(legacy, 0)
    assert not has_compatible_magic(MemoryRecords(_batch(0, 4)), 1)
    assert has_compatible_magic(MemoryRecords(b""), 0)
    # format 1 entries read by a format 0 consumer are converted record by record
    as_v0 = _entries(_send_all(LazyDownConversionRecords(TP, legacy, 0, 0)))[0]
    assert [o for o, _, _ in as_v0] == list(range(8))


def test_compatible_magic_walks_a_legacy_file_a_window_at_a_time(tmp_path) -> None:
    """A format 1 log of ~300 KiB (more than one MAX_READ_SIZE window of entries) is compatible
    with format 1 whatever window the entries are cut at; one v2 batch after them, or a v2 batch
    cut short at the slice's end, is found or left out as Kafka's batch iteration would."""
    stored = b"".join(_batch(offset, 100) for offset in range(0, 2_000, 100))
    legacy = records_util.down_convert(MemoryRecords(stored).batches(), 1, 0).records
    assert len(legacy) > 2 * MAX_READ_SIZE
    newer = _batch(2_000, 5)
    segment = _file(tmp_path, legacy, newer)
    try:
        assert has_compatible_magic(segment.slice(0, len(legacy)), 1)
        assert not has_compatible_magic(segment.slice(0, len(legacy)), 0)
        assert not has_compatible_magic(segment, 1)
        assert has_compatible_magic(segment.slice(0, len(legacy) + len(newer) - 1), 1)  # the v2 batch cut
        assert not has_compatible_magic(segment.slice(len(legacy), len(newer)), 1)
        assert has_compatible_magic(segment.slice(len(legacy), len(newer) - 1), 1)
    finally:
        segment.close_handlers()


entry_strategy = st.lists(st.tuples(st.integers(min_value=-1, max_value=2**62), st.integers(min_value=0, max_value=2),
                                    st.integers(min_value=0, max_value=60)), max_size=12)


@pytest.mark.skipif(records_util._compiled is None, reason="the compiled conversion was not built")
@settings(max_examples=300, deadline=None)
@given(entries=entry_strategy, cut=st.integers(min_value=0, max_value=80), stop_above=st.integers(min_value=0, max_value=2),
       short=st.booleans())
def test_the_compiled_entry_walk_finds_what_the_python_one_finds(entries, cut, stop_above, short) -> None:
    """scan_entries over headers of any magic, a buffer cut anywhere (a partial last entry) and an
    entry too short to be a message (corrupt): the compiled walk and the Python one agree on the
    bytes, entries, highest magic and last offset, and both raise at the same position."""
    data = bytearray()
    for offset, magic, body in entries:
        data += struct.pack(">qi", offset, 14 + body) + bytes(4) + bytes([magic]) + bytes(9 + body)
    if short and entries:
        struct.pack_into(">i", data, len(data) - (12 + 14 + entries[-1][2]) + 8, 13)
    data = bytes(data[:max(len(data) - cut, 0)])

    def walk():
        try:
            scan = records_util.scan_entries(data, stop_above)
            return (scan.size_in_bytes, scan.entries, scan.max_magic, scan.last_offset)
        except CorruptRecordException as e:
            return str(e)

    compiled = walk()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(records_util, "_compiled", None)
        python = walk()
    assert compiled == python
    if isinstance(python, tuple) and python[1]:
        size, count, max_magic, last_offset = python
        walked = entries[:count]
        assert size == sum(12 + 14 + body for _, _, body in walked)
        assert max_magic == max(magic for _, magic, _ in walked)
        assert last_offset == walked[-1][0]


def test_a_multi_records_send_frames_converted_records_between_its_byte_chunks() -> None:
    """A response's chunks around a LazyDownConversionRecords: the send writes the header bytes,
    the converted records (exactly len() of them) and the bytes after, and reports the
    partition's conversion statistics."""
    stored = _batch(0, 30) + _batch(30, 30, codec=CompressionType.GZIP)
    records = LazyDownConversionRecords(TP, MemoryRecords(stored), 1, 0)
    head, after = b"H" * 9, b"T" * 5
    send = MultiRecordsSend([head, records, after])
    assert send.size == len(head) + len(records) + len(after)
    writer, reader = socket.socketpair()
    try:
        writer.setblocking(False)
        for _ in range(10_000):
            if send.completed:
                break
            send.write_to(writer)
        assert send.completed
        writer.shutdown(socket.SHUT_WR)
        received = bytearray()
        while True:
            data = reader.recv(65536)
            if not data:
                break
            received += data
    finally:
        writer.close()
        reader.close()
    assert bytes(received[:9]) == head and bytes(received[-5:]) == after
    got, _tail = _entries(bytes(received[9:-5]))
    # the first batch at least; the uncompressed one grows in format 1, so the wrapper after
    # it is cut where the stored size runs out
    offsets = [o for o, _, _ in got]
    assert len(offsets) >= 30 and offsets == list(range(len(offsets)))
    stats = send.record_conversion_stats()
    assert list(stats) == [TP] and stats[TP].num_records_converted >= len(offsets)
    assert stats[TP].temporary_memory_bytes >= len(_batch(0, 30))


def test_a_segment_cut_shorter_while_the_answer_is_written_ends_it_with_an_overflow_batch(tmp_path) -> None:
    """A follower's truncation can cut the file under a send: the records written are the
    batches still there, and the framed size is filled with an overflow entry."""
    first, second, third = _batch(0, 30), _batch(30, 30), _batch(60, 30)
    segment = _file(tmp_path, first, second, third)
    try:
        records = LazyDownConversionRecords(TP, segment.slice(0, segment.size_in_bytes()), 1, 0)
        segment.truncate_to(len(first) + len(second) // 2)
        data = _send_all(records)
        got, tail = _entries(data)
        assert len(data) == len(records)
        assert [o for o, _, _ in got] == list(range(len(got))) and 0 < len(got) <= 30
        assert struct.unpack_from(">q", tail)[0] == -1
    finally:
        segment.close_handlers()
