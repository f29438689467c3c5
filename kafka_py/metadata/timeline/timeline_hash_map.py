"""Port of metadata/src/main/java/org/apache/kafka/timeline/TimelineHashMap.java.

A dict that can be read as of a snapshot epoch (see SnapshottableHashTable). It is a
MutableMapping over the current state; the Kafka methods that take an epoch take it here
as a keyword (``get(key, epoch=e)``, ``size(e)``, ``keys(e)``), so the positional second
argument of ``get`` keeps its Mapping meaning, the default. Changes only ever apply to the
current state. Neither keys nor values may be None, as in Kafka.
"""
from __future__ import annotations

from collections.abc import ItemsView, KeysView, MutableMapping, ValuesView
from typing import Generic, Hashable, Iterator, TypeVar

from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH
from kafka_py.metadata.timeline.snapshottable_hash_table import SnapshottableHashTable

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TimelineHashMapEntry(Generic[K, V]):
    __slots__ = ("key", "value", "start_epoch")

    def __init__(self, key: K, value: V) -> None:
        self.key = key
        self.value = value
        self.start_epoch = LATEST_EPOCH

    def __repr__(self) -> str:
        return f"{self.key!r}={self.value!r}@{self.start_epoch}"


class TimelineHashMap(SnapshottableHashTable[TimelineHashMapEntry], MutableMapping[K, V]):
    def contains_key(self, key: K, epoch: int = LATEST_EPOCH) -> bool:
        return self.snapshottable_get(key, epoch) is not None

    def __contains__(self, key: object) -> bool:
        return self.base_get(key) is not None

    def __getitem__(self, key: K) -> V:
        entry = self.base_get(key)
        if entry is None:
            raise KeyError(key)
        return entry.value

    def get(self, key: K, default: V | None = None, *, epoch: int = LATEST_EPOCH) -> V | None:
        entry = self.snapshottable_get(key, epoch)
        return default if entry is None else entry.value

    def put(self, key: K, value: V) -> V | None:
        """Map ``key`` to ``value``; the value it replaced, or None."""
        if key is None or value is None:
            raise ValueError("TimelineHashMap keys and values may not be None")
        prev = self.snapshottable_add_or_replace(TimelineHashMapEntry(key, value))
        return None if prev is None else prev.value

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def remove(self, key: K) -> V | None:
        """Unmap ``key``; the value it had, or None if it had none."""
        prev = self.snapshottable_remove(key)
        return None if prev is None else prev.value

    def __delitem__(self, key: K) -> None:
        if self.snapshottable_remove(key) is None:
            raise KeyError(key)

    def __iter__(self) -> Iterator[K]:
        return (entry.key for entry in self.snapshottable_iterator(LATEST_EPOCH))

    def clear(self) -> None:
        self.reset()

    def keys(self, epoch: int = LATEST_EPOCH) -> KeysView[K] | list[K]:
        """A live view of the current keys, or a list of the keys at ``epoch``."""
        if epoch == LATEST_EPOCH:
            return KeysView(self)
        return [entry.key for entry in self.snapshottable_iterator(epoch)]

    def values(self, epoch: int = LATEST_EPOCH) -> ValuesView[V] | list[V]:
        if epoch == LATEST_EPOCH:
            return ValuesView(self)
        return [entry.value for entry in self.snapshottable_iterator(epoch)]

    def items(self, epoch: int = LATEST_EPOCH) -> ItemsView[K, V] | list[tuple[K, V]]:
        if epoch == LATEST_EPOCH:
            return ItemsView(self)
        return [(entry.key, entry.value) for entry in self.snapshottable_iterator(epoch)]

    def to_dict(self, epoch: int = LATEST_EPOCH) -> dict[K, V]:
        """A plain copy of the map at ``epoch``."""
        return {entry.key: entry.value for entry in self.snapshottable_iterator(epoch)}

    def __repr__(self) -> str:
        return f"TimelineHashMap({self.to_dict()!r})"
