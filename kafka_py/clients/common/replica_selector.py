"""Port of clients/src/main/java/org/apache/kafka/common/replica/ (Kafka 2.8.2): ClientMetadata,
ReplicaView, PartitionView, ReplicaSelector, LeaderSelector and RackAwareReplicaSelector.

KIP-392, fetching from the closest replica. A consumer sending Fetch v11 or later says which
rack it is in (``client.rack``); the leader asks the broker's ``replica.selector.class`` which
replica that consumer should read from, and when the answer is another replica, the Fetch
response carries no records but that replica's id (``preferred_read_replica``), and the
consumer fetches from it from then on. Without a selector, or when it picks the leader, the
leader serves as before.

``replica.selector.class`` takes the names of the two selectors Kafka ships (KafkaConfig
refuses any other: no plug-in classes are loaded).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kafka_py.clients.common.topic_partition import TopicPartition


@dataclass(frozen=True)
class ClientMetadata:
    """DefaultClientMetadata: who sent a Fetch, as a selector sees it."""

    rack_id: str
    client_id: str
    client_address: str
    principal: str
    listener_name: str


@dataclass(frozen=True)
class ReplicaView:
    """One replica of a partition: its endpoint on the client's listener (a Node, with its rack),
    its log end offset, and how long since it was last caught up with the leader."""

    endpoint: Any
    log_end_offset: int
    time_since_last_caught_up_ms: int

    @staticmethod
    def sort_key(view: "ReplicaView") -> tuple[int, int]:
        # ReplicaView.comparator: the most advanced first, then the one caught up most recently
        return view.log_end_offset, -view.time_since_last_caught_up_ms


@dataclass(frozen=True)
class PartitionView:
    replicas: frozenset[ReplicaView]
    leader: ReplicaView


class ReplicaSelector:
    """Which replica a consumer should read from; None to leave the choice to the leader."""

    def configure(self, configs: dict[str, Any]) -> None:
        pass

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> Optional[ReplicaView]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class LeaderSelector(ReplicaSelector):
    """``org.apache.kafka.common.replica.LeaderSelector``: always the leader."""

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> Optional[ReplicaView]:
        return partition_view.leader


class RackAwareReplicaSelector(ReplicaSelector):
    """``org.apache.kafka.common.replica.RackAwareReplicaSelector``: a replica in the consumer's
    rack, the leader if it is one of them, else the most caught-up; the leader when the
    consumer names no rack or no replica is in it."""

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> Optional[ReplicaView]:
        rack = client_metadata.rack_id
        if not rack:
            return partition_view.leader
        same_rack = [view for view in partition_view.replicas if _rack_of(view) == rack]
        if not same_rack or partition_view.leader in same_rack:
            return partition_view.leader
        return max(same_rack, key=ReplicaView.sort_key)


def _rack_of(view: ReplicaView) -> Optional[str]:
    return getattr(view.endpoint, "rack", None)


REPLICA_SELECTORS: dict[str, type[ReplicaSelector]] = {
    "org.apache.kafka.common.replica.LeaderSelector": LeaderSelector,
    "org.apache.kafka.common.replica.RackAwareReplicaSelector": RackAwareReplicaSelector,
}


def create_replica_selector(class_name: Optional[str], configs: dict[str, Any]) -> Optional[ReplicaSelector]:
    """ReplicaManager.createReplicaSelector: None when ``replica.selector.class`` is unset."""
    if class_name is None or not class_name.strip():
        return None
    cls = REPLICA_SELECTORS.get(class_name.strip())
    if cls is None:
        raise ValueError(f"Class {class_name} cannot be found; the replica selectors are {', '.join(REPLICA_SELECTORS)}")
    selector = cls()
    selector.configure(dict(configs))
    return selector


__all__ = ["ClientMetadata", "LeaderSelector", "PartitionView", "RackAwareReplicaSelector", "ReplicaSelector",
           "REPLICA_SELECTORS", "ReplicaView", "create_replica_selector"]
