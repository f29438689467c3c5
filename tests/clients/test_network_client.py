"""The broker's blocking client (kafka_py/clients) against real TCP peers on localhost: a
small server answering ApiVersions with kafka_py.clients.common.protocol, one that reads and never answers,
and a listener whose accept queue is full (so a connect to it hangs, as to a dead host)."""
from __future__ import annotations

import socket
import struct
import threading

import pytest

from kafka_py.clients.network_client import ClientClosedException, DisconnectException, NetworkClient
from kafka_py.clients.network_client_utils import await_ready, send_and_receive
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import api_versions_response, decode_request, encode_response, request_schema

WAIT = 10  # seconds a thread may take before a test gives up (never asserted as a duration)
_SIZE = struct.Struct(">i")


def _recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return bytes(data)


class Server:
    """Accepts connections and answers each ApiVersions request (``answer=False``: reads, never
    answers; ``correlation_shift``: answers with a wrong correlation id)."""

    def __init__(self, answer: bool = True, correlation_shift: int = 0) -> None:
        self.answer = answer
        self.correlation_shift = correlation_shift
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.requests = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    (size,) = _SIZE.unpack(_recv_exactly(conn, 4))
                    header, _ = decode_request(_recv_exactly(conn, size))
                    self.requests += 1
                    if not self.answer:
                        continue
                    response_header = header.to_response_header()
                    if self.correlation_shift:
                        response_header = type(response_header)(
                            header.correlation_id + self.correlation_shift, response_header.header_version)
                    conn.sendall(encode_response(response_header, api_versions_response(header.api_version)))
            except (ConnectionError, OSError):
                return

    def close(self) -> None:
        self._stop.set()
        self.listener.close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def api_versions_request():
    return request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="kafka-py", client_software_version="1")


def client_for(port: int, request_timeout_ms: int = 30000) -> NetworkClient:
    return NetworkClient(Node(7, "127.0.0.1", port), "test-client", request_timeout_ms)


def test_send_and_receive_over_one_connection(server) -> None:
    client = client_for(server.port)
    try:
        assert await_ready(client, 5000)
        for _ in range(3):
            response = send_and_receive(client, ApiKeys.API_VERSIONS, 3, api_versions_request())
            assert response.response_body.error_code == 0
            assert any(int(k.api_key) == ApiKeys.FETCH.id for k in response.response_body.api_keys)
        assert server.connections == 1 and server.requests == 3
    finally:
        client.close()


def test_a_refused_connection_raises() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        client = client_for(port)
        try:
            with pytest.raises(OSError):
                await_ready(client, 5000)
            assert not client.is_ready()
        finally:
            client.close()


@pytest.fixture
def full_listener():
    """A listener whose accept queue is full: further connects neither complete nor fail."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        # fill the queue; connects beyond it stay pending (their SYNs are dropped)
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_a_connect_that_does_not_complete_times_out(full_listener) -> None:
    client = client_for(full_listener)
    try:
        assert not await_ready(client, 200)
        assert not client.is_ready()
    finally:
        client.close()


def test_initiate_close_wakes_a_pending_connect(full_listener) -> None:
    client = client_for(full_listener)
    outcome = []

    def connect() -> None:
        try:
            outcome.append(await_ready(client, 600_000))
        except BaseException as e:  # noqa: BLE001 - the outcome is the test
            outcome.append(e)

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(0.3)
    assert thread.is_alive()  # still waiting for the connection
    client.initiate_close()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert isinstance(outcome[0], ClientClosedException)
    assert not client.active
    client.close()


def test_a_request_without_answer_times_out_and_the_next_one_reconnects() -> None:
    silent = Server(answer=False)
    client = client_for(silent.port, request_timeout_ms=300)
    try:
        assert await_ready(client, 5000)
        with pytest.raises(DisconnectException, match="request timeout"):
            send_and_receive(client, ApiKeys.API_VERSIONS, 3, api_versions_request())
        assert not client.is_ready()
        silent.answer = True
        assert await_ready(client, 5000)
        assert send_and_receive(client, ApiKeys.API_VERSIONS, 3, api_versions_request()).response_body.error_code == 0
        assert silent.connections == 2
    finally:
        client.close()
        silent.close()


def test_a_response_for_another_request_drops_the_connection() -> None:
    confused = Server(correlation_shift=1)
    client = client_for(confused.port)
    try:
        assert await_ready(client, 5000)
        with pytest.raises(DisconnectException, match="Correlation id"):
            send_and_receive(client, ApiKeys.API_VERSIONS, 3, api_versions_request())
        assert not client.is_ready()
    finally:
        client.close()
        confused.close()


def test_initiate_close_wakes_a_wait_for_a_response() -> None:
    silent = Server(answer=False)
    client = client_for(silent.port)
    outcome = []

    def request() -> None:
        try:
            outcome.append(send_and_receive(client, ApiKeys.API_VERSIONS, 3, api_versions_request()))
        except BaseException as e:  # noqa: BLE001
            outcome.append(e)

    try:
        assert await_ready(client, 5000)
        thread = threading.Thread(target=request, daemon=True)
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()
        client.initiate_close()
        thread.join(WAIT)
        assert not thread.is_alive()
        assert isinstance(outcome[0], OSError) and "shutdown" in str(outcome[0])
    finally:
        client.close()
        silent.close()
