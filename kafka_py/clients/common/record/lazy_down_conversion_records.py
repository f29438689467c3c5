"""Port of clients/src/main/java/org/apache/kafka/common/record/LazyDownConversionRecords.java
and LazyDownConversionRecordsSend.java (Kafka 2.8.2, KIP-283): the records of a Fetch v0-v3
answer, converted to message format 0 or 1 a chunk at a time while the socket takes them.

Converting means reading every record into memory; converting a whole fetch before sending
would hold it all at once (and its conversion) for every old consumer of the broker. So the
answer holds a ``LazyDownConversionRecords`` instead of records: the partition's
``FileRecords`` slice (or in-memory records), the target format and the fetch offset. Only
its first batch is converted when the answer is built, on the request handler thread; the
rest is converted on the network thread by its ``LazyDownConversionRecordsSend``, about
128 KiB of stored batches at a time (``MAX_READ_SIZE``; at least one whole batch), each chunk
once the socket has taken the one before.

The size. A response is framed before its first byte is written, so the records' size must
be known before they are converted. As Kafka does, it is the size of the stored records, or
the size of the first converted batch when that is larger (a consumer must get at least one
whole batch, whatever the conversion adds), or ``MIN_OVERFLOW_MESSAGE_LENGTH`` when nothing
converts (control batches only). The send then writes exactly that many bytes: converted
chunks cut where the size runs out (the consumer drops the partial message at the end and
fetches again from its offset), and, when the conversion has less to say than the size
promised, an *overflow batch*: offset -1 and a length one past what is left, which no
consumer can read whole, so every consumer stops there.

A batch that cannot be converted after the answer was framed (zstd, which the old formats
cannot name; or, here, a batch found corrupt) also ends the records with an overflow batch:
the consumer reads the records before it and fetches again from its offset, where the first
conversion fails and the partition is answered with an error code instead.

Where the batches end. The batches are read from the slice's byte positions: the first
chunk's end is where the send's chunks start. (Kafka 2.8.2 skips a single batch there, which
converts the first records twice when the slice begins with a control batch.)
"""
from __future__ import annotations

import logging
import struct
from typing import Any, Callable, Iterator, Optional

from kafka_py.clients.common.errors import CorruptRecordException, InvalidRecordException, UnsupportedCompressionTypeException
from kafka_py.clients.common.record.default_record_batch import (
    HEADER_SIZE_UP_TO_MAGIC,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    as_byte_view,
)
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats
from kafka_py.clients.common.record.records_util import ConvertedRecords, down_convert_buffer, scan_entries
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

# Stored bytes converted per chunk (a soft limit: a chunk holds at least one whole batch).
MAX_READ_SIZE = 128 * 1024
# The records of an answer in which nothing converts: room for an overflow batch's offset and length.
MIN_OVERFLOW_MESSAGE_LENGTH = LOG_OVERHEAD
# Converted bytes one write_to call goes through at most, so that one old consumer's fetch
# does not keep the network thread from its other connections.
MAX_CONVERSION_PER_WRITE = 1024 * 1024

_I32 = struct.Struct(">i")
_I64_I32 = struct.Struct(">qi")


def has_compatible_magic(records: Any, magic: int) -> bool:
    """Records.hasCompatibleMagic: every whole batch of ``records`` is of format ``magic`` or
    older, read from the entry headers alone (``scan_entries``): a window at a time from a
    file, and stopping at the first newer batch (a log of v2 batches answers at its first)."""
    reader = _BatchReader(records)
    first = reader.read_header()
    if (len(first) == HEADER_SIZE_UP_TO_MAGIC and first[MAGIC_OFFSET] > magic
            and LOG_OVERHEAD + _I32.unpack_from(first, LENGTH_OFFSET)[0] <= reader.size):
        # the common answer, from 17 bytes: a whole newer batch first (not read whole when large)
        return False
    while True:
        window = reader.read_window(MAX_READ_SIZE)
        if not window:
            return True
        scan = scan_entries(window, magic)
        if scan.max_magic > magic:
            return False
        if not scan.entries:
            return True  # a partial batch: the end of what was read from the log
        reader.position += scan.size_in_bytes


