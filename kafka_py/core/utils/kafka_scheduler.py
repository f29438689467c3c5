"""Port of core/src/main/scala/kafka/utils/KafkaScheduler.scala (Scheduler, KafkaScheduler) and of
the test helper core/src/test/scala/unit/kafka/utils/MockScheduler.scala.

Kafka builds its scheduler on ``ScheduledThreadPoolExecutor``; Python has no such executor, so
KafkaScheduler keeps the same behaviour with a heap of due times guarded by one Condition:

* a pool of ``threads`` daemon workers named ``<prefix><n>`` (n counting from 0), started
  lazily as tasks arrive, like the executor's core threads;
* one-shot tasks after a delay, periodic tasks at a fixed rate (the next run is due one period
  after the previous *due* time; a run never overlaps the previous run of the same task);
* an exception in a task is logged and a periodic task keeps its schedule (Kafka wraps every
  task in a catch-all for exactly this);
* ``shutdown`` drops every queued task, delayed and periodic alike, then waits for running
  ones to finish.

Idle workers follow the executor's leader/follower pattern: one worker sleeps until the head of
the heap is due, the others wait without a timeout, so a quiet scheduler wakes once per due task
rather than once per worker.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time as _time
from typing import Callable

logger = logging.getLogger(__name__)

_NANOS_PER_MS = 1_000_000


class ScheduledTask:
    """What ``schedule`` returns: Kafka's ``ScheduledFuture`` reduced to what the broker uses."""

    __slots__ = ("name", "fun", "period_ns", "next_run_ns", "_cancelled", "_done", "_on_cancel")

    def __init__(self, name: str, fun: Callable[[], object], next_run_ns: int, period_ns: int) -> None:
        self.name = name
        self.fun = fun
        self.period_ns = period_ns
        self.next_run_ns = next_run_ns
        self._cancelled = False
        self._done = threading.Event()
        # Set by the scheduler holding the task: takes a cancelled task out of its queue.
        self._on_cancel: Callable[["ScheduledTask"], None] | None = None

    @property
    def is_periodic(self) -> bool:
        return self.period_ns > 0

    def cancel(self) -> bool:
        """Stop future runs (a run in progress completes). False if the task already finished."""
        if self._done.is_set():
            return False
        self._cancelled = True
        self._done.set()
        on_cancel = self._on_cancel
        if on_cancel is not None:
            on_cancel(self)
        return True

    def is_cancelled(self) -> bool:
        return self._cancelled

    def is_done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a one-shot task has run (or any task was cancelled); True if so."""
        return self._done.wait(timeout)

    def _finish(self) -> None:
        # A finished task lets go of its function, as Java's FutureTask does once it ran: the
        # function's closure may hold what is gone since (a deleted log's segments, say), and
        # whoever keeps the task handle must not keep that alive.
        self.fun = _finished_task_fun
        self._done.set()

    def __repr__(self) -> str:
        return f"ScheduledTask(name={self.name!r}, periodic={self.is_periodic}, done={self.is_done()})"


class _NoOpScheduledTask(ScheduledTask):
    """Returned when a task is offered to a scheduler that is not running: already done."""

    def __init__(self, name: str) -> None:
        super().__init__(name, lambda: None, 0, -1)
        self._cancelled = True
        self._done.set()

    def cancel(self) -> bool:
        return True


def _cancelled_task_fun() -> None:
    """What a cancelled task runs instead of its function, should a worker already hold it."""


def _finished_task_fun() -> None:
    """A finished one-shot task's function."""


def _to_ns(value: float, unit_ms: bool) -> int:
    return int(value * (_NANOS_PER_MS if unit_ms else 1_000_000_000))


