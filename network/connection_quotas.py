"""Port of the ConnectionQuotas and TooManyConnectionsException classes of
core/src/main/scala/kafka/network/SocketServer.scala (Kafka 2.8.2).

Kept apart from socket_server.py for size only; the Acceptor and Processors share one
ConnectionQuotas per SocketServer. Clients are counted by IP address
(``max.connections.per.ip``, ``max.connections.per.ip.overrides``), by listener
(``listener.name.<listener>.max.connections``, defaulting to ``max.connections``), and for
the whole broker (``max.connections``).

New connections are also rate limited (KIP-612), each rate a Sensor over ``quota.window.num``
windows of ``quota.window.size.seconds`` (kafka_py/clients/common/sensor.py):

* ``max.connection.creation.rate`` for the broker and per listener
  (``listener.name.<listener>.max.connection.creation.rate``, defaulting to the broker's):
  a connection over either rate makes the Acceptor wait, up to one quota window, before it
  takes it on (the inter-broker listener is exempt from the broker-wide rate);
* ``connection_creation_rate`` per client IP, from ZooKeeper /config/ips/<ip> or
  /config/ips/<default> (server/config_handler.py's IpConfigHandler): a connection over it is
  not counted and raises ConnectionThrottledException; the Acceptor closes it once the
  throttle time has passed.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from typing import Any, Callable, Iterable, Optional, Sequence

from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.sensor import KafkaMetric, MetricConfig, Quota, QuotaViolationException, Rate, Sensor
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


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
        # (host, count) pairs; a malformed one (no count) fails below, as before
        items: Iterable[Sequence[Any]] = (
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


# An IP's rate sensor is dropped after an hour without connections.
_IP_SENSOR_EXPIRATION_MS = 3600 * 1000


def listener_int_config(config: Any, listener: str, key: str) -> Optional[int]:
    """``listener.name.<listener>.<key>`` when set (an integer of at least 0), else None."""
    name = f"listener.name.{listener.lower()}.{key}"
    raw = config.originals.get(name)
    if raw is None:
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigException(name, raw, "Not a number of type INT") from None
    if value < 0:
        raise ConfigException(name, raw, "Value must be at least 0")
    return value


class ConnectionThrottledException(KafkaException):
    """A new connection from ``ip`` is over that address's connection creation rate."""

    def __init__(self, ip: str, start_throttle_time_ms: int, throttle_time_ms: int) -> None:
        super().__init__(f"{ip} throttled for {throttle_time_ms} ms")
        self.ip = ip
        self.start_throttle_time_ms = start_throttle_time_ms
        self.throttle_time_ms = throttle_time_ms


