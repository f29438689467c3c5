"""Port of core/src/main/scala/kafka/network/SocketServer.scala (Kafka 2.8.2): SocketServer and
Acceptor; its Processor and AbstractServerThread are in network/processor.py and its
ConnectionQuotas in network/connection_quotas.py (split for size, re-exported here).

Threads, as in Kafka:

* one Acceptor per listener accepts connections, counts them against the connection
  quotas and hands each to that listener's Processors in turn, through a small
  bounded queue per Processor (tried without blocking in round-robin order; when
  every queue is full the Acceptor blocks on the last one);
* ``num.network.threads`` Processors per listener, each with its own Selector
  (network/selector.py). A Processor reads size-prefixed requests, parses the header
  and body, mutes the connection and queues the request on the RequestChannel; it
  writes the responses handlers queue back to it, then unmutes the connection;
* the request handlers (server/kafka_request_handler.py) sit on the other side of
  the RequestChannel.

A bad frame or request (size out of range, unknown api key, unsupported version other
than ApiVersions', malformed body) closes that one connection, as Kafka does; nothing a
client sends can stop a Processor thread.

Startup follows Kafka 2.8: ``startup(start_processing_requests=False)`` opens and binds
the server sockets (so ``bound_port`` is known, even for port 0) but accepts nothing
until ``start_processing_requests()``, which a broker
calls last, once everything behind the sockets is ready.
"""
from __future__ import annotations

import logging
import selectors
import socket
import threading
import time
from typing import Any, Callable, Mapping, Optional

from kafka_py.core.cluster.broker import EndPoint
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.network.connection_quotas import (
    ConnectionQuotas,
    ConnectionThrottledException,
    TooManyConnectionsException,
    normalize_address,
    parse_max_connections_per_ip_overrides,
)
from kafka_py.network.processor import (
    CONNECTION_QUEUE_SIZE,
    POLL_TIMEOUT_MS,
    AbstractServerThread,
    Processor,
)
from kafka_py.network.request_channel import RequestChannel
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.core.metrics.yammer import MetricName
from kafka_py.network.selector import Waker
from kafka_py.tuning.accept_batch import accepts_per_ready_key

logger = logging.getLogger(__name__)

__all__ = (
    "CONNECTION_QUEUE_SIZE",
    "POLL_TIMEOUT_MS",
    "AbstractServerThread",
    "Acceptor",
    "ConnectionQuotas",
    "Processor",
    "SocketServer",
    "TooManyConnectionsException",
    "listener_end_points",
    "parse_max_connections_per_ip_overrides",
)

USE_DEFAULT_BUFFER_SIZE = -1
DEFAULT_LISTEN_BACKLOG_SIZE = 50
DATA_PLANE_THREAD_PREFIX = "data-plane"


def listener_end_points(config: Any) -> list[EndPoint]:
    """``config.listeners``: the EndPoints the config parsed its ``listeners`` into."""
    return list(config.listeners)


def _bind_gauges(suite: Any, name_of: Callable[[Any], MetricName], registry: Any) -> None:
    """A connections gauge per key of ``suite`` (a client software or a TLS cipher), named by
    ``name_of``, for as long as the key has connections."""
    def add(key: Any, read: Callable[[], int]) -> None:
        registry.new_gauge(name_of(key), read)

    def remove(key: Any) -> None:
        registry.remove_metric(name_of(key))

    suite.bind(add, remove)


