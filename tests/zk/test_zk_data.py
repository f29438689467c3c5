"""ZkData encodings against the JSON Kafka 2.8.2 writes, and the Broker/EndPoint value types.

The expected strings are written out by hand from Kafka's formats (ZkData.scala and what a
2.8.2 broker, Scala 2.13 build, leaves in ZooKeeper), never produced by the code under test.
Each is compared parsed, and where Kafka's key order is known, byte for byte too.
"""
from __future__ import annotations

import json
import uuid

import pytest

from kafka_py.core.api.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_py.core.cluster.broker import (
    Broker,
    BrokerEndPoint,
    EndPoint,
    FinalizedVersionRange,
    ListenerName,
    SecurityProtocol,
    SupportedVersionRange,
)
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.zk.zk_data import (
    BrokerIdZNode,
    BrokerInfo,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    FeatureZNode,
    FeatureZNodeStatus,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    ReplicaAssignment,
    TopicPartitionStateZNode,
    TopicZNode,
    ZkData,
    uuid_from_base64,
    uuid_to_base64,
)


class Stat:
    """Just the field TopicPartitionStateZNode.decode reads from a znode Stat."""

    def __init__(self, version: int) -> None:
        self.version = version


def parsed(data: bytes) -> object:
    return json.loads(data.decode("utf-8"))


def plaintext_broker(broker_id: int = 1, host: str = "localhost", port: int = 9092, rack: str | None = None) -> Broker:
    return Broker(broker_id, (EndPoint(host, port, ListenerName("PLAINTEXT"), SecurityProtocol.PLAINTEXT),), rack)


# -- paths ---------------------------------------------------------------------------------------

def test_paths_are_kafkas():
    tp = TopicPartition("foo", 3)
    assert ControllerZNode.path() == "/controller"
    assert ControllerEpochZNode.path() == "/controller_epoch"
    assert BrokerIdZNode.path(7) == "/brokers/ids/7"
    assert TopicZNode.path("foo") == "/brokers/topics/foo"
    assert TopicPartitionStateZNode.path(tp) == "/brokers/topics/foo/partitions/3/state"
    assert ConfigEntityZNode.path("topics", "foo") == "/config/topics/foo"
    assert ConfigEntityZNode.path("brokers", "<default>") == "/config/brokers/<default>"
    assert ConfigEntityChangeNotificationSequenceZNode.create_path() == "/config/changes/config_change_"
    assert IsrChangeNotificationSequenceZNode.path("0000000003") == "/isr_change_notification/isr_change_0000000003"
    assert LogDirEventNotificationSequenceZNode.path("0000000001") == "/log_dir_event_notification/log_dir_event_0000000001"
    assert ClusterIdZNode.path() == "/cluster/id"
    assert ReassignPartitionsZNode.path() == "/admin/reassign_partitions"
    assert FeatureZNode.path() == "/feature"


def test_persistent_paths_match_create_top_level_paths_in_kafka():
    assert ZkData.PERSISTENT_ZK_PATHS == (
        "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
        "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
        "/config/topics", "/config/clients", "/config/users", "/config/brokers", "/config/ips")


# -- controller, cluster id ------------------------------------------------------------------------

def test_controller_znode():
    expected = '{"version":1,"brokerid":3,"timestamp":"1614000000000"}'
    data = ControllerZNode.encode(3, 1614000000000)
    assert data == expected.encode()
    assert ControllerZNode.decode(expected.encode()) == 3
    assert ControllerZNode.decode(None) is None


def test_controller_epoch_is_a_bare_number():
    assert ControllerEpochZNode.encode(12) == b"12"
    assert ControllerEpochZNode.decode(b"12") == 12


def test_cluster_id_znode():
    expected = '{"version":"1","id":"aBcDeFgHiJkLmNoPqRsTuV"}'
    assert ClusterIdZNode.to_json("aBcDeFgHiJkLmNoPqRsTuV") == expected.encode()
    assert ClusterIdZNode.from_json(expected.encode()) == "aBcDeFgHiJkLmNoPqRsTuV"
    with pytest.raises(KafkaException):
        ClusterIdZNode.from_json(b"not json")


# -- broker registration ---------------------------------------------------------------------------

def test_broker_registration_v5_is_byte_identical_to_kafka():
    expected = ('{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                '"endpoints":["PLAINTEXT://localhost:9092"],"jmx_port":-1,"port":9092,"host":"localhost",'
                '"version":5,"timestamp":"1627000000000"}')
    data = BrokerInfo(plaintext_broker(), 5, -1).to_json_bytes(1627000000000)
    assert parsed(data) == json.loads(expected)
    assert data == expected.encode()


