"""ZkAdminManager against a real ZooKeeper: CreateTopics, DeleteTopics, CreatePartitions,
DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, with the topic purgatory waiting
on a MetadataCache fed hand-built UpdateMetadata requests."""
from __future__ import annotations

import json
import logging
import threading
import uuid

import pytest

from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, SecurityProtocol
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.update_metadata.v7 import request as um7
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.metadata_cache import MetadataCache
from kafka_py.server.zk_admin_manager import (
    AlterConfigOpType,
    ConfigDataType,
    ConfigResourceType,
    ConfigSource,
    CreatableTopic,
    ZkAdminManager,
)
from kafka_py.core.zk.admin_zk_client import AdminZkClient
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import BrokerInfo, ConfigType

TOPIC = ConfigResourceType.TOPIC
BROKER = ConfigResourceType.BROKER
BROKER_LOGGER = ConfigResourceType.BROKER_LOGGER
SET, DELETE, APPEND, SUBTRACT = (AlterConfigOpType.SET, AlterConfigOpType.DELETE, AlterConfigOpType.APPEND,
                                 AlterConfigOpType.SUBTRACT)
PLAINTEXT = SecurityProtocol.PLAINTEXT.id
BROKER_IDS = (0, 1, 2)


# -- fixtures and helpers ----------------------------------------------------------------------------

class Env:
    def __init__(self, zookeeper, tmp_path, **extra_props):
        self.connect = f"{zookeeper.connect_string}/adm-{uuid.uuid4().hex}"
        self.zk = KafkaZkClient(self.connect, session_timeout_ms=6000)
        self.zk.create_top_level_paths()
        for broker_id in BROKER_IDS:
            self.zk.register_broker(BrokerInfo(Broker(broker_id, (
                EndPoint("localhost", 9092 + broker_id, ListenerName("PLAINTEXT"), SecurityProtocol.PLAINTEXT),))))
        props = {"broker.id": "0", "zookeeper.connect": self.connect, "log.dirs": str(tmp_path / "logs"),
                 "log.segment.bytes": "2097152", **extra_props}
        self.config = KafkaConfig(props, do_log=False)
        self.dynamic_config = DynamicBrokerConfig(self.config)
        self.dynamic_config.initialize(self.zk)
        self.cache = MetadataCache(0)
        self.update_metadata({})
        self.admin = AdminZkClient(self.zk)
        self.manager = ZkAdminManager(self.config, self.cache, self.zk, dynamic_config=self.dynamic_config)
        self._correlation_id = 0

    def update_metadata(self, leaders: dict[str, dict[int, int]]) -> None:
        """Feed the cache an UpdateMetadata naming ``{topic: {partition: leader}}`` (leader -2
        deletes the partition, as the controller's LeaderDuringDelete)."""
        endpoints = lambda b: (um7.UpdateMetadataEndpoint(port=9092 + b, host="localhost", listener="PLAINTEXT",
                                                          security_protocol=PLAINTEXT),)
        topic_states = tuple(
            um7.UpdateMetadataTopicState(topic_name=topic, topic_id=uuid.UUID(int=0), partition_states=tuple(
                um7.UpdateMetadataPartitionState(partition_index=p, controller_epoch=1, leader=leader, leader_epoch=0,
                                                 isr=(max(leader, 0),), zk_version=0, replicas=(max(leader, 0),))
                for p, leader in partitions.items()))
            for topic, partitions in leaders.items())
        request = um7.UpdateMetadataRequest(
            controller_id=0, controller_epoch=1, broker_epoch=-1, topic_states=topic_states,
            live_brokers=tuple(um7.UpdateMetadataBroker(id=b, endpoints=endpoints(b), rack=None) for b in BROKER_IDS))
        self.cache.update_metadata(1, request)
        for topic in leaders:
            self.manager_try_complete(topic)

    def manager_try_complete(self, topic: str) -> None:
        manager = getattr(self, "manager", None)
        if manager is not None:
            manager.try_complete_delayed_topic_operations(topic)

    def json(self, path: str):
        data, _ = self.zk.get_data_and_stat(path)
        return None if data is None else json.loads(data)

    def close(self) -> None:
        self.manager.shutdown()
        self.zk.close()


@pytest.fixture
def env(zookeeper, tmp_path):
    e = Env(zookeeper, tmp_path)
    yield e
    e.close()


