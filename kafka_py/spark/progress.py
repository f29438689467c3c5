"""A console progress bar for Spark jobs, drawn from the SparkContext's status tracker.

No Kafka counterpart. Spark's own ConsoleProgressBar only shows when the root log level is
WARN or higher, and mixes with log lines; the jobs of kafka_py/spark draw this one instead
(``--progress bar``, the default) or leave the display to Spark (``--progress spark``).

On a terminal one line is redrawn in place::

    [export] stage 4: [##############------------]  52/100 tasks (2 running)  00:07

Elsewhere (a log file, CI) a line is written when a stage starts and at most every
``quiet_interval`` seconds while it runs, so logs stay readable. Either way a last line says
how the job ended and how long it took.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Optional, TextIO

logger = logging.getLogger(__name__)

BAR_WIDTH = 28


def render(label: str, stage_id: int, done: int, total: int, running: int, failed: int, elapsed: float) -> str:
    """One progress line."""
    filled = int(BAR_WIDTH * done / total) if total else 0
    bar = "#" * filled + "-" * (BAR_WIDTH - filled)
    minutes, seconds = divmod(int(elapsed), 60)
    extra = f", {failed} failed" if failed else ""
    return (f"[{label}] stage {stage_id}: [{bar}] {done:>4}/{total} tasks ({running} running{extra})"
            f"  {minutes:02d}:{seconds:02d}")


class StageProgressBar:
    """Polls ``spark_context.statusTracker()`` on a daemon thread while a job runs.

    Use as a context manager around the actions of a job.
    """

    def __init__(self, spark_context, label: str, stream: Optional[TextIO] = None,
                 interval: float = 0.25, quiet_interval: float = 10.0) -> None:
        self.tracker = spark_context.statusTracker()
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.quiet_interval = quiet_interval
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.lines_written = 0
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._started = 0.0
        self._last_line = ""
        self._last_write = 0.0
        self._last_stage: Optional[int] = None

    def __enter__(self) -> "StageProgressBar":
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"progress-{self.label}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.interactive and self._last_line:
            self.stream.write("\r" + " " * len(self._last_line) + "\r")
        minutes, seconds = divmod(int(time.monotonic() - self._started), 60)
        outcome = "failed" if exc_type is not None else "done"
        self.stream.write(f"[{self.label}] {outcome} in {minutes:02d}:{seconds:02d}\n")
        self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - the display must never fail the job
                logger.debug("progress poll failed", exc_info=True)

    def poll(self) -> Optional[str]:
        """Draw the current state; returns the line drawn (None when nothing runs)."""
        stages = []
        for stage_id in self.tracker.getActiveStageIds():
            info = self.tracker.getStageInfo(stage_id)
            if info is not None:
                stages.append(info)
        if not stages:
            return None
        # Several stages may run at once; show the one furthest behind.
        info = min(stages, key=lambda s: (s.numCompletedTasks / s.numTasks) if s.numTasks else 1.0)
        line = render(self.label, info.stageId, info.numCompletedTasks, info.numTasks,
                      info.numActiveTasks, info.numFailedTasks, time.monotonic() - self._started)
        now = time.monotonic()
        if self.interactive:
            pad = max(0, len(self._last_line) - len(line))
            self.stream.write("\r" + line + " " * pad)
            self.stream.flush()
        elif info.stageId != self._last_stage or now - self._last_write >= self.quiet_interval:
            self.stream.write(line + "\n")
            self.stream.flush()
            self._last_write = now
        else:
            return line
        self._last_stage = info.stageId
        self._last_line = line
        self.lines_written += 1
        return line