class _BatchReader:
    """The whole batches of a FileRecords slice or an in-memory buffer, in order, read a window
    at a time from a byte position. Every format's log entry starts with its offset, its length
    and, at byte 16, its magic, so batches of any format are told apart here (Kafka's
    FileLogInputStream / ByteBufferLogInputStream). A trailing partial batch (where a fetch's
    size limit cut the slice) ends the batches."""

    __slots__ = ("_file", "_view", "_size", "position")

    def __init__(self, records: Any, position: int = 0) -> None:
        if isinstance(records, FileRecords):
            self._file: Optional[FileRecords] = records
            self._view: Optional[memoryview] = None
            self._size = records.size_in_bytes()
        else:
            self._file = None
            self._view = as_byte_view(records.buffer if isinstance(records, MemoryRecords) else records)
            self._size = len(self._view)
        self.position = position

    def _read(self, position: int, size: int) -> memoryview:
        if self._view is not None:
            return self._view[position:position + size]
        # A bytes object a window, which pread fills as it is made (nothing zeroed first);
        # the window's batches are converted (copied out) before the next one is read.
        return memoryview(self._file.read_bytes(position, size))

    @property
    def size(self) -> int:
        """The bytes from the position to the end."""
        return self._size - self.position

    def read_header(self) -> memoryview:
        """The first HEADER_SIZE_UP_TO_MAGIC bytes from the position (fewer at the end)."""
        return self._read(self.position, min(HEADER_SIZE_UP_TO_MAGIC, max(self._size - self.position, 0)))

    def read_window(self, max_read_size: int) -> memoryview:
        """The log from the position on: ``max_read_size`` bytes, or its first batch whole when
        that is larger (empty at the end). Its whole batches are the next chunk to convert; a
        batch it cuts is read again at the start of the next window."""
        position = self.position
        left = self._size - position
        if left < HEADER_SIZE_UP_TO_MAGIC:
            return memoryview(b"")
        window = self._read(position, min(left, max(max_read_size, HEADER_SIZE_UP_TO_MAGIC)))
        if len(window) >= LOG_OVERHEAD:
            size = LOG_OVERHEAD + _I32.unpack_from(window, LENGTH_OFFSET)[0]
            if len(window) < size <= left:
                window = self._read(position, size)  # a first batch larger than the window, whole
        return window


class LazyDownConversionRecords:
    """The records of one partition of a Fetch v0-v3 answer, converted to ``to_magic`` when
    sent. ``len()`` is the size the answer is framed with (see the module docstring).

    Raises UnsupportedCompressionTypeException when the first batch to convert is compressed
    with zstd (the partition is then answered UNSUPPORTED_COMPRESSION_TYPE), and
    CorruptRecordException or InvalidRecordException when it cannot be read."""

    __slots__ = ("topic_partition", "records", "to_magic", "first_offset", "time", "_first_converted",
                 "_first_end", "_size")

    def __init__(self, topic_partition: Any, records: Any, to_magic: int, first_offset: int,
                 time: Time = Time.SYSTEM) -> None:
        self.topic_partition = topic_partition
        self.records = records
        self.to_magic = to_magic
        self.first_offset = first_offset
        self.time = time
        # Converted now: a consumer must be able to get one whole batch, however much the
        # conversion makes it grow, so the answer is framed for it.
        reader = _BatchReader(records)
        first = next(self._iterator(reader, 0), None)
        self._first_converted: Optional[ConvertedRecords] = first
        # where the send's chunks begin: after the batches the first one came from
        self._first_end = reader.position
        stored = records.size_in_bytes() if isinstance(records, FileRecords) else len(records)
        self._size = max(stored, first.size_in_bytes()) if first is not None else MIN_OVERFLOW_MESSAGE_LENGTH

    def size_in_bytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return self._size

    def to_send(self) -> "LazyDownConversionRecordsSend":
        return LazyDownConversionRecordsSend(self)

    def iterator(self, maximum_read_size: int,
                 wanted: Optional[Callable[[], int]] = None) -> Iterator[ConvertedRecords]:
        """The converted chunks, each from about ``maximum_read_size`` stored bytes (at least
        one batch), skipping batches that convert to nothing; the first is the one converted
        when these records were made, handed out once. ``wanted``, when given, says how many
        converted bytes are still wanted before each chunk: a chunk is read from no more
        stored bytes than that (a batch at least), so that the end of an answer, cut at its
        framed size, does not convert a whole window for the few bytes it still takes."""
        first = self._first_converted
        self._first_converted = None  # held once only: the send is what keeps chunks alive
        reader = _BatchReader(self.records, self._first_end if first is not None else 0)
        if first is not None:
            yield first
        yield from self._iterator(reader, maximum_read_size, wanted)

    def _iterator(self, reader: _BatchReader, maximum_read_size: int,
                  wanted: Optional[Callable[[], int]] = None) -> Iterator[ConvertedRecords]:
        while True:
            window = reader.read_window(maximum_read_size if wanted is None else min(maximum_read_size, wanted()))
            if not window:
                return
            converted, consumed = down_convert_buffer(window, self.to_magic, self.first_offset, self.time)
            if not consumed:
                # a partial batch: where a fetch's size limit cut the slice, or where a
                # truncation cut the file meanwhile
                return
            reader.position += consumed
            # Control batches convert to nothing: only chunks with something in them count.
            if converted.size_in_bytes() > 0:
                yield converted

    def __repr__(self) -> str:
        return (f"LazyDownConversionRecords(size={self._size}, underlying={self.records!r}, "
                f"toMagic={self.to_magic}, firstOffset={self.first_offset})")


