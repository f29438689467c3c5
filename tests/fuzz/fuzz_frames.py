"""Fuzz target: the frame reader of a connection (network/selector.py KafkaChannel): the byte
stream a client sends, cut into reads of any size, split into size-prefixed frames.

The first byte sets the receive limit (socket.request.max.bytes, kept small here), the second
the size of every read; the rest is the stream.

Contract: the frames read are exactly those a sequential reading of the stream finds (size
prefix, then that many bytes), whatever the split into reads, and a size prefix that is
negative or above the limit raises InvalidReceiveException (the Selector closes the
connection) once its four bytes have arrived, and nothing else is raised.
"""
from __future__ import annotations

import struct
from typing import Iterable

from kafka_py.network.selector import KafkaChannel
from kafka_py.clients.common.protocol.framing import InvalidReceiveException

_SCRATCH_SIZE = 64  # small, so that frames and size prefixes straddle reads


class _Socket:
    """recv_into hands out the stream ``read_size`` bytes at a time; b'' at its end."""

    def __init__(self, stream: bytes, read_size: int) -> None:
        self.stream = stream
        self.position = 0
        self.read_size = read_size

    def fileno(self) -> int:
        return -1

    def recv_into(self, buffer: memoryview) -> int:
        n = min(len(buffer), self.read_size, len(self.stream) - self.position)
        buffer[:n] = self.stream[self.position:self.position + n]
        self.position += n
        return n


def _expected(stream: bytes, limit: int) -> tuple[list[bytes], bool]:
    """The complete frames in ``stream`` and whether a bad size prefix stops it."""
    frames, position = [], 0
    while len(stream) - position >= 4:
        (size,) = struct.unpack_from(">i", stream, position)
        if size < 0 or size > limit:
            return frames, True
        if len(stream) - position - 4 < size:
            break
        frames.append(stream[position + 4:position + 4 + size])
        position += 4 + size
    return frames, False


def one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    limit = 16 + data[0] * 8
    stream = data[2:]
    channel = KafkaChannel("fuzz", _Socket(stream, 1 + data[1] % _SCRATCH_SIZE), "127.0.0.1", 1)
    scratch = memoryview(bytearray(_SCRATCH_SIZE))
    refused = False
    try:
        while channel.read(scratch, limit):
            pass
    except InvalidReceiveException:
        refused = True
    frames, bad_size = _expected(stream, limit)
    got = [bytes(f) for f in channel.frames]
    if refused != bad_size or got != frames:
        raise AssertionError(f"read {got!r} (refused={refused}), expected {frames!r} (refused={bad_size})")


def seeds() -> Iterable[tuple[str, bytes]]:
    def frame(payload: bytes) -> bytes:
        return struct.pack(">i", len(payload)) + payload

    api_versions = bytes.fromhex("0012000300000001000474657374000000")
    yield "one-frame", bytes([8, 63]) + frame(api_versions)
    yield "two-frames-split", bytes([8, 2]) + frame(api_versions) + frame(b"x" * 40)
    yield "partial", bytes([8, 5]) + frame(b"y" * 30)[:20]
    yield "too-large", bytes([0, 7]) + struct.pack(">i", 10_000) + b"z" * 8
    yield "negative", bytes([4, 1]) + struct.pack(">i", -1)
    yield "empty-frames", bytes([1, 3]) + frame(b"") * 3
