"""Port of core/src/main/scala/kafka/server/BrokerToControllerChannelManager.scala (Kafka 2.8.2):
how a broker sends its own requests (AlterIsr; in KRaft mode also registration, heartbeats,
forwarded admin requests and producer id blocks) to the active controller.

* ``MetadataCacheControllerNodeProvider`` (ZooKeeper mode) finds the controller the way
  Kafka's does: the controller id of the last UpdateMetadata, looked up among the alive
  brokers, on the control-plane listener if one is configured, else the inter-broker listener.
* ``RaftControllerNodeProvider`` (KRaft mode): the node that leads the metadata log, as
  the MetaLogManager knows it, at its address in controller.quorum.voters.
* ``BrokerToControllerRequestThread`` (a ShutdownableThread) owns a FIFO queue and sends one
  request at a time, so the controller sees a broker's requests in the order they were made.
  A request that meets a closed connection, or an answer carrying NOT_CONTROLLER, goes back
  to the head of the queue and the controller is looked up again; anything else is handed to
  the request's completion handler. With no controller known the thread backs off 100 ms
  between lookups, as Kafka's does (nothing signals a controller change to it).
* ``BrokerToControllerChannelManager`` starts and stops the thread and queues requests.

Kafka sends through a NetworkClient; here the thread sends through the broker's blocking
client (kafka_py/clients), behind the small ``ControllerConnection`` interface
(``NetworkClientControllerConnection``), which tests can replace.
"""
from __future__ import annotations

import logging
import socket
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

from kafka_py.clients.network_client import RECONNECT_BACKOFF_MS, NetworkClient
from kafka_py.clients.network_client_utils import await_ready, send_and_receive
from kafka_py.core.cluster.broker import ListenerName, Node
from kafka_py.network.channel_builders import inter_broker_client_channel_builder
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

# Kafka's doWork polls for 100 ms when the metadata cache names no controller.
NO_CONTROLLER_BACKOFF_MS = 100
# How often a request in flight is checked against the active controller (_watch_controller_moves).
WATCH_INTERVAL_S = 0.1


# -- finding the controller ------------------------------------------------------------------

class ControllerNodeProvider(Protocol):
    """Where the active controller can be reached right now (None: not known)."""

    def get(self) -> Optional[Node]:
        ...


class MetadataCacheControllerNodeProvider:
    """The controller named by the last UpdateMetadata, if it is alive and has the listener."""

    def __init__(self, metadata_cache: Any, listener_name: ListenerName) -> None:
        self.metadata_cache = metadata_cache
        self.listener_name = listener_name

    @classmethod
    def create(cls, config: Any, metadata_cache: Any) -> "MetadataCacheControllerNodeProvider":
        listener = config.control_plane_listener_name or config.inter_broker_listener_name
        return cls(metadata_cache, listener)

    def get(self) -> Optional[Node]:
        controller_id = self.metadata_cache.get_controller_id()
        if controller_id is None:
            return None
        broker = self.metadata_cache.get_alive_broker(controller_id)
        if broker is None:
            return None
        return broker.get_node(self.listener_name)


class RaftControllerNodeProvider:
    """The active KRaft controller: the metadata log's leader, reached at its entry in
    controller.quorum.voters on the first of controller.listener.names."""

    def __init__(self, meta_log_manager: Any, controller_nodes: Any, listener_name: ListenerName,
                 security_protocol: Any = None, sasl_mechanism: Optional[str] = None) -> None:
        self.meta_log_manager = meta_log_manager
        self.id_to_node = {node.id: node for node in controller_nodes}
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self.sasl_mechanism = sasl_mechanism

    @classmethod
    def create(cls, meta_log_manager: Any, config: Any, controller_nodes: Any) -> "RaftControllerNodeProvider":
        listener_name = ListenerName(config.controller_listener_names[0])
        security_protocol = config.listener_security_protocol_map.get(listener_name)
        return cls(meta_log_manager, controller_nodes, listener_name, security_protocol,
                   config.sasl_mechanism_controller_protocol)

    def get(self) -> Optional[Node]:
        leader = self.meta_log_manager.leader()
        if leader is None or leader.node_id < 0:
            return None
        return self.id_to_node.get(leader.node_id)


