"""Port of core/src/main/scala/kafka/zk/AdminZkClient.scala, with the replica placement of
core/src/main/scala/kafka/admin/AdminUtils.scala and the topic name rules of
clients/.../common/internals/Topic.java.

Topic administration in a ZooKeeper-based Kafka is writing znodes and letting the controller
react: a topic is created by writing its config and /brokers/topics/<t>; deleted by creating
/admin/delete_topics/<t>; grown by rewriting the assignment; a config change is the config
znode plus a /config/changes/config_change_<seq> notification that every broker watches.
"""
from __future__ import annotations

import enum
import logging
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from kazoo.exceptions import NodeExistsError

from kafka_py.clients.common.errors import AdminOperationException, KafkaException, UnknownTopicOrPartitionException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.zk.zk_data import ConfigEntityName, ConfigType, ReplicaAssignment, TopicZNode, random_uuid

if TYPE_CHECKING:
    # ZooKeeper mode only: a KRaft node imports this module without the ZooKeeper client.
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)


from kafka_py.clients.common.errors import (  # noqa: E402  (re-exported for callers of this module)
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TopicExistsException,
)


class TopicAlreadyMarkedForDeletionException(KafkaException):
    pass


class Topic:
    """Topic name rules (common/internals/Topic.java)."""

    GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
    TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
    INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})
    MAX_NAME_LENGTH = 249
    _LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

    @staticmethod
    def validate(topic: str) -> None:
        if not topic:
            raise InvalidTopicException("Topic name is illegal, it can't be empty")
        if topic in (".", ".."):
            raise InvalidTopicException('Topic name cannot be "." or ".."')
        if len(topic) > Topic.MAX_NAME_LENGTH:
            raise InvalidTopicException(f"Topic name is illegal, it can't be longer than {Topic.MAX_NAME_LENGTH} "
                                        f"characters, topic name: {topic}")
        if not set(topic) <= Topic._LEGAL:
            raise InvalidTopicException(f'Topic name "{topic}" is illegal, it contains a character other than '
                                        "ASCII alphanumerics, '.', '_' and '-'")

    @staticmethod
    def is_valid(topic: str) -> bool:
        """Whether ``validate`` accepts the name (Topic.isValid of Kafka 3.x)."""
        try:
            Topic.validate(topic)
        except InvalidTopicException:
            return False
        return True

    @staticmethod
    def is_internal(topic: str) -> bool:
        return topic in Topic.INTERNAL_TOPICS

    @staticmethod
    def has_collision_chars(topic: str) -> bool:
        # '.' and '_' collide in metric names, so topics differing only by them are refused.
        return "_" in topic or "." in topic

    @staticmethod
    def has_collision(topic_a: str, topic_b: str) -> bool:
        return topic_a.replace(".", "_") == topic_b.replace(".", "_")


class RackAwareMode(enum.Enum):
    DISABLED = "disabled"
    ENFORCED = "enforced"
    SAFE = "safe"


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


