"""ByteBufferSend and MultiRecordsSend over a real non-blocking socket pair with small
buffers, so writes are partial and must resume at the right byte."""
from __future__ import annotations

import os
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.network.send import ByteBufferSend, MultiRecordsSend, Send
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.clients.common.record.default_record_batch import SimpleRecord


@pytest.fixture
def pair():
    writer, reader = socket.socketpair()
    writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    writer.setblocking(False)
    reader.settimeout(10)
    yield writer, reader
    writer.close()
    reader.close()


def pump(send: Send, writer: socket.socket, reader: socket.socket) -> tuple[bytes, int]:
    """Write ``send`` fully, draining the reader whenever the writer is stuck.

    Returns the bytes received and how many write_to calls wrote less than was left.
    """
    received = bytearray()
    partial_writes = 0
    while not send.completed:
        before = send.remaining
        written = send.write_to(writer)
        assert 0 <= written <= before
        assert send.remaining == before - written
        if not send.completed:
            partial_writes += 1
            received += reader.recv(1 << 16)
    reader.setblocking(False)
    try:
        while True:
            chunk = reader.recv(1 << 16)
            if not chunk:
                break
            received += chunk
    except BlockingIOError:
        pass
    finally:
        reader.setblocking(True)
    return bytes(received), partial_writes


def test_byte_buffer_send_resumes_after_partial_writes(pair) -> None:
    writer, reader = pair
    buffers = [os.urandom(100_000), b"", os.urandom(7), bytearray(os.urandom(50_000))]
    send = ByteBufferSend(*buffers)
    assert send.size == sum(len(b) for b in buffers)
    assert isinstance(send, Send)
    received, partial = pump(send, writer, reader)
    assert received == b"".join(bytes(b) for b in buffers)
    assert partial > 0
    assert send.write_to(writer) == 0


def test_byte_buffer_send_of_one_buffer_resumes_after_partial_writes(pair) -> None:
    writer, reader = pair
    data = os.urandom(300_000)
    send = ByteBufferSend(memoryview(data))
    received, partial = pump(send, writer, reader)
    assert received == data
    assert partial > 0
    assert send.completed and send.remaining == 0
    assert send.write_to(writer) == 0


def test_size_prefixed_byte_buffer_send(pair) -> None:
    writer, reader = pair
    send = ByteBufferSend.size_prefixed(b"hello")
    received, _ = pump(send, writer, reader)
    assert received == b"\x00\x00\x00\x05hello"


def test_multi_records_send_mixes_bytes_and_file_regions(pair, tmp_path) -> None:
    writer, reader = pair
    content = os.urandom(300_000)
    path = tmp_path / "segment.log"
    path.write_bytes(content)
    records = FileRecords.open(path, file_already_exists=True)
    memory = MemoryRecords.with_records([SimpleRecord(b"k", b"v" * 1000)])
    chunks = [
        b"head", records.slice(10, 120_000), b"", b"mid", memoryview(b"dle"),
        records.slice(200_000, 100_000), memory, records.slice(5, 0), b"tail",
    ]
    send = MultiRecordsSend(chunks)
    expected = (b"head" + content[10:120_010] + b"middle" + content[200_000:300_000]
                + bytes(memory.buffer) + b"tail")
    assert send.size == len(expected)
    received, partial = pump(send, writer, reader)
    assert received == expected
    assert partial > 0
    records.close()


@settings(max_examples=30, deadline=None)
@given(
    pieces=st.lists(st.tuples(st.booleans(), st.integers(0, 20_000)), min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_multi_records_send_any_chunking(tmp_path_factory, pieces, seed) -> None:
    path = tmp_path_factory.mktemp("send") / "f.log"
    content = os.urandom(40_000)
    path.write_bytes(content)
    records = FileRecords.open(path, file_already_exists=True)
    chunks, expected = [], bytearray()
    for i, (is_file, size) in enumerate(pieces):
        start = (seed * (i + 1)) % 20_000
        if is_file:
            chunks.append(records.slice(start, size))
            expected += content[start:start + size]
        else:
            data = content[start:start + size]
            chunks.append(data)
            expected += data
    writer, reader = socket.socketpair()
    writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    writer.setblocking(False)
    reader.settimeout(10)
    try:
        send = MultiRecordsSend(chunks)
        assert send.size == len(expected)
        received, _ = pump(send, writer, reader)
        assert received == bytes(expected)
    finally:
        writer.close()
        reader.close()
        records.close()


def test_send_to_a_closed_peer_raises(pair) -> None:
    writer, reader = pair
    reader.close()
    send = ByteBufferSend(os.urandom(1 << 20))
    with pytest.raises(OSError):
        while not send.completed:
            send.write_to(writer)


def test_unsupported_chunk_type() -> None:
    with pytest.raises(TypeError):
        MultiRecordsSend([b"ok", 42])
