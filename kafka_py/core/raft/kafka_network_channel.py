"""Port of core/src/main/scala/kafka/raft/KafkaNetworkChannel.scala (Kafka 2.8.2).

The raft client's NetworkChannel over real connections: Vote, BeginQuorumEpoch,
EndQuorumEpoch, Fetch and FetchSnapshot requests go to the voters at the addresses of
``controller.quorum.voters``, over the security protocol of the first of
``controller.listener.names``, and each answer (or failure) completes the request's
``completion``, which hands it to the raft client's message queue.

Kafka runs one RaftSendThread over one non-blocking NetworkClient with a connection per
destination. The project's NetworkClient (kafka_py/clients/network_client.py) is blocking and
holds one connection with one request in flight, so each destination gets a RaftSendThread
of its own (``<prefix>-outbound-request-thread-<id>``), with its own queue and connection: a
long-polling Fetch to the leader then never holds up a Vote to another voter. The raft
client's RequestManager keeps at most one request outstanding per destination anyway.

Failures become answers as in Kafka: a request that cannot be sent (no known address, the
connection refused or lost, no answer within ``controller.quorum.request.timeout.ms`` of
being created) is answered with BROKER_NOT_AVAILABLE, a failed authentication with
NETWORK_EXCEPTION (retriable: the raft client backs off and tries again), and the raft
client retries after its backoff. A destination whose connection failed is not dialled again
until a reconnect backoff has passed (50 ms, doubling up to 500 ms, Kafka's raft NetworkClient
settings).
"""
from __future__ import annotations

import collections
import itertools
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from kafka_py.clients.network_client import ClientClosedException, NetworkClient
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.raft import raft_util
from kafka_py.raft.network_channel import NetworkChannel
from kafka_py.raft.raft_config import InetAddressSpec
from kafka_py.raft.raft_request import RaftRequest
from kafka_py.raft.raft_response import RaftResponse
from kafka_py.clients.common.security.errors import AuthenticationException
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 500
# How long an idle sender waits for a request before looking at its shutdown flag again.
_IDLE_WAIT_MS = 300


def build_request(request_data: Any) -> tuple[ApiKeys, int]:
    """The api key and version a raft request body is sent as (Kafka's buildRequest): the
    version of the message class the raft client built it with."""
    api_key = raft_util.api_key_of(request_data)
    if api_key not in (ApiKeys.VOTE, ApiKeys.BEGIN_QUORUM_EPOCH, ApiKeys.END_QUORUM_EPOCH, ApiKeys.FETCH,
                       ApiKeys.FETCH_SNAPSHOT):
        raise ValueError(f"Unexpected type for requestData: {type(request_data).__name__}")
    return api_key, int(request_data.__version__)


@dataclass(frozen=True, slots=True)
class RequestAndCompletionHandler:
    """kafka.common.RequestAndCompletionHandler: what a send thread is given to send."""

    created_time_ms: int
    destination: int
    request: "RaftRequest.Outbound"
    handler: Callable[[Optional[Any], Optional[Errors]], None]


