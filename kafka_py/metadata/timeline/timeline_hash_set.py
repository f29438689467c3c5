"""Port of metadata/src/main/java/org/apache/kafka/timeline/TimelineHashSet.java.

A set that can be read as of a snapshot epoch (see SnapshottableHashTable): a MutableSet
over the current state, with Kafka's epoch-taking methods (``contains(v, epoch)``,
``size(epoch)``, ``iterator(epoch)``). None is not a member, as in Kafka.
"""
from __future__ import annotations

from collections.abc import MutableSet
from typing import Generic, Hashable, Iterator, TypeVar

from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH
from kafka_py.metadata.timeline.snapshottable_hash_table import SnapshottableHashTable

T = TypeVar("T", bound=Hashable)


class TimelineHashSetEntry(Generic[T]):
    __slots__ = ("key", "start_epoch")

    def __init__(self, value: T) -> None:
        self.key = value
        self.start_epoch = LATEST_EPOCH

    def __repr__(self) -> str:
        return f"{self.key!r}@{self.start_epoch}"


class TimelineHashSet(SnapshottableHashTable[TimelineHashSetEntry], MutableSet[T]):
    def contains(self, value: T, epoch: int = LATEST_EPOCH) -> bool:
        return self.snapshottable_get(value, epoch) is not None

    def __contains__(self, value: object) -> bool:
        return self.base_get(value) is not None

    def iterator(self, epoch: int = LATEST_EPOCH) -> Iterator[T]:
        return (entry.key for entry in self.snapshottable_iterator(epoch))

    def __iter__(self) -> Iterator[T]:
        return self.iterator(LATEST_EPOCH)

    def add(self, value: T) -> bool:
        """Add ``value``; whether it was new."""
        if value is None:
            raise ValueError("TimelineHashSet members may not be None")
        return self.snapshottable_add_unless_present(TimelineHashSetEntry(value))

    def discard(self, value: T) -> bool:
        """Remove ``value``; whether it was there."""
        return self.snapshottable_remove(value) is not None

    def clear(self) -> None:
        self.reset()

    def to_set(self, epoch: int = LATEST_EPOCH) -> set[T]:
        """A plain copy of the set at ``epoch``."""
        return set(self.iterator(epoch))

    def __repr__(self) -> str:
        return f"TimelineHashSet({self.to_set()!r})"
