"""ReplicaFetcherBlockingSend over real sockets: replica.socket.timeout.ms bounds the connect
(a socket timeout, as Kafka's SocketTimeoutException), replica.socket.receive.buffer.bytes is
the socket's receive buffer, a failed request drops the connection and the next one
reconnects, and initiate_close ends a pending connect at once."""
from __future__ import annotations

import socket
import threading

import pytest

from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.replica_fetcher_blocking_send import ReplicaFetcherBlockingSend
from kafka_py.clients.common.utils.time import Time
from tests.clients.test_network_client import WAIT, Server, api_versions_request, full_listener  # noqa: F401


def config(**overrides: str) -> KafkaConfig:
    props = {"broker.id": "5", "zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:9092"}
    props.update(overrides)
    return KafkaConfig(props, do_log=False)


def blocking_send(port: int, **overrides: str) -> ReplicaFetcherBlockingSend:
    return ReplicaFetcherBlockingSend(BrokerEndPoint(7, "127.0.0.1", port), config(**overrides), Time.SYSTEM,
                                      fetcher_id=0, client_id="broker-5-fetcher-0")


def test_requests_and_the_receive_buffer() -> None:
    server = Server()
    sender = blocking_send(server.port, **{"replica.socket.receive.buffer.bytes": "32768"})
    try:
        response = sender.send_request(ApiKeys.API_VERSIONS, 3, api_versions_request())
        assert response.response_body.error_code == 0
        fd = sender.network_client.fileno()
        with socket.socket(fileno=socket.dup(fd)) as view:
            # Linux doubles what is asked for, to leave room for its bookkeeping
            assert view.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) in (32768, 65536)
    finally:
        sender.close()
        server.close()


def test_a_failed_request_drops_the_connection_and_the_next_reconnects() -> None:
    server = Server(answer=False)
    sender = blocking_send(server.port, **{"request.timeout.ms": "300", "replica.fetch.wait.max.ms": "100",
                                          "replica.socket.timeout.ms": "5000"})
    try:
        with pytest.raises(OSError):
            sender.send_request(ApiKeys.API_VERSIONS, 3, api_versions_request())
        assert sender.network_client.fileno() == -1
        server.answer = True
        assert sender.send_request(ApiKeys.API_VERSIONS, 3, api_versions_request()).response_body.error_code == 0
        assert server.connections == 2
    finally:
        sender.close()
        server.close()


def test_connect_bounded_by_the_replica_socket_timeout(full_listener) -> None:  # noqa: F811
    sender = blocking_send(full_listener, **{"replica.socket.timeout.ms": "200", "replica.fetch.wait.max.ms": "100"})
    try:
        with pytest.raises(socket.timeout, match="Failed to connect within 200 ms"):
            sender.send_request(ApiKeys.API_VERSIONS, 3, api_versions_request())
    finally:
        sender.close()


def test_initiate_close_ends_a_pending_connect(full_listener) -> None:  # noqa: F811
    sender = blocking_send(full_listener)  # replica.socket.timeout.ms 30 s
    outcome = []

    def send() -> None:
        try:
            outcome.append(sender.send_request(ApiKeys.API_VERSIONS, 3, api_versions_request()))
        except BaseException as e:  # noqa: BLE001
            outcome.append(e)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    thread.join(0.3)
    assert thread.is_alive()
    sender.initiate_close()
    thread.join(WAIT)
    assert not thread.is_alive() and isinstance(outcome[0], OSError)
    sender.close()
