"""Leader election algorithms over a real ControllerContext."""
from __future__ import annotations

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.core.cluster.broker import Broker, SecurityProtocol
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.controller_context import ControllerContext
from kafka_py.controller.election import Election, PartitionLeaderElectionAlgorithms
from kafka_py.core.zk.zk_data import ReplicaAssignment

TP = TopicPartition("t", 0)


def _context(live: list[int], replicas: list[int], shutting_down: tuple[int, ...] = ()) -> ControllerContext:
    ctx = ControllerContext()
    ctx.set_live_brokers({Broker.of(b, "127.0.0.1", 9000 + b, "PLAINTEXT", SecurityProtocol.PLAINTEXT): 100 + b
                          for b in live})
    ctx.shutting_down_broker_ids.update(shutting_down)
    ctx.set_all_topics({"t"})
    ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment(tuple(replicas)))
    return ctx


def test_offline_election_takes_first_live_isr_member_in_assignment_order():
    ctx = _context(live=[2, 3], replicas=[1, 3, 2])
    lai = LeaderAndIsr(1, 4, (1, 2, 3), 7)
    [result] = Election.leader_for_offline(ctx, [(TP, lai, False)])
    # 3 precedes 2 in the assignment, so 3 leads although 2 precedes it in the ISR.
    assert result.leader_and_isr == LeaderAndIsr(3, 5, (2, 3), 7)
    assert result.live_replicas == (3, 2)


def test_offline_election_without_live_isr_fails_unless_unclean():
    ctx = _context(live=[2], replicas=[1, 2])
    # The rate is a process-wide meter (one per name, as in Kafka's registry): another
    # controller of this process may have counted before, so the change is asserted.
    before = ctx.stats.unclean_leader_elections
    lai = LeaderAndIsr(1, 0, (1,), 3)
    [clean] = Election.leader_for_offline(ctx, [(TP, lai, False)])
    assert clean.leader_and_isr is None
    assert ctx.stats.unclean_leader_elections == before
    [unclean] = Election.leader_for_offline(ctx, [(TP, lai, True)])
    assert unclean.leader_and_isr == LeaderAndIsr(2, 1, (2,), 3)
    assert ctx.stats.unclean_leader_elections == before + 1


def test_preferred_election_only_elects_the_first_replica():
    ctx = _context(live=[1, 2], replicas=[1, 2])
    [ok] = Election.leader_for_preferred_replica(ctx, [(TP, LeaderAndIsr(2, 3, (1, 2), 5))])
    assert ok.leader_and_isr == LeaderAndIsr(1, 4, (1, 2), 5)
    [not_in_isr] = Election.leader_for_preferred_replica(ctx, [(TP, LeaderAndIsr(2, 3, (2,), 5))])
    assert not_in_isr.leader_and_isr is None


def test_controlled_shutdown_moves_leadership_off_and_out_of_the_isr():
    ctx = _context(live=[1, 2, 3], replicas=[1, 2, 3], shutting_down=(1,))
    [result] = Election.leader_for_controlled_shutdown(ctx, [(TP, LeaderAndIsr(1, 0, (1, 2, 3), 0))])
    assert result.leader_and_isr == LeaderAndIsr(2, 1, (2, 3), 0)
    # The shutting-down broker still hears about the change.
    assert result.live_replicas == (1, 2, 3)


def test_reassign_election_picks_from_target_replicas():
    ctx = _context(live=[1, 2, 3, 4], replicas=[1, 2])
    ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((1, 2)).reassign_to([4, 3]))
    [result] = Election.leader_for_reassign(ctx, [(TP, LeaderAndIsr(1, 2, (1, 2, 3, 4), 1))])
    assert result.leader_and_isr.leader == 4
    assert result.live_replicas == (4, 3)


@pytest.mark.parametrize("assignment,isr,live,expected", [
    ([1, 2, 3], [3, 2], {2, 3}, 2),
    ([1, 2, 3], [1], {2, 3}, None),
    ([], [], set(), None),
])
def test_offline_algorithm(assignment, isr, live, expected):
    ctx = ControllerContext()
    assert PartitionLeaderElectionAlgorithms.offline_partition_leader_election(
        assignment, isr, live, False, ctx) == expected


def test_strategies_print_as_scala_prints_them():
    # the controller's StateChangeFailedException messages, which ElectLeaders answers carry, quote them
    from kafka_py.controller.election import (
        OfflinePartitionLeaderElectionStrategy,
        PreferredReplicaPartitionLeaderElectionStrategy,
    )

    assert str(PreferredReplicaPartitionLeaderElectionStrategy()) == "PreferredReplicaPartitionLeaderElectionStrategy"
    assert str(OfflinePartitionLeaderElectionStrategy(True)) == "OfflinePartitionLeaderElectionStrategy(true)"
    assert f"{OfflinePartitionLeaderElectionStrategy()}" == "OfflinePartitionLeaderElectionStrategy(false)"