class LazyDownConversionRecordsSend:
    """LazyDownConversionRecordsSend: writes a LazyDownConversionRecords' ``len()`` bytes,
    converting as it goes. ``write_to(sock, previously_written, remaining)`` is the file
    regions' interface (network/send.py's MultiRecordsSend calls it): it returns the bytes the
    socket took, fewer than ``remaining`` once the socket is full or after
    ``MAX_CONVERSION_PER_WRITE`` converted bytes, and resumes at the same byte next time."""

    __slots__ = ("_records", "_size", "_iterator", "_chunk", "_chunk_position", "_chunked",
                 "record_conversion_stats")

    def __init__(self, records: LazyDownConversionRecords) -> None:
        self._records = records
        self._size = records.size_in_bytes()
        self._chunked = 0  # the bytes of the chunks taken so far
        # A chunk is read from no more stored bytes than the answer still takes: conversion
        # mostly grows the bytes (~20 % for 100-byte records), so the last chunk is seldom
        # short, and when it is (record headers dropped, say) the next one makes up the rest.
        self._iterator: Iterator[ConvertedRecords] = records.iterator(
            MAX_READ_SIZE, lambda: self._size - self._chunked)
        self._chunk: Optional[memoryview] = None
        self._chunk_position = 0
        self.record_conversion_stats = RecordConversionStats()

    @property
    def topic_partition(self) -> Any:
        return self._records.topic_partition

    def size_in_bytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return self._size

    def _next_chunk(self, remaining: int) -> memoryview:
        """The next converted chunk, cut to ``remaining``, or an overflow batch past the
        converted records."""
        try:
            converted = next(self._iterator, None)
        except UnsupportedCompressionTypeException:
            # The answer is framed already: end it here; the consumer's next fetch from this
            # batch gets UNSUPPORTED_COMPRESSION_TYPE.
            converted = None
        except (CorruptRecordException, InvalidRecordException) as e:
            logger.warning("Stopped down-converting partition %s at a batch that cannot be read: %s",
                           self.topic_partition, e)
            converted = None
        if converted is None:
            return memoryview(self._overflow_batch(remaining))
        self.record_conversion_stats = self.record_conversion_stats.add(converted.record_conversion_stats)
        data = memoryview(converted.records)
        self._chunked += len(data)
        return data[:remaining] if len(data) > remaining else data

    def _overflow_batch(self, remaining: int) -> bytearray:
        """A log entry no consumer reads: offset -1 and a length one past the bytes left (at
        least a v2 batch header's), zero-filled up to those bytes (at most MAX_READ_SIZE a
        time)."""
        logger.debug("Constructed overflow message batch for partition %s with length=%d",
                     self.topic_partition, remaining)
        batch = bytearray(min(max(MIN_OVERFLOW_MESSAGE_LENGTH, min(remaining + 1, MAX_READ_SIZE)), remaining))
        header = _I64_I32.pack(-1, max(remaining + 1, RECORD_BATCH_OVERHEAD))
        batch[:len(header)] = header[:len(batch)]
        return batch

    def write_to(self, sock: Any, previously_written: int, remaining: int) -> int:
        written = 0
        converted = 0
        while remaining > 0:
            chunk = self._chunk
            if chunk is None or self._chunk_position >= len(chunk):
                if converted >= MAX_CONVERSION_PER_WRITE:
                    break
                chunk = self._chunk = self._next_chunk(remaining)
                self._chunk_position = 0
                converted += len(chunk)
            try:
                n = sock.send(chunk[self._chunk_position:])
            except BlockingIOError:
                n = 0
            self._chunk_position += n
            written += n
            remaining -= n
            if self._chunk_position < len(chunk):
                break  # the socket is full
        return written

    def __repr__(self) -> str:
        return f"LazyDownConversionRecordsSend(partition={self.topic_partition}, size={self._size})"


__all__ = ["LazyDownConversionRecords", "LazyDownConversionRecordsSend", "MAX_READ_SIZE",
           "MIN_OVERFLOW_MESSAGE_LENGTH", "has_compatible_magic"]