class SocketServer(KafkaMetricsGroup):
    """The broker's network front end: an Acceptor and Processors per listener.

    Its metrics: Kafka's ``kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent``
    (the mean of the Processors' IdlePercent) and ``ExpiredConnectionsKilledCount`` (the sum of
    theirs), and per Processor the attributes of
    ``kafka.server:type=socket-server-metrics,listener=L,networkProcessor=N``: ``connection-count``
    and the authentication metrics of its selector (network/selector.py's SelectorMetrics).
    """

    def __init__(self, config: Any, time: Time = Time.SYSTEM,
                 request_channel: Optional[RequestChannel] = None,
                 credential_provider: Any = None, api_version_manager: Any = None,
                 api_version_supplier: Any = None) -> None:
        self.config = config
        # What the listeners serve when it is not the broker's IMPLEMENTED_APIS: the KRaft
        # controller's SocketServer serves the controller's APIs (server/api_version_manager.py).
        self.api_version_manager = api_version_manager
        # How a SASL listener answers an ApiVersions sent before authentication, as KafkaApis
        # answers one after it (with the broker's features): Kafka's apiVersionSupplier.
        self.api_version_supplier = api_version_supplier
        # SCRAM credentials SASL listeners check logins against (kafka_py/clients/common/security/credential_cache.py).
        self.credential_provider = credential_provider
        # Per listener, how its connections authenticate; none for PLAINTEXT listeners.
        self._channel_builders: dict[str, Any] = {}
        self.time = time
        self._broker_id = config.broker_id
        self.logger = IdentLogger(logger, f"[SocketServer brokerId={self._broker_id}] ")
        self.request_channel = (request_channel if request_channel is not None
                                else RequestChannel(config.queued_max_requests))
        self._processors: dict[int, Processor] = {}
        self._next_processor_id = 0
        self._acceptors: dict[str, Acceptor] = {}
        self.connection_quotas: Optional[ConnectionQuotas] = None
        self._started_processing_requests = False
        self._stopped_processing_requests = False
        self._lock = threading.RLock()
        self.new_gauge("NetworkProcessorAvgIdlePercent", self._network_processor_avg_idle)
        self.new_gauge("ExpiredConnectionsKilledCount", lambda: sum(
            p.selector.metrics.value("expired-connections-killed-count") for p in self.processors))

    def _network_processor_avg_idle(self) -> float:
        processors = self.processors
        if not processors:
            return 0.0
        return sum(min(p.idle_ratio.ratio(), 1.0) for p in processors) / len(processors)

    @staticmethod
    def _socket_server_metric_name(processor: Processor, attribute: str) -> MetricName:
        listener, pid = processor.listener_name, str(processor.id)
        return MetricName("kafka.server", "socket-server-metrics", "", None,
                          f"kafka.server:type=socket-server-metrics,listener={listener},networkProcessor={pid}",
                          (("listener", listener), ("networkProcessor", pid)), attribute=attribute)

    @staticmethod
    def _connections_metric_name(processor: Processor, key_tags: tuple[tuple[str, str], ...]) -> MetricName:
        """``connections`` by client software or by TLS cipher: the key's tags before the thread's."""
        tags = key_tags + (("listener", processor.listener_name), ("networkProcessor", str(processor.id)))
        mbean = "kafka.server:type=socket-server-metrics," + ",".join(f"{k}={v}" for k, v in tags)
        return MetricName("kafka.server", "socket-server-metrics", "", None, mbean, tags, attribute="connections")

    def _register_processor_metrics(self, processor: Processor) -> None:
        selector = processor.selector
        registry = self.metrics_registry
        registry.new_gauge(self._socket_server_metric_name(processor, "connection-count"), lambda: len(selector))
        for attribute, read in selector.metrics.gauges():
            registry.new_gauge(self._socket_server_metric_name(processor, attribute), read)

        def client_name(key: Any) -> MetricName:
            return self._connections_metric_name(processor, (("clientSoftwareName", key.software_name),
                                                             ("clientSoftwareVersion", key.software_version)))

        def cipher_name(key: Any) -> MetricName:
            return self._connections_metric_name(processor, (("cipher", key.cipher), ("protocol", key.protocol)))

        _bind_gauges(selector.metrics.connections_by_client, client_name, registry)
        _bind_gauges(selector.metrics.connections_by_cipher, cipher_name, registry)

    def _remove_processor_metrics(self, processor: Processor) -> None:
        registry = self.metrics_registry
        registry.remove_metric(self._socket_server_metric_name(processor, "connection-count"))
        for attribute, _ in processor.selector.metrics.gauges():
            registry.remove_metric(self._socket_server_metric_name(processor, attribute))
        processor.selector.metrics.connections_by_client.close()
        processor.selector.metrics.connections_by_cipher.close()

    # ---- BrokerReconfigurable (SocketServer.reconfigure): connection limits at runtime, and
    # each TLS listener's key and trust stores (its channel builder, Kafka's ListenerReconfigurable)
    @property
    def reconfigurable_configs(self) -> frozenset[str]:
        from kafka_py.server.kafka_config import SOCKET_SERVER_RECONFIGURABLE_CONFIGS
        names = set(SOCKET_SERVER_RECONFIGURABLE_CONFIGS)
        for builder in list(self._channel_builders.values()):
            names.update(builder.reconfigurable_configs)
        return frozenset(names)

    def validate_reconfiguration(self, new_config: Any) -> None:
        parse_max_connections_per_ip_overrides(new_config.max_connections_per_ip_overrides)
        for builder in list(self._channel_builders.values()):
            builder.validate_reconfiguration(new_config)

    def reload_updated_files(self, new_config: Any) -> None:
        """Key or trust store files rewritten in place under unchanged settings are read again
        (DynamicBrokerConfig.reloadUpdatedFilesWithoutConfigChange)."""
        for builder in list(self._channel_builders.values()):
            builder.reconfigure(new_config, reload_only=True)

    def reconfigure(self, old_config: Any, new_config: Any) -> None:
        from kafka_py.clients.common.config.config_def import ConfigException
        for builder in list(self._channel_builders.values()):
            try:
                builder.reconfigure(new_config)
            except ConfigException as e:
                # validated before the config was taken; a store changed on disk since then
                self.logger.error("Listener %s keeps its key and trust stores: %s", builder.listener_name, e)
        quotas = self.connection_quotas
        if quotas is None:
            return
        if (new_config.max_connections_per_ip != old_config.max_connections_per_ip
                or new_config.max_connections_per_ip_overrides != old_config.max_connections_per_ip_overrides):
            self.logger.info("Updating maxConnectionsPerIp: %d, maxConnectionsPerIpOverrides: %s",
                             new_config.max_connections_per_ip, new_config.max_connections_per_ip_overrides)
            quotas.update_max_connections_per_ip(new_config.max_connections_per_ip,
                                                 new_config.max_connections_per_ip_overrides)
        if new_config.max_connections != old_config.max_connections:
            self.logger.info("Updating broker-wide maxConnections: %d", new_config.max_connections)
            quotas.update_broker_max_connections(new_config.max_connections)
        if new_config.max_connection_creation_rate != old_config.max_connection_creation_rate:
            self.logger.info("Updating broker-wide maxConnectionCreationRate: %d",
                             new_config.max_connection_creation_rate)
            quotas.update_broker_max_connection_rate(new_config.max_connection_creation_rate)

    @property
    def _started_connection_quotas(self) -> ConnectionQuotas:
        """The connection quotas startup made, which the acceptors and processors share."""
        quotas = self.connection_quotas
        if quotas is None:
            raise KafkaException("The socket server has not started")
        return quotas

    @property
    def data_plane_request_channel(self) -> RequestChannel:
        """Kafka 2.8's name for ``request_channel`` (no separate control plane here)."""
        return self.request_channel

    def startup(self, start_processing_requests: bool = True,
                data_plane_listeners: Optional[list[EndPoint]] = None) -> None:
        """Bind every listener (or only ``data_plane_listeners``: the controller's SocketServer
        binds the controller listeners); accept and serve only if ``start_processing_requests``."""
        end_points = listener_end_points(self.config) if data_plane_listeners is None else list(data_plane_listeners)
        with self._lock:
            self.connection_quotas = ConnectionQuotas(self.config, self.time)
            self._create_channel_builders(end_points)
            self._create_data_plane_acceptors_and_processors(int(self.config.num_network_threads), end_points)
            if start_processing_requests:
                self.start_processing_requests()
        self.logger.info("Started %d acceptor threads for data-plane", len(self._acceptors))

    def start_processing_requests(self) -> None:
        self.logger.info("Starting socket server acceptors and processors")
        with self._lock:
            if self._started_processing_requests:
                self.logger.info("Socket server acceptors and processors already started")
                return
            for acceptor in self._acceptors.values():
                self._start_acceptor_and_processors(acceptor)
            self._started_processing_requests = True
        self.logger.info("Started socket server acceptors and processors")

    def _start_acceptor_and_processors(self, acceptor: Acceptor) -> None:
        acceptor.start_processors()
        acceptor.start_thread(
            f"{DATA_PLANE_THREAD_PREFIX}-kafka-socket-acceptor-{acceptor.listener_name}-"
            f"{acceptor.security_protocol}-{acceptor.end_point.port}"
        )
        acceptor.await_startup()
        self.logger.info("Started data-plane acceptor and processor(s) for endpoint : ListenerName(%s)",
                         acceptor.listener_name)

    def _create_channel_builders(self, end_points: list[EndPoint]) -> None:
        """Every TLS/SASL listener's channel builder, before anything binds: a bad key store
        or mechanism stops startup with a ConfigException naming the key."""
        from kafka_py.network.channel_builders import create_channel_builder
        from kafka_py.clients.common.security.credential_cache import CredentialCache
        if self.credential_provider is None:
            self.credential_provider = CredentialCache()
        for end_point in end_points:
            builder = create_channel_builder(self.config, end_point.listener_name.value,
                                             end_point.security_protocol, self.credential_provider)
            if builder is not None:
                if builder.sasl is not None:
                    builder.sasl.api_version_supplier = self.api_version_supplier
                self._channel_builders[end_point.listener_name.value] = builder
        # The broker's own client side of the inter-broker (and control-plane) listener: its
        # credentials and stores are checked now too, not first by a replica fetcher.
        from kafka_py.network.channel_builders import inter_broker_client_channel_builder
        inter_broker_client_channel_builder(self.config)
        inter_broker_client_channel_builder(self.config, control_plane=True)

    def _create_data_plane_acceptors_and_processors(
        self, processors_per_listener: int, end_points: list[EndPoint]
    ) -> None:
        for end_point in end_points:
            listener = end_point.listener_name.value
            if listener in self._acceptors:
                raise KafkaException(f"Listener {listener} is configured more than once")
            self._started_connection_quotas.add_listener(listener)
            acceptor = Acceptor(
                end_point,
                int(self.config.socket_send_buffer_bytes),
                int(self.config.socket_receive_buffer_bytes),
                self._broker_id,
                self._started_connection_quotas,
            )
            self._add_data_plane_processors(acceptor, end_point, processors_per_listener)
            self._acceptors[listener] = acceptor
            self.logger.info("Created data-plane acceptor and processors for endpoint : "
                             "ListenerName(%s)", listener)

    def _add_data_plane_processors(self, acceptor: Acceptor, end_point: EndPoint,
                                   new_processors_per_listener: int) -> None:
        new_processors = []
        for _ in range(new_processors_per_listener):
            processor = self._new_processor(self._next_processor_id, end_point.listener_name.value,
                                            end_point.security_protocol.name)
            new_processors.append(processor)
            self.request_channel.add_processor(processor)
            self._register_processor_metrics(processor)
            self._next_processor_id += 1
        for processor in new_processors:
            self._processors[processor.id] = processor
        acceptor.add_processors(new_processors)

    def _new_processor(self, id: int, listener_name: str, security_protocol: str) -> Processor:
        return Processor(
            id,
            self.time,
            int(self.config.socket_request_max_bytes),
            self.request_channel,
            self._started_connection_quotas,
            int(self.config.connections_max_idle_ms),
            listener_name,
            security_protocol,
            self.config,
            self.logger.ident,
            channel_builder=self._channel_builders.get(listener_name),
            api_version_manager=self.api_version_manager,
        )

    def stop_processing_requests(self) -> None:
        """Stop accepting, close every connection, drop queued requests."""
        self.logger.info("Stopping socket server request processors")
        with self._lock:
            for acceptor in self._acceptors.values():
                acceptor.shutdown()
            for processor in self._processors.values():
                processor.shutdown()
            self.request_channel.clear()
            self._stopped_processing_requests = True
        self.logger.info("Stopped socket server request processors")

    def resize_thread_pool(self, old_num_network_threads: int, new_num_network_threads: int) -> None:
        self.logger.info("Resizing network thread pool size for each listener from %d to %d",
                         old_num_network_threads, new_num_network_threads)
        with self._lock:
            if new_num_network_threads > old_num_network_threads:
                for acceptor in self._acceptors.values():
                    self._add_data_plane_processors(
                        acceptor, acceptor.end_point,
                        new_num_network_threads - old_num_network_threads)
            elif new_num_network_threads < old_num_network_threads:
                for acceptor in self._acceptors.values():
                    removed = acceptor.processors[new_num_network_threads - old_num_network_threads:]
                    acceptor.remove_processors(
                        old_num_network_threads - new_num_network_threads, self.request_channel)
                    for processor in removed:
                        self._processors.pop(processor.id, None)
                        self._remove_processor_metrics(processor)

    def shutdown(self) -> None:
        self.logger.info("Shutting down socket server")
        with self._lock:
            if not self._stopped_processing_requests:
                self.stop_processing_requests()
            self.request_channel.shutdown()
            for processor in self._processors.values():
                self._remove_processor_metrics(processor)
        self.remove_metric("NetworkProcessorAvgIdlePercent")
        self.remove_metric("ExpiredConnectionsKilledCount")
        self.logger.info("Shutdown completed")

    def bound_port(self, listener_name: str = "PLAINTEXT") -> int:
        """The port a listener is bound to (the real one when configured with port 0)."""
        acceptor = self._acceptors.get(listener_name)
        if acceptor is None:
            raise KafkaException(
                "Tried to check server's port before server was started or checked for port "
                f"of non-existing protocol {listener_name}")
        try:
            return acceptor.server_socket.getsockname()[1]
        except OSError as e:
            raise KafkaException(f"Listener {listener_name} is closed") from e

    # ---- for tests and metrics ---------------------------------------------------
    def connection_count(self, address: str) -> int:
        if self.connection_quotas is None:
            return 0
        return self.connection_quotas.get(normalize_address(address))

    def processor(self, index: int) -> Optional[Processor]:
        return self._processors.get(index)

    @property
    def processors(self) -> list[Processor]:
        with self._lock:
            return list(self._processors.values())

    @property
    def acceptors(self) -> Mapping[str, Acceptor]:
        with self._lock:
            return dict(self._acceptors)


