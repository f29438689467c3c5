"""Port of clients/src/main/java/org/apache/kafka/clients/NetworkClientUtils.java (Kafka 2.8.2):
blocking behaviour on top of the NetworkClient (kafka_py/clients/network_client.py).

``await_ready`` connects within a timeout; ``send_and_receive`` sends one request and waits
for its response. Kafka's versions loop over ``NetworkClient.poll``; with one connection and
one request in flight, the client here does the waiting itself, and these keep Kafka's
contract: a timeout to connect is ``False``, a failed connection is an OSError, a response
lost to a disconnection or to the client's shutdown is an OSError too. Callers drop the
connection after any failure (``NetworkClient.disconnect``) and connect afresh next time,
as ReplicaFetcherBlockingSend and the controller's RequestSendThread do.
"""
from __future__ import annotations

from typing import Any

from kafka_py.clients.network_client import ClientClosedException, ClientResponse, NetworkClient
from kafka_py.protocol.api_keys import ApiKeys


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


__all__ = ["is_ready", "await_ready", "send_and_receive"]
