"""SocketServer end to end over real sockets on 127.0.0.1: Acceptor, Processors,
RequestChannel, and a stand-in handler (tests/network/conftest.py)."""
from __future__ import annotations

import datetime
import os
import socket
import struct
import threading

import pytest
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v4.response import FetchableTopicResponse as FetchableTopicResponseV4
from kio.schema.fetch.v4.response import FetchResponse as FetchResponseV4
from kio.schema.fetch.v4.response import PartitionData as PartitionDataV4
from kio.static.primitive import i32, i32Timedelta, i64

from kafka_py.clients.common.errors import KafkaException
from kafka_py.network.request_channel import NoOpResponse, SendResponse
from kafka_py.network.send import ByteBufferSend
from kafka_py.network.socket_server import SocketServer
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, request_schema
from kafka_py.clients.common.record.file_records import FileRecords

from ..protocol.builders import build
from .conftest import NetworkConfig, RawClient, answer_api_versions, api_versions_frame, wait_until


def network_threads() -> list[str]:
    return [t.name for t in threading.enumerate()
            if "kafka-network-thread" in t.name or "kafka-socket-acceptor" in t.name]


def assert_processors_alive(server: SocketServer) -> None:
    assert server.processors
    for processor in server.processors:
        assert processor.thread is not None and processor.thread.is_alive()


# ---- happy paths -------------------------------------------------------------------

def test_kafka_python_completes_api_versions_handshake(make_server) -> None:
    """kafka-python tries ApiVersions v4 (too new: answered with v0 UNSUPPORTED_VERSION),
    retries with v3 and reads this broker's API ranges."""
    versions_seen = []

    def respond(handler, request):
        versions_seen.append(request.api_version)
        answer_api_versions(handler.channel, request)

    server, handler = make_server(respond=respond)
    net = NetworkSelector()
    manager = KafkaConnectionManager(net, bootstrap_servers=f"127.0.0.1:{server.bound_port()}")
    try:
        node = manager.cluster.bootstrap_brokers()[0]
        conn = manager.get_connection(node.node_id)
        net.poll(timeout_ms=15000, future=conn.init_future)
        assert conn.init_future.succeeded(), conn.init_future.exception
        versions = conn.broker_version_data.api_versions
        assert versions[ApiKeys.API_VERSIONS.id] == (
            ApiKeys.API_VERSIONS.min_supported_version, ApiKeys.API_VERSIONS.max_supported_version)
        assert versions[ApiKeys.FETCH.id][1] == ApiKeys.FETCH.max_supported_version
        assert conn.broker_version == (2, 8)
    finally:
        manager.close()
        net.close()
    too_new = [v for v in versions_seen if not ApiKeys.API_VERSIONS.is_version_supported(v)]
    assert versions_seen[-1] == ApiKeys.API_VERSIONS.max_supported_version
    assert versions_seen == too_new + [versions_seen[-1]]


def test_raw_api_versions_round_trip_and_request_context(make_server) -> None:
    contexts = []

    def respond(handler, request):
        contexts.append(request.context)
        answer_api_versions(handler.channel, request)

    server, _ = make_server(respond=respond)
    client = make_server.client(server)
    header, body = client.api_versions(correlation_id=41)
    assert header.correlation_id == 41
    assert body.error_code == ErrorCode.none
    assert {k.api_key for k in body.api_keys} >= {ApiKeys.PRODUCE.id, ApiKeys.FETCH.id}
    (context,) = contexts
    local_port = client.sock.getsockname()[1]
    assert context.connection_id.startswith(f"127.0.0.1:{server.bound_port()}-127.0.0.1:{local_port}-")
    assert context.client_address == "127.0.0.1"
    assert context.listener_name == "PLAINTEXT" and context.security_protocol == "PLAINTEXT"
    assert context.client_id == "raw-client" and context.api_key is ApiKeys.API_VERSIONS


