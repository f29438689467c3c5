"""The Processor's Selector over socket pairs: framing, muting, sends, disconnects, idle expiry."""
from __future__ import annotations

import os
import socket
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.network.selector import KafkaChannel, Selector
from kafka_py.network.send import ByteBufferSend
from kafka_py.clients.common.protocol.framing import InvalidReceiveException
from kafka_py.clients.common.utils.time import MockTime

from .conftest import wait_until


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


@pytest.fixture
def selector():
    sel = Selector(max_receive_size=1 << 20, connection_max_idle_ms=-1)
    yield sel
    sel.close_all()


def connect(sel: Selector, channel_id: str = "c") -> socket.socket:
    server_side, client = socket.socketpair()
    server_side.setblocking(False)
    client.settimeout(10)
    sel.register(channel_id, server_side, "127.0.0.1", 1234)
    return client


def poll_until(sel: Selector, predicate, polls: int = 200):
    for _ in range(polls):
        sel.poll(50)
        value = predicate()
        if value:
            return value
    raise AssertionError("selector condition not met")


@settings(max_examples=60, deadline=None)
@given(
    payloads=st.lists(st.one_of(st.binary(max_size=40), st.binary(min_size=100, max_size=3000)),
                      min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 700), max_size=40),
    scratch_size=st.sampled_from([5, 64, 4096]),
)
def test_channel_splits_any_byte_stream_into_its_frames(payloads, cuts, scratch_size) -> None:
    stream = b"".join(frame(p) for p in payloads)
    server_side, client = socket.socketpair()
    server_side.setblocking(False)
    try:
        channel = KafkaChannel("c", server_side, "127.0.0.1", 1)
        scratch = memoryview(bytearray(scratch_size))
        pos = 0
        for cut in cuts + [len(stream)]:
            piece = stream[pos:pos + cut]
            pos += len(piece)
            if piece:
                client.sendall(piece)
                while True:
                    try:
                        assert channel.read(scratch, 1 << 20)
                    except BlockingIOError:
                        break
        got = [bytes(f) for f in channel.frames]
        assert got == payloads
        assert all(not f.readonly for f in channel.frames)
    finally:
        server_side.close()
        client.close()


@pytest.mark.parametrize("size", [-1, -2**31, (1 << 20) + 1])
def test_channel_rejects_frame_sizes_out_of_range(size) -> None:
    server_side, client = socket.socketpair()
    try:
        channel = KafkaChannel("c", server_side, "127.0.0.1", 1)
        client.sendall(struct.pack(">i", size))
        with pytest.raises(InvalidReceiveException):
            channel.read(memoryview(bytearray(64)), 1 << 20)
    finally:
        server_side.close()
        client.close()


def test_one_frame_per_poll_and_none_while_muted(selector) -> None:
    client = connect(selector)
    client.sendall(frame(b"one") + frame(b"two") + frame(b"three"))
    received = poll_until(selector, selector.drain_completed_receives)
    assert [(cid, bytes(f)) for cid, f in received] == [("c", b"one")]
    selector.mute("c")
    for _ in range(3):
        selector.poll(0)
    assert selector.drain_completed_receives() == []
    selector.unmute("c")
    selector.poll(0)  # buffered frames need no read: poll does not wait
    assert [bytes(f) for _, f in selector.drain_completed_receives()] == [b"two"]
    selector.poll(0)
    assert [bytes(f) for _, f in selector.drain_completed_receives()] == [b"three"]


def test_send_completes_and_is_reported(selector) -> None:
    client = connect(selector)
    payload = os.urandom(3 << 20)  # larger than the socket buffers
    send = ByteBufferSend.size_prefixed(payload)
    selector.send("c", send)
    with pytest.raises(RuntimeError):
        selector.send("c", ByteBufferSend(b"x"))
    received = bytearray()
    while len(received) < len(payload) + 4:
        selector.poll(10)
        try:
            received += client.recv(1 << 20, socket.MSG_DONTWAIT)
        except BlockingIOError:
            pass
    poll_until(selector, lambda: selector.completed_sends)
    assert selector.drain_completed_sends() == [("c", send)]
    assert bytes(received[4:]) == payload


def test_peer_close_is_reported_once(selector) -> None:
    client = connect(selector)
    client.close()
    assert poll_until(selector, selector.drain_disconnected) == [("c", "127.0.0.1")]
    assert selector.channel("c") is None
    selector.poll(0)
    assert selector.drain_disconnected() == []


def test_peer_close_while_muted_waits_for_the_response(selector) -> None:
    client = connect(selector)
    client.sendall(frame(b"request"))
    poll_until(selector, selector.drain_completed_receives)
    selector.mute("c")
    client.shutdown(socket.SHUT_WR)
    for _ in range(3):
        selector.poll(0)
    assert selector.channel("c") is not None
    selector.send("c", ByteBufferSend.size_prefixed(b"response"))
    assert selector.drain_completed_sends()
    selector.unmute("c")
    assert poll_until(selector, selector.drain_disconnected) == [("c", "127.0.0.1")]
    assert client.recv(100) == frame(b"response")


def test_explicit_close_is_not_reported(selector) -> None:
    client = connect(selector)
    selector.close("c")
    selector.poll(0)
    assert selector.drain_disconnected() == []
    assert client.recv(10) == b""


def test_idle_connections_close_least_recently_active_first() -> None:
    time = MockTime()
    sel = Selector(1 << 20, connection_max_idle_ms=1000, time=time)
    try:
        first = connect(sel, "first")
        time.sleep(600)
        second = connect(sel, "second")
        time.sleep(600)
        sel.poll(0)
        assert sel.drain_disconnected() == [("first", "127.0.0.1")]
        assert sel.lowest_priority_channel().id == "second"
        second.sendall(frame(b"keep me"))
        sel.poll(50)
        time.sleep(600)  # 1200 ms since "second" connected, 600 since it spoke
        sel.poll(0)
        assert sel.drain_disconnected() == []
        time.sleep(500)
        sel.poll(0)
        assert sel.drain_disconnected() == [("second", "127.0.0.1")]
        assert first.recv(10) == b""
    finally:
        sel.close_all()


def test_wakeup_ends_a_blocked_poll(selector) -> None:
    import threading

    done = threading.Event()

    def poll_long():
        selector.poll(60_000)
        done.set()

    thread = threading.Thread(target=poll_long)
    thread.start()
    selector.wakeup()
    wait_until(done.is_set)
    thread.join()