def quorum_voter_strings_to_nodes(voters: Any) -> list[Node]:
    """RaftConfig.quorumVoterStringsToNodes: the voters of controller.quorum.voters with a
    known address, as Nodes."""
    from kafka_py.raft.raft_config import InetAddressSpec, parse_voter_connections

    return [Node(voter_id, spec.host, spec.port) for voter_id, spec in parse_voter_connections(voters).items()
            if isinstance(spec, InetAddressSpec)]


# -- the wire --------------------------------------------------------------------------------

class ControllerConnection(Protocol):
    """A blocking request/response channel to one node at a time."""

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        """Send ``request`` to ``node`` and return the decoded response body; raises OSError
        (ConnectionError included) when the connection fails or closes, after dropping it."""
        ...

    def disconnect(self) -> None:
        ...

    def abort(self) -> None:
        """From another thread: make a blocked ``send_and_receive`` fail at once, and every
        later one too (the channel is shutting down)."""
        ...

    def interrupt(self, node: Node) -> None:
        """From another thread: make a ``send_and_receive`` blocked on ``node`` fail at once
        (the controller moved away from it); later ones proceed."""
        ...

    def close(self) -> None:
        ...


class NetworkClientControllerConnection:
    """A ControllerConnection over the broker's blocking inter-broker client
    (kafka_py/clients/network_client.py): one NetworkClient for the controller node, replaced
    when the controller moves, connected within controller.socket.timeout.ms and answered
    within request.timeout.ms."""

    def __init__(self, client_id: str, connect_timeout_ms: int, request_timeout_ms: int,
                 time: Time = Time.SYSTEM, channel_builder: Any = None) -> None:
        self.client_id = client_id
        # TLS/SASL of the controller's listener (network/channel_builders.py); None for PLAINTEXT
        self.channel_builder = channel_builder
        self.connect_timeout_ms = connect_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.time = time
        self._lock = threading.Lock()  # guards _client and _aborted against abort() from another thread
        self._client: Optional[NetworkClient] = None
        self._aborted = False

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        client = self._client_for(node)
        try:
            if not await_ready(client, self.connect_timeout_ms):
                raise socket.timeout(f"Failed to connect to {node} within {self.connect_timeout_ms} ms")
            return send_and_receive(client, api_key, api_version, request).response_body
        except Exception:
            client.disconnect()
            raise
        finally:
            with self._lock:
                interrupted = client is not self._client
            if interrupted:  # interrupt() let go of it; this thread owns its socket and selector
                client.close()

    def interrupt(self, node: Node) -> None:
        with self._lock:
            client = self._client
            if client is None or client.node != node:
                return
            self._client = None
        client.initiate_close()

    def _client_for(self, node: Node) -> NetworkClient:
        with self._lock:
            if self._aborted:
                raise ConnectionError("the channel to the controller is closed")
            client = self._client
            if client is not None and client.node == node:
                return client
            self._client = NetworkClient(node, self.client_id, self.request_timeout_ms, time=self.time,
                                         channel_builder=self.channel_builder)
            new_client = self._client
        if client is not None:
            client.close()
        return new_client

    def disconnect(self) -> None:
        with self._lock:
            client = self._client
        if client is not None:
            client.disconnect()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            client = self._client
        if client is not None:
            client.initiate_close()

    def close(self) -> None:
        with self._lock:
            self._aborted = True
            client, self._client = self._client, None
        if client is not None:
            client.close()


# -- requests and their completion -----------------------------------------------------------

@dataclass(frozen=True)
class ClientResponse:
    """What a completion handler gets (clients' ClientResponse.java, reduced): the decoded body,
    or ``version_mismatch`` when the request could not be built for any version the broker has."""

    api_key: ApiKeys
    response_body: Any = None
    version_mismatch: Optional[BaseException] = None


class ControllerRequestCompletionHandler(Protocol):
    def on_complete(self, response: ClientResponse) -> None:
        ...

    def on_timeout(self) -> None:
        """The request waited (and retried) past the channel's retry timeout."""
        ...


@dataclass(frozen=True)
class BrokerToControllerQueueItem:
    created_time_ms: int
    api_key: ApiKeys
    request: Any
    callback: ControllerRequestCompletionHandler