def test_broker_registration_v5_with_rack_and_two_listeners():
    broker = Broker(2, (
        EndPoint("host1", 9092, ListenerName("CLIENT"), SecurityProtocol.SSL),
        EndPoint("host1", 9093, ListenerName("REPLICATION"), SecurityProtocol.PLAINTEXT),
    ), "dc1", {"feature1": SupportedVersionRange(1, 2)})
    data = BrokerInfo(broker, 5, 9999).to_json_bytes(2233345666)
    # The top-level host/port come from the first PLAINTEXT listener, as in Kafka.
    assert parsed(data) == json.loads("""{
        "version":5, "host":"host1", "port":9093, "jmx_port":9999, "timestamp":"2233345666",
        "endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],
        "listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"},
        "rack":"dc1",
        "features":{"feature1":{"min_version":1,"max_version":2}}}""")
    info = BrokerIdZNode.decode(2, data)
    assert info.broker == broker and info.version == 5 and info.jmx_port == 9999


def test_broker_registration_without_plaintext_listener_has_null_host():
    broker = Broker(4, (EndPoint("h", 9093, ListenerName("SSL"), SecurityProtocol.SSL),))
    js = parsed(BrokerInfo(broker).to_json_bytes(1))
    assert js["host"] is None and js["port"] == -1
    assert js["endpoints"] == ["SSL://h:9093"]


@pytest.mark.parametrize("text, listener, host, port, rack, features", [
    ('{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,"port":9091}',
     "PLAINTEXT", "172.16.8.243", 9091, None, {}),
    ('{"version":2,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"1416974968782",'
     '"endpoints":["PLAINTEXT://localhost:9092"]}', "PLAINTEXT", "localhost", 9092, None, {}),
    ('{"version":3,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
     '"endpoints":["PLAINTEXT://host1:9092", "SSL://host1:9093"],"rack":"dc1"}', "SSL", "host1", 9093, "dc1", {}),
    ('{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
     '"endpoints":["CLIENT://host1:9092", "REPLICATION://host1:9093"],'
     '"listener_security_protocol_map":{"CLIENT":"SSL", "REPLICATION":"PLAINTEXT"},"rack":null}',
     "CLIENT", "host1", 9092, None, {}),
    ('{"version":5,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
     '"endpoints":["CLIENT://host1:9092", "REPLICATION://host1:9093"],'
     '"listener_security_protocol_map":{"CLIENT":"SSL", "REPLICATION":"PLAINTEXT"},"rack":"dc1",'
     '"features": {"feature1": {"min_version": 1, "max_version": 2}, "feature2": {"min_version": 2, "max_version": 4}}}',
     "CLIENT", "host1", 9092, "dc1",
     {"feature1": SupportedVersionRange(1, 2), "feature2": SupportedVersionRange(2, 4)}),
    # A future version still decodes; listener names default to security protocol names.
    ('{"foo":"bar","version":100,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"1416974968782",'
     '"endpoints":["SSL://localhost:9093"]}', "SSL", "localhost", 9093, None, {}),
])
def test_broker_registration_decodes_every_version(text, listener, host, port, rack, features):
    broker = BrokerIdZNode.decode(1, text.encode()).broker
    assert broker.id == 1
    end_point = broker.broker_end_point(listener)
    assert (end_point.host, end_point.port) == (host, port)
    assert broker.rack == rack
    assert broker.features == features


def test_broker_registration_garbage_is_a_kafka_exception():
    with pytest.raises(KafkaException, match="broker 3"):
        BrokerIdZNode.decode(3, b"{not json")


# -- topics and partition state -----------------------------------------------------------------

def test_topic_znode_version_3_with_topic_id():
    topic_id = uuid_from_base64("x2KLX0h8Sg-eqfUvzZ8SZA")
    assignment = {TopicPartition("foo", p): ReplicaAssignment((1, 2)) for p in range(3)}
    expected = ('{"partitions":{"0":[1,2],"1":[1,2],"2":[1,2]},"topic_id":"x2KLX0h8Sg-eqfUvzZ8SZA",'
                '"adding_replicas":{},"removing_replicas":{},"version":3}')
    data = TopicZNode.encode(topic_id, assignment)
    assert parsed(data) == json.loads(expected)
    assert data == expected.encode()
    decoded = TopicZNode.decode("foo", expected.encode())
    assert decoded.topic_id == topic_id
    assert decoded.assignment == assignment


