"""RackAwareReplicaSelector and LeaderSelector (KIP-392), after Kafka's RackAwareReplicaSelectorTest."""
from __future__ import annotations

import pytest

from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.replica_selector import (
    ClientMetadata,
    LeaderSelector,
    PartitionView,
    RackAwareReplicaSelector,
    ReplicaView,
    create_replica_selector,
)
from kafka_py.clients.common.topic_partition import TopicPartition

TP = TopicPartition("t", 0)


def view(broker_id: int, rack: str | None, log_end_offset: int, lag_ms: int = 0) -> ReplicaView:
    return ReplicaView(Node(broker_id, "127.0.0.1", 9092 + broker_id, rack), log_end_offset, lag_ms)


def client(rack: str) -> ClientMetadata:
    return ClientMetadata(rack, "consumer-1", "127.0.0.1", "User:ANONYMOUS", "PLAINTEXT")


LEADER = view(0, "a", 100)
B1 = view(1, "b", 95, lag_ms=300)
B2 = view(2, "b", 99, lag_ms=10)
B3 = view(3, "b", 99, lag_ms=5)
C4 = view(4, "c", 100)
PARTITION = PartitionView(frozenset({LEADER, B1, B2, B3, C4}), LEADER)


def test_the_most_caught_up_replica_of_the_clients_rack():
    selector = RackAwareReplicaSelector()
    # b: the highest end offset, then the one caught up most recently
    assert selector.select(TP, client("b"), PARTITION) == B3
    assert selector.select(TP, client("c"), PARTITION) == C4


def test_the_leader_when_it_is_in_the_rack_or_no_replica_is_or_no_rack_is_named():
    selector = RackAwareReplicaSelector()
    with_leader_in_b = PartitionView(frozenset({view(0, "b", 100), B1, B2}), view(0, "b", 100))
    assert selector.select(TP, client("b"), with_leader_in_b) == view(0, "b", 100)
    assert selector.select(TP, client("z"), PARTITION) == LEADER
    assert selector.select(TP, client(""), PARTITION) == LEADER
    assert LeaderSelector().select(TP, client("b"), PARTITION) == LEADER


def test_only_kafkas_selectors_are_made():
    assert create_replica_selector(None, {}) is None and create_replica_selector(" ", {}) is None
    assert isinstance(create_replica_selector("org.apache.kafka.common.replica.RackAwareReplicaSelector", {}),
                      RackAwareReplicaSelector)
    with pytest.raises(ValueError, match="cannot be found"):
        create_replica_selector("os.system", {})
