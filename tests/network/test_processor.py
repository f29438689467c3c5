"""Processor on its own: one network thread, a RequestChannel and connections handed to it
directly (no SocketServer, no Acceptor). Each connection is a real loopback TCP pair: the
server end goes to ``Processor.accept`` as the Acceptor would give it, the client end is
read and written by the test.
"""
from __future__ import annotations

import socket
import struct

import pytest

from kafka_py.network.connection_quotas import ConnectionQuotas
from kafka_py.network.processor import Processor
from kafka_py.network.request_channel import Request, RequestChannel
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import api_versions_response, decode_response
from kafka_py.tuning.wakeups import call_with_deferred_wakeups
from kafka_py.clients.common.utils.time import Time

from .conftest import WAIT_S, NetworkConfig, api_versions_frame, wait_until

LISTENER = "PLAINTEXT"


class Client:
    """The client end of a connection the Processor owns."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.settimeout(WAIT_S)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        head = self._exactly(4)
        (size,) = struct.unpack(">i", head)
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            data = self.sock.recv(n - len(out))
            if not data:
                raise ConnectionError(f"closed after {len(out)} of {n} bytes")
            out += data
        return bytes(out)

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


class Env:
    def __init__(self) -> None:
        self.config = NetworkConfig()
        self.quotas = ConnectionQuotas(self.config)
        self.quotas.add_listener(LISTENER)
        self.channel = RequestChannel(20)
        self.processor = Processor(7, Time.SYSTEM, 1 << 20, self.channel, self.quotas, 600_000,
                                   LISTENER, "PLAINTEXT", self.config)
        self.channel.add_processor(self.processor)
        self.processor.start_thread("test-network-thread-7")
        self.processor.await_startup()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.clients: list[Client] = []

    def connect(self) -> Client:
        client = socket.create_connection(self._listener.getsockname(), timeout=WAIT_S)
        server_side, (address, port) = self._listener.accept()
        server_side.setblocking(False)
        assert self.quotas.inc(LISTENER, address)  # as the Acceptor counts it before handing it on
        assert self.processor.accept(server_side, address, port, may_block=False)
        wrapped = Client(client)
        self.clients.append(wrapped)
        return wrapped

    def next_request(self, timeout_ms: float = WAIT_S * 1000) -> Request:
        request = self.channel.receive_request(timeout_ms)
        assert request is not None, "no request reached the channel"
        return request

    def close(self) -> None:
        for client in self.clients:
            client.sock.close()
        self.processor.shutdown()
        self._listener.close()
        self.channel.shutdown()


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def test_a_request_reaches_the_channel_and_its_response_the_client(env):
    client = env.connect()
    client.send(api_versions_frame(41, 3))
    request = env.next_request()
    assert request.processor == 7
    assert request.api_key is ApiKeys.API_VERSIONS and request.api_version == 3
    assert request.correlation_id == 41
    assert request.context.listener_name == LISTENER
    # localHost:localPort-remoteHost:remotePort-index, as Kafka names connections
    local, remote, index = request.context.connection_id.split("-")
    assert local.startswith("127.0.0.1:") and remote.startswith("127.0.0.1:") and index.isdigit()
    assert request.context.client_address == "127.0.0.1"

    env.channel.send_response(request, api_versions_response(3))
    header, body = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
    assert header.correlation_id == 41
    assert any(k.api_key == ApiKeys.PRODUCE.value for k in body.api_keys)


def test_a_request_carries_the_client_software_its_connection_named_in_api_versions(env):
    client = env.connect()
    client.send(api_versions_frame(1, 3))
    first = env.next_request()
    # as in Kafka, the ApiVersions that names the software still shows what the connection had
    assert tuple(first.context.client_information) == ("unknown", "unknown")
    env.channel.send_response(first, api_versions_response(3))
    client.read_frame()
    client.send(api_versions_frame(2, 3))
    second = env.next_request()
    assert tuple(second.context.client_information) == ("raw", "1.0")
    env.channel.send_response(second, api_versions_response(3))
    client.read_frame()


def test_one_request_at_a_time_per_connection(env):
    client = env.connect()
    client.send(api_versions_frame(1, 3) + api_versions_frame(2, 3))
    first = env.next_request()
    assert first.correlation_id == 1
    # The connection is muted until the first request is answered.
    assert env.channel.receive_request(300) is None
    env.channel.send_response(first, api_versions_response(3))
    assert decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 1
    second = env.next_request()
    assert second.correlation_id == 2
    env.channel.send_response(second, api_versions_response(3))
    assert decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 2


def test_a_no_op_response_writes_nothing_and_reads_the_next_request(env):
    client = env.connect()
    client.send(api_versions_frame(1, 3) + api_versions_frame(2, 3))
    env.channel.send_no_op_response(env.next_request())
    second = env.next_request()
    assert second.correlation_id == 2
    env.channel.send_response(second, api_versions_response(3))
    # The first frame the client sees is the answer to the second request.
    assert decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 2


def test_connections_are_served_independently(env):
    a, b = env.connect(), env.connect()
    a.send(api_versions_frame(10, 3))
    b.send(api_versions_frame(20, 3))
    requests = {r.correlation_id: r for r in (env.next_request(), env.next_request())}
    assert set(requests) == {10, 20}
    assert requests[10].context.connection_id != requests[20].context.connection_id
    # Answered in the other order: each client gets its own.
    env.channel.send_response(requests[20], api_versions_response(3))
    env.channel.send_response(requests[10], api_versions_response(3))
    assert decode_response(b.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 20
    assert decode_response(a.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 10


def test_responses_queued_with_deferred_wakeups_wake_the_processor_once_at_the_end(env):
    a, b = env.connect(), env.connect()
    a.send(api_versions_frame(10, 3))
    b.send(api_versions_frame(20, 3))
    requests = {r.correlation_id: r for r in (env.next_request(), env.next_request())}
    wakeups = []
    selector = env.processor._selector
    real_wakeup = selector.wakeup
    selector.wakeup = lambda: (wakeups.append(1), real_wakeup())

    def answer_both() -> None:
        env.channel.send_response(requests[10], api_versions_response(3))
        # nested: the outer call does the waking
        call_with_deferred_wakeups(lambda: env.channel.send_response(requests[20], api_versions_response(3)))
        assert wakeups == []

    call_with_deferred_wakeups(answer_both)
    # woken once for both (none if its poll had just timed out and it found them itself)
    assert len(wakeups) <= 1
    assert decode_response(a.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 10
    assert decode_response(b.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 20


def test_close_connection_closes_the_socket_and_uncounts_it(env):
    client = env.connect()
    assert env.quotas.get("127.0.0.1") == 1
    client.send(api_versions_frame(5, 3))
    env.channel.close_connection(env.next_request())
    assert client.closed_by_peer()
    wait_until(lambda: env.quotas.get("127.0.0.1") == 0, message="connection still counted")


def test_a_client_that_goes_away_is_uncounted(env):
    client = env.connect()
    client.send(api_versions_frame(5, 3))
    request = env.next_request()
    client.sock.close()
    # Muted while its request is handled, the connection is not read: the close is seen
    # once the response is written (or the connection unmuted and read again).
    env.channel.send_response(request, api_versions_response(3))
    wait_until(lambda: env.quotas.get("127.0.0.1") == 0, message="closed connection still counted")
    # The Processor keeps serving others.
    other = env.connect()
    other.send(api_versions_frame(6, 3))
    second = env.next_request()
    env.channel.send_response(second, api_versions_response(3))
    assert decode_response(other.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 6


def test_an_unparsable_request_closes_only_its_connection(env):
    bad, good = env.connect(), env.connect()
    garbage = b"\x7f\xff\x00\x00\x00\x00\x00\x01junk"  # api key 32767: no such API
    bad.send(struct.pack(">i", len(garbage)) + garbage)
    assert bad.closed_by_peer()
    good.send(api_versions_frame(9, 3))
    request = env.next_request()
    assert request.correlation_id == 9
    env.channel.send_response(request, api_versions_response(3))
    assert decode_response(good.read_frame(), ApiKeys.API_VERSIONS, 3)[0].correlation_id == 9
    assert env.processor.is_running


def test_an_oversized_frame_closes_the_connection(env):
    client = env.connect()
    client.send(struct.pack(">i", (1 << 20) + 1))  # past the Processor's max request size
    assert client.closed_by_peer()
    wait_until(lambda: env.quotas.get("127.0.0.1") == 0, message="connection still counted")


def test_shutdown_closes_every_connection(env):
    clients = [env.connect() for _ in range(3)]
    clients[0].send(api_versions_frame(1, 3))
    env.next_request()
    env.processor.shutdown()
    assert not env.processor.is_running
    for client in clients:
        assert client.closed_by_peer()
    assert env.quotas.get("127.0.0.1") == 0


def test_a_full_connection_queue_blocks_the_acceptor_and_the_wait_is_metered():
    """Kafka's AcceptorBlockedPercent: an Acceptor handing a connection to a Processor whose
    queue of new connections is full waits for room, and marks the nanoseconds it waited."""
    import threading

    from kafka_py.core.metrics.yammer import Meter

    config = NetworkConfig()
    quotas = ConnectionQuotas(config)
    quotas.add_listener(LISTENER)
    channel = RequestChannel(20)
    processor = Processor(8, Time.SYSTEM, 1 << 20, channel, quotas, 600_000, LISTENER, "PLAINTEXT", config,
                          connection_queue_size=1)
    channel.add_processor(processor)
    listener = socket.create_server(("127.0.0.1", 0))
    clients, accepted = [], []
    meter = Meter()
    try:
        def handed() -> tuple:
            clients.append(socket.create_connection(listener.getsockname(), timeout=WAIT_S))
            server_side, (address, port) = listener.accept()
            server_side.setblocking(False)
            assert quotas.inc(LISTENER, address)
            return server_side, address, port

        # the thread is not running yet: the queue of one fills up
        assert processor.accept(*handed(), may_block=False, blocked_meter=meter)
        second = handed()
        assert not processor.accept(*second, may_block=False, blocked_meter=meter)
        assert meter.count == 0
        waiter = threading.Thread(target=lambda: accepted.append(
            processor.accept(*second, may_block=True, blocked_meter=meter)))
        waiter.start()
        waiter.join(0.2)
        assert waiter.is_alive() and meter.count == 0  # still waiting for room
        processor.start_thread("test-network-thread-8")  # takes the first: room for the second
        waiter.join(WAIT_S)
        assert accepted == [True]
        assert meter.count > 0
        wait_until(lambda: len(processor.selector) == 2, WAIT_S, "the Processor never took both connections")
    finally:
        for client in clients:
            client.close()
        processor.shutdown()
        listener.close()
        channel.shutdown()
