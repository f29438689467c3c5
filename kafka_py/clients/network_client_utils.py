"""Port of clients/src/main/java/org/apache/kafka/clients/NetworkClientUtils.java (Kafka 2.8.2):
blocking behaviour on top of the NetworkClient (kafka_py/clients/network_client.py).

``await_ready`` connects within a timeout; ``send_and_receive`` sends one request and waits
for its response. Kafka's versions loop over ``NetworkClient.poll``; with one connection and
one request in flight, the client here does the waiting itself, and these keep Kafka's
contract: a timeout to connect is ``False``, a failed connection is an OSError, a response
lost to a disconnection or to the client's shutdown is an OSError too. Callers drop the
connection after any failure (``NetworkClient.disconnect``) and connect afresh next time,
as ReplicaFetcherBlockingSend and the controller's RequestSendThread do.

``NodeConnection`` wraps that drill for a sender thread that talks to one broker at a time
(the transaction marker senders, the transaction verification senders): one NetworkClient,
made on first use and replaced when the broker's address changes, dropped after a failure,
and closable from another thread.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from kafka_py.clients.network_client import ClientClosedException, ClientResponse, NetworkClient
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.protocol.api_keys import ApiKeys


def is_ready(client: NetworkClient) -> bool:
    """Whether the connection is up with nothing in flight (Kafka's NetworkClientUtils.isReady)."""
    return client.is_ready()


def await_ready(client: NetworkClient, timeout_ms: int) -> bool:
    """Connect to the client's node unless connected: True once ready, False when ``timeout_ms``
    passes first. A refused or failed connection raises OSError, and so does a client that
    is being shut down (ClientClosedException)."""
    if timeout_ms < 0:
        raise ValueError("Timeout needs to be greater than 0")
    if client.is_ready():
        return True
    return client.connect(timeout_ms)


def send_and_receive(client: NetworkClient, api_key: ApiKeys, api_version: int, body: Any) -> ClientResponse:
    """Send one request and wait for its response. A disconnection (including a request
    timeout) raises OSError; so does the client being shut down meanwhile."""
    if not client.active:
        raise OSError("Client was shutdown before response was read")
    request = client.new_client_request(api_key, api_version, body)
    try:
        client.send(request)
        return client.poll()
    except ClientClosedException:
        raise OSError("Client was shutdown before response was read") from None


class NodeConnection:
    """A blocking request/response channel to one broker at a time (see the module docstring)."""

    def __init__(self, new_client: Callable[[Node], NetworkClient]) -> None:
        self._new_client = new_client
        self._lock = threading.Lock()  # close() and initiate_close() come from other threads
        self._client: Optional[NetworkClient] = None

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, body: Any, timeout_ms: int) -> Any:
        """The decoded response body; raises OSError (TimeoutError for a connection not made
        within ``timeout_ms``) after dropping the connection."""
        client = self._client_for(node)
        try:
            if not await_ready(client, timeout_ms):
                raise TimeoutError(f"Failed to connect to broker {node.id} within {timeout_ms} ms")
            return send_and_receive(client, api_key, api_version, body).response_body
        except Exception:
            self.disconnect()
            raise

    def _client_for(self, node: Node) -> NetworkClient:
        with self._lock:
            client = self._client
            if client is not None and (client.node.host, client.node.port) != (node.host, node.port):
                client.close()
                client = None
            if client is None:
                client = self._client = self._new_client(node)
            return client

    def disconnect(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.disconnect()

    def initiate_close(self) -> None:
        """From another thread: a blocked ``send_and_receive`` fails at once."""
        with self._lock:
            if self._client is not None:
                self._client.initiate_close()

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


__all__ = ["is_ready", "await_ready", "send_and_receive", "NodeConnection"]
