"""Port of core/src/main/scala/kafka/utils/timer/TimingWheel.scala.

A hierarchical timing wheel. One wheel has ``wheel_size`` buckets of ``tick_ms`` each and so
covers ``interval = tick_ms * wheel_size`` milliseconds from its ``current_time``. A task due
within that span goes into the bucket for its tick; a task due later goes to an overflow wheel
whose tick is this wheel's whole interval (created on first need), and so on upwards. With
tick 1 ms and size 20 the levels cover 20 ms, 400 ms, 8 s, 160 s, ...

Only non-empty buckets sit in the shared ``DelayQueue``, keyed by expiration, so the timer
thread wakes once per due bucket rather than once per tick. When an overflow bucket comes due
its tasks are re-added and fall into finer wheels (or run, if their time has come): insert and
delete are O(1) and no thread ticks through empty time.

``current_time`` is always a multiple of ``tick_ms``; every bucket's span lies at or after it.
Not thread-safe by itself: ``SystemTimer`` serialises ``add`` against ``advance_clock``.
"""
from __future__ import annotations

import threading

from kafka_py.core.utils.atomic_integer import AtomicInteger
from kafka_py.core.utils.timer.timer_task_list import DelayQueue, TimerTaskEntry, TimerTaskList


class TimingWheel:
    def __init__(self, tick_ms: int, wheel_size: int, start_ms: int, task_counter: AtomicInteger,
                 queue: DelayQueue) -> None:
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.interval = tick_ms * wheel_size
        self._task_counter = task_counter
        self._queue = queue
        self._buckets = [TimerTaskList(task_counter) for _ in range(wheel_size)]
        self.current_time = start_ms - (start_ms % tick_ms)
        self._overflow_wheel: TimingWheel | None = None
        self._overflow_lock = threading.Lock()

    @property
    def overflow_wheel(self) -> "TimingWheel | None":
        return self._overflow_wheel

    def _add_overflow_wheel(self) -> None:
        # Double-checked: concurrent adders may race to create the next level.
        with self._overflow_lock:
            if self._overflow_wheel is None:
                self._overflow_wheel = TimingWheel(
                    tick_ms=self.interval,
                    wheel_size=self.wheel_size,
                    start_ms=self.current_time,
                    task_counter=self._task_counter,
                    queue=self._queue,
                )

    def add(self, entry: TimerTaskEntry) -> bool:
        """Place ``entry`` in a bucket; False when it is cancelled or already due (the caller
        then runs or drops it)."""
        expiration = entry.expiration_ms
        if entry.cancelled:
            return False
        if expiration < self.current_time + self.tick_ms:
            return False
        if expiration < self.current_time + self.interval:
            virtual_id = expiration // self.tick_ms
            bucket = self._buckets[virtual_id % self.wheel_size]
            bucket.add(entry)
            # The expiration only changes when the wheel has moved on and this bucket is being
            # reused for a later round; that is exactly when it must be queued again, and
            # queuing it only then keeps it in the DelayQueue at most once.
            if bucket.set_expiration(virtual_id * self.tick_ms):
                self._queue.offer(bucket)
            return True
        if self._overflow_wheel is None:
            self._add_overflow_wheel()
        return self._overflow_wheel.add(entry)

    def advance_clock(self, time_ms: int) -> None:
        if time_ms >= self.current_time + self.tick_ms:
            self.current_time = time_ms - (time_ms % self.tick_ms)
            if self._overflow_wheel is not None:
                self._overflow_wheel.advance_clock(self.current_time)
