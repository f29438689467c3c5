"""Port of clients/src/main/java/org/apache/kafka/common/network/Send.java,
ByteBufferSend.java and clients/.../common/record/MultiRecordsSend.java (Kafka 2.8.2).

A Send is a response on its way out of a non-blocking socket. ``write_to(sock)``
writes as much as the socket takes and returns the bytes written (0 when its buffer
is full); the Processor calls it again when the socket is writable, until
``completed``.

Two kinds of chunk make up a response: bytes (the size prefix, the response header,
encoded fields, record data held in memory), written with ``sock.send`` /
``sock.sendmsg`` over memoryviews; and record regions of a segment file, objects with
``write_to(sock, offset, length)`` and ``len()`` (``FileRecords`` slices), written with
``os.sendfile`` so that fetched bytes never enter Python (Kafka's
``FileChannel.transferTo``). Both resume at the exact byte where a partial write
stopped. Records an old consumer reads in an older format (Fetch v0-v3) are a third kind,
objects with ``to_send()``: their send converts them chunk by chunk as it writes
(kafka_py/clients/common/record/lazy_down_conversion_records.py) and is written like a file region.
"""
from __future__ import annotations

import logging
import socket
from typing import Any, Iterable, Protocol, runtime_checkable

logger = logging.getLogger(__name__)

# sendmsg takes at most IOV_MAX buffers; stay well below it.
_MAX_IOVECS = 64


@runtime_checkable
class Send(Protocol):
    """What the Processor writes to a connection."""

    def write_to(self, sock: socket.socket) -> int:
        """Write what the socket accepts now; the number of bytes written."""
        ...

    @property
    def completed(self) -> bool:
        ...

    @property
    def size(self) -> int:
        ...


def _as_bytes_view(data: Any) -> memoryview:
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def _chunk_length(chunk: Any) -> int:
    try:
        return len(chunk)
    except TypeError:
        return int(chunk.size_in_bytes())


class ByteBufferSend:
    """A send of in-memory buffers (the whole response is bytes)."""

    __slots__ = ("_views", "_index", "_offset", "_size", "_written")

    def __init__(self, *buffers: bytes | bytearray | memoryview) -> None:
        if len(buffers) == 1 and type(buffers[0]) in (bytes, bytearray) and buffers[0]:
            # one answer frame, as every produce answer is: its view without the comprehension,
            # the generator and the format check (bytes and bytearray views are flat bytes)
            view = memoryview(buffers[0])
            self._views = [view]
            self._size = len(view)
        else:
            self._views = [_as_bytes_view(b) for b in buffers if len(b)]
            self._size = sum(v.nbytes for v in self._views)
        self._index = 0
        self._offset = 0
        self._written = 0

    @classmethod
    def size_prefixed(cls, buffer: bytes | bytearray | memoryview) -> ByteBufferSend:
        """``buffer`` preceded by its 4-byte size, as a frame goes on the wire."""
        return cls(len(buffer).to_bytes(4, "big", signed=True), buffer)

    @property
    def size(self) -> int:
        return self._size

    @property
    def remaining(self) -> int:
        return self._size - self._written

    @property
    def completed(self) -> bool:
        return self._written >= self._size

    def write_to(self, sock: socket.socket) -> int:
        views = self._views
        if self._index == len(views) - 1:
            # one buffer left, as every answer of one buffer is: a plain send of its rest
            view = views[self._index]
            offset = self._offset
            try:
                n = sock.send(view[offset:] if offset else view)
            except BlockingIOError:
                return 0
            if offset + n >= view.nbytes:
                self._index += 1
                self._offset = 0
            else:
                self._offset = offset + n
            self._written += n
            return n
        total = 0
        while self._index < len(views):
            first = views[self._index]
            if self._offset:
                first = first[self._offset:]
            batch = [first, *views[self._index + 1:self._index + _MAX_IOVECS]]
            wanted = sum(v.nbytes for v in batch)
            try:
                n = sock.send(first) if len(batch) == 1 else sock.sendmsg(batch)
            except BlockingIOError:
                break
            total += n
            left = n
            while left > 0:
                in_view = views[self._index].nbytes - self._offset
                if left < in_view:
                    self._offset += left
                    break
                left -= in_view
                self._index += 1
                self._offset = 0
            if n < wanted:
                break
        self._written += total
        return total

    def __repr__(self) -> str:
        return f"ByteBufferSend(size={self._size}, remaining={self.remaining})"