class Scheduler:
    """The interface both KafkaScheduler and MockScheduler implement."""

    def startup(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        raise NotImplementedError

    @property
    def is_started(self) -> bool:
        raise NotImplementedError

    def schedule(self, name: str, fun: Callable[[], object], delay_ms: float = 0, period_ms: float = -1,
                 unit_ms: bool = True) -> ScheduledTask:
        raise NotImplementedError

    def schedule_once(self, name: str, fun: Callable[[], object], delay_ms: float = 0) -> ScheduledTask:
        return self.schedule(name, fun, delay_ms=delay_ms, period_ms=-1)


class KafkaScheduler(Scheduler):
    """A thread pool running delayed and periodic background tasks (log retention, flushes,
    checkpoints, ISR expiry ...). Thread-safe."""

    def __init__(self, threads: int, thread_name_prefix: str = "kafka-scheduler-", daemon: bool = True) -> None:
        if threads < 1:
            raise ValueError(f"A scheduler needs at least one thread, got {threads}")
        self.threads = threads
        self.thread_name_prefix = thread_name_prefix
        self.daemon = daemon
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[tuple[int, int, ScheduledTask]] = []
        self._seq = itertools.count()
        self._thread_id = itertools.count()
        self._started = False
        # Bumped on every startup so workers of a previous run exit even if they wake late.
        self._generation = 0
        self._pool_size = threads
        self._workers: set[threading.Thread] = set()
        self._leader: threading.Thread | None = None
        # Cancelled tasks still in _queue. Kafka's executor removes a task when it is cancelled
        # (setRemoveOnCancelPolicy): a log's periodic task holds the log, and a broker that
        # creates and deletes topics must not keep every deleted log until its task's next run
        # time. Here the cancelled entry loses its function at once and the queue is rebuilt
        # without such entries once they are half of it, so cancelling costs O(1) amortized.
        self._cancelled_in_queue = 0

    # -- lifecycle -------------------------------------------------------------------------

    def startup(self) -> None:
        logger.debug("Initializing task scheduler.")
        with self._cond:
            if self._started:
                raise RuntimeError("This scheduler has already been started!")
            self._started = True
            self._generation += 1
            self._pool_size = self.threads
            self._workers = set()
            self._leader = None

    def shutdown(self) -> None:
        """Drop all queued tasks and wait for the running ones. No task starts after this returns."""
        logger.debug("Shutting down task scheduler.")
        with self._cond:
            if not self._started:
                return
            self._started = False
            for _, _, task in self._queue:
                task._finish()
            self._queue.clear()
            self._cancelled_in_queue = 0
            workers = list(self._workers)
            self._cond.notify_all()
        me = threading.current_thread()
        for worker in workers:
            # A task that shuts its own scheduler down cannot wait for itself.
            if worker is not me:
                worker.join()

    @property
    def is_started(self) -> bool:
        with self._cond:
            return self._started

    # -- scheduling ------------------------------------------------------------------------

    def schedule(self, name: str, fun: Callable[[], object], delay_ms: float = 0, period_ms: float = -1,
                 unit_ms: bool = True) -> ScheduledTask:
        """Run ``fun`` after ``delay_ms``, then every ``period_ms`` if that is > 0.

        ``unit_ms=False`` reads ``delay_ms`` and ``period_ms`` as seconds (Kafka passes a TimeUnit).
        A scheduler that is not started ignores the task, as Kafka's does, and returns a task
        that is already done.
        """
        delay_ns = max(0, _to_ns(delay_ms, unit_ms))
        period_ns = _to_ns(period_ms, unit_ms) if period_ms > 0 else -1
        logger.debug("Scheduling task %s with initial delay %d ms and period %d ms.", name,
                     delay_ns // _NANOS_PER_MS, period_ns // _NANOS_PER_MS if period_ns > 0 else -1)
        with self._cond:
            if not self._started:
                logger.info("Kafka scheduler is not running at the time task '%s' is scheduled. "
                            "The task is ignored.", name)
                return _NoOpScheduledTask(name)
            task = ScheduledTask(name, fun, _time.monotonic_ns() + delay_ns, period_ns)
            task._on_cancel = self._remove_on_cancel
            self._push(task)
            if len(self._workers) < self._pool_size:
                self._start_worker()
        return task

    def task_running(self, task: ScheduledTask) -> bool:
        """True while ``task`` waits in the queue for a (next) run (Kafka's test hook)."""
        with self._cond:
            return not task.is_cancelled() and any(queued is task for _, _, queued in self._queue)

    def resize_thread_pool(self, new_size: int) -> None:
        if new_size < 1:
            raise ValueError(f"A scheduler needs at least one thread, got {new_size}")
        with self._cond:
            self.threads = new_size
            self._pool_size = new_size
            if self._started:
                # Grow right away when work is queued; surplus workers notice the smaller pool
                # the next time they look for work and leave.
                while self._queue and len(self._workers) < self._pool_size:
                    self._start_worker()
                self._cond.notify_all()

    # -- internals (all called with self._cond held unless noted) ----------------------------

    def _remove_on_cancel(self, task: ScheduledTask) -> None:
        # Called by ScheduledTask.cancel, without the lock held.
        with self._cond:
            task.fun = _cancelled_task_fun
            if not self._queue:
                return
            # (counts a task being run as well: that only brings the next rebuild forward)
            self._cancelled_in_queue += 1
            if self._cancelled_in_queue * 2 > len(self._queue):
                self._queue = [entry for entry in self._queue if not entry[2].is_cancelled()]
                heapq.heapify(self._queue)
                self._cancelled_in_queue = 0
                # The head may have changed under the leader's timed wait.
                self._leader = None
                self._cond.notify()

    def _push(self, task: ScheduledTask) -> None:
        heapq.heappush(self._queue, (task.next_run_ns, next(self._seq), task))
        if self._queue[0][2] is task:
            # A new head invalidates the leader's timed wait. Otherwise nobody needs waking (as
            # in Java's DelayedWorkQueue): the leader takes the head in time and then wakes a
            # follower for the next; waking one on every push (10,000 logs made or loaded,
            # each scheduling its producer expiry check) cost a thread switch each.
            self._leader = None
            self._cond.notify()

    def _start_worker(self) -> None:
        worker = threading.Thread(target=self._worker_loop, args=(self._generation,),
                                  name=f"{self.thread_name_prefix}{next(self._thread_id)}", daemon=self.daemon)
        self._workers.add(worker)
        worker.start()

    def _take(self, me: threading.Thread, generation: int) -> ScheduledTask | None:
        with self._cond:
            while True:
                if not self._started or generation != self._generation or len(self._workers) > self._pool_size:
                    self._workers.discard(me)
                    if self._leader is me:
                        self._leader = None
                    self._cond.notify()
                    return None
                if not self._queue:
                    self._cond.wait()
                    continue
                run_at, _, task = self._queue[0]
                if task.is_cancelled():
                    heapq.heappop(self._queue)
                    self._cancelled_in_queue = max(0, self._cancelled_in_queue - 1)
                    continue
                delay_ns = run_at - _time.monotonic_ns()
                if delay_ns <= 0:
                    heapq.heappop(self._queue)
                    if self._leader is None and self._queue:
                        self._cond.notify()
                    return task
                if self._leader is not None:
                    self._cond.wait()
                    continue
                self._leader = me
                try:
                    self._cond.wait(delay_ns / 1e9)
                finally:
                    if self._leader is me:
                        self._leader = None

    def _worker_loop(self, generation: int) -> None:
        me = threading.current_thread()
        while True:
            task = self._take(me, generation)
            if task is None:
                return
            self._run(task, generation)
            # Not held while waiting for the next one (an idle worker may wait for hours).
            del task

    def _run(self, task: ScheduledTask, generation: int) -> None:
        # Runs without the lock: tasks are long (log retention, flushes) and may schedule more.
        try:
            logger.debug("Beginning execution of scheduled task '%s'.", task.name)
            task.fun()
        except Exception:
            logger.exception("Uncaught exception in scheduled task '%s'", task.name)
        finally:
            logger.debug("Completed execution of scheduled task '%s'.", task.name)
            with self._cond:
                # A run that outlived a shutdown (or a restart) must not requeue itself.
                if (task.is_periodic and not task.is_cancelled() and self._started
                        and generation == self._generation):
                    task.next_run_ns += task.period_ns
                    self._push(task)
                else:
                    task._finish()


class MockScheduler(Scheduler):
    """A scheduler for tests, driven by a MockTime: due tasks run on the thread that advances
    the clock (``time.sleep``) or calls ``tick``. ``shutdown`` runs every pending task once, as
    Kafka's MockScheduler does, so nothing scheduled is silently lost in a test."""

    def __init__(self, time) -> None:
        self.time = time
        self._lock = threading.Lock()
        self._tasks: list[tuple[int, int, ScheduledTask]] = []
        self._seq = itertools.count()
        add_listener = getattr(time, "add_listener", None)
        if add_listener is not None:
            add_listener(self.tick)

    def startup(self) -> None:
        pass

    def shutdown(self) -> None:
        while True:
            task = self._poll(lambda _: True)
            if task is None:
                return
            task.fun()
            task._finish()

    @property
    def is_started(self) -> bool:
        return True

    def schedule(self, name: str, fun: Callable[[], object], delay_ms: float = 0, period_ms: float = -1,
                 unit_ms: bool = True) -> ScheduledTask:
        scale = 1 if unit_ms else 1000
        next_ms = self.time.milliseconds() + int(delay_ms * scale)
        period = int(period_ms * scale) if period_ms > 0 else -1
        # The mock keeps times in ms of the MockTime wall clock; ScheduledTask fields hold them.
        task = ScheduledTask(name, fun, next_ms, period)
        with self._lock:
            heapq.heappush(self._tasks, (next_ms, next(self._seq), task))
        self.tick()
        return task

    def tick(self) -> None:
        """Run every task that is due at the current mock time, in due order."""
        now = self.time.milliseconds()
        while True:
            task = self._poll(lambda t: t.next_run_ns <= now)
            if task is None:
                return
            task.fun()
            if task.is_periodic and not task.is_cancelled():
                task.next_run_ns += task.period_ns
                with self._lock:
                    heapq.heappush(self._tasks, (task.next_run_ns, next(self._seq), task))
            else:
                task._finish()

    def clear(self) -> None:
        with self._lock:
            self._tasks.clear()

    def task_running(self, task: ScheduledTask) -> bool:
        with self._lock:
            return not task.is_cancelled() and any(queued is task for _, _, queued in self._tasks)

    def _poll(self, predicate: Callable[[ScheduledTask], bool]) -> ScheduledTask | None:
        with self._lock:
            while self._tasks:
                task = self._tasks[0][2]
                if task.is_cancelled():
                    heapq.heappop(self._tasks)
                    continue
                if predicate(task):
                    heapq.heappop(self._tasks)
                    return task
                return None
            return None
