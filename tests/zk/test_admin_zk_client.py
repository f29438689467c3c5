"""AdminZkClient (topic and config administration through ZooKeeper) and AdminUtils placement."""
from __future__ import annotations

import json
import uuid

import pytest

from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, SecurityProtocol
from kafka_py.clients.common.errors import AdminOperationException, UnknownTopicOrPartitionException
from kafka_py.core.zk.admin_zk_client import (
    AdminUtils,
    AdminZkClient,
    BrokerMetadata,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    RackAwareMode,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
)
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import BrokerInfo, ConfigType


# -- AdminUtils: the expected assignments are those of Kafka's own AdminRackAwareTest ----------

def test_rack_unaware_assignment_matches_kafka():
    brokers = [BrokerMetadata(i) for i in range(5)]
    assert AdminUtils.assign_replicas_to_brokers(brokers, 10, 3, 0) == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    with pytest.raises(InvalidReplicationFactorException):
        AdminUtils.assign_replicas_to_brokers(brokers, 10, 0)
    with pytest.raises(InvalidReplicationFactorException):
        AdminUtils.assign_replicas_to_brokers(brokers, 10, 6)
    with pytest.raises(InvalidPartitionsException):
        AdminUtils.assign_replicas_to_brokers(brokers, 0, 1)


def test_rack_aware_assignment_matches_kafka():
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert AdminUtils.rack_alternated_broker_list(rack_map) == [0, 3, 1, 5, 4, 2]
    assert AdminUtils.rack_alternated_broker_list({k: v for k, v in rack_map.items() if k != 5}) == [0, 3, 1, 4, 2]
    brokers = [BrokerMetadata(b, r) for b, r in rack_map.items()]
    assert AdminUtils.assign_replicas_to_brokers(brokers, 7, 3, 0, 0) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}
    with pytest.raises(AdminOperationException):
        AdminUtils.assign_replicas_to_brokers(brokers + [BrokerMetadata(9)], 1, 1)


def test_rack_aware_assignment_spreads_every_partition_over_racks():
    rack_map = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    assignment = AdminUtils.assign_replicas_to_brokers([BrokerMetadata(b, r) for b, r in rack_map.items()], 6, 3, 2, 0)
    for replicas in assignment.values():
        assert len({rack_map[b] for b in replicas}) == 3


# -- against ZooKeeper -------------------------------------------------------------------------------

@pytest.fixture
def zk_client(zookeeper):
    client = KafkaZkClient(f"{zookeeper.connect_string}/test-{uuid.uuid4().hex}", session_timeout_ms=6000)
    client.create_top_level_paths()
    for broker_id in range(3):
        broker = Broker(broker_id, (EndPoint("localhost", 9092 + broker_id, ListenerName("PLAINTEXT"),
                                             SecurityProtocol.PLAINTEXT),))
        client.register_broker(BrokerInfo(broker))
    yield client
    client.close()


@pytest.fixture
def admin(zk_client) -> AdminZkClient:
    return AdminZkClient(zk_client)


def test_create_topic_writes_config_then_assignment_with_topic_id(admin, zk_client):
    admin.create_topic("events", partitions=4, replication_factor=2, topic_config={"cleanup.policy": "compact"})
    assignment = zk_client.get_replica_assignment_for_topics(["events"])
    assert sorted(tp.partition for tp in assignment) == [0, 1, 2, 3]
    for replicas in assignment.values():
        assert len(replicas) == 2 and len(set(replicas)) == 2 and set(replicas) <= {0, 1, 2}
    # Leaders spread over all brokers.
    assert {replicas[0] for replicas in assignment.values()} == {0, 1, 2}
    assert "events" in zk_client.get_topic_ids_for_topics(["events"])
    assert zk_client.get_entity_configs(ConfigType.TOPIC, "events") == {"cleanup.policy": "compact"}

    with pytest.raises(TopicExistsException):
        admin.create_topic("events", 1, 1)
    with pytest.raises(InvalidReplicationFactorException):
        admin.create_topic("wide", 1, 4)


