"""Port of core/src/main/scala/kafka/utils/DelayedItem.scala: something that is due a given
number of milliseconds after it was made (a fetcher's partition backing off after an error)."""
from __future__ import annotations

from kafka_py.clients.common.utils.time import Time


class DelayedItem:
    __slots__ = ("delay_ms", "due_ms", "_time")

    def __init__(self, delay_ms: int, time: Time = Time.SYSTEM) -> None:
        self.delay_ms = delay_ms
        self._time = time
        self.due_ms = time.milliseconds() + delay_ms

    def get_delay_ms(self) -> int:
        """Milliseconds until due; zero or less once it is."""
        return self.due_ms - self._time.milliseconds()

    def __repr__(self) -> str:
        return f"DelayedItem(delay_ms={self.delay_ms}, due_ms={self.due_ms})"
