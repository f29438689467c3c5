"""Port of core/src/main/scala/kafka/controller/ControllerEventManager.scala.

Everything the controller does happens on one thread, "controller-event-thread", which takes
ControllerEvents off an unbounded FIFO queue and hands them to a ControllerEventProcessor
(the KafkaController). ZooKeeper watches, request-send threads, the scheduler and request
handlers only ever *enqueue*; so the controller's state (ControllerContext, the state
machines) needs no locks.

``clear_and_put`` drops every queued event (each one is *preempted*, so an event carrying a
callback can answer it with "controller moved") and enqueues one event; a ZooKeeper session
expiry uses it so nothing queued under the old session runs after the resignation.
``QueuedEvent.await_processing`` lets the enqueuing thread block until the event has
started, which is how the session-expiry handler holds back the new session until the
controller has resigned.

An exception in an event is logged and the thread carries on with the next event.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import Protocol

from kafka_py.controller.controller_state import ControllerState
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.core.utils.shutdownable_thread import ShutdownableThread
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

CONTROLLER_EVENT_THREAD_NAME = "controller-event-thread"


class ControllerEvent:
    """An event for the controller's thread: the state it runs in and what to do if dropped."""

    state: ControllerState = ControllerState.IDLE

    def preempt(self) -> None:
        """Called instead of processing when ``clear_and_put`` drops the event."""

    def __repr__(self) -> str:
        return type(self).__name__


class ShutdownEventThread(ControllerEvent):
    """Wakes the event thread so it can see that shutdown was initiated; never processed."""

    state = ControllerState.CONTROLLER_SHUTDOWN


class ControllerEventProcessor(Protocol):
    def process(self, event: ControllerEvent) -> None: ...

    def preempt(self, event: ControllerEvent) -> None: ...


class QueuedEvent:
    """An event in the queue. It is either processed or preempted, never both, never twice."""

    def __init__(self, event: ControllerEvent, enqueue_time_ms: int) -> None:
        self.event = event
        self.enqueue_time_ms = enqueue_time_ms
        self._processing_started = threading.Event()
        self._spent = False
        self._spent_lock = threading.Lock()

    def _mark_spent(self) -> bool:
        with self._spent_lock:
            if self._spent:
                return False
            self._spent = True
            return True

    def process(self, processor: ControllerEventProcessor) -> None:
        if not self._mark_spent():
            return
        self._processing_started.set()
        processor.process(self.event)

    def preempt(self, processor: ControllerEventProcessor) -> None:
        if not self._mark_spent():
            return
        processor.preempt(self.event)

    def await_processing(self, timeout: float | None = None) -> bool:
        """Block until processing of this event has started; False on timeout."""
        return self._processing_started.wait(timeout)

    def __repr__(self) -> str:
        return f"QueuedEvent(event={self.event!r}, enqueueTimeMs={self.enqueue_time_ms})"


class ControllerEventManager(KafkaMetricsGroup):
    """Its metrics: ``kafka.controller:type=ControllerEventManager,name=EventQueueSize`` (a
    gauge) and ``EventQueueTimeMs`` (a histogram of how long events waited in the queue);
    each event's processing is timed by ``rate_and_time_metrics``'s timer for its state."""

    metrics_group = "kafka.controller"
    metrics_type_name = "ControllerEventManager"

    def __init__(self, controller_id: int, processor: ControllerEventProcessor,
                 time: Time = Time.SYSTEM, rate_and_time_metrics=None) -> None:
        self.controller_id = controller_id
        self._processor = processor
        self._time = time
        self.rate_and_time_metrics = rate_and_time_metrics or {}
        self.event_queue_time_hist = self.new_histogram("EventQueueTimeMs")
        self.new_gauge("EventQueueSize", lambda: self._queue.qsize())
        self._state = ControllerState.IDLE
        # Held across drain-and-put so no put() can slip between clearing and the new event.
        self._put_lock = threading.RLock()
        self._queue: queue.Queue[QueuedEvent] = queue.Queue()
        self.thread = ControllerEventThread(self, CONTROLLER_EVENT_THREAD_NAME)

    @property
    def state(self) -> ControllerState:
        return self._state

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        try:
            self.thread.initiate_shutdown()
            self.clear_and_put(ShutdownEventThread())
            self.thread.await_shutdown()
        finally:
            self.remove_metric("EventQueueTimeMs")
            self.remove_metric("EventQueueSize")

    def put(self, event: ControllerEvent) -> QueuedEvent:
        with self._put_lock:
            queued = QueuedEvent(event, self._time.milliseconds())
            self._queue.put(queued)
            return queued

    def clear_and_put(self, event: ControllerEvent) -> QueuedEvent:
        with self._put_lock:
            preempted: list[QueuedEvent] = []
            while True:
                try:
                    preempted.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for queued in preempted:
                try:
                    queued.preempt(self._processor)
                except Exception:  # noqa: BLE001 - one bad callback must not keep the rest queued
                    logger.exception("[ControllerEventManager controllerId=%d] Error preempting %r",
                                     self.controller_id, queued.event)
            return self.put(event)

    def is_empty(self) -> bool:
        return self._queue.empty()

    @property
    def queue_size(self) -> int:
        return self._queue.qsize()

    # -- used by the event thread ----------------------------------------------------------

    def _take(self) -> QueuedEvent:
        return self._queue.get()

    def _set_state(self, state: ControllerState) -> None:
        self._state = state


class ControllerEventThread(ShutdownableThread):
    def __init__(self, manager: ControllerEventManager, name: str) -> None:
        # A daemon (Kafka's is not): KafkaServer.shutdown() closes it explicitly, and a
        # daemon cannot keep a crashed process alive.
        super().__init__(name=name, is_interruptible=False, daemon=True)
        self._manager = manager
        self.logger.ident = f"[ControllerEventThread controllerId={manager.controller_id}] "

    def do_work(self) -> None:
        dequeued = self._manager._take()
        event = dequeued.event
        if isinstance(event, ShutdownEventThread):
            # Shutdown was initiated before this was queued; the loop ends on its own.
            return
        manager = self._manager
        manager._set_state(event.state)
        manager.event_queue_time_hist.update(manager._time.milliseconds() - dequeued.enqueue_time_ms)
        timer = manager.rate_and_time_metrics.get(event.state)
        try:
            if timer is None:
                dequeued.process(manager._processor)
            else:
                with timer.time():
                    dequeued.process(manager._processor)
        except Exception:  # noqa: BLE001 - the thread must survive any one event
            self.logger.exception("Uncaught error processing event %r", event)
        finally:
            self._manager._set_state(ControllerState.IDLE)