def test_create_topic_validation(admin):
    admin.create_topic("a.b", 1, 1)
    with pytest.raises(InvalidTopicException, match="collides"):
        admin.create_topic("a_b", 1, 1)
    for bad in ("", ".", "..", "x" * 250, "spaces are bad"):
        with pytest.raises(InvalidTopicException):
            admin.create_topic(bad, 1, 1)
    with pytest.raises(InvalidReplicaAssignmentException, match="same number"):
        admin.create_topic_with_assignment("uneven", {}, {0: [0, 1], 1: [0]})
    with pytest.raises(InvalidReplicaAssignmentException, match="Duplicate"):
        admin.create_topic_with_assignment("dup", {}, {0: [1, 1]})
    with pytest.raises(InvalidReplicaAssignmentException, match="consecutive"):
        admin.create_topic_with_assignment("gap", {}, {0: [0], 2: [1]})
    with pytest.raises(Exception, match="cleanup.policy"):
        admin.create_topic_with_assignment("badconf", {"cleanup.policy": "bogus"}, {0: [0]})


def test_delete_topic_marks_it_for_the_controller(admin, zk_client):
    admin.create_topic_with_assignment("gone", {}, {0: [0]})
    admin.delete_topic("gone")
    assert zk_client.get_topic_deletions() == ["gone"]
    with pytest.raises(TopicAlreadyMarkedForDeletionException):
        admin.delete_topic("gone")
    with pytest.raises(UnknownTopicOrPartitionException):
        admin.delete_topic("never-was")


def test_add_partitions_keeps_existing_assignment_and_topic_id(admin, zk_client):
    admin.create_topic_with_assignment("grow", {}, {0: [0, 1], 1: [1, 2]})
    topic_id = zk_client.get_topic_ids_for_topics(["grow"])["grow"]
    existing = {p: ra for p, ra in zk_client.get_partition_assignment_for_topics(["grow"])["grow"].items()}
    brokers = admin.get_broker_metadatas()
    result = admin.add_partitions("grow", existing, brokers, num_partitions=4)
    assert sorted(result) == [0, 1, 2, 3]
    assert result[0] == (0, 1) and result[1] == (1, 2)
    assert all(len(r) == 2 for r in result.values())
    assert zk_client.get_topic_ids_for_topics(["grow"]) == {"grow": topic_id}
    assert zk_client.get_partitions_for_topics(["grow"]) == {"grow": [0, 1, 2, 3]}
    with pytest.raises(InvalidPartitionsException):
        admin.add_partitions("grow", zk_client.get_partition_assignment_for_topics(["grow"])["grow"], brokers, 3)
    explicit = admin.add_partitions("grow", zk_client.get_partition_assignment_for_topics(["grow"])["grow"], brokers,
                                    5, replica_assignment={4: [2, 0]})
    assert explicit[4] == (2, 0)


def test_config_changes_write_the_config_and_a_notification(admin, zk_client):
    admin.create_topic_with_assignment("conf", {}, {0: [0]})
    admin.change_topic_config("conf", {"retention.ms": "1000"})
    admin.change_broker_config(None, {"log.cleaner.threads": "2"})
    admin.change_broker_config(1, {"log.cleaner.threads": "3"})
    assert admin.fetch_entity_config(ConfigType.TOPIC, "conf") == {"retention.ms": "1000"}
    assert admin.fetch_all_entity_configs(ConfigType.BROKER) == {
        "<default>": {"log.cleaner.threads": "2"}, "1": {"log.cleaner.threads": "3"}}
    notifications = zk_client.get_config_change_notifications()
    assert notifications == [f"config_change_{n:010d}" for n in range(3)]
    paths = [json.loads(zk_client.get_data_and_stat(f"/config/changes/{n}")[0])["entity_path"] for n in notifications]
    assert paths == ["topics/conf", "brokers/<default>", "brokers/1"]
    with pytest.raises(UnknownTopicOrPartitionException):
        admin.change_topic_config("missing", {"retention.ms": "1"})
    assert admin.get_all_topic_configs() == {"conf": {"retention.ms": "1000"}}


def test_broker_metadatas_rack_modes(admin):
    assert admin.get_broker_metadatas() == [BrokerMetadata(0), BrokerMetadata(1), BrokerMetadata(2)]
    assert admin.get_broker_metadatas(RackAwareMode.SAFE, broker_list=[2, 0]) == [BrokerMetadata(0), BrokerMetadata(2)]
