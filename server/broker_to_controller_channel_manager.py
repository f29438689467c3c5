"""Port of core/src/main/scala/kafka/server/BrokerToControllerChannelManager.scala (Kafka 2.8.2),
ZooKeeper mode: how a broker sends its own requests (AlterIsr) to the active controller.

* ``MetadataCacheControllerNodeProvider`` finds the controller the way Kafka's does: the
  controller id of the last UpdateMetadata, looked up among the alive brokers, on the
  control-plane listener if one is configured, else the inter-broker listener.
* ``BrokerToControllerRequestThread`` (a ShutdownableThread) owns a FIFO queue and sends one
  request at a time, so the controller sees a broker's requests in the order they were made.
  A request that meets a closed connection, or an answer carrying NOT_CONTROLLER, goes back
  to the head of the queue and the controller is looked up again; anything else is handed to
  the request's completion handler. With no controller known the thread backs off 100 ms
  between lookups, as Kafka's does (nothing signals a controller change to it).
* ``BrokerToControllerChannelManager`` starts and stops the thread and queues requests.

Kafka sends through a NetworkClient; here the thread holds one blocking connection
(``BlockingControllerConnection``) behind the small ``ControllerConnection`` interface, so a
shared blocking inter-broker client can replace it without touching the thread.
"""
from __future__ import annotations

import errno
import itertools
import logging
import os
import selectors
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass
from time import monotonic
from typing import Any, Callable, Optional, Protocol

from kafka_py.cluster.broker import ListenerName, Node
from kafka_py.protocol.api_keys import ApiKeys
from kafka_py.protocol.errors import Errors
from kafka_py.protocol.headers import RequestHeader
from kafka_py.protocol.messages import decode_response, encode_request
from kafka_py.utils.shutdownable_thread import ShutdownableThread
from kafka_py.utils.time import Time

logger = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
# Kafka's doWork polls for 100 ms when the metadata cache names no controller.
NO_CONTROLLER_BACKOFF_MS = 100
# The reconnect backoff of the NetworkClient Kafka builds for this channel.
RECONNECT_BACKOFF_MS = 50


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
        listener = getattr(config, "control_plane_listener_name", None) or config.inter_broker_listener_name
        return cls(metadata_cache, listener)

    def get(self) -> Optional[Node]:
        controller_id = self.metadata_cache.get_controller_id()
        if controller_id is None:
            return None
        broker = self.metadata_cache.get_alive_broker(controller_id)
        if broker is None:
            return None
        return broker.get_node(self.listener_name)


# -- the wire --------------------------------------------------------------------------------

class ControllerConnection(Protocol):
    """A blocking request/response channel to one node at a time."""

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        """Send ``request`` to ``node`` and return the decoded response body; raises OSError
        (or ConnectionError) when the connection fails or closes, after dropping it."""
        ...

    def disconnect(self) -> None:
        ...

    def abort(self) -> None:
        """From another thread: make a blocked ``send_and_receive`` fail at once."""
        ...


