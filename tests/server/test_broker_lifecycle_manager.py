"""BrokerLifecycleManager (server/broker_lifecycle_manager.py) against a real QuorumController
over a LocalLogManager in this process: registration, the STARTING -> RECOVERY -> RUNNING
states as the broker catches up and is unfenced, and controlled shutdown driven by
heartbeats; after Kafka's BrokerLifecycleManagerTest."""
from __future__ import annotations

import random
import threading

import pytest

from kafka_py.core.cluster.broker import ListenerName, Node
from kafka_py.metadata.broker_state import BrokerState
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.metadata.controller.quorum_controller import QuorumController
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.metalog.local_log_manager import LocalLogManager, SharedLogData
from kafka_py.server.broker_lifecycle_manager import BrokerLifecycleManager, listener_entries
from kafka_py.server.broker_to_controller_channel_manager import (
    BrokerToControllerChannelManager,
    RaftControllerNodeProvider,
)
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_py.server.metadata.config_repository import CachedConfigRepository
from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
from kafka_py.clients.common.utils.time import Time
from tests.metadata.controller.env import creatable_topic, create_topics_request, wait_for
from tests.server.kraft.in_process_controller import InProcessControllerConnection

CONTROLLER_ID = 3000
BROKER_ID = 1
WAIT_S = 30


def broker_config(**overrides) -> KafkaConfig:
    props = {
        "process.roles": "broker", "node.id": str(BROKER_ID),
        "controller.quorum.voters": f"{CONTROLLER_ID}@localhost:9093",
        "listeners": "PLAINTEXT://localhost:9092", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "9000",
        "log.dirs": "/tmp/unused-kafka-py-logs",
    }
    props.update(overrides)
    return KafkaConfig(props, do_log=False)


class Env:
    """A controller and, sharing its LocalLogManager (a combined node's layout), the broker's
    metadata listener and cache."""

    def __init__(self, **config_overrides) -> None:
        self.shared = SharedLogData(random.Random(0))
        self.log_manager = LocalLogManager(CONTROLLER_ID, self.shared, "LocalLogManager_")
        self.log_manager.initialize()
        self.controller = QuorumController(CONTROLLER_ID, self.log_manager, time=Time.SYSTEM,
                                           replica_placer=StripedReplicaPlacer(random.Random(0)),
                                           default_replication_factor=1, thread_name_prefix="Controller_")
        wait_for(lambda: self.controller.is_active(), "the controller to become active")
        self.config = broker_config(**config_overrides)
        self.cache = RaftMetadataCache(BROKER_ID)
        self.listener = BrokerMetadataListener(BROKER_ID, Time.SYSTEM, self.cache, CachedConfigRepository())
        self.log_manager.register(self.listener)
        self.connection = InProcessControllerConnection(lambda: {CONTROLLER_ID: self.controller})
        self.manager = BrokerLifecycleManager(self.config, Time.SYSTEM, "test-")
        # what the broker reports as applied; a test may hold it back
        self.offset_provider = self.listener.highest_metadata_offset

    def start(self, connection=None) -> None:
        provider = RaftControllerNodeProvider(self.log_manager, [Node(CONTROLLER_ID, "localhost", 9093)],
                                              ListenerName("CONTROLLER"))
        channel = BrokerToControllerChannelManager(provider, Time.SYSTEM, self.config, "heartbeat",
                                                   retry_timeout_ms=self.config.broker_session_timeout_ms,
                                                   connection=connection or self.connection)
        self.manager.start(lambda: self.offset_provider(), channel, "test-cluster",
                           listener_entries([("PLAINTEXT", "localhost", 9092, 0)]), {})

    def close(self) -> None:
        self.manager.close()
        self.listener.close()
        self.controller.close()
        self.log_manager.close()


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def test_registers_catches_up_and_is_unfenced(env):
    env.start()
    env.manager.initial_catch_up_future.result(timeout=WAIT_S)
    assert env.manager.broker_epoch() >= 0
    assert env.manager.state() is BrokerState.RECOVERY
    # not ready to unfence: the controller keeps the broker fenced
    assert env.cache.get_alive_broker(BROKER_ID) is None
    registered = env.cache.current_image().brokers.get(BROKER_ID)
    assert registered is not None and registered.fenced
    assert registered.get_node("PLAINTEXT").port == 9092

    env.manager.set_ready_to_unfence()
    wait_for(lambda: env.manager.state() is BrokerState.RUNNING, "the broker to run")
    wait_for(lambda: env.cache.get_alive_broker(BROKER_ID) is not None, "the broker's unfencing to commit")
    registration = env.controller.cluster_control.broker_registrations()[BROKER_ID]
    assert registration.incarnation_id == env.manager.incarnation_id


def test_stays_starting_until_caught_up(env):
    held = threading.Event()
    env.offset_provider = lambda: -1 if not held.is_set() else env.listener.highest_metadata_offset()
    env.start()
    # several heartbeats answered "not caught up"
    wait_for(lambda: env.connection.sent.count(ApiKeys.BROKER_HEARTBEAT) >= 5,
             "heartbeats")
    assert env.manager.state() is BrokerState.STARTING
    assert not env.manager.initial_catch_up_future.done()
    held.set()
    env.manager.initial_catch_up_future.result(timeout=WAIT_S)
    assert env.manager.state() is BrokerState.RECOVERY


def test_controlled_shutdown_moves_leadership_first(env):
    env.start()
    env.manager.initial_catch_up_future.result(timeout=WAIT_S)
    env.manager.set_ready_to_unfence()
    wait_for(lambda: env.cache.get_alive_broker(BROKER_ID) is not None, "the broker's unfencing")
    env.controller.create_topics(create_topics_request(creatable_topic("foo", 2, 1))).result(timeout=WAIT_S)
    wait_for(lambda: env.cache.num_partitions("foo") == 2, "the topic to reach the broker")
    assert {p.leader_id for p in env.cache.current_image().partitions.topic_partitions("foo")} == {BROKER_ID}

    env.manager.begin_controlled_shutdown()
    env.manager.controlled_shutdown_future.result(timeout=WAIT_S)
    assert env.manager.state() is BrokerState.SHUTTING_DOWN
    # the controller took every leadership away before letting the broker go
    wait_for(lambda: {p.leader_id for p in env.cache.current_image().partitions.topic_partitions("foo")} == {-1},
             "the leaderships to move")
    assert env.connection.sent.count(ApiKeys.BROKER_HEARTBEAT) >= 2


def test_controlled_shutdown_before_running_shuts_down_at_once(env):
    env.start()
    env.manager.initial_catch_up_future.result(timeout=WAIT_S)
    env.manager.begin_controlled_shutdown()
    env.manager.controlled_shutdown_future.result(timeout=WAIT_S)
    assert env.manager.state() is BrokerState.SHUTTING_DOWN


def test_gives_up_without_a_controller():
    e = Env(**{"initial.broker.registration.timeout.ms": "300"})
    try:
        class Refusing(InProcessControllerConnection):
            def send_and_receive(self, node, api_key, api_version, request):
                raise ConnectionError("refused")

        e.start(Refusing(lambda: {}))
        e.manager.controlled_shutdown_future.result(timeout=WAIT_S)
        assert e.manager.state() is BrokerState.SHUTTING_DOWN
        assert e.manager.initial_catch_up_future.cancelled()
        assert e.manager.broker_epoch() == -1
    finally:
        e.close()