class Callback:
    """Collects the one answer of an asynchronous admin call."""

    def __init__(self):
        self.event = threading.Event()
        self.result = None
        self.calls = 0

    def __call__(self, result):
        self.calls += 1
        self.result = result
        self.event.set()

    def wait(self, timeout=20.0):
        assert self.event.wait(timeout), "no answer"
        return self.result


def create(env, topics: dict, timeout_ms=0, validate_only=False, include=True):
    cb = Callback()
    env.manager.create_topics(timeout_ms, validate_only, topics, include, cb)
    return cb


def make_topic_in_zk_and_cache(env, topic: str, partitions: int = 2, configs=None) -> None:
    env.admin.create_topic_with_assignment(topic, configs or {}, {p: [p % 3] for p in range(partitions)})
    env.update_metadata({topic: {p: p % 3 for p in range(partitions)}})


def entries(result) -> dict:
    return {e.name: e for e in result.configs}


# -- CreateTopics ------------------------------------------------------------------------------------

def test_create_topics_writes_kafka_znodes(env):
    cb = create(env, {"orders": CreatableTopic("orders", 3, 2, configs={"retention.ms": "1000"})})
    result = cb.wait()["orders"]
    # Written, but with timeout 0 nobody waited for leaders: Kafka answers REQUEST_TIMED_OUT.
    assert result.error is Errors.REQUEST_TIMED_OUT and result.num_partitions == -1

    topic_json = env.json("/brokers/topics/orders")
    assert topic_json["version"] == 3 and len(topic_json["topic_id"]) == 22  # Kafka's base64 Uuid
    assert isinstance(env.zk.get_topic_ids_for_topics(["orders"])["orders"], uuid.UUID)
    assert sorted(topic_json["partitions"]) == ["0", "1", "2"]
    for replicas in topic_json["partitions"].values():
        assert len(replicas) == 2 and len(set(replicas)) == 2 and set(replicas) <= set(BROKER_IDS)
    assert env.json("/config/topics/orders") == {"version": 1, "config": {"retention.ms": "1000"}}


def test_create_topics_defaults_and_kio_input(env):
    from kio.schema.create_topics.v5 import request as ct5

    kio_topic = ct5.CreatableTopic(name="manual", num_partitions=-1, replication_factor=-1,
                                   assignments=(ct5.CreatableReplicaAssignment(partition_index=0, broker_ids=(2, 1)),
                                                ct5.CreatableReplicaAssignment(partition_index=1, broker_ids=(1, 0))),
                                   configs=(ct5.CreatableTopicConfig(name="cleanup.policy", value="compact"),))
    cb = create(env, {"manual": kio_topic, "defaulted": CreatableTopic("defaulted")})
    results = cb.wait()
    assert {r.error for r in results.values()} == {Errors.REQUEST_TIMED_OUT}
    assert env.json("/brokers/topics/manual")["partitions"] == {"0": [2, 1], "1": [1, 0]}
    assert env.json("/config/topics/manual")["config"] == {"cleanup.policy": "compact"}
    # num.partitions=1 and default.replication.factor=1 of the broker config
    assert [len(r) for r in env.json("/brokers/topics/defaulted")["partitions"].values()] == [1]


def test_validate_only_writes_nothing_and_reports_configs(env):
    cb = create(env, {"dry": CreatableTopic("dry", 4, 3, configs={"retention.ms": "1000"})}, validate_only=True)
    result = cb.wait()["dry"]
    assert result.error is Errors.NONE
    assert (result.num_partitions, result.replication_factor) == (4, 3)
    configs = {c.name: c for c in result.configs}
    assert configs["retention.ms"].value == "1000"
    assert configs["retention.ms"].config_source == ConfigSource.TOPIC_CONFIG
    # log.segment.bytes is in the static broker properties
    assert configs["segment.bytes"].value == "2097152"
    assert configs["segment.bytes"].config_source == ConfigSource.STATIC_BROKER_CONFIG
    assert configs["max.message.bytes"].config_source == ConfigSource.DEFAULT_CONFIG
    assert not env.zk.path_exists("/brokers/topics/dry") and not env.zk.path_exists("/config/topics/dry")


