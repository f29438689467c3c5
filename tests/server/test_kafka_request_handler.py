"""KafkaRequestHandlerPool on its own: handler threads between a RequestChannel and the API layer.

The API layer here is a small recorder with KafkaApis' one method (``handle``); the pool,
its threads and the RequestChannel are the real ones.
"""
from __future__ import annotations

import queue
import threading
import time

from kafka_py.network.request_channel import CloseConnectionResponse, Request, RequestChannel, RequestContext
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.server.kafka_request_handler import KafkaRequestHandlerPool
from kafka_py.clients.common.utils.time import Time
from tests.network.conftest import api_versions_frame

WAIT_S = 15.0


def make_request(correlation_id: int, processor: int = 0) -> Request:
    frame = memoryview(bytearray(api_versions_frame(correlation_id, 3)[4:]))
    header, _ = RequestHeader.parse(frame)
    context = RequestContext(header, f"127.0.0.1:9092-127.0.0.1:5000-{correlation_id}", "127.0.0.1")
    return Request(processor, context, 0, frame)


class RecordingApis:
    """Records which thread handled which correlation id; raises for the ids in ``fail``."""

    def __init__(self, fail: frozenset[int] = frozenset(), block: threading.Event | None = None) -> None:
        self.handled: queue.Queue = queue.Queue()
        self.fail = fail
        self.block = block

    def handle(self, request: Request) -> None:
        if self.block is not None:
            self.block.wait(WAIT_S)
        self.handled.put((request.correlation_id, threading.current_thread().name))
        if request.correlation_id in self.fail:
            raise RuntimeError(f"handler failure for {request.correlation_id}")


class ResponseSink:
    """The Processor side of the channel: collects the responses sent to processor 0."""

    id = 0

    def __init__(self) -> None:
        self.responses: queue.Queue = queue.Queue()

    def enqueue_response(self, response) -> None:
        self.responses.put(response)


def handler_threads(prefix: str = "data-plane") -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"{prefix}-kafka-request-handler-")]


def wait_until(predicate, message: str):
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, message
        time.sleep(0.01)


def test_every_request_is_handled_once_by_a_pool_thread():
    channel = RequestChannel(100)
    apis = RecordingApis()
    pool = KafkaRequestHandlerPool(0, channel, apis, Time.SYSTEM, 3, log_and_thread_name_prefix="t-every")
    try:
        assert len(handler_threads("t-every")) == 3
        for i in range(30):
            channel.send_request(make_request(i))
        seen = [apis.handled.get(timeout=WAIT_S) for _ in range(30)]
        assert sorted(c for c, _ in seen) == list(range(30))
        assert {name for _, name in seen} <= {f"t-every-kafka-request-handler-{i}" for i in range(3)}
    finally:
        pool.shutdown()
    assert handler_threads("t-every") == []


def test_the_handler_stamps_the_dequeue_time():
    channel = RequestChannel(10)
    apis = RecordingApis()
    pool = KafkaRequestHandlerPool(0, channel, apis, Time.SYSTEM, 1, log_and_thread_name_prefix="t-stamp")
    try:
        request = make_request(7)
        assert request.request_dequeue_time_ns == -1
        channel.send_request(request)
        assert apis.handled.get(timeout=WAIT_S)[0] == 7
        assert request.request_dequeue_time_ns > 0
    finally:
        pool.shutdown()


def test_a_failing_request_closes_its_connection_and_the_thread_carries_on():
    channel = RequestChannel(10)
    sink = ResponseSink()
    channel.add_processor(sink)
    apis = RecordingApis(fail=frozenset({1}))
    pool = KafkaRequestHandlerPool(0, channel, apis, Time.SYSTEM, 1, log_and_thread_name_prefix="t-fail")
    try:
        channel.send_request(make_request(1))
        channel.send_request(make_request(2))
        assert [apis.handled.get(timeout=WAIT_S)[0] for _ in range(2)] == [1, 2]
        response = sink.responses.get(timeout=WAIT_S)
        assert isinstance(response, CloseConnectionResponse)
        assert response.request.correlation_id == 1
        assert sink.responses.empty()  # the second request raised nothing: no close for it
        assert len(handler_threads("t-fail")) == 1
    finally:
        pool.shutdown()


def test_resize_grows_and_shrinks_the_pool():
    channel = RequestChannel(100)
    apis = RecordingApis()
    pool = KafkaRequestHandlerPool(0, channel, apis, Time.SYSTEM, 2, log_and_thread_name_prefix="t-resize")
    try:
        pool.resize_thread_pool(4)
        assert pool.thread_pool_size == 4
        assert sorted(t.name for t in handler_threads("t-resize")) == [
            f"t-resize-kafka-request-handler-{i}" for i in range(4)]

        pool.resize_thread_pool(1)
        assert pool.thread_pool_size == 1
        # The dropped threads finish their wait for a request (at most 300 ms) and end.
        wait_until(lambda: len(handler_threads("t-resize")) == 1, "the pool did not shrink to 1 thread")
        assert handler_threads("t-resize")[0].name == "t-resize-kafka-request-handler-0"

        for i in range(10):
            channel.send_request(make_request(i))
        seen = [apis.handled.get(timeout=WAIT_S) for _ in range(10)]
        assert sorted(c for c, _ in seen) == list(range(10))
        assert {name for _, name in seen} == {"t-resize-kafka-request-handler-0"}
    finally:
        pool.shutdown()
    assert handler_threads("t-resize") == []


def test_shutdown_handles_what_was_queued_before_it():
    channel = RequestChannel(100)
    gate = threading.Event()
    apis = RecordingApis(block=gate)
    pool = KafkaRequestHandlerPool(0, channel, apis, Time.SYSTEM, 2, log_and_thread_name_prefix="t-shut")
    for i in range(6):
        channel.send_request(make_request(i))
    done = threading.Thread(target=pool.shutdown, name="t-shut-caller")
    done.start()
    gate.set()
    done.join(WAIT_S)
    assert not done.is_alive(), "shutdown did not return"
    handled = sorted(apis.handled.get_nowait()[0] for _ in range(apis.handled.qsize()))
    assert handled == list(range(6))
    assert handler_threads("t-shut") == []
    assert channel.request_queue_size == 0


def test_idle_waits_are_counted_by_the_pool_meter():
    channel = RequestChannel(10)
    pool = KafkaRequestHandlerPool(0, channel, RecordingApis(), Time.SYSTEM, 1,
                                   request_handler_avg_idle_metric_name="RequestHandlerAvgIdlePercent",
                                   log_and_thread_name_prefix="t-idle")
    meter = pool._aggregate_idle_meter
    try:
        # A handler that waits for a request with nothing queued is idle: the meter counts it.
        wait_until(lambda: meter.count > 0, "no idle time recorded")
    finally:
        pool.shutdown()
