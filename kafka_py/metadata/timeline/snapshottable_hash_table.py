"""Port of metadata/src/main/java/org/apache/kafka/timeline/SnapshottableHashTable.java.

A table of elements that can be read as of any live snapshot and reverted to one. The
current state is the table itself. Each element carries the epoch it was stored in (its
start epoch: the registry's latest epoch + 1 at the time), so a read at epoch E can tell
whether the current element already existed at E. When a change overwrites or removes
an element that existed at the newest snapshot, the old element is copied into that
snapshot's tier (a HashTier: the table's size at the snapshot and the elements changed
since); a tier is created on the first change after a snapshot even when nothing is
copied, so that it records the size.

Reading key K at epoch E: the current element if its start epoch is <= E; otherwise the
first tier from E's snapshot onwards that holds K decides (its element if it existed at
E, else K was absent at E); if no tier holds K, K was absent at E.

Reverting to epoch E: drop every current element started after E, and put back the
elements of E's tier (which has absorbed the tiers of the later snapshots as they were
deleted).

Kafka walks its own hash table slot by slot so that iteration can run alongside
changes; here an iteration copies what it will return first, which gives the same
guarantee (changes made during the walk do not disturb it).
"""
from __future__ import annotations

from itertools import chain
from typing import Hashable, Iterator

from kafka_py.metadata.timeline.base_hash_table import BaseHashTable, T
from kafka_py.metadata.timeline.delta import Delta
from kafka_py.metadata.timeline.revertable import Revertable
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry


class HashTier(Delta):
    """A snapshot's record of one table: its size then, and the elements changed since."""

    __slots__ = ("size", "delta_table")

    def __init__(self, size: int) -> None:
        self.size = size
        self.delta_table: BaseHashTable | None = None

    def merge_from(self, destination_epoch: int, source: Delta) -> None:
        assert isinstance(source, HashTier)
        if source.delta_table is None:
            return
        for element in source.delta_table.base_elements():
            # Only elements that existed at our epoch matter to reads at our epoch. An
            # element we already hold for the same key cannot be among them: it was
            # overwritten before the source snapshot was taken.
            if element.start_epoch <= destination_epoch:
                if self.delta_table is None:
                    self.delta_table = BaseHashTable(1)
                self.delta_table.base_add_or_replace(element)


class SnapshottableHashTable(BaseHashTable[T], Revertable):
    def __init__(self, snapshot_registry: SnapshotRegistry, expected_size: int = 0) -> None:
        super().__init__(expected_size)
        self.snapshot_registry = snapshot_registry
        snapshot_registry.register(self)

    def _tier(self, snapshot) -> HashTier | None:
        tier = snapshot.get_delta(self)
        assert tier is None or isinstance(tier, HashTier)
        return tier

    def size(self, epoch: int = LATEST_EPOCH) -> int:
        return self.snapshottable_size(epoch)

    def __len__(self) -> int:
        return self.base_size()

    def is_empty(self, epoch: int = LATEST_EPOCH) -> bool:
        return self.snapshottable_size(epoch) == 0

    def snapshottable_size(self, epoch: int) -> int:
        if epoch == LATEST_EPOCH:
            return self.base_size()
        for snapshot in self.snapshot_registry.iterator(epoch):
            tier = self._tier(snapshot)
            if tier is not None:
                return tier.size
        return self.base_size()

    def snapshottable_get(self, key: Hashable, epoch: int) -> T | None:
        result = self.base_get(key)
        if result is not None and result.start_epoch <= epoch:
            return result
        if epoch == LATEST_EPOCH:
            return None
        for snapshot in self.snapshot_registry.iterator(epoch):
            tier = self._tier(snapshot)
            if tier is not None and tier.delta_table is not None:
                result = tier.delta_table.base_get(key)
                if result is not None:
                    return result if result.start_epoch <= epoch else None
        return None

    def snapshottable_add_unless_present(self, element: T) -> bool:
        if self.base_get(element.key) is not None:
            return False
        element.start_epoch = self.snapshot_registry.latest_epoch() + 1
        prev_size = self.base_size()
        self.base_add_or_replace(element)
        self._update_tier_data(None, prev_size)
        return True

    def snapshottable_add_or_replace(self, element: T) -> T | None:
        element.start_epoch = self.snapshot_registry.latest_epoch() + 1
        prev_size = self.base_size()
        prev = self.base_add_or_replace(element)
        self._update_tier_data(prev, prev_size)
        return prev

    def snapshottable_remove(self, key: Hashable) -> T | None:
        prev = self.base_remove(key)
        if prev is not None:
            self._update_tier_data(prev, self.base_size() + 1)
        return prev

    def _update_tier_data(self, prev: T | None, prev_size: int) -> None:
        """Record a change in the newest snapshot: its tier (with the size before the
        change) and, if the changed element existed at that snapshot, the element."""
        snapshot = self.snapshot_registry.newest_snapshot()
        if snapshot is None:
            return
        if prev is not None and prev.start_epoch > snapshot.epoch:
            return  # the element came after the snapshot; the snapshot never saw it
        tier = self._tier(snapshot)
        if tier is None:
            tier = HashTier(prev_size)
            snapshot.set_delta(self, tier)
        if prev is not None:
            if tier.delta_table is None:
                tier.delta_table = BaseHashTable(1)
            tier.delta_table.base_add_or_replace(prev)

    def snapshottable_iterator(self, epoch: int) -> Iterator[T]:
        """The elements present at ``epoch`` (LATEST_EPOCH: now), copied before the walk."""
        if epoch == LATEST_EPOCH:
            return iter(self.base_elements())
        snapshots = list(self.snapshot_registry.iterator(epoch))
        tiers = [self._tier(s) for s in snapshots]
        keys = chain(self.base_keys(),
                     *(t.delta_table.base_keys() for t in tiers
                       if t is not None and t.delta_table is not None))
        found: dict[Hashable, T] = {}
        for key in keys:
            if key not in found:
                element = self.snapshottable_get(key, epoch)
                if element is not None:
                    found[key] = element
        return iter(list(found.values()))

    def snapshottable_to_debug_string(self) -> str:
        tiers = []
        for snapshot in self.snapshot_registry.iterator():
            tier = self._tier(snapshot)
            if tier is None:
                tiers.append(f"epoch {snapshot.epoch}: null")
            else:
                table = "null" if tier.delta_table is None else tier.delta_table.base_to_debug_string()
                tiers.append(f"epoch {snapshot.epoch}: HashTier{{size={tier.size}, "
                             f"deltaTable={table}}}")
        return (f"SnapshottableHashTable{{top tier: {self.base_to_debug_string()}, "
                f"snapshot tiers: [{', '.join(tiers)}]}}")

    def execute_revert(self, target_epoch: int, delta: Delta) -> None:
        assert isinstance(delta, HashTier)
        for element in self.base_elements():
            if element.start_epoch > target_epoch:
                self.snapshottable_remove(element.key)
        if delta.delta_table is not None:
            for element in delta.delta_table.base_elements():
                self.base_add_or_replace(element)

    def reset(self) -> None:
        for element in self.base_elements():
            self.snapshottable_remove(element.key)