def test_create_topics_error_codes(env):
    make_topic_in_zk_and_cache(env, "existing")
    env.admin.create_topic_with_assignment("only-in-zk", {}, {0: [0]})
    cb = create(env, {
        "bad/name": CreatableTopic("bad/name", 1, 1),
        "existing": CreatableTopic("existing", 1, 1),
        "only-in-zk": CreatableTopic("only-in-zk", 1, 1),
        "zero-partitions": CreatableTopic("zero-partitions", 0, 1),
        "zero-rf": CreatableTopic("zero-rf", 1, 0),
        "too-many-replicas": CreatableTopic("too-many-replicas", 1, 4),
        "bad-value": CreatableTopic("bad-value", 1, 1, configs={"retention.ms": "soon"}),
        "unknown-config": CreatableTopic("unknown-config", 1, 1, configs={"no.such.config": "1"}),
        "null-config": CreatableTopic("null-config", 1, 1, configs={"retention.ms": None}),
        "both": CreatableTopic("both", 2, -1, assignments={0: [0]}),
        "bad-assignment": CreatableTopic("bad-assignment", assignments={0: [0, 0]}),
    })
    results = cb.wait()
    errors = {name: r.error for name, r in results.items()}
    assert errors == {
        "bad/name": Errors.INVALID_TOPIC_EXCEPTION,
        "existing": Errors.TOPIC_ALREADY_EXISTS,
        "only-in-zk": Errors.TOPIC_ALREADY_EXISTS,
        "zero-partitions": Errors.INVALID_PARTITIONS,
        "zero-rf": Errors.INVALID_REPLICATION_FACTOR,
        "too-many-replicas": Errors.INVALID_REPLICATION_FACTOR,
        "bad-value": Errors.INVALID_CONFIG,
        "unknown-config": Errors.INVALID_CONFIG,
        "null-config": Errors.INVALID_REQUEST,
        "both": Errors.INVALID_REQUEST,
        "bad-assignment": Errors.INVALID_REPLICA_ASSIGNMENT,
    }
    assert "retention.ms" in results["bad-value"].message and "soon" in results["bad-value"].message
    assert "no.such.config" in results["unknown-config"].message
    assert "larger than available brokers: 3" in results["too-many-replicas"].message
    # failed topics carry no metadata and wrote nothing
    assert all(r.num_partitions == -1 and r.configs == () for r in results.values())
    children = set(env.zk.get_children("/brokers/topics"))
    assert children == {"existing", "only-in-zk"}
    assert set(env.zk.get_children("/config/topics")) <= {"existing", "only-in-zk"}


def test_delayed_create_completes_once_every_partition_has_a_leader(env):
    cb = create(env, {"waiting": CreatableTopic("waiting", 2, 1, configs={"retention.ms": "1000"})}, timeout_ms=30000)
    assert env.zk.path_exists("/brokers/topics/waiting")
    assert not cb.event.is_set() and env.manager.has_delayed_topic_operations

    env.update_metadata({"waiting": {0: 0}})  # one of two partitions has a leader
    assert not cb.event.is_set()
    env.update_metadata({"waiting": {1: -1}})  # the other is known but leaderless
    assert not cb.event.is_set()
    env.update_metadata({"waiting": {1: 1}})
    result = cb.wait()["waiting"]
    assert result.error is Errors.NONE and cb.calls == 1
    assert (result.num_partitions, result.replication_factor) == (2, 1)
    assert result.topic_id == env.zk.get_topic_ids_for_topics(["waiting"])["waiting"]
    assert {c.name: c.value for c in result.configs}["retention.ms"] == "1000"


def test_delayed_create_times_out(env):
    cb = create(env, {"slow": CreatableTopic("slow", 1, 1), "bad": CreatableTopic("bad", 0, 1)}, timeout_ms=100)
    results = cb.wait()
    assert results["slow"].error is Errors.REQUEST_TIMED_OUT
    assert results["bad"].error is Errors.INVALID_PARTITIONS
    assert cb.calls == 1


# -- DeleteTopics ------------------------------------------------------------------------------------

