"""The leader's ISR and high watermark (kafka_py/core/cluster/partition.py), step by step as in
Kafka's Partition.scala: the HW is the smallest log end offset of the (maximal) ISR; a shrink
counts only once the controller stored it, an expansion at once; acks=all answers with
NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR fell below min.insync.replicas while it waited;
a committed shrink moves the HW and wakes waiting operations from the answer itself."""
from __future__ import annotations

import os

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.core.cluster.partition import (
    CommittedIsr,
    DelayedOperations,
    NotEnoughReplicasException,
    Partition,
    PendingExpandIsr,
    PendingShrinkIsr,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.log.log_offset_metadata import LogOffsetMetadata
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import LeaderAndIsrPartitionState
from kafka_py.server.checkpoints.offset_checkpoint_file import LazyOffsetCheckpoints, OffsetCheckpointFile
from kafka_py.clients.common.utils.time import MockTime
from tests.cluster.test_partition import RecordingAlterIsrManager, records

TP = TopicPartition("strict", 0)  # min.insync.replicas=2
LAG_MS = 10000


class CountingPurgatory:
    def __init__(self) -> None:
        self.checks = 0

    def check_and_complete(self, key) -> int:
        self.checks += 1
        return 0

    def num_delayed(self) -> int:
        return 0


@pytest.fixture
def leader(tmp_path):
    log_dir = str(tmp_path / "logs")
    log_manager = LogManager([log_dir], LogConfig(), topic_config_overrides={"strict": {"min.insync.replicas": 2}},
                             default_props={})
    log_manager.startup()
    checkpoints = LazyOffsetCheckpoints({os.path.abspath(log_dir): OffsetCheckpointFile(
        os.path.join(log_dir, "replication-offset-checkpoint"))})
    time = MockTime()
    alter = RecordingAlterIsrManager()
    produce = CountingPurgatory()
    partition = Partition(TP, replica_lag_time_max_ms=LAG_MS, local_broker_id=0, time=time, log_manager=log_manager,
                          alter_isr_manager=alter,
                          delayed_operations=DelayedOperations(TP, produce, CountingPurgatory(), CountingPurgatory()))
    partition.make_leader(LeaderAndIsrPartitionState("strict", 0, 1, 0, 5, (0, 1, 2), 0, (0, 1, 2)), checkpoints)
    yield partition, alter, time, produce
    log_manager.shutdown()


def fetch(partition: Partition, follower: int, offset: int, time: MockTime) -> None:
    """A follower fetch from ``offset`` (what the follower has), as the leader records it."""
    partition.update_follower_fetch_state(follower, LogOffsetMetadata(offset), 0, time.milliseconds(),
                                          partition.log.log_end_offset)


def test_the_high_watermark_is_the_smallest_log_end_offset_of_the_isr(leader):
    partition, _, time, _ = leader
    partition.append_records_to_leader(records(b"a", b"b", b"c"), AppendOrigin.CLIENT, -1)
    assert partition.log.high_watermark == 0
    fetch(partition, 1, 3, time)
    assert partition.log.high_watermark == 0  # 2 has nothing yet
    fetch(partition, 2, 2, time)
    assert partition.log.high_watermark == 2
    assert partition.check_enough_replicas_reach_offset(3) == (False, Errors.NONE)
    fetch(partition, 2, 3, time)
    assert partition.log.high_watermark == 3
    assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NONE)


def test_a_stuck_follower_leaves_the_isr_only_once_the_controller_stored_it(leader):
    partition, alter, time, produce = leader
    partition.append_records_to_leader(records(b"a", b"b"), AppendOrigin.CLIENT, -1)
    fetch(partition, 1, 2, time)
    # Follower 2 never fetches. Within replica.lag.time.max.ms it stays in.
    time.sleep(LAG_MS)
    partition.maybe_shrink_isr()
    assert alter.items == []
    time.sleep(1)
    fetch(partition, 1, 2, time)  # 1 keeps up
    partition.maybe_shrink_isr()
    [item] = alter.items
    assert item.leader_and_isr == LeaderAndIsr(0, 5, (0, 1), 0)
    # Pending: the shrink is not assumed, so the HW still waits for 2.
    assert isinstance(partition.isr_state, PendingShrinkIsr) and partition.isr_state.maximal_isr == {0, 1, 2}
    assert partition.log.high_watermark == 0
    # Nothing more is proposed while one change is in flight.
    time.sleep(LAG_MS)
    partition.maybe_shrink_isr()
    assert len(alter.items) == 1

    checks = produce.checks
    item.callback(LeaderAndIsr(0, 5, (0, 1), 1))  # the controller's answer, on the manager's thread
    assert partition.isr_state == CommittedIsr(frozenset({0, 1})) and partition.get_zk_version() == 1
    # Committed: the HW moves at once and waiting produces are checked again.
    assert partition.log.high_watermark == 2
    assert produce.checks > checks
    assert partition.check_enough_replicas_reach_offset(2) == (True, Errors.NONE)


