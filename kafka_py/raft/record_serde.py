"""Port of raft/src/main/java/org/apache/kafka/raft/RecordSerde.java (Kafka 2.8.2).

How the application's records become the values of the raft log's records and back. Each
record of a raft batch is a DefaultRecord with no key, no headers and a zero timestamp
delta; its value is what ``write`` produces. ``record_size`` is always asked first, with the
same ``serialization_cache`` then passed to ``write``, so a serde can encode once and keep
the bytes (Kafka's ObjectSerializationCache).
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Kafka's ObjectSerializationCache: anything a serde wants to remember between
# record_size and write, keyed by the record object's id.
ObjectSerializationCache = dict


class RecordSerde(ABC, Generic[T]):
    @abstractmethod
    def record_size(self, data: T, serialization_cache: ObjectSerializationCache) -> int:
        """Bytes ``write`` will produce for ``data``."""

    @abstractmethod
    def write(self, data: T, serialization_cache: ObjectSerializationCache, out: bytearray) -> None:
        """Append ``data``'s bytes to ``out`` (after ``record_size`` was called for it)."""

    @abstractmethod
    def read(self, data: memoryview, size: int) -> T:
        """The record held in ``data``, which is ``size`` bytes long."""
