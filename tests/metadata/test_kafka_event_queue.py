"""KafkaEventQueue, after Kafka's KafkaEventQueueTest. Results are collected through
futures waited on with a timeout (a hang fails, nothing is timed); tests that need time to
pass move a MockTime instead of sleeping."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Callable

import pytest

from kafka_py.metadata.queue.event_queue import (
    EarliestDeadlineFunction,
    Event,
    EventInsertionType,
    FailureLoggingEvent,
    RejectedExecutionException,
    TimeoutException,
)
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.clients.common.utils.time import MockTime, Time

WAIT_S = 30
ONE_HOUR_NS = 3600 * 10**9
ONE_MS_NS = 10**6


class FutureEvent(Event):
    """Completes ``future`` with what ``supplier`` returns, or with the failure."""

    def __init__(self, future: Future, supplier: Callable[[], object]) -> None:
        self.future = future
        self.supplier = supplier

    def run(self) -> None:
        self.future.set_result(self.supplier())

    def handle_exception(self, e: BaseException) -> None:
        self.future.set_exception(e)


class Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value = 0

    def add(self, n: int = 1) -> int:
        with self.lock:
            self.value += n
            return self.value


class GateEvent(Event):
    """Holds the queue's thread until released, so the test can line events up."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def run(self) -> None:
        self.started.set()
        assert self.release.wait(WAIT_S)


def future_event(supplier: Callable[[], object]) -> tuple[Future, FutureEvent]:
    future: Future = Future()
    return future, FutureEvent(future, supplier)


@pytest.fixture
def queues():
    made: list[KafkaEventQueue] = []

    def make(time: Time = Time.SYSTEM) -> KafkaEventQueue:
        queue = KafkaEventQueue(time, "[test] ", "test")
        made.append(queue)
        return queue

    yield make
    for queue in made:
        queue.close()


def test_create_and_close(queues) -> None:
    queues().close()


def test_handle_events_in_order(queues) -> None:
    queue = queues()
    counter = Counter()
    f1, e1 = future_event(counter.add)
    f2, e2 = future_event(counter.add)
    f3, e3 = future_event(counter.add)
    queue.prepend(e1)
    queue.append_with_deadline(Time.SYSTEM.nanoseconds() + 60 * 10**9, e2)
    queue.append(e3)
    assert (f1.result(WAIT_S), f2.result(WAIT_S), f3.result(WAIT_S)) == (1, 2, 3)


def test_prepend_goes_before_queued_events(queues) -> None:
    queue = queues()
    gate = GateEvent()
    queue.append(gate)
    assert gate.started.wait(WAIT_S)
    order: list[str] = []
    futures = []
    for name, insert in (("a", queue.append), ("b", queue.append), ("c", queue.prepend),
                         ("d", queue.prepend)):
        future, event = future_event(lambda name=name: order.append(name))
        insert(event)
        futures.append(future)
    gate.release.set()
    for future in futures:
        future.result(WAIT_S)
    assert order == ["d", "c", "a", "b"]


def test_deadline_passed_before_the_event_starts(queues) -> None:
    time = MockTime()
    queue = queues(time)
    counter = Counter()
    gate = GateEvent()
    queue.append(gate)
    assert gate.started.wait(WAIT_S)
    f3, e3 = future_event(counter.add)
    queue.append_with_deadline(time.nanoseconds() + 1, e3)
    f4, e4 = future_event(counter.add)
    queue.append(e4)
    time.sleep(1)
    gate.release.set()
    assert f4.result(WAIT_S) == 1
    with pytest.raises(TimeoutException):
        f3.result(WAIT_S)
    assert counter.value == 1


def test_schedule_deferred_runs_when_due(queues) -> None:
    time = MockTime()
    queue = queues(time)
    order: list[str] = []
    deferred, event = future_event(lambda: order.append("deferred"))
    queue.schedule_deferred(None, lambda _: time.nanoseconds() + ONE_MS_NS, event)
    appended, event = future_event(lambda: order.append("appended"))
    queue.append(event)
    appended.result(WAIT_S)
    assert not deferred.done()
    time.sleep(1)
    deferred.result(WAIT_S)
    assert order == ["appended", "deferred"]


def test_schedule_deferred_with_tag_replacement(queues) -> None:
    queue = queues()
    counter = Counter()
    f1, e1 = future_event(lambda: counter.add(1000))
    queue.schedule_deferred("foo", lambda _: Time.SYSTEM.nanoseconds() + ONE_HOUR_NS, e1)
    f2, e2 = future_event(lambda: counter.add(1))
    # the replacement is told the replaced event's deadline, and moves it back an hour
    queue.schedule_deferred("foo", lambda prev: (prev or 0) - ONE_HOUR_NS, e2)
    assert f2.result(WAIT_S) == 1
    queue.close()
    assert not f1.done() and counter.value == 1


def test_earliest_deadline_function_keeps_the_earlier_deadline(queues) -> None:
    time = MockTime()
    queue = queues(time)
    f1, e1 = future_event(lambda: "first")
    now = time.nanoseconds()
    queue.schedule_deferred("tick", EarliestDeadlineFunction(now + 5 * ONE_MS_NS), e1)
    f2, e2 = future_event(lambda: "second")
    queue.schedule_deferred("tick", EarliestDeadlineFunction(now + 50 * ONE_MS_NS), e2)
    time.sleep(5)
    assert f2.result(WAIT_S) == "second" and not f1.done()


