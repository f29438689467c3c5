"""Port of core/src/main/scala/kafka/server/DelayedOperationKey.scala.

Keys under which a purgatory watches delayed operations. They are frozen dataclasses, so two
keys built from the same values are equal and hash alike: an operation watched under
``TopicPartitionOperationKey("t", 0)`` is found by ``check_and_complete`` with any other
instance of that key.
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka_py.clients.common.topic_partition import TopicPartition

# The label Kafka uses for purgatory-wide (not per-key) metrics.
GLOBAL_LABEL = "All"


class DelayedOperationKey:
    __slots__ = ()

    @property
    def key_label(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, init=False)
class TopicPartitionOperationKey(DelayedOperationKey):
    """Delayed produce and fetch operations wait on a partition."""

    topic: str
    partition: int

    def __init__(self, topic: str, partition: int) -> None:
        # Every append makes one to wake its partition's waiters: the two fields are written
        # through their slots' setters rather than the frozen dataclass's object.__setattr__.
        _set_topic(self, topic)
        _set_partition(self, partition)

    @property
    def key_label(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def from_topic_partition(cls, topic_partition: TopicPartition) -> "TopicPartitionOperationKey":
        return cls(topic_partition.topic, topic_partition.partition)


_set_topic = TopicPartitionOperationKey.__dict__["topic"].__set__
_set_partition = TopicPartitionOperationKey.__dict__["partition"].__set__


@dataclass(frozen=True, slots=True)
class MemberKey(DelayedOperationKey):
    """Delayed heartbeats wait on a group member."""

    group_id: str
    consumer_id: str

    @property
    def key_label(self) -> str:
        return f"{self.group_id}-{self.consumer_id}"


@dataclass(frozen=True, slots=True)
class GroupKey(DelayedOperationKey):
    """A whole group (the single group key of Kafka releases before GroupJoinKey and
    GroupSyncKey split it)."""

    group_id: str

    @property
    def key_label(self) -> str:
        return self.group_id


@dataclass(frozen=True, slots=True)
class GroupJoinKey(DelayedOperationKey):
    """Delayed joins wait on a group's rebalance."""

    group_id: str

    @property
    def key_label(self) -> str:
        return f"join-{self.group_id}"


@dataclass(frozen=True, slots=True)
class GroupSyncKey(DelayedOperationKey):
    """Delayed syncs wait on a group's assignment."""

    group_id: str

    @property
    def key_label(self) -> str:
        return f"sync-{self.group_id}"


@dataclass(frozen=True, slots=True)
class TopicKey(DelayedOperationKey):
    """Delayed topic creation and deletion wait on a topic."""

    topic: str

    @property
    def key_label(self) -> str:
        return self.topic
