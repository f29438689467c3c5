"""Shared pieces of the network tests: a config, a stand-in request handler, a raw client.

KafkaRequestHandler and KafkaApis live elsewhere; ``HandlerThreads`` plays their part
here: it takes requests off the RequestChannel and answers them (ApiVersions with this
broker's answer, anything else as the test says), recording what it saw and did.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import pytest

from kafka_py.core.cluster.broker import EndPoint, ListenerName, SecurityProtocol
from kafka_py.network.request_channel import Request, RequestChannel
from kafka_py.network.socket_server import SocketServer
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_response,
    encode_request,
    request_schema,
    unsupported_api_versions_response,
)
from kafka_py.core.utils.java_limits import INT_MAX

WAIT_S = 15.0


@dataclass(frozen=True)
class NetworkConfig:
    """The attributes SocketServer reads from a KafkaConfig. ``listeners`` may be given as
    ``NAME://host:port`` strings (``listener_security_protocol_map`` as Kafka's
    ``NAME:PROTOCOL,...``); they are parsed once, into EndPoints, as KafkaConfig does."""

    listeners: tuple = ("PLAINTEXT://127.0.0.1:0",)
    listener_security_protocol_map: str = ""
    inter_broker_listener_name: Optional[ListenerName] = None
    inter_broker_security_protocol: SecurityProtocol = SecurityProtocol.PLAINTEXT
    control_plane_listener_name: Optional[ListenerName] = None
    control_plane_security_protocol: Optional[SecurityProtocol] = None
    sasl_mechanism_inter_broker_protocol: str = "GSSAPI"
    max_connection_creation_rate: int = INT_MAX
    num_quota_samples: int = 11
    quota_window_size_seconds: int = 1
    metric_num_samples: int = 2
    metric_sample_window_ms: int = 30000
    originals: dict = field(default_factory=dict)
    num_network_threads: int = 2
    queued_max_requests: int = 500
    socket_send_buffer_bytes: int = 102400
    socket_receive_buffer_bytes: int = 102400
    socket_request_max_bytes: int = 100 * 1024 * 1024
    max_connections_per_ip: int = INT_MAX
    max_connections_per_ip_overrides: str = ""
    max_connections: int = INT_MAX
    connections_max_idle_ms: int = 600000
    broker_id: int = 0

    def __post_init__(self) -> None:
        protocols = {ListenerName.normalised(name): SecurityProtocol.for_name(protocol)
                     for name, protocol in (item.strip().rsplit(":", 1)
                                            for item in self.listener_security_protocol_map.split(",") if item.strip())}
        object.__setattr__(self, "listeners", tuple(
            EndPoint.create_end_point(listener, protocols or None) if isinstance(listener, str) else listener
            for listener in self.listeners))


def wait_until(predicate: Callable[[], Any], timeout_s: float = WAIT_S, message: str = "") -> Any:
    """Poll ``predicate`` until it is truthy (as Kafka's TestUtils.waitUntilTrue)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message or f"condition not met within {timeout_s}s")
        time.sleep(0.01)


def answer_api_versions(channel: RequestChannel, request: Request) -> None:
    if request.context.is_unsupported_api_versions_request:
        response = unsupported_api_versions_response()
    else:
        response = api_versions_response(request.api_version)
    channel.send_response(request, response)


class HandlerThreads:
    """Request handler threads for tests.

    ``respond(handler, request)`` answers a request; by default ApiVersions gets the
    broker's answer and any other request a NoOpResponse. Every request taken is
    recorded in ``events`` as ("recv", connection_id, correlation_id, processor).
    """

    def __init__(self, channel: RequestChannel,
                 respond: Optional[Callable[["HandlerThreads", Request], None]] = None,
                 threads: int = 1) -> None:
        self.channel = channel
        self.respond = respond or HandlerThreads.default_respond
        self.events: list[tuple] = []
        self.cond = threading.Condition()
        self.errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._run, name=f"test-handler-{i}", daemon=True)
            for i in range(threads)
        ]

    @staticmethod
    def default_respond(handler: "HandlerThreads", request: Request) -> None:
        if request.api_key is ApiKeys.API_VERSIONS:
            answer_api_versions(handler.channel, request)
        else:
            handler.channel.send_no_op_response(request)

    def record(self, *event: Any) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[], Any], timeout_s: float = WAIT_S) -> Any:
        with self.cond:
            result = self.cond.wait_for(predicate, timeout_s)
        assert result, "handler condition not met"
        return result

    def received(self) -> list[tuple]:
        with self.cond:
            return [e for e in self.events if e[0] == "recv"]

    def start(self) -> "HandlerThreads":
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        for _ in self._threads:
            self.channel.send_shutdown_request()
        for t in self._threads:
            t.join(WAIT_S)

    def _run(self) -> None:
        while True:
            request = self.channel.receive_request(300)
            if request is None:
                continue
            if request is RequestChannel.ShutdownRequest:
                return
            self.record("recv", request.context.connection_id, request.correlation_id,
                        request.processor)
            try:
                self.respond(self, request)
            except BaseException as e:  # recorded for the test to see
                self.errors.append(e)
                self.channel.close_connection(request)


