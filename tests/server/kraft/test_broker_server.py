"""An in-process KRaft broker: BrokerServer (server/broker_server.py) with a QuorumController
over a LocalLogManager in the same process, its requests to the controller answered in
process (tests/server/kraft/in_process_controller.py). kafka-python creates a topic through
the broker (forwarded to the controller in an Envelope), produces to it and reads it back;
the broker shuts down through a controlled shutdown."""
from __future__ import annotations

import random
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewPartitions, NewTopic

from kafka_py.clients.common.topic_partition import TopicPartition as BrokerTopicPartition
from kafka_py.metadata.broker_state import BrokerState
from kafka_py.metadata.controller.quorum_controller import QuorumController
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.metalog.local_log_manager import LocalLogManager, SharedLogData
from kafka_py.server.broker_metadata_checkpoint import MetaProperties
from kafka_py.server.broker_server import BrokerServer, ProcessStatus
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.utils.time import Time
from tests.integration.broker_harness import free_port, wait_until
from tests.server.kraft.in_process_controller import InProcessControllerConnection

CONTROLLER_ID = 3000
BROKER_ID = 1
WAIT_S = 60


class KRaftNode:
    """A controller and a broker sharing one LocalLogManager, as a combined node shares its
    Raft manager."""

    def __init__(self, log_dir: str) -> None:
        self.shared = SharedLogData(random.Random(0))
        self.log_manager = LocalLogManager(CONTROLLER_ID, self.shared, "LocalLogManager_")
        self.log_manager.initialize()
        self.controller = QuorumController(CONTROLLER_ID, self.log_manager, time=Time.SYSTEM,
                                           replica_placer=StripedReplicaPlacer(random.Random(0)),
                                           default_replication_factor=1, thread_name_prefix="Controller_")
        wait_until(self.controller.is_active, WAIT_S, "the controller never became active")
        self.port = free_port()
        self.config = KafkaConfig({
            "process.roles": "broker", "node.id": str(BROKER_ID),
            "controller.quorum.voters": f"{CONTROLLER_ID}@localhost:{free_port()}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}", "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": log_dir, "broker.heartbeat.interval.ms": "100", "num.partitions": "1",
            "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "2",
            "transaction.state.log.replication.factor": "1", "group.initial.rebalance.delay.ms": "0",
        }, do_log=False)
        self.connections: list[InProcessControllerConnection] = []
        self.broker = BrokerServer(self.config, MetaProperties("kraft-test-cluster", BROKER_ID), self.log_manager,
                                   Time.SYSTEM, controller_connection_factory=self._connection)

    def _connection(self, channel_name: str) -> InProcessControllerConnection:
        connection = InProcessControllerConnection(lambda: {CONTROLLER_ID: self.controller})
        self.connections.append(connection)
        return connection

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.broker.shutdown()
        self.controller.close()
        self.log_manager.close()


@pytest.fixture
def node(tmp_path):
    n = KRaftNode(str(tmp_path / "logs"))
    n.broker.startup()
    yield n
    n.close()


