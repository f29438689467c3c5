"""Port of core/src/main/scala/kafka/network/RequestChannel.scala and the network side of
clients/.../common/requests/RequestContext.java (Kafka 2.8.2).

The RequestChannel is the hand-off between the network threads and the request
handler threads. Processors put parsed requests on one bounded queue shared by all of
them (``queued.max.requests``); when it is full a Processor blocks, which stops it
reading from its sockets: that is the broker's back-pressure. Handlers take requests
off the queue and answer through ``send_response``, which puts the response on the
queue of the Processor that owns the connection and wakes that Processor's selector.

A response is one of:

* ``SendResponse``: bytes (and file regions) to write; the connection is unmuted
  once they are all written, so the next request on it is read only then.
* ``NoOpResponse``: nothing to write (a produce with acks=0); unmute only.
* ``CloseConnectionResponse``: close the connection (a produce with acks=0 that
  failed: the client learns of it by the disconnect).
* ``StartThrottlingResponse`` / ``EndThrottlingResponse``: a client quota throttles the
  connection (KIP-219); between the two the Processor does not unmute it, so nothing more is
  read from it, even once its response is written (server/client_quota_manager.py).
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Union

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import to_version
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    decode_request,
    encode_response_chunks_for,
    is_unsupported_api_versions_request,
)
from kafka_py.network.channel_metadata_registry import EMPTY_CLIENT_INFORMATION, ClientInformation
from kafka_py.network.send import ByteBufferSend, MultiRecordsSend, Send
from kafka_py.network.request_metrics import RequestChannelMetrics, error_counts
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, recording
from time import monotonic_ns as _monotonic_ns

logger = logging.getLogger(__name__)

ANONYMOUS_PRINCIPAL = "User:ANONYMOUS"


@dataclass(frozen=True, slots=True, init=False)
class RequestContext:
    """Who sent a request and through which listener.

    ``client_id``, ``api_key`` and ``api_version`` default to the header's.
    ``connection_id`` is Kafka's ``localIp:localPort-remoteIp:remotePort-index``.
    """

    header: RequestHeader
    connection_id: str
    client_address: str
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    client_id: Optional[str] = None
    api_key: Optional[ApiKeys] = None
    api_version: Optional[int] = None
    principal: str = ANONYMOUS_PRINCIPAL
    from_privileged_listener: bool = False
    # The software the connection's last valid ApiVersions named (KIP-511), as Kafka's context
    # carries it: the ApiVersions request that names it still shows the one before.
    client_information: ClientInformation = EMPTY_CLIENT_INFORMATION

    def __init__(self, header: RequestHeader, connection_id: str, client_address: str,
                 listener_name: str = "PLAINTEXT", security_protocol: str = "PLAINTEXT",
                 client_id: Optional[str] = None, api_key: Optional[ApiKeys] = None,
                 api_version: Optional[int] = None, principal: str = ANONYMOUS_PRINCIPAL,
                 from_privileged_listener: bool = False,
                 client_information: ClientInformation = EMPTY_CLIENT_INFORMATION) -> None:
        # One is made per request: the fields are written once each through their slots'
        # setters (_CONTEXT_SETTERS), where a frozen dataclass's own __init__ goes through
        # object.__setattr__ per field and again for each default taken from the header.
        (set_header, set_connection_id, set_client_address, set_listener_name, set_security_protocol,
         set_client_id, set_api_key, set_api_version, set_principal, set_from_privileged_listener,
         set_client_information) = _CONTEXT_SETTERS
        set_header(self, header)
        set_connection_id(self, connection_id)
        set_client_address(self, client_address)
        set_listener_name(self, listener_name)
        set_security_protocol(self, security_protocol)
        set_client_id(self, header.client_id if client_id is None else client_id)
        set_api_key(self, header.api_key if api_key is None else api_key)
        set_api_version(self, header.api_version if api_version is None else api_version)
        set_principal(self, principal)
        set_from_privileged_listener(self, from_privileged_listener)
        set_client_information(self, client_information)

    @property
    def correlation_id(self) -> int:
        return self.header.correlation_id

    @property
    def is_unsupported_api_versions_request(self) -> bool:
        """An ApiVersions request of a version this broker lacks (answered with v0, KIP-511)."""
        return is_unsupported_api_versions_request(self.header)


# the __set__ of each RequestContext slot, in field order
_CONTEXT_SETTERS = tuple(RequestContext.__dict__[f.name].__set__ for f in dataclasses.fields(RequestContext))


class Request:
    """A request read from a connection, parsed, waiting for or under handling."""

    __slots__ = (
        "processor", "context", "start_time_ns", "buffer", "body",
        "request_dequeue_time_ns", "api_local_complete_time_ns",
        "api_remote_complete_time_ns", "response_complete_time_ns",
        "response_dequeue_time_ns", "api_throttle_time_ms", "message_conversions_time_ns",
        "temporary_memory_bytes",
    )

    def __init__(
        self,
        processor: int,
        context: RequestContext,
        start_time_ns: int,
        buffer: memoryview,
        body: Any = None,
    ) -> None:
        self.processor = processor
        self.context = context
        self.start_time_ns = start_time_ns
        self.buffer = buffer
        # The Processor parses the body on the network thread, as Kafka does; a request
        # built elsewhere (tests, forwarding) may leave that to us.
        self.body = body if body is not None else decode_request(buffer)[1]
        self.request_dequeue_time_ns = -1
        self.api_local_complete_time_ns = -1
        self.api_remote_complete_time_ns = -1
        self.response_complete_time_ns = -1
        self.response_dequeue_time_ns = -1
        self.api_throttle_time_ms = 0
        # What converting the request's records between message formats cost (a Fetch v0-v3's,
        # set once its answer is written): Kafka's messageConversionsTimeNanos and temporaryMemoryBytes.
        self.message_conversions_time_ns = 0
        self.temporary_memory_bytes = 0

    @property
    def header(self) -> RequestHeader:
        return self.context.header

    @property
    def api_key(self) -> ApiKeys:
        return self.context.header.api_key

    @property
    def api_version(self) -> int:
        return self.context.header.api_version

    @property
    def correlation_id(self) -> int:
        return self.context.header.correlation_id

    @property
    def size_in_bytes(self) -> int:
        return len(self.buffer)

    @property
    def request_thread_time_ns(self) -> int:
        """Time a handler thread spent on this request (what ``request_percentage`` quotas count):
        from being taken off the queue to the end of local handling, or to now while still in it."""
        if self.api_local_complete_time_ns == -1:
            self.api_local_complete_time_ns = time.monotonic_ns()
        return max(self.api_local_complete_time_ns - self.request_dequeue_time_ns, 0)

    def build_response_send(self, response: Any) -> Send:
        """The Send of ``response`` (a kio message of any version of the request's API) with
        this request's correlation id, written at the request's version.

        The response header version follows the API and version (always v0 for
        ApiVersions, so an unsupported-version answer is readable). Record regions in
        the response stay separate chunks, written with sendfile.
        """
        header = self.context.header
        if response.__version__ != header.api_version and header.api_key is not ApiKeys.API_VERSIONS:
            # Written at the request's version (Kafka's AbstractResponse.serialize(version)):
            # handlers answer with the newest version's classes (protocol/entities.py).
            response = to_version(response, header.api_version)
        chunks = encode_response_chunks_for(header, response)
        if len(chunks) == 1:
            return ByteBufferSend(chunks[0])
        return MultiRecordsSend(chunks)

    def __repr__(self) -> str:
        header = self.context.header
        return (f"Request(processor={self.processor}, connection={self.context.connection_id}, "
                f"api={header.api_key.name} v{header.api_version}, "
                f"correlation_id={header.correlation_id}, client_id={header.client_id!r})")


class _ShutdownRequest:
    """Sentinel put on the request queue to stop one handler thread."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ShutdownRequest"


ShutdownRequest = _ShutdownRequest()

BaseRequest = Union[Request, _ShutdownRequest]


class Response:
    """What a handler hands back for a request."""

    __slots__ = ("request",)

    def __init__(self, request: Request) -> None:
        self.request = request

    @property
    def processor(self) -> int:
        return self.request.processor

    @property
    def connection_id(self) -> str:
        return self.request.context.connection_id

    def on_complete(self, send: Send) -> None:
        """Called on the network thread once the response has been written."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.request!r})"


class SendResponse(Response):
    __slots__ = ("response_send", "response_as_string", "on_complete_callback")

    def __init__(
        self,
        request: Request,
        response_send: Send,
        response_as_string: Optional[str] = None,
        on_complete_callback: Optional[Callable[[Send], None]] = None,
    ) -> None:
        super().__init__(request)
        self.response_send = response_send
        self.response_as_string = response_as_string
        self.on_complete_callback = on_complete_callback

    def on_complete(self, send: Send) -> None:
        if self.on_complete_callback is not None:
            self.on_complete_callback(send)


class NoOpResponse(Response):
    __slots__ = ()


class CloseConnectionResponse(Response):
    __slots__ = ()


class StartThrottlingResponse(Response):
    """The connection is throttled from now on: keep it muted after its response is written."""

    __slots__ = ()


class EndThrottlingResponse(Response):
    """The throttle is over: unmute the connection if its response has been written."""

    __slots__ = ()


_ANSWERS = (SendResponse, NoOpResponse, CloseConnectionResponse)


class ResponseProcessor(Protocol):
    """The Processor side the channel needs: an id and a response queue with wake-up."""

    id: int

    def enqueue_response(self, response: Response) -> None:
        ...


class _BoundedRequestQueue:
    """A FIFO of at most ``capacity`` requests (``queued.max.requests``).

    Every request crosses it, so the common operations stay in C: ``queue.SimpleQueue``
    holds the items, and a put that finds room or a get never touches a Python-level
    lock or condition (``queue.Queue`` takes two per operation, and a blocked get
    allocates a fresh lock each time). Only a producer facing a full queue takes the
    slow path: it waits on ``_not_full``, which a consumer signals after a get whenever
    someone is waiting. The waiter re-checks the size under the condition's lock before
    sleeping and consumers notify under that lock, so no wake-up is lost. Several
    Processors racing for the last slot may overshoot the bound by one each, which
    back-pressure does not need to be exact about.
    """

    __slots__ = ("_items", "_capacity", "_not_full", "_waiting_producers")

    def __init__(self, capacity: int) -> None:
        self._items: queue.SimpleQueue = queue.SimpleQueue()
        self._capacity = capacity
        self._not_full = threading.Condition(threading.Lock())
        self._waiting_producers = 0

    def put(self, item: Any, timeout: Optional[float] = None) -> bool:
        items = self._items
        if items.qsize() >= self._capacity:
            with self._not_full:
                self._waiting_producers += 1
                try:
                    if not self._not_full.wait_for(lambda: items.qsize() < self._capacity, timeout):
                        return False
                finally:
                    self._waiting_producers -= 1
        items.put(item)
        return True

    def put_unbounded(self, item: Any) -> None:
        self._items.put(item)

    def get(self, timeout: Optional[float] = None) -> Any:
        """The next item; raises queue.Empty after ``timeout`` seconds (0: do not wait)."""
        if timeout is None:
            item = self._items.get()
        elif timeout <= 0:
            item = self._items.get_nowait()
        else:
            item = self._items.get(timeout=timeout)
        if self._waiting_producers:
            with self._not_full:
                self._not_full.notify()
        return item

    def qsize(self) -> int:
        return self._items.qsize()


class RequestChannel(KafkaMetricsGroup):
    """The request queue shared by all Processors, and the route back to each of them.

    Its metrics (Kafka's): ``kafka.network:type=RequestChannel,name=RequestQueueSize`` and
    ``ResponseQueueSize`` (all Processors, and per ``processor``), and the RequestMetrics of
    every API (network/request_metrics.py), which the Processors update as answers go out.
    """

    ShutdownRequest = ShutdownRequest

    def __init__(self, queue_size: int, metric_name_prefix: str = "") -> None:
        if queue_size < 1:
            raise ValueError(f"queued.max.requests must be at least 1, not {queue_size}")
        self.queue_size = queue_size
        self.metric_name_prefix = metric_name_prefix
        self._request_queue = _BoundedRequestQueue(queue_size)
        self._processors: dict[int, ResponseProcessor] = {}
        self._lock = threading.Lock()
        self.metrics = RequestChannelMetrics([k for k in ApiKeys if k.zk_broker], metric_name_prefix)
        self.new_gauge(metric_name_prefix + "RequestQueueSize", self._request_queue.qsize)
        self.new_gauge(metric_name_prefix + "ResponseQueueSize", self._total_response_queue_size)

    def _total_response_queue_size(self) -> int:
        with self._lock:
            processors = list(self._processors.values())
        return sum(getattr(p, "response_queue_size", 0) for p in processors)

    # ---- processors -------------------------------------------------------------
    def add_processor(self, processor: ResponseProcessor) -> None:
        with self._lock:
            if processor.id in self._processors:
                logger.warning("Unexpected processor with processorId %d", processor.id)
            self._processors[processor.id] = processor
        self.new_gauge(self.metric_name_prefix + "ResponseQueueSize",
                       lambda: getattr(processor, "response_queue_size", 0), {"processor": str(processor.id)})

    def remove_processor(self, processor_id: int) -> None:
        with self._lock:
            self._processors.pop(processor_id, None)
        self.remove_metric(self.metric_name_prefix + "ResponseQueueSize", {"processor": str(processor_id)})

    # ---- requests ---------------------------------------------------------------
    def send_request(self, request: BaseRequest, timeout_ms: Optional[float] = None) -> bool:
        """Queue a request for the handlers; blocks while the queue is full.

        With ``timeout_ms`` gives up after that long and returns False, so that a
        Processor blocked by back-pressure can still notice it is being shut down.
        """
        return self._request_queue.put(request, None if timeout_ms is None else timeout_ms / 1000.0)

    def receive_request(self, timeout_ms: Optional[float] = None) -> Optional[BaseRequest]:
        """The next request (or ShutdownRequest); None if none came within ``timeout_ms``."""
        try:
            return self._request_queue.get(None if timeout_ms is None else timeout_ms / 1000.0)
        except queue.Empty:
            return None

    def send_shutdown_request(self) -> None:
        # Past the bound: a full queue must not keep a handler from being told to stop.
        self._request_queue.put_unbounded(ShutdownRequest)

    @property
    def request_queue_size(self) -> int:
        return self._request_queue.qsize()

    # ---- responses --------------------------------------------------------------
    def send_response(
        self,
        response: Union[Response, Request],
        response_body: Any = None,
        on_complete: Optional[Callable[[Send], None]] = None,
    ) -> None:
        """Route a response to the Processor that owns its connection.

        Either a ready ``Response``, or ``(request, kio_response[, on_complete])``,
        which is encoded here on the handler thread (Kafka's
        ``sendResponse(request, response, onComplete)``).
        """
        if isinstance(response, Request):
            request = response
            response = SendResponse(request, request.build_response_send(response_body),
                                    None, on_complete)
            if recording.enabled:
                self.metrics.update_error_metrics(request.context.header.api_key, error_counts(response_body))
        if type(response) in _ANSWERS:
            # Kafka's responseCompleteTimeNanos: the answer is ready (throttling notices are not answers).
            request = response.request
            request.response_complete_time_ns = now = _monotonic_ns()
            if request.api_local_complete_time_ns == -1:
                request.api_local_complete_time_ns = now
        processor = self._processors.get(response.request.processor)
        # The processor is gone when the network thread pool shrank; the connection
        # went with it, so there is no one to answer.
        if processor is not None:
            processor.enqueue_response(response)

    def send_no_op_response(self, request: Request) -> None:
        self.send_response(NoOpResponse(request))

    def close_connection(self, request: Request) -> None:
        """Close the request's connection instead of answering it."""
        self.send_response(CloseConnectionResponse(request))

    # ---- lifecycle --------------------------------------------------------------
    def clear(self) -> None:
        """Drop every queued request (the Processors have stopped)."""
        while True:
            try:
                self._request_queue.get(0)
            except queue.Empty:
                return

    def shutdown(self) -> None:
        self.clear()
        self.metrics.remove_metrics()
        self.remove_metric(self.metric_name_prefix + "RequestQueueSize")
        self.remove_metric(self.metric_name_prefix + "ResponseQueueSize")
        with self._lock:
            processor_ids = list(self._processors)
        for processor_id in processor_ids:
            self.remove_metric(self.metric_name_prefix + "ResponseQueueSize", {"processor": str(processor_id)})