class AdminUtils:
    """Replica placement (AdminUtils.assignReplicasToBrokers).

    Without racks: partition p's first replica is broker (p + start) mod n, and followers
    follow at a shift that grows by one every n partitions, spreading leaders and followers.
    With racks: brokers are interleaved rack by rack first, then the same walk skips brokers
    whose rack (or the broker itself) already holds a replica while others do not.
    """

    _rand = random.Random()

    @staticmethod
    def assign_replicas_to_brokers(broker_metadatas: Sequence[BrokerMetadata], n_partitions: int,
                                   replication_factor: int, fixed_start_index: int = -1,
                                   start_partition_id: int = -1) -> dict[int, list[int]]:
        if n_partitions <= 0:
            raise InvalidPartitionsException("Number of partitions must be larger than 0.")
        if replication_factor <= 0:
            raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
        if replication_factor > len(broker_metadatas):
            raise InvalidReplicationFactorException(
                f"Replication factor: {replication_factor} larger than available brokers: {len(broker_metadatas)}.")
        if all(b.rack is None for b in broker_metadatas):
            return AdminUtils._rack_unaware(n_partitions, replication_factor, [b.id for b in broker_metadatas],
                                            fixed_start_index, start_partition_id)
        if any(b.rack is None for b in broker_metadatas):
            raise AdminOperationException("Not all brokers have rack information for replica rack aware assignment.")
        return AdminUtils._rack_aware(n_partitions, replication_factor, broker_metadatas, fixed_start_index,
                                      start_partition_id)

    @staticmethod
    def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
        shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
        return (first_replica_index + shift) % n_brokers

    @staticmethod
    def _rack_unaware(n_partitions: int, replication_factor: int, broker_list: list[int],
                      fixed_start_index: int, start_partition_id: int) -> dict[int, list[int]]:
        n = len(broker_list)
        start_index = fixed_start_index if fixed_start_index >= 0 else AdminUtils._rand.randrange(n)
        next_replica_shift = fixed_start_index if fixed_start_index >= 0 else AdminUtils._rand.randrange(n)
        current = max(0, start_partition_id)
        result: dict[int, list[int]] = {}
        for _ in range(n_partitions):
            if current > 0 and current % n == 0:
                next_replica_shift += 1
            first = (current + start_index) % n
            replicas = [broker_list[first]]
            for j in range(replication_factor - 1):
                replicas.append(broker_list[AdminUtils._replica_index(first, next_replica_shift, j, n)])
            result[current] = replicas
            current += 1
        return result

    @staticmethod
    def rack_alternated_broker_list(broker_rack_map: Mapping[int, str]) -> list[int]:
        by_rack: dict[str, list[int]] = {}
        for broker_id, rack in broker_rack_map.items():
            by_rack.setdefault(rack, []).append(broker_id)
        iterators = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
        racks = sorted(iterators)
        result: list[int] = []
        rack_index = 0
        while len(result) < len(broker_rack_map):
            broker_id = next(iterators[racks[rack_index]], None)
            if broker_id is not None:
                result.append(broker_id)
            rack_index = (rack_index + 1) % len(racks)
        return result

    @staticmethod
    def _rack_aware(n_partitions: int, replication_factor: int, broker_metadatas: Sequence[BrokerMetadata],
                    fixed_start_index: int, start_partition_id: int) -> dict[int, list[int]]:
        broker_rack_map = {b.id: b.rack for b in broker_metadatas if b.rack is not None}
        num_racks = len(set(broker_rack_map.values()))
        arranged = AdminUtils.rack_alternated_broker_list(broker_rack_map)
        num_brokers = len(arranged)
        start_index = fixed_start_index if fixed_start_index >= 0 else AdminUtils._rand.randrange(num_brokers)
        next_replica_shift = fixed_start_index if fixed_start_index >= 0 else AdminUtils._rand.randrange(num_brokers)
        current = max(0, start_partition_id)
        result: dict[int, list[int]] = {}
        for _ in range(n_partitions):
            if current > 0 and current % num_brokers == 0:
                next_replica_shift += 1
            first = (current + start_index) % num_brokers
            leader = arranged[first]
            replicas = [leader]
            racks_with_replicas = {broker_rack_map[leader]}
            brokers_with_replicas = {leader}
            k = 0
            for _ in range(replication_factor - 1):
                while True:
                    broker = arranged[AdminUtils._replica_index(first, next_replica_shift * num_racks, k, num_brokers)]
                    rack = broker_rack_map[broker]
                    k += 1
                    if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                            and (broker not in brokers_with_replicas or len(brokers_with_replicas) == num_brokers)):
                        replicas.append(broker)
                        racks_with_replicas.add(rack)
                        brokers_with_replicas.add(broker)
                        break
            result[current] = replicas
            current += 1
        return result


def _validate_log_config(config: Mapping[str, Any]) -> None:
    from kafka_py.log.log_config import LogConfig

    LogConfig.validate(config)