def test_create_produce_consume(node):
    broker = node.broker
    assert broker.status is ProcessStatus.STARTED
    wait_until(lambda: broker.current_state() is BrokerState.RUNNING, WAIT_S, "the broker never ran")
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30000)
    try:
        # the admin client's CreateTopics reaches the controller in an Envelope
        admin.create_topics([NewTopic("orders", num_partitions=2, replication_factor=1,
                                      topic_configs={"retention.ms": "3600000"})])
        wait_until(lambda: broker.metadata_cache.num_partitions("orders") == 2, WAIT_S, "topic never arrived")
        assert node.controller.replication_control.find_topic_ids(
            node.controller.last_committed_offset, ["orders"])["orders"].is_result()
        # the config record reached the log the broker created
        wait_until(lambda: broker.log_manager.get_log(BrokerTopicPartition("orders", 1)) is not None, WAIT_S,
                   "log never created")
        assert broker.log_manager.get_log(BrokerTopicPartition("orders", 1)).config.retention_ms == 3600000
        admin.create_partitions({"orders": NewPartitions(3)})
        wait_until(lambda: broker.metadata_cache.num_partitions("orders") == 3, WAIT_S, "partition never arrived")
    finally:
        admin.close()

    producer = KafkaProducer(bootstrap_servers=node.bootstrap, acks="all", linger_ms=0)
    try:
        for i in range(30):
            producer.send("orders", key=str(i % 3).encode(), value=f"order-{i}".encode(), partition=i % 3)
        producer.flush(timeout=WAIT_S)
    finally:
        producer.close()

    consumer = KafkaConsumer(bootstrap_servers=node.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition("orders", p) for p in range(3)])
        values = set()
        for message in consumer:
            values.add(message.value)
            if len(values) == 30:
                break
    finally:
        consumer.close()
    assert values == {f"order-{i}".encode() for i in range(30)}
    # the forwarded requests went through the forwarding channel as envelopes
    assert any(any(k.name == "ENVELOPE" for k in c.sent) for c in node.connections)


def test_consumer_group_and_idempotent_producer(node):
    """FindCoordinator auto-creates __consumer_offsets through the controller; InitProducerId
    takes its id from a block the controller allocated."""
    producer = KafkaProducer(bootstrap_servers=node.bootstrap, acks="all", enable_idempotence=True)
    try:
        for i in range(5):
            producer.send("events", value=f"e{i}".encode())
        producer.flush(timeout=WAIT_S)
    finally:
        producer.close()
    assert node.broker.metadata_cache.contains("events")  # auto-created through the controller
    # the idempotent producer's id came from a block the controller allocated
    assert any(any(k.name == "ALLOCATE_PRODUCER_IDS" for k in c.sent) for c in node.connections)

    consumer = KafkaConsumer("events", bootstrap_servers=node.bootstrap, group_id=f"g-{uuid.uuid4()}",
                             auto_offset_reset="earliest", consumer_timeout_ms=20000)
    try:
        got = []
        for message in consumer:
            got.append(message.value)
            if len(got) == 5:
                break
        consumer.commit()
    finally:
        consumer.close()
    assert got == [f"e{i}".encode() for i in range(5)]
    assert node.broker.metadata_cache.contains("__consumer_offsets")


def test_delete_topic_removes_its_logs(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30000)
    broker = node.broker
    try:
        admin.create_topics([NewTopic("doomed", num_partitions=1, replication_factor=1)])
        wait_until(lambda: broker.log_manager.get_log(BrokerTopicPartition("doomed", 0)) is not None, WAIT_S,
                   "log never created")
        admin.delete_topics(["doomed"])
        wait_until(lambda: not broker.metadata_cache.contains("doomed"), WAIT_S, "topic never removed")
        wait_until(lambda: broker.log_manager.get_log(BrokerTopicPartition("doomed", 0)) is None, WAIT_S,
                   "log never deleted")
    finally:
        admin.close()


def test_controlled_shutdown_moves_leadership(node):
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic("moving", num_partitions=1, replication_factor=1)])
    finally:
        admin.close()
    broker = node.broker
    wait_until(lambda: broker.metadata_cache.num_partitions("moving") == 1, WAIT_S, "topic never arrived")
    assert {p.leader_id for p in broker.metadata_cache.current_image().partitions.topic_partitions("moving")} \
        == {BROKER_ID}
    broker.shutdown()
    assert broker.status is ProcessStatus.SHUTDOWN
    assert broker.current_state() is BrokerState.SHUTTING_DOWN
    assert broker.await_shutdown(5)
    # the controller took the leadership away before letting the broker go
    ids = node.controller.find_topic_ids(["moving"]).result(timeout=WAIT_S)
    topic_id = ids["moving"].result
    leaders = {node.controller.replication_control.get_partition(topic_id, 0).leader}
    assert leaders == {-1}
