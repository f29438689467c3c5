"""Port of the AbstractServerThread and Processor classes of
core/src/main/scala/kafka/network/SocketServer.scala (Kafka 2.8.2).

Kept apart from socket_server.py for size only. A Processor is one network thread
with its own Selector (network/selector.py). Its loop runs Kafka's steps in Kafka's
order: configure the connections the Acceptor queued, start writing the responses
handlers queued, poll the sockets (300 ms at most, or not at all when connections are
waiting), turn complete frames into requests for the RequestChannel, unmute the
connections whose responses are written, uncount the connections that went away, and
close connections beyond the broker's limit.

A connection a client quota throttles (KIP-219) gets its response at once but stays muted
until the throttle ends: between a StartThrottlingResponse and the matching
EndThrottlingResponse, a written response does not unmute it (Kafka's ChannelMuteState
MUTED_AND_THROTTLED), so the Processor reads nothing more from that client meanwhile.

Every failure tied to one connection (an unparseable request, a send that fails)
closes that connection and is logged; the loop itself catches everything else, so no
client can stop a Processor.
"""
from __future__ import annotations

import logging
import queue
import socket
import threading
from collections import deque
from typing import Any, Callable, Optional

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.messages import decode_request
from kafka_py.tuning.wakeups import ProcessorWakeups
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.network.channel_metadata_registry import EMPTY_CLIENT_INFORMATION, client_information_of
from kafka_py.network.connection_quotas import ConnectionQuotas, normalize_address
from kafka_py.network.request_channel import (
    CloseConnectionResponse,
    EndThrottlingResponse,
    NoOpResponse,
    Request,
    RequestChannel,
    RequestContext,
    Response,
    SendResponse,
    StartThrottlingResponse,
)
from kafka_py.network.selector import KafkaChannel, Selector, SelectorMetrics
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, TimeRatio
from kafka_py.network.send import Send

logger = logging.getLogger(__name__)

CONNECTION_QUEUE_SIZE = 20
# Answers the Processor completes as it takes them off its queue (nothing to write).
_ANSWERED_ON_DEQUEUE = (NoOpResponse, CloseConnectionResponse)
POLL_TIMEOUT_MS = 300
_API_VERSIONS = ApiKeys.API_VERSIONS