class _ListenerConnectionQuota:
    """A listener's own maximum connections and connection creation rate (None: the broker's)."""

    def __init__(self, max_connections: Optional[int], max_connection_creation_rate: Optional[int],
                 connection_rate_sensor: Sensor) -> None:
        self.max_connections = max_connections
        self.max_connection_creation_rate = max_connection_creation_rate
        self.connection_rate_sensor = connection_rate_sensor


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
        inter_broker = config.inter_broker_listener_name
        self._inter_broker_listener_name = inter_broker.value if inter_broker is not None else None
        self._counts: dict[str, int] = {}
        self._listener_counts: dict[str, int] = {}
        self._total_count = 0
        self._cond = threading.Condition()
        self._config = config
        # Connection creation rates (KIP-612).
        self._num_quota_samples = config.num_quota_samples
        self._quota_window_ms = config.quota_window_size_seconds * 1000
        self._max_throttle_time_ms = self._quota_window_ms
        self._broker_max_connection_rate = config.max_connection_creation_rate
        self._broker_connection_rate_sensor = self._connection_rate_sensor(
            "ConnectionAcceptRate", self._broker_max_connection_rate)
        self._listener_quotas: dict[str, _ListenerConnectionQuota] = {}
        self._default_connection_rate_per_ip = INT_MAX
        self._connection_rate_per_ip: dict[str, int] = {}
        self._ip_connection_rate_sensors: dict[str, Sensor] = {}

    def add_listener(self, listener: str) -> None:
        max_connections = listener_int_config(self._config, listener, "max.connections")
        rate = listener_int_config(self._config, listener, "max.connection.creation.rate")
        with self._cond:
            self._listener_counts.setdefault(listener, 0)
            if listener not in self._listener_quotas:
                self._listener_quotas[listener] = _ListenerConnectionQuota(
                    max_connections, rate, self._connection_rate_sensor(
                        f"ConnectionAcceptRate-{listener}", self._broker_max_connection_rate if rate is None else rate))
            self._cond.notify_all()

    def remove_listener(self, listener: str) -> None:
        with self._cond:
            self._listener_counts.pop(listener, None)
            self._listener_quotas.pop(listener, None)
            self._cond.notify_all()

    def update_max_connections_per_ip(self, max_connections_per_ip: int, overrides: Any) -> None:
        with self._cond:
            self._default_max_connections_per_ip = int(max_connections_per_ip)
            self._max_connections_per_ip_overrides = parse_max_connections_per_ip_overrides(overrides)

    def update_broker_max_connections(self, max_connections: int) -> None:
        with self._cond:
            self._broker_max_connections = int(max_connections)
            self._cond.notify_all()

    def update_broker_max_connection_rate(self, max_connection_rate: int) -> None:
        """A connection already waiting for the old rate waits out its delay."""
        with self._cond:
            self._broker_max_connection_rate = int(max_connection_rate)
            sensors = [self._broker_connection_rate_sensor] + [
                q.connection_rate_sensor for q in self._listener_quotas.values()
                if q.max_connection_creation_rate is None]
        for sensor in sensors:
            sensor.set_metric_config(sensor.metrics[0], self._rate_quota_metric_config(int(max_connection_rate)))
        logger.info("Updated broker max connection creation rate to %d", max_connection_rate)

    def update_ip_connection_rate_quota(self, ip: Optional[str], max_connection_rate: Optional[int]) -> None:
        """Set (or with None remove) the connection creation rate of one IP, or with ``ip`` None the
        default of every IP without its own."""
        with self._cond:
            if ip is not None:
                address = normalize_address(ip)
                if max_connection_rate is None:
                    logger.info("Removing max connection rate override for %s", address)
                    self._connection_rate_per_ip.pop(address, None)
                else:
                    logger.info("Updating max connection rate override for %s to %d", address, max_connection_rate)
                    self._connection_rate_per_ip[address] = int(max_connection_rate)
                addresses = [address]
            else:
                self._default_connection_rate_per_ip = (INT_MAX if max_connection_rate is None
                                                        else int(max_connection_rate))
                logger.info("Updated default max IP connection rate to %d", self._default_connection_rate_per_ip)
                addresses = list(self._ip_connection_rate_sensors)
            for address in addresses:
                sensor = self._ip_connection_rate_sensors.get(address)
                if sensor is not None:
                    sensor.set_metric_config(sensor.metrics[0], self._rate_quota_metric_config(
                        self.connection_rate_for_ip(address)))

    def connection_rate_for_ip(self, ip: str) -> int:
        return self._connection_rate_per_ip.get(ip, self._default_connection_rate_per_ip)

    def inc(self, listener: str, address: str,
            should_wait: Callable[[], bool] = lambda: True) -> bool:
        """Count a connection; False if ``should_wait()`` turned False while waiting for a slot."""
        with self._cond:
            if not self._wait_for_connection_slot(listener, should_wait):
                return False
            self._record_ip_connection_maybe_throttle(listener, address)
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

    def dec(self, listener: str, address: str) -> None:
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

    def max_connections_exceeded(self, listener: str) -> bool:
        """Over the broker limit (possible through the inter-broker listener's allowance)."""
        return (self._total_count > self._broker_max_connections
                and not self._protected_listener(listener))

    def _protected_listener(self, listener: str) -> bool:
        return self._inter_broker_listener_name == listener and len(self._listener_counts) > 1

    def _connection_slot_available(self, listener: str) -> bool:
        listener_quota = self._listener_quotas.get(listener)
        if listener_quota is not None:
            limit = listener_quota.max_connections
            if self._listener_counts.get(listener, 0) >= (self._broker_max_connections if limit is None else limit):
                return False
        if self._protected_listener(listener):
            return True
        return self._total_count < self._broker_max_connections

    # ---- connection creation rates (KIP-612); called with the lock held ------------------

    def _wait_for_connection_slot(self, listener: str, should_wait: Callable[[], bool]) -> bool:
        """Wait out the listener's and the broker's connection rate throttle and for a free slot."""
        start_ms = self._time.hi_res_milliseconds()
        throttle_ms = max(self._record_connection_and_get_throttle_time_ms(listener, start_ms), 0)
        if throttle_ms > 0 or not self._connection_slot_available(listener):
            end_ms = start_ms + throttle_ms
            remaining_ms = throttle_ms
            while remaining_ms > 0 or not self._connection_slot_available(listener):
                if not should_wait():
                    return False
                self._cond.wait(remaining_ms / 1000.0 if remaining_ms > 0 else None)
                remaining_ms = max(end_ms - self._time.hi_res_milliseconds(), 0)
        return True

    def _record_connection_and_get_throttle_time_ms(self, listener: str, time_ms: int) -> int:
        """The delay that brings the broker's and the listener's creation rates back to their
        limits, whichever is longer (the inter-broker listener only counts against its own)."""
        broker_throttle_ms = 0
        if not self._protected_listener(listener):
            broker_throttle_ms = self._record_and_get_throttle_time_ms(self._broker_connection_rate_sensor, time_ms)
        listener_quota = self._listener_quotas.get(listener)
        if listener_quota is None:
            return broker_throttle_ms
        return max(broker_throttle_ms,
                   self._record_and_get_throttle_time_ms(listener_quota.connection_rate_sensor, time_ms))

    def _record_ip_connection_maybe_throttle(self, listener: str, address: str) -> None:
        rate = self.connection_rate_for_ip(address)
        if rate == INT_MAX:
            return
        time_ms = self._time.hi_res_milliseconds()
        sensor = self._ip_connection_rate_sensors.get(address)
        if sensor is None:
            self._purge_ip_sensors(time_ms)
            sensor = self._connection_rate_sensor(f"ConnectionAcceptRate-{address}", rate,
                                                  _IP_SENSOR_EXPIRATION_MS, time_ms)
            self._ip_connection_rate_sensors[address] = sensor
        throttle_ms = self._record_and_get_throttle_time_ms(sensor, time_ms)
        if throttle_ms > 0:
            # Not taken on: it must not count against any rate.
            sensor.record(-1.0, time_ms, False)
            if not self._protected_listener(listener):
                self._broker_connection_rate_sensor.record(-1.0, time_ms, False)
            listener_quota = self._listener_quotas.get(listener)
            if listener_quota is not None:
                listener_quota.connection_rate_sensor.record(-1.0, time_ms, False)
            raise ConnectionThrottledException(address, time_ms, throttle_ms)

    def _record_and_get_throttle_time_ms(self, sensor: Sensor, time_ms: int) -> int:
        try:
            sensor.record(1.0, time_ms)
            return 0
        except QuotaViolationException as e:
            if e.bound <= 0:  # a rate of 0 refuses every connection for a whole window
                return self._max_throttle_time_ms
            from kafka_py.server.client_quota_manager import bounded_throttle_time
            throttle_ms = bounded_throttle_time(e, self._max_throttle_time_ms, time_ms)
            logger.debug("Quota violated for sensor (%s). Delay time: %d ms", sensor.name, throttle_ms)
            return throttle_ms

    def _purge_ip_sensors(self, now_ms: int) -> None:
        expired = [a for a, s in self._ip_connection_rate_sensors.items() if s.has_expired(now_ms)]
        for address in expired:
            del self._ip_connection_rate_sensors[address]

    def _rate_quota_metric_config(self, quota_limit: int) -> MetricConfig:
        return MetricConfig(samples=self._num_quota_samples, time_window_ms=self._quota_window_ms,
                            quota=Quota.upper_bound(quota_limit))

    def _connection_rate_sensor(self, name: str, quota_limit: int, expiration_ms: Optional[int] = None,
                                now_ms: int = 0) -> Sensor:
        sensor = Sensor(name, expiration_ms, now_ms)
        sensor.add(KafkaMetric("connection-accept-rate", Rate(), self._rate_quota_metric_config(quota_limit)))
        return sensor