class RawClient:
    """A blocking socket speaking size-prefixed frames."""

    def __init__(self, port: int, receive_buffer: Optional[int] = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(WAIT_S)
        self.sock.connect(("127.0.0.1", port))

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_request(self, api_key: ApiKeys, version: int, correlation_id: int, body: Any) -> None:
        header = RequestHeader.for_request(api_key, version, correlation_id, "raw-client")
        self.send(encode_request(header, body))

    def send_api_versions(self, correlation_id: int, version: int = 3) -> None:
        self.send(api_versions_frame(correlation_id, version))

    def recv_exactly(self, n: int, chunk: int = 1 << 16) -> bytes:
        out = bytearray()
        while len(out) < n:
            data = self.sock.recv(min(chunk, n - len(out)))
            if not data:
                raise ConnectionError(f"closed after {len(out)} of {n} bytes")
            out += data
        return bytes(out)

    def read_frame(self) -> bytes:
        (size,) = struct.unpack(">i", self.recv_exactly(4))
        return self.recv_exactly(size)

    def api_versions(self, correlation_id: int, version: int = 3) -> Any:
        """A full ApiVersions round trip; returns (response header, body)."""
        self.send_api_versions(correlation_id, version)
        return decode_response(self.read_frame(), ApiKeys.API_VERSIONS, version)

    def wait_closed(self) -> bool:
        """True once the broker has closed the connection (EOF or reset)."""
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self) -> None:
        self.sock.close()


def api_versions_frame(correlation_id: int, version: int = 3) -> bytes:
    schema = request_schema(ApiKeys.API_VERSIONS, version)
    body = (schema(client_software_name="raw", client_software_version="1.0")
            if version >= 3 else schema())
    header = RequestHeader.for_request(ApiKeys.API_VERSIONS, version, correlation_id, "raw-client")
    return encode_request(header, body)


class ServerFactory:
    def __init__(self) -> None:
        self._servers: list[SocketServer] = []
        self._handlers: list[HandlerThreads] = []
        self._clients: list[RawClient] = []

    def __call__(self, respond: Optional[Callable] = None, handler_threads: int = 1,
                 start_processing_requests: bool = True, **overrides: Any
                 ) -> tuple[SocketServer, HandlerThreads]:
        config = replace(NetworkConfig(), **overrides)
        server = SocketServer(config)
        self._servers.append(server)
        server.startup(start_processing_requests=start_processing_requests)
        handler = HandlerThreads(server.request_channel, respond, handler_threads).start()
        self._handlers.append(handler)
        return server, handler

    def client(self, server: SocketServer, **kwargs: Any) -> RawClient:
        client = RawClient(server.bound_port(), **kwargs)
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in self._clients:
            client.close()
        for handler in self._handlers:
            handler.stop()
        for server in self._servers:
            server.shutdown()
        for handler in self._handlers:
            assert not handler.errors, handler.errors


@pytest.fixture
def make_server():
    factory = ServerFactory()
    yield factory
    factory.close()