def test_unsupported_api_versions_version_gets_v0_error_answer(make_server) -> None:
    server, _ = make_server()
    client = make_server.client(server)
    header = RequestHeader.for_request(ApiKeys.API_VERSIONS, 99, 7, "future-client")
    body = b"\x05hello\x00"  # a layout this broker cannot know; it must not be parsed
    frame = header.to_bytes() + body
    client.send(struct.pack(">i", len(frame)) + frame)
    response_header, response = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 0)
    assert response_header.correlation_id == 7
    assert response.error_code == Errors.UNSUPPORTED_VERSION.error_code
    (entry,) = response.api_keys
    assert (entry.api_key, entry.min_version, entry.max_version) == (
        ApiKeys.API_VERSIONS.id, ApiKeys.API_VERSIONS.min_supported_version,
        ApiKeys.API_VERSIONS.max_supported_version)
    # The connection stays usable for the retry.
    assert client.api_versions(8)[1].error_code == ErrorCode.none


def test_pipelined_requests_are_handled_one_at_a_time_and_answered_in_order(make_server) -> None:
    """Three requests written at once on one connection: the handler holds the first
    while another connection is served; the second is not read before the first is
    answered, and the answers come back in request order."""
    release = threading.Event()
    held = threading.Event()

    def respond(handler, request):
        if request.correlation_id == 1:
            held.set()
            assert release.wait(15)
        handler.record("respond", request.context.connection_id, request.correlation_id)
        answer_api_versions(handler.channel, request)

    server, handler = make_server(respond=respond, handler_threads=3)
    pipelined = make_server.client(server)
    pipelined.send(b"".join(api_versions_frame(c) for c in (1, 2, 3)))
    assert held.wait(15)
    other = make_server.client(server)
    assert other.api_versions(100)[0].correlation_id == 100
    # While request 1 is held, nothing else from its connection reached the handlers.
    pipelined_id = next(e[1] for e in handler.received() if e[2] == 1)
    assert [e[2] for e in handler.received() if e[1] == pipelined_id] == [1]
    release.set()
    correlation_ids = []
    for _ in range(3):
        header, _ = decode_response(pipelined.read_frame(), ApiKeys.API_VERSIONS, 3)
        correlation_ids.append(header.correlation_id)
    assert correlation_ids == [1, 2, 3]
    with handler.cond:
        events = [(e[0], e[2]) for e in handler.events if e[1] == pipelined_id]
    assert events == [("recv", 1), ("respond", 1), ("recv", 2), ("respond", 2),
                      ("recv", 3), ("respond", 3)]


def test_noop_response_unmutes_for_the_next_pipelined_request(make_server) -> None:
    server, handler = make_server()  # non-ApiVersions requests get a NoOpResponse
    client = make_server.client(server)
    metadata = request_schema(ApiKeys.METADATA, 1)(topics=None)
    client.send_request(ApiKeys.METADATA, 1, 5, metadata)
    client.send_api_versions(6)
    header, _ = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
    assert header.correlation_id == 6
    assert [e[2] for e in handler.received()] == [5, 6]


def test_many_connections_spread_over_processors(make_server) -> None:
    server, handler = make_server(num_network_threads=3)
    clients = [make_server.client(server) for _ in range(24)]
    for round_ in range(3):
        for i, client in enumerate(clients):
            client.send_api_versions(round_ * 1000 + i)
        for i, client in enumerate(clients):
            header, body = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
            assert header.correlation_id == round_ * 1000 + i
            assert body.error_code == ErrorCode.none
    assert {e[3] for e in handler.received()} == {0, 1, 2}
    assert server.connection_count("127.0.0.1") == 24


