"""Port of clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java and
the size prefix of ByteBufferSend.sizePrefixed (Kafka 2.8.2).

Every request and response on the wire is a 4-byte big-endian size followed by that
many bytes. ``FrameDecoder`` turns a byte stream into those frames without touching
a socket; it can be fed either way:

* ``feed(chunk)`` with whatever ``recv`` returned; complete frames come back, or
* ``receive_buffer()`` / ``advance(n)``: receive straight into the decoder's buffer
  (``sock.recv_into(decoder.receive_buffer())``) the way NetworkReceive reads first
  the size and then exactly one payload, so the payload is never copied.

Each frame is a writable memoryview over storage of its own: it stays valid while
the decoder goes on to later frames, and the produce path can keep record data as
a view of it and assign offsets in place.
A size above ``max_size`` or below zero raises InvalidReceiveException before any
payload is buffered, as Kafka does with ``socket.request.max.bytes``.
"""
from __future__ import annotations

import logging
import struct

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.protocol.codec import as_buffer

logger = logging.getLogger(__name__)

SIZE_LENGTH = 4
UNLIMITED = -1

_SIZE = struct.Struct(">i")


class InvalidReceiveException(KafkaException):
    """A frame announced a negative size or one above the receive limit."""


def size_prefix(size: int) -> bytes:
    """The 4-byte size that precedes a frame of ``size`` bytes."""
    return _SIZE.pack(size)


def encode_frame(payload: bytes | bytearray | memoryview) -> bytes:
    """``payload`` with its size prefix."""
    return _SIZE.pack(len(payload)) + bytes(payload)


class FrameDecoder:
    """Incremental decoder of size-prefixed frames (Kafka's NetworkReceive, repeated)."""

    def __init__(self, max_size: int = UNLIMITED, source: str = "") -> None:
        self.max_size = max_size
        self.source = source
        self._size_buffer = bytearray(SIZE_LENGTH)
        self._size_filled = 0
        self._payload: bytearray | None = None
        self._payload_filled = 0

    @property
    def in_progress(self) -> bool:
        """Whether part of a frame (size or payload) has been received."""
        return self._size_filled > 0 or self._payload is not None

    @property
    def bytes_buffered(self) -> int:
        return self._size_filled + self._payload_filled

    def _start_payload(self) -> memoryview | None:
        (size,) = _SIZE.unpack(self._size_buffer)
        self._size_filled = 0
        if size < 0:
            raise InvalidReceiveException(f"Invalid receive (size = {size})")
        if self.max_size != UNLIMITED and size > self.max_size:
            raise InvalidReceiveException(
                f"Invalid receive (size = {size} larger than {self.max_size})"
                + (f" from {self.source}" if self.source else "")
            )
        if size == 0:
            return memoryview(bytearray())
        self._payload = bytearray(size)
        self._payload_filled = 0
        return None

    def _finish_payload(self) -> memoryview:
        frame = memoryview(self._payload)
        self._payload = None
        self._payload_filled = 0
        return frame

    def receive_buffer(self) -> memoryview:
        """Where the next received bytes go: the rest of the size, or of the payload.

        Never returns more room than the current frame needs, so a receive into it
        cannot swallow the start of the next frame.
        """
        if self._payload is None:
            return memoryview(self._size_buffer)[self._size_filled:]
        return memoryview(self._payload)[self._payload_filled:]

    def advance(self, n: int) -> memoryview | None:
        """Account for ``n`` bytes received into ``receive_buffer()``; a frame if complete."""
        if n < 0 or n > len(self.receive_buffer()):
            raise ValueError(f"cannot advance by {n} bytes")
        if self._payload is None:
            self._size_filled += n
            if self._size_filled < SIZE_LENGTH:
                return None
            return self._start_payload()
        self._payload_filled += n
        if self._payload_filled < len(self._payload):
            return None
        return self._finish_payload()

    def feed(self, data: bytes | bytearray | memoryview) -> list[memoryview]:
        """Consume ``data``; returns the frames it completed, in order.

        The bytes are copied into per-frame storage, so the caller may reuse its
        receive buffer at once.
        """
        view = as_buffer(data)
        frames: list[memoryview] = []
        pos = 0
        end = len(view)
        while pos < end:
            room = self.receive_buffer()
            n = min(len(room), end - pos)
            room[:n] = view[pos:pos + n]
            pos += n
            frame = self.advance(n)
            if frame is not None:
                frames.append(frame)
        return frames