def test_topic_znode_with_reassignment_in_progress_and_no_id():
    assignment = {
        TopicPartition("foo", 0): ReplicaAssignment((1, 2, 3), adding_replicas=(3,), removing_replicas=(1,)),
        TopicPartition("foo", 1): ReplicaAssignment((2, 3)),
    }
    data = TopicZNode.encode(None, assignment)
    assert parsed(data) == json.loads(
        '{"version":3,"partitions":{"0":[1,2,3],"1":[2,3]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}')
    decoded = TopicZNode.decode("foo", data)
    assert decoded.topic_id is None and decoded.assignment == assignment


def test_topic_znode_decodes_older_versions():
    v1 = TopicZNode.decode("t", b'{"version":1,"partitions":{"0":[0],"1":[1]}}')
    assert v1.assignment == {TopicPartition("t", 0): ReplicaAssignment((0,)), TopicPartition("t", 1): ReplicaAssignment((1,))}
    assert TopicZNode.decode("t", None).assignment == {}


def test_partition_state_is_byte_identical_to_kafka():
    expected = '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, [1, 2], 5), 1)
    data = TopicPartitionStateZNode.encode(state)
    assert data == expected.encode()
    # zk_version comes from the znode's stat, not the JSON.
    assert TopicPartitionStateZNode.decode(expected.encode(), Stat(7)) == \
        LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 7), 1)
    assert TopicPartitionStateZNode.decode(None, Stat(0)) is None


# -- configs and notifications ---------------------------------------------------------------------

def test_config_znode():
    data = ConfigEntityZNode.encode({"cleanup.policy": "compact", "retention.ms": 1000, "preallocate": True})
    assert parsed(data) == json.loads(
        '{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000","preallocate":"true"}}')
    assert data.startswith(b'{"version":1,"config":{')
    assert ConfigEntityZNode.decode(data) == {"cleanup.policy": "compact", "retention.ms": "1000",
                                              "preallocate": "true"}
    assert ConfigEntityZNode.decode(None) == {}
    assert ConfigEntityZNode.encode({}) == b'{"version":1,"config":{}}'


def test_config_change_notification():
    assert ConfigEntityChangeNotificationSequenceZNode.encode("topics/foo") == \
        b'{"version":2,"entity_path":"topics/foo"}'


def test_isr_change_notification():
    data = IsrChangeNotificationSequenceZNode.encode([TopicPartition("a", 0), TopicPartition("b", 2)])
    assert parsed(data) == json.loads(
        '{"version":1,"partitions":[{"topic":"a","partition":0},{"topic":"b","partition":2}]}')
    assert IsrChangeNotificationSequenceZNode.decode(data) == {TopicPartition("a", 0), TopicPartition("b", 2)}
    assert IsrChangeNotificationSequenceZNode.sequence_number(
        "/isr_change_notification/isr_change_0000000012") == "0000000012"


def test_log_dir_event_notification():
    data = LogDirEventNotificationSequenceZNode.encode(5)
    assert data == b'{"version":1,"broker":5,"event":1}'
    assert LogDirEventNotificationSequenceZNode.decode(data) == 5


def test_reassignment_and_preferred_election():
    reassignment = {TopicPartition("foo", 1): (1, 2, 3)}
    data = ReassignPartitionsZNode.encode(reassignment)
    assert data == b'{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3]}]}'
    assert ReassignPartitionsZNode.decode(data) == reassignment
    with pytest.raises(ValueError):
        ReassignPartitionsZNode.decode(b'{"version":1}')
    data = PreferredReplicaElectionZNode.encode([TopicPartition("foo", 0)])
    assert data == b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert PreferredReplicaElectionZNode.decode(data) == {TopicPartition("foo", 0)}


def test_feature_znode():
    node = FeatureZNode(FeatureZNodeStatus.ENABLED, {"f": FinalizedVersionRange(1, 3)})
    data = FeatureZNode.encode(node)
    assert parsed(data) == json.loads(
        '{"version":1,"status":1,"features":{"f":{"min_version_level":1,"max_version_level":3}}}')
    assert FeatureZNode.decode(data) == node
    assert FeatureZNode.encode(FeatureZNode(FeatureZNodeStatus.DISABLED)) == b'{"features":{},"version":1,"status":0}'
    with pytest.raises(ValueError, match="status"):
        FeatureZNode.decode(b'{"version":1,"status":7,"features":{}}')


def test_producer_id_block():
    data = ProducerIdBlockZNode.encode(2, 1000, 1999)
    assert data == b'{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}'
    assert ProducerIdBlockZNode.decode(data) == (2, 1000, 1999)


def test_uuid_text_form_is_kafkas_base64():
    value = uuid.UUID("c7628b5f-487c-4a0f-9ea9-f52fcd9f1264")
    assert uuid_to_base64(value) == "x2KLX0h8Sg-eqfUvzZ8SZA"
    assert uuid_from_base64("x2KLX0h8Sg-eqfUvzZ8SZA") == value
    with pytest.raises(ValueError):
        uuid_from_base64("AAAA")


