"""KafkaScheduler, MockScheduler/MockTime and ShutdownableThread."""
from __future__ import annotations

import threading
import time

import pytest

from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.core.utils.shutdownable_thread import FatalExitError, ShutdownableThread
from kafka_py.clients.common.utils.time import MockTime, Time

TIMEOUT = 10.0


def _wait_until(predicate, timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


@pytest.fixture
def scheduler(request):
    prefix = f"test-scheduler-{request.node.name}-"
    s = KafkaScheduler(2, thread_name_prefix=prefix)
    s.startup()
    yield s
    s.shutdown()


def test_one_shot_task_runs_on_a_named_daemon_thread(scheduler):
    ran = threading.Event()
    seen = {}

    def task():
        seen["thread"] = threading.current_thread()
        ran.set()

    handle = scheduler.schedule_once("one-shot", task)
    assert ran.wait(TIMEOUT)
    assert handle.wait(TIMEOUT)
    assert handle.is_done() and not handle.is_periodic
    assert seen["thread"].name.startswith(scheduler.thread_name_prefix)
    assert seen["thread"].name[len(scheduler.thread_name_prefix):].isdigit()
    assert seen["thread"].daemon


def test_delayed_tasks_run_in_due_order():
    # One thread, so the order of runs is the order tasks came due. Scheduled in the reverse
    # of that order, with a second between due times: only a test thread stalled for that long
    # between two schedule calls (a loaded CI machine stalls for tens of milliseconds) could
    # make a later call's task come due first.
    s = KafkaScheduler(1, thread_name_prefix="test-due-order-")
    s.startup()
    order = []
    done = threading.Event()
    s.schedule("later", lambda: (order.append("later"), done.set()), delay_ms=2000)
    s.schedule("sooner", lambda: order.append("sooner"), delay_ms=1000)
    s.schedule("soonest", lambda: order.append("soonest"))
    assert done.wait(TIMEOUT)
    assert order == ["soonest", "sooner", "later"]
    s.shutdown()


def test_periodic_task_repeats(scheduler):
    count = 0
    enough = threading.Event()

    def tick():
        nonlocal count
        count += 1
        if count >= 3:
            enough.set()

    task = scheduler.schedule("periodic", tick, delay_ms=0, period_ms=5)
    assert enough.wait(TIMEOUT)
    assert task.is_periodic and not task.is_done()
    assert task.cancel()
    assert task.is_cancelled()
    assert not scheduler.task_running(task)


def test_exceptions_do_not_stop_periodic_tasks_or_the_pool(scheduler, caplog):
    attempts = 0
    enough = threading.Event()

    def failing():
        nonlocal attempts
        attempts += 1
        if attempts >= 3:
            enough.set()
        raise RuntimeError("boom")

    with caplog.at_level("ERROR", logger="kafka_py.core.utils.kafka_scheduler"):
        scheduler.schedule("failing", failing, period_ms=5)
        assert enough.wait(TIMEOUT)
    assert any("Uncaught exception in scheduled task 'failing'" in r.getMessage() for r in caplog.records)
    other = threading.Event()
    scheduler.schedule_once("after-failures", other.set)
    assert other.wait(TIMEOUT)


def test_shutdown_stops_periodic_and_drops_delayed_tasks():
    prefix = "test-shutdown-stops-"
    s = KafkaScheduler(3, thread_name_prefix=prefix)
    s.startup()
    runs = 0
    started = threading.Event()

    def periodic():
        nonlocal runs
        runs += 1
        started.set()

    periodic_task = s.schedule("periodic", periodic, period_ms=1)
    never = threading.Event()
    delayed_task = s.schedule("far-future", never.set, delay_ms=3_600_000)
    assert started.wait(TIMEOUT)
    s.shutdown()
    assert not s.is_started
    # All workers have exited, so nothing can run any more.
    assert _threads_named(prefix) == []
    runs_at_shutdown = runs
    assert periodic_task.is_done() and delayed_task.is_done()
    assert not never.is_set()
    assert not s.task_running(delayed_task)
    assert runs == runs_at_shutdown


def test_shutdown_waits_for_running_task():
    s = KafkaScheduler(1, thread_name_prefix="test-shutdown-waits-")
    s.startup()
    running, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow():
        running.set()
        release.wait(TIMEOUT)
        finished.set()

    s.schedule_once("slow", slow)
    assert running.wait(TIMEOUT)
    stopper = threading.Thread(target=s.shutdown)
    stopper.start()
    stopper.join(0.05)
    assert stopper.is_alive()  # cannot return while the task is still running
    release.set()
    stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    assert finished.is_set()


def test_not_started_scheduler_ignores_tasks():
    s = KafkaScheduler(1, thread_name_prefix="test-not-started-")
    called = []
    handle = s.schedule("ignored", lambda: called.append(1))
    assert handle.is_done()
    assert called == []
    assert not s.is_started
    s.shutdown()  # harmless


def test_startup_twice_fails_and_restart_works():
    s = KafkaScheduler(1, thread_name_prefix="test-restart-")
    s.startup()
    with pytest.raises(RuntimeError, match="already been started"):
        s.startup()
    s.shutdown()
    s.startup()
    ran = threading.Event()
    s.schedule_once("after-restart", ran.set)
    assert ran.wait(TIMEOUT)
    s.shutdown()


def test_resize_thread_pool():
    prefix = "test-resize-"
    s = KafkaScheduler(1, thread_name_prefix=prefix)
    s.startup()
    s.resize_thread_pool(3)
    barrier = threading.Barrier(3, timeout=TIMEOUT)
    passed = []
    # Three tasks can only all pass the barrier if three threads run them at once.
    for i in range(3):
        s.schedule_once(f"barrier-{i}", lambda: passed.append(barrier.wait()))
    assert _wait_until(lambda: len(passed) == 3)
    s.resize_thread_pool(1)
    assert _wait_until(lambda: len(_threads_named(prefix)) == 1)
    ran = threading.Event()
    s.schedule_once("after-shrink", ran.set)
    assert ran.wait(TIMEOUT)
    s.shutdown()


def test_task_may_schedule_more_tasks(scheduler):
    second = threading.Event()
    scheduler.schedule_once("first", lambda: scheduler.schedule_once("second", second.set))
    assert second.wait(TIMEOUT)


def test_cancelled_tasks_release_what_they_hold(scheduler):
    """Kafka's executor removes a task on cancel: a deleted log's periodic task must not keep
    the log alive until its next run time (minutes away)."""
    import gc
    import weakref

    class Held:
        def work(self) -> None:
            pass

    refs = []
    tasks = []
    for i in range(100):
        held = Held()
        refs.append(weakref.ref(held))
        tasks.append(scheduler.schedule(f"far-{i}", held.work, delay_ms=600_000, period_ms=600_000))
        del held
    for task in tasks:
        assert task.cancel()
    gc.collect()
    assert [r for r in refs if r() is not None] == []
    # and the queue itself does not keep their entries
    assert len(scheduler._queue) < 100
    ran = threading.Event()
    scheduler.schedule_once("still-serving", ran.set)
    assert ran.wait(TIMEOUT)


def test_finished_one_shot_tasks_release_what_they_held(scheduler):
    """A log's one-shot tasks (a flush after a roll, the deletion of old segments) hold the
    log: once run, neither their handle nor the idle worker that ran them may keep it."""
    import gc
    import weakref

    class Held:
        def work(self) -> None:
            pass

    held = Held()
    ref = weakref.ref(held)
    task = scheduler.schedule_once("flush-log", held.work)
    del held
    assert task.wait(TIMEOUT)
    # the worker is idle, waiting for its next task
    assert _wait_until(lambda: gc.collect() >= 0 and ref() is None)
    assert task.is_done() and not task.is_cancelled()


# -- MockTime / MockScheduler --------------------------------------------------------------


def test_mock_time_moves_only_when_told():
    t = MockTime(current_time_ms=1_000, current_hi_res_time_ns=5_000_000)
    assert t.milliseconds() == 1_000
    t.sleep(250)
    assert t.milliseconds() == 1_250
    assert t.hi_res_milliseconds() == 255
    t.set_current_time_ms(2_000)
    assert t.milliseconds() == 2_000
    with pytest.raises(ValueError):
        t.set_current_time_ms(10)
    ticking = MockTime(current_time_ms=0, auto_tick_ms=3)
    assert ticking.milliseconds() == 3
    assert ticking.milliseconds() == 6


def test_system_time_is_sane():
    assert Time.SYSTEM.milliseconds() > 1_600_000_000_000
    assert Time.SYSTEM.nanoseconds() <= Time.SYSTEM.nanoseconds()


def test_mock_scheduler_runs_tasks_as_mock_time_advances():
    t = MockTime(current_time_ms=0)
    s = t.scheduler
    assert s is t.scheduler
    ran = []
    s.schedule("once", lambda: ran.append(("once", t.milliseconds())), delay_ms=100)
    periodic = s.schedule("periodic", lambda: ran.append(("periodic", t.milliseconds())), delay_ms=50, period_ms=50)
    t.sleep(49)
    assert ran == []
    t.sleep(1)
    assert ran == [("periodic", 50)]
    t.sleep(50)
    assert sorted(ran) == [("once", 100), ("periodic", 50), ("periodic", 100)]
    periodic.cancel()
    t.sleep(500)
    assert len(ran) == 3
    s.schedule("pending", lambda: ran.append(("pending", t.milliseconds())), delay_ms=10_000)
    s.shutdown()  # runs what is left, as Kafka's MockScheduler does
    assert ran[-1] == ("pending", 600)


# -- ShutdownableThread --------------------------------------------------------------------


class _CountingThread(ShutdownableThread):
    def __init__(self, fail_after: int | None = None, fatal: bool = False):
        super().__init__("counting-thread")
        self.count = 0
        self.fail_after = fail_after
        self.fatal = fatal
        self.reached = threading.Event()

    def do_work(self) -> None:
        self.count += 1
        if self.count >= 3:
            self.reached.set()
        if self.fail_after is not None and self.count >= self.fail_after:
            if self.fatal:
                raise FatalExitError(3)
            raise RuntimeError("do_work failed")
        self.pause(1)


def test_shutdownable_thread_loops_until_shutdown():
    thread = _CountingThread()
    assert thread.is_running
    thread.start()
    assert thread.reached.wait(TIMEOUT)
    assert thread.initiate_shutdown() is True
    assert thread.initiate_shutdown() is False
    thread.await_shutdown()
    assert not thread.is_running
    assert thread.is_shutdown_initiated and thread.is_shutdown_complete
    assert not thread.is_thread_failed
    thread.join(TIMEOUT)
    assert not thread.is_alive()


def test_shutdownable_thread_stops_on_error(caplog):
    thread = _CountingThread(fail_after=3)
    # the base class's lines go to the concrete class's module logger, as Kafka names loggers
    with caplog.at_level("ERROR", logger=_CountingThread.__module__):
        thread.start()
        thread.join(TIMEOUT)
    assert not thread.is_alive()
    assert thread.count == 3
    assert thread.is_thread_failed
    assert thread.is_shutdown_complete
    failed = [r for r in caplog.records if "[counting-thread]: Error due to" in r.getMessage()]
    assert failed and all(r.name == _CountingThread.__module__ for r in failed)
    assert failed[0].exc_info is not None


def test_shutdownable_thread_lines_carry_the_subclass_ident(caplog):
    thread = _CountingThread()
    thread.logger.ident = "[Counting id=7] "
    with caplog.at_level("INFO", logger=_CountingThread.__module__):
        thread.start()
        assert thread.reached.wait(TIMEOUT)
        thread.shutdown()
    lines = [r.getMessage() for r in caplog.records if r.name == _CountingThread.__module__]
    for text in ("Starting", "Shutting down", "Stopped", "Shutdown completed"):
        assert f"[Counting id=7] {text}" in lines


def test_shutdownable_thread_fatal_exit():
    thread = _CountingThread(fail_after=1, fatal=True)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_running and thread.is_shutdown_complete


def test_await_shutdown_requires_initiate():
    thread = _CountingThread()
    with pytest.raises(RuntimeError, match="initiate_shutdown"):
        thread.await_shutdown()
    thread.shutdown()  # never started: returns at once
    assert not thread.is_running


def test_pause_returns_early_on_shutdown():
    thread = _CountingThread()
    woke = threading.Event()
    waiter = threading.Thread(target=lambda: (thread.pause(60_000), woke.set()))
    waiter.start()
    thread.initiate_shutdown()
    assert woke.wait(TIMEOUT)
    waiter.join(TIMEOUT)


def test_mock_time_wait_for_wakes_when_the_clock_moves():
    t = MockTime(current_time_ms=0)
    condition = threading.Condition()
    result = {}

    def waiter():
        with condition:
            result["value"] = t.wait_for(condition, lambda: False, deadline_ms=100)

    thread = threading.Thread(target=waiter)
    thread.start()
    # The waiter gives up only once mock time passes the deadline.
    assert _wait_until(lambda: len(t._listeners) == 1)
    t.sleep(100)
    thread.join(TIMEOUT)
    assert not thread.is_alive()
    assert result["value"] is False
