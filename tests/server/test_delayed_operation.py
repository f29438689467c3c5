"""DelayedOperation, DelayedOperationPurgatory and the operation keys (server/delayed_operation*.py)."""
from __future__ import annotations

import itertools
import random
import threading
import time

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafka_py.server.delayed_operation_key import (GroupJoinKey, GroupKey, GroupSyncKey, MemberKey, TopicKey,
                                                   TopicPartitionOperationKey)
from kafka_py.clients.common.utils.time import MockTime
from kafka_py.core.utils.timer import SystemTimer, TimerTask

WAIT_S = 10.0
_names = itertools.count()


class MockDelayedOperation(DelayedOperation):
    """Completes when ``completable`` (or a shared ``gate``) says so; counts its callbacks."""

    def __init__(self, delay_ms: int, gate: threading.Event | None = None, lock=None,
                 done: threading.Condition | None = None) -> None:
        super().__init__(delay_ms, lock)
        self.completable = False
        self.gate = gate
        self.completions = 0
        self.expirations = 0
        self.lock_held_in_try_complete: list[bool] = []
        self._counts = threading.Lock()
        self._done = done

    def try_complete(self) -> bool:
        if isinstance(self.lock, type(threading.Lock())):
            self.lock_held_in_try_complete.append(self.lock.locked())
        if self.completable or (self.gate is not None and self.gate.is_set()):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        with self._counts:
            self.completions += 1
        if self._done is not None:
            with self._done:
                self._done.notify_all()

    def on_expiration(self) -> None:
        with self._counts:
            self.expirations += 1
        if self._done is not None:
            with self._done:
                self._done.notify_all()


class Barrier(TimerTask):
    def __init__(self) -> None:
        super().__init__(0)
        self.event = threading.Event()

    def run(self) -> None:
        self.event.set()


def expire_due(timer: SystemTimer) -> None:
    """Expire everything due on the timer's clock and wait for the expirations to finish."""
    while timer.advance_clock(0):
        pass
    barrier = Barrier()
    timer.add(barrier)
    while timer.advance_clock(0):
        pass
    assert barrier.event.wait(WAIT_S)


@pytest.fixture
def purgatory():
    p = DelayedOperationPurgatory(f"mock-{next(_names)}", purge_interval=1000)
    yield p
    p.shutdown()


@pytest.fixture
def mock_clock_purgatory():
    """A purgatory on a manual clock whose timer the test advances itself (no reaper)."""
    time = MockTime()
    timer = SystemTimer(f"mock-clock-{next(_names)}", time=time)
    p = DelayedOperationPurgatory("mock-clock", timeout_timer=timer, reaper_enabled=False)
    yield time, timer, p
    p.shutdown()


# -- completion ------------------------------------------------------------------------------

def test_operation_completes_when_its_condition_becomes_true(purgatory):
    op1, op2 = MockDelayedOperation(100_000), MockDelayedOperation(100_000)
    assert not purgatory.try_complete_else_watch(op1, ["test1"])
    assert not purgatory.try_complete_else_watch(op2, ["test2"])
    assert purgatory.num_delayed() == 2 and purgatory.watched() == 2

    assert purgatory.check_and_complete("test1") == 0
    assert purgatory.check_and_complete("test2") == 0
    assert not op1.is_completed

    op1.completable = True
    assert purgatory.check_and_complete("test1") == 1
    assert op1.is_completed and op1.completions == 1 and op1.expirations == 0
    assert purgatory.check_and_complete("test1") == 0
    assert not op2.is_completed

    op2.completable = True
    assert purgatory.check_and_complete("test2") == 1
    assert op2.completions == 1
    # Completion takes the operation off the timer and (once checked) off its watch list.
    assert purgatory.num_delayed() == 0 and purgatory.watched() == 0


def test_operation_that_can_complete_at_once_is_never_watched(purgatory):
    op = MockDelayedOperation(100_000)
    op.completable = True
    assert purgatory.try_complete_else_watch(op, ["k"])
    assert op.completions == 1
    assert purgatory.watched() == 0 and purgatory.num_delayed() == 0


def test_empty_watch_keys_are_rejected(purgatory):
    with pytest.raises(ValueError):
        purgatory.try_complete_else_watch(MockDelayedOperation(10), [])


