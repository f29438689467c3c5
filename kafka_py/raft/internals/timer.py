"""Port of clients/src/main/java/org/apache/kafka/common/utils/Timer.java (Kafka 2.8.2),
the timer Kafka's ``Time.timer(ms)`` returns, which the raft epoch states use for their
election and fetch timeouts.

A Timer caches the last time it was updated with; it never moves backwards, and it only
sees time passing when its owner calls ``update``. The raft client passes the time read
once at the top of each poll, so every state in one poll agrees on "now". Deadlines are
capped at Java's Long.MAX_VALUE, which the client uses to mean "never".
"""
from __future__ import annotations

import logging

from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class Timer:
    def __init__(self, time: Time, timeout_ms: int) -> None:
        self._time = time
        self._current_time_ms = time.milliseconds()
        self._start_ms = self._current_time_ms
        self._deadline_ms = self._current_time_ms
        self.reset(timeout_ms)

    def is_expired(self) -> bool:
        return self._current_time_ms >= self._deadline_ms

    def not_expired(self) -> bool:
        return not self.is_expired()

    def update(self, current_time_ms: int | None = None) -> None:
        if current_time_ms is None:
            current_time_ms = self._time.milliseconds()
        self._current_time_ms = max(current_time_ms, self._current_time_ms)

    def remaining_ms(self) -> int:
        return max(0, self._deadline_ms - self._current_time_ms)

    def current_time_ms(self) -> int:
        return self._current_time_ms

    def elapsed_ms(self) -> int:
        return self._current_time_ms - self._start_ms

    def timeout_ms(self) -> int:
        return self._deadline_ms - self._start_ms

    def reset(self, timeout_ms: int) -> None:
        if timeout_ms < 0:
            raise ValueError("Invalid negative timeout " + str(timeout_ms))
        self.update()
        self._start_ms = self._current_time_ms
        # Java saturates instead of overflowing; a timeout of Long.MAX_VALUE means never.
        self._deadline_ms = min(LONG_MAX, self._current_time_ms + timeout_ms)

    def reset_deadline(self, deadline_ms: int) -> None:
        if deadline_ms < 0:
            raise ValueError("Invalid negative deadline " + str(deadline_ms))
        self.update()
        self._start_ms = self._current_time_ms
        self._deadline_ms = deadline_ms
