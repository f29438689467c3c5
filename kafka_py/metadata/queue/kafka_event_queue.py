"""Port of metadata/src/main/java/org/apache/kafka/queue/KafkaEventQueue.java.

One thread runs the events, one lock guards the queue. Queued events are a circular
doubly-linked list (PREPEND puts an event after the sentinel head, APPEND before it);
events with a time attached (a deferred event's due time, a queued event's deadline) are
also in a map from that time, kept sorted, which the thread looks at first: a due
deferred event is run, a queued event past its deadline is failed with a
TimeoutException. Two events are never filed under the same nanosecond: the later one
takes the next free one, so every entry in the map is one event. A tag names at most one
event; queuing another with the same tag removes the first.

The thread sleeps on a condition until the next due time or until something changes
(an event added or cancelled, shutdown, ``wakeup``). The wait is the Time's
``wait_for``, so that under a MockTime moving the clock is what ends it, and nothing
spins on a clock that does not move by itself.

Shutdown refuses new events (RejectedExecutionException), lets the queued ones run, times
out whatever still waits for a time once the shutdown timeout passes, runs the clean-up
event and ends the thread.
"""
from __future__ import annotations

import bisect
import logging
import threading

from kafka_py.metadata.queue.event_queue import (
    DeadlineCalculator,
    Event,
    EventInsertionType,
    EventQueue,
    RejectedExecutionException,
    TimeoutException,
    VoidEvent,
)
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

_NANOS_PER_MS = 1_000_000


class EventContext:
    """An event in the queue: its place in the list, its time in the map, its tag."""

    __slots__ = ("event", "insertion_type", "prev", "next", "deadline_ns", "tag")

    def __init__(self, event: Event | None, insertion_type: EventInsertionType | None,
                 tag: str | None) -> None:
        self.event = event
        self.insertion_type = insertion_type
        self.prev: EventContext = self
        self.next: EventContext = self
        # the key this event is filed under in the time map, None if it is not there
        self.deadline_ns: int | None = None
        self.tag = tag

    def insert_after(self, other: EventContext) -> None:
        self.next.prev = other
        other.next = self.next
        other.prev = self
        self.next = other

    def insert_before(self, other: EventContext) -> None:
        self.prev.next = other
        other.prev = self.prev
        other.next = self
        self.prev = other

    def remove(self) -> None:
        self.prev.next = self.next
        self.next.prev = self.prev
        self.prev = self
        self.next = self

    def is_singleton(self) -> bool:
        return self.prev is self and self.next is self

    def run(self, log: IdentLogger) -> None:
        try:
            self.event.run()
        except Exception as e:
            try:
                self.event.handle_exception(e)
            except Exception:
                log.exception("Unexpected exception in handleException")

    def complete_with_timeout(self) -> None:
        self.complete_with_exception(TimeoutException())

    def complete_with_exception(self, e: BaseException) -> None:
        self.event.handle_exception(e)


