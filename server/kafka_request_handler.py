"""Port of core/src/main/scala/kafka/server/KafkaRequestHandler.scala (Kafka 2.8.2).

The request handler threads sit between the RequestChannel and KafkaApis: each of the
``num.io.threads`` threads takes the next request off the shared request queue (waiting
at most 300 ms, so a stop is noticed) and hands it to ``KafkaApis.handle``. KafkaApis
answers every failure of its own with an error response; anything that still escapes
is logged here and the request's connection is closed, so the client is not left
waiting for an answer that will never come and the thread carries on with the next
request.

Shutdown puts one ShutdownRequest per thread on the queue and waits for each thread to
take its own: requests queued before it are still handled.
"""
from __future__ import annotations

import logging
import threading
from typing import Optional, Protocol

from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.network.request_channel import Request, RequestChannel, ShutdownRequest
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

DATA_PLANE_THREAD_PREFIX = "data-plane"
_RECEIVE_TIMEOUT_MS = 300


class ApiRequestHandler(Protocol):
    """What the handler threads call: KafkaApis."""

    def handle(self, request: Request) -> None:
        ...


class KafkaRequestHandler:
    """One handler thread's loop."""

    def __init__(self, id: int, broker_id: int, total_handler_threads: list[int],
                 request_channel: RequestChannel, apis: ApiRequestHandler, time: Time,
                 aggregate_idle_meter=None) -> None:
        self.id = id
        self._aggregate_idle_meter = aggregate_idle_meter
        self.broker_id = broker_id
        self._total_handler_threads = total_handler_threads
        self._request_channel = request_channel
        self._apis = apis
        self._time = time
        self._shutdown_complete = threading.Event()
        self._stopped = False
        self.logger = IdentLogger(logger, f"[Kafka Request Handler {id} on Broker {broker_id}], ")
        self.idle_time_ns = 0
        self.thread: Optional[threading.Thread] = None

    def run(self) -> None:
        try:
            while not self._stopped:
                start = self._time.nanoseconds()
                request = self._request_channel.receive_request(_RECEIVE_TIMEOUT_MS)
                end = self._time.nanoseconds()
                # Kafka's RequestHandlerAvgIdlePercent: idle time shared by the pool size.
                idle = (end - start) // max(1, self._total_handler_threads[0])
                self.idle_time_ns += idle
                if self._aggregate_idle_meter is not None:
                    self._aggregate_idle_meter.mark(idle)
                if request is None:
                    continue
                if request is ShutdownRequest:
                    self.logger.debug("Kafka request handler %d on broker %d received shut down command",
                                      self.id, self.broker_id)
                    return
                self._handle(request, end)  # type: ignore[arg-type]  # (not the ShutdownRequest: returned above)
        finally:
            self._shutdown_complete.set()

    def _handle(self, request: Request, dequeue_time_ns: int) -> None:
        try:
            request.request_dequeue_time_ns = dequeue_time_ns
            self._apis.handle(request)
        except Exception:  # noqa: BLE001 - one request must never stop a handler thread
            self.logger.exception("Exception when handling request %r", request)
            try:
                # The client gets no answer for this request, so it must not wait for one.
                self._request_channel.close_connection(request)
            except Exception:  # noqa: BLE001
                self.logger.exception("Could not close the connection of %r", request)

    def stop(self) -> None:
        """Stop after the current request (used when the pool shrinks)."""
        self._stopped = True

    def initiate_shutdown(self) -> None:
        self._request_channel.send_shutdown_request()

    def await_shutdown(self, timeout_s: Optional[float] = None) -> bool:
        return self._shutdown_complete.wait(timeout_s)


class KafkaRequestHandlerPool(KafkaMetricsGroup):
    """``num_threads`` KafkaRequestHandler threads named ``<prefix>-kafka-request-handler-N``.

    Its metric is Kafka's ``kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent``:
    a meter of idle nanoseconds (each thread's wait for a request divided by the pool size) whose
    rates are per nanosecond, so they read as the pool's idle fraction.
    """

    def __init__(self, broker_id: int, request_channel: RequestChannel, apis: ApiRequestHandler,
                 time: Time, num_threads: int, request_handler_avg_idle_metric_name: str = "",
                 log_and_thread_name_prefix: str = DATA_PLANE_THREAD_PREFIX) -> None:
        self.broker_id = broker_id
        self.request_channel = request_channel
        self.apis = apis
        self.time = time
        self.request_handler_avg_idle_metric_name = request_handler_avg_idle_metric_name
        self._prefix = log_and_thread_name_prefix
        self.logger = IdentLogger(
            logger, f"[{log_and_thread_name_prefix} Kafka Request Handler on Broker {broker_id}], ")
        # A one-element list shared with the handlers so a resize is seen by all of them.
        self._thread_pool_size = [num_threads]
        self._lock = threading.Lock()
        self._aggregate_idle_meter = (self.new_meter(request_handler_avg_idle_metric_name, "percent", rate_unit_s=1e-9)
                                      if request_handler_avg_idle_metric_name else None)
        self.runnables: list[KafkaRequestHandler] = []
        for i in range(num_threads):
            self.create_handler(i)

    def create_handler(self, id: int) -> None:
        with self._lock:
            handler = KafkaRequestHandler(id, self.broker_id, self._thread_pool_size,
                                          self.request_channel, self.apis, self.time, self._aggregate_idle_meter)
            self.runnables.append(handler)
            handler.thread = threading.Thread(target=handler.run,
                                              name=f"{self._prefix}-kafka-request-handler-{id}",
                                              daemon=True)
            handler.thread.start()

    def resize_thread_pool(self, new_size: int) -> None:
        current = self._thread_pool_size[0]
        self.logger.info("Resizing request handler thread pool size from %d to %d",
                         current, new_size)
        if new_size > current:
            for i in range(current, new_size):
                self.create_handler(i)
        elif new_size < current:
            with self._lock:
                for _ in range(current - new_size):
                    self.runnables.pop().stop()
        self._thread_pool_size[0] = new_size

    @property
    def thread_pool_size(self) -> int:
        return self._thread_pool_size[0]

    def shutdown(self) -> None:
        self.logger.info("shutting down")
        with self._lock:
            handlers = list(self.runnables)
        for handler in handlers:
            handler.initiate_shutdown()
        for handler in handlers:
            handler.await_shutdown()
        if self.request_handler_avg_idle_metric_name:
            self.remove_metric(self.request_handler_avg_idle_metric_name)
        self.logger.info("shut down completely")


__all__ = ["KafkaRequestHandler", "KafkaRequestHandlerPool", "ApiRequestHandler", "DATA_PLANE_THREAD_PREFIX"]
