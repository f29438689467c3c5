"""Port of clients/src/main/java/org/apache/kafka/common/record/FileRecords.java
and FileLogInputStream.java (FileChannelRecordBatch, LegacyFileChannelRecordBatch).

A FileRecords is a segment's ``.log`` file, or a slice ``[start, end)`` of it
that shares the file descriptor. Batch headers are read with ``os.pread`` (no
shared file position, so any number of threads may read at once) and a fetch
sends file bytes to the socket with ``os.sendfile``, Kafka's zero-copy
``FileChannel.transferTo``: the bytes never enter Python.

The descriptor is reference counted: ``close()`` while another thread is inside
``os.sendfile``/``os.pread`` on it defers the real ``os.close`` until that call
returns. Without this a closed descriptor number could be reused by the next
``open()`` and a fetch would stream bytes of an unrelated file to a client.
"""
from __future__ import annotations

import errno
import logging
import os
import struct
import threading
from dataclasses import dataclass
from typing import Iterator, Optional

from kafka_py.clients.common.errors import CorruptRecordException, KafkaException
from kafka_py.clients.common.record.abstract_legacy_record_batch import LegacyRecordBatch
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CURRENT_MAGIC_VALUE,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    DefaultRecordBatch,
    Record,
    TimestampType,
    increment_sequence,
)
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.tuning.prefault_mark import NO_PREFAULT_MARK
from kafka_py.core.utils.java_limits import INT_MAX

logger = logging.getLogger(__name__)

# is_zero_filled_from reads data regions in chunks of this size.
_ZERO_CHECK_CHUNK = 1 << 20
_SEEK_DATA: Optional[int] = getattr(os, "SEEK_DATA", None)
_HEADER = struct.Struct(">qiibIhiqqqhii")
# a v0/v1 log entry's offset, size, crc, magic, attributes and (v1 only) timestamp
_LEGACY_HEADER = struct.Struct(">qiIbbq")
_unpack_i32 = struct.Struct(">i").unpack_from


class ClosedChannelException(OSError):
    """The FileRecords' descriptor was closed (Java's ClosedChannelException)."""


@dataclass(frozen=True, slots=True)
class LogOffsetPosition:
    offset: int
    position: int
    size: int


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    timestamp: int
    offset: int
    leader_epoch: Optional[int] = None


def _maybe_leader_epoch(epoch: int) -> Optional[int]:
    return None if epoch == NO_PARTITION_LEADER_EPOCH else epoch


class _FileChannel:
    """An fd shared by a FileRecords and its slices; closed after its last user."""

    __slots__ = ("fd", "_lock", "_users", "_closing", "_closed")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()
        self._users = 0
        self._closing = False
        self._closed = False

    def acquire(self) -> int:
        with self._lock:
            if self._closing:
                raise ClosedChannelException(f"File descriptor {self.fd} is closed")
            self._users += 1
            return self.fd

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._closing and self._users == 0 and not self._closed:
                self._closed = True
                os.close(self.fd)

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            if self._users == 0:
                self._closed = True
                os.close(self.fd)

    @property
    def is_open(self) -> bool:
        return not self._closing

    def size(self) -> int:
        fd = self.acquire()
        try:
            return os.fstat(fd).st_size
        finally:
            self.release()