class AdminZkClient:
    def __init__(self, zk_client: KafkaZkClient) -> None:
        self.zk_client = zk_client

    # -- topics ----------------------------------------------------------------------------------

    def create_topic(self, topic: str, partitions: int, replication_factor: int,
                     topic_config: Mapping[str, Any] | None = None,
                     rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED, uses_topic_id: bool = True) -> None:
        """Create a topic with a generated assignment. ``uses_topic_id`` defaults to True: a 2.8
        broker (inter.broker.protocol.version 2.8) writes topic ids when it creates topics."""
        broker_metadatas = self.get_broker_metadatas(rack_aware_mode)
        assignment = AdminUtils.assign_replicas_to_brokers(broker_metadatas, partitions, replication_factor)
        self.create_topic_with_assignment(topic, topic_config or {}, assignment, uses_topic_id=uses_topic_id)

    def get_broker_metadatas(self, rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED,
                             broker_list: Iterable[int] | None = None) -> list[BrokerMetadata]:
        all_brokers = self.zk_client.get_all_brokers_in_cluster()
        if broker_list is not None:
            wanted = set(broker_list)
            brokers = [b for b in all_brokers if b.id in wanted]
        else:
            brokers = all_brokers
        with_rack = [b for b in brokers if b.rack is not None]
        if rack_aware_mode is RackAwareMode.ENFORCED and with_rack and len(with_rack) < len(brokers):
            raise AdminOperationException("Not all brokers have rack information. Add --disable-rack-aware in "
                                          "command line to make replica assignment without rack information.")
        if rack_aware_mode is RackAwareMode.DISABLED or (
                rack_aware_mode is RackAwareMode.SAFE and len(with_rack) < len(brokers)):
            metadatas = [BrokerMetadata(b.id, None) for b in brokers]
        else:
            metadatas = [BrokerMetadata(b.id, b.rack) for b in brokers]
        return sorted(metadatas, key=lambda m: m.id)

    def create_topic_with_assignment(self, topic: str, config: Mapping[str, Any],
                                     partition_replica_assignment: Mapping[int, Sequence[int]],
                                     validate: bool = True, uses_topic_id: bool = True) -> None:
        if validate:
            self.validate_topic_create(topic, partition_replica_assignment, config)
        logger.info("Creating topic %s with configuration %s and initial partition assignment %s",
                    topic, dict(config), dict(partition_replica_assignment))
        # The config goes first: the controller reacts to the topic znode, and brokers creating
        # the log must find its overrides already in place. (Not atomic with the assignment.)
        self.zk_client.set_or_create_entity_configs(ConfigType.TOPIC, topic, config)
        self._write_topic_partition_assignment(
            topic, {p: ReplicaAssignment(tuple(r)) for p, r in partition_replica_assignment.items()},
            is_update=False, uses_topic_id=uses_topic_id)

    def create_topics_with_assignments(self, topics: Sequence[tuple[str, Mapping[str, Any], Mapping[int, Sequence[int]]]],
                                       uses_topic_id: bool = True) -> dict[str, Exception | None]:
        """create_topic_with_assignment(validate=False) of many (topic, config, assignment),
        their ZooKeeper writes pipelined: every topic's config first, then every topic znode,
        so the controller finds the overrides in place as it does one topic at a time.
        Kafka writes topic after topic, two round trips each; a CreateTopics of a hundred
        topics is then two round trips in all. Per topic None, or the error (as the
        one-topic way raises it)."""
        for topic, config, assignment in topics:
            logger.info("Creating topic %s with configuration %s and initial partition assignment %s",
                        topic, dict(config), dict(assignment))
        errors: dict[str, Exception | None] = dict(self.zk_client.set_or_create_entities_configs(
            ConfigType.TOPIC, {topic: config for topic, config, _ in topics}))
        to_create = {topic: (random_uuid() if uses_topic_id else None,
                             {TopicPartition(topic, p): tuple(r) for p, r in assignment.items()})
                     for topic, _, assignment in topics if errors.get(topic) is None}
        for topic, error in self.zk_client.create_topic_assignments(to_create).items():
            if isinstance(error, NodeExistsError):
                error = TopicExistsException(f"Topic '{topic}' already exists.")
            elif error is not None:
                error = AdminOperationException(str(error))
            errors[topic] = error
        return errors

    def validate_topic_create(self, topic: str, partition_replica_assignment: Mapping[int, Sequence[int]],
                              config: Mapping[str, Any], all_topics: "set[str] | None" = None) -> None:
        """``all_topics``: the topics of the cluster, read once for many validations (the
        topics of a CreateTopics request); without it, ZooKeeper is asked."""
        Topic.validate(topic)
        if topic in all_topics if all_topics is not None else self.zk_client.topic_exists(topic):
            raise TopicExistsException(f"Topic '{topic}' already exists.")
        if Topic.has_collision_chars(topic):
            if all_topics is None:
                all_topics = self.zk_client.get_all_topics_in_cluster()
            # Checked again: the topic may have been created since the first check.
            if topic in all_topics:
                raise TopicExistsException(f"Topic '{topic}' already exists.")
            colliding = sorted(t for t in all_topics if Topic.has_collision(topic, t))
            if colliding:
                raise InvalidTopicException(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")
        if len({len(r) for r in partition_replica_assignment.values()}) != 1:
            raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
        for replicas in partition_replica_assignment.values():
            if len(replicas) != len(set(replicas)):
                raise InvalidReplicaAssignmentException(
                    f"Duplicate replica assignment found: {dict(partition_replica_assignment)}")
        if sorted(partition_replica_assignment) != list(range(len(partition_replica_assignment))):
            raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
        _validate_log_config(config)

    def _write_topic_partition_assignment(self, topic: str, replica_assignment: Mapping[int, ReplicaAssignment],
                                          is_update: bool, uses_topic_id: bool = False) -> None:
        assignment = {TopicPartition(topic, p): ra for p, ra in replica_assignment.items()}
        try:
            if not is_update:
                topic_id = random_uuid() if uses_topic_id else None
                self.zk_client.create_topic_assignment(topic, topic_id,
                                                       {tp: ra.replicas for tp, ra in assignment.items()})
            else:
                topic_ids = self.zk_client.get_topic_ids_for_topics([topic])
                self.zk_client.set_topic_assignment(topic, topic_ids.get(topic), assignment)
            logger.debug("Updated path %s with %s for replica assignment", TopicZNode.path(topic), assignment)
        except NodeExistsError:
            raise TopicExistsException(f"Topic '{topic}' already exists.") from None
        except Exception as e:
            raise AdminOperationException(str(e)) from e

    def delete_topic(self, topic: str) -> None:
        """Mark the topic for deletion; the controller does the rest."""
        if not self.zk_client.topic_exists(topic):
            raise UnknownTopicOrPartitionException(f"Topic `{topic}` to delete does not exist")
        try:
            self.zk_client.create_delete_topic_path(topic)
        except NodeExistsError:
            raise TopicAlreadyMarkedForDeletionException(f"topic {topic} is already marked for deletion") from None
        except Exception as e:
            raise AdminOperationException(str(e)) from e

    def add_partitions(self, topic: str, existing_assignment: Mapping[int, ReplicaAssignment],
                       all_brokers: Sequence[BrokerMetadata], num_partitions: int = 1,
                       replica_assignment: Mapping[int, Sequence[int]] | None = None,
                       validate_only: bool = False) -> dict[int, tuple[int, ...]]:
        proposed = self.create_new_partitions_assignment(topic, existing_assignment, all_brokers, num_partitions,
                                                         replica_assignment)
        if validate_only:
            combined = {**existing_assignment, **proposed}
        else:
            combined = self.create_partitions_with_assignment(topic, existing_assignment, proposed)
        return {p: ra.replicas for p, ra in combined.items()}

    def create_new_partitions_assignment(self, topic: str, existing_assignment: Mapping[int, ReplicaAssignment],
                                         all_brokers: Sequence[BrokerMetadata], num_partitions: int = 1,
                                         replica_assignment: Mapping[int, Sequence[int]] | None = None,
                                         ) -> dict[int, ReplicaAssignment]:
        if 0 not in existing_assignment:
            raise AdminOperationException(f"Unexpected existing replica assignment for topic '{topic}', partition "
                                          f"id 0 is missing. Assignment: {dict(existing_assignment)}")
        partition0 = existing_assignment[0].replicas
        partitions_to_add = num_partitions - len(existing_assignment)
        if partitions_to_add <= 0:
            raise InvalidPartitionsException(
                f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
                f"{len(existing_assignment)} partitions, {num_partitions} would not be an increase.")
        if replica_assignment is not None:
            self._validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in all_brokers})
            proposed = {p: list(r) for p, r in replica_assignment.items()}
        else:
            # Continue the existing placement: start from partition 0's leader's position.
            start_index = next((i for i, b in enumerate(all_brokers) if b.id >= partition0[0]), 0)
            proposed = AdminUtils.assign_replicas_to_brokers(all_brokers, partitions_to_add, len(partition0),
                                                             start_index, len(existing_assignment))
        return {p: ReplicaAssignment(tuple(r)) for p, r in proposed.items()}

    def create_partitions_with_assignment(self, topic: str, existing_assignment: Mapping[int, ReplicaAssignment],
                                          new_partition_assignment: Mapping[int, ReplicaAssignment],
                                          ) -> dict[int, ReplicaAssignment]:
        logger.info("Creating %d partitions for '%s' with the following replica assignment: %s.",
                    len(new_partition_assignment), topic, dict(new_partition_assignment))
        combined = {**existing_assignment, **new_partition_assignment}
        self._write_topic_partition_assignment(topic, combined, is_update=True)
        return combined

    @staticmethod
    def _validate_replica_assignment(replica_assignment: Mapping[int, Sequence[int]], expected_replication_factor: int,
                                     available_broker_ids: set[int]) -> None:
        for partition_id, replicas in replica_assignment.items():
            if not replicas:
                raise InvalidReplicaAssignmentException(
                    f"Cannot have replication factor of 0 for partition id {partition_id}.")
            if len(replicas) != len(set(replicas)):
                raise InvalidReplicaAssignmentException(
                    "Duplicate brokers not allowed in replica assignment: "
                    f"{', '.join(map(str, replicas))} for partition id {partition_id}.")
            if not set(replicas) <= available_broker_ids:
                raise BrokerNotAvailableException(
                    f"Some brokers specified for partition id {partition_id} are not available. "
                    f"Specified brokers: {', '.join(map(str, replicas))}, "
                    f"available brokers: {', '.join(map(str, sorted(available_broker_ids)))}.")
        bad = sorted((p, len(r)) for p, r in replica_assignment.items() if len(r) != expected_replication_factor)
        if bad:
            raise InvalidReplicaAssignmentException(
                "Inconsistent replication factor between partitions, partition 0 has "
                f"{expected_replication_factor} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
                f"replication factors [{', '.join(str(rf) for _, rf in bad)}], respectively.")

    # -- configs ---------------------------------------------------------------------------------

    @staticmethod
    def parse_broker(broker: str) -> int | None:
        if broker == ConfigEntityName.DEFAULT:
            return None
        try:
            return int(broker)
        except ValueError:
            raise ValueError(f"Error parsing broker {broker}. The broker's Entity Name must be a single integer "
                             "value") from None

    def change_configs(self, entity_type: str, entity_name: str, configs: Mapping[str, Any]) -> None:
        if entity_type == ConfigType.TOPIC:
            self.change_topic_config(entity_name, configs)
        elif entity_type == ConfigType.BROKER:
            self.change_broker_config(self.parse_broker(entity_name), configs)
        elif entity_type in (ConfigType.CLIENT, ConfigType.USER, ConfigType.IP):
            # Quota configs: stored and announced like the others (kafka-py enforces no quotas).
            self._change_entity_config(entity_type, entity_name, configs)
        else:
            raise ValueError(f"{entity_type} is not a known entityType. Should be one of {list(ConfigType.ALL)}")

    def validate_topic_config(self, topic: str, configs: Mapping[str, Any]) -> None:
        Topic.validate(topic)
        if not self.zk_client.topic_exists(topic):
            raise UnknownTopicOrPartitionException(f"Topic '{topic}' does not exist.")
        _validate_log_config(configs)

    def change_topic_config(self, topic: str, configs: Mapping[str, Any]) -> None:
        self.validate_topic_config(topic, configs)
        self._change_entity_config(ConfigType.TOPIC, topic, configs)

    def change_broker_config(self, broker: int | None | Iterable[int], configs: Mapping[str, Any]) -> None:
        """``broker`` None means the cluster-wide default (/config/brokers/<default>)."""
        if broker is None or isinstance(broker, int):
            names = [ConfigEntityName.DEFAULT if broker is None else str(broker)]
        else:
            names = [str(b) for b in broker]
        for name in names:
            self._change_entity_config(ConfigType.BROKER, name, configs)

    def _change_entity_config(self, root_entity_type: str, full_sanitized_entity_name: str,
                              configs: Mapping[str, Any]) -> None:
        sanitized_entity_path = f"{root_entity_type}/{full_sanitized_entity_name}"
        self.zk_client.set_or_create_entity_configs(root_entity_type, full_sanitized_entity_name, configs)
        # Brokers watch /config/changes, not the config znodes themselves.
        self.zk_client.create_config_change_notification(sanitized_entity_path)

    def fetch_entity_config(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        return self.zk_client.get_entity_configs(root_entity_type, sanitized_entity_name)

    def get_all_topic_configs(self) -> dict[str, dict[str, str]]:
        return {t: self.fetch_entity_config(ConfigType.TOPIC, t) for t in self.zk_client.get_all_topics_in_cluster()}

    def fetch_all_entity_configs(self, entity_type: str) -> dict[str, dict[str, str]]:
        return {e: self.fetch_entity_config(entity_type, e)
                for e in self.zk_client.get_all_entities_with_config(entity_type)}
