"""Port of metadata/src/main/java/org/apache/kafka/timeline/Snapshot.java.

One snapshot: its epoch, the delta it holds for each collection that changed while it was
the newest snapshot, and its place in the registry's list of snapshots (a circular
doubly-linked list whose head is a sentinel, so unlinking needs no special cases).
"""
from __future__ import annotations

from kafka_py.metadata.timeline.delta import Delta
from kafka_py.metadata.timeline.revertable import Revertable


class Snapshot:
    __slots__ = ("epoch", "_deltas", "prev", "next")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        # Keyed by the owner's identity: collections compare by content (a
        # TimelineHashMap equals any mapping with the same items), which is not what
        # tells their deltas apart. The owner is kept in the value to keep the id valid.
        self._deltas: dict[int, tuple[Revertable, Delta]] = {}
        self.prev: Snapshot = self
        self.next: Snapshot = self

    def get_delta(self, owner: Revertable) -> Delta | None:
        entry = self._deltas.get(id(owner))
        return None if entry is None else entry[1]

    def set_delta(self, owner: Revertable, delta: Delta) -> None:
        self._deltas[id(owner)] = (owner, delta)

    def handle_revert(self) -> None:
        for owner, delta in list(self._deltas.values()):
            owner.execute_revert(self.epoch, delta)

    def merge_from(self, source: Snapshot) -> None:
        """Take over the deltas of ``source``, the next snapshot, which is being deleted."""
        for key, (owner, delta) in source._deltas.items():
            mine = self._deltas.get(key)
            if mine is None:
                # Nothing changed for this owner while we were the newest snapshot, so
                # its state at our epoch is its state at the source's: share the delta.
                self._deltas[key] = (owner, delta)
            else:
                mine[1].merge_from(self.epoch, delta)
        # The source may now share deltas with us; erasing it keeps anyone from using it.
        source.erase()

    def append_next(self, new_next: Snapshot) -> None:
        new_next.prev = self
        new_next.next = self.next
        self.next.prev = new_next
        self.next = new_next

    def erase(self) -> None:
        self._deltas = {}
        self.next.prev = self.prev
        self.prev.next = self.next
        self.prev = self
        self.next = self

    def __repr__(self) -> str:
        return f"Snapshot(epoch={self.epoch})"