class FileChannelRecordBatch:
    """A batch in a file, known by its header (one 61-byte pread); the rest is read on demand."""

    __slots__ = ("_file_records", "position", "_h")

    def __init__(self, file_records: "FileRecords", position: int, header: tuple) -> None:
        self._file_records = file_records
        self.position = position
        self._h = header

    # header tuple order: base_offset, length, ple, magic, crc, attributes,
    # last_offset_delta, base_ts, max_ts, producer_id, producer_epoch, base_seq, count
    @property
    def base_offset(self) -> int:
        return self._h[0]

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + self._h[1]

    @property
    def partition_leader_epoch(self) -> int:
        return self._h[2]

    @property
    def magic(self) -> int:
        return self._h[3]

    @property
    def checksum(self) -> int:
        return self._h[4]

    @property
    def attributes(self) -> int:
        return self._h[5]

    @property
    def last_offset_delta(self) -> int:
        return self._h[6]

    @property
    def last_offset(self) -> int:
        return self._h[0] + self._h[6]

    @property
    def next_offset(self) -> int:
        return self._h[0] + self._h[6] + 1

    @property
    def base_timestamp(self) -> int:
        return self._h[7]

    @property
    def max_timestamp(self) -> int:
        return self._h[8]

    @property
    def producer_id(self) -> int:
        return self._h[9]

    @property
    def has_producer_id(self) -> bool:
        return self._h[9] > NO_PRODUCER_ID

    @property
    def producer_epoch(self) -> int:
        return self._h[10]

    @property
    def base_sequence(self) -> int:
        return self._h[11]

    @property
    def last_sequence(self) -> int:
        base = self._h[11]
        if base == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(base, self._h[6])

    @property
    def record_count(self) -> int:
        return self._h[12]

    @property
    def is_transactional(self) -> bool:
        return bool(self._h[5] & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self._h[5] & CONTROL_FLAG_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self._h[5] & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self._h[5] & COMPRESSION_CODEC_MASK)

    @property
    def is_compressed(self) -> bool:
        return bool(self._h[5] & COMPRESSION_CODEC_MASK)

    def load(self) -> DefaultRecordBatch:
        """Read the whole batch into memory."""
        size = self.size_in_bytes
        buf = bytearray(size)
        got = self._file_records._pread_into(buf, self.position)
        if got < size:
            raise CorruptRecordException(
                f"Could not read the full batch at position {self.position} of {self._file_records.file}: "
                f"expected {size} bytes, read {got}"
            )
        return DefaultRecordBatch(buf)

    def is_valid(self) -> bool:
        try:
            return self.load().is_valid()
        except CorruptRecordException:
            return False

    def ensure_valid(self) -> None:
        self.load().ensure_valid()

    def records(self) -> Iterator[Record]:
        return self.load().records()

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def write_to(self, sock, offset: int = 0, length: Optional[int] = None) -> int:
        """sendfile this batch's bytes (from ``offset`` within it) to ``sock``."""
        size = self.size_in_bytes
        if length is None:
            length = size - offset
        return self._file_records._sendfile(sock, self.position + offset, min(length, size - offset))

    def __repr__(self) -> str:
        return (
            f"FileChannelRecordBatch(magic={self.magic}, offsets=[{self.base_offset}, {self.last_offset}], "
            f"position={self.position}, size={self.size_in_bytes})"
        )


