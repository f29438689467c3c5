"""The 4-byte size framing: incremental decoding, both feeding styles, limits."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.clients.common.protocol.framing import (
    FrameDecoder,
    InvalidReceiveException,
    encode_frame,
    size_prefix,
)

PAYLOADS = [b"first", b"", b"x" * 1000, bytes(range(256))]
STREAM = b"".join(encode_frame(p) for p in PAYLOADS)


def test_encode_frame() -> None:
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert encode_frame(memoryview(b"")) == b"\x00\x00\x00\x00"
    assert size_prefix(70000) == struct.pack(">i", 70000)


def test_whole_stream_in_one_chunk() -> None:
    frames = FrameDecoder().feed(STREAM)
    assert [bytes(f) for f in frames] == PAYLOADS


def test_one_byte_at_a_time() -> None:
    decoder = FrameDecoder(max_size=2000)
    frames = []
    for i in range(len(STREAM)):
        frames += decoder.feed(STREAM[i:i + 1])
        if i == 5:  # inside the first payload
            assert decoder.in_progress and decoder.bytes_buffered == 2
    assert [bytes(f) for f in frames] == PAYLOADS
    assert not decoder.in_progress and decoder.bytes_buffered == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=40))
def test_arbitrary_chunking(cuts: list[int]) -> None:
    decoder = FrameDecoder()
    frames, pos = [], 0
    for n in cuts:
        frames += decoder.feed(STREAM[pos:pos + n])
        pos += n
    frames += decoder.feed(STREAM[pos:])
    assert [bytes(f) for f in frames] == PAYLOADS


def test_frames_stay_valid_and_writable_after_buffer_reuse() -> None:
    receive = bytearray(STREAM)
    frames = FrameDecoder().feed(receive)
    receive[:] = b"\xee" * len(receive)  # the caller reuses its receive buffer
    assert [bytes(f) for f in frames] == PAYLOADS
    frames[0][0:1] = b"F"  # the produce path assigns offsets in place
    assert bytes(frames[0]) == b"First"


def test_recv_into_style() -> None:
    decoder = FrameDecoder(max_size=4096)
    frames, pos = [], 0
    while pos < len(STREAM):
        room = decoder.receive_buffer()
        n = min(len(room), 7, len(STREAM) - pos)  # a socket delivering 7 bytes at most
        room[:n] = STREAM[pos:pos + n]
        pos += n
        frame = decoder.advance(n)
        if frame is not None:
            frames.append(bytes(frame))
    assert frames == PAYLOADS


def test_receive_buffer_never_spans_two_frames() -> None:
    decoder = FrameDecoder()
    assert len(decoder.receive_buffer()) == 4
    decoder.receive_buffer()[:4] = size_prefix(10)
    assert decoder.advance(4) is None
    assert len(decoder.receive_buffer()) == 10
    with pytest.raises(ValueError):
        decoder.advance(11)


def test_oversize_frame_rejected_before_buffering() -> None:
    decoder = FrameDecoder(max_size=100, source="127.0.0.1:5555")
    assert decoder.feed(encode_frame(b"a" * 100))[0] == b"a" * 100
    with pytest.raises(InvalidReceiveException, match="size = 101 larger than 100"):
        decoder.feed(size_prefix(101))
    assert decoder.bytes_buffered == 0


def test_oversize_size_split_across_chunks() -> None:
    decoder = FrameDecoder(max_size=10)
    assert decoder.feed(b"\x7f\xff") == []
    with pytest.raises(InvalidReceiveException):
        decoder.feed(b"\xff\xff")


def test_negative_size_rejected() -> None:
    with pytest.raises(InvalidReceiveException, match="size = -1"):
        FrameDecoder().feed(b"\xff\xff\xff\xff")
    with pytest.raises(InvalidReceiveException, match="size = -2147483648"):
        FrameDecoder(max_size=10).feed(b"\x80\x00\x00\x00")
