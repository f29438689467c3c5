"""Port of core/src/main/scala/kafka/server/LogDirFailureChannel.scala (Kafka 2.8.2).

Every class that does disk I/O under a log dir (Log, the checkpoint files, the LogManager,
the LogCleaner) reports an I/O error there with ``maybe_add_offline_log_dir``. The first
report of a dir puts it on a queue; the ReplicaManager's LogDirFailureHandler thread takes
it off with ``take_next_offline_log_dir`` and takes the dir out of service (its partitions
go offline and answer KAFKA_STORAGE_ERROR, the LogManager drops its logs and checkpoints,
the controller is told through ZooKeeper, and the broker halts once no dir is left). A dir
stays offline until the broker restarts.

Kafka's queue is a blocking ArrayBlockingQueue whose ``take`` the handler thread blocks in
until interrupted at shutdown. Python threads cannot be interrupted, so
``take_next_offline_log_dir`` takes a timeout and ``wakeup`` makes one waiting (or the
next) call return None, which is what the handler's shutdown uses.
"""
from __future__ import annotations

import logging
import os
import threading
from collections import deque
from typing import Optional

logger = logging.getLogger(__name__)


class LogDirFailureChannel:
    """The broker's one channel for offline log dirs (thread-safe)."""

    def __init__(self, log_dir_num: int) -> None:
        # Kafka bounds its queue by the number of dirs; each dir is queued at most once, so
        # the deque can never grow past that either.
        self._log_dir_num = log_dir_num
        self._lock = threading.Condition(threading.Lock())
        self._offline_log_dirs: set[str] = set()
        self._offline_log_dir_queue: deque[str] = deque()
        self._pending_wakeups = 0

    def maybe_add_offline_log_dir(self, log_dir: str, msg: str, e: BaseException) -> None:
        """Log the error; if ``log_dir`` is not offline yet, mark it and queue it for the handler."""
        logger.error("%s", msg, exc_info=e)
        log_dir = os.path.abspath(log_dir)
        with self._lock:
            if log_dir in self._offline_log_dirs:
                return
            self._offline_log_dirs.add(log_dir)
            self._offline_log_dir_queue.append(log_dir)
            self._lock.notify_all()

    def has_offline_log_dir(self, log_dir: str) -> bool:
        with self._lock:
            return os.path.abspath(log_dir) in self._offline_log_dirs

    @property
    def offline_log_dirs(self) -> list[str]:
        """Every dir reported so far, in no particular order."""
        with self._lock:
            return list(self._offline_log_dirs)

    def take_next_offline_log_dir(self, timeout_ms: Optional[float] = None) -> Optional[str]:
        """The next newly offline dir, waiting up to ``timeout_ms`` (None: until one comes or
        ``wakeup``); None when the wait ended without one."""
        timeout_s = None if timeout_ms is None else max(0.0, timeout_ms / 1000.0)
        with self._lock:
            self._lock.wait_for(lambda: self._offline_log_dir_queue or self._pending_wakeups > 0, timeout_s)
            if self._offline_log_dir_queue:
                return self._offline_log_dir_queue.popleft()
            if self._pending_wakeups > 0:
                self._pending_wakeups -= 1
            return None

    def wakeup(self) -> None:
        """Make one ``take_next_offline_log_dir`` return (None unless a dir is queued)."""
        with self._lock:
            self._pending_wakeups += 1
            self._lock.notify_all()


__all__ = ["LogDirFailureChannel"]