class LegacyFileChannelRecordBatch:
    """A log entry of message format v0 or v1 in a file (Kafka's LegacyFileChannelRecordBatch):
    its offset, size, magic, attributes and v1 timestamp come from one pread of its header; a
    wrapper's inner messages (and so its first offset and count) are read on demand."""

    __slots__ = ("_file_records", "position", "_h")

    def __init__(self, file_records: "FileRecords", position: int, header: tuple) -> None:
        self._file_records = file_records
        self.position = position
        self._h = header

    # header tuple order: offset, size, crc, magic, attributes, timestamp (v1)
    @property
    def base_offset(self) -> int:
        """The first inner offset of a wrapper (decompressing it), else the entry's offset."""
        if not self.is_compressed:
            return self._h[0]
        return self.load().base_offset

    @property
    def last_offset(self) -> int:
        return self._h[0]

    @property
    def next_offset(self) -> int:
        return self._h[0] + 1

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + self._h[1]

    @property
    def magic(self) -> int:
        return self._h[3]

    @property
    def checksum(self) -> int:
        return self._h[2]

    @property
    def attributes(self) -> int:
        return self._h[4] & 0xFF

    @property
    def max_timestamp(self) -> int:
        return NO_TIMESTAMP if self._h[3] == MAGIC_VALUE_V0 else self._h[5]

    @property
    def timestamp_type(self) -> TimestampType:
        if self._h[3] == MAGIC_VALUE_V0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self._h[4] & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType.for_id(self._h[4] & COMPRESSION_CODEC_MASK)

    @property
    def is_compressed(self) -> bool:
        return bool(self._h[4] & COMPRESSION_CODEC_MASK)

    @property
    def record_count(self) -> int:
        return self.load().record_count if self.is_compressed else 1

    # what a v2 batch knows and a legacy one cannot say
    partition_leader_epoch = NO_PARTITION_LEADER_EPOCH
    producer_id = NO_PRODUCER_ID
    has_producer_id = False
    producer_epoch = NO_PRODUCER_EPOCH
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    is_transactional = False
    is_control_batch = False

    def load(self) -> LegacyRecordBatch:
        """Read the whole entry into memory."""
        size = self.size_in_bytes
        buf = bytearray(size)
        got = self._file_records._pread_into(buf, self.position)
        if got < size:
            raise CorruptRecordException(
                f"Could not read the full log entry at position {self.position} of {self._file_records.file}: "
                f"expected {size} bytes, read {got}"
            )
        return LegacyRecordBatch(buf)

    def is_valid(self) -> bool:
        try:
            return self.load().is_valid()
        except CorruptRecordException:
            return False

    def ensure_valid(self) -> None:
        self.load().ensure_valid()

    def records(self) -> Iterator[Record]:
        return iter(self.load().records())

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def write_to(self, sock, offset: int = 0, length: Optional[int] = None) -> int:
        size = self.size_in_bytes
        if length is None:
            length = size - offset
        return self._file_records._sendfile(sock, self.position + offset, min(length, size - offset))

    def __repr__(self) -> str:
        return (f"LegacyFileChannelRecordBatch(magic={self.magic}, offset={self.last_offset}, "
                f"position={self.position}, size={self.size_in_bytes})")