class BlockingControllerConnection:
    """One plain TCP connection, reconnected when the node changes or the connection failed.

    The connect is non-blocking and waited on in 100 ms slices on an epoll selector, so an
    ``abort`` (shutdown) never waits out a slow connect, and descriptors above 1023 work.
    """

    def __init__(self, client_id: str, connect_timeout_ms: int, request_timeout_ms: int) -> None:
        self.client_id = client_id
        self.connect_timeout_ms = connect_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self._correlation_ids = itertools.count()
        self._lock = threading.Lock()  # guards _sock, _node and _aborted against abort()
        self._sock: Optional[socket.socket] = None
        self._node: Optional[Node] = None
        self._aborted = False

    def send_and_receive(self, node: Node, api_key: ApiKeys, api_version: int, request: Any) -> Any:
        sock = self._ready(node)
        try:
            correlation_id = next(self._correlation_ids) & 0x7FFFFFFF
            header = RequestHeader.for_request(api_key, api_version, correlation_id, self.client_id)
            sock.sendall(encode_request(header, request))
            (size,) = _SIZE.unpack(_recv_exactly(sock, 4))
            if size < 0:
                raise ConnectionError(f"invalid response size {size}")
            response_header, response = decode_response(_recv_exactly(sock, size), api_key, api_version)
            if response_header.correlation_id != correlation_id:
                raise ConnectionError(f"correlation id {response_header.correlation_id} does not match "
                                      f"request correlation id {correlation_id}")
            return response
        except Exception:
            self.disconnect()
            raise

    def _ready(self, node: Node) -> socket.socket:
        with self._lock:
            if self._aborted:
                raise ConnectionError("connection aborted")
            if self._sock is not None and self._node == node:
                return self._sock
        self.disconnect()
        sock = self._connect(node)
        with self._lock:
            if self._aborted:
                sock.close()
                raise ConnectionError("connection aborted")
            self._sock, self._node = sock, node
        return sock

    def _connect(self, node: Node) -> socket.socket:
        deadline = monotonic() + self.connect_timeout_ms / 1000.0
        last_error: OSError = OSError(f"no address for {node.host}")
        for family, kind, proto, _, address in socket.getaddrinfo(node.host, node.port, type=socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                code = sock.connect_ex(address)
                if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                    raise OSError(code, os.strerror(code))
                if code != 0:
                    self._await_connected(sock, deadline)
                sock.setblocking(True)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(self.request_timeout_ms / 1000.0)
                return sock
            except OSError as e:
                sock.close()
                last_error = e
        raise last_error

    def _await_connected(self, sock: socket.socket, deadline: float) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_WRITE)
            while True:
                with self._lock:
                    if self._aborted:
                        raise OSError("connection aborted")
                remaining = deadline - monotonic()
                if remaining <= 0:
                    raise socket.timeout(f"Failed to connect within {self.connect_timeout_ms} ms")
                if selector.select(min(remaining, 0.1)):
                    code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if code != 0:
                        raise OSError(code, os.strerror(code))
                    return

    def disconnect(self) -> None:
        with self._lock:
            sock, self._sock, self._node = self._sock, None, None
        if sock is not None:
            sock.close()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            sock = self._sock
        if sock is not None:
            try:
                # wakes a recv blocked on another thread; close() alone would not
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        n = sock.recv_into(view[received:])
        if n == 0:
            raise ConnectionError("connection closed by the controller")
        received += n
    return bytes(buffer)


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
                logger.debug("%sNo controller defined in metadata cache, retrying after backoff", self.log_ident)
                self._requeue_first(item)
                # Nothing signals a new controller to this thread; only a shutdown ends the wait early.
                self.pause(NO_CONTROLLER_BACKOFF_MS)
                return
            logger.info("%sRecorded new controller, from now on will use broker %s", self.log_ident, controller)
            self._update_controller_address(controller)
        try:
            version = item.api_key.latest_version
            response = self.connection.send_and_receive(controller, item.api_key, version, item.request)
        except Exception as e:  # noqa: BLE001 - any failure counts as a disconnect: resend elsewhere
            if self.is_running:
                # Once per node: the metadata cache may keep naming a dead controller for a while.
                log = logger.debug if controller == self._last_failed_node else logger.warning
                log("%sRequest %s to controller %s failed (%s); looking for the controller again",
                    self.log_ident, item.api_key.api_name, controller, e)
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

    def _safely(self, action: Callable[[], None]) -> None:
        # A failing completion handler must not stop the thread that serves every later request.
        try:
            action()
        except Exception:  # noqa: BLE001
            logger.exception("%sError in the completion handler of a request to the controller", self.log_ident)


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
            connection = BlockingControllerConnection(f"broker-{broker_id}-{channel_name}",
                                                      config.controller_socket_timeout_ms,
                                                      config.request_timeout_ms)
        name = f"broker-{broker_id}-to-controller-send-thread"
        if thread_name_prefix:
            name = f"{thread_name_prefix}:{name}"
        self.request_thread = BrokerToControllerRequestThread(connection, controller_node_provider, time, name,
                                                              retry_timeout_ms)

    def start(self) -> None:
        self.request_thread.start()

    def shutdown(self) -> None:
        self.request_thread.shutdown()
        self.request_thread.connection.disconnect()
        logger.info("Broker to controller channel manager for %s shutdown", self.channel_name)

    def send_request(self, api_key: ApiKeys, request: Any, callback: ControllerRequestCompletionHandler) -> None:
        self.request_thread.enqueue(BrokerToControllerQueueItem(self.time.milliseconds(), api_key, request,
                                                                callback))


__all__ = [
    "ControllerNodeProvider", "MetadataCacheControllerNodeProvider", "ControllerConnection",
    "BlockingControllerConnection", "ClientResponse", "ControllerRequestCompletionHandler",
    "BrokerToControllerQueueItem", "BrokerToControllerRequestThread", "BrokerToControllerChannelManager",
]
