"""DynamicConfigManager, ZkNodeChangeNotificationListener, the topic and broker config
handlers and DynamicBrokerConfig, against a real ZooKeeper and a real LogManager.

Config changes are written by a second KafkaZkClient, as another broker (or an admin tool)
would write them; this broker only sees the /config/changes notifications."""
from __future__ import annotations

import json
import threading
import time
import uuid

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.common.zk_node_change_notification_listener import ZkNodeChangeNotificationListener
from kafka_py.log.log_config import Defaults as LogDefaults
from kafka_py.log.log_manager import LogManager
from kafka_py.server.config_handler import BrokerConfigHandler, TopicConfigHandler
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig, DynamicLogConfig
from kafka_py.server.dynamic_config_manager import DynamicConfigManager
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.kafka_scheduler import MockScheduler
from kafka_py.clients.common.utils.time import MockTime
from kafka_py.core.zk.admin_zk_client import AdminZkClient
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import ConfigEntityName, ConfigType


def wait_until(condition, timeout_s: float = 15.0, message: str = "condition not met") -> None:
    deadline = time.monotonic() + timeout_s
    tick = threading.Event()
    while not condition():
        assert time.monotonic() < deadline, message
        tick.wait(0.02)


class Env:
    def __init__(self, zookeeper, tmp_path):
        self.connect = f"{zookeeper.connect_string}/adm-{uuid.uuid4().hex}"
        self.zk = KafkaZkClient(self.connect, session_timeout_ms=6000)
        self.zk.create_top_level_paths()
        # the "other broker": its own session, writing through its own AdminZkClient
        self.other_zk = KafkaZkClient(self.connect, session_timeout_ms=6000)
        self.other = AdminZkClient(self.other_zk)
        self.config = KafkaConfig({"broker.id": "0", "zookeeper.connect": self.connect,
                                   "log.dirs": str(tmp_path / "logs")}, do_log=False)
        self.dynamic_config = DynamicBrokerConfig(self.config)
        self.time = MockTime()
        self.log_manager = LogManager(self.config.log_dirs, self.config.default_log_config(),
                                      default_props=self.config.log_config_defaults(),
                                      scheduler=MockScheduler(self.time), time=self.time)
        self.dynamic_config.add_broker_reconfigurable(DynamicLogConfig(self.log_manager))
        self.manager = DynamicConfigManager(self.zk, {
            ConfigType.TOPIC: TopicConfigHandler(self.log_manager, self.config),
            ConfigType.BROKER: BrokerConfigHandler(self.dynamic_config),
        })
        self.started = False

    def log(self, topic: str, partition: int = 0):
        return self.log_manager.get_or_create_log(TopicPartition(topic, partition))

    def start(self) -> None:
        self.manager.startup()
        self.started = True

    def close(self) -> None:
        if self.started:
            self.manager.shutdown()
        self.log_manager.shutdown()
        self.other_zk.close()
        self.zk.close()


@pytest.fixture
def env(zookeeper, tmp_path):
    e = Env(zookeeper, tmp_path)
    yield e
    e.close()


def test_topic_config_change_from_another_broker_reaches_the_live_log(env):
    log, bystander = env.log("orders"), env.log("audit")
    env.other.create_topic_with_assignment("orders", {}, {0: [0]})
    env.other.create_topic_with_assignment("audit", {}, {0: [0]})
    env.start()
    assert log.config.retention_ms == LogDefaults.RETENTION_MS

    env.other.change_topic_config("orders", {"retention.ms": "12345", "segment.bytes": "1048576"})
    wait_until(lambda: log.config.retention_ms == 12345, message="retention.ms change not applied")
    assert log.config.segment_size == 1048576
    assert log.config.overridden_configs == {"retention.ms", "segment.bytes"}
    assert bystander.config.retention_ms == LogDefaults.RETENTION_MS  # other topics untouched
    # a log of the topic created afterwards starts with the override too
    assert env.log("orders", 1).config.retention_ms == 12345

    # removing the overrides returns the log to the broker defaults
    env.other.change_topic_config("orders", {})
    wait_until(lambda: log.config.retention_ms == LogDefaults.RETENTION_MS, message="override removal not applied")
    assert log.config.segment_size == LogDefaults.SEGMENT_SIZE and not log.config.overridden_configs


def test_existing_configs_are_applied_at_startup(env):
    log, plain = env.log("orders"), env.log("plain")
    # written without change notifications: only the startup pass can find them
    env.other_zk.set_or_create_entity_configs(ConfigType.TOPIC, "orders", {"retention.ms": "4321"})
    env.other_zk.set_or_create_entity_configs(ConfigType.BROKER, ConfigEntityName.DEFAULT,
                                              {"log.retention.ms": "8888", "log.segment.bytes": "2097152"})
    env.other_zk.set_or_create_entity_configs(ConfigType.BROKER, "0", {"log.segment.bytes": "3145728"})
    assert env.zk.get_children("/config/changes") == []
    env.start()
    # startup() processes them synchronously
    assert log.config.retention_ms == 4321
    assert log.config.segment_size == 3145728  # per-broker beats cluster default
    assert plain.config.retention_ms == 8888 and plain.config.segment_size == 3145728
    current = env.dynamic_config.current_kafka_config
    assert current.log_retention_time_millis == 8888 and current.log_segment_bytes == 3145728
    assert env.dynamic_config.current_dynamic_default_configs == {"log.retention.ms": "8888",
                                                                  "log.segment.bytes": "2097152"}
    assert env.dynamic_config.current_dynamic_broker_configs == {"log.segment.bytes": "3145728"}