def test_operation_on_several_keys_completes_once(purgatory):
    op = MockDelayedOperation(100_000)
    keys = [TopicPartitionOperationKey("t", p) for p in range(3)]
    assert not purgatory.try_complete_else_watch(op, keys)
    assert purgatory.watched() == 3
    op.completable = True
    results = [purgatory.check_and_complete(TopicPartitionOperationKey("t", p)) for p in range(3)]
    assert results == [1, 0, 0]
    assert op.completions == 1
    assert purgatory.watched() == 0


def test_try_complete_runs_under_the_operations_lock(purgatory):
    shared = threading.Lock()
    op = MockDelayedOperation(100_000, lock=shared)
    assert not purgatory.try_complete_else_watch(op, ["k"])
    op.completable = True
    assert purgatory.check_and_complete("k") == 1
    assert op.lock is shared
    assert len(op.lock_held_in_try_complete) == 3 and all(op.lock_held_in_try_complete)
    assert not shared.locked()


# -- expiration ------------------------------------------------------------------------------

def test_expired_operations_run_on_expiration_once_on_a_manual_clock(mock_clock_purgatory):
    time, timer, purgatory = mock_clock_purgatory
    op1, op2 = MockDelayedOperation(100), MockDelayedOperation(250)
    assert not purgatory.try_complete_else_watch(op1, ["k"])
    assert not purgatory.try_complete_else_watch(op2, ["k"])

    time.advance(99)
    expire_due(timer)
    assert not op1.is_completed and not op2.is_completed

    time.advance(1)
    expire_due(timer)
    assert (op1.completions, op1.expirations) == (1, 1)
    assert not op2.is_completed and purgatory.num_delayed() == 1

    time.advance(150)
    expire_due(timer)
    assert (op2.completions, op2.expirations) == (1, 1)

    # Late checks and clock moves change nothing for completed operations.
    op1.completable = op2.completable = True
    assert purgatory.check_and_complete("k") == 0
    time.advance(1000)
    expire_due(timer)
    assert (op1.completions, op1.expirations, op2.completions, op2.expirations) == (1, 1, 1, 1)
    assert purgatory.num_delayed() == 0 and purgatory.watched() == 0


def test_reaper_expires_operations_on_the_real_clock():
    done = threading.Condition()
    purgatory = DelayedOperationPurgatory(f"expiry-{next(_names)}")
    try:
        ops = [MockDelayedOperation(d, done=done) for d in (5, 20, 40, 450)]
        for i, op in enumerate(ops):
            assert not purgatory.try_complete_else_watch(op, [f"key-{i}"])
        with done:
            assert done.wait_for(lambda: all(op.expirations == 1 for op in ops), WAIT_S)
        assert all(op.completions == 1 and op.is_completed for op in ops)
        assert purgatory.num_delayed() == 0
        assert all(purgatory.check_and_complete(f"key-{i}") == 0 for i in range(len(ops)))
    finally:
        purgatory.shutdown()
    assert all(op.expirations == 1 and op.completions == 1 for op in ops)


def test_completed_operation_does_not_expire_later(mock_clock_purgatory):
    time, timer, purgatory = mock_clock_purgatory
    op = MockDelayedOperation(50)
    assert not purgatory.try_complete_else_watch(op, ["k"])
    op.completable = True
    assert purgatory.check_and_complete("k") == 1
    time.advance(100)
    expire_due(timer)
    assert (op.completions, op.expirations) == (1, 0)


# -- purge and cancel ------------------------------------------------------------------------

def test_completed_operations_leave_every_watch_list_at_once():
    """Unlike Kafka, which leaves them on the lists of keys nobody checks until a purge: an
    operation keeps what it answers for (a group, records) alive for as long as it is listed."""
    timer = SystemTimer(f"purge-{next(_names)}")
    purgatory = DelayedOperationPurgatory("purge", timeout_timer=timer, purge_interval=10, reaper_enabled=False)
    try:
        ops = [MockDelayedOperation(100_000) for _ in range(25)]
        for op in ops:
            assert not purgatory.try_complete_else_watch(op, ["a", f"b-{id(op)}"])
            op.completable = True
        assert purgatory.watched() == 50
        assert purgatory.check_and_complete("a") == 25
        # off "a" and off each "b-..." list, which nobody checked, and those lists are gone
        assert purgatory.watched() == 0 and purgatory.num_delayed() == 0
        assert sum(len(wl.watchers_by_key) for wl in purgatory._watcher_lists) == 0
        assert all(op.completions == 1 for op in ops)
    finally:
        purgatory.shutdown()