class MultiRecordsSend:
    """A send of a response's chunks: bytes and file regions, in order.

    Consecutive byte chunks go out in one ``sendmsg``; a file region goes out with
    its own ``write_to`` (one ``os.sendfile``). A chunk may also be an object with a
    ``buffer`` (MemoryRecords), sent as bytes.
    """

    __slots__ = ("_chunks", "_lengths", "_is_bytes", "_index", "_offset", "_size", "_written")

    def __init__(self, chunks: Iterable[Any]) -> None:
        self._chunks: list[Any] = []
        self._lengths: list[int] = []
        self._is_bytes: list[bool] = []
        for chunk in chunks:
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                chunk = _as_bytes_view(chunk)
                is_bytes = True
            elif hasattr(chunk, "to_send"):
                # records that become bytes only as they are sent (LazyDownConversionRecords):
                # their send keeps its own place, and writes like a file region
                chunk = chunk.to_send()
                is_bytes = False
            elif hasattr(chunk, "write_to"):
                is_bytes = False
            elif hasattr(chunk, "buffer"):
                chunk = _as_bytes_view(chunk.buffer)
                is_bytes = True
            else:
                raise TypeError(f"cannot send a chunk of type {type(chunk).__name__}")
            length = chunk.nbytes if is_bytes else _chunk_length(chunk)
            if length == 0:
                continue
            self._chunks.append(chunk)
            self._lengths.append(length)
            self._is_bytes.append(is_bytes)
        self._index = 0
        self._offset = 0
        self._size = sum(self._lengths)
        self._written = 0

    @property
    def size(self) -> int:
        return self._size

    @property
    def remaining(self) -> int:
        return self._size - self._written

    @property
    def completed(self) -> bool:
        return self._written >= self._size

    def write_to(self, sock: socket.socket) -> int:
        total = 0
        count = len(self._chunks)
        while self._index < count:
            if self._is_bytes[self._index]:
                n, wanted = self._write_bytes(sock)
            else:
                chunk = self._chunks[self._index]
                wanted = self._lengths[self._index] - self._offset
                # FileRecords.write_to returns 0 when the socket buffer is full.
                n = chunk.write_to(sock, self._offset, wanted)
                self._offset += n
                if self._offset >= self._lengths[self._index]:
                    self._index += 1
                    self._offset = 0
            total += n
            if n < wanted:
                break
        self._written += total
        return total

    def record_conversion_stats(self) -> dict[Any, Any]:
        """MultiRecordsSend.recordConversionStats: by partition, what converting the records of
        this response cost (chunks that converted as they were written); empty when none did."""
        return {chunk.topic_partition: chunk.record_conversion_stats for chunk, is_bytes
                in zip(self._chunks, self._is_bytes) if not is_bytes and hasattr(chunk, "record_conversion_stats")}

    def _write_bytes(self, sock: socket.socket) -> tuple[int, int]:
        """One send(msg) of the byte chunks from the current one up to the next file region."""
        first = self._chunks[self._index]
        if self._offset:
            first = first[self._offset:]
        views = [first]
        end = self._index + 1
        limit = min(len(self._chunks), self._index + _MAX_IOVECS)
        while end < limit and self._is_bytes[end]:
            views.append(self._chunks[end])
            end += 1
        wanted = sum(v.nbytes for v in views)
        try:
            n = sock.send(first) if len(views) == 1 else sock.sendmsg(views)
        except BlockingIOError:
            return 0, wanted
        left = n
        while left > 0:
            in_chunk = self._lengths[self._index] - self._offset
            if left < in_chunk:
                self._offset += left
                break
            left -= in_chunk
            self._index += 1
            self._offset = 0
        return n, wanted

    def __repr__(self) -> str:
        return (f"MultiRecordsSend(chunks={len(self._chunks)}, size={self._size}, "
                f"remaining={self.remaining})")
