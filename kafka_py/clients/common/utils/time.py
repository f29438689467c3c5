"""Port of clients/src/main/java/org/apache/kafka/common/utils/Time.java, SystemTime.java and
MockTime.java (the core test ``kafka.utils.MockTime`` flavour, which also owns a MockScheduler).

Everything in the broker that asks "what time is it" or "wait a while" goes through a ``Time``
so tests can drive the clock by hand instead of sleeping.
"""
from __future__ import annotations

import logging
import threading
import time as _time
from typing import Callable

logger = logging.getLogger(__name__)

_NANOS_PER_MS = 1_000_000


class Time:
    """A source of wall-clock and monotonic time. ``Time.SYSTEM`` is the real clock."""

    SYSTEM: "Time"

    def milliseconds(self) -> int:
        """Wall-clock time in ms since the epoch (what Kafka stores in timestamps)."""
        return _time.time_ns() // _NANOS_PER_MS

    def nanoseconds(self) -> int:
        """A monotonic clock in ns, only meaningful for measuring intervals."""
        return _time.monotonic_ns()

    def hi_res_milliseconds(self) -> int:
        """The monotonic clock in ms (Kafka's ``hiResClockMs``)."""
        return self.nanoseconds() // _NANOS_PER_MS

    def sleep(self, ms: float) -> None:
        if ms > 0:
            _time.sleep(ms / 1000.0)

    def wait_for(self, condition: threading.Condition, predicate: Callable[[], bool],
                 deadline_ms: int) -> bool:
        """Wait on ``condition`` (held by the caller) until ``predicate()`` or the wall-clock
        ``deadline_ms`` passes; returns the predicate's last value (Kafka's ``waitObject``)."""
        while not predicate():
            remaining = deadline_ms - self.milliseconds()
            if remaining <= 0:
                return False
            condition.wait(remaining / 1000.0)
        return True


class SystemTime(Time):
    """The real clock; ``Time.SYSTEM`` is the one instance anybody needs."""


Time.SYSTEM = SystemTime()


class MockTime(Time):
    """A manual clock for tests: time only moves on ``sleep``/``advance``.

    ``sleep`` never blocks; it moves both clocks forward and then tells listeners (the
    MockScheduler in particular, so tasks that came due run on the sleeping thread, as in
    Kafka's core MockTime).
    """

    def __init__(self, current_time_ms: int | None = None, current_hi_res_time_ns: int | None = None,
                 auto_tick_ms: int = 0) -> None:
        self._lock = threading.Lock()
        self._time_ms = _time.time_ns() // _NANOS_PER_MS if current_time_ms is None else current_time_ms
        self._hi_res_ns = _time.monotonic_ns() if current_hi_res_time_ns is None else current_hi_res_time_ns
        # Each read of the clock advances it by this much (Kafka's autoTickMs), useful for code
        # that loops until some time has passed.
        self._auto_tick_ms = auto_tick_ms
        self._listeners: list[Callable[[], None]] = []
        self._scheduler = None
        self._scheduler_lock = threading.Lock()
        self._notifying = threading.local()

    def milliseconds(self) -> int:
        self._maybe_auto_tick()
        with self._lock:
            return self._time_ms

    def nanoseconds(self) -> int:
        self._maybe_auto_tick()
        with self._lock:
            return self._hi_res_ns

    def hi_res_milliseconds(self) -> int:
        return self.nanoseconds() // _NANOS_PER_MS

    def sleep(self, ms: float) -> None:
        self.advance(int(ms))

    def advance(self, ms: int) -> None:
        with self._lock:
            self._time_ms += ms
            self._hi_res_ns += ms * _NANOS_PER_MS
            listeners = list(self._listeners)
        self._notify(listeners)

    def set_current_time_ms(self, ms: int) -> None:
        """Jump the wall clock (never backwards, as in Kafka's MockTime)."""
        with self._lock:
            if ms < self._time_ms:
                raise ValueError(f"Setting the time to {ms} while current time {self._time_ms} is newer; "
                                 "this is not allowed")
            delta = ms - self._time_ms
            self._time_ms = ms
            self._hi_res_ns += delta * _NANOS_PER_MS
            listeners = list(self._listeners)
        self._notify(listeners)

    def _notify(self, listeners: list[Callable[[], None]]) -> None:
        # Listeners run outside the clock lock because a scheduled task may read the clock. A
        # listener reading an auto-ticking clock advances it again; that inner advance must not
        # re-enter the listeners, or the scheduler's tick would recurse without end.
        if getattr(self._notifying, "active", False):
            return
        self._notifying.active = True
        try:
            for listener in listeners:
                listener()
        finally:
            self._notifying.active = False

    def add_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.remove(listener)

    def wait_for(self, condition: threading.Condition, predicate: Callable[[], bool],
                 deadline_ms: int) -> bool:
        # Only another thread moving the mock clock (or satisfying the predicate and notifying
        # the condition) can end the wait, so every clock move wakes the waiter to re-check.
        def wake() -> None:
            with condition:
                condition.notify_all()

        self.add_listener(wake)
        try:
            while self.milliseconds() < deadline_ms and not predicate():
                condition.wait()
            return predicate()
        finally:
            self.remove_listener(wake)

    @property
    def scheduler(self):
        """A MockScheduler driven by this clock, created on first use."""
        with self._scheduler_lock:
            if self._scheduler is None:
                from kafka_py.core.utils.kafka_scheduler import MockScheduler

                self._scheduler = MockScheduler(self)
            return self._scheduler

    def _maybe_auto_tick(self) -> None:
        if self._auto_tick_ms > 0:
            self.advance(self._auto_tick_ms)