def test_fetch_response_with_file_region_arrives_byte_exact_through_slow_reader(
        make_server, tmp_path) -> None:
    """A FetchResponse whose records are a FileRecords slice goes out with sendfile;
    with small socket buffers and a reader that has not started reading, the send
    stalls part way (partial writes), then resumes at the right byte."""
    data = os.urandom(3 * 1024 * 1024 + 17)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    file_records = FileRecords.open(path, file_already_exists=True)
    start, size = 1001, 2 * 1024 * 1024 + 333
    region = file_records.slice(start, size)
    sends = []

    def respond(handler, request):
        if request.api_key is not ApiKeys.FETCH:
            return answer_api_versions(handler.channel, request)
        assert request.api_version == 4
        response = FetchResponseV4(
            throttle_time=i32Timedelta.parse(datetime.timedelta(0)),
            responses=(FetchableTopicResponseV4(topic="t", partitions=(PartitionDataV4(
                partition_index=i32(0), error_code=ErrorCode.none, high_watermark=i64(10),
                last_stable_offset=i64(10), aborted_transactions=None, records=region),)),),
        )
        send = request.build_response_send(response)
        sends.append(send)
        handler.channel.send_response(SendResponse(request, send))

    server, _ = make_server(respond=respond, socket_send_buffer_bytes=8192)
    client = make_server.client(server, receive_buffer=4096)
    fetch = build(request_schema(ApiKeys.FETCH, 4))
    client.send_request(ApiKeys.FETCH, 4, 77, fetch)
    wait_until(lambda: sends)
    processor_channels = [c for p in server.processors for c in p.selector.channels()]
    # The send is parked on the connection waiting for the socket to drain.
    wait_until(lambda: any(c.send is not None for c in processor_channels))
    assert not sends[0].completed
    frame = client.read_frame()
    header, response = decode_response(frame, ApiKeys.FETCH, 4)
    assert header.correlation_id == 77
    records = response.responses[0].partitions[0].records
    assert bytes(records) == data[start:start + size]
    wait_until(lambda: sends[0].completed)
    # The connection is usable afterwards.
    assert client.api_versions(78)[0].correlation_id == 78
    file_records.close()


# ---- bad input ---------------------------------------------------------------------

_TRUNCATED = api_versions_frame(3)[4:-3]
_NOT_SERVED = next((api for api in ApiKeys if not api.implemented
                    and api.request_header_version(0) == 1), None)
BAD_INPUTS = {
    "garbage header": struct.pack(">i", 9) + b"\xde\xadgarbage",
    "negative size": struct.pack(">i", -5) + b"xxxx",
    "oversize size": struct.pack(">i", 2 * 1024 * 1024) + b"x" * 100,
    "empty frame": struct.pack(">i", 0),
    "unknown api key": struct.pack(">i", 10) + struct.pack(">hhih", 999, 0, 1, 0),
    "unsupported metadata version": struct.pack(">i", 10) + struct.pack(">hhih", 3, 99, 1, 0),
    "truncated body": struct.pack(">i", len(_TRUNCATED)) + _TRUNCATED,
}
if _NOT_SERVED is not None:
    BAD_INPUTS["api not served"] = struct.pack(">i", 10) + struct.pack(">hhih", _NOT_SERVED, 0, 1, 0)


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_closes_only_that_connection(make_server, name) -> None:
    server, _ = make_server(socket_request_max_bytes=1024 * 1024)
    good = make_server.client(server)
    assert good.api_versions(1)[1].error_code == ErrorCode.none
    bad = make_server.client(server)
    bad.send(BAD_INPUTS[name])
    assert bad.wait_closed()
    wait_until(lambda: server.connection_count("127.0.0.1") == 1)
    assert good.api_versions(2)[1].error_code == ErrorCode.none
    assert_processors_alive(server)


def test_truncated_frame_then_close_is_cleaned_up(make_server) -> None:
    server, handler = make_server()
    good = make_server.client(server)
    assert good.api_versions(1)[0].correlation_id == 1
    for _ in range(5):
        bad = RawClient(server.bound_port())
        bad.send(struct.pack(">i", 100) + b"0123456789")
        bad.close()
    wait_until(lambda: server.connection_count("127.0.0.1") == 1)
    assert good.api_versions(2)[0].correlation_id == 2
    assert len(handler.received()) == 2
    assert_processors_alive(server)


