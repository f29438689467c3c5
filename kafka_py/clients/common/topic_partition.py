"""Port of clients/.../org/apache/kafka/common/TopicPartition.java."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True, slots=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        # Kafka prints a partition as "topic-partition"; log directories use the same form.
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, name: str) -> "TopicPartition":
        """Parse "topic-partition" (a log directory name); the topic may contain dashes."""
        topic, sep, partition = name.rpartition("-")
        if not sep or not topic or not partition.isdigit():
            raise ValueError(f"not a topic-partition name: {name!r}")
        return cls(topic, int(partition))