def test_delete_topics_marks_for_deletion(env):
    make_topic_in_zk_and_cache(env, "doomed")
    cb = Callback()
    env.manager.delete_topics(0, ["doomed", "missing"], cb)
    assert cb.wait() == {"doomed": Errors.REQUEST_TIMED_OUT, "missing": Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert env.zk.get_children("/admin/delete_topics") == ["doomed"]


def test_delayed_delete_completes_when_the_cache_drops_the_topic(env):
    make_topic_in_zk_and_cache(env, "doomed", partitions=2)
    cb = Callback()
    env.manager.delete_topics(30000, ["doomed"], cb)
    assert not cb.event.is_set()
    # marking twice is fine: the second call waits for the same deletion
    cb2 = Callback()
    env.manager.delete_topics(30000, ["doomed"], cb2)
    env.update_metadata({"doomed": {0: -2}})
    assert not cb.event.is_set()
    env.update_metadata({"doomed": {1: -2}})
    assert cb.wait() == {"doomed": Errors.NONE}
    assert cb2.wait() == {"doomed": Errors.NONE}


def test_delete_topics_disabled(zookeeper, tmp_path):
    e = Env(zookeeper, tmp_path, **{"delete.topic.enable": "false"})
    try:
        make_topic_in_zk_and_cache(e, "kept")
        cb = Callback()
        e.manager.delete_topics(1000, ["kept"], cb)
        assert cb.wait() == {"kept": Errors.TOPIC_DELETION_DISABLED}
        assert e.zk.get_children("/admin/delete_topics") == []
    finally:
        e.close()


# -- CreatePartitions --------------------------------------------------------------------------------

def test_create_partitions(env):
    make_topic_in_zk_and_cache(env, "grow", partitions=2)
    cb = Callback()
    env.manager.create_partitions(0, {"grow": (4, None), "same": (1, None)}, False, cb)
    assert cb.wait() == {"grow": (Errors.REQUEST_TIMED_OUT, None),
                         "same": (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'same' does not exist.")}
    assert sorted(env.json("/brokers/topics/grow")["partitions"]) == ["0", "1", "2", "3"]

    cb = Callback()
    env.manager.create_partitions(0, {"grow": (4, None)}, False, cb)
    error, message = cb.wait()["grow"]
    assert error is Errors.INVALID_PARTITIONS and message == "Topic already has 4 partitions."
    cb = Callback()
    env.manager.create_partitions(0, {"grow": (3, None)}, False, cb)
    assert cb.wait()["grow"].error is Errors.INVALID_PARTITIONS

    cb = Callback()
    env.manager.create_partitions(0, {"grow": (6, [[1], [7]])}, False, cb)
    error, message = cb.wait()["grow"]
    assert error is Errors.INVALID_REPLICA_ASSIGNMENT and "7" in message
    cb = Callback()
    env.manager.create_partitions(0, {"grow": (6, [[1]])}, False, cb)
    assert cb.wait()["grow"].error is Errors.INVALID_REPLICA_ASSIGNMENT

    cb = Callback()
    env.manager.create_partitions(0, {"grow": (6, [[1], [2]])}, True, cb)
    assert cb.wait() == {"grow": (Errors.NONE, None)}
    assert len(env.json("/brokers/topics/grow")["partitions"]) == 4  # validate_only wrote nothing


def test_delayed_create_partitions_waits_for_the_new_leaders(env):
    make_topic_in_zk_and_cache(env, "grow", partitions=1)
    cb = Callback()
    env.manager.create_partitions(30000, {"grow": (3, [[1], [2]])}, False, cb)
    assert env.json("/brokers/topics/grow")["partitions"] == {"0": [0], "1": [1], "2": [2]}
    assert not cb.event.is_set()
    env.update_metadata({"grow": {1: 1, 2: 2}})
    assert cb.wait() == {"grow": (Errors.NONE, None)}


# -- DescribeConfigs ---------------------------------------------------------------------------------

def test_describe_topic_configs_sources_and_synonyms(env):
    make_topic_in_zk_and_cache(env, "described", configs={"retention.ms": "1000", "cleanup.policy": "compact"})
    [result] = env.manager.describe_configs([(TOPIC, "described", None)], include_synonyms=True,
                                            include_documentation=True)
    assert result.error is Errors.NONE and result.resource_name == "described"
    configs = entries(result)
    assert set(configs) >= {"retention.ms", "segment.bytes", "cleanup.policy", "max.message.bytes",
                            "leader.replication.throttled.replicas"}

    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source, retention.read_only, retention.is_sensitive) == \
        ("1000", ConfigSource.TOPIC_CONFIG, False, False)
    assert retention.synonyms[0] == type(retention.synonyms[0])("retention.ms", "1000", ConfigSource.TOPIC_CONFIG)
    assert retention.config_type == ConfigDataType.LONG and retention.documentation
    assert not retention.is_default

    segment = configs["segment.bytes"]
    assert segment.value == "2097152" and segment.config_source == ConfigSource.STATIC_BROKER_CONFIG
    assert [(s.name, s.value, s.source) for s in segment.synonyms] == [
        ("log.segment.bytes", "2097152", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG)]

    max_message = configs["max.message.bytes"]
    assert max_message.config_source == ConfigSource.DEFAULT_CONFIG and max_message.is_default
    assert [(s.name, s.source) for s in max_message.synonyms] == [("message.max.bytes", ConfigSource.DEFAULT_CONFIG)]
    assert configs["cleanup.policy"].value == "compact" and configs["cleanup.policy"].config_type == ConfigDataType.LIST

    [filtered] = env.manager.describe_configs([(TOPIC, "described", ["retention.ms", "segment.ms"])])
    assert set(entries(filtered)) == {"retention.ms", "segment.ms"}
    assert all(e.synonyms == () and e.documentation is None for e in filtered.configs)

    missing, invalid = env.manager.describe_configs([(TOPIC, "missing", None), (TOPIC, "bad name", None)])
    assert missing.error is Errors.UNKNOWN_TOPIC_OR_PARTITION and missing.configs == ()
    assert invalid.error is Errors.INVALID_TOPIC_EXCEPTION


def test_describe_broker_configs(env):
    [result] = env.manager.describe_configs([(BROKER, "0", None)], include_synonyms=True)
    assert result.error is Errors.NONE
    configs = entries(result)
    assert configs["broker.id"].value == "0" and configs["broker.id"].read_only
    assert configs["broker.id"].config_source == ConfigSource.STATIC_BROKER_CONFIG
    segment = configs["log.segment.bytes"]
    assert not segment.read_only and segment.config_source == ConfigSource.STATIC_BROKER_CONFIG
    assert configs["num.io.threads"].config_source == ConfigSource.DEFAULT_CONFIG
    assert configs["log.retention.ms"].value is None  # declared without a default, as in Kafka
    # Kafka 2.8.2's KRaft keys are internal: not described unless the properties set them
    assert "process.roles" not in configs and "controller.quorum.voters" not in configs

    # dynamic layers, as the BrokerConfigHandler applies them from ZooKeeper
    env.dynamic_config.update_default_config({"log.segment.bytes": "3145728"})
    env.dynamic_config.update_broker_config(0, {"log.segment.bytes": "4194304"})
    [result] = env.manager.describe_configs([(BROKER, "0", ["log.segment.bytes"])], include_synonyms=True)
    [segment] = result.configs
    assert segment.value == "4194304" and segment.config_source == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert [(s.value, s.source) for s in segment.synonyms] == [
        ("4194304", ConfigSource.DYNAMIC_BROKER_CONFIG), ("3145728", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("2097152", ConfigSource.STATIC_BROKER_CONFIG), ("1073741824", ConfigSource.DEFAULT_CONFIG)]

    [default] = env.manager.describe_configs([(BROKER, "", None)], include_synonyms=True)
    [segment] = default.configs
    assert segment.value == "3145728" and segment.config_source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert [s.source for s in segment.synonyms] == [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]

    # topics without overrides now describe the dynamic broker value
    make_topic_in_zk_and_cache(env, "plain")
    [topic] = env.manager.describe_configs([(TOPIC, "plain", ["segment.bytes"])])
    assert topic.configs[0].value == "4194304"
    assert topic.configs[0].config_source == ConfigSource.DYNAMIC_BROKER_CONFIG

    other, not_a_number = env.manager.describe_configs([(BROKER, "1", None), (BROKER, "x", None)])
    assert other.error is Errors.INVALID_REQUEST and "expected 0" in other.error_message
    assert not_a_number.error is Errors.INVALID_REQUEST


def test_describe_broker_loggers(env):
    logging.getLogger("kafka_py.test.admin.logger").setLevel(logging.WARNING)
    [result] = env.manager.describe_configs([(BROKER_LOGGER, "0", None)])
    configs = entries(result)
    assert configs["kafka_py.test.admin.logger"].value == "WARN"
    assert configs["root"].config_source == ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG
    [empty] = env.manager.describe_configs([(BROKER_LOGGER, "", None)])
    assert empty.error is Errors.INVALID_REQUEST


# -- AlterConfigs ------------------------------------------------------------------------------------

def test_alter_topic_configs_round_trip(env):
    make_topic_in_zk_and_cache(env, "altered", configs={"segment.ms": "100000"})
    key = (TOPIC, "altered")
    notifications_before = len(env.zk.get_children("/config/changes"))
    assert env.manager.alter_configs({key: {"retention.ms": "5000", "cleanup.policy": "compact"}}, False) == \
        {key: (Errors.NONE, None)}
    # full replace: segment.ms is gone
    assert env.json("/config/topics/altered")["config"] == {"retention.ms": "5000", "cleanup.policy": "compact"}
    assert len(env.zk.get_children("/config/changes")) == notifications_before + 1
    [described] = env.manager.describe_configs([(TOPIC, "altered", ["retention.ms", "segment.ms"])])
    assert entries(described)["retention.ms"].value == "5000"
    assert entries(described)["segment.ms"].config_source != ConfigSource.TOPIC_CONFIG

    # validate_only checks but writes nothing
    assert env.manager.alter_configs({key: {"retention.ms": "6000"}}, True) == {key: (Errors.NONE, None)}
    assert env.json("/config/topics/altered")["config"]["retention.ms"] == "5000"


def test_alter_topic_configs_validation_errors_name_the_key(env):
    make_topic_in_zk_and_cache(env, "strict")
    key = (TOPIC, "strict")
    error, message = env.manager.alter_configs({key: {"retention.ms": "later"}}, False)[key]
    assert error is Errors.INVALID_REQUEST and "retention.ms" in message and "later" in message
    error, message = env.manager.alter_configs({key: {"min.insync.replicas": "0"}}, False)[key]
    assert error is Errors.INVALID_REQUEST and "min.insync.replicas" in message
    error, message = env.manager.alter_configs({key: {"log.retention.ms": "5"}}, False)[key]
    assert error is Errors.INVALID_CONFIG and "log.retention.ms" in message
    error, message = env.manager.alter_configs({key: {"retention.ms": None}}, False)[key]
    assert error is Errors.INVALID_REQUEST and "retention.ms" in message
    missing = (TOPIC, "missing")
    assert env.manager.alter_configs({missing: {"retention.ms": "1"}}, False)[missing].error is \
        Errors.UNKNOWN_TOPIC_OR_PARTITION
    logger_resource = (BROKER_LOGGER, "0")
    assert env.manager.alter_configs({logger_resource: {"root": "INFO"}}, False)[logger_resource].error is \
        Errors.INVALID_REQUEST
    assert env.zk.get_entity_configs(ConfigType.TOPIC, "strict") == {}


def test_alter_broker_configs(env):
    per_broker, default = (BROKER, "0"), (BROKER, "")
    assert env.manager.alter_configs({per_broker: {"log.retention.ms": "60000"},
                                      default: {"log.segment.bytes": "3145728"}}, False) == \
        {per_broker: (Errors.NONE, None), default: (Errors.NONE, None)}
    assert env.json("/config/brokers/0")["config"] == {"log.retention.ms": "60000"}
    assert env.json("/config/brokers/<default>")["config"] == {"log.segment.bytes": "3145728"}
    changes = [env.json(f"/config/changes/{c}") for c in sorted(env.zk.get_children("/config/changes"))]
    assert {"version": 2, "entity_path": "brokers/0"} in changes
    assert {"version": 2, "entity_path": "brokers/<default>"} in changes

    error, message = env.manager.alter_configs({per_broker: {"log.dirs": "/elsewhere"}}, False)[per_broker]
    assert error is Errors.INVALID_REQUEST and "log.dirs" in message and "dynamically" in message
    error, message = env.manager.alter_configs({per_broker: {"log.retention.ms": "soon"}}, False)[per_broker]
    assert error is Errors.INVALID_REQUEST and "log.retention.ms" in message
    error, message = env.manager.alter_configs(
        {default: {"listeners": "PLAINTEXT://:9093"}}, False)[default]
    assert error is Errors.INVALID_REQUEST and "listeners" in message
    other = (BROKER, "1")
    error, message = env.manager.alter_configs({other: {"log.retention.ms": "1"}}, False)[other]
    assert error is Errors.INVALID_REQUEST and "Unexpected broker id" in message
    # nothing of the refused changes reached ZooKeeper
    assert env.json("/config/brokers/0")["config"] == {"log.retention.ms": "60000"}
    assert not env.zk.path_exists("/config/brokers/1")


# -- IncrementalAlterConfigs -------------------------------------------------------------------------

def test_incremental_alter_topic_configs(env):
    make_topic_in_zk_and_cache(env, "inc", configs={"segment.ms": "100000"})
    key = (TOPIC, "inc")
    result = env.manager.incremental_alter_configs(
        {key: [("retention.ms", SET, "5000"), ("cleanup.policy", APPEND, "compact")]}, False)
    assert result == {key: (Errors.NONE, None)}
    # incremental: segment.ms stays; the list default "delete" was appended to
    assert env.json("/config/topics/inc")["config"] == {"segment.ms": "100000", "retention.ms": "5000",
                                                        "cleanup.policy": "delete,compact"}
    result = env.manager.incremental_alter_configs(
        {key: [("segment.ms", DELETE, None), ("cleanup.policy", SUBTRACT, "delete")]}, False)
    assert result == {key: (Errors.NONE, None)}
    assert env.json("/config/topics/inc")["config"] == {"retention.ms": "5000", "cleanup.policy": "compact"}
    result = env.manager.incremental_alter_configs(
        {key: [("leader.replication.throttled.replicas", APPEND, "0:1")]}, False)
    assert result == {key: (Errors.NONE, None)}
    assert env.zk.get_entity_configs(ConfigType.TOPIC, "inc")["leader.replication.throttled.replicas"] == "0:1"

    error, message = env.manager.incremental_alter_configs(
        {key: [("retention.ms", SET, "1"), ("retention.ms", DELETE, None)]}, False)[key]
    assert error is Errors.INVALID_REQUEST and "duplicate config keys : retention.ms" in message
    error, message = env.manager.incremental_alter_configs({key: [("retention.ms", APPEND, "1")]}, False)[key]
    assert error is Errors.INVALID_REQUEST and "retention.ms" in message
    error, message = env.manager.incremental_alter_configs({key: [("retention.ms", SET, None)]}, False)[key]
    assert error is Errors.INVALID_REQUEST and "SET:retention.ms" in message
    error, message = env.manager.incremental_alter_configs({key: [("segment.bytes", SET, "1")]}, False)[key]
    assert error is Errors.INVALID_REQUEST and "segment.bytes" in message
    error, _ = env.manager.incremental_alter_configs({key: [("segment.bytes", 9, "1")]}, False)[key]
    assert error is Errors.INVALID_REQUEST
    # validate_only
    assert env.manager.incremental_alter_configs({key: [("retention.ms", SET, "7")]}, True) == \
        {key: (Errors.NONE, None)}
    assert env.zk.get_entity_configs(ConfigType.TOPIC, "inc")["retention.ms"] == "5000"


def test_incremental_alter_broker_and_logger_configs(env):
    from kio.schema.incremental_alter_configs.v1 import request as iac1

    per_broker = (BROKER, "0")
    ops = [iac1.AlterableConfig(name="log.retention.ms", config_operation=0, value="60000"),
           iac1.AlterableConfig(name="log.cleanup.policy", config_operation=2, value="compact")]
    assert env.manager.incremental_alter_configs({per_broker: ops}, False) == {per_broker: (Errors.NONE, None)}
    assert env.json("/config/brokers/0")["config"] == {"log.retention.ms": "60000",
                                                       "log.cleanup.policy": "delete,compact"}
    assert env.manager.incremental_alter_configs({per_broker: [("log.retention.ms", DELETE, None)]}, False) == \
        {per_broker: (Errors.NONE, None)}
    assert env.json("/config/brokers/0")["config"] == {"log.cleanup.policy": "delete,compact"}
    error, message = env.manager.incremental_alter_configs({per_broker: [("broker.id", SET, "5")]}, False)[per_broker]
    assert error is Errors.INVALID_REQUEST and "broker.id" in message

    name = "kafka_py.test.admin.incremental"
    logging.getLogger(name).setLevel(logging.INFO)
    loggers = (BROKER_LOGGER, "0")
    assert env.manager.incremental_alter_configs({loggers: [(name, SET, "DEBUG")]}, False) == \
        {loggers: (Errors.NONE, None)}
    assert logging.getLogger(name).level == logging.DEBUG
    assert env.manager.incremental_alter_configs({loggers: [(name, DELETE, None)]}, False) == \
        {loggers: (Errors.NONE, None)}
    assert logging.getLogger(name).level == logging.NOTSET
    for bad in ([(name, SET, "LOUD")], [("no.such.logger.anywhere", SET, "INFO")], [("root", DELETE, None)],
                [(name, APPEND, "INFO")]):
        assert env.manager.incremental_alter_configs({loggers: bad}, False)[loggers].error is Errors.INVALID_REQUEST
