"""Port of core/src/main/scala/kafka/controller/Election.scala, together with the
PartitionLeaderElectionAlgorithms object and the PartitionLeaderElectionStrategy types from
PartitionStateMachine.scala.

An election takes a partition's current LeaderAndIsr (as read from ZooKeeper) and returns the
new one, or none when no replica qualifies, plus the replicas that must hear about the result
in a LeaderAndIsr request. Every result goes through ``LeaderAndIsr.new_leader*``, so the leader
epoch always moves forward.

The algorithms walk the *assignment* in order, not the ISR, so the preferred (first) replica
wins whenever it qualifies; that is what keeps leadership balanced without a rebalance.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from kafka_py.core.api.leader_and_isr import LeaderAndIsr
from kafka_py.clients.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_py.controller.controller_context import ControllerContext

logger = logging.getLogger(__name__)


# -- strategies ------------------------------------------------------------------------------

class PartitionLeaderElectionStrategy:
    """Which algorithm the partition state machine runs for an OnlinePartition transition."""

    def __str__(self) -> str:
        # As Scala prints the case objects and classes (the error messages quote it):
        # PreferredReplicaPartitionLeaderElectionStrategy, OfflinePartitionLeaderElectionStrategy(true).
        values: list[Any] = (
            [getattr(self, f.name) for f in dataclasses.fields(self)] if dataclasses.is_dataclass(self) else [])
        if not values:
            return type(self).__name__
        return f"{type(self).__name__}({','.join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)})"


@dataclass(frozen=True)
class OfflinePartitionLeaderElectionStrategy(PartitionLeaderElectionStrategy):
    # True forces unclean election; False still allows it when the topic (or the broker
    # default) sets unclean.leader.election.enable.
    allow_unclean: bool = False


@dataclass(frozen=True)
class ReassignPartitionLeaderElectionStrategy(PartitionLeaderElectionStrategy):
    pass


@dataclass(frozen=True)
class PreferredReplicaPartitionLeaderElectionStrategy(PartitionLeaderElectionStrategy):
    pass


@dataclass(frozen=True)
class ControlledShutdownPartitionLeaderElectionStrategy(PartitionLeaderElectionStrategy):
    pass


# -- algorithms ------------------------------------------------------------------------------

class PartitionLeaderElectionAlgorithms:
    @staticmethod
    def offline_partition_leader_election(assignment: Sequence[int], isr: Sequence[int], live_replicas: set[int],
                                          unclean_leader_election_enabled: bool,
                                          controller_context: "ControllerContext") -> int | None:
        for replica in assignment:
            if replica in live_replicas and replica in isr:
                return replica
        if unclean_leader_election_enabled:
            for replica in assignment:
                if replica in live_replicas:
                    controller_context.stats.unclean_leader_election_rate.mark()
                    return replica
        return None

    @staticmethod
    def reassign_partition_leader_election(reassignment: Sequence[int], isr: Sequence[int],
                                           live_replicas: set[int]) -> int | None:
        for replica in reassignment:
            if replica in live_replicas and replica in isr:
                return replica
        return None

    @staticmethod
    def preferred_replica_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                    live_replicas: set[int]) -> int | None:
        if assignment and assignment[0] in live_replicas and assignment[0] in isr:
            return assignment[0]
        return None

    @staticmethod
    def controlled_shutdown_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                      live_replicas: set[int],
                                                      shutting_down_brokers: set[int]) -> int | None:
        for replica in assignment:
            if replica in live_replicas and replica in isr and replica not in shutting_down_brokers:
                return replica
        return None


# -- Election --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ElectionResult:
    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]


def _live(controller_context: "ControllerContext", replicas: Iterable[int], partition: TopicPartition,
          include_shutting_down_brokers: bool = False) -> tuple[int, ...]:
    return tuple(r for r in replicas
                 if controller_context.is_replica_online(r, partition, include_shutting_down_brokers))


class Election:
    @staticmethod
    def _leader_for_offline(partition: TopicPartition, leader_and_isr: LeaderAndIsr | None,
                            unclean_leader_election_enabled: bool,
                            controller_context: "ControllerContext") -> ElectionResult:
        assignment = controller_context.partition_replica_assignment(partition)
        live_replicas = _live(controller_context, assignment, partition)
        if leader_and_isr is None:
            return ElectionResult(partition, None, live_replicas)
        isr = leader_and_isr.isr
        leader = PartitionLeaderElectionAlgorithms.offline_partition_leader_election(
            assignment, isr, set(live_replicas), unclean_leader_election_enabled, controller_context)
        if leader is None:
            return ElectionResult(partition, None, live_replicas)
        # A clean leader keeps the live part of the ISR; an unclean one starts a new ISR alone,
        # since nothing else can be known to be in sync with it.
        new_isr = _live(controller_context, isr, partition) if leader in isr else (leader,)
        return ElectionResult(partition, leader_and_isr.new_leader_and_isr(leader, new_isr), live_replicas)

    @staticmethod
    def leader_for_offline(
            controller_context: "ControllerContext",
            partitions_with_unclean_leader_election_state: Iterable[tuple[TopicPartition, LeaderAndIsr | None, bool]],
    ) -> list[ElectionResult]:
        return [Election._leader_for_offline(partition, leader_and_isr, unclean, controller_context)
                for partition, leader_and_isr, unclean in partitions_with_unclean_leader_election_state]

    @staticmethod
    def leader_for_reassign(controller_context: "ControllerContext",
                            leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
        results = []
        for partition, leader_and_isr in leader_and_isrs:
            target_replicas = controller_context.partition_full_replica_assignment(partition).target_replicas
            live_replicas = _live(controller_context, target_replicas, partition)
            leader = PartitionLeaderElectionAlgorithms.reassign_partition_leader_election(
                target_replicas, leader_and_isr.isr, set(live_replicas))
            new_leader_and_isr = leader_and_isr.new_leader(leader) if leader is not None else None
            results.append(ElectionResult(partition, new_leader_and_isr, tuple(target_replicas)))
        return results

    @staticmethod
    def leader_for_preferred_replica(controller_context: "ControllerContext",
                                     leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
        results = []
        for partition, leader_and_isr in leader_and_isrs:
            assignment = controller_context.partition_replica_assignment(partition)
            live_replicas = _live(controller_context, assignment, partition)
            leader = PartitionLeaderElectionAlgorithms.preferred_replica_partition_leader_election(
                assignment, leader_and_isr.isr, set(live_replicas))
            new_leader_and_isr = leader_and_isr.new_leader(leader) if leader is not None else None
            results.append(ElectionResult(partition, new_leader_and_isr, tuple(assignment)))
        return results

    @staticmethod
    def leader_for_controlled_shutdown(controller_context: "ControllerContext",
                                       leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
        shutting_down = set(controller_context.shutting_down_broker_ids)
        results = []
        for partition, leader_and_isr in leader_and_isrs:
            assignment = controller_context.partition_replica_assignment(partition)
            live_or_shutting_down = _live(controller_context, assignment, partition, include_shutting_down_brokers=True)
            leader = PartitionLeaderElectionAlgorithms.controlled_shutdown_partition_leader_election(
                assignment, leader_and_isr.isr, set(live_or_shutting_down), shutting_down)
            new_isr = tuple(r for r in leader_and_isr.isr if r not in shutting_down)
            new_leader_and_isr = leader_and_isr.new_leader_and_isr(leader, new_isr) if leader is not None else None
            results.append(ElectionResult(partition, new_leader_and_isr, live_or_shutting_down))
        return results