def test_deferred_is_queued_after_triggering(queues) -> None:
    time = MockTime(current_time_ms=100000, current_hi_res_time_ns=1)
    queue = queues(time)
    counter = Counter()
    f0, e0 = future_event(lambda: counter.add() - 1)
    queue.schedule_deferred("foo", lambda _: 2, e0)
    f1, e1 = future_event(lambda: counter.add() - 1)
    queue.append(e1)
    assert f1.result(WAIT_S) == 0
    time.sleep(1)
    f2, e2 = future_event(lambda: counter.add() - 1)
    queue.append(e2)
    # the due deferred event goes first: the thread looks at due times before the queue
    assert f0.result(WAIT_S) == 1
    assert f2.result(WAIT_S) == 2


def test_cancel_deferred(queues) -> None:
    time = MockTime()
    queue = queues(time)
    cancelled, event = future_event(lambda: "ran")
    queue.schedule_deferred("t", lambda _: time.nanoseconds() + ONE_MS_NS, event)
    queue.cancel_deferred("t")
    queue.cancel_deferred("no such tag")
    time.sleep(10)
    marker, event = future_event(lambda: "marker")
    queue.append(event)
    assert marker.result(WAIT_S) == "marker"
    queue.close()
    assert not cancelled.done()   # neither run nor told


def test_shutdown_before_deferred(queues) -> None:
    queue = queues()
    counter = Counter()
    future, event = future_event(counter.add)
    queue.schedule_deferred("myDeferred", lambda _: Time.SYSTEM.nanoseconds() + ONE_HOUR_NS, event)
    queue.begin_shutdown("test_shutdown_before_deferred")
    with pytest.raises(TimeoutException):
        future.result(WAIT_S)
    assert counter.value == 0


def test_shutdown_runs_queued_events_then_the_cleanup_event(queues) -> None:
    queue = queues()
    gate = GateEvent()
    queue.append(gate)
    assert gate.started.wait(WAIT_S)
    order: list[str] = []
    queued, event = future_event(lambda: order.append("queued"))
    queue.append(event)
    cleanup, cleanup_event = future_event(lambda: order.append("cleanup"))
    queue.begin_shutdown("test", cleanup_event)
    # a second shutdown does not replace the clean-up event
    other_cleanup, other_event = future_event(lambda: order.append("other"))
    queue.begin_shutdown("again", other_event)
    late, event = future_event(lambda: order.append("late"))
    queue.append(event)
    with pytest.raises(RejectedExecutionException):
        late.result(WAIT_S)
    gate.release.set()
    cleanup.result(WAIT_S)
    queue.close()
    assert order == ["queued", "cleanup"] and not other_cleanup.done()


def test_shutdown_timeout_lets_earlier_deferred_events_run(queues) -> None:
    time = MockTime()
    queue = queues(time)
    soon, event = future_event(lambda: "soon")
    queue.schedule_deferred("soon", lambda _: time.nanoseconds() + 10 * ONE_MS_NS, event)
    late, event = future_event(lambda: "late")
    queue.schedule_deferred("late", lambda _: time.nanoseconds() + ONE_HOUR_NS, event)
    queue.begin_shutdown("test", timeout_ns=1000 * ONE_MS_NS)
    time.sleep(10)
    assert soon.result(WAIT_S) == "soon"
    assert not late.done()
    time.sleep(1000)
    with pytest.raises(TimeoutException):
        late.result(WAIT_S)


def test_rejected_execution_after_close(queues) -> None:
    queue = queues()
    queue.close()
    future, event = future_event(lambda: None)
    queue.append(event)
    with pytest.raises(RejectedExecutionException):
        future.result(WAIT_S)


def test_exceptions_reach_handle_exception_and_the_queue_goes_on(queues) -> None:
    queue = queues()
    failed: Future = Future()

    class Failing(Event):
        def run(self) -> None:
            raise ValueError("boom")

        def handle_exception(self, e: BaseException) -> None:
            failed.set_result(e)
            raise RuntimeError("handle_exception failing too is logged, not fatal")

    queue.append(Failing())
    after, event = future_event(lambda: "after")
    queue.append(event)
    error = failed.result(WAIT_S)
    assert isinstance(error, ValueError) and str(error) == "boom"
    assert after.result(WAIT_S) == "after"


def test_deferred_event_needs_a_deadline(queues) -> None:
    queue = queues()
    kept, event = future_event(lambda: "kept")
    queue.schedule_deferred("t", lambda _: Time.SYSTEM.nanoseconds() + ONE_HOUR_NS, event)
    refused, event = future_event(lambda: "refused")
    queue.enqueue(EventInsertionType.DEFERRED, "t", lambda _: None, event)
    with pytest.raises(ValueError, match="must specify a deadline"):
        refused.result(WAIT_S)
    queue.close()
    # the refused event did not displace the one holding its tag
    with pytest.raises(TimeoutException):
        kept.result(WAIT_S)


def test_negative_shutdown_timeout_is_refused(queues) -> None:
    with pytest.raises(ValueError, match="non-negative"):
        queues().begin_shutdown("test", timeout_ns=-1)


def test_failure_logging_event(caplog) -> None:
    import logging

    class Quiet(FailureLoggingEvent):
        def run(self) -> None:
            pass

    event = Quiet(logging.getLogger("test.failure_logging"))
    with caplog.at_level(logging.INFO, logger="test.failure_logging"):
        event.handle_exception(RejectedExecutionException())
        event.handle_exception(ValueError("bad"))
    assert [r.levelname for r in caplog.records] == ["INFO", "ERROR"]
    assert "Not processing Quiet because the event queue is closed." in caplog.text
