"""Port of metadata/src/main/java/org/apache/kafka/timeline/BaseHashTable.java.

The plain table under the timeline collections: elements found by their key. Kafka's is
an open hash table of its own, chained in arrays, to save memory per entry on the JVM;
here a dict from key to element does the same job. What the snapshot logic relies on is
kept: an element is stored whole (its key, its value, its start epoch), replacing an
element hands back the one replaced, and removing hands back the one removed.
"""
from __future__ import annotations

from typing import Generic, Hashable, Protocol, TypeVar


class ElementWithStartEpoch(Protocol):
    """An element of a snapshottable table: a key, and the epoch it was stored in."""

    key: Hashable
    start_epoch: int


T = TypeVar("T", bound=ElementWithStartEpoch)


class BaseHashTable(Generic[T]):
    def __init__(self, expected_size: int = 0) -> None:
        # expected_size is Kafka's presizing hint; a dict grows by itself.
        self._table: dict[Hashable, T] = {}

    def base_size(self) -> int:
        return len(self._table)

    def base_elements(self) -> list[T]:
        """A copy of the elements: callers change the table while they walk it."""
        return list(self._table.values())

    def base_keys(self) -> list[Hashable]:
        return list(self._table)

    def base_get(self, key: Hashable) -> T | None:
        return self._table.get(key)

    def base_add_or_replace(self, element: T) -> T | None:
        """Store ``element``; the element it replaced (same key), if any."""
        prev = self._table.get(element.key)
        self._table[element.key] = element
        return prev

    def base_remove(self, key: Hashable) -> T | None:
        return self._table.pop(key, None)

    def base_to_debug_string(self) -> str:
        return "BaseHashTable{" + ", ".join(map(repr, self._table.values())) + "}"