class KafkaEventQueue(EventQueue):
    def __init__(self, time: Time, log_prefix: str, thread_name_prefix: str) -> None:
        self.time = time
        self.logger = IdentLogger(logger, log_prefix)
        # Reentrant, as Kafka's lock is: a MockTime that ticks on every read notifies
        # this condition from inside the wait that holds it.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        # everything below is guarded by _lock
        self._head = EventContext(None, None, None)
        self._tag_to_event_context: dict[str, EventContext] = {}
        self._deadline_map: dict[int, EventContext] = {}
        self._deadlines: list[int] = []  # the keys of _deadline_map, sorted
        # bumped on every change the thread should look at; a wait ends when it moves
        self._signals = 0
        # when the queue shuts down (monotonic ns), None while it is not shutting down
        self._closing_time_ns: int | None = None
        self._cleanup_event: Event | None = None
        self._event_handler_thread = threading.Thread(
            target=self._run, name=f"{thread_name_prefix}EventHandler", daemon=False)
        self._event_handler_thread.start()

    # -- the event handler thread ----------------------------------------------------------

    def _run(self) -> None:
        try:
            self._handle_events()
            self._cleanup_event.run()
        except BaseException:
            self.logger.warning("event handler thread exiting with exception", exc_info=True)

    def _remove(self, context: EventContext) -> None:
        context.remove()
        if context.deadline_ns is not None:
            del self._deadline_map[context.deadline_ns]
            del self._deadlines[bisect.bisect_left(self._deadlines, context.deadline_ns)]
            context.deadline_ns = None
        if context.tag is not None:
            if self._tag_to_event_context.get(context.tag) is context:
                del self._tag_to_event_context[context.tag]
            context.tag = None

    def _handle_events(self) -> None:
        to_timeout: EventContext | None = None
        to_run: EventContext | None = None
        while True:
            # events run, and fail, outside the lock, so they may queue further events
            if to_timeout is not None:
                to_timeout.complete_with_timeout()
                to_timeout = None
            elif to_run is not None:
                to_run.run(self.logger)
                to_run = None
            with self._lock:
                await_ns: int | None = None  # None: until something changes
                if self._deadlines:
                    now = self.time.nanoseconds()
                    first_ns = self._deadlines[0]
                    context = self._deadline_map[first_ns]
                    if first_ns <= now:
                        self._remove(context)
                        if context.insertion_type is EventInsertionType.DEFERRED:
                            to_run = context  # due: its time was a start time
                        else:
                            to_timeout = context  # its time was a deadline, now passed
                        continue
                    if self._closing_time_ns is not None and self._closing_time_ns <= now:
                        self._remove(context)
                        to_timeout = context
                        continue
                    await_ns = first_ns - now
                if self._head.next is self._head:
                    if self._closing_time_ns is not None and not self._deadlines:
                        return  # shutting down, and nothing left
                else:
                    to_run = self._head.next
                    self._remove(to_run)
                    continue
                if self._closing_time_ns is not None:
                    until_closing = self._closing_time_ns - self.time.nanoseconds()
                    await_ns = until_closing if await_ns is None else min(await_ns, until_closing)
                self._await(await_ns)

    def _await(self, await_ns: int | None) -> None:
        """Wait (holding the lock) for a change, or for ``await_ns`` of the queue's clock."""
        signals = self._signals
        if await_ns is None:
            while self._signals == signals:
                self._cond.wait()
            return
        if await_ns <= 0:
            return
        # The Time waits in wall-clock milliseconds; round up so as not to wake early and
        # find nothing due.
        deadline_ms = self.time.milliseconds() + -(-await_ns // _NANOS_PER_MS)
        self.time.wait_for(self._cond, lambda: self._signals != signals, deadline_ms)

    def _signal(self) -> None:
        # caller holds the lock
        self._signals += 1
        self._cond.notify()

    # -- the EventQueue interface ----------------------------------------------------------

    def enqueue(self, insertion_type: EventInsertionType, tag: str | None,
                deadline_ns_calculator: DeadlineCalculator, event: Event) -> None:
        context = EventContext(event, insertion_type, tag)
        error = self._enqueue(context, deadline_ns_calculator)
        if error is not None:
            context.complete_with_exception(error)

    def _enqueue(self, context: EventContext,
                 deadline_ns_calculator: DeadlineCalculator) -> Exception | None:
        with self._lock:
            if self._closing_time_ns is not None:
                return RejectedExecutionException("The event queue is shutting down")
            replaced = None if context.tag is None else self._tag_to_event_context.get(context.tag)
            deadline_ns = deadline_ns_calculator(None if replaced is None else replaced.deadline_ns)
            if context.insertion_type is EventInsertionType.DEFERRED and deadline_ns is None:
                # checked before the replaced event is dropped, so a refused event
                # leaves the queue as it was
                return ValueError("You must specify a deadline for deferred events.")
            if replaced is not None:
                self._remove(replaced)
            if context.tag is not None:
                self._tag_to_event_context[context.tag] = context
            queue_was_empty = self._head.is_singleton()
            should_signal = False
            if context.insertion_type is EventInsertionType.APPEND:
                self._head.insert_before(context)
                should_signal = queue_was_empty
            elif context.insertion_type is EventInsertionType.PREPEND:
                self._head.insert_after(context)
                should_signal = queue_was_empty
            if deadline_ns is not None:
                prev_start_ns = self._deadlines[0] if self._deadlines else None
                insert_ns = deadline_ns
                # Bounded by the number of filed events: each step passes one taken key.
                while insert_ns in self._deadline_map:
                    insert_ns += 1
                self._deadline_map[insert_ns] = context
                bisect.insort(self._deadlines, insert_ns)
                context.deadline_ns = insert_ns
                # a new earliest time changes how long the thread should sleep
                if prev_start_ns is None or insert_ns <= prev_start_ns:
                    should_signal = True
            if should_signal:
                self._signal()
        return None

    def cancel_deferred(self, tag: str) -> None:
        with self._lock:
            context = self._tag_to_event_context.get(tag)
            if context is not None:
                self._remove(context)

    def begin_shutdown(self, source: str, cleanup_event: Event | None = None,
                       timeout_ns: int = 0) -> None:
        if timeout_ns < 0:
            raise ValueError("beginShutdown must be called with a non-negative timeout.")
        with self._lock:
            if self._cleanup_event is not None:
                self.logger.debug("%s: Event queue is already shutting down.", source)
                return
            self.logger.info("%s: shutting down event queue.", source)
            self._cleanup_event = VoidEvent() if cleanup_event is None else cleanup_event
            closing_time_ns = self.time.nanoseconds() + timeout_ns
            if self._closing_time_ns is None or closing_time_ns < self._closing_time_ns:
                self._closing_time_ns = closing_time_ns
            self._signal()

    def wakeup(self) -> None:
        with self._lock:
            self._signal()

    def close(self) -> None:
        self.begin_shutdown("KafkaEventQueue#close")
        self._event_handler_thread.join()
        self.logger.info("closed event queue.")
