"""The TLS transport of a Processor's channel (network/ssl_transport_layer.py) against a real TLS
client over a socket pair: the non-blocking handshake, reads that drain every record that has
arrived, writes the socket takes only in part (the kept ciphertext goes out first, the caller's
bytes are reported written only then), file regions, and the end of the stream."""
from __future__ import annotations

import hashlib
import os
import selectors
import socket
import ssl
import threading
import time

import pytest

from kafka_py.network.ssl_transport_layer import SslTransportLayer
from tests.security.certs import make_pki

WAIT_S = 30.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def _contexts(pki):
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(pki.server_keystore))
    client = ssl.create_default_context(cafile=str(pki.ca_cert))
    return server, client


def _wait(sock_fd: int, events: int) -> None:
    with selectors.DefaultSelector() as sel:
        sel.register(sock_fd, events)
        assert sel.select(WAIT_S), "socket never became ready"


def _handshake(transport: SslTransportLayer) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            if transport.handshake():
                return
        except ssl.SSLWantReadError:
            _wait(transport.fd, selectors.EVENT_READ)
        except ssl.SSLWantWriteError:
            _wait(transport.fd, selectors.EVENT_WRITE)
    raise AssertionError("handshake did not complete")


def _read_exactly(transport: SslTransportLayer, n: int) -> bytes:
    buffer = bytearray(n)
    view = memoryview(buffer)
    got = 0
    deadline = time.monotonic() + WAIT_S
    while got < n:
        assert time.monotonic() < deadline, f"read {got} of {n}"
        try:
            k = transport.recv_into(view[got:])
        except BlockingIOError:
            _wait(transport.fd, selectors.EVENT_READ)
            continue
        assert k > 0, "end of stream"
        got += k
    return bytes(buffer)


def _write_all(transport: SslTransportLayer, data: bytes) -> int:
    """As a Send writes: the same bytes again after BlockingIOError; returns the retries seen."""
    view = memoryview(data)
    retries = 0
    deadline = time.monotonic() + WAIT_S
    while view:
        assert time.monotonic() < deadline
        try:
            n = transport.send(view)
        except BlockingIOError:
            retries += 1
            _wait(transport.fd, selectors.EVENT_WRITE)
            continue
        view = view[n:]
    return retries


@pytest.fixture
def pair(pki):
    server_ctx, client_ctx = _contexts(pki)
    a, b = socket.socketpair()
    # small kernel buffers: writes of a few hundred KiB fill them
    for s in (a, b):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    transport = SslTransportLayer(server_ctx, a)
    result: dict = {}

    def client_handshake():
        try:
            result["client"] = client_ctx.wrap_socket(b, server_hostname="localhost")
        except Exception as e:  # noqa: BLE001 - reported by the test
            result["error"] = e

    thread = threading.Thread(target=client_handshake, daemon=True)
    thread.start()
    _handshake(transport)
    thread.join(WAIT_S)
    assert "error" not in result, result.get("error")
    client = result["client"]
    client.settimeout(WAIT_S)
    yield transport, client
    client.close()
    transport.close()


def test_handshake_then_reads_drain_every_record_that_arrived(pair) -> None:
    transport, client = pair
    assert transport.handshake_complete and transport.protocol_version in ("TLSv1.2", "TLSv1.3")
    payload = os.urandom(700_000)  # about 43 records
    sender = threading.Thread(target=client.sendall, args=(payload,), daemon=True)
    sender.start()
    assert _read_exactly(transport, len(payload)) == payload
    sender.join(WAIT_S)
    # nothing is left behind the transport's back
    assert transport.pending() == 0
    with pytest.raises(BlockingIOError):
        transport.recv_into(memoryview(bytearray(10)))


def test_small_buffers_leave_bytes_pending_for_the_selector(pair) -> None:
    transport, client = pair
    client.sendall(b"abcdefgh" * 1000)
    first = None
    deadline = time.monotonic() + WAIT_S
    while first is None and time.monotonic() < deadline:
        try:
            first = transport.recv_into(memoryview(bytearray(100)))
        except BlockingIOError:
            _wait(transport.fd, selectors.EVENT_READ)
    assert first == 100
    # the rest is decrypted or waiting in memory, where epoll cannot see it
    assert transport.pending() > 0
    assert _read_exactly(transport, 7900) == (b"abcdefgh" * 1000)[100:]


def test_partial_writes_keep_their_ciphertext_and_complete_in_order(pair) -> None:
    transport, client = pair
    payload = os.urandom(3_000_000)
    digest = {}

    def receive():
        h = hashlib.sha256()
        left = len(payload)
        while left:
            chunk = client.recv(min(65536, left))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
            time.sleep(0.0005)  # a slow reader: the transport's socket fills up
        digest["got"] = h.hexdigest()
        digest["left"] = left

    reader = threading.Thread(target=receive, daemon=True)
    reader.start()
    retries = _write_all(transport, payload)
    reader.join(WAIT_S)
    assert digest["left"] == 0 and digest["got"] == hashlib.sha256(payload).hexdigest()
    assert retries > 0  # the kept-ciphertext path was taken


class _File:
    """What transfer_from needs of FileRecords: positioned reads."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _pread_into(self, buffer, position: int) -> int:
        chunk = self.data[position:position + len(buffer)]
        buffer[:len(chunk)] = chunk
        return len(chunk)


def test_file_regions_go_out_encrypted_in_pieces(pair) -> None:
    transport, client = pair
    data = os.urandom(2_500_000)
    region = (1000, 2_000_000)
    got = bytearray()

    def receive():
        while len(got) < region[1]:
            chunk = client.recv(65536)
            if not chunk:
                break
            got.extend(chunk)

    reader = threading.Thread(target=receive, daemon=True)
    reader.start()
    position, left = region
    deadline = time.monotonic() + WAIT_S
    while left:
        assert time.monotonic() < deadline
        n = transport.transfer_from(_File(data), position, left)
        if n == 0:
            _wait(transport.fd, selectors.EVENT_WRITE)
        position += n
        left -= n
    reader.join(WAIT_S)
    assert bytes(got) == data[region[0]:region[0] + region[1]]


def test_end_of_stream(pair) -> None:
    transport, client = pair
    client.sendall(b"last words")
    client.shutdown(socket.SHUT_WR)  # (a close with unread session tickets would reset the connection)
    assert _read_exactly(transport, 10) == b"last words"
    deadline = time.monotonic() + WAIT_S
    while True:
        assert time.monotonic() < deadline
        try:
            assert transport.recv_into(memoryview(bytearray(10))) == 0
            break
        except BlockingIOError:
            _wait(transport.fd, selectors.EVENT_READ)


def test_garbage_instead_of_a_client_hello_fails_the_handshake(pki) -> None:
    server_ctx, _ = _contexts(pki)
    a, b = socket.socketpair()
    transport = SslTransportLayer(server_ctx, a)
    try:
        b.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 4)
        with pytest.raises(ssl.SSLError) as info:
            _handshake(transport)
        assert not isinstance(info.value, (ssl.SSLWantReadError, ssl.SSLWantWriteError))
    finally:
        b.close()
        transport.close()
