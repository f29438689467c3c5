"""StripedReplicaPlacer, after Kafka 3.0's StripedReplicaPlacerTest, with properties: no
broker twice in a partition, the leader always unfenced, racks spread as evenly as the
replication factor allows, and too few brokers refused with INVALID_REPLICATION_FACTOR."""
from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from kafka_py.clients.common.errors import InvalidReplicationFactorException
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.usable_broker import UsableBroker


def place(brokers, partitions, rf, seed=0):
    return StripedReplicaPlacer(random.Random(seed)).place(0, partitions, rf, iter(brokers))


def test_refuses_more_replicas_than_brokers():
    brokers = [UsableBroker(i, None, False) for i in range(3)]
    with pytest.raises(InvalidReplicationFactorException, match="only 3 broker"):
        place(brokers, 1, 4)
    with pytest.raises(InvalidReplicationFactorException, match="must be positive"):
        place(brokers, 1, 0)


def test_refuses_when_all_brokers_are_fenced():
    with pytest.raises(InvalidReplicationFactorException, match="fenced"):
        place([UsableBroker(0, None, True), UsableBroker(1, None, True)], 1, 1)


def test_fenced_brokers_hold_followers_only_when_needed():
    brokers = [UsableBroker(0, None, False), UsableBroker(1, None, True),
               UsableBroker(2, None, False)]
    for placement in place(brokers, 10, 2):
        assert 1 not in placement
    for placement in place(brokers, 10, 3):
        assert placement[0] != 1 and sorted(placement) == [0, 1, 2]


def test_spreads_over_racks():
    brokers = [UsableBroker(i, rack, False)
               for i, rack in enumerate(["a", "a", "b", "b", "c", "c"])]
    racks = {b.id: b.rack for b in brokers}
    placements = place(brokers, 30, 3)
    for placement in placements:
        assert len({racks[b] for b in placement}) == 3
    leaders = Counter(p[0] for p in placements)
    assert set(leaders) == set(range(6))


@settings(max_examples=80)
@given(st.lists(st.tuples(st.sampled_from([None, "r1", "r2", "r3"]), st.booleans()),
                min_size=1, max_size=9),
       st.integers(1, 5), st.integers(1, 12), st.integers(0, 2**32))
def test_placement_properties(broker_specs, rf, partitions, seed):
    brokers = [UsableBroker(i, rack, fenced) for i, (rack, fenced) in enumerate(broker_specs)]
    unfenced = [b for b in brokers if not b.fenced]
    if rf > len(brokers) or not unfenced:
        with pytest.raises(InvalidReplicationFactorException):
            place(brokers, partitions, rf, seed)
        return
    by_id = {b.id: b for b in brokers}
    racks = {b.rack for b in brokers}
    placements = place(brokers, partitions, rf, seed)
    assert len(placements) == partitions
    for placement in placements:
        assert len(placement) == rf and len(set(placement)) == rf
        assert not by_id[placement[0]].fenced
        assert len({by_id[b].rack for b in placement}) == min(rf, len(racks)) or \
            any(by_id[b].fenced for b in brokers)
