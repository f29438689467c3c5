"""The connections of the admin tools that send requests to particular brokers (no Kafka counterpart).

``kafka-broker-api-versions.sh`` and ``kafka-delete-records.sh`` send Metadata to whichever
``--bootstrap-server`` entry answers first, as Kafka's admin clients send it to any node,
then requests to the brokers that Metadata names (each partition's leader, every broker).

Connections are kafka_py NetworkClients (kafka_py/clients/network_client.py) secured by the
``--command-config`` properties (``security.protocol``, ``ssl.*``, ``sasl.*``, see
command_line_utils.admin_channel_builder), one per broker, kept open for the tool's run.
Timeouts are the admin client's: ``socket.connection.setup.timeout.ms`` (10 s) to connect,
``request.timeout.ms`` (30 s) for an answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from kafka_py.core.utils.command_line_utils import CommandError, admin_channel_builder, describe_exception

DEFAULT_CONNECT_TIMEOUT_MS = 10000
DEFAULT_REQUEST_TIMEOUT_MS = 30000
METADATA_VERSION = 9


@dataclass(frozen=True)
class BrokerNode:
    """A broker as Metadata names it; ``str()`` is Kafka's Node.toString."""

    id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.host}:{self.port} (id: {self.id} rack: {self.rack if self.rack is not None else 'null'})"


@dataclass(frozen=True)
class PartitionMetadata:
    leader: int  # -1: no leader
    error_code: int


@dataclass(frozen=True)
class ClusterMetadata:
    brokers: dict[int, BrokerNode]
    # topic -> (topic error code, partition -> metadata)
    topics: dict[str, tuple[int, dict[int, PartitionMetadata]]]


def _int_option(props: Mapping[str, str], key: str, default: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise CommandError(f"Invalid value {value} for configuration {key}: Not a number of type INT") from None


class BrokerConnections:
    """The tool's connections, by broker address; ``close()`` ends them all."""

    def __init__(self, bootstrap_servers: Sequence[str], command_config: Mapping[str, str], client_id: str) -> None:
        self.bootstrap_servers = list(bootstrap_servers)
        self.command_config = dict(command_config)
        self.client_id = command_config.get("client.id") or client_id
        self.connect_timeout_ms = _int_option(command_config, "socket.connection.setup.timeout.ms",
                                              DEFAULT_CONNECT_TIMEOUT_MS)
        self.request_timeout_ms = _int_option(command_config, "request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS)
        self._clients: dict[str, Any] = {}
        self._channel_builder: tuple[Any] | None = None

    def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def __enter__(self) -> "BrokerConnections":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _client(self, address: str) -> Any:
        """A ready connection to ``address``: OSError when it cannot be made, an
        AuthenticationException when the broker refuses the login (TLS or SASL)."""
        from kafka_py.core.cluster.broker import Node
        from kafka_py.clients.network_client import NetworkClient
        from kafka_py.clients.network_client_utils import await_ready

        client = self._clients.get(address)
        if client is not None:
            return client
        if self._channel_builder is None:
            self._channel_builder = (admin_channel_builder(self.command_config),)
        host, _, port = address.rpartition(":")
        client = NetworkClient(Node(-1, host.strip("[]"), int(port)), self.client_id, self.request_timeout_ms,
                               channel_builder=self._channel_builder[0])
        try:
            if not await_ready(client, self.connect_timeout_ms):
                raise OSError(f"no connection within {self.connect_timeout_ms} ms")
        except BaseException:
            client.close()
            raise
        self._clients[address] = client
        return client

    def send(self, address: str, api_key: Any, api_version: int, values: Mapping[str, Any] | Any) -> Any:
        """One request to the broker at ``address`` (``host:port``); its response body. A failed
        connection or request raises (OSError, an AuthenticationException) and drops that connection."""
        from kafka_py.clients.network_client_utils import send_and_receive
        from kafka_py.clients.common.protocol.entities import build_entity
        from kafka_py.clients.common.protocol.messages import request_schema

        body = values
        if isinstance(values, Mapping):
            body = build_entity(request_schema(api_key, api_version), values)
        client = self._client(address)
        try:
            return send_and_receive(client, api_key, api_version, body).response_body
        except BaseException:
            self._clients.pop(address, None)
            client.close()
            raise

    def send_any(self, api_key: Any, api_version: int, values: Mapping[str, Any]) -> Any:
        """The request to the first bootstrap server that answers it (an authentication failure
        is final, as in Kafka's clients); CommandError naming the servers when none does."""
        from kafka_py.clients.common.security.errors import AuthenticationException

        failures = []
        for address in self.bootstrap_servers:
            try:
                return self.send(address, api_key, api_version, values)
            except AuthenticationException as e:
                raise CommandError(f"Authentication to {address} failed: {describe_exception(e)}") from None
            except OSError as e:
                failures.append(describe_exception(e))
        detail = f" ({failures[-1]})" if failures else ""
        raise CommandError(f"Unable to connect to the bootstrap server(s) {','.join(self.bootstrap_servers)}: "
                           f"no broker answered{detail}")

    def metadata(self, topics: Sequence[str] | None) -> ClusterMetadata:
        """Metadata of ``topics`` (None: every topic) without creating any, from any bootstrap server."""
        from kafka_py.clients.common.protocol.api_keys import ApiKeys

        request = {"topics": None if topics is None else [{"name": t} for t in topics],
                   "allow_auto_topic_creation": False}
        response = self.send_any(ApiKeys.METADATA, METADATA_VERSION, request)
        brokers = {int(b.node_id): BrokerNode(int(b.node_id), str(b.host), int(b.port),
                                              None if b.rack is None else str(b.rack))
                   for b in response.brokers}
        described: dict[str, tuple[int, dict[int, PartitionMetadata]]] = {}
        for topic in response.topics:
            partitions = {int(p.partition_index): PartitionMetadata(int(p.leader_id), int(p.error_code))
                          for p in topic.partitions}
            described[str(topic.name)] = (int(topic.error_code), partitions)
        return ClusterMetadata(brokers, described)
