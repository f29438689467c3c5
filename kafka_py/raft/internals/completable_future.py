"""The part of java.util.concurrent.CompletableFuture that Kafka's raft code relies on (no Kafka
counterpart in Kafka's own source).

A value or an exception set once, by whichever thread completes it first, and callbacks
that run on the completing thread (or at once, on the registering thread, if the future is
already done).

``complete`` and ``complete_exceptionally`` return False when the future was already done,
as Java's do; the raft client depends on that when a request's completion races its
expiration.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable, Generic, Optional, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")

_PENDING = object()


class CompletableFuture(Generic[T]):
    def __init__(self) -> None:
        self._lock = threading.Condition(threading.Lock())
        self._value: object = _PENDING
        self._exception: Optional[BaseException] = None
        self._callbacks: list[Callable[[Optional[T], Optional[BaseException]], None]] = []

    @staticmethod
    def completed_future(value: T) -> "CompletableFuture[T]":
        future: CompletableFuture[T] = CompletableFuture()
        future.complete(value)
        return future

    def complete(self, value: T) -> bool:
        return self._finish(value, None)

    def complete_exceptionally(self, exception: BaseException) -> bool:
        return self._finish(None, exception)

    def _finish(self, value: Optional[T], exception: Optional[BaseException]) -> bool:
        with self._lock:
            if self._value is not _PENDING:
                return False
            self._value = value
            self._exception = exception
            callbacks, self._callbacks = self._callbacks, []
            self._lock.notify_all()
        for callback in callbacks:
            self._run(callback)
        return True

    def _run(self, callback: Callable[[Optional[T], Optional[BaseException]], None]) -> None:
        callback(None if self._exception is not None else self._value, self._exception)  # type: ignore[arg-type]

    def when_complete(self, callback: Callable[[Optional[T], Optional[BaseException]], None]) -> None:
        """Call ``callback(value, exception)`` once this future is done (exactly one is not None
        unless the value itself is None)."""
        with self._lock:
            if self._value is _PENDING:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def is_done(self) -> bool:
        with self._lock:
            return self._value is not _PENDING

    def is_completed_exceptionally(self) -> bool:
        with self._lock:
            return self._value is not _PENDING and self._exception is not None

    def get(self, timeout_s: Optional[float] = None) -> T:
        """The value (raising the exception instead, if it failed); waits up to ``timeout_s``."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._value is not _PENDING, timeout_s):
                raise TimeoutError("Future was not completed in time")
            if self._exception is not None:
                raise self._exception
            return self._value  # type: ignore[return-value]

    def exception(self) -> Optional[BaseException]:
        with self._lock:
            return self._exception

    def __repr__(self) -> str:
        with self._lock:
            if self._value is _PENDING:
                return "CompletableFuture(pending)"
            if self._exception is not None:
                return f"CompletableFuture(failed: {self._exception!r})"
            return f"CompletableFuture(done: {self._value!r})"
