"""ControllerPurgatory, after Kafka's ControllerPurgatoryTest, plus a model check: an event
completes exactly once, successfully iff the committed offset reached it before a failAll."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from kafka_py.metadata.controller.controller_purgatory import ControllerPurgatory
from kafka_py.metadata.controller.deferred_event import DeferredEvent


class SampleDeferredEvent(DeferredEvent):
    def __init__(self) -> None:
        self.outcomes: list[BaseException | None] = []

    def complete(self, exception: BaseException | None) -> None:
        self.outcomes.append(exception)


def test_complete_events_up_to_the_offset():
    purgatory = ControllerPurgatory()
    events = [SampleDeferredEvent() for _ in range(4)]
    for offset, event in zip((1, 1, 3, 5), events):
        purgatory.add(offset, event)
    assert purgatory.highest_pending_offset() == 5
    purgatory.complete_up_to(2)
    assert [e.outcomes for e in events] == [[None], [None], [], []]
    purgatory.complete_up_to(5)
    assert [e.outcomes for e in events] == [[None], [None], [None], [None]]
    assert purgatory.highest_pending_offset() is None


def test_fail_all():
    purgatory = ControllerPurgatory()
    a, b = SampleDeferredEvent(), SampleDeferredEvent()
    purgatory.add(1, a)
    purgatory.add(2, b)
    error = RuntimeError("lost")
    purgatory.fail_all(error)
    assert a.outcomes == [error] and b.outcomes == [error]
    purgatory.complete_up_to(10)
    assert a.outcomes == [error]


def test_offsets_must_not_go_backwards():
    purgatory = ControllerPurgatory()
    purgatory.add(5, SampleDeferredEvent())
    with pytest.raises(ValueError):
        purgatory.add(4, SampleDeferredEvent())


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["add", "commit", "fail"])),
                max_size=40))
def test_each_event_completes_once_as_the_model_says(steps):
    purgatory = ControllerPurgatory()
    next_offset = 0
    committed = -1
    expected: list[tuple[SampleDeferredEvent, str | None]] = []
    pending: list[tuple[int, SampleDeferredEvent]] = []
    for step, action in steps:
        if action == "add":
            next_offset += step
            event = SampleDeferredEvent()
            purgatory.add(next_offset, event)
            pending.append((next_offset, event))
        elif action == "commit":
            committed = max(committed, next_offset - step)
            purgatory.complete_up_to(committed)
            for offset, event in [p for p in pending if p[0] <= committed]:
                expected.append((event, None))
            pending = [p for p in pending if p[0] > committed]
        else:
            purgatory.fail_all(RuntimeError("fail"))
            expected.extend((event, "fail") for _, event in pending)
            pending = []
    for event, outcome in expected:
        assert len(event.outcomes) == 1
        assert (event.outcomes[0] is None) == (outcome is None)
    for _, event in pending:
        assert event.outcomes == []
