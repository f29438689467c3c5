"""Port of core/src/main/scala/kafka/controller/ControllerContext.scala.

The active controller's view of the cluster, rebuilt from ZooKeeper at every failover and
kept current by the event thread (the only thread that touches it): live brokers and their
epochs (the czxid of their /brokers/ids/<id> registration), the controller epoch and the
zkVersion of /controller_epoch, every topic with its id and replica assignment, each
partition's leader/ISR as last written to ZooKeeper, the partition and replica states of the
two state machines, and the topics queued for deletion.

Also here: PartitionAndReplica (a case class at the end of KafkaController.scala); the replica
assignment value type, ReplicaAssignment, lives in kafka_py.core.zk.zk_data where ZooKeeper's
topic znode is encoded.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from kafka_py.core.api.leader_and_isr import (
    INITIAL_CONTROLLER_EPOCH,
    INITIAL_CONTROLLER_EPOCH_ZK_VERSION,
    LeaderIsrAndControllerEpoch,
)
from kafka_py.core.cluster.broker import Broker
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.controller.controller_state import ControllerState
from kafka_py.controller.partition_state_machine import PartitionState
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.core.zk.zk_data import ReplicaAssignment

if TYPE_CHECKING:
    # only named in annotations: the replica state machine imports this module's PartitionAndReplica
    from kafka_py.controller.replica_state_machine import ReplicaState

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, order=True)
class PartitionAndReplica:
    topic_partition: TopicPartition
    replica: int

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition

    def __str__(self) -> str:
        return f"[Topic={self.topic},Partition={self.partition},Replica={self.replica}]"


class ControllerStats(KafkaMetricsGroup):
    """``kafka.controller:type=ControllerStats``: UncleanLeaderElectionsPerSec, and a timer
    per controller state (``LeaderElectionRateAndTimeMs`` for BrokerChange,
    ``<State>RateAndTimeMs`` for the others) that times the events processed in it."""

    metrics_group = "kafka.controller"
    metrics_type_name = "ControllerStats"

    def __init__(self) -> None:
        self.unclean_leader_election_rate = self.new_meter("UncleanLeaderElectionsPerSec", "elections")
        self.rate_and_time_metrics = {state: self.new_timer(state.rate_and_time_metric_name)
                                      for state in ControllerState if state.rate_and_time_metric_name}

    @property
    def unclean_leader_elections(self) -> int:
        return self.unclean_leader_election_rate.count


class ControllerContext:
    def __init__(self) -> None:
        self.stats = ControllerStats()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.shutting_down_broker_ids: set[int] = set()
        self._live_brokers: dict[int, Broker] = {}
        self._live_broker_epochs: dict[int, int] = {}
        self.epoch: int = INITIAL_CONTROLLER_EPOCH
        self.epoch_zk_version: int = INITIAL_CONTROLLER_EPOCH_ZK_VERSION

        self.all_topics: set[str] = set()
        self.topic_ids: dict[str, uuid.UUID] = {}
        self.topic_names: dict[uuid.UUID, str] = {}
        # topic -> partition id -> assignment; insertion-ordered so requests list partitions
        # in the order the topics were created.
        self.partition_assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self._partition_leadership_info: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[PartitionAndReplica, ReplicaState] = {}
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}

        self.topics_to_be_deleted: set[str] = set()
        # Topics whose partitions have been moved to NonExistentPartition: from then on their
        # partition-state changes no longer count towards the offline-partition metric.
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()

    # -- topics ----------------------------------------------------------------------------

    def _clear_topics_state(self) -> None:
        self.all_topics.clear()
        self.topic_ids.clear()
        self.topic_names.clear()
        self.partition_assignments.clear()
        self._partition_leadership_info.clear()
        self.partitions_being_reassigned.clear()
        self.replicas_on_offline_dirs.clear()
        self.partition_states.clear()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.replica_states.clear()

    def add_topic_id(self, topic: str, topic_id: uuid.UUID) -> None:
        if topic not in self.all_topics:
            raise RuntimeError(f"topic {topic} is not contained in all topics.")
        existing_id = self.topic_ids.get(topic)
        if existing_id is not None and existing_id != topic_id:
            raise RuntimeError(f"topic ID map already contained ID for topic {topic} and new ID "
                               f"{topic_id} did not match existing ID {existing_id}")
        existing_name = self.topic_names.get(topic_id)
        if existing_name is not None and existing_name != topic:
            raise RuntimeError(f"topic name map already contained ID {topic_id} and new name {topic} "
                               f"did not match existing name {existing_name}")
        self.topic_ids[topic] = topic_id
        self.topic_names[topic_id] = topic

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self.topic_names.get(topic_id)

    def set_all_topics(self, topics: Iterable[str]) -> None:
        self.all_topics.clear()
        self.all_topics.update(topics)

    def remove_topic(self, topic: str) -> None:
        # The imbalance metric was already cleaned when the topic was queued for deletion.
        if topic not in self.topics_to_be_deleted:
            self._clean_preferred_replica_imbalance_metric(topic)
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.all_topics.discard(topic)
        topic_id = self.topic_ids.pop(topic, None)
        if topic_id is not None:
            self.topic_names.pop(topic_id, None)
        assignments = self.partition_assignments.pop(topic, None)
        if assignments is not None:
            for partition in assignments:
                tp = TopicPartition(topic, partition)
                self._partition_leadership_info.pop(tp, None)
                # Kafka 2.8 keeps NonExistentPartition entries of deleted topics for the
                # controller's life; a controller that sees topics created and deleted for
                # months must not.
                self.partition_states.pop(tp, None)

    # -- assignments -----------------------------------------------------------------------

    def partition_replica_assignment(self, topic_partition: TopicPartition) -> tuple[int, ...]:
        assignment = self.partition_assignments.get(topic_partition.topic, {}).get(topic_partition.partition)
        return assignment.replicas if assignment is not None else ()

    def partition_full_replica_assignment(self, topic_partition: TopicPartition) -> ReplicaAssignment:
        return self.partition_assignments.get(topic_partition.topic, {}).get(
            topic_partition.partition, ReplicaAssignment.EMPTY)

    def update_partition_full_replica_assignment(self, topic_partition: TopicPartition,
                                                 new_assignment: ReplicaAssignment) -> None:
        assignments = self.partition_assignments.setdefault(topic_partition.topic, {})
        previous = assignments.get(topic_partition.partition)
        assignments[topic_partition.partition] = new_assignment
        leadership = self._partition_leadership_info.get(topic_partition)
        self._update_preferred_replica_imbalance_metric(topic_partition, previous, leadership,
                                                        new_assignment, leadership)

    def partition_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, tuple[int, ...]]:
        return {TopicPartition(topic, p): a.replicas for p, a in self.partition_assignments.get(topic, {}).items()}

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        return {TopicPartition(topic, p): a for p, a in self.partition_assignments.get(topic, {}).items()}

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for topic, by_partition in self.partition_assignments.items()
                for p in by_partition]

    def partitions_on_broker(self, broker_id: int) -> set[TopicPartition]:
        return {TopicPartition(topic, p) for topic, by_partition in self.partition_assignments.items()
                for p, a in by_partition.items() if broker_id in a.replicas}

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> list[PartitionAndReplica]:
        broker_ids = set(broker_ids)
        return [PartitionAndReplica(TopicPartition(topic, p), broker_id)
                for topic, by_partition in self.partition_assignments.items()
                for p, a in by_partition.items()
                for broker_id in a.replicas if broker_id in broker_ids]

    def replicas_for_topic(self, topic: str) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(TopicPartition(topic, p), r)
                for p, a in self.partition_assignments.get(topic, {}).items() for r in a.replicas]

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {})]

    def replicas_for_partition(self, partitions: Iterable[TopicPartition]) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(p, r) for p in partitions for r in self.partition_replica_assignment(p)]

    def online_and_offline_replicas(self) -> tuple[list[PartitionAndReplica], list[PartitionAndReplica]]:
        online: list[PartitionAndReplica] = []
        offline: list[PartitionAndReplica] = []
        for topic, by_partition in self.partition_assignments.items():
            for p, assignment in by_partition.items():
                tp = TopicPartition(topic, p)
                for replica in assignment.replicas:
                    target = online if self.is_replica_online(replica, tp) else offline
                    target.append(PartitionAndReplica(tp, replica))
        return online, offline

    # -- brokers ---------------------------------------------------------------------------

    def set_live_brokers(self, broker_and_epochs: Mapping[Broker, int]) -> None:
        self._live_brokers.clear()
        self._live_broker_epochs.clear()
        self.add_live_brokers(broker_and_epochs)

    def add_live_brokers(self, broker_and_epochs: Mapping[Broker, int]) -> None:
        for broker, broker_epoch in broker_and_epochs.items():
            self._live_brokers[broker.id] = broker
            self._live_broker_epochs[broker.id] = broker_epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self._live_brokers.pop(broker_id, None)
            self._live_broker_epochs.pop(broker_id, None)

    def update_broker_metadata(self, old_metadata: Broker, new_metadata: Broker) -> None:
        self._live_brokers[new_metadata.id] = new_metadata

    @property
    def live_broker_ids(self) -> set[int]:
        return set(self._live_broker_epochs) - self.shutting_down_broker_ids

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self._live_broker_epochs)

    @property
    def live_or_shutting_down_brokers(self) -> list[Broker]:
        return list(self._live_brokers.values())

    @property
    def live_broker_id_and_epochs(self) -> dict[int, int]:
        return dict(self._live_broker_epochs)

    def live_or_shutting_down_broker(self, broker_id: int) -> Broker | None:
        return self._live_brokers.get(broker_id)

    def is_replica_online(self, broker_id: int, topic_partition: TopicPartition,
                          include_shutting_down_brokers: bool = False) -> bool:
        if include_shutting_down_brokers:
            broker_online = broker_id in self._live_broker_epochs
        else:
            broker_online = (broker_id in self._live_broker_epochs
                             and broker_id not in self.shutting_down_broker_ids)
        return broker_online and topic_partition not in self.replicas_on_offline_dirs.get(broker_id, ())

    def reset_context(self) -> None:
        self.topics_to_be_deleted.clear()
        self.topics_with_deletion_started.clear()
        self.topics_ineligible_for_deletion.clear()
        self.shutting_down_broker_ids.clear()
        self.epoch = 0
        self.epoch_zk_version = 0
        self._clear_topics_state()
        self._live_brokers.clear()
        self._live_broker_epochs.clear()

    # -- deletion --------------------------------------------------------------------------

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        topics = list(topics)
        self.topics_to_be_deleted.update(topics)
        for topic in topics:
            self._clean_preferred_replica_imbalance_metric(topic)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        return topic in self.topics_with_deletion_started

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    def is_topic_eligible_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted and topic not in self.topics_ineligible_for_deletion

    @property
    def topics_queued_for_deletion(self) -> set[str]:
        return self.topics_to_be_deleted

    def replicas_in_state(self, topic: str, state: ReplicaState) -> list[PartitionAndReplica]:
        return [r for r in self.replicas_for_topic(topic) if self.replica_states[r] is state]

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        return all(self.replica_states[r] is state for r in self.replicas_for_topic(topic))

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        return any(self.replica_states[r] is state for r in self.replicas_for_topic(topic))

    # -- replica and partition states ------------------------------------------------------

    def check_valid_replica_state_change(
            self, replicas: Iterable[PartitionAndReplica], target_state: ReplicaState,
    ) -> tuple[list[PartitionAndReplica], list[PartitionAndReplica]]:
        valid: list[PartitionAndReplica] = []
        invalid: list[PartitionAndReplica] = []
        for replica in replicas:
            ok = self.replica_states[replica] in target_state.valid_previous_states
            (valid if ok else invalid).append(replica)
        return valid, invalid

    def check_valid_partition_state_change(
            self, partitions: Iterable[TopicPartition], target_state: PartitionState,
    ) -> tuple[list[TopicPartition], list[TopicPartition]]:
        valid: list[TopicPartition] = []
        invalid: list[TopicPartition] = []
        for partition in partitions:
            ok = self.partition_states[partition] in target_state.valid_previous_states
            (valid if ok else invalid).append(partition)
        return valid, invalid

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        self.replica_states.pop(replica, None)

    def put_replica_state_if_not_exists(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states.setdefault(replica, state)

    def put_partition_state(self, partition: TopicPartition, target_state: PartitionState) -> None:
        current_state = self.partition_states.get(partition, PartitionState.NON_EXISTENT_PARTITION)
        self.partition_states[partition] = target_state
        self._update_partition_state_metrics(partition, current_state, target_state)

    def _update_partition_state_metrics(self, partition: TopicPartition, current_state: PartitionState,
                                        target_state: PartitionState) -> None:
        if self.is_topic_deletion_in_progress(partition.topic):
            return
        offline = PartitionState.OFFLINE_PARTITION
        if current_state is not offline and target_state is offline:
            self.offline_partition_count += 1
        elif current_state is offline and target_state is not offline:
            self.offline_partition_count -= 1

    def put_partition_state_if_not_exists(self, partition: TopicPartition, state: PartitionState) -> None:
        if partition not in self.partition_states:
            self.partition_states[partition] = state
            self._update_partition_state_metrics(partition, PartitionState.NON_EXISTENT_PARTITION, state)

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        return self.replica_states[replica]

    def partition_state(self, partition: TopicPartition) -> PartitionState:
        return self.partition_states[partition]

    def partitions_in_state(self, state: PartitionState, topic: str | None = None) -> list[TopicPartition]:
        return self.partitions_in_states({state}, topic)

    def partitions_in_states(self, states: set[PartitionState], topic: str | None = None) -> list[TopicPartition]:
        if topic is None:
            return [p for p, s in self.partition_states.items() if s in states]
        return [p for p in self.partitions_for_topic(topic) if self.partition_states.get(p) in states]

    # -- leadership ------------------------------------------------------------------------

    def put_partition_leadership_info(self, partition: TopicPartition,
                                      leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch) -> None:
        previous = self._partition_leadership_info.get(partition)
        self._partition_leadership_info[partition] = leader_isr_and_controller_epoch
        assignment = self.partition_full_replica_assignment(partition)
        self._update_preferred_replica_imbalance_metric(partition, assignment, previous, assignment,
                                                        leader_isr_and_controller_epoch)

    def partition_leadership_info(self, partition: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self._partition_leadership_info.get(partition)

    @property
    def partitions_leadership_info(self) -> Mapping[TopicPartition, LeaderIsrAndControllerEpoch]:
        return self._partition_leadership_info

    def partitions_with_leaders(self) -> set[TopicPartition]:
        return {tp for tp in self._partition_leadership_info if not self.is_topic_queued_up_for_deletion(tp.topic)}

    def partitions_with_offline_leader(self) -> set[TopicPartition]:
        return {tp for tp, info in self._partition_leadership_info.items()
                if not self.is_replica_online(info.leader_and_isr.leader, tp)
                and not self.is_topic_queued_up_for_deletion(tp.topic)}

    def partition_leaders_on_broker(self, broker_id: int) -> set[TopicPartition]:
        return {tp for tp, info in self._partition_leadership_info.items()
                if not self.is_topic_queued_up_for_deletion(tp.topic)
                and info.leader_and_isr.leader == broker_id
                and len(self.partition_replica_assignment(tp)) > 1}

    def clear_partition_leadership_info(self) -> None:
        self._partition_leadership_info.clear()

    @property
    def partition_with_leaders_count(self) -> int:
        return len(self._partition_leadership_info)

    # -- preferred-replica imbalance metric ------------------------------------------------

    def _update_preferred_replica_imbalance_metric(
            self, partition: TopicPartition,
            old_assignment: ReplicaAssignment | None, old_leadership: LeaderIsrAndControllerEpoch | None,
            new_assignment: ReplicaAssignment | None, new_leadership: LeaderIsrAndControllerEpoch | None,
    ) -> None:
        if self.is_topic_queued_up_for_deletion(partition.topic):
            return
        if old_assignment is not None and old_leadership is not None:
            if not self._has_preferred_leader(old_assignment, old_leadership):
                self.preferred_replica_imbalance_count -= 1
        if new_assignment is not None and new_leadership is not None:
            if not self._has_preferred_leader(new_assignment, new_leadership):
                self.preferred_replica_imbalance_count += 1

    def _clean_preferred_replica_imbalance_metric(self, topic: str) -> None:
        for p, assignment in self.partition_assignments.get(topic, {}).items():
            leadership = self._partition_leadership_info.get(TopicPartition(topic, p))
            if leadership is not None and not self._has_preferred_leader(assignment, leadership):
                self.preferred_replica_imbalance_count -= 1

    @staticmethod
    def _has_preferred_leader(assignment: ReplicaAssignment, leadership: LeaderIsrAndControllerEpoch) -> bool:
        if not assignment.replicas:
            return True
        preferred = assignment.replicas[0]
        # A reassignment whose preferred replica is still catching up is not an imbalance yet.
        if assignment.is_being_reassigned() and preferred in assignment.adding_replicas:
            return preferred not in leadership.leader_and_isr.isr
        return leadership.leader_and_isr.leader == preferred