def _response_errors(response: Any) -> set[Errors]:
    """Every error code in a response body (Kafka's AbstractResponse.errorCounts keys)."""
    found: set[Errors] = set()

    def walk(value: Any) -> None:
        if isinstance(value, (tuple, list)):
            for v in value:
                walk(v)
            return
        slots = getattr(type(value), "__dataclass_fields__", None)
        if slots is None:
            return
        for name in slots:
            attr = getattr(value, name)
            if name == "error_code":
                try:
                    found.add(Errors.for_code(int(attr)))
                except (TypeError, ValueError):
                    pass
            else:
                walk(attr)

    walk(response)
    return found


class BrokerToControllerRequestThread(ShutdownableThread):
    """Sends queued requests to the active controller, one at a time."""

    def __init__(self, connection: ControllerConnection, controller_node_provider: ControllerNodeProvider,
                 time: Time, thread_name: str, retry_timeout_ms: float) -> None:
        super().__init__(thread_name, is_interruptible=False, daemon=True)
        self.connection = connection
        self.controller_node_provider = controller_node_provider
        self.time = time
        self.retry_timeout_ms = retry_timeout_ms
        self._cond = threading.Condition()  # guards _queue and _active_controller
        self._queue: deque[BrokerToControllerQueueItem] = deque()
        self._active_controller: Optional[Node] = None
        self._last_failed_node: Optional[Node] = None  # this thread's only
        # The controller a request is in flight to (guarded by _cond), watched by
        # _watch_controller_moves; see there.
        self._in_flight_node: Optional[Node] = None
        self._watcher: Optional[threading.Thread] = None

    def active_controller_address(self) -> Optional[Node]:
        with self._cond:
            return self._active_controller

    def _update_controller_address(self, node: Optional[Node]) -> None:
        with self._cond:
            self._active_controller = node

    def enqueue(self, item: BrokerToControllerQueueItem) -> None:
        with self._cond:
            self._queue.append(item)
            self._cond.notify_all()

    @property
    def queue_size(self) -> int:
        with self._cond:
            return len(self._queue)

    def initiate_shutdown(self) -> bool:
        if not super().initiate_shutdown():
            return False
        self.connection.abort()
        with self._cond:
            self._cond.notify_all()
        return True

    def _next_item(self) -> Optional[BrokerToControllerQueueItem]:
        """The next request to send (timed-out ones answered on the way), or None to re-check
        the loop condition. Waits while there is nothing to send."""
        expired: list[BrokerToControllerQueueItem] = []
        item = None
        with self._cond:
            while self.is_running and not self._queue:
                self._cond.wait()
            now = self.time.milliseconds()
            while self._queue:
                head = self._queue[0]
                if now - head.created_time_ms >= self.retry_timeout_ms:
                    expired.append(self._queue.popleft())
                    continue
                item = self._queue.popleft()
                break
        for timed_out in expired:
            self._safely(timed_out.callback.on_timeout)
        return item

    def _requeue_first(self, item: BrokerToControllerQueueItem) -> None:
        with self._cond:
            self._queue.appendleft(item)

    def do_work(self) -> None:
        item = self._next_item()
        if item is None:
            return
        controller = self.active_controller_address()
        if controller is None:
            controller = self.controller_node_provider.get()
            if controller is None:
                self.logger.debug("No controller defined in metadata cache, retrying after backoff")
                self._requeue_first(item)
                # Nothing signals a new controller to this thread; only a shutdown ends the wait early.
                self.pause(NO_CONTROLLER_BACKOFF_MS)
                return
            self.logger.info("Recorded new controller, from now on will use broker %s", controller)
            self._update_controller_address(controller)
        self._ensure_watcher()
        try:
            version = item.api_key.latest_version
            with self._cond:
                self._in_flight_node = controller
                self._cond.notify_all()
            try:
                response = self.connection.send_and_receive(controller, item.api_key, version, item.request)
            finally:
                with self._cond:
                    self._in_flight_node = None
        except Exception as e:  # noqa: BLE001 - any failure counts as a disconnect: resend elsewhere
            if self.is_running:
                # Once per node: the metadata cache may keep naming a dead controller for a while.
                log = self.logger.debug if controller == self._last_failed_node else self.logger.warning
                log("Request %s to controller %s failed (%s); looking for the controller again",
                    item.api_key.api_name, controller, e)
                self._last_failed_node = controller
            self._update_controller_address(None)
            self._requeue_first(item)
            # NetworkClient's reconnect backoff: no tight loop against a node that refuses.
            self.pause(RECONNECT_BACKOFF_MS)
            return
        self._last_failed_node = None
        if Errors.NOT_CONTROLLER in _response_errors(response):
            # The controller moved: wait for the metadata cache to name the new one.
            self.connection.disconnect()
            self._update_controller_address(None)
            self._requeue_first(item)
            return
        self._safely(lambda: item.callback.on_complete(ClientResponse(item.api_key, response)))

    def _ensure_watcher(self) -> None:
        if self._watcher is None and hasattr(self.connection, "interrupt"):
            self._watcher = threading.Thread(target=self._watch_controller_moves, name=f"{self.name}-watcher",
                                             daemon=True)
            self._watcher.start()

    def _watch_controller_moves(self) -> None:
        """While a request waits on a controller that is no longer the active one (a KRaft
        controller cut off by the network stays silent, it sends no reset), give up on it as
        soon as the controller node provider names another, instead of at request.timeout.ms:
        a broker whose heartbeats wait that long on the old controller is fenced by the new
        one. Kafka's request thread waits out the timeout; this one resends at once."""
        while self.is_running:
            with self._cond:
                while self.is_running and self._in_flight_node is None:
                    self._cond.wait(timeout=1.0)
                node = self._in_flight_node
            if node is None:
                continue
            current = self.controller_node_provider.get()
            if current is not None and current != node:
                self.logger.info("The active controller moved from %s to %s: abandoning the request in flight",
                                 node, current)
                self.connection.interrupt(node)
            with self._cond:
                self._cond.wait(timeout=WATCH_INTERVAL_S)

    def _safely(self, action: Callable[[], None]) -> None:
        # A failing completion handler must not stop the thread that serves every later request.
        try:
            action()
        except Exception:  # noqa: BLE001
            self.logger.exception("Error in the completion handler of a request to the controller")


