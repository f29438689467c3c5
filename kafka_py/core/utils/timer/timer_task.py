"""Port of core/src/main/scala/kafka/utils/timer/TimerTask.scala.

A ``TimerTask`` is something the ``SystemTimer`` runs once its delay has passed. The task
remembers the one ``TimerTaskEntry`` that currently holds it in a timing-wheel bucket, so that
``cancel()`` can unlink it and so that a stale entry (one the task has since been re-added
under) knows it is cancelled.
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_py.core.utils.timer.timer_task_list import TimerTaskEntry


class TimerTask(ABC):
    """Subclasses set ``delay_ms`` (through ``__init__``) and implement ``run()``."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        # Guards the entry pointer only; lock order is task -> bucket list -> entry.
        self._task_lock = threading.Lock()
        self._timer_task_entry: TimerTaskEntry | None = None

    @abstractmethod
    def run(self) -> None:
        """Called on the timer's executor thread once the delay has expired."""

    def cancel(self) -> None:
        """Take the task out of the timer; it will not run unless added again."""
        with self._task_lock:
            entry = self._timer_task_entry
            # Detach before unlinking: a flush may be re-inserting this entry right now, and
            # TimerTaskList.add drops an entry that is already detached once it is linked.
            self._timer_task_entry = None
            if entry is not None:
                entry.remove()

    def set_timer_task_entry(self, entry: "TimerTaskEntry") -> None:
        with self._task_lock:
            # A task lives in at most one bucket: adding it again drops the older placement.
            old = self._timer_task_entry
            self._timer_task_entry = entry
            if old is not None and old is not entry:
                old.remove()

    def get_timer_task_entry(self) -> "TimerTaskEntry | None":
        # Read without the lock: a reference read is atomic, and callers only compare identity.
        return self._timer_task_entry
