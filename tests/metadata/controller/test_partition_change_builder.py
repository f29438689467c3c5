"""PartitionChangeBuilder, after Kafka 3.0's PartitionChangeBuilderTest."""
from __future__ import annotations

import uuid

from kafka_py.metadata.controller.partition_change_builder import PartitionChangeBuilder
from kafka_py.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_py.metadata.partition_registration import PartitionRegistration

TOPIC = uuid.UUID(int=7)
PARTITION = PartitionRegistration((2, 1, 3), (2, 1, 3), (), (), 1, 100, 200)


def builder(partition=PARTITION, acceptable=lambda r: r != 3, unclean=False):
    return PartitionChangeBuilder(partition, TOPIC, 0, acceptable, lambda: unclean)


def test_no_change_is_no_record():
    assert builder().build() is None


def test_isr_shrink_bumps_leader_epoch():
    record = builder().set_target_isr([2, 1]).build().message
    assert record.isr == (2, 1) and record.leader == 1  # unchanged leader, epoch bump
    assert PARTITION.merge(record).leader_epoch == 101
    assert PARTITION.merge(record).partition_epoch == 201


def test_isr_expansion_does_not_bump_leader_epoch():
    partition = PartitionRegistration((2, 1, 3), (2, 1), (), (), 1, 100, 200)
    record = builder(partition).set_target_isr([2, 1, 3]).build().message
    assert record.leader == NO_LEADER_CHANGE
    assert partition.merge(record).leader_epoch == 100


def test_leader_leaving_the_isr_elects_the_first_acceptable_replica():
    record = builder().set_target_isr([2, 3]).build().message
    assert record.leader == 2


def test_no_acceptable_leader_without_unclean():
    partition = PartitionRegistration((2, 1, 3), (2, 3), (), (), 2, 100, 200)
    record = builder(partition, acceptable=lambda r: r == 1).set_target_isr([3]).build()
    assert record.message.leader == NO_LEADER and record.message.isr == (3,)
    unclean = builder(partition, acceptable=lambda r: r == 1, unclean=True) \
        .set_target_isr([3]).build().message
    assert unclean.leader == 1 and unclean.isr == (1,)


def test_preferred_election():
    b = builder().set_always_elect_preferred_if_possible(True)
    assert b.build().message.leader == 2


def test_reassignment_completes_when_adding_replicas_join_the_isr():
    partition = PartitionRegistration((3, 4, 1, 2), (1, 2, 3), (1, 2), (3, 4), 1, 5, 5)
    assert builder(partition, acceptable=lambda r: True).build() is None
    record = builder(partition, acceptable=lambda r: True).set_target_isr([1, 2, 3, 4]) \
        .build().message
    merged = partition.merge(record)
    assert merged.replicas == (3, 4) and merged.isr == (3, 4) and not merged.is_reassigning()
    assert merged.leader == 3