class BrokerToControllerChannelManager:
    """Owns the request thread of one named channel to the controller ("alterIsrChannel")."""

    def __init__(self, controller_node_provider: ControllerNodeProvider, time: Time, config: Any,
                 channel_name: str, thread_name_prefix: Optional[str] = None,
                 retry_timeout_ms: float = float("inf"),
                 connection: Optional[ControllerConnection] = None) -> None:
        self.time = time
        self.channel_name = channel_name
        broker_id = config.broker_id
        if connection is None:
            # the control-plane listener when configured, else the inter-broker one, with its
            # security protocol and sasl.mechanism.inter.broker.protocol, as Kafka's provider picks
            connection = NetworkClientControllerConnection(
                f"broker-{broker_id}-{channel_name}", config.controller_socket_timeout_ms, config.request_timeout_ms,
                time, inter_broker_client_channel_builder(config, control_plane=True))
        name = f"broker-{broker_id}-to-controller-send-thread"
        if thread_name_prefix:
            name = f"{thread_name_prefix}:{name}"
        self.request_thread = BrokerToControllerRequestThread(connection, controller_node_provider, time, name,
                                                              retry_timeout_ms)

    def start(self) -> None:
        self.request_thread.start()

    def shutdown(self) -> None:
        self.request_thread.shutdown()
        self.request_thread.connection.close()
        logger.info("Broker to controller channel manager for %s shutdown", self.channel_name)

    def send_request(self, api_key: ApiKeys, request: Any, callback: ControllerRequestCompletionHandler) -> None:
        self.request_thread.enqueue(BrokerToControllerQueueItem(self.time.milliseconds(), api_key, request,
                                                                callback))


__all__ = [
    "ControllerNodeProvider", "MetadataCacheControllerNodeProvider", "RaftControllerNodeProvider",
    "quorum_voter_strings_to_nodes", "ControllerConnection",
    "NetworkClientControllerConnection", "ClientResponse", "ControllerRequestCompletionHandler",
    "BrokerToControllerQueueItem", "BrokerToControllerRequestThread", "BrokerToControllerChannelManager",
]