# -- value types ---------------------------------------------------------------------------------

def test_replica_assignment_reassign_to():
    current = ReplicaAssignment((1, 2, 3))
    moving = current.reassign_to([3, 4, 5])
    assert moving == ReplicaAssignment((3, 4, 5, 1, 2), adding_replicas=(4, 5), removing_replicas=(1, 2))
    assert moving.origin_replicas == (3, 1, 2)
    assert moving.target_replicas == (3, 4, 5)
    assert moving.is_being_reassigned() and not current.is_being_reassigned()
    assert moving.remove_replica(4) == ReplicaAssignment((3, 5, 1, 2), (5,), (1, 2))


def test_leader_and_isr():
    lai = LeaderAndIsr.of(1, [1, 2])
    assert (lai.leader_epoch, lai.zk_version) == (0, 0)
    moved = lai.new_leader_and_isr(2, [2])
    assert (moved.leader, moved.leader_epoch, moved.isr) == (2, 1, (2,))
    assert moved.with_zk_version(4).zk_version == 4
    assert LeaderAndIsr(-1, 3, (), 0).leader_opt is None
    assert lai.equals_ignore_zk(lai.with_zk_version(9))


@pytest.mark.parametrize("text, host, port, listener", [
    ("PLAINTEXT://localhost:9092", "localhost", 9092, "PLAINTEXT"),
    ("plaintext://local_host:9092", "local_host", 9092, "PLAINTEXT"),
    ("PLAINTEXT://:9092", None, 9092, "PLAINTEXT"),
    ("PLAINTEXT://[::1]:9092", "::1", 9092, "PLAINTEXT"),
    ("PLAINTEXT://[fe80::b1da:69ca:57f7:63d8%3]:9092", "fe80::b1da:69ca:57f7:63d8%3", 9092, "PLAINTEXT"),
    ("SSL://MyHostname:-1", "MyHostname", -1, "SSL"),
])
def test_end_point_parsing(text, host, port, listener):
    end_point = EndPoint.create_end_point(text)
    assert (end_point.host, end_point.port, end_point.listener_name) == (host, port, ListenerName(listener))
    # Round trip through the connection string (listener names normalised to upper case).
    assert EndPoint.create_end_point(end_point.connection_string) == end_point


def test_end_point_errors_and_custom_listener_names():
    with pytest.raises(ValueError, match="No security protocol defined for listener CLIENT"):
        EndPoint.create_end_point("CLIENT://h:1")
    end_point = EndPoint.create_end_point("client://h:1", {ListenerName("CLIENT"): SecurityProtocol.SASL_SSL})
    assert end_point.security_protocol is SecurityProtocol.SASL_SSL
    with pytest.raises(ValueError, match="Unable to parse"):
        EndPoint.create_end_point("localhost:9092")
    assert BrokerEndPoint.create_broker_end_point(1, "[::1]:9092") == BrokerEndPoint(1, "::1", 9092)


def test_broker_rejects_duplicate_listeners_and_finds_nodes():
    end_point = EndPoint("h", 1, ListenerName("PLAINTEXT"), SecurityProtocol.PLAINTEXT)
    with pytest.raises(ValueError, match="more than one end point"):
        Broker(1, (end_point, end_point))
    broker = plaintext_broker(3, rack="r1")
    node = broker.node("PLAINTEXT")
    assert (node.id, node.host, node.port, node.rack) == (3, "localhost", 9092, "r1")
    assert broker.get_node("SSL") is None
    assert {broker: 1}[plaintext_broker(3, rack="r1")] == 1



def _zk_data():
    from kafka_py.core.zk import zk_data

    return zk_data


@pytest.mark.parametrize("decoder, data", [
    ("IsrChangeNotificationSequenceZNode", b'{"version":1,"piattirons":[]}'),
    ("TopicZNode", b'{"version":2,"partitions":[0,1]}'),
    ("ControllerZNode", b'[1]'),
    ("ReassignPartitionsZNode", b'{"partitions":[{"topic":"t"}]}'),
])
def test_json_that_parses_but_does_not_fit_raises_value_error(decoder, data):
    """A missing or mistyped field is refused as Kafka's Json refuses it: ValueError, not
    whatever the decoder tripped on."""
    decode = getattr(_zk_data(), decoder).decode
    with pytest.raises(ValueError, match="ZNode.decode|invalid reassignment"):
        decode("t", data) if decoder == "TopicZNode" else decode(data)
