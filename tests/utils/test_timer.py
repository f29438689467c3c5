"""SystemTimer, TimingWheel and TimerTaskList (kafka_py/core/utils/timer)."""
from __future__ import annotations

import random
import threading

from hypothesis import given, settings, strategies as st

from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.clients.common.utils.time import MockTime, Time
from kafka_py.core.utils.timer import (DelayQueue, SystemTimer, TimerTask, TimerTaskEntry, TimerTaskList,
                                  TimingWheel)

WAIT_S = 10.0


class Recorder:
    """Collects task firings; waiters block on a Condition instead of sleeping."""

    def __init__(self, time: Time = Time.SYSTEM) -> None:
        self.time = time
        self.cond = threading.Condition()
        self.fired: list[tuple[object, int]] = []

    def record(self, task_id: object) -> None:
        now = self.time.hi_res_milliseconds()
        with self.cond:
            self.fired.append((task_id, now))
            self.cond.notify_all()

    def ids(self) -> list[object]:
        with self.cond:
            return [i for i, _ in self.fired]

    def wait_for_count(self, n: int, timeout: float = WAIT_S) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.fired) >= n, timeout)


class RecordingTask(TimerTask):
    def __init__(self, delay_ms: int, task_id: object, recorder: Recorder) -> None:
        super().__init__(delay_ms)
        self.task_id = task_id
        self.recorder = recorder

    def run(self) -> None:
        self.recorder.record(self.task_id)


class EventTask(TimerTask):
    def __init__(self, delay_ms: int = 0) -> None:
        super().__init__(delay_ms)
        self.event = threading.Event()

    def run(self) -> None:
        self.event.set()


def settle(timer: SystemTimer) -> None:
    """Process every bucket due on the (mock) clock and wait until the executor has run all
    tasks handed to it: a zero-delay task runs after them, the executor being FIFO."""
    while timer.advance_clock(0):
        pass
    barrier = EventTask(0)
    timer.add(barrier)
    while timer.advance_clock(0):
        pass
    assert barrier.event.wait(WAIT_S), "executor did not drain"


def mock_timer(name: str) -> tuple[MockTime, SystemTimer, Recorder]:
    time = MockTime()
    return time, SystemTimer(name, time=time), Recorder(time)


# -- AtomicInteger ---------------------------------------------------------------------------