def test_complete_request_then_close_is_still_handled(make_server) -> None:
    server, handler = make_server()
    client = RawClient(server.bound_port())
    client.send(api_versions_frame(9) + api_versions_frame(10)[:7])
    client.close()
    handler.wait_for(lambda: [e for e in handler.events if e[0] == "recv"])
    wait_until(lambda: server.connection_count("127.0.0.1") == 0)
    assert [e[2] for e in handler.received()] == [9]


def test_handler_close_connection_response_closes(make_server) -> None:
    server, _ = make_server(respond=lambda handler, request: handler.channel.close_connection(request))
    client = make_server.client(server)
    client.send_api_versions(1)
    assert client.wait_closed()
    wait_until(lambda: server.connection_count("127.0.0.1") == 0)


def test_response_to_a_closed_connection_is_dropped(make_server) -> None:
    release = threading.Event()
    answered = threading.Event()

    def respond(handler, request):
        if request.correlation_id == 1:
            assert release.wait(15)
        answer_api_versions(handler.channel, request)
        answered.set()

    server, _ = make_server(respond=respond)
    client = RawClient(server.bound_port())
    client.send_api_versions(1)
    client.close()
    release.set()
    assert answered.wait(15)
    wait_until(lambda: server.connection_count("127.0.0.1") == 0)
    other = make_server.client(server)
    assert other.api_versions(2)[0].correlation_id == 2
    assert_processors_alive(server)


# ---- limits ------------------------------------------------------------------------

def test_idle_connection_is_closed(make_server) -> None:
    server, _ = make_server(connections_max_idle_ms=200)
    client = make_server.client(server)
    assert client.api_versions(1)[0].correlation_id == 1
    assert client.wait_closed()
    wait_until(lambda: server.connection_count("127.0.0.1") == 0)


def test_max_connections_per_ip(make_server) -> None:
    server, _ = make_server(max_connections_per_ip=2)
    first, second = make_server.client(server), make_server.client(server)
    assert first.api_versions(1)[0].correlation_id == 1
    assert second.api_versions(2)[0].correlation_id == 2
    third = make_server.client(server)
    assert third.wait_closed()
    assert server.connection_count("127.0.0.1") == 2
    first.close()
    wait_until(lambda: server.connection_count("127.0.0.1") == 1)
    fourth = make_server.client(server)
    assert fourth.api_versions(4)[0].correlation_id == 4


def test_max_connections_per_ip_override(make_server) -> None:
    server, _ = make_server(max_connections_per_ip=1,
                            max_connections_per_ip_overrides="127.0.0.1:3,10.0.0.1:5")
    clients = [make_server.client(server) for _ in range(3)]
    for i, client in enumerate(clients):
        assert client.api_versions(i)[0].correlation_id == i
    extra = make_server.client(server)
    assert extra.wait_closed()
    assert server.connection_quotas.get("10.0.0.1") == 0


def test_broker_max_connections_makes_the_acceptor_wait(make_server) -> None:
    server, _ = make_server(max_connections=1)
    first = make_server.client(server)
    assert first.api_versions(1)[0].correlation_id == 1
    waiting = make_server.client(server)  # connected in the listen backlog only
    waiting.send_api_versions(2)
    assert first.api_versions(3)[0].correlation_id == 3
    assert server.connection_count("127.0.0.1") == 1
    first.close()
    header, _ = decode_response(waiting.read_frame(), ApiKeys.API_VERSIONS, 3)
    assert header.correlation_id == 2
    assert server.connection_count("127.0.0.1") == 1


