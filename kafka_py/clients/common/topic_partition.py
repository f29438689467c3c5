"""Port of clients/.../org/apache/kafka/common/TopicPartition.java."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True, slots=True, init=False)
class TopicPartition:
    topic: str
    partition: int
    # As Kafka's TopicPartition keeps its hash: every request looks its partitions up in
    # several maps, and the dataclass's own __hash__ builds and hashes a tuple each time.
    # Not part of the value (equality, order, repr) and not pickled (str hashes differ from
    # one process to another): see __reduce__.
    _hash: int = field(init=False, repr=False, compare=False)

    def __init__(self, topic: str, partition: int) -> None:
        # the slots' own setters: a frozen dataclass's __init__ calls object.__setattr__ for each
        _set_topic(self, topic)
        _set_partition(self, partition)
        _set_hash(self, hash((topic, partition)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        return TopicPartition, (self.topic, self.partition)

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


_set_topic = TopicPartition.__dict__["topic"].__set__
_set_partition = TopicPartition.__dict__["partition"].__set__
_set_hash = TopicPartition.__dict__["_hash"].__set__
