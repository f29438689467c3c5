"""Port of core/src/main/scala/kafka/utils/timer/Timer.scala (the ``Timer`` trait and
``SystemTimer``).

``SystemTimer`` keeps tasks in a hierarchical ``TimingWheel`` and runs the ones that come due
on a single executor thread named ``executor-<name>``, as Kafka does. Nothing ticks on its
own: whoever owns the timer (the purgatory's expiration reaper) calls ``advance_clock``, which
blocks on the bucket ``DelayQueue`` until the next bucket is due and then flushes every due
bucket.

Kafka guards the wheel with a read-write lock so that ``add`` calls from many request threads
run in parallel and only a flush excludes them. Under the GIL those adds would not run in
parallel anyway, and a Python read-write lock costs a Condition round trip per ``add``, so a
plain mutex serialises ``add`` and the flush here; the wheel itself stays unsynchronised, as in
Kafka.
"""
from __future__ import annotations

import logging
import queue
import threading
from abc import ABC, abstractmethod

from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.utils.timer.timer_task import TimerTask
from kafka_py.core.utils.timer.timer_task_list import DelayQueue, TimerTaskEntry
from kafka_py.core.utils.timer.timing_wheel import TimingWheel

logger = logging.getLogger(__name__)

_STOP = object()


class Timer(ABC):
    @abstractmethod
    def add(self, timer_task: TimerTask) -> None:
        """Schedule ``timer_task`` to run ``timer_task.delay_ms`` from now."""

    @abstractmethod
    def advance_clock(self, timeout_ms: int) -> bool:
        """Wait up to ``timeout_ms`` for a bucket to come due and process every due bucket;
        True if any bucket was processed."""

    @property
    @abstractmethod
    def size(self) -> int:
        """Number of tasks waiting in the timer."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop the executor; tasks already handed to it still run."""

    def wakeup(self) -> None:
        """Make a blocked ``advance_clock`` return early (used to shut down its caller's
        thread promptly). Not in Kafka's trait: there the reaper's poll simply times out."""


class _TaskExecutor:
    """A one-thread executor (Kafka's ``Executors.newFixedThreadPool(1, ...)``): due tasks run
    in submission order, off the thread that advances the clock, so a slow expiration callback
    never delays the expiry of the next bucket."""

    def __init__(self, thread_name: str) -> None:
        self._thread_name = thread_name
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._shutdown = False

    def submit(self, task: TimerTask) -> None:
        with self._lock:
            if self._shutdown:
                logger.debug("Executor %s is shut down; dropping expired task %r", self._thread_name, task)
                return
            if self._thread is None:
                # Started on first use, as a Java thread pool creates its worker lazily.
                # Daemon so a timer somebody forgot to shut down cannot hold the process open.
                self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
                self._thread.start()
            self._queue.put(task)

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            if task is _STOP:
                return
            try:
                task.run()
            except BaseException:  # noqa: BLE001 - one failing task must not kill the executor
                logger.error("Error running timer task %r on %s", task, self._thread_name, exc_info=True)
            # Not held while waiting for the next one: an expired operation keeps what it
            # answers for (a group, a request's records) alive.
            del task

    def shutdown(self) -> None:
        with self._lock:
            if self._shutdown:
                thread = None
            else:
                self._shutdown = True
                thread = self._thread
                if thread is not None:
                    self._queue.put(_STOP)
        # Queued tasks run to completion first; waiting for them means no timer thread
        # outlives shutdown(). A task that shuts down its own timer must not wait for itself.
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread


class SystemTimer(Timer):
    def __init__(self, executor_name: str, tick_ms: int = 1, wheel_size: int = 20,
                 start_ms: int | None = None, time: Time = Time.SYSTEM) -> None:
        self._time = time
        self._task_executor = _TaskExecutor("executor-" + executor_name)
        self._delay_queue = DelayQueue(time)
        self._task_counter = AtomicInteger(0)
        self._timing_wheel = TimingWheel(
            tick_ms=tick_ms,
            wheel_size=wheel_size,
            start_ms=time.hi_res_milliseconds() if start_ms is None else start_ms,
            task_counter=self._task_counter,
            queue=self._delay_queue,
        )
        self._lock = threading.Lock()

    def add(self, timer_task: TimerTask) -> None:
        with self._lock:
            self._add_timer_task_entry(
                TimerTaskEntry(timer_task, timer_task.delay_ms + self._time.hi_res_milliseconds()))

    def _add_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        if not self._timing_wheel.add(entry):
            # Not placed: either cancelled (drop it) or already due (run it).
            if not entry.cancelled:
                self._task_executor.submit(entry.timer_task)

    def advance_clock(self, timeout_ms: int) -> bool:
        bucket = self._delay_queue.poll(timeout_ms)
        if bucket is None:
            return False
        with self._lock:
            while bucket is not None:
                self._timing_wheel.advance_clock(bucket.get_expiration())
                bucket.flush(self._add_timer_task_entry)
                bucket = self._delay_queue.poll(0)
        return True

    @property
    def size(self) -> int:
        return self._task_counter.get()

    def wakeup(self) -> None:
        self._delay_queue.wakeup()

    def shutdown(self) -> None:
        self._task_executor.shutdown()
        self._delay_queue.wakeup()
