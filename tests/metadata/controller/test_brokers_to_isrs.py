"""BrokersToIsrs, after Kafka's BrokersToIsrsTest, with a model check: after any sequence of
partition updates, each broker's ISR and leader entries match the partitions, and a
revert to a snapshot restores the earlier index exactly."""
from __future__ import annotations

import uuid

from hypothesis import given, settings, strategies as st

from kafka_py.metadata.controller.brokers_to_isrs import BrokersToIsrs, TopicIdPartition
from kafka_py.metadata.leader_constants import NO_LEADER
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry

T1 = uuid.UUID(int=1)
T2 = uuid.UUID(int=2)


def as_set(iterator) -> set[TopicIdPartition]:
    return set(iterator)


def test_iterator_and_leaders():
    registry = SnapshotRegistry()
    isrs = BrokersToIsrs(registry)
    isrs.update(T1, 0, None, (1, 2, 3), NO_LEADER, 1)
    isrs.update(T1, 1, None, (2, 3, 4), NO_LEADER, 4)
    isrs.update(T2, 0, None, (2, 3), NO_LEADER, 3)
    assert as_set(isrs.partitions_with_broker_in_isr(2)) == {
        TopicIdPartition(T1, 0), TopicIdPartition(T1, 1), TopicIdPartition(T2, 0)}
    assert as_set(isrs.partitions_led_by_broker(3)) == {TopicIdPartition(T2, 0)}
    assert not isrs.has_leaderships(2) and isrs.has_leaderships(4)
    isrs.update(T1, 1, (2, 3, 4), (2, 3), 4, 2)
    assert as_set(isrs.partitions_led_by_broker(2)) == {TopicIdPartition(T1, 1)}
    assert as_set(isrs.partitions_with_broker_in_isr(4)) == set()


def test_no_leader_partitions_and_offline_count():
    registry = SnapshotRegistry()
    isrs = BrokersToIsrs(registry)
    isrs.update(T1, 0, None, (1,), NO_LEADER, 1)
    assert as_set(isrs.partitions_with_no_leader()) == set()
    isrs.update(T1, 0, (1,), (1,), 1, NO_LEADER)
    assert as_set(isrs.partitions_with_no_leader()) == {TopicIdPartition(T1, 0)}
    assert isrs.offline_partition_count() == 1
    isrs.update(T1, 0, (1,), (1,), NO_LEADER, 1)
    assert isrs.offline_partition_count() == 0
    assert as_set(isrs.partitions_with_no_leader()) == set()


BROKERS = st.integers(0, 4)


@st.composite
def partition_states(draw):
    isr = draw(st.lists(BROKERS, min_size=1, max_size=4, unique=True))
    leader = draw(st.sampled_from(isr + [NO_LEADER]))
    return tuple(isr), leader


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from([T1, T2]), st.integers(0, 2), partition_states()),
                max_size=25), st.integers(0, 25))
def test_matches_the_partitions(updates, snapshot_at):
    registry = SnapshotRegistry()
    isrs = BrokersToIsrs(registry)
    state: dict[TopicIdPartition, tuple[tuple[int, ...], int]] = {}
    saved = None
    for i, (topic, partition, (isr, leader)) in enumerate(updates):
        if i == snapshot_at:
            registry.create_snapshot(i)
            saved = (i, dict(state))
        tp = TopicIdPartition(topic, partition)
        prev = state.get(tp)
        isrs.update(topic, partition, None if prev is None else prev[0], isr,
                    NO_LEADER if prev is None else prev[1], leader)
        state[tp] = (isr, leader)

    def check(expected):
        for broker in range(5):
            assert as_set(isrs.partitions_with_broker_in_isr(broker)) == \
                {tp for tp, (isr, _) in expected.items() if broker in isr}
            assert as_set(isrs.partitions_led_by_broker(broker)) == \
                {tp for tp, (_, leader) in expected.items() if leader == broker}
        assert as_set(isrs.partitions_with_no_leader()) == \
            {tp for tp, (_, leader) in expected.items() if leader == NO_LEADER}
        assert isrs.offline_partition_count() == \
            sum(1 for _, leader in expected.values() if leader == NO_LEADER)

    check(state)
    if saved is not None:
        registry.revert_to_snapshot(saved[0])
        check(saved[1])