def test_acks_all_in_flight_while_the_isr_falls_below_min_insync_is_told_after_append(leader):
    partition, alter, time, _ = leader
    fetch(partition, 1, 0, time)
    fetch(partition, 2, 0, time)
    partition.append_records_to_leader(records(b"a"), AppendOrigin.CLIENT, -1)
    assert partition.check_enough_replicas_reach_offset(1) == (False, Errors.NONE)
    time.sleep(LAG_MS + 1)
    partition.maybe_shrink_isr()
    [item] = alter.items
    assert item.leader_and_isr.isr == (0,)
    item.callback(LeaderAndIsr(0, 5, (0,), 1))
    # Written and now committed by the leader alone: below min.insync.replicas=2.
    assert partition.log.high_watermark == 1
    assert partition.check_enough_replicas_reach_offset(1) == (True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    # New acks=all produces are refused before anything is written; acks=1 still works.
    with pytest.raises(NotEnoughReplicasException):
        partition.append_records_to_leader(records(b"b"), AppendOrigin.CLIENT, -1)
    assert partition.log.log_end_offset == 1
    partition.append_records_to_leader(records(b"b"), AppendOrigin.CLIENT, 1)
    assert partition.log.log_end_offset == 2


def test_a_caught_up_follower_is_added_back_and_counts_at_once(leader):
    partition, alter, time, _ = leader
    partition.append_records_to_leader(records(b"a", b"b"), AppendOrigin.CLIENT, 1)
    time.sleep(LAG_MS + 1)
    partition.maybe_shrink_isr()
    alter.items.pop().callback(LeaderAndIsr(0, 5, (0,), 1))
    assert partition.isr_state == CommittedIsr(frozenset({0}))
    partition.append_records_to_leader(records(b"c"), AppendOrigin.CLIENT, 1)
    assert partition.log.high_watermark == 3

    fetch(partition, 2, 1, time)  # behind the HW: not yet
    assert alter.items == []
    fetch(partition, 2, 3, time)  # at the HW (and past the epoch's start): back in
    [item] = alter.items
    assert item.leader_and_isr == LeaderAndIsr(0, 5, (0, 2), 1)
    assert isinstance(partition.isr_state, PendingExpandIsr) and partition.isr_state.maximal_isr == {0, 2}
    # Already counted for the HW and acks=all: a new append waits for 2 too.
    partition.append_records_to_leader(records(b"d"), AppendOrigin.CLIENT, 1)
    assert partition.log.high_watermark == 3
    fetch(partition, 2, 4, time)
    assert partition.log.high_watermark == 4
    item.callback(LeaderAndIsr(0, 5, (0, 2), 2))
    assert partition.isr_state == CommittedIsr(frozenset({0, 2}))


@pytest.mark.parametrize("answer", [Errors.FENCED_LEADER_EPOCH, Errors.INVALID_UPDATE_VERSION,
                                    Errors.UNKNOWN_TOPIC_OR_PARTITION])
def test_a_refused_change_is_given_up_until_the_next_leader_and_isr(leader, answer):
    partition, alter, time, _ = leader
    partition.append_records_to_leader(records(b"a"), AppendOrigin.CLIENT, 1)
    time.sleep(LAG_MS + 1)
    partition.maybe_shrink_isr()
    alter.items.pop().callback(answer)
    assert isinstance(partition.isr_state, PendingShrinkIsr) and alter.items == []
    assert partition.log.high_watermark == 0


def test_an_unexpected_error_is_proposed_again(leader):
    partition, alter, time, _ = leader
    partition.append_records_to_leader(records(b"a"), AppendOrigin.CLIENT, 1)
    time.sleep(LAG_MS + 1)
    partition.maybe_shrink_isr()
    alter.items.pop().callback(Errors.INVALID_REQUEST)
    [again] = alter.items
    assert again.leader_and_isr.isr == (0,)


def test_an_answer_after_a_new_leadership_is_ignored(leader, tmp_path):
    partition, alter, time, _ = leader
    partition.append_records_to_leader(records(b"a"), AppendOrigin.CLIENT, 1)
    time.sleep(LAG_MS + 1)
    partition.maybe_shrink_isr()
    [item] = alter.items
    partition.make_leader(LeaderAndIsrPartitionState("strict", 0, 2, 0, 6, (0, 1, 2), 3, (0, 1, 2)), None)
    assert TP in alter.cleared
    item.callback(LeaderAndIsr(0, 5, (0,), 1))
    assert partition.isr_state == CommittedIsr(frozenset({0, 1, 2})) and partition.get_zk_version() == 3
