"""Port of raft/src/main/java/org/apache/kafka/raft/internals/StringSerde.java (Kafka 2.8.2).

A RecordSerde of UTF-8 strings, for tests and tools that replicate plain text.
"""
from __future__ import annotations

import logging

from kafka_py.raft.record_serde import ObjectSerializationCache, RecordSerde

logger = logging.getLogger(__name__)


class StringSerde(RecordSerde[str]):
    def record_size(self, data: str, serialization_cache: ObjectSerializationCache) -> int:
        return len(data.encode("utf-8"))

    def write(self, data: str, serialization_cache: ObjectSerializationCache, out: bytearray) -> None:
        out += data.encode("utf-8")

    def read(self, data: memoryview, size: int) -> str:
        return bytes(data[:size]).decode("utf-8")
