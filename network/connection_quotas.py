"""Port of the ConnectionQuotas and TooManyConnectionsException classes of
core/src/main/scala/kafka/network/SocketServer.scala (Kafka 2.8.2).

Kept apart from socket_server.py for size only; the Acceptor and Processors share one
ConnectionQuotas per SocketServer. Clients are counted by IP address
(``max.connections.per.ip``, ``max.connections.per.ip.overrides``), by listener, and
for the whole broker (``max.connections``). Connection-rate quotas (KIP-612) are not
ported.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from typing import Any, Callable, Iterable

from kafka_py.common.errors import KafkaException
from kafka_py.utils.time import Time

logger = logging.getLogger(__name__)


def listener_value(listener_name: Any) -> str:
    return str(getattr(listener_name, "value", listener_name))


def protocol_name(protocol: Any) -> str:
    return str(getattr(protocol, "name", protocol))


def normalize_address(host: str) -> str:
    """The client IP as connection quotas count it (an IPv4-mapped IPv6 address is IPv4)."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def parse_max_connections_per_ip_overrides(overrides: Any) -> dict[str, int]:
    """``max.connections.per.ip.overrides`` ("host:count,host2:count" or a mapping) by IP."""
    if not overrides:
        return {}
    if isinstance(overrides, str):
        items: Iterable[tuple[str, Any]] = (
            item.strip().rsplit(":", 1) for item in overrides.split(",") if item.strip()
        )
    else:
        items = overrides.items()
    result = {}
    for host, count in items:
        host = host.strip().strip("[]")
        try:
            address = normalize_address(str(ipaddress.ip_address(host)))
        except ValueError:
            try:
                address = normalize_address(socket.gethostbyname(host))
            except OSError as e:
                raise KafkaException(
                    f"Invalid host {host} in max.connections.per.ip.overrides: {e}"
                ) from e
        result[address] = int(count)
    return result


class TooManyConnectionsException(KafkaException):
    def __init__(self, ip: str, count: int) -> None:
        super().__init__(f"Too many connections from {ip} (maximum = {count})")
        self.ip = ip
        self.count = count


class ConnectionQuotas:
    """Connection counts per client IP, per listener and for the broker.

    ``inc`` counts a new connection; it blocks while the broker is at
    ``max.connections`` (except on the inter-broker listener when there are others,
    so replication keeps working) and raises TooManyConnectionsException, with the
    connection counted, when its IP is over ``max.connections.per.ip``; the caller
    then closes it and calls ``dec``, as for any closed connection.
    """

    def __init__(self, config: Any, time: Time = Time.SYSTEM) -> None:
        self._time = time
        self._default_max_connections_per_ip = int(config.max_connections_per_ip)
        self._max_connections_per_ip_overrides = parse_max_connections_per_ip_overrides(
            config.max_connections_per_ip_overrides
        )
        self._broker_max_connections = int(config.max_connections)
        inter_broker = getattr(config, "inter_broker_listener_name", None)
        self._inter_broker_listener_name = (
            listener_value(inter_broker) if inter_broker is not None else None
        )
        self._counts: dict[str, int] = {}
        self._listener_counts: dict[str, int] = {}
        self._total_count = 0
        self._cond = threading.Condition()

    def add_listener(self, listener_name: Any) -> None:
        with self._cond:
            self._listener_counts.setdefault(listener_value(listener_name), 0)

    def remove_listener(self, listener_name: Any) -> None:
        with self._cond:
            self._listener_counts.pop(listener_value(listener_name), None)
            self._cond.notify_all()

    def update_max_connections_per_ip(self, max_connections_per_ip: int, overrides: Any) -> None:
        with self._cond:
            self._default_max_connections_per_ip = int(max_connections_per_ip)
            self._max_connections_per_ip_overrides = parse_max_connections_per_ip_overrides(overrides)

    def update_broker_max_connections(self, max_connections: int) -> None:
        with self._cond:
            self._broker_max_connections = int(max_connections)
            self._cond.notify_all()

    def inc(self, listener_name: Any, address: str,
            should_wait: Callable[[], bool] = lambda: True) -> bool:
        """Count a connection; False if ``should_wait()`` turned False while waiting for a slot."""
        listener = listener_value(listener_name)
        with self._cond:
            while not self._connection_slot_available(listener):
                if not should_wait():
                    return False
                self._cond.wait()
            count = self._counts.get(address, 0)
            self._counts[address] = count + 1
            self._total_count += 1
            if listener in self._listener_counts:
                self._listener_counts[listener] += 1
            limit = self._max_connections_per_ip_overrides.get(
                address, self._default_max_connections_per_ip
            )
            if count >= limit:
                raise TooManyConnectionsException(address, limit)
        return True

    def dec(self, listener_name: Any, address: str) -> None:
        listener = listener_value(listener_name)
        with self._cond:
            count = self._counts.get(address)
            if count is None:
                logger.error("Attempted to decrease connection count for address with no "
                             "connections, address: %s", address)
                return
            if count <= 1:
                del self._counts[address]
            else:
                self._counts[address] = count - 1
            self._total_count -= 1
            if listener in self._listener_counts:
                self._listener_counts[listener] -= 1
            self._cond.notify_all()

    def get(self, address: str) -> int:
        with self._cond:
            return self._counts.get(address, 0)

    @property
    def total_count(self) -> int:
        return self._total_count

    def wake_waiters(self) -> None:
        """Let an Acceptor blocked in ``inc`` re-check whether it should still wait."""
        with self._cond:
            self._cond.notify_all()

    def max_connections_exceeded(self, listener_name: Any) -> bool:
        """Over the broker limit (possible through the inter-broker listener's allowance)."""
        listener = listener_value(listener_name)
        return (self._total_count > self._broker_max_connections
                and not self._protected_listener(listener))

    def _protected_listener(self, listener: str) -> bool:
        return self._inter_broker_listener_name == listener and len(self._listener_counts) > 1

    def _connection_slot_available(self, listener: str) -> bool:
        if self._protected_listener(listener):
            return True
        return self._total_count < self._broker_max_connections