class FileRecords:
    """A log segment file (or a slice of one) of record batches (and, in logs of the message
    formats v0/v1, their log entries)."""

    def __init__(self, file: str, channel: _FileChannel, start: int, end: int, is_slice: bool) -> None:
        self._file = os.fspath(file)
        self._channel = channel
        self._start = start
        self._end = end
        self._is_slice = is_slice
        if is_slice:
            self._size = end - start
        else:
            # A preallocated segment is longer than its data; ``end`` says where
            # the data stops (0 for a freshly preallocated file).
            limit = min(channel.size(), end)
            self._size = limit - start
        self.prefault_mark = NO_PREFAULT_MARK  # tuning: kafka_py/tuning/prefault_mark.py

    # ---- construction ------------------------------------------------------------
    @classmethod
    def open(
        cls,
        file,
        file_already_exists: bool = False,
        init_file_size: int = 0,
        preallocate: bool = False,
        mutable: bool = True,
    ) -> "FileRecords":
        path = os.fspath(file)
        if mutable:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if not file_already_exists and preallocate:
                try:
                    os.ftruncate(fd, init_file_size)
                except OSError:
                    os.close(fd)
                    raise
        else:
            fd = os.open(path, os.O_RDONLY)
        end = 0 if (not file_already_exists and preallocate) else INT_MAX
        return cls(path, _FileChannel(fd), 0, end, False)

    # ---- accessors ---------------------------------------------------------------
    @property
    def file(self) -> str:
        """Path of the segment file (a str, as LogSegment builds names from it)."""
        return self._file

    @property
    def channel_fd(self) -> int:
        """The raw descriptor; prefer the methods, which keep it open while they use it."""
        return self._channel.fd

    def fileno(self) -> int:
        return self._channel.fd

    @property
    def start(self) -> int:
        return self._start

    @property
    def end(self) -> int:
        return self._start + self.size_in_bytes()

    @property
    def is_slice(self) -> bool:
        return self._is_slice

    def size_in_bytes(self) -> int:
        return self._size

    def channel_size(self) -> int:
        """Length of the file on disk (larger than size_in_bytes() while preallocated)."""
        return self._channel.size()

    def __len__(self) -> int:
        return self._size

    # ---- low-level I/O -------------------------------------------------------------
    def _pread(self, size: int, position: int) -> bytes:
        fd = self._channel.acquire()
        try:
            data = os.pread(fd, size, position)
            if len(data) < size and data:
                # pread may return short on some filesystems; finish the read.
                parts = [data]
                got = len(data)
                while got < size:
                    more = os.pread(fd, size - got, position + got)
                    if not more:
                        break
                    parts.append(more)
                    got += len(more)
                data = b"".join(parts)
            return data
        finally:
            self._channel.release()

    def _pread_into(self, buffer, position: int) -> int:
        """Fill ``buffer`` from absolute ``position``; returns the bytes read (short at end of file)."""
        mv = memoryview(buffer).cast("B")
        want = len(mv)
        got = 0
        fd = self._channel.acquire()
        try:
            while got < want:
                n = os.preadv(fd, [mv[got:]], position + got)
                if n == 0:
                    break
                got += n
        finally:
            self._channel.release()
        return got

    def read_bytes(self, position: int, size: int) -> bytes:
        """Bytes ``[position, position + size)`` of this view, clipped to it."""
        if position < 0 or size < 0:
            raise ValueError(f"Invalid position {position} or size {size}")
        size = max(0, min(size, self._size - position))
        return self._pread(size, self._start + position)

    def is_zero_filled_from(self, position: int) -> bool:
        """Whether the file holds only zero bytes from ``position`` (of this view) to its end on
        disk: the unused part of a preallocated segment (``log.preallocate``), which a
        reader stops at rather than taking for damage. A crash can leave such a tail
        too. Holes are skipped without reading them (SEEK_DATA where the OS has it)."""
        fd = self._channel.acquire()
        try:
            end = os.fstat(fd).st_size
            position += self._start
            chunk = bytearray(_ZERO_CHECK_CHUNK)
            view = memoryview(chunk)
            while position < end:
                if _SEEK_DATA is not None:
                    try:
                        position = os.lseek(fd, position, _SEEK_DATA)
                    except OSError as e:
                        if e.errno == errno.ENXIO:
                            return True  # nothing but holes up to the end
                        raise
                    if position >= end:
                        return True
                got = os.preadv(fd, [view[:min(len(view), end - position)]], position)
                if got <= 0:
                    return True  # the file shrank under us
                if chunk.count(0, 0, got) != got:
                    return False
                position += got
            return True
        finally:
            self._channel.release()

    def read_into(self, buffer, position: int) -> MemoryRecords:
        """Fill ``buffer`` from ``position`` of this view (as far as the file goes); MemoryRecords over what was read."""
        mv = memoryview(buffer).cast("B")
        want = max(0, min(len(mv), self._size - position))
        got = self._pread_into(mv[:want], self._start + position)
        return MemoryRecords(mv[:got])

    def _sendfile(self, sock, position: int, count: int) -> int:
        if count <= 0:
            return 0
        if isinstance(sock, int):
            out_fd = sock
        else:
            try:
                out_fd = sock.fileno()
            except AttributeError:
                # A TLS transport (network/ssl_transport_layer.py) has no descriptor to
                # sendfile to: it reads the region and encrypts it itself.
                return sock.transfer_from(self, position, count)
        fd = self._channel.acquire()
        try:
            sent = os.sendfile(out_fd, fd, position, count)
        except BlockingIOError:
            return 0  # the socket buffer is full; the caller waits for writability
        finally:
            self._channel.release()
        if sent == 0:
            # sendfile reports EOF: the file is shorter than this view expects.
            raise KafkaException(
                f"Size of FileRecords {self._file} has been truncated during write: "
                f"nothing to send at position {position} (expected {count} more bytes)"
            )
        return sent

    def write_to(self, sock, offset: int, length: int) -> int:
        """Send bytes ``[offset, offset + length)`` of this view to ``sock`` (a socket or fd).

        One ``os.sendfile`` call: it returns the bytes written, which may be
        fewer than asked (0 when a non-blocking socket's buffer is full); the
        caller calls again with the offset advanced.
        """
        size = self._size
        if offset > size or offset < 0:
            raise KafkaException(
                f"The requested offset {offset} is out of range. The size of this FileRecords is {size}."
            )
        count = min(length, size - offset)
        return self._sendfile(sock, self._start + offset, count)

    # ---- mutation -----------------------------------------------------------------
    def append(self, records) -> int:
        """Write ``records`` (MemoryRecords or bytes-like) at the end; returns the bytes written."""
        if self._is_slice:
            raise ValueError(f"Cannot append to a slice of {self._file}")
        mv = records.buffer if isinstance(records, MemoryRecords) else memoryview(records).cast("B")
        total = len(mv)
        if total > INT_MAX - self._size:
            raise ValueError(
                f"Append of size {total} bytes is too large for segment with current file position at {self._size}"
            )
        fd = self._channel.acquire()
        try:
            written = 0
            position = self._size
            while written < total:
                written += os.pwrite(fd, mv[written:], position + written)
        finally:
            self._channel.release()
        # Readers see the new bytes only once they are fully in the file.
        self._size = position + total
        self.prefault_mark.appended(self, self._size)  # tuning: kafka_py/tuning/prefault_mark.py
        return total

    def acquire_channel(self) -> int:
        """The descriptor, kept open until ``release_channel()`` (ClosedChannelException once closed)."""
        return self._channel.acquire()

    def release_channel(self) -> None:
        self._channel.release()

    def flush(self) -> None:
        fd = self._channel.acquire()
        try:
            os.fsync(fd)
        finally:
            self._channel.release()

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to ``target_size`` bytes; returns how many bytes were removed."""
        original_size = self.size_in_bytes()
        if target_size > original_size or target_size < 0:
            raise KafkaException(
                f"Attempt to truncate log segment {self._file} to {target_size} bytes failed, "
                f" size of this log segment is {original_size} bytes."
            )
        fd = self._channel.acquire()
        try:
            if target_size < os.fstat(fd).st_size:
                os.ftruncate(fd, target_size)
                self._size = target_size
        finally:
            self._channel.release()
        return original_size - target_size

    def trim(self) -> None:
        """Drop preallocated space past the data."""
        self.truncate_to(self.size_in_bytes())

    def close(self) -> None:
        if not self._channel.is_open:
            return
        if not self._is_slice:
            self.flush()
            self.trim()
        self.close_handlers()

    def close_handlers(self) -> None:
        # A slice is a view; only the FileRecords that opened the fd closes it.
        if not self._is_slice:
            self._channel.close()

    def delete_if_exists(self) -> bool:
        self.close_handlers()
        try:
            os.remove(self._file)
            return True
        except FileNotFoundError:
            return False

    def rename_to(self, path) -> None:
        """Move the file (atomically); the open descriptor stays valid."""
        new = os.fspath(path)
        os.replace(self._file, new)
        self._file = new

    def set_file(self, path) -> None:
        self._file = os.fspath(path)

    def update_parent_dir(self, parent_dir) -> None:
        self._file = os.path.join(os.fspath(parent_dir), os.path.basename(self._file))

    def slice(self, position: int, size: int) -> "FileRecords":
        """A view of ``size`` bytes from ``position`` (relative to this view), clipped to its end."""
        current = self.size_in_bytes()
        if position < 0:
            raise ValueError(f"Invalid position: {position} in read from {self}")
        if position > current:
            raise ValueError(f"Slice from position {position} exceeds end position of {self}")
        if size < 0:
            raise ValueError(f"Invalid size: {size} in read from {self}")
        start = self._start + position
        end = min(start + size, self._start + current)
        return FileRecords(self._file, self._channel, start, end, True)

    # ---- batches --------------------------------------------------------------------
    def batches(self) -> Iterator[FileChannelRecordBatch]:
        return self.batches_from(self._start)

    def __iter__(self) -> Iterator[FileChannelRecordBatch]:
        return self.batches()

    def batches_from(self, start: int) -> Iterator[FileChannelRecordBatch | LegacyFileChannelRecordBatch]:
        """Batches from absolute file position ``start`` to this view's end.

        Iteration stops quietly at a trailing partial batch (an append that was
        cut short, or the end of a slice); a header that cannot be a batch
        raises CorruptRecordException, which segment recovery catches to
        truncate the log there. A log entry of magic 0 or 1 is a
        LegacyFileChannelRecordBatch.
        """
        end = self._start + self._size
        position = start
        pread = self._pread
        unpack = _HEADER.unpack_from
        while position + HEADER_SIZE_UP_TO_MAGIC < end:
            head = pread(min(RECORD_BATCH_OVERHEAD, end - position), position)
            if len(head) < HEADER_SIZE_UP_TO_MAGIC:
                return  # the file shrank under us
            length = _unpack_i32(head, 8)[0]
            if length < RECORD_OVERHEAD_V0:
                raise CorruptRecordException(
                    f"Found record size {length} smaller than minimum record overhead "
                    f"({RECORD_OVERHEAD_V0}) in file {self._file}."
                )
            if position > end - LOG_OVERHEAD - length:
                return
            magic = head[16]
            if magic == MAGIC_VALUE_V0 or magic == MAGIC_VALUE_V1:
                # the smallest entry (a v0 message, 26 bytes) holds the longest header read here
                if len(head) < _LEGACY_HEADER.size:
                    return  # the file shrank under us
                yield LegacyFileChannelRecordBatch(self, position, _LEGACY_HEADER.unpack_from(head, 0))
                position += LOG_OVERHEAD + length
                continue
            if magic != CURRENT_MAGIC_VALUE:
                raise CorruptRecordException(
                    f"Found a batch with magic {magic - 256 if magic > 127 else magic} at position "
                    f"{position} in file {self._file}; only magic v{CURRENT_MAGIC_VALUE} is supported"
                )
            if LOG_OVERHEAD + length < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordException(
                    f"Found a batch of {LOG_OVERHEAD + length} bytes, smaller than the "
                    f"{RECORD_BATCH_OVERHEAD}-byte batch header, at position {position} in file {self._file}"
                )
            if len(head) < RECORD_BATCH_OVERHEAD:
                return  # the file shrank under us
            yield FileChannelRecordBatch(self, position, unpack(head, 0))
            position += LOG_OVERHEAD + length

    # ---- searches -----------------------------------------------------------------
    def search_for_offset_with_size(self, target_offset: int, starting_position: int) -> Optional[LogOffsetPosition]:
        """The first batch from ``starting_position`` whose last offset is >= ``target_offset``."""
        for batch in self.batches_from(starting_position):
            offset = batch.last_offset
            if offset >= target_offset:
                return LogOffsetPosition(offset, batch.position, batch.size_in_bytes)
        return None

    def search_for_timestamp(
        self, target_timestamp: int, starting_position: int, starting_offset: int
    ) -> Optional[TimestampAndOffset]:
        """The first record at or after ``starting_offset`` with timestamp >= ``target_timestamp``."""
        for batch in self.batches_from(starting_position):
            if batch.max_timestamp >= target_timestamp:
                for record in batch.records():
                    if record.timestamp >= target_timestamp and record.offset >= starting_offset:
                        return TimestampAndOffset(
                            record.timestamp, record.offset, _maybe_leader_epoch(batch.partition_leader_epoch)
                        )
        return None

    def largest_timestamp_after(self, starting_position: int) -> TimestampAndOffset:
        max_timestamp = NO_TIMESTAMP
        offset_of_max = -1
        epoch_of_max = NO_PARTITION_LEADER_EPOCH
        for batch in self.batches_from(starting_position):
            ts = batch.max_timestamp
            if ts > max_timestamp:
                max_timestamp = ts
                offset_of_max = batch.last_offset
                epoch_of_max = batch.partition_leader_epoch
        return TimestampAndOffset(max_timestamp, offset_of_max, _maybe_leader_epoch(epoch_of_max))

    def __repr__(self) -> str:
        return f"FileRecords(size={self._size}, file={self._file}, start={self._start}, end={self._start + self._size})"