class AbstractServerThread:
    """What Acceptor and Processor share: the thread, its start/stop latches, closing sockets."""

    def __init__(self, connection_quotas: ConnectionQuotas) -> None:
        self._connection_quotas = connection_quotas
        self._startup_latch = threading.Event()
        # Open until the thread starts, so shutting down a thread that never ran (or
        # whose constructor failed) does not wait for it.
        self._shutdown_latch = threading.Event()
        self._shutdown_latch.set()
        self._alive = True
        self._alive_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None

    def wakeup(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        raise NotImplementedError

    def start_thread(self, name: str) -> None:
        self._thread = threading.Thread(target=self.run, name=name, daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Ask the thread to stop and wait until it has."""
        with self._alive_lock:
            was_alive, self._alive = self._alive, False
        if was_alive:
            self.wakeup()
        self._shutdown_latch.wait()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def await_startup(self) -> None:
        self._startup_latch.wait()

    def startup_complete(self) -> None:
        self._shutdown_latch = threading.Event()
        self._startup_latch.set()

    def shutdown_complete(self) -> None:
        self._shutdown_latch.set()

    @property
    def is_running(self) -> bool:
        return self._alive

    @property
    def thread(self) -> Optional[threading.Thread]:
        return self._thread

    def close_socket(self, listener_name: Any, sock: socket.socket, address: str) -> None:
        """Close an accepted socket the Selector does not own yet, and uncount it."""
        logger.debug("Closing connection from %s", address)
        self._connection_quotas.dec(listener_name, address)
        try:
            sock.close()
        except OSError:
            pass


class Processor(AbstractServerThread, KafkaMetricsGroup):
    """A network thread: reads requests from its connections and writes their responses.

    Its metric is Kafka's ``kafka.network:type=Processor,name=IdlePercent,networkProcessor=N``:
    the share of the last 30 to 60 s it spent waiting in select.
    """

    def __init__(
        self,
        id: int,
        time: Time,
        max_request_size: int,
        request_channel: RequestChannel,
        connection_quotas: ConnectionQuotas,
        connections_max_idle_ms: int,
        listener_name: str,
        security_protocol: str,
        config: Any,
        log_prefix: str = "",
        connection_queue_size: int = CONNECTION_QUEUE_SIZE,
        channel_builder: Any = None,
        api_version_manager: Any = None,
    ) -> None:
        super().__init__(connection_quotas)
        self.id = id
        self._time = time
        self._request_channel = request_channel
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self._config = config
        # The listener's own API set (the KRaft controller's); None: the broker's.
        self._api_version_manager = api_version_manager
        self.logger = IdentLogger(logger, log_prefix)
        selector_metrics = SelectorMetrics(time, config.metric_num_samples, config.metric_sample_window_ms)
        if channel_builder is None:
            self._selector = Selector(max_request_size, connections_max_idle_ms, time, log_prefix, selector_metrics)
        else:
            # TLS and SASL listeners: channels authenticate before their frames become requests.
            from kafka_py.network.secure_selector import SecureSelector
            self._selector = SecureSelector(max_request_size, connections_max_idle_ms, time, log_prefix,
                                            channel_builder, selector_metrics, api_version_manager)
        self._new_connections: queue.Queue[tuple[socket.socket, str, int]] = queue.Queue(
            connection_queue_size
        )
        self._connection_queue_size = connection_queue_size
        self._inflight_responses: dict[str, Response] = {}
        self._response_queue: deque[Response] = deque()
        # Connections under a quota throttle -> whether their response has been written
        # (then the end of the throttle unmutes them).
        self._throttled: dict[str, bool] = {}
        self._next_connection_index = 0
        selector = self._selector
        self.idle_ratio = TimeRatio(time.nanoseconds, lambda: selector.io_wait_time_ns)
        self.new_gauge("IdlePercent", self.idle_ratio.ratio, {"networkProcessor": str(id)})
        self._wakeups = ProcessorWakeups(self.wakeup)  # tuning: kafka_py/tuning/wakeups.py

    # ---- called from other threads ------------------------------------------------
    def accept(self, sock: socket.socket, address: str, port: int, may_block: bool,
               should_wait: Callable[[], bool] = lambda: True, blocked_meter: Any = None) -> bool:
        """Queue a new connection for this Processor; False if its queue is full. Time spent
        blocked waiting for room is marked on ``blocked_meter`` (the Acceptor's
        AcceptorBlockedPercent), in nanoseconds."""
        if not self.is_running:
            # Being removed or stopped: let the Acceptor pick another Processor.
            return False
        item = (sock, address, port)
        try:
            self._new_connections.put_nowait(item)
        except queue.Full:
            if not may_block:
                return False
            start_ns = self._time.nanoseconds()
            try:
                while True:
                    try:
                        self._new_connections.put(item, timeout=0.5)
                        break
                    except queue.Full:
                        if not (self.is_running and should_wait()):
                            return False
            finally:
                if blocked_meter is not None:
                    blocked_meter.mark(self._time.nanoseconds() - start_ns)
        self.wakeup()
        return True

    def enqueue_response(self, response: Response) -> None:
        self._response_queue.append(response)
        self._wakeups.response_queued()  # tuning: kafka_py/tuning/wakeups.py

    def wakeup(self) -> None:
        self._selector.wakeup()

    @property
    def response_queue_size(self) -> int:
        return len(self._response_queue)

    # ---- the loop ---------------------------------------------------------------
    def run(self) -> None:
        self.startup_complete()
        try:
            while self.is_running:
                try:
                    self.configure_new_connections()
                    self.process_new_responses()
                    if self._selector.completed_sends:
                        # Answers the socket took whole in send() are complete already: finish
                        # them (metrics, unmute) now, so that the poll below may block. Kafka's
                        # Selector writes only inside poll(); this one writes at once, and
                        # leaving them to after the poll would cost a zero-timeout poll and a
                        # loop a request at low load.
                        self.process_completed_sends()
                    self.poll()
                    self.process_completed_receives()
                    self.process_completed_sends()
                    self.process_disconnected()
                    self.close_excess_connections()
                except Exception:  # noqa: BLE001 - a Processor outlives any one error
                    self.logger.exception("Processor got uncaught exception.")
        finally:
            self.logger.debug("Closing selector - processor %d", self.id)
            try:
                self.close_all()
            except Exception:  # noqa: BLE001
                self.logger.exception("Error closing processor %d", self.id)
            self.remove_metric("IdlePercent", {"networkProcessor": str(self.id)})
            self.shutdown_complete()

    def shutdown(self) -> None:
        super().shutdown()
        if self._thread is None:
            self.close_all()

    def configure_new_connections(self) -> None:
        # Checked first, without the queue's lock: this runs every loop iteration, and an
        # empty get_nowait raises. A connection queued just after this look is picked up
        # on the next iteration: accept() wakes the selector after queueing it.
        if not self._new_connections.queue:
            return
        configured = 0
        while configured < self._connection_queue_size:
            try:
                sock, address, port = self._new_connections.get_nowait()
            except queue.Empty:
                return
            try:
                self.logger.debug("Processor %d listening to new connection from %s:%d", self.id, address, port)
                self._selector.register(self.connection_id(sock, address, port), sock, address, port)
                configured += 1
            except Exception as e:  # noqa: BLE001 - drop this connection only
                self.logger.warning("Could not register connection from %s:%d: %s", address, port, e)
                self.close_socket(self.listener_name, sock, address)

    def connection_id(self, sock: socket.socket, address: str, port: int) -> str:
        """``localHost:localPort-remoteHost:remotePort-index``; the index keeps ids unique
        when a client port is reused while a request of the old connection is in flight."""
        local = sock.getsockname()
        index = self._next_connection_index
        self._next_connection_index = 0 if index == INT_MAX else index + 1
        return f"{normalize_address(local[0])}:{local[1]}-{address}:{port}-{index}"

    def process_new_responses(self) -> None:
        queue_ = self._response_queue
        while queue_:
            response = queue_.popleft()
            connection_id = response.request.context.connection_id
            try:
                response.request.response_dequeue_time_ns = now = self._time.nanoseconds()
                if type(response) in _ANSWERED_ON_DEQUEUE:
                    # Nothing to write (acks=0) or a close: the request is complete now.
                    self._request_channel.metrics.update_request_metrics(response.request, now)
                if isinstance(response, SendResponse):
                    self.send_response(response, response.response_send)
                elif isinstance(response, NoOpResponse):
                    # Nothing to write: read the next request, which may already be buffered.
                    self._response_sent(connection_id)
                elif isinstance(response, CloseConnectionResponse):
                    self.close(connection_id)
                elif isinstance(response, StartThrottlingResponse):
                    if self._selector.channel(connection_id) is not None:
                        self._throttled[connection_id] = False
                elif isinstance(response, EndThrottlingResponse):
                    # Unmuted now only if the response is already written; otherwise when it is.
                    if self._throttled.pop(connection_id, False):
                        self._selector.unmute(connection_id)
                else:
                    raise ValueError(f"Unknown response type: {type(response).__name__}")
            except Exception as e:  # noqa: BLE001
                self._process_channel_exception(
                    connection_id, f"Exception while processing response for {connection_id}", e)

    def send_response(self, response: Response, response_send: Send) -> None:
        connection_id = response.request.context.connection_id
        if self._selector.channel(connection_id) is None:
            # Closed by the client, or for being idle, while the request was handled.
            self.logger.debug("Attempting to send response via channel for which there is no open "
                              "connection, connection id %s", connection_id)
            return
        self._inflight_responses[connection_id] = response
        self._selector.send(connection_id, response_send)

    def poll(self) -> None:
        timeout = 0 if self._new_connections.queue else POLL_TIMEOUT_MS
        if self._wakeups.poll_starting(self._response_queue):  # tuning: kafka_py/tuning/wakeups.py
            timeout = 0
        try:
            self._selector.poll(timeout)
        except Exception:  # noqa: BLE001 - what completed before the failure is still processed
            self.logger.exception("Processor %d poll failed", self.id)
        finally:
            self._wakeups.poll_ended()  # tuning: kafka_py/tuning/wakeups.py

    def process_completed_receives(self) -> None:
        for connection_id, frame in self._selector.drain_completed_receives():
            channel = self._selector.channel(connection_id)
            if channel is None:
                continue
            try:
                header, body = decode_request(frame, self._api_version_manager)
                metadata = channel.metadata
                context = RequestContext(header, connection_id, channel.socket_address,
                                         self.listener_name, self.security_protocol,
                                         principal=channel.principal,
                                         client_information=(metadata.client_information or EMPTY_CLIENT_INFORMATION)
                                         if metadata is not None else EMPTY_CLIENT_INFORMATION)
                request = Request(self.id, context, self._time.nanoseconds(), frame, body)
            except Exception as e:  # noqa: BLE001
                self._process_channel_exception(
                    connection_id, f"Exception while processing request from {connection_id}", e)
                continue
            if header.api_key is _API_VERSIONS:
                # KIP-511: the client names its software in ApiVersions; the connection is
                # counted under it from now on (KafkaApis answers an invalid one).
                client_information = client_information_of(
                    0 if context.is_unsupported_api_versions_request else header.api_version, body)
                if client_information is not None and channel.metadata is not None:
                    channel.metadata.register_client_information(client_information)
            # Muted until the response is written: one request per connection at a time.
            self._selector.mute(connection_id)
            self._enqueue_request(request)

    def _enqueue_request(self, request: Request) -> None:
        # Blocks while the request queue is full (back-pressure on every connection of
        # this Processor), but not past a shutdown.
        while not self._request_channel.send_request(request, timeout_ms=POLL_TIMEOUT_MS):
            if not self.is_running:
                return

    def process_completed_sends(self) -> None:
        for connection_id, send in self._selector.drain_completed_sends():
            response = self._inflight_responses.pop(connection_id, None)
            if response is None:
                continue
            try:
                response.on_complete(send)
                self._request_channel.metrics.update_request_metrics(response.request, self._time.nanoseconds())
                self._response_sent(connection_id)
            except Exception as e:  # noqa: BLE001
                self._process_channel_exception(
                    connection_id, f"Exception while processing completed send to {connection_id}", e)

    def _response_sent(self, connection_id: str) -> None:
        """The response of the connection's request is out: read its next request, unless a
        quota throttle is still running (its end unmutes the connection then)."""
        if self._throttled and connection_id in self._throttled:
            self._throttled[connection_id] = True
        else:
            self._selector.unmute(connection_id)

    def process_disconnected(self) -> None:
        for connection_id, address in self._selector.drain_disconnected():
            self._inflight_responses.pop(connection_id, None)
            self._throttled.pop(connection_id, None)
            self._connection_quotas.dec(self.listener_name, address)

    def close_excess_connections(self) -> None:
        if self._connection_quotas.max_connections_exceeded(self.listener_name):
            channel = self._selector.lowest_priority_channel()
            if channel is not None:
                self.close(channel.id)

    def close(self, connection_id: str) -> None:
        """Close a connection, uncount it and drop its in-flight response."""
        channel = self._selector.channel(connection_id)
        if channel is None:
            return
        self.logger.debug("Closing selector connection %s", connection_id)
        self._connection_quotas.dec(self.listener_name, channel.socket_address)
        self._selector.close(connection_id)
        self._inflight_responses.pop(connection_id, None)
        self._throttled.pop(connection_id, None)

    def _process_channel_exception(self, connection_id: str, message: str, error: Exception) -> None:
        if self._selector.channel(connection_id) is not None:
            self.logger.warning("Closing socket for %s because of error: %s", connection_id, error)
            self.logger.debug("%s", message, exc_info=error)
            self.close(connection_id)

    def close_all(self) -> None:
        while True:
            try:
                sock, address, _ = self._new_connections.get_nowait()
            except queue.Empty:
                break
            self.close_socket(self.listener_name, sock, address)
        for channel in self._selector.channels():
            self.close(channel.id)
        self._selector.close_all()
        self._response_queue.clear()

    # ---- for tests --------------------------------------------------------------
    @property
    def selector(self) -> Selector:
        return self._selector

    def open_or_closing_channel(self, connection_id: str) -> Optional[KafkaChannel]:
        return self._selector.channel(connection_id)

    def __repr__(self) -> str:
        return f"Processor(id={self.id}, listener={self.listener_name})"