class RaftSendThread(ShutdownableThread):
    """Sends the requests queued for one destination, one at a time, over one connection."""

    def __init__(self, name: str, destination_id: int, endpoint: Callable[[], Optional[Node]],
                 new_client: Callable[[Node], NetworkClient], request_timeout_ms: int, time: Time,
                 log_prefix: str) -> None:
        super().__init__(name, is_interruptible=False, daemon=True)
        self.logger.ident = f"{log_prefix}[{name}]: "
        self._destination_id = destination_id
        self._endpoint = endpoint
        self._new_client = new_client
        self._request_timeout_ms = request_timeout_ms
        self._time = time
        self._queue: collections.deque[RequestAndCompletionHandler] = collections.deque()
        self._cond = threading.Condition()
        self._client: Optional[NetworkClient] = None
        self._client_lock = threading.Lock()
        self._connect_failures = 0
        self._reconnect_at_ms = 0

    def send_request(self, request: RequestAndCompletionHandler) -> None:
        with self._cond:
            self._queue.append(request)
            self._cond.notify()

    def initiate_shutdown(self) -> bool:
        started = super().initiate_shutdown()
        with self._cond:
            self._cond.notify_all()
        with self._client_lock:
            if self._client is not None:
                # Ends a wait on the socket at once.
                self._client.initiate_close()
        return started

    def do_work(self) -> None:
        with self._cond:
            if not self._queue:
                self._cond.wait(_IDLE_WAIT_MS / 1000.0)
            if not self._queue or not self.is_running:
                return
            item = self._queue.popleft()
        self._send(item)

    def fail_pending(self) -> None:
        """Answer everything still queued (the channel is closing)."""
        with self._cond:
            pending, self._queue = list(self._queue), collections.deque()
        for item in pending:
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)

    def _send(self, item: RequestAndCompletionHandler) -> None:
        now_ms = self._time.milliseconds()
        remaining_ms = self._request_timeout_ms - max(0, now_ms - item.created_time_ms)
        if remaining_ms <= 0:
            # Kafka's failExpiredRequests: too old to be worth sending.
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)
            return
        node = self._endpoint()
        if node is None:
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)
            return
        backoff_ms = self._reconnect_at_ms - now_ms
        if backoff_ms > 0 and self._client_not_connected():
            if self.pause(min(backoff_ms, remaining_ms)):
                item.handler(None, Errors.BROKER_NOT_AVAILABLE)
                return
            remaining_ms = self._request_timeout_ms - max(0, self._time.milliseconds() - item.created_time_ms)
            if remaining_ms <= 0:
                item.handler(None, Errors.BROKER_NOT_AVAILABLE)
                return
        client = self._client_for(node)
        api_key, api_version = build_request(item.request.data())
        try:
            if not client.connect(remaining_ms):
                raise TimeoutError(f"Connection to node {node.id} ({node.host}:{node.port}) was not established "
                                   f"within {remaining_ms} ms")
            self._connected()
            client.request_timeout_ms = remaining_ms
            client.send(client.new_client_request(api_key, api_version, item.request.data()))
            response = client.poll().response_body
        except ClientClosedException:
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)
            return
        except AuthenticationException as e:
            self.logger.error("Request %s failed due to authentication error: %s", item.request, e)
            self._connection_failed(node, client)
            item.handler(None, Errors.NETWORK_EXCEPTION)
            return
        except (OSError, TimeoutError) as e:
            self._connection_failed(node, client, e)
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)
            return
        except Exception:  # noqa: BLE001 - a bad answer must not end the sender
            self.logger.exception("Failed to send %s to node %d", item.request, node.id)
            self._disconnect(client)
            item.handler(None, Errors.BROKER_NOT_AVAILABLE)
            return
        item.handler(response, None)

    def _client_not_connected(self) -> bool:
        with self._client_lock:
            return self._client is None or self._client.fileno() < 0

    def _client_for(self, node: Node) -> NetworkClient:
        with self._client_lock:
            client = self._client
            if client is not None and (client.node.host, client.node.port) != (node.host, node.port):
                client.close()
                client = None
            if client is None:
                client = self._client = self._new_client(node)
            return client

    def _connected(self) -> None:
        if self._connect_failures:
            self.logger.info("Connection to node %d re-established", self._destination_id)
        self._connect_failures = 0
        self._reconnect_at_ms = 0

    def _connection_failed(self, node: Node, client: NetworkClient, error: Optional[BaseException] = None) -> None:
        self._disconnect(client)
        self._connect_failures += 1
        backoff_ms = min(RECONNECT_BACKOFF_MS << min(self._connect_failures - 1, 10), RECONNECT_BACKOFF_MAX_MS)
        self._reconnect_at_ms = self._time.milliseconds() + backoff_ms
        if self._connect_failures == 1:
            # Once per outage, not once per retry: a dead voter is dialled many times a second.
            self.logger.warning("Connection to node %d (%s:%d) could not be established. Broker may not be "
                                "available. (%s)", node.id, node.host, node.port, error)
        else:
            self.logger.debug("Connection to node %d (%s:%d) failed again: %s", node.id, node.host, node.port,
                              error)

    def _disconnect(self, client: NetworkClient) -> None:
        try:
            client.disconnect()
        except OSError:
            pass

    def close_client(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


class KafkaNetworkChannel(NetworkChannel):
    def __init__(self, time: Time, new_client: Callable[[Node], NetworkClient], request_timeout_ms: int,
                 thread_name_prefix: str, log_prefix: str = "") -> None:
        self._time = time
        self._new_client = new_client
        self._request_timeout_ms = request_timeout_ms
        self._thread_name_prefix = thread_name_prefix
        self._log_prefix = log_prefix
        self.logger = IdentLogger(logger, log_prefix)
        self._correlation_ids = itertools.count()
        self._lock = threading.Lock()
        self._endpoints: dict[int, Node] = {}
        self._send_threads: dict[int, RaftSendThread] = {}
        self._started = False
        self._closed = False

    def new_correlation_id(self) -> int:
        with self._lock:
            return next(self._correlation_ids)

    def update_endpoint(self, node_id: int, address: InetAddressSpec) -> None:
        with self._lock:
            self._endpoints[node_id] = Node(node_id, address.host, address.port)

    def _endpoint(self, node_id: int) -> Optional[Node]:
        with self._lock:
            return self._endpoints.get(node_id)

    def send(self, request: "RaftRequest.Outbound") -> None:
        destination_id = request.destination_id()

        def complete(response: Optional[Any], error: Optional[Errors]) -> None:
            if error is not None:
                response = raft_util.error_response(raft_util.api_key_of(request.data()), error)
            request.completion.complete(RaftResponse.Inbound(request.correlation_id(), response, destination_id))

        with self._lock:
            if destination_id not in self._endpoints or self._closed:
                thread = None
            else:
                thread = self._send_threads.get(destination_id)
                if thread is None:
                    thread = self._send_threads[destination_id] = RaftSendThread(
                        f"{self._thread_name_prefix}-outbound-request-thread-{destination_id}", destination_id,
                        lambda: self._endpoint(destination_id), self._new_client, self._request_timeout_ms,
                        self._time, self._log_prefix)
                    if self._started:
                        thread.start()
        if thread is None:
            complete(None, Errors.BROKER_NOT_AVAILABLE)
            return
        thread.send_request(RequestAndCompletionHandler(request.created_time_ms(), destination_id, request, complete))

    def start(self) -> None:
        with self._lock:
            self._started = True
            threads = list(self._send_threads.values())
        for thread in threads:
            if not thread.is_alive():
                thread.start()

    def initiate_shutdown(self) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._send_threads.values())
        for thread in threads:
            thread.initiate_shutdown()

    def close(self) -> None:
        self.initiate_shutdown()
        with self._lock:
            threads = list(self._send_threads.values())
        for thread in threads:
            thread.await_shutdown()
            thread.fail_pending()
            thread.close_client()
