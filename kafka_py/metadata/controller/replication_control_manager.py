"""Port of metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java
(Kafka 2.8.2's structure with Kafka 3.0.0's behaviour: 2.8.2 left ISR changes without
leader epoch bumps, had no unclean election, no CreatePartitions, no reassignment and no
partition metrics; those are 3.0's here, with PartitionChangeBuilder making every
partition change).

Topics and partitions: creation (placed by the ReplicaPlacer, or a manual assignment
checked against the registered brokers), deletion, new partitions, AlterIsr from
partition leaders (refused with FENCED_LEADER_EPOCH for a stale leader epoch and
INVALID_UPDATE_VERSION for a stale partition epoch), preferred and unclean leader
elections, reassignment, and the partition side of a broker's lifecycle: fencing or
unregistering a broker takes it out of every ISR and moves its leaderships, a
controlled shutdown moves its leaderships, unfencing gives leaderless partitions a
leader. Requests arrive as their kio message classes and are answered in the same
version; nothing here changes state except the replay methods.

``iterator(epoch)`` is Kafka 3.0.0's: the records a snapshot holds for this state.
"""
from __future__ import annotations

import logging
import uuid
from typing import Collection, Iterator, Sequence

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import (
    ApiException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    UnknownTopicOrPartitionException,
)
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.broker_heartbeat_reply import BrokerHeartbeatReply
from kafka_py.metadata.controller import replicas as Replicas
from kafka_py.metadata.controller.broker_control_state import BrokerControlState
from kafka_py.metadata.controller.brokers_to_isrs import BrokersToIsrs, TopicIdPartition
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.configuration_control_manager import (
    ConfigResource,
    ConfigurationControlManager,
)
from kafka_py.metadata.controller.controller_messages import make, response_module
from kafka_py.metadata.controller.controller_metrics import ControllerMetrics
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.controller.partition_change_builder import PartitionChangeBuilder
from kafka_py.metadata.controller.partition_reassignment_replicas import (
    PartitionReassignmentReplicas,
)
from kafka_py.metadata.controller.partition_reassignment_revert import (
    PartitionReassignmentRevert,
)
from kafka_py.metadata.controller.result_or_error import ResultOrError
from kafka_py.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_py.metadata.partition_registration import PartitionRegistration
from kafka_py.metadata.records.fence_broker_record.v0 import FenceBrokerRecord
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord
from kafka_py.metadata.records.partition_record.v0 import PartitionRecord
from kafka_py.metadata.records.remove_topic_record.v0 import RemoveTopicRecord
from kafka_py.metadata.records.topic_record.v0 import TopicRecord
from kafka_py.metadata.records.unfence_broker_record.v0 import UnfenceBrokerRecord
from kafka_py.metadata.records.unregister_broker_record.v0 import UnregisterBrokerRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.timeline.timeline_integer import TimelineInteger
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import AlterConfigOpType, ConfigResourceType
from kafka_py.core.utils.java_limits import SHORT_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.admin_zk_client import Topic

logger = logging.getLogger(__name__)

ZERO_UUID = uuid.UUID(int=0)
# ElectLeadersRequest's election types
PREFERRED_ELECTION = 0
UNCLEAN_ELECTION = 1


class TopicControlInfo:
    def __init__(self, name: str, snapshot_registry: SnapshotRegistry, topic_id: uuid.UUID) -> None:
        self.name = name
        self.id = topic_id
        self.parts: TimelineHashMap[int, PartitionRegistration] = TimelineHashMap(snapshot_registry)