def test_expired_operations_leave_their_watch_lists():
    timer = SystemTimer(f"expire-unwatch-{next(_names)}")
    purgatory = DelayedOperationPurgatory("expire-unwatch", timeout_timer=timer, reaper_enabled=False)
    try:
        op = MockDelayedOperation(1)
        assert not purgatory.try_complete_else_watch(op, ["group-1"])
        deadline = time.monotonic() + 10
        while not op.is_completed and time.monotonic() < deadline:
            purgatory.advance_clock(50)
        assert op.is_completed
        assert purgatory.watched() == 0
        assert sum(len(wl.watchers_by_key) for wl in purgatory._watcher_lists) == 0
    finally:
        purgatory.shutdown()


def test_purge_keeps_pending_operations():
    timer = SystemTimer(f"purge-keep-{next(_names)}")
    purgatory = DelayedOperationPurgatory("purge-keep", timeout_timer=timer, purge_interval=3, reaper_enabled=False)
    try:
        pending = MockDelayedOperation(100_000)
        assert not purgatory.try_complete_else_watch(pending, ["x", "y"])
        for _ in range(6):
            op = MockDelayedOperation(100_000)
            assert not purgatory.try_complete_else_watch(op, ["y"])
            assert op.force_complete()
        assert purgatory.watched() == 2
        purgatory.advance_clock(0)
        assert purgatory.watched() == 2
        pending.completable = True
        assert purgatory.check_and_complete("y") == 1
        assert purgatory.watched() == 0
    finally:
        purgatory.shutdown()


def test_cancel_for_key_takes_operations_off_watch_and_timer(purgatory):
    key = TopicPartitionOperationKey("gone", 0)
    ops = [MockDelayedOperation(100_000) for _ in range(3)]
    other = MockDelayedOperation(100_000)
    for op in ops:
        assert not purgatory.try_complete_else_watch(op, [key])
    assert not purgatory.try_complete_else_watch(other, ["other"])
    assert purgatory.num_delayed() == 4

    cancelled = purgatory.cancel_for_key(TopicPartitionOperationKey("gone", 0))
    assert sorted(map(id, cancelled)) == sorted(map(id, ops))
    assert not any(op.is_completed for op in ops)
    assert purgatory.num_delayed() == 1 and purgatory.watched() == 1
    assert purgatory.check_and_complete(key) == 0
    assert purgatory.cancel_for_key(key) == []


# -- concurrency -----------------------------------------------------------------------------

