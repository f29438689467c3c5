"""kafka_py/tuning/wakeups.py: a Processor's selector is woken for a queued response only
while it may be asleep in select, once a poll, and once at the end of
call_with_deferred_wakeups however many responses were queued inside it."""
from __future__ import annotations

import threading

from kafka_py.tuning.wakeups import ProcessorWakeups, call_with_deferred_wakeups


class Counting:
    def __init__(self) -> None:
        self.wakeups = 0

    def __call__(self) -> None:
        self.wakeups += 1


def test_no_wakeup_outside_a_poll() -> None:
    wake = Counting()
    wakeups = ProcessorWakeups(wake)
    wakeups.response_queued()
    wakeups.poll_starting([])
    wakeups.poll_ended()
    wakeups.response_queued()
    assert wake.wakeups == 0


def test_one_wakeup_per_poll() -> None:
    wake = Counting()
    wakeups = ProcessorWakeups(wake)
    assert wakeups.poll_starting([]) is False
    for _ in range(5):
        wakeups.response_queued()
    assert wake.wakeups == 1
    wakeups.poll_ended()
    wakeups.poll_starting([])
    wakeups.response_queued()
    assert wake.wakeups == 2


def test_a_queued_response_seen_at_poll_start_means_no_blocking() -> None:
    wakeups = ProcessorWakeups(Counting())
    assert wakeups.poll_starting(["a response"]) is True


def test_deferred_wakeups_wake_each_processor_once_after_the_call() -> None:
    first, second = Counting(), Counting()
    a, b = ProcessorWakeups(first), ProcessorWakeups(second)
    a.poll_starting([])
    b.poll_starting([])

    def answer() -> None:
        for _ in range(3):
            a.response_queued()
            b.response_queued()
        call_with_deferred_wakeups(a.response_queued)  # nested: the outer call wakes
        assert (first.wakeups, second.wakeups) == (0, 0)

    call_with_deferred_wakeups(answer)
    assert (first.wakeups, second.wakeups) == (1, 1)


def test_deferral_is_per_thread() -> None:
    wake = Counting()
    wakeups = ProcessorWakeups(wake)
    wakeups.poll_starting([])
    seen = []

    def inside() -> None:
        # another thread queuing meanwhile is not deferred: it wakes the Processor itself
        other = threading.Thread(target=wakeups.response_queued)
        other.start()
        other.join()
        seen.append(wake.wakeups)

    call_with_deferred_wakeups(inside)
    assert seen == [1]
    assert wake.wakeups == 1  # already woken this poll: the deferred check sends none