class ReplicationControlManager:
    def __init__(self, snapshot_registry: SnapshotRegistry, default_replication_factor: int,
                 default_num_partitions: int, configuration_control: ConfigurationControlManager,
                 cluster_control: ClusterControlManager, controller_metrics: ControllerMetrics,
                 log_prefix: str = "") -> None:
        self.snapshot_registry = snapshot_registry
        self.logger = IdentLogger(logger, log_prefix)
        self.default_replication_factor = default_replication_factor
        self.default_num_partitions = default_num_partitions
        self.configuration_control = configuration_control
        self.cluster_control = cluster_control
        self.controller_metrics = controller_metrics
        self._global_partition_count = TimelineInteger(snapshot_registry)
        self._preferred_replica_imbalance_count = TimelineInteger(snapshot_registry)
        self._topics_by_name: TimelineHashMap[str, uuid.UUID] = TimelineHashMap(snapshot_registry)
        self._topics: TimelineHashMap[uuid.UUID, TopicControlInfo] = TimelineHashMap(snapshot_registry)
        self._brokers_to_isrs = BrokersToIsrs(snapshot_registry)
        # topic id -> the ids of its partitions being reassigned
        self._reassigning_topics: TimelineHashMap[uuid.UUID, tuple[int, ...]] = \
            TimelineHashMap(snapshot_registry)

    # -- replay --------------------------------------------------------------------------

    def replay_topic(self, record: TopicRecord) -> None:
        self._topics_by_name.put(record.name, record.topic_id)
        self._topics.put(record.topic_id, TopicControlInfo(record.name, self.snapshot_registry,
                                                           record.topic_id))
        self.update_metrics()
        self.logger.info("Created topic %s with topic ID %s.", record.name, record.topic_id)

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the topics as of ``epoch`` (Kafka 3.0's
        ReplicationControlIterator): per topic, its TopicRecord and a PartitionRecord per partition."""
        for topic in sorted(self._topics.values(epoch), key=lambda t: t.name):
            batch = [ApiMessageAndVersion.of(TopicRecord(name=topic.name, topic_id=topic.id))]
            for partition_id, registration in sorted(topic.parts.items(epoch)):
                batch.append(registration.to_record(topic.id, partition_id))
            yield batch

    def replay_partition(self, record: PartitionRecord) -> None:
        topic = self._topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(f"Tried to create partition {record.topic_id}:"
                               f"{record.partition_id}, but no topic with that ID was found.")
        partition_id = int(record.partition_id)
        new = PartitionRegistration.from_record(record)
        prev = topic.parts.get(partition_id)
        description = f"{topic.name}-{partition_id} with topic ID {record.topic_id}"
        if prev is None:
            self.logger.info("Created partition %s and %s.", description, new)
            topic.parts.put(partition_id, new)
            self._brokers_to_isrs.update(record.topic_id, partition_id, None, new.isr,
                                         NO_LEADER, new.leader)
            self._global_partition_count.increment()
            self._update_reassigning(record.topic_id, partition_id, False, new.is_reassigning())
            if not new.has_preferred_leader():
                self._preferred_replica_imbalance_count.increment()
        elif new != prev:
            new.maybe_log_partition_change(self.logger, description, prev)
            topic.parts.put(partition_id, new)
            self._brokers_to_isrs.update(record.topic_id, partition_id, prev.isr, new.isr,
                                         prev.leader, new.leader)
            self._update_reassigning(record.topic_id, partition_id, prev.is_reassigning(),
                                     new.is_reassigning())
            self._update_imbalance(prev, new)
        self.update_metrics()

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic = self._topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(f"Tried to change partition {record.topic_id}:"
                               f"{record.partition_id}, but no topic with that ID was found.")
        partition_id = int(record.partition_id)
        prev = topic.parts.get(partition_id)
        if prev is None:
            raise RuntimeError(f"Tried to change partition {record.topic_id}:{partition_id}, "
                               f"but no partition with that id was found.")
        new = prev.merge(record)
        self._update_reassigning(record.topic_id, partition_id, prev.is_reassigning(),
                                 new.is_reassigning())
        topic.parts.put(partition_id, new)
        self._brokers_to_isrs.update(record.topic_id, partition_id, prev.isr, new.isr,
                                     prev.leader, new.leader)
        new.maybe_log_partition_change(
            self.logger, f"{topic.name}-{partition_id} with topic ID {record.topic_id}", prev)
        self._update_imbalance(prev, new)
        self.update_metrics()

    def replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        topic = self._topics.remove(record.topic_id)
        if topic is None:
            raise Errors.UNKNOWN_TOPIC_ID.exception(
                f"Can't find topic with ID {record.topic_id} to remove.")
        self._topics_by_name.remove(topic.name)
        self._reassigning_topics.remove(record.topic_id)
        self.configuration_control.delete_topic_configs(topic.name)
        for partition in topic.parts.values():
            for broker_id in partition.isr:
                self._brokers_to_isrs.remove_topic_entry_for_broker(topic.id, broker_id)
            if not partition.has_preferred_leader():
                self._preferred_replica_imbalance_count.decrement()
            self._global_partition_count.decrement()
        self._brokers_to_isrs.remove_topic_entry_for_broker(topic.id, NO_LEADER)
        self.update_metrics()
        self.logger.info("Removed topic %s with ID %s.", topic.name, record.topic_id)

    def _update_imbalance(self, prev: PartitionRegistration, new: PartitionRegistration) -> None:
        # Kafka 3.0 only ever counted up here; this keeps the count exact both ways
        if prev.has_preferred_leader() and not new.has_preferred_leader():
            self._preferred_replica_imbalance_count.increment()
        elif not prev.has_preferred_leader() and new.has_preferred_leader():
            self._preferred_replica_imbalance_count.decrement()

    def _update_reassigning(self, topic_id: uuid.UUID, partition_id: int,
                            was_reassigning: bool, is_reassigning: bool) -> None:
        if was_reassigning == is_reassigning:
            return
        current = self._reassigning_topics.get(topic_id, ())
        if is_reassigning:
            self._reassigning_topics.put(topic_id, Replicas.copy_with(current, partition_id))
        else:
            remaining = Replicas.copy_without(current, partition_id)
            if remaining:
                self._reassigning_topics.put(topic_id, remaining)
            else:
                self._reassigning_topics.remove(topic_id)

    def update_metrics(self) -> None:
        self.controller_metrics.set_global_topics_count(len(self._topics))
        self.controller_metrics.set_global_partition_count(self._global_partition_count.get())
        self.controller_metrics.set_offline_partition_count(
            self._brokers_to_isrs.offline_partition_count())
        self.controller_metrics.set_preferred_replica_imbalance_count(
            self._preferred_replica_imbalance_count.get())

    # -- reads ---------------------------------------------------------------------------

    def get_partition(self, topic_id: uuid.UUID, partition_id: int) -> PartitionRegistration | None:
        topic = self._topics.get(topic_id)
        return None if topic is None else topic.parts.get(partition_id)

    def brokers_to_isrs(self) -> BrokersToIsrs:
        return self._brokers_to_isrs

    def topic_id(self, name: str, epoch: int = LATEST_EPOCH) -> uuid.UUID | None:
        return self._topics_by_name.get(name, epoch=epoch)

    def topic_names(self, epoch: int = LATEST_EPOCH) -> list[str]:
        return sorted(self._topics_by_name.keys(epoch))

    def partitions(self, topic_id: uuid.UUID, epoch: int = LATEST_EPOCH
                   ) -> dict[int, PartitionRegistration]:
        topic = self._topics.get(topic_id, epoch=epoch)
        return {} if topic is None else topic.parts.to_dict(epoch)

    def global_partition_count(self) -> int:
        return self._global_partition_count.get()

    def preferred_replica_imbalance_count(self) -> int:
        return self._preferred_replica_imbalance_count.get()

    def is_broker_unfenced(self, broker_id: int) -> bool:
        return self.cluster_control.unfenced(broker_id)

    def find_topic_ids(self, offset: int, names: Collection[str | None]
                       ) -> dict[str | None, ResultOrError[uuid.UUID]]:
        results: dict[str | None, ResultOrError[uuid.UUID]] = {}
        for name in names:
            if name is None:
                results[None] = ResultOrError.of_error(Errors.INVALID_REQUEST,
                                                       "Invalid null topic name.")
                continue
            topic_id = self._topics_by_name.get(name, epoch=offset)
            results[name] = (ResultOrError(topic_id) if topic_id is not None
                             else ResultOrError.of_error(Errors.UNKNOWN_TOPIC_OR_PARTITION))
        return results

    def find_topic_names(self, offset: int, ids: Collection[uuid.UUID | None]
                         ) -> dict[uuid.UUID | None, ResultOrError[str]]:
        results: dict[uuid.UUID | None, ResultOrError[str]] = {}
        for topic_id in ids:
            if topic_id is None or topic_id == ZERO_UUID:
                results[topic_id] = ResultOrError.of_error(
                    Errors.INVALID_REQUEST, f"Attempt to find topic with invalid topicId {topic_id}")
                continue
            topic = self._topics.get(topic_id, epoch=offset)
            results[topic_id] = (ResultOrError(topic.name) if topic is not None
                                 else ResultOrError.of_error(Errors.UNKNOWN_TOPIC_ID))
        return results

    # -- CreateTopics --------------------------------------------------------------------

    def create_topics(self, request) -> ControllerResult:
        """A CreateTopicsRequest's records and its CreateTopicsResponse (same version)."""
        topic_errors: dict[str, ApiError] = {}
        records: list[ApiMessageAndVersion] = []
        self._validate_new_topic_names(topic_errors, request.topics)
        for topic in request.topics:
            if topic.name in self._topics_by_name and topic.name not in topic_errors:
                topic_errors[topic.name] = ApiError(Errors.TOPIC_ALREADY_EXISTS,
                                                    f"Topic '{topic.name}' already exists.")
        config_changes = self._compute_config_changes(topic_errors, request.topics)
        config_result = self.configuration_control.incremental_alter_configs(config_changes)
        for resource, error in config_result.response.items():
            if not error.is_success():
                topic_errors[resource.name] = error
        # only the configs of topics that are created go to the log
        config_records = [r for r in config_result.records
                          if r.message.resource_name not in topic_errors]
        successes: dict[str, dict] = {}
        topic_records: list[ApiMessageAndVersion] = []
        for topic in request.topics:
            if topic.name in topic_errors:
                continue
            error = self._create_topic(topic, topic_records, successes)
            if not error.is_success():
                topic_errors[topic.name] = error
        for record in config_records:
            if record.message.resource_name in successes:
                records.append(record)
        records.extend(topic_records)
        module = response_module(request)
        results = []
        summary = []
        for topic in request.topics:
            error = topic_errors.get(topic.name)
            if error is not None:
                results.append(make(module.CreatableTopicResult, name=topic.name,
                                    error_code=error.error.error_code,
                                    error_message=error.message, configs=None))
                summary.append(f"{topic.name}: {error.error.name} ({error.message})")
            else:
                success = dict(successes[topic.name])
                if hasattr(module, "CreatableTopicConfigs"):
                    # v5+: the new topic's effective configs, as a broker would describe them
                    creation_configs = {c.name: c.value for c in (topic.configs or ())}
                    success["configs"] = tuple(
                        make(module.CreatableTopicConfigs, name=c.name, value=c.value,
                             read_only=c.read_only, config_source=c.config_source,
                             is_sensitive=c.is_sensitive)
                        for c in self.configuration_control.compute_effective_topic_configs(creation_configs))
                results.append(make(module.CreatableTopicResult, **success))
                summary.append(f"{topic.name}: SUCCESS")
        self.logger.info("createTopics result(s): %s", ", ".join(summary))
        return ControllerResult.atomic_of(records, make(module.CreateTopicsResponse,
                                                        topics=tuple(results)))

    def _create_topic(self, topic, records: list[ApiMessageAndVersion],
                      successes: dict[str, dict]) -> ApiError:
        new_parts: dict[int, PartitionRegistration] = {}
        if topic.assignments:
            if topic.replication_factor != -1:
                return ApiError(Errors.INVALID_REQUEST, "A manual partition assignment was "
                                "specified, but replication factor was not set to -1.")
            if topic.num_partitions != -1:
                return ApiError(Errors.INVALID_REQUEST, "A manual partition assignment was "
                                "specified, but numPartitions was not set to -1.")
            replication_factor: int | None = None
            for assignment in topic.assignments:
                index = int(assignment.partition_index)
                if index in new_parts:
                    return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual "
                                    f"partition assignments for partition {index}")
                try:
                    self.validate_manual_partition_assignment(assignment.broker_ids,
                                                              replication_factor)
                except ApiException as e:
                    return ApiError.from_throwable(e)
                replication_factor = len(assignment.broker_ids)
                isr = tuple(int(b) for b in assignment.broker_ids if self.cluster_control.unfenced(b))
                if not isr:
                    return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "All brokers specified in "
                                    f"the manual partition assignment for partition {index} "
                                    "are fenced.")
                new_parts[index] = PartitionRegistration(
                    Replicas.to_array(assignment.broker_ids), isr, (), (), isr[0], 0, 0)
            # partitions must be numbered 0..n-1 (Kafka 3.0 did not check; a gap would make
            # a partition that no broker could be asked about)
            if sorted(new_parts) != list(range(len(new_parts))):
                return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition "
                                "assignment must number the partitions from 0 without gaps.")
        elif topic.replication_factor < -1 or topic.replication_factor == 0:
            return ApiError(Errors.INVALID_REPLICATION_FACTOR,
                            "Replication factor was set to an invalid non-positive value.")
        elif topic.num_partitions < -1 or topic.num_partitions == 0:
            return ApiError(Errors.INVALID_PARTITIONS,
                            "Number of partitions was set to an invalid non-positive value.")
        else:
            num_partitions = (self.default_num_partitions if topic.num_partitions == -1
                              else int(topic.num_partitions))
            replication_factor = (self.default_replication_factor if topic.replication_factor == -1
                                  else int(topic.replication_factor))
            try:
                placements = self.cluster_control.place_replicas(0, num_partitions,
                                                                 replication_factor)
            except InvalidReplicationFactorException as e:
                return ApiError(Errors.INVALID_REPLICATION_FACTOR,
                                f"Unable to replicate the partition {replication_factor} "
                                f"time(s): {e}")
            for partition_id, placement in enumerate(placements):
                r = Replicas.to_array(placement)
                new_parts[partition_id] = PartitionRegistration(r, r, (), (), r[0], 0, 0)
        topic_id = uuid.uuid4()
        successes[topic.name] = dict(name=topic.name, topic_id=topic_id, error_code=0,
                                     error_message=None, num_partitions=len(new_parts),
                                     replication_factor=len(new_parts[0].replicas),
                                     configs=None)
        records.append(ApiMessageAndVersion.of(TopicRecord(name=topic.name, topic_id=topic_id)))
        for partition_id in sorted(new_parts):
            records.append(new_parts[partition_id].to_record(topic_id, partition_id))
        return ApiError.NONE  # type: ignore[attr-defined]

    @staticmethod
    def _validate_new_topic_names(topic_errors: dict[str, ApiError], topics) -> None:
        seen: set[str] = set()
        for topic in topics:
            if topic.name in topic_errors:
                continue
            if topic.name in seen:
                # Kafka's collection keys topics by name, so a repeat never reaches it
                topic_errors[topic.name] = ApiError(Errors.INVALID_REQUEST,
                                                    f"Duplicate topic name {topic.name}.")
                continue
            seen.add(topic.name)
            try:
                Topic.validate(topic.name)
            except (InvalidTopicException, Exception) as e:
                topic_errors[topic.name] = ApiError(Errors.INVALID_TOPIC_EXCEPTION, str(e))

    @staticmethod
    def _compute_config_changes(topic_errors: dict[str, ApiError], topics):
        changes = {}
        for topic in topics:
            if topic.name in topic_errors:
                continue
            configs = {c.name: (AlterConfigOpType.SET, c.value) for c in topic.configs}
            if configs:
                changes[ConfigResource(ConfigResourceType.TOPIC, topic.name)] = configs
        return changes

    # -- DeleteTopics --------------------------------------------------------------------

    def delete_topics(self, ids: Collection[uuid.UUID]) -> ControllerResult[dict[uuid.UUID, ApiError]]:
        results: dict[uuid.UUID, ApiError] = {}
        records: list[ApiMessageAndVersion] = []
        for topic_id in ids:
            try:
                self.delete_topic(topic_id, records)
                results[topic_id] = ApiError.NONE  # type: ignore[attr-defined]
            except ApiException as e:
                results[topic_id] = ApiError.from_throwable(e)
        return ControllerResult.atomic_of(records, results)

    def delete_topic(self, topic_id: uuid.UUID, records: list[ApiMessageAndVersion]) -> None:
        if self._topics.get(topic_id) is None:
            raise Errors.UNKNOWN_TOPIC_ID.exception()
        records.append(ApiMessageAndVersion.of(RemoveTopicRecord(topic_id=topic_id)))

    # -- AlterIsr ------------------------------------------------------------------------

    def alter_isr(self, request) -> ControllerResult:
        """An AlterIsrRequest from a partition leader; its AlterIsrResponse."""
        self.cluster_control.check_broker_epoch(int(request.broker_id), int(request.broker_epoch))
        module = response_module(request)
        records: list[ApiMessageAndVersion] = []
        topics = []

        def refused(index: int, error: Errors):
            return make(module.PartitionData, partition_index=index,
                        error_code=error.error_code, leader_id=NO_LEADER, leader_epoch=-1,
                        isr=(), current_isr_version=-1)

        for topic_data in request.topics:
            partitions = []
            topics.append((topic_data.name, partitions))
            topic_id = self._topics_by_name.get(topic_data.name)
            topic = None if topic_id is None else self._topics.get(topic_id)
            if topic is None:
                self.logger.info("Rejecting alterIsr request for unknown topic %s.",
                                 topic_data.name)
                for partition_data in topic_data.partitions:
                    partitions.append(refused(partition_data.partition_index,
                                              Errors.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            for partition_data in topic_data.partitions:
                partition_id = int(partition_data.partition_index)
                partition = topic.parts.get(partition_id)
                if partition is None:
                    self.logger.info("Rejecting alterIsr request for unknown partition %s-%d.",
                                     topic.name, partition_id)
                    partitions.append(refused(partition_id, Errors.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                if partition_data.leader_epoch != partition.leader_epoch:
                    self.logger.debug("Rejecting alterIsr request from node %d for %s-%d because "
                                      "the current leader epoch is %d, not %d.", request.broker_id,
                                      topic.name, partition_id, partition.leader_epoch,
                                      partition_data.leader_epoch)
                    partitions.append(refused(partition_id, Errors.FENCED_LEADER_EPOCH))
                    continue
                if request.broker_id != partition.leader:
                    self.logger.info("Rejecting alterIsr request from node %d for %s-%d because "
                                     "the current leader is %d.", request.broker_id, topic.name,
                                     partition_id, partition.leader)
                    partitions.append(refused(partition_id, Errors.INVALID_REQUEST))
                    continue
                if partition_data.current_isr_version != partition.partition_epoch:
                    self.logger.info("Rejecting alterIsr request from node %d for %s-%d because "
                                     "the current partition epoch is %d, not %d.",
                                     request.broker_id, topic.name, partition_id,
                                     partition.partition_epoch, partition_data.current_isr_version)
                    partitions.append(refused(partition_id, Errors.INVALID_UPDATE_VERSION))
                    continue
                new_isr = Replicas.to_array(partition_data.new_isr)
                if not Replicas.validate_isr(partition.replicas, new_isr):
                    self.logger.error("Rejecting alterIsr request from node %d for %s-%d because "
                                      "it specified an invalid ISR %s.", request.broker_id,
                                      topic.name, partition_id, list(new_isr))
                    partitions.append(refused(partition_id, Errors.INVALID_REQUEST))
                    continue
                if partition.leader not in new_isr:
                    # a leader may not take itself out of the ISR
                    self.logger.error("Rejecting alterIsr request from node %d for %s-%d because "
                                      "it specified an invalid ISR %s that doesn't include itself.",
                                      request.broker_id, topic.name, partition_id, list(new_isr))
                    partitions.append(refused(partition_id, Errors.INVALID_REQUEST))
                    continue
                builder = PartitionChangeBuilder(
                    partition, topic.id, partition_id, self.cluster_control.unfenced,
                    lambda name=topic.name: self.configuration_control
                    .unclean_leader_election_enabled_for_topic(name))
                builder.set_target_isr(new_isr)
                record = builder.build()
                if record is not None:
                    records.append(record)
                    change = record.message
                    partition = partition.merge(change)
                    if change.leader != request.broker_id and change.leader != NO_LEADER_CHANGE:
                        # The change finished a reassignment and moved the leadership: the
                        # old leader must learn its new state from the metadata, not from us.
                        self.logger.info("AlterIsr request from node %d for %s-%d completed the "
                                         "ongoing partition reassignment and triggered a "
                                         "leadership change. Returning FENCED_LEADER_EPOCH.",
                                         request.broker_id, topic.name, partition_id)
                        partitions.append(refused(partition_id, Errors.FENCED_LEADER_EPOCH))
                        continue
                partitions.append(make(module.PartitionData, partition_index=partition_id,
                                       error_code=Errors.NONE.error_code,
                                       leader_id=partition.leader,
                                       leader_epoch=partition.leader_epoch,
                                       isr=partition.isr,
                                       current_isr_version=partition.partition_epoch))
        response = make(module.AlterIsrResponse, error_code=Errors.NONE.error_code,
                        topics=tuple(make(module.TopicData, name=name, partitions=tuple(parts))
                                     for name, parts in topics))
        return ControllerResult.of(records, response)

    # -- broker lifecycle ----------------------------------------------------------------

    def handle_broker_fenced(self, broker_id: int, records: list[ApiMessageAndVersion]) -> None:
        """Take the broker out of every ISR, move its leaderships, then fence it."""
        registration = self.cluster_control.broker_registrations().get(broker_id)
        if registration is None:
            raise RuntimeError(f"Can't find broker registration for broker {broker_id}")
        self.generate_leader_and_isr_updates(
            "handleBrokerFenced", broker_id, NO_LEADER, records,
            self._brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        records.append(ApiMessageAndVersion.of(FenceBrokerRecord(id=broker_id,
                                                                 epoch=registration.epoch)))

    def handle_broker_unregistered(self, broker_id: int, broker_epoch: int,
                                   records: list[ApiMessageAndVersion]) -> None:
        self.generate_leader_and_isr_updates(
            "handleBrokerUnregistered", broker_id, NO_LEADER, records,
            self._brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        records.append(ApiMessageAndVersion.of(UnregisterBrokerRecord(broker_id=broker_id,
                                                                      broker_epoch=broker_epoch)))

    def handle_broker_unfenced(self, broker_id: int, broker_epoch: int,
                               records: list[ApiMessageAndVersion]) -> None:
        """Unfence the broker, and give it the leaderless partitions it can lead."""
        records.append(ApiMessageAndVersion.of(UnfenceBrokerRecord(id=broker_id, epoch=broker_epoch)))
        self.generate_leader_and_isr_updates("handleBrokerUnfenced", NO_LEADER, broker_id, records,
                                             self._brokers_to_isrs.partitions_with_no_leader())

    def process_broker_heartbeat(self, request, last_committed_offset: int
                                 ) -> ControllerResult[BrokerHeartbeatReply]:
        broker_id = int(request.broker_id)
        broker_epoch = int(request.broker_epoch)
        self.cluster_control.check_broker_epoch(broker_id, broker_epoch)
        heartbeat_manager = self.cluster_control.heartbeat_manager()
        states = heartbeat_manager.calculate_next_broker_state(
            broker_id, request, last_committed_offset,
            lambda: self._brokers_to_isrs.has_leaderships(broker_id))
        records: list[ApiMessageAndVersion] = []
        if states.current is not states.next:
            if states.next in (BrokerControlState.FENCED, BrokerControlState.SHUTDOWN_NOW):
                self.handle_broker_fenced(broker_id, records)
            elif states.next is BrokerControlState.UNFENCED:
                self.handle_broker_unfenced(broker_id, broker_epoch, records)
            elif states.next is BrokerControlState.CONTROLLED_SHUTDOWN:
                self.generate_leader_and_isr_updates(
                    f"enterControlledShutdown[{broker_id}]", broker_id, NO_LEADER, records,
                    self._brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        heartbeat_manager.touch(broker_id, states.next.fenced, int(request.current_metadata_offset))
        reply = BrokerHeartbeatReply(
            is_caught_up=request.current_metadata_offset >= last_committed_offset,
            is_fenced=states.next.fenced,
            in_controlled_shutdown=states.next.in_controlled_shutdown(),
            should_shut_down=states.next.should_shut_down)
        return ControllerResult.of(records, reply)

    def unregister_broker(self, broker_id: int) -> ControllerResult[None]:
        registration = self.cluster_control.broker_registrations().get(broker_id)
        if registration is None:
            raise Errors.BROKER_ID_NOT_REGISTERED.exception(
                f"Broker ID {broker_id} is not currently registered")
        records: list[ApiMessageAndVersion] = []
        self.handle_broker_unregistered(broker_id, registration.epoch, records)
        return ControllerResult.of(records, None)

    def maybe_fence_one_stale_broker(self) -> ControllerResult[None]:
        """Fence one broker whose session expired, if there is one; one at a time, so the
        effect of each fencing is visible before the next."""
        records: list[ApiMessageAndVersion] = []
        heartbeat_manager = self.cluster_control.heartbeat_manager()
        broker_id = heartbeat_manager.find_one_stale_broker()
        if broker_id is not None:
            self.logger.info("Fencing broker %d because its session has timed out.", broker_id)
            self.handle_broker_fenced(broker_id, records)
            heartbeat_manager.fence(broker_id)
        return ControllerResult.of(records, None)

    def generate_leader_and_isr_updates(self, context: str, broker_to_remove: int,
                                        broker_to_add: int, records: list[ApiMessageAndVersion],
                                        iterator: Iterator[TopicIdPartition]) -> None:
        """Change the partitions ``iterator`` gives: take ``broker_to_remove`` out of their
        ISR and leadership; count ``broker_to_add`` as an acceptable leader although the
        registrations still show it fenced (it is being unfenced by the same batch)."""
        old_size = len(records)

        def is_acceptable_leader(replica: int) -> bool:
            return replica != broker_to_remove and (
                replica == broker_to_add or self.cluster_control.unfenced(replica))

        for tp in iterator:
            topic = self._topics.get(tp.topic_id)
            if topic is None:
                raise RuntimeError(f"Topic ID {tp.topic_id} existed in isrMembers, but not in "
                                   f"the topics map.")
            partition = topic.parts.get(tp.partition_id)
            if partition is None:
                raise RuntimeError(f"Partition {tp} existed in isrMembers, but not in the "
                                   f"partitions map.")
            builder = PartitionChangeBuilder(
                partition, tp.topic_id, tp.partition_id, is_acceptable_leader,
                lambda name=topic.name: self.configuration_control
                .unclean_leader_election_enabled_for_topic(name))
            # (a no-op when broker_to_remove is NO_LEADER)
            builder.set_target_isr(Replicas.copy_without(partition.isr, broker_to_remove))
            record = builder.build()
            if record is not None:
                records.append(record)
        if len(records) != old_size:
            self.logger.info("%s: changing %d partition(s)", context, len(records) - old_size)

    # -- ElectLeaders --------------------------------------------------------------------

    def elect_leaders(self, request) -> ControllerResult:
        unclean_ok = self.election_type_is_unclean(int(getattr(request, "election_type",
                                                               PREFERRED_ELECTION)))
        module = response_module(request)
        records: list[ApiMessageAndVersion] = []
        results = []
        if request.topic_partitions is None:
            # every partition of every topic, as the ZooKeeper controller did
            wanted = [(name, sorted(self._topics[self._topics_by_name[name]].parts.keys()))
                      for name in sorted(self._topics_by_name.keys())]
        else:
            wanted = [(t.topic, list(t.partitions)) for t in request.topic_partitions]
        for topic_name, partition_ids in wanted:
            partition_results = []
            for partition_id in partition_ids:
                error = self.elect_leader(topic_name, int(partition_id), unclean_ok, records)
                partition_results.append(make(module.PartitionResult, partition_id=partition_id,
                                              error_code=error.error.error_code,
                                              error_message=error.message))
            results.append(make(module.ReplicaElectionResult, topic=topic_name,
                                partition_result=tuple(partition_results)))
        return ControllerResult.of(records, make(module.ElectLeadersResponse,
                                                 error_code=Errors.NONE.error_code,
                                                 replica_election_results=tuple(results)))

    @staticmethod
    def election_type_is_unclean(election_type: int) -> bool:
        if election_type not in (PREFERRED_ELECTION, UNCLEAN_ELECTION):
            raise InvalidRequestException(f"Unknown election type {election_type}")
        return election_type == UNCLEAN_ELECTION

    def elect_leader(self, topic_name: str, partition_id: int, unclean_ok: bool,
                     records: list[ApiMessageAndVersion]) -> ApiError:
        topic_id = self._topics_by_name.get(topic_name)
        if topic_id is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}")
        topic = self._topics.get(topic_id)
        if topic is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic id as {topic_id}")
        partition = topic.parts.get(partition_id)
        if partition is None:
            return ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            f"No such partition as {topic_name}-{partition_id}")
        builder = PartitionChangeBuilder(
            partition, topic_id, partition_id, self.cluster_control.unfenced,
            lambda: unclean_ok or self.configuration_control
            .unclean_leader_election_enabled_for_topic(topic_name))
        builder.set_always_elect_preferred_if_possible(True)
        record = builder.build()
        if record is None:
            if partition.leader == NO_LEADER:
                return ApiError(Errors.LEADER_NOT_AVAILABLE,
                                "Unable to find any leader for the partition.")
            if not unclean_ok and not partition.has_preferred_leader():
                # Kafka 3.0 answered NONE here; the ZooKeeper controller, and later KRaft
                # ones, say the preferred replica could not lead
                return ApiError(Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                                "Failed to elect leader for partition "
                                f"{topic_name}-{partition_id} under strategy "
                                "PreferredReplicaPartitionLeaderElectionStrategy")
            return ApiError.NONE  # type: ignore[attr-defined]
        records.append(record)
        return ApiError.NONE  # type: ignore[attr-defined]

    # -- CreatePartitions ----------------------------------------------------------------

    def create_partitions(self, request) -> ControllerResult:
        module = response_module(request)
        records: list[ApiMessageAndVersion] = []
        results = []
        for topic in request.topics:
            error = ApiError.NONE  # type: ignore[attr-defined]
            topic_records: list[ApiMessageAndVersion] = []
            try:
                self._create_partitions(topic, topic_records)
                records.extend(topic_records)
            except ApiException as e:
                error = ApiError.from_throwable(e)
            results.append(make(module.CreatePartitionsTopicResult, name=topic.name,
                                error_code=error.error.error_code, error_message=error.message))
        return ControllerResult.atomic_of(records, make(module.CreatePartitionsResponse,
                                                        results=tuple(results)))

    def _create_partitions(self, topic, records: list[ApiMessageAndVersion]) -> None:
        topic_id = self._topics_by_name.get(topic.name)
        info = None if topic_id is None else self._topics.get(topic_id)
        if info is None:
            raise UnknownTopicOrPartitionException()
        current = len(info.parts)
        if topic.count == current:
            raise InvalidPartitionsException(f"Topic already has {current} partition(s).")
        if topic.count < current:
            raise InvalidPartitionsException(
                f"The topic {topic.name} currently has {current} partition(s); {topic.count} "
                f"would not be an increase.")
        additional = int(topic.count) - current
        if topic.assignments is not None and len(topic.assignments) != additional:
            raise InvalidReplicaAssignmentException(
                f"Attempted to add {additional} additional partition(s), but only "
                f"{len(topic.assignments)} assignment(s) were specified.")
        first = next(iter(info.parts.values()), None)
        if first is None:
            raise Errors.UNKNOWN_SERVER_ERROR.exception(
                f"Invalid state: topic {topic.name} appears to have no partitions.")
        replication_factor = len(first.replicas)
        if replication_factor > SHORT_MAX:
            raise Errors.UNKNOWN_SERVER_ERROR.exception(
                f"Invalid replication factor {replication_factor}")
        start = current
        if topic.assignments is not None:
            placements, isrs = [], []
            for i, assignment in enumerate(topic.assignments):
                self.validate_manual_partition_assignment(assignment.broker_ids,
                                                          replication_factor)
                placements.append([int(b) for b in assignment.broker_ids])
                isr = [int(b) for b in assignment.broker_ids if self.cluster_control.unfenced(b)]
                if not isr:
                    raise InvalidReplicaAssignmentException(
                        "All brokers specified in the manual partition assignment for "
                        f"partition {start + i} are fenced.")
                isrs.append(isr)
        else:
            placements = self.cluster_control.place_replicas(start, additional,
                                                             replication_factor)
            isrs = placements
        for i, (placement, isr) in enumerate(zip(placements, isrs)):
            records.append(ApiMessageAndVersion.of(PartitionRecord(
                partition_id=start + i, topic_id=topic_id, replicas=tuple(placement),
                isr=tuple(isr), removing_replicas=(), adding_replicas=(), leader=isr[0],
                leader_epoch=0, partition_epoch=0)))

    def validate_manual_partition_assignment(self, assignment: Sequence[int],
                                             replication_factor: int | None) -> None:
        if not assignment:
            raise InvalidReplicaAssignmentException(
                "The manual partition assignment includes an empty replica list.")
        registrations = self.cluster_control.broker_registrations()
        prev = None
        for broker_id in sorted(int(b) for b in assignment):
            if broker_id not in registrations:
                raise InvalidReplicaAssignmentException(
                    f"The manual partition assignment includes broker {broker_id}, but no "
                    f"such broker is registered.")
            if broker_id == prev:
                raise InvalidReplicaAssignmentException(
                    f"The manual partition assignment includes the broker {prev} more than "
                    f"once.")
            prev = broker_id
        if replication_factor is not None and len(assignment) != replication_factor:
            raise InvalidReplicaAssignmentException(
                f"The manual partition assignment includes a partition with {len(assignment)} "
                f"replica(s), but this is not consistent with previous partitions, which have "
                f"{replication_factor} replica(s).")

    # -- reassignment --------------------------------------------------------------------

    def alter_partition_reassignments(self, request) -> ControllerResult:
        module = response_module(request)
        records: list[ApiMessageAndVersion] = []
        responses = []
        successful = total = 0
        for topic in request.topics:
            partitions = []
            for target in topic.partitions:
                error = ApiError.NONE  # type: ignore[attr-defined]
                try:
                    self.alter_partition_reassignment(topic.name, target, records)
                    successful += 1
                except ApiException as e:
                    self.logger.info("Unable to alter partition reassignment for %s:%d because "
                                     "of an %s error: %s", topic.name, target.partition_index,
                                     type(e).__name__, e)
                    error = ApiError.from_throwable(e)
                total += 1
                partitions.append(make(module.ReassignablePartitionResponse,
                                       partition_index=target.partition_index,
                                       error_code=error.error.error_code,
                                       error_message=error.message))
            responses.append(make(module.ReassignableTopicResponse, name=topic.name,
                                  partitions=tuple(partitions)))
        self.logger.info("Successfully altered %d out of %d partition reassignment(s).",
                         successful, total)
        return ControllerResult.atomic_of(records, make(
            module.AlterPartitionReassignmentsResponse, error_code=Errors.NONE.error_code,
            error_message=None, responses=tuple(responses)))

    def alter_partition_reassignment(self, topic_name: str, target,
                                     records: list[ApiMessageAndVersion]) -> None:
        topic_id = self._topics_by_name.get(topic_name)
        if topic_id is None:
            raise UnknownTopicOrPartitionException(f"Unable to find a topic named {topic_name}.")
        info = self._topics.get(topic_id)
        if info is None:
            raise UnknownTopicOrPartitionException(f"Unable to find a topic with ID {topic_id}.")
        partition_id = int(target.partition_index)
        part = info.parts.get(partition_id)
        if part is None:
            raise UnknownTopicOrPartitionException(
                f"Unable to find partition {topic_name}:{partition_id}.")
        tp = TopicIdPartition(topic_id, partition_id)
        if target.replicas is None:
            record = self.cancel_partition_reassignment(topic_name, tp, part)
        else:
            record = self.change_partition_reassignment(tp, part, target.replicas)
        if record is not None:
            records.append(record)

    def cancel_partition_reassignment(self, topic_name: str, tp: TopicIdPartition,
                                      part: PartitionRegistration) -> ApiMessageAndVersion | None:
        if not part.is_reassigning():
            raise Errors.NO_REASSIGNMENT_IN_PROGRESS.exception()
        revert = PartitionReassignmentRevert.of(part)
        unclean_enabled = lambda: self.configuration_control \
            .unclean_leader_election_enabled_for_topic(topic_name)  # noqa: E731
        if revert.unclean and not unclean_enabled():
            raise InvalidReplicaAssignmentException(
                f"Unable to revert partition assignment for {topic_name}:{tp.partition_id} "
                f"because it would require an unclean leader election.")
        builder = PartitionChangeBuilder(part, tp.topic_id, tp.partition_id,
                                         self.cluster_control.unfenced, unclean_enabled)
        builder.set_target_isr(revert.isr).set_target_replicas(revert.replicas) \
            .set_target_removing(()).set_target_adding(())
        return builder.build()

    def change_partition_reassignment(self, tp: TopicIdPartition, part: PartitionRegistration,
                                      target_replicas: Sequence[int]) -> ApiMessageAndVersion | None:
        """Start (or change) a reassignment: the new replicas join the replica list as
        adding replicas; once they are all in the ISR, an AlterIsr completes it (see
        PartitionChangeBuilder). A reordering of the same replicas completes at once."""
        self.validate_manual_partition_assignment(target_replicas, None)
        current = list(part.replicas)
        reassignment = PartitionReassignmentReplicas.of(current, [int(r) for r in target_replicas])
        builder = PartitionChangeBuilder(part, tp.topic_id, tp.partition_id,
                                         self.cluster_control.unfenced, lambda: False)
        if list(reassignment.merged) != current:
            builder.set_target_replicas(reassignment.merged)
        if reassignment.removing:
            builder.set_target_removing(reassignment.removing)
        if reassignment.adding:
            builder.set_target_adding(reassignment.adding)
        return builder.build()

    def list_partition_reassignments(self, request) -> object:
        module = response_module(request)
        topics = []
        if request.topics is None:
            for topic_id, partition_ids in self._reassigning_topics.items():
                self._list_reassigning_topic(module, topics, topic_id, partition_ids)
        else:
            for topic in request.topics:
                topic_id = self._topics_by_name.get(topic.name)
                if topic_id is not None:
                    self._list_reassigning_topic(module, topics, topic_id, topic.partition_indexes)
        return make(module.ListPartitionReassignmentsResponse, error_code=Errors.NONE.error_code,
                    error_message=None, topics=tuple(topics))

    def _list_reassigning_topic(self, module, topics: list, topic_id: uuid.UUID,
                                partition_ids: Sequence[int]) -> None:
        info = self._topics.get(topic_id)
        if info is None:
            return
        ongoing = []
        for partition_id in sorted(int(p) for p in partition_ids):
            partition = info.parts.get(partition_id)
            if partition is not None and partition.is_reassigning():
                ongoing.append(make(module.OngoingPartitionReassignment,
                                    partition_index=partition_id, replicas=partition.replicas,
                                    adding_replicas=partition.adding_replicas,
                                    removing_replicas=partition.removing_replicas))
        if ongoing:
            topics.append(make(module.OngoingTopicReassignment, name=info.name,
                               partitions=tuple(ongoing)))