def test_broker_config_changes_reach_every_log_keeping_topic_overrides(env):
    overridden, plain = env.log("orders"), env.log("plain")
    env.other.create_topic_with_assignment("orders", {"retention.ms": "12345"}, {0: [0]})
    env.start()
    assert overridden.config.retention_ms == 12345

    env.other.change_broker_config(None, {"log.retention.ms": "7777", "log.segment.bytes": "3000000"})
    wait_until(lambda: plain.config.retention_ms == 7777, message="cluster default not applied")
    assert plain.config.segment_size == 3000000
    assert overridden.config.retention_ms == 12345 and overridden.config.segment_size == 3000000
    assert env.log_manager.current_default_config.retention_ms == 7777

    # another broker's per-broker config is not ours; ours beats the cluster default
    env.other.change_broker_config(1, {"log.retention.ms": "1"})
    env.other.change_broker_config(0, {"log.retention.ms": "5555"})
    wait_until(lambda: plain.config.retention_ms == 5555, message="per-broker config not applied")
    assert env.dynamic_config.current_kafka_config.log_retention_time_millis == 5555

    # invalid and non-dynamic keys in ZooKeeper are ignored, the valid rest applies
    env.other.change_broker_config(None, {"log.dirs": "/elsewhere", "log.flush.interval.messages": "many",
                                          "log.segment.bytes": "4000000"})
    wait_until(lambda: plain.config.segment_size == 4000000, message="valid part of the layer not applied")
    assert env.dynamic_config.current_dynamic_default_configs == {"log.segment.bytes": "4000000"}
    assert env.dynamic_config.current_kafka_config.log_dirs == env.config.log_dirs


def test_notification_formats(env):
    log = env.log("legacy")
    env.other.create_topic_with_assignment("legacy", {}, {0: [0]})
    env.start()
    # garbage and unknown entity types are logged and skipped; later notifications still apply
    env.other_zk.create_sequential_persistent_path("/config/changes/config_change_", b"not json")
    env.other_zk.create_sequential_persistent_path("/config/changes/config_change_",
                                                   b'{"version":2,"entity_path":"nonsense/x"}')
    env.other_zk.set_or_create_entity_configs(ConfigType.TOPIC, "legacy", {"retention.ms": "2468"})
    env.other_zk.create_sequential_persistent_path(
        "/config/changes/config_change_", json.dumps({"version": 1, "entity_type": "topics",
                                                      "entity_name": "legacy"}).encode())
    wait_until(lambda: log.config.retention_ms == 2468, message="version 1 notification not applied")


def test_dynamic_broker_config_validation(env):
    dynamic = env.dynamic_config
    dynamic.validate({"log.retention.ms": "1000"}, per_broker_config=True)
    with pytest.raises(ConfigException, match="log.dirs"):
        dynamic.validate({"log.dirs": "/x"}, per_broker_config=True)
    with pytest.raises(ConfigException, match="listeners"):
        dynamic.validate({"listeners": "PLAINTEXT://:9999"}, per_broker_config=False)
    with pytest.raises(ConfigException, match="num.io.threads"):
        dynamic.validate({"num.io.threads": "100"}, per_broker_config=True)  # more than double at once
    assert dynamic.from_persistent_props({"log.retention.ms": "1", "broker.id": "3", "listeners": "PLAINTEXT://:1",
                                          "log.segment.bytes": "tiny", "custom.key": "x"},
                                         per_broker_config=False) == {"log.retention.ms": "1"}
    # nothing was applied by validating
    assert dynamic.current_dynamic_broker_configs == {} and dynamic.current_kafka_config is env.config


def test_listener_handles_each_notification_once_in_order_and_purges_expired(zookeeper):
    zk = KafkaZkClient(f"{zookeeper.connect_string}/adm-{uuid.uuid4().hex}", session_timeout_ms=6000)
    root, prefix = "/test_changes", "note_"
    zk.make_sure_persistent_path_exists(root)
    seen: list[bytes] = []

    class Recorder:
        def process_notification(self, message: bytes) -> None:
            seen.append(bytes(message))

    clock = MockTime()
    listener = ZkNodeChangeNotificationListener(zk, root, prefix, Recorder(), change_expiration_ms=15 * 60 * 1000,
                                                time=clock)
    try:
        for i in range(3):
            zk.create_sequential_persistent_path(f"{root}/{prefix}", str(i).encode())
        listener.init()
        wait_until(lambda: len(seen) == 3)
        for i in range(3, 5):
            zk.create_sequential_persistent_path(f"{root}/{prefix}", str(i).encode())
        wait_until(lambda: len(seen) == 5)
        assert seen == [b"0", b"1", b"2", b"3", b"4"]
        assert len(zk.get_children(root)) == 5  # nothing has expired yet

        clock.advance(16 * 60 * 1000)
        zk.create_sequential_persistent_path(f"{root}/{prefix}", b"5")
        wait_until(lambda: zk.get_children(root) == [], message="expired notifications not purged")
        assert seen == [b"0", b"1", b"2", b"3", b"4", b"5"]
    finally:
        listener.close()
        zk.close()