def test_atomic_integer_add_and_get_returns_the_new_value_under_concurrent_adds():
    counter = AtomicInteger(5)
    assert counter.add_and_get(3) == 8
    assert counter.add_and_get(-2) == 6
    assert counter.add_and_get(0) == 6 and counter.get() == 6

    def add_many() -> None:
        for _ in range(1000):
            counter.add_and_get(2)

    threads = [threading.Thread(target=add_many) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert counter.get() == 6 + 8 * 1000 * 2


# -- TimerTaskList ---------------------------------------------------------------------------

def test_task_list_add_remove_and_readd_moves_entry():
    counter = AtomicInteger()
    list1, list2 = TimerTaskList(counter), TimerTaskList(counter)
    rec = Recorder()
    tasks = [RecordingTask(10, i, rec) for i in range(10)]
    for t in tasks:
        list1.add(TimerTaskEntry(t, 10))
    assert counter.get() == 10 and len(list1) == 10

    # A new entry for the same task takes it out of its old bucket: the count is unchanged.
    for t in tasks[:4]:
        list2.add(TimerTaskEntry(t, 15))
    assert counter.get() == 10
    assert len(list1) == 6 and len(list2) == 4

    seen: list[object] = []
    list2.foreach(lambda task: seen.append(task.task_id))
    assert seen == [0, 1, 2, 3]

    tasks[0].cancel()
    assert counter.get() == 9 and len(list2) == 3

    flushed: list[TimerTaskEntry] = []
    list1.flush(flushed.append)
    assert [e.timer_task.task_id for e in flushed] == [4, 5, 6, 7, 8, 9]
    assert len(list1) == 0 and list1.get_expiration() == -1
    assert counter.get() == 3


def test_foreach_skips_entries_superseded_by_a_newer_one():
    counter = AtomicInteger()
    bucket = TimerTaskList(counter)
    rec = Recorder()
    task = RecordingTask(5, "t", rec)
    stale = TimerTaskEntry(task, 5)
    bucket.add(stale)
    TimerTaskEntry(task, 9)  # re-targets the task; the old entry leaves its bucket
    assert stale.cancelled and len(bucket) == 0


def test_bucket_set_expiration_reports_change_only():
    bucket = TimerTaskList(AtomicInteger())
    assert bucket.set_expiration(20)
    assert not bucket.set_expiration(20)
    assert bucket.set_expiration(40)


# -- TimingWheel -----------------------------------------------------------------------------

def test_overflow_wheels_are_created_lazily_per_level():
    time = MockTime(current_hi_res_time_ns=0)
    counter = AtomicInteger()
    wheel = TimingWheel(tick_ms=1, wheel_size=20, start_ms=0, task_counter=counter, queue=DelayQueue(time))
    rec = Recorder()

    assert wheel.add(TimerTaskEntry(RecordingTask(0, "a", rec), 19))
    assert wheel.overflow_wheel is None
    assert wheel.add(TimerTaskEntry(RecordingTask(0, "b", rec), 20))
    assert wheel.overflow_wheel is not None and wheel.overflow_wheel.tick_ms == 20
    assert wheel.overflow_wheel.overflow_wheel is None
    assert wheel.add(TimerTaskEntry(RecordingTask(0, "c", rec), 400))
    assert wheel.overflow_wheel.overflow_wheel is not None
    assert wheel.overflow_wheel.overflow_wheel.tick_ms == 400
    assert counter.get() == 3

    # Already due or cancelled entries are refused (the timer then runs or drops them).
    assert not wheel.add(TimerTaskEntry(RecordingTask(0, "d", rec), 0))
    cancelled = RecordingTask(0, "e", rec)
    entry = TimerTaskEntry(cancelled, 50)
    cancelled.cancel()
    assert not wheel.add(entry)


# -- SystemTimer on a manual clock -----------------------------------------------------------

def test_tasks_fire_at_their_deadline_in_order_never_before():
    time, timer, rec = mock_timer("order")
    try:
        rng = random.Random(7)
        delays = [rng.randrange(1, 120) for _ in range(200)]
        for i, d in enumerate(delays):
            timer.add(RecordingTask(d, i, rec))
        assert timer.size == 200

        elapsed = 0
        for step in [1, 3, 7, 2, 13, 19, 1, 40, 5, 30]:
            time.advance(step)
            elapsed += step
            settle(timer)
            fired = rec.ids()
            assert sorted(fired) == sorted(i for i, d in enumerate(delays) if d <= elapsed)
            fired_delays = [delays[i] for i in fired]
            assert fired_delays == sorted(fired_delays)
            assert timer.size == sum(1 for d in delays if d > elapsed)
        assert timer.size == 0
    finally:
        timer.shutdown()


def test_overflow_levels_fire_exactly_at_deadline():
    time, timer, rec = mock_timer("overflow")
    try:
        deadlines = [1, 19, 20, 21, 39, 40, 399, 400, 401, 799, 8000, 8001]
        for d in deadlines:
            timer.add(RecordingTask(d, d, rec))
        now = 0
        for d in deadlines:
            time.advance(d - 1 - now)
            now = d - 1
            settle(timer)
            assert d not in rec.ids(), f"task due at {d} ran at {now}"
            time.advance(1)
            now = d
            settle(timer)
            assert rec.ids()[-1] == d
        assert rec.ids() == deadlines
    finally:
        timer.shutdown()


def test_cancelled_tasks_do_not_fire():
    time, timer, rec = mock_timer("cancel")
    try:
        tasks = [RecordingTask(5 + 50 * i, i, rec) for i in range(10)]
        for t in tasks:
            timer.add(t)
        for t in tasks[::2]:
            t.cancel()
        assert timer.size == 5
        time.advance(1000)
        settle(timer)
        assert sorted(rec.ids()) == [1, 3, 5, 7, 9]
        assert timer.size == 0
    finally:
        timer.shutdown()


def test_readding_a_task_replaces_its_earlier_schedule():
    time, timer, rec = mock_timer("readd")
    try:
        task = RecordingTask(10, "x", rec)
        timer.add(task)
        task.delay_ms = 500
        timer.add(task)
        assert timer.size == 1
        time.advance(100)
        settle(timer)
        assert rec.ids() == []
        time.advance(400)
        settle(timer)
        assert rec.ids() == ["x"]
    finally:
        timer.shutdown()


def test_task_that_raises_does_not_stop_the_executor():
    time, timer, rec = mock_timer("raises")

    class Boom(TimerTask):
        def run(self) -> None:
            raise RuntimeError("boom")

    try:
        timer.add(Boom(1))
        timer.add(RecordingTask(2, "after", rec))
        time.advance(5)
        settle(timer)
        assert rec.ids() == ["after"]
    finally:
        timer.shutdown()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(1, 1000)),
    st.tuples(st.just("cancel"), st.integers(0, 200)),
    st.tuples(st.just("advance"), st.integers(0, 450)),
), max_size=40))
def test_timer_matches_a_model(ops):
    time, timer, rec = mock_timer("model")
    try:
        tasks: list[RecordingTask] = []
        deadline: dict[int, int] = {}
        live: set[int] = set()
        fired: set[int] = set()
        now = 0
        for op, arg in ops:
            if op == "add":
                i = len(tasks)
                tasks.append(RecordingTask(arg, i, rec))
                timer.add(tasks[-1])
                deadline[i] = now + arg
                live.add(i)
            elif op == "cancel" and tasks:
                i = arg % len(tasks)
                tasks[i].cancel()
                live.discard(i)
            elif op == "advance":
                time.advance(arg)
                now += arg
                settle(timer)
                due = {i for i in live if deadline[i] <= now}
                fired |= due
                live -= due
                assert set(rec.ids()) == fired
                assert len(rec.ids()) == len(fired)
                assert timer.size == len(live)
    finally:
        timer.shutdown()