def test_concurrent_check_and_complete_racing_expiry_completes_each_once():
    done = threading.Condition()
    purgatory = DelayedOperationPurgatory(f"stress-{next(_names)}", purge_interval=50)
    rng = random.Random(11)
    keys = [f"k{i}" for i in range(10)]
    gate = threading.Event()
    try:
        ops = []
        for i in range(300):
            # Half expire within a few ms, racing the completing threads; half only complete.
            delay = rng.randrange(1, 30) if i % 2 else 100_000
            op = MockDelayedOperation(delay, gate=gate, done=done)
            assert not purgatory.try_complete_else_watch(op, rng.sample(keys, 3))
            ops.append(op)

        completed_by_checks = []
        start = threading.Barrier(5)

        def checker(seed: int) -> None:
            order = keys * 5
            random.Random(seed).shuffle(order)
            start.wait()
            completed_by_checks.append(sum(purgatory.check_and_complete(k) for k in order))

        threads = [threading.Thread(target=checker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        start.wait()
        gate.set()
        for t in threads:
            t.join(WAIT_S)
            assert not t.is_alive()

        with done:
            assert done.wait_for(lambda: all(op.is_completed for op in ops), WAIT_S)
        expired = sum(op.expirations for op in ops)
        assert all(op.completions == 1 for op in ops)
        assert all(op.expirations in (0, 1) for op in ops)
        assert sum(completed_by_checks) + expired == len(ops)
        assert all(op.expirations == 0 for i, op in enumerate(ops) if i % 2 == 0)
    finally:
        purgatory.shutdown()


def test_state_change_between_first_check_and_watch_is_not_lost(purgatory):
    # The state behind the key changes, and its owner checks the key, right after the
    # operation's first try failed and before it is on the watch list: that check finds
    # nothing to do, so only the purgatory's second try can complete the operation.
    gate = threading.Event()
    results: list[int] = []

    class RacedOperation(MockDelayedOperation):
        def try_complete(self) -> bool:
            first = not gate.is_set()
            outcome = super().try_complete()
            if first:
                def change_state() -> None:
                    gate.set()
                    results.append(purgatory.check_and_complete("k"))
                t = threading.Thread(target=change_state)
                t.start()
                t.join(WAIT_S)
            return outcome

    op = RacedOperation(100_000, gate=gate)
    assert purgatory.try_complete_else_watch(op, ["k"])
    assert results == [0]
    assert op.completions == 1 and purgatory.num_delayed() == 0


def test_no_completion_is_lost_when_the_condition_flips_while_watching():
    # The double check in try_complete_else_watch must catch a state change that lands
    # between the first try and the watch: every operation ends completed, exactly once.
    for round_ in range(5):
        purgatory = DelayedOperationPurgatory(f"flip-{next(_names)}", reaper_enabled=False)
        gate = threading.Event()
        ops = [MockDelayedOperation(100_000, gate=gate) for _ in range(400)]
        completed_on_add = []
        completed_by_check = []
        added = threading.Semaphore(0)

        def adder() -> None:
            n = 0
            for op in ops:
                n += purgatory.try_complete_else_watch(op, ["p-0", "p-1"])
                added.release()
            completed_on_add.append(n)

        def flipper() -> None:
            for _ in range(round_ * 60 + 20):
                added.acquire()
            gate.set()  # the state behind the keys changes; its owner then checks the keys
            completed_by_check.append(purgatory.check_and_complete("p-0") + purgatory.check_and_complete("p-1"))

        try:
            threads = [threading.Thread(target=adder), threading.Thread(target=flipper)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(WAIT_S)
                assert not t.is_alive()
            assert all(op.is_completed and op.completions == 1 for op in ops)
            assert completed_on_add[0] + completed_by_check[0] == len(ops)
            assert purgatory.num_delayed() == 0
        finally:
            purgatory.shutdown()


# -- lifecycle -------------------------------------------------------------------------------

def test_shutdown_stops_the_reaper_and_executor_threads():
    name = f"lifecycle-{next(_names)}"
    done = threading.Condition()
    purgatory = DelayedOperationPurgatory(name, broker_id=7)
    op = MockDelayedOperation(1, done=done)
    assert not purgatory.try_complete_else_watch(op, ["k"])
    with done:
        assert done.wait_for(lambda: op.expirations == 1, WAIT_S)

    def threads() -> dict[str, threading.Thread]:
        return {t.name: t for t in threading.enumerate()}

    reaper_name, executor_name = f"ExpirationReaper-7-{name}", f"executor-{name}"
    before = threads()
    assert reaper_name in before and executor_name in before
    purgatory.shutdown()
    after = threads()
    assert reaper_name not in after and executor_name not in after
    assert not before[reaper_name].is_alive() and not before[executor_name].is_alive()


def test_purgatory_without_reaper_starts_no_thread():
    name = f"no-reaper-{next(_names)}"
    purgatory = DelayedOperationPurgatory(name, reaper_enabled=False, timer_enabled=False)
    try:
        assert not any(t.name.endswith(name) for t in threading.enumerate())
        op = MockDelayedOperation(1)
        assert not purgatory.try_complete_else_watch(op, ["k"])
        # No timer: the operation waits on its key only.
        assert purgatory.num_delayed() == 0 and purgatory.watched() == 1
    finally:
        purgatory.shutdown()


# -- keys ------------------------------------------------------------------------------------

def test_key_labels_and_value_equality():
    assert TopicPartitionOperationKey("orders", 3).key_label == "orders-3"
    assert TopicPartitionOperationKey.from_topic_partition(TopicPartition("orders", 3)) == \
        TopicPartitionOperationKey("orders", 3)
    assert MemberKey("g", "c-1").key_label == "g-c-1"
    assert GroupKey("g").key_label == "g"
    assert GroupJoinKey("g").key_label == "join-g"
    assert GroupSyncKey("g").key_label == "sync-g"
    assert TopicKey("t").key_label == "t"
    assert len({TopicPartitionOperationKey("t", 0), TopicPartitionOperationKey("t", 0),
                TopicPartitionOperationKey("t", 1)}) == 2
    assert GroupJoinKey("g") != GroupSyncKey("g")
