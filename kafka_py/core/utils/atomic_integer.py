"""Java's java.util.concurrent.atomic.AtomicInteger, reduced to what the timer's buckets
(TimerTaskList's taskCounter), the purgatory (estimatedTotalOperations) and LogManager's
log loading (the logs loaded and recovered in each directory) use.

A plain ``+=`` on a shared int races between threads; every update here holds a lock.
``get`` reads without it: one attribute load is atomic in CPython.
"""
from __future__ import annotations

import threading


class AtomicInteger:
    __slots__ = ("_lock", "_value")

    def __init__(self, value: int = 0) -> None:
        self._lock = threading.Lock()
        self._value = value

    def increment_and_get(self) -> int:
        with self._lock:
            self._value += 1
            return self._value

    def add_and_get(self, delta: int) -> int:
        with self._lock:
            self._value += delta
            return self._value

    def decrement_and_get(self) -> int:
        with self._lock:
            self._value -= 1
            return self._value

    def get_and_set(self, value: int) -> int:
        with self._lock:
            previous, self._value = self._value, value
            return previous

    def get(self) -> int:
        return self._value