# -- SystemTimer on the real clock -----------------------------------------------------------

class Driver:
    """Advances a timer from its own thread, as the purgatory's reaper does."""

    def __init__(self, timer: SystemTimer) -> None:
        self.timer = timer
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="timer-test-driver", daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.timer.advance_clock(50)

    def __enter__(self) -> "Driver":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.timer.wakeup()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()


def test_real_clock_fires_in_deadline_order_and_not_early():
    clock = Time.SYSTEM
    timer = SystemTimer("real")
    rec = Recorder(clock)
    rng = random.Random(3)
    delays = [rng.randrange(0, 300) for _ in range(40)]
    window: dict[int, tuple[int, int]] = {}
    try:
        with Driver(timer):
            for i, d in enumerate(delays):
                before = clock.hi_res_milliseconds()
                timer.add(RecordingTask(d, i, rec))
                after = clock.hi_res_milliseconds()
                window[i] = (before + d, after + d)  # the timer's deadline lies in here
            assert rec.wait_for_count(len(delays))
        fired = list(rec.fired)
        assert sorted(i for i, _ in fired) == list(range(len(delays)))
        for i, at in fired:
            assert at >= window[i][0], f"task {i} ran before its deadline"
        for (i, _), (j, _) in zip(fired, fired[1:]):
            assert window[i][0] <= window[j][1], f"task {i} ran before earlier-due task {j}"
        assert timer.size == 0
    finally:
        timer.shutdown()


def test_ten_thousand_tasks_from_several_threads_fire_exactly_once():
    timer = SystemTimer("many")
    counts = [0] * 10_000
    lock = threading.Lock()
    all_fired = threading.Condition(lock)
    total = [0]

    class CountingTask(TimerTask):
        def __init__(self, delay_ms: int, idx: int) -> None:
            super().__init__(delay_ms)
            self.idx = idx

        def run(self) -> None:
            with all_fired:
                counts[self.idx] += 1
                total[0] += 1
                all_fired.notify_all()

    def adder(start: int) -> None:
        rng = random.Random(start)
        for idx in range(start, start + 2_500):
            cancel = idx % 10 == 0
            # A cancel racing the task's expiry may lose (the task is already on the
            # executor), so the tasks to cancel are due long after the test ends.
            task = CountingTask(rng.randrange(5_000, 30_000) if cancel else rng.randrange(0, 600), idx)
            timer.add(task)
            if cancel:
                task.cancel()

    expected = sum(1 for idx in range(10_000) if idx % 10 != 0)
    try:
        with Driver(timer):
            adders = [threading.Thread(target=adder, args=(n * 2_500,)) for n in range(4)]
            for t in adders:
                t.start()
            for t in adders:
                t.join()
            with all_fired:
                assert all_fired.wait_for(lambda: total[0] >= expected, 20)
        # Nothing is left to fire, so the counts are final.
        assert timer.size == 0
        settle(timer)
        assert all(c == (0 if idx % 10 == 0 else 1) for idx, c in enumerate(counts))
    finally:
        timer.shutdown()


def test_advance_clock_times_out_and_wakeup_releases_a_blocked_caller():
    timer = SystemTimer("idle")
    try:
        assert timer.advance_clock(10) is False
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(timer.advance_clock(60_000)))
        t.start()
        timer.wakeup()
        t.join(WAIT_S)
        assert not t.is_alive() and result == [False]
    finally:
        timer.shutdown()


def test_blocked_advance_clock_returns_when_a_bucket_comes_due():
    timer = SystemTimer("due")
    try:
        task = EventTask(30)
        result: list[bool] = []
        t = threading.Thread(target=lambda: result.append(timer.advance_clock(60_000)))
        t.start()
        timer.add(task)  # becomes the head of the delay queue and wakes the waiter
        t.join(WAIT_S)
        assert result == [True]
        # The first due bucket may be an overflow bucket that only moves the task down a level.
        with Driver(timer):
            assert task.event.wait(WAIT_S)
    finally:
        timer.shutdown()


def test_executor_thread_is_named_and_stops_on_shutdown():
    time, timer, rec = mock_timer("named")
    timer.add(RecordingTask(1, "a", rec))
    time.advance(1)
    settle(timer)
    names = [t for t in threading.enumerate() if t.name == "executor-named"]
    assert len(names) == 1
    timer.shutdown()
    assert not names[0].is_alive()
