"""ControllerEventManager: one thread, FIFO order, clear_and_put preemption, failures isolated."""
from __future__ import annotations

import threading

from kafka_py.controller.controller_event_manager import (
    CONTROLLER_EVENT_THREAD_NAME,
    ControllerEvent,
    ControllerEventManager,
)
from kafka_py.controller.controller_state import ControllerState


class RecordingEvent(ControllerEvent):
    state = ControllerState.TOPIC_CHANGE

    def __init__(self, name: str, action=None) -> None:
        self.name = name
        self.action = action

    def __repr__(self) -> str:
        return f"RecordingEvent({self.name})"


class Processor:
    """The event manager's other side: records what it was asked to process or preempt."""

    def __init__(self) -> None:
        self.processed: list[str] = []
        self.preempted: list[str] = []
        self.threads: set[str] = set()
        self.states: list[ControllerState] = []
        self.manager: ControllerEventManager | None = None

    def process(self, event: RecordingEvent) -> None:
        self.threads.add(threading.current_thread().name)
        if self.manager is not None:
            self.states.append(self.manager.state)
        if event.action is not None:
            event.action()
        self.processed.append(event.name)

    def preempt(self, event: RecordingEvent) -> None:
        self.preempted.append(event.name)


def _manager() -> tuple[ControllerEventManager, Processor]:
    processor = Processor()
    manager = ControllerEventManager(1, processor)
    processor.manager = manager
    return manager, processor


def test_events_are_processed_in_order_on_the_event_thread():
    manager, processor = _manager()
    manager.start()
    try:
        queued = [manager.put(RecordingEvent(f"e{i}")) for i in range(50)]
        done = threading.Event()
        manager.put(RecordingEvent("last", done.set))
        assert done.wait(10)
        assert processor.processed == [f"e{i}" for i in range(50)] + ["last"]
        assert processor.threads == {CONTROLLER_EVENT_THREAD_NAME}
        assert all(q.await_processing(0) for q in queued)
        assert set(processor.states) == {ControllerState.TOPIC_CHANGE}
    finally:
        manager.close()
    assert manager.state is ControllerState.IDLE
    assert not manager.thread.is_alive()


def test_clear_and_put_preempts_queued_events():
    manager, processor = _manager()
    gate = threading.Event()
    started = threading.Event()

    def block() -> None:
        started.set()
        assert gate.wait(10)

    manager.start()
    try:
        manager.put(RecordingEvent("blocker", block))
        assert started.wait(10)
        dropped = [manager.put(RecordingEvent(f"dropped{i}")) for i in range(3)]
        replacement = manager.clear_and_put(RecordingEvent("replacement"))
        # Preemption happens at once, on the caller's thread, while the blocker still runs.
        assert processor.preempted == ["dropped0", "dropped1", "dropped2"]
        assert not replacement.await_processing(0)
        gate.set()
        assert replacement.await_processing(10)
        done = threading.Event()
        manager.put(RecordingEvent("after", done.set))
        assert done.wait(10)
        assert processor.processed == ["blocker", "replacement", "after"]
        assert not any(d.await_processing(0) for d in dropped)
    finally:
        gate.set()
        manager.close()


def test_an_exception_in_one_event_does_not_stop_the_thread():
    manager, processor = _manager()

    def fail() -> None:
        raise RuntimeError("boom")

    manager.start()
    try:
        manager.put(RecordingEvent("bad", fail))
        done = threading.Event()
        manager.put(RecordingEvent("good", done.set))
        assert done.wait(10)
        assert processor.processed == ["good"]
        assert manager.thread.is_alive()
        assert manager.state in (ControllerState.IDLE, ControllerState.TOPIC_CHANGE)
    finally:
        manager.close()


def test_close_preempts_pending_events_and_stops_the_thread():
    manager, processor = _manager()
    gate = threading.Event()
    started = threading.Event()

    def block() -> None:
        started.set()
        gate.wait(10)

    manager.start()
    manager.put(RecordingEvent("blocker", block))
    assert started.wait(10)
    manager.put(RecordingEvent("pending"))
    closer = threading.Thread(target=manager.close)
    closer.start()
    gate.set()
    closer.join(10)
    assert not closer.is_alive()
    assert not manager.thread.is_alive()
    assert processor.preempted == ["pending"]
    assert "pending" not in processor.processed


def test_a_queued_event_is_processed_or_preempted_never_both():
    manager, processor = _manager()
    queued = manager.put(RecordingEvent("once"))
    queued.process(processor)
    queued.preempt(processor)
    queued.process(processor)
    assert processor.processed == ["once"]
    assert processor.preempted == []
    manager.close()
