"""FileRecords on real files: append, slices, searches, truncation, lifecycle,
and sendfile transfers including partial writes on non-blocking sockets."""
import os
import selectors
import socket
import struct
import threading

import pytest

from kafka_py.clients.common.errors import CorruptRecordException, KafkaException
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    LENGTH_OFFSET,
    MAGIC_OFFSET,
    SimpleRecord,
    build_batch,
)
from kafka_py.clients.common.record.file_records import (
    ClosedChannelException,
    FileRecords,
    LogOffsetPosition,
    TimestampAndOffset,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords


def batch_bytes(base_offset, n=3, ts=1000, epoch=-1, codec=CompressionType.NONE, value_size=20):
    records = [SimpleRecord(b"k%d" % (base_offset + i), bytes([65 + i % 26]) * value_size, ts + i)
               for i in range(n)]
    return build_batch(records, base_offset=base_offset, partition_leader_epoch=epoch, compression=codec)


@pytest.fixture
def segment(tmp_path):
    """Five batches at offsets 0, 3, 6, 9, 12 (three records each), timestamps rising by batch."""
    fr = FileRecords.open(tmp_path / "00000000000000000000.log")
    parts = []
    for i in range(5):
        data = batch_bytes(i * 3, ts=10_000 + 100 * i, epoch=i,
                           codec=CompressionType.GZIP if i == 2 else CompressionType.NONE)
        parts.append(data)
        assert fr.append(MemoryRecords(data)) == len(data)
    yield fr, parts
    fr.close_handlers()


def positions(parts):
    out, pos = [], 0
    for p in parts:
        out.append(pos)
        pos += len(p)
    return out


def test_append_and_iterate(segment, tmp_path):
    fr, parts = segment
    assert fr.size_in_bytes() == sum(map(len, parts))
    assert (tmp_path / "00000000000000000000.log").read_bytes() == b"".join(parts)
    assert isinstance(fr.file, str) and fr.file.endswith(".log")
    batches = list(fr.batches())
    assert [b.position for b in batches] == positions(parts)
    assert [b.base_offset for b in batches] == [0, 3, 6, 9, 12]
    assert [b.last_offset for b in batches] == [2, 5, 8, 11, 14]
    assert [b.next_offset for b in batches] == [3, 6, 9, 12, 15]
    assert [b.size_in_bytes for b in batches] == [len(p) for p in parts]
    assert [b.partition_leader_epoch for b in batches] == [0, 1, 2, 3, 4]
    assert [b.max_timestamp for b in batches] == [10_002, 10_102, 10_202, 10_302, 10_402]
    assert [b.compression_type for b in batches][2] is CompressionType.GZIP
    for b in batches:
        assert b.record_count == 3 and b.magic == 2
        assert b.is_valid()
        b.ensure_valid()
        assert bytes(b.load().buffer) == parts[batches.index(b)]
    assert [r.offset for r in batches[2]] == [6, 7, 8]
    assert [b.base_offset for b in fr.batches_from(positions(parts)[3])] == [9, 12]


def test_reopen_existing_file(segment):
    fr, parts = segment
    fr.flush()
    again = FileRecords.open(fr.file, file_already_exists=True)
    try:
        assert again.size_in_bytes() == fr.size_in_bytes()
        assert [b.base_offset for b in again.batches()] == [0, 3, 6, 9, 12]
    finally:
        again.close_handlers()
    ro = FileRecords.open(fr.file, file_already_exists=True, mutable=False)
    try:
        with pytest.raises(OSError):
            ro.append(MemoryRecords(batch_bytes(15)))
        assert ro.read_bytes(0, 20) == parts[0][:20]
    finally:
        ro.close_handlers()


def test_slices(segment):
    fr, parts = segment
    pos = positions(parts)
    s = fr.slice(pos[1], len(parts[1]) + len(parts[2]))
    assert (s.start, s.size_in_bytes(), s.end) == (pos[1], len(parts[1]) + len(parts[2]), pos[3])
    assert [b.base_offset for b in s.batches()] == [3, 6]
    assert [b.position for b in s.batches()] == [pos[1], pos[2]]  # positions stay absolute
    assert s.read_bytes(0, s.size_in_bytes()) == parts[1] + parts[2]
    # A slice ending inside a batch yields only the complete ones.
    cut = fr.slice(pos[1], len(parts[1]) + 30)
    assert [b.base_offset for b in cut.batches()] == [3]
    # Clipped to the end; slice of a slice is relative to the outer slice.
    tail = fr.slice(pos[3], 10**9)
    assert tail.size_in_bytes() == len(parts[3]) + len(parts[4])
    inner = s.slice(len(parts[1]), 10**6)
    assert (inner.start, inner.size_in_bytes()) == (pos[2], len(parts[2]))
    # A slice keeps its size while the file grows.
    fr.append(MemoryRecords(batch_bytes(15)))
    assert tail.size_in_bytes() == len(parts[3]) + len(parts[4])
    assert [b.base_offset for b in tail.batches()] == [9, 12]
    assert fr.slice(fr.size_in_bytes(), 100).size_in_bytes() == 0
    with pytest.raises(ValueError):
        fr.slice(-1, 10)
    with pytest.raises(ValueError):
        fr.slice(fr.size_in_bytes() + 1, 10)
    with pytest.raises(ValueError):
        fr.slice(0, -1)
    with pytest.raises(ValueError):
        s.append(MemoryRecords(batch_bytes(99)))


def test_search_for_offset_with_size(segment):
    fr, parts = segment
    pos = positions(parts)
    for target in range(15):
        i = target // 3
        assert fr.search_for_offset_with_size(target, 0) == LogOffsetPosition(i * 3 + 2, pos[i], len(parts[i]))
    assert fr.search_for_offset_with_size(15, 0) is None
    # Starting past the batch holding the target gives the next batch, as Kafka does.
    assert fr.search_for_offset_with_size(1, pos[2]) == LogOffsetPosition(8, pos[2], len(parts[2]))


def test_search_for_timestamp(segment):
    fr, parts = segment
    assert fr.search_for_timestamp(0, 0, 0) == TimestampAndOffset(10_000, 0, 0)
    assert fr.search_for_timestamp(10_201, 0, 0) == TimestampAndOffset(10_201, 7, 2)
    assert fr.search_for_timestamp(10_201, 0, 8) == TimestampAndOffset(10_202, 8, 2)
    assert fr.search_for_timestamp(10_201, positions(parts)[3], 0) == TimestampAndOffset(10_300, 9, 3)
    assert fr.search_for_timestamp(10_403, 0, 0) is None


def test_search_for_timestamp_leader_epoch(tmp_path):
    fr = FileRecords.open(tmp_path / "a.log")
    try:
        fr.append(MemoryRecords(batch_bytes(0, epoch=-1)))
        fr.append(MemoryRecords(batch_bytes(3, ts=5000, epoch=0)))
        assert fr.search_for_timestamp(1000, 0, 0) == TimestampAndOffset(1000, 0, None)
        assert fr.search_for_timestamp(5000, 0, 0) == TimestampAndOffset(5000, 3, 0)
    finally:
        fr.close_handlers()


def test_largest_timestamp_after(segment):
    fr, parts = segment
    assert fr.largest_timestamp_after(0) == TimestampAndOffset(10_402, 14, 4)
    empty = fr.slice(fr.size_in_bytes(), 0)
    assert empty.largest_timestamp_after(empty.start) == TimestampAndOffset(-1, -1, None)


def test_truncate_to(segment, tmp_path):
    fr, parts = segment
    pos = positions(parts)
    total = fr.size_in_bytes()
    assert fr.truncate_to(pos[3]) == total - pos[3]
    assert fr.size_in_bytes() == pos[3] == os.path.getsize(fr.file)
    assert [b.base_offset for b in fr.batches()] == [0, 3, 6]
    assert fr.truncate_to(pos[3]) == 0
    with pytest.raises(KafkaException):
        fr.truncate_to(pos[3] + 1)
    with pytest.raises(KafkaException):
        fr.truncate_to(-1)
    # Appends continue at the new end.
    fr.append(MemoryRecords(batch_bytes(9)))
    assert [b.base_offset for b in fr.batches()] == [0, 3, 6, 9]


def test_preallocated_segment(tmp_path):
    path = tmp_path / "p.log"
    fr = FileRecords.open(path, file_already_exists=False, init_file_size=1 << 20, preallocate=True)
    assert os.path.getsize(path) == 1 << 20
    assert fr.size_in_bytes() == 0
    data = batch_bytes(0)
    fr.append(MemoryRecords(data))
    assert fr.size_in_bytes() == len(data)
    assert [b.base_offset for b in fr.batches()] == [0]  # the zeros after the data are not read
    fr.close()  # trims the preallocated tail
    assert os.path.getsize(path) == len(data)
    with pytest.raises(ClosedChannelException):
        list(fr.batches())


def test_trim(tmp_path):
    path = tmp_path / "t.log"
    fr = FileRecords.open(path, init_file_size=4096, preallocate=True)
    try:
        fr.append(MemoryRecords(batch_bytes(0)))
        fr.trim()
        assert os.path.getsize(path) == fr.size_in_bytes()
    finally:
        fr.close_handlers()


def test_rename_delete_and_parent_dir(segment, tmp_path):
    fr, parts = segment
    new = str(tmp_path / "00000000000000000000.log.deleted")
    fr.rename_to(new)
    assert fr.file == new and os.path.exists(new)
    assert not os.path.exists(tmp_path / "00000000000000000000.log")
    fr.append(MemoryRecords(batch_bytes(15)))  # the fd follows the file
    assert [b.base_offset for b in FileRecords.open(new, True).batches()][-1] == 15
    fr.update_parent_dir(str(tmp_path / "elsewhere"))
    assert fr.file == str(tmp_path / "elsewhere" / "00000000000000000000.log.deleted")
    fr.set_file(new)
    assert fr.delete_if_exists() is True
    assert not os.path.exists(new)
    assert fr.delete_if_exists() is False


def test_trailing_partial_batch_is_not_returned(segment):
    fr, parts = segment
    partial = batch_bytes(15)[:40]
    fr.append(MemoryRecords(partial))
    assert [b.base_offset for b in fr.batches()] == [0, 3, 6, 9, 12]
    # Fewer bytes than a header up to the magic byte are ignored too.
    fr.truncate_to(sum(map(len, parts)))
    fr.append(MemoryRecords(b"\x00" * 16))
    assert [b.base_offset for b in fr.batches()] == [0, 3, 6, 9, 12]


def test_corrupt_header_in_file_raises(segment):
    fr, parts = segment
    pos = positions(parts)
    fd = fr.channel_fd
    os.pwrite(fd, struct.pack(">i", 2), pos[2] + LENGTH_OFFSET)
    it = fr.batches()
    assert [next(it).base_offset, next(it).base_offset] == [0, 3]
    with pytest.raises(CorruptRecordException, match="smaller than minimum record overhead"):
        next(it)
    os.pwrite(fd, struct.pack(">i", len(parts[2]) - 12), pos[2] + LENGTH_OFFSET)
    os.pwrite(fd, b"\x03", pos[2] + MAGIC_OFFSET)
    with pytest.raises(CorruptRecordException, match="magic 3"):
        list(fr.batches())
    # magic 1 is a log entry of message format v1, whose CRC-32 this v2 batch's bytes fail
    os.pwrite(fd, b"\x01", pos[2] + MAGIC_OFFSET)
    third = list(fr.batches())[2]
    assert third.magic == 1 and third.last_offset == 6 and not third.is_valid()
    with pytest.raises(CorruptRecordException):
        third.ensure_valid()


def test_corrupt_body_detected_by_ensure_valid(segment):
    fr, parts = segment
    pos = positions(parts)
    os.pwrite(fr.channel_fd, b"\xff", pos[1] + 70)
    batches = list(fr.batches())
    assert [b.is_valid() for b in batches] == [True, False, True, True, True]
    with pytest.raises(CorruptRecordException, match="crc"):
        batches[1].ensure_valid()


def test_read_into(segment):
    fr, parts = segment
    buf = bytearray(len(parts[0]) + len(parts[1]) + 10)
    mr = fr.read_into(buf, 0)
    assert mr.size_in_bytes == len(buf)
    assert [b.base_offset for b in mr.batches(strict=False)] == [0, 3]
    end = fr.read_into(bytearray(100_000), positions(parts)[4])
    assert bytes(end.buffer) == parts[4]


# ---- sendfile ---------------------------------------------------------------------------

def recv_exactly(sock, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            break
        got += k
    return bytes(buf[:got])


def test_write_to_tcp_socket(segment):
    fr, parts = segment
    pos = positions(parts)
    s = fr.slice(pos[1], len(parts[1]) + len(parts[2]))
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname()) as out:
        peer, _ = server.accept()
        with peer:
            sent = 0
            while sent < s.size_in_bytes():
                sent += s.write_to(out, sent, s.size_in_bytes() - sent)
            assert recv_exactly(peer, sent) == parts[1] + parts[2]
            # Asking for more than the slice holds sends only the slice; offset == size sends nothing.
            assert s.write_to(out, 10, 10**9) == s.size_in_bytes() - 10
            assert recv_exactly(peer, s.size_in_bytes() - 10) == (parts[1] + parts[2])[10:]
            assert s.write_to(out, s.size_in_bytes(), 100) == 0
    with pytest.raises(KafkaException, match="out of range"):
        s.write_to(0, s.size_in_bytes() + 1, 10)


def test_partial_writes_resume_on_non_blocking_socket(tmp_path):
    fr = FileRecords.open(tmp_path / "big.log")
    try:
        offset = 0
        while fr.size_in_bytes() < 4 * 1024 * 1024:
            fr.append(MemoryRecords(batch_bytes(offset, n=50, value_size=2000)))
            offset += 50
        expected = (tmp_path / "big.log").read_bytes()
        view = fr.slice(1000, fr.size_in_bytes() - 2000)  # not batch aligned on purpose
        want = view.size_in_bytes()

        sender, receiver = socket.socketpair()
        with sender, receiver:
            sender.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
            receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            sender.setblocking(False)

            calls = []
            sent = 0
            # No reader yet: the socket buffer fills and sendfile stops short, then returns 0.
            while True:
                n = view.write_to(sender, sent, want - sent)
                calls.append(n)
                if n == 0:
                    break
                sent += n
            assert 0 < sent < want
            assert calls[-1] == 0

            received = bytearray()
            done = threading.Event()

            def slow_reader():
                # Small reads so the writer keeps finding a full buffer.
                while len(received) < want:
                    chunk = receiver.recv(8192)
                    if not chunk:
                        break
                    received.extend(chunk)
                done.set()

            reader = threading.Thread(target=slow_reader, daemon=True)
            reader.start()
            with selectors.DefaultSelector() as selector:
                selector.register(sender, selectors.EVENT_WRITE)
                while sent < want:
                    assert selector.select(10), "socket never became writable"
                    n = view.write_to(sender, sent, want - sent)
                    calls.append(n)
                    sent += n
            assert done.wait(10)
            reader.join(10)
        assert sent == want
        assert bytes(received) == expected[1000:1000 + want]
        assert len([n for n in calls if n > 0]) > 2  # the transfer really came in pieces
    finally:
        fr.close_handlers()


def test_write_to_detects_truncation_under_it(tmp_path):
    fr = FileRecords.open(tmp_path / "x.log")
    fr.append(MemoryRecords(batch_bytes(0, n=20)))
    view = fr.slice(0, fr.size_in_bytes())
    fr.truncate_to(10)
    a, b = socket.socketpair()
    with a, b, pytest.raises(KafkaException, match="truncated"):
        view.write_to(a, 10, 100)
    fr.close_handlers()


def test_close_waits_for_users_of_the_descriptor(tmp_path):
    fr = FileRecords.open(tmp_path / "c.log")
    fr.append(MemoryRecords(batch_bytes(0)))
    fd = fr._channel.acquire()  # as a sendfile in another thread would hold it
    fr.close_handlers()
    os.fstat(fd)  # still open: the in-flight user keeps it
    with pytest.raises(ClosedChannelException):
        fr.read_bytes(0, 10)
    fr._channel.release()
    with pytest.raises(OSError):
        os.fstat(fd)
