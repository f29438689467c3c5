"""Port of metadata/src/main/java/org/apache/kafka/controller/ControllerPurgatory.java.

The operations that have run but wait for the metadata log to commit the offset their
records were written at. Offsets are added in increasing order (the controller writes
in order), so a sorted list of offsets is all the index needed.
"""
from __future__ import annotations

from kafka_py.metadata.controller.deferred_event import DeferredEvent


class ControllerPurgatory:
    def __init__(self) -> None:
        self._offsets: list[int] = []  # ascending; the keys of _pending
        self._pending: dict[int, list[DeferredEvent]] = {}

    def complete_up_to(self, offset: int) -> None:
        """Complete every event waiting for an offset at or below ``offset``."""
        done = 0
        for key in self._offsets:
            if key > offset:
                break
            for event in self._pending.pop(key):
                event.complete(None)
            done += 1
        del self._offsets[:done]

    def fail_all(self, exception: BaseException) -> None:
        offsets, pending = self._offsets, self._pending
        self._offsets, self._pending = [], {}
        for key in offsets:
            for event in pending[key]:
                event.complete(exception)

    def add(self, offset: int, event: DeferredEvent) -> None:
        if self._offsets:
            last = self._offsets[-1]
            if offset < last:
                raise ValueError(f"There is already a purgatory event with offset {last}. We "
                                 f"should not add one with an offset of {offset} which is "
                                 f"lower than that.")
        events = self._pending.get(offset)
        if events is None:
            self._pending[offset] = events = []
            self._offsets.append(offset)
        events.append(event)

    def highest_pending_offset(self) -> int | None:
        return self._offsets[-1] if self._offsets else None

    def is_empty(self) -> bool:
        return not self._offsets
