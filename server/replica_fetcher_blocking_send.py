"""Port of core/src/main/scala/kafka/server/ReplicaFetcherBlockingSend.scala (Kafka 2.8.2).

A replica fetcher's connection to the leader it fetches from: one NetworkClient
(kafka_py/clients/network_client.py) to that broker's inter-broker listener, used one
request at a time (Fetch, OffsetsForLeaderEpoch, ListOffsets) through
NetworkClientUtils' blocking ``await_ready`` and ``send_and_receive``.

* connecting waits at most ``replica.socket.timeout.ms``; not connected by then is a
  SocketTimeoutException (``socket.timeout`` here), as in Kafka;
* the connection speaks the inter-broker listener's security protocol: TLS with the
  listener's key and trust stores, SASL with ``sasl.mechanism.inter.broker.protocol`` and
  the broker's own credentials (network/channel_builders.py, ``inter_broker_client_channel_builder``);
* the socket's receive buffer is ``replica.socket.receive.buffer.bytes`` (-1: the kernel's);
* a request must be answered within ``request.timeout.ms``;
* after any failure the connection is dropped, and the next request connects again;
* ``initiate_close`` (the fetcher thread's ``initiate_shutdown``) wakes a connect or a read
  in progress at once, and ``close`` (after the thread has stopped) releases the socket.
"""
from __future__ import annotations

import abc
import logging
import socket
from typing import Any

from kafka_py.clients.network_client import ClientResponse, NetworkClient
from kafka_py.clients.network_client_utils import await_ready, send_and_receive
from kafka_py.core.cluster.broker import BrokerEndPoint, Node
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class BlockingSend(abc.ABC):
    """What a replica fetcher needs of its connection to the leader (Kafka's BlockingSend trait)."""

    @abc.abstractmethod
    def send_request(self, api_key: ApiKeys, api_version: int, body: Any) -> ClientResponse:
        """Send one request and wait for its response; raises on any failure."""

    @abc.abstractmethod
    def initiate_close(self) -> None:
        """From any thread: make a blocked ``send_request`` give up at once."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; the sender is not used again."""


class ReplicaFetcherBlockingSend(BlockingSend):
    def __init__(self, source_broker: BrokerEndPoint, broker_config: Any, time: Time, fetcher_id: int,
                 client_id: str, log_prefix: str = "") -> None:
        self.source_broker = source_broker
        self.fetcher_id = fetcher_id
        self._socket_timeout_ms = broker_config.replica_socket_timeout_ms
        self.logger = IdentLogger(logger, log_prefix)
        self.network_client = NetworkClient(
            Node(source_broker.id, source_broker.host, source_broker.port), client_id,
            request_timeout_ms=broker_config.request_timeout_ms,
            socket_receive_buffer=broker_config.replica_socket_receive_buffer_bytes, time=time,
            channel_builder=inter_broker_client_channel_builder(broker_config))

    def send_request(self, api_key: ApiKeys, api_version: int, body: Any) -> ClientResponse:
        client = self.network_client
        try:
            if not await_ready(client, self._socket_timeout_ms):
                raise socket.timeout(f"Failed to connect within {self._socket_timeout_ms} ms")
            return send_and_receive(client, api_key, api_version, body)
        except BaseException:
            # whatever went wrong, the connection's state is unknown: start afresh next time
            client.disconnect()
            raise

    def initiate_close(self) -> None:
        self.network_client.initiate_close()

    def close(self) -> None:
        self.network_client.close()

    def __repr__(self) -> str:
        return (f"ReplicaFetcherBlockingSend(broker={self.source_broker.id} "
                f"{self.source_broker.host}:{self.source_broker.port}, fetcher={self.fetcher_id})")


__all__ = ["BlockingSend", "ReplicaFetcherBlockingSend"]
