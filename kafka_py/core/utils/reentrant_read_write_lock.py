"""Java's java.util.concurrent.locks.ReentrantReadWriteLock, as Kafka 2.8.2's Partition
and TransactionStateManager use it.

CoreUtils.inReadLock / inWriteLock are ``with lock.read():`` / ``with lock.write():``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional


class ReentrantReadWriteLock:
    """Java's ReentrantReadWriteLock, reduced to what Partition and TransactionStateManager need.

    Shared holders may re-enter; the exclusive holder may take either mode again. Waiting
    writers block new (not re-entering) readers so leadership changes are not starved by a
    stream of appends. Upgrading shared to exclusive would deadlock, as in Java, so it raises.
    """

    __slots__ = ("_lock", "_cond", "_readers", "_writer", "_writer_holds", "_waiting_writers", "_waiting",
                 "_read_held", "_write_held")

    def __init__(self) -> None:
        # Entered as the plain lock (the Condition's __enter__/__exit__ are Python calls
        # wrapping it) on every produce and fetch; waited on through the Condition.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._readers: dict[int, int] = {}
        self._writer: Optional[int] = None
        self._writer_holds = 0
        self._waiting_writers = 0
        # Threads inside _cond.wait(): a release notifies only when there are some, as the
        # Condition's notify_all is three Python calls even with nobody to wake, and the last
        # reader of every produce and fetch releases.
        self._waiting = 0
        # The context managers hold no state of their own: one of each serves every caller.
        self._read_held = _Held(self.acquire_read, self.release_read)
        self._write_held = _Held(self.acquire_write, self.release_write)

    def acquire_read(self) -> None:
        me = threading.get_ident()
        with self._lock:
            held = self._readers.get(me)
            if held is not None or self._writer == me:
                self._readers[me] = (held or 0) + 1
                return
            while self._writer is not None or self._waiting_writers:
                self._wait()
            self._readers[me] = 1

    def release_read(self) -> None:
        me = threading.get_ident()
        with self._lock:
            held = self._readers[me] - 1
            if held:
                self._readers[me] = held
            else:
                del self._readers[me]
                if not self._readers and self._waiting:
                    self._cond.notify_all()

    def acquire_write(self) -> None:
        me = threading.get_ident()
        with self._lock:
            if self._writer == me:
                self._writer_holds += 1
                return
            if me in self._readers:
                raise RuntimeError("cannot upgrade a read lock to a write lock")
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers:
                    self._wait()
            finally:
                self._waiting_writers -= 1
            self._writer = me
            self._writer_holds = 1

    def is_write_locked_by_current_thread(self) -> bool:
        with self._lock:
            return self._writer == threading.get_ident()

    def release_write(self) -> None:
        with self._lock:
            self._writer_holds -= 1
            if self._writer_holds == 0:
                self._writer = None
                if self._waiting:
                    self._cond.notify_all()

    def _wait(self) -> None:
        # called with self._lock held, as Condition.wait requires
        self._waiting += 1
        try:
            self._cond.wait()
        finally:
            self._waiting -= 1

    def read(self) -> "_Held":
        return self._read_held

    def write(self) -> "_Held":
        return self._write_held


class _Held:
    __slots__ = ("_acquire", "_release")

    def __init__(self, acquire: Callable[[], None], release: Callable[[], None]) -> None:
        self._acquire = acquire
        self._release = release

    def __enter__(self) -> None:
        self._acquire()

    def __exit__(self, *exc: Any) -> None:
        self._release()