class Acceptor(AbstractServerThread, KafkaMetricsGroup):
    """Accepts the connections of one listener and hands them to its Processors.

    Its metric is Kafka's ``kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener=L``:
    a meter of the nanoseconds it spent blocked handing a connection to a Processor whose
    queue of new connections was full (every Processor's was), its rates per nanosecond.
    """

    def __init__(
        self,
        end_point: EndPoint,
        send_buffer_size: int,
        recv_buffer_size: int,
        broker_id: int,
        connection_quotas: ConnectionQuotas,
        listen_backlog_size: int = DEFAULT_LISTEN_BACKLOG_SIZE,
        thread_prefix: str = DATA_PLANE_THREAD_PREFIX,
    ) -> None:
        super().__init__(connection_quotas)
        self.end_point = end_point
        self.listener_name = end_point.listener_name.value
        self.security_protocol = end_point.security_protocol.name
        self.send_buffer_size = send_buffer_size
        self.recv_buffer_size = recv_buffer_size
        self._broker_id = broker_id
        self._thread_prefix = thread_prefix
        self._listen_backlog_size = listen_backlog_size
        self.server_socket = self._open_server_socket(end_point.host, end_point.port)
        self._nio = selectors.DefaultSelector()
        self._waker = Waker()
        self._processors: list[Processor] = []
        self._processors_started = False
        self._lock = threading.RLock()
        self._current_processor_index = 0
        self._closed = False
        # Connections over their IP's creation rate, closed once their throttle time is up:
        # (close at, monotonic ms; socket).
        self._throttled_sockets: list[tuple[int, socket.socket]] = []
        self._metric_tags = {"listener": self.listener_name}
        self.blocked_percent_meter = self.new_meter("AcceptorBlockedPercent", "blocked time", self._metric_tags,
                                                    rate_unit_s=1e-9)

    # ---- processors -------------------------------------------------------------
    def add_processors(self, new_processors: list[Processor]) -> None:
        with self._lock:
            self._processors.extend(new_processors)
            if self._processors_started:
                self._start_processors(new_processors)

    def start_processors(self) -> None:
        with self._lock:
            if not self._processors_started:
                self._processors_started = True
                self._start_processors(self._processors)

    def _start_processors(self, processors: list[Processor]) -> None:
        for processor in processors:
            processor.start_thread(
                f"{self._thread_prefix}-kafka-network-thread-{self._broker_id}-"
                f"{self.listener_name}-{self.security_protocol}-{processor.id}"
            )

    def remove_processors(self, remove_count: int, request_channel: RequestChannel) -> None:
        # Out of the rotation first so no new connection lands on a stopping Processor.
        with self._lock:
            to_remove = self._processors[-remove_count:]
            del self._processors[-remove_count:]
        for processor in to_remove:
            processor.shutdown()
        for processor in to_remove:
            request_channel.remove_processor(processor.id)

    @property
    def processors(self) -> list[Processor]:
        with self._lock:
            return list(self._processors)

    # ---- lifecycle --------------------------------------------------------------
    def wakeup(self) -> None:
        self._waker.wakeup()
        self._connection_quotas.wake_waiters()

    def shutdown(self) -> None:
        super().shutdown()
        if self._thread is None:
            self._close_resources()
        with self._lock:
            processors = list(self._processors)
        for processor in processors:
            processor.shutdown()

    def run(self) -> None:
        self._nio.register(self.server_socket, selectors.EVENT_READ, self.server_socket)
        self._nio.register(self._waker.fileno(), selectors.EVENT_READ, None)
        self.startup_complete()
        try:
            while self.is_running:
                try:
                    self.accept_new_connections()
                    self.close_throttled_connections()
                except Exception:  # noqa: BLE001 - the acceptor must outlive any one error
                    logger.exception("Error occurred")
        finally:
            logger.debug("Closing server socket and selector.")
            for _, sock in self._throttled_sockets:
                sock.close()
            self._throttled_sockets.clear()
            self._close_resources()
            self.shutdown_complete()

    def _close_resources(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.remove_metric_if_same("AcceptorBlockedPercent", self.blocked_percent_meter, self._metric_tags)
        for closeable in (self.server_socket, self._nio, self._waker):
            try:
                closeable.close()
            except OSError:
                pass

    # ---- accepting --------------------------------------------------------------
    def close_throttled_connections(self) -> None:
        """Close the connections whose IP throttle time has passed."""
        if not self._throttled_sockets:
            return
        now = time.monotonic_ns() // 1_000_000
        due = [entry for entry in self._throttled_sockets if entry[0] <= now]
        if due:
            self._throttled_sockets = [entry for entry in self._throttled_sockets if entry[0] > now]
            for _, sock in due:
                try:
                    sock.close()
                except OSError:
                    pass

    def accept_new_connections(self) -> None:
        timeout = 0.5
        if self._throttled_sockets:
            next_close = min(entry[0] for entry in self._throttled_sockets)
            timeout = min(timeout, max(next_close - time.monotonic_ns() // 1_000_000, 0) / 1000.0)
        for key, _ in self._nio.select(timeout):
            if key.data is None:
                self._waker.drain()
                continue
            for _ in accepts_per_ready_key():  # tuning: kafka_py/tuning/accept_batch.py
                if not self.is_running:
                    return
                try:
                    accepted = self.accept()
                except BlockingIOError:
                    break
                if accepted is not None:
                    self._assign_new_connection(*accepted)

    def accept(self) -> Optional[tuple[socket.socket, str, int]]:
        """Accept one connection and count it; None if it was rejected and closed."""
        sock, remote = self.server_socket.accept()
        address = normalize_address(remote[0])
        try:
            if not self._connection_quotas.inc(self.listener_name, address, lambda: self.is_running):
                sock.close()
                return None
        except TooManyConnectionsException as e:
            logger.info("Rejected connection from %s, address already has the configured "
                        "maximum of %d connections.", e.ip, e.count)
            self.close_socket(self.listener_name, sock, address)
            return None
        except ConnectionThrottledException as e:
            # Not counted; closed once the throttle time is up, so the client does not
            # reconnect at once (Kafka's DelayedCloseSocket).
            logger.debug("Delaying closing of connection from %s for %d ms", e.ip, e.throttle_time_ms)
            self._throttled_sockets.append((time.monotonic_ns() // 1_000_000 + e.throttle_time_ms, sock))
            return None
        try:
            self._configure_accepted_socket(sock)
        except OSError as e:
            logger.debug("Could not configure connection from %s: %s", address, e)
            self.close_socket(self.listener_name, sock, address)
            return None
        return sock, address, remote[1]

    def _configure_accepted_socket(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self.send_buffer_size != USE_DEFAULT_BUFFER_SIZE:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_size)

    def _assign_new_connection(self, sock: socket.socket, address: str, port: int) -> None:
        # Round-robin over the Processors whose queue has room; if none has, block on
        # the last one tried (Kafka's assignNewConnection).
        with self._lock:
            retries_left = len(self._processors)
        while True:
            retries_left -= 1
            with self._lock:
                if not self._processors:
                    self.close_socket(self.listener_name, sock, address)
                    return
                self._current_processor_index %= len(self._processors)
                processor = self._processors[self._current_processor_index]
            self._current_processor_index += 1
            may_block = retries_left <= 0
            if processor.accept(sock, address, port, may_block, lambda: self.is_running,
                                self.blocked_percent_meter):
                logger.debug("Accepted connection from %s:%d on %s and assigned it to processor %d",
                             address, port, self.listener_name, processor.id)
                return
            if may_block:
                # Shutting down while waiting for room.
                self.close_socket(self.listener_name, sock, address)
                return

    def _open_server_socket(self, host: Optional[str], port: int) -> socket.socket:
        address: tuple[Any, ...]
        if not host or not host.strip():
            if socket.has_dualstack_ipv6():
                family, address = socket.AF_INET6, ("::", port)
            else:
                family, address = socket.AF_INET, ("0.0.0.0", port)
            host_string = "0.0.0.0"
        else:
            try:
                info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                          flags=socket.AI_PASSIVE)[0]
            except OSError as e:
                raise KafkaException(f"Socket server failed to bind to {host}:{port}: {e}.") from e
            family, address = info[0], info[4]
            host_string = host
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and address[0] == "::":
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            if self.recv_buffer_size != USE_DEFAULT_BUFFER_SIZE:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.recv_buffer_size)
            sock.bind(address)
            sock.listen(self._listen_backlog_size)
            sock.setblocking(False)
        except OSError as e:
            sock.close()
            raise KafkaException(f"Socket server failed to bind to {host_string}:{port}: {e}.") from e
        logger.info("Awaiting socket connections on %s:%d.", host_string, sock.getsockname()[1])
        return sock