def test_request_queue_back_pressure(make_server) -> None:
    """With a one-slot request queue and a stalled handler, requests wait in the
    Processor (and the sockets) and are all answered once the handler moves."""
    release = threading.Event()

    def respond(handler, request):
        assert release.wait(15)
        answer_api_versions(handler.channel, request)

    server, _ = make_server(respond=respond, queued_max_requests=1, num_network_threads=1)
    clients = [make_server.client(server) for _ in range(4)]
    for i, client in enumerate(clients):
        client.send_api_versions(i)
    wait_until(lambda: server.request_channel.request_queue_size == 1)
    release.set()
    for i, client in enumerate(clients):
        header, _ = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
        assert header.correlation_id == i


# ---- lifecycle ---------------------------------------------------------------------

def test_startup_without_processing_binds_but_serves_later(make_server) -> None:
    server, _ = make_server(start_processing_requests=False)
    port = server.bound_port()
    assert port > 0
    assert all(p.thread is None for p in server.processors)
    assert not network_threads()
    client = RawClient(port)  # queued in the listen backlog
    client.send_api_versions(1)
    server.start_processing_requests()
    header, _ = decode_response(client.read_frame(), ApiKeys.API_VERSIONS, 3)
    assert header.correlation_id == 1
    client.close()


def test_shutdown_joins_threads_and_closes_everything() -> None:
    config = NetworkConfig(num_network_threads=3,
                           listeners=("PLAINTEXT://127.0.0.1:0", "INTERNAL://127.0.0.1:0"),
                           listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT")
    server = SocketServer(config)
    server.startup()
    assert len(network_threads()) == 2 * (3 + 1)
    ports = [server.bound_port("PLAINTEXT"), server.bound_port("INTERNAL")]
    assert ports[0] != ports[1]
    clients = [RawClient(port) for port in ports]
    for client in clients:
        client.send_api_versions(1)
    wait_until(lambda: server.request_channel.request_queue_size == 2)
    request = server.request_channel.receive_request(1000)
    assert request.context.listener_name in ("PLAINTEXT", "INTERNAL")
    server.shutdown()
    assert not network_threads()
    for client in clients:
        assert client.wait_closed()
        client.close()
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert server.connection_count("127.0.0.1") == 0
    assert server.request_channel.request_queue_size == 0
    # A response for a connection of a stopped server goes nowhere, quietly.
    server.request_channel.send_response(NoOpResponse(request))
    server.request_channel.send_response(SendResponse(request, ByteBufferSend(b"x")))


def test_shutdown_of_a_server_that_never_served() -> None:
    server = SocketServer(NetworkConfig())
    server.startup(start_processing_requests=False)
    port = server.bound_port()
    server.shutdown()
    assert not network_threads()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_bound_port_of_unknown_listener() -> None:
    server = SocketServer(NetworkConfig())
    with pytest.raises(KafkaException):
        server.bound_port()
    server.startup(start_processing_requests=False)
    try:
        with pytest.raises(KafkaException):
            server.bound_port("NOPE")
    finally:
        server.shutdown()


def test_bind_failure_names_the_address() -> None:
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    try:
        port = blocker.getsockname()[1]
        server = SocketServer(NetworkConfig(listeners=(f"PLAINTEXT://127.0.0.1:{port}",)))
        with pytest.raises(KafkaException, match=f"failed to bind to 127.0.0.1:{port}"):
            server.startup()
        server.shutdown()
    finally:
        blocker.close()


def test_resize_network_thread_pool(make_server) -> None:
    server, handler = make_server(num_network_threads=1)
    server.resize_thread_pool(1, 3)
    assert len([t for t in network_threads() if "network-thread" in t]) == 3
    clients = [make_server.client(server) for _ in range(6)]
    for i, client in enumerate(clients):
        assert client.api_versions(i)[0].correlation_id == i
    assert {e[3] for e in handler.received()} == {0, 1, 2}
    server.resize_thread_pool(3, 1)
    assert len([t for t in network_threads() if "network-thread" in t]) == 1
    late = make_server.client(server)
    assert late.api_versions(99)[0].correlation_id == 99
