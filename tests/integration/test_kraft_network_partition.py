"""The active controller of a KRaft quorum cut off from the other nodes by a network partition.

Three combined nodes (``process.roles=broker,controller``, the three voters), each in a network
namespace of its own on a bridge the test builds (tests/integration/netns_harness.py); the test's
clients sit in the hub namespace. The active controller's link is cut. Kafka 2.8's Raft leader
does not step down by itself when it loses its majority: it stays leader of its old epoch,
only unable to commit. What must hold:

* the two others elect a leader of a higher epoch, fence the cut node's broker, and serve: a
  topic created through them exists and takes acks=all records;
* the cut node commits nothing: a topic asked of its controller (by a client inside its
  namespace) is never created, neither then nor after healing;
* healed, the cut node learns the new epoch, follows the new leader (one leader, one epoch,
  as every node's DescribeQuorum says), drops what it appended alone, catches up with the
  metadata it missed (the topic created meanwhile), is unfenced again, and every record
  acknowledged before, during and after the partition is read back.

Needs root and `ip netns`; skips otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import ROOT, RawClient, wait_until
from tests.integration.kraft_harness import KRaftBrokerProcess, random_uuid_text
from tests.integration.netns_harness import KAFKA_PORT, Network, can_make_namespaces, enter_namespace, run_in_namespace

CONTROLLER_PORT = 9093
NODES = 3
WAIT = 90.0
ELECTION_TIMEOUT_MS = 1000
SESSION_TIMEOUT_MS = 3000


class NamespacedKRaftNode(KRaftBrokerProcess):
    """A combined KRaft node started inside its own namespace, listening on its namespace's
    address; checks run from the hub namespace (the test body's)."""

    def __init__(self, workdir, network: Network, node_id: int, voters: str) -> None:
        self.address = network.address(node_id - 1)
        self.namespace = network.namespaces[node_id - 1]
        super().__init__(workdir, node_id, KAFKA_PORT, voters, overrides={
            "process.roles": "broker,controller",
            "listeners": f"PLAINTEXT://{self.address}:{KAFKA_PORT},CONTROLLER://{self.address}:{CONTROLLER_PORT}",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.replication.factor": "3",
            "min.insync.replicas": "2",
            "controller.quorum.election.timeout.ms": str(ELECTION_TIMEOUT_MS),
            "controller.quorum.fetch.timeout.ms": "2000",
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
        })
        self.output_path = self.workdir / "node.out"

    @property
    def bootstrap(self) -> str:
        return f"{self.address}:{KAFKA_PORT}"

    def start(self, timeout: float = 60.0, wait: bool = True) -> "NamespacedKRaftNode":
        self._run_offset = self.output_path.stat().st_size if self.output_path.exists() else 0
        self._output = open(self.output_path, "ab")
        namespace = self.namespace
        self.process = subprocess.Popen([str(ROOT / "bin" / "kafka-server-start.sh"), str(self.config_path)],
                                        cwd=ROOT, stdout=self._output, stderr=subprocess.STDOUT,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1", LOG_DIR=str(self.logs_dir)),
                                        preexec_fn=lambda: enter_namespace(namespace))
        if wait:
            self.wait_started(timeout)
        return self

    def wait_started(self, timeout: float = 60.0) -> None:
        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"node exited with {self.process.returncode}:\n{self.tail()}")
            return self.UNFENCED_MARKER in self.run_output()

        wait_until(ready, timeout, lambda: f"node {self.node_id} was not unfenced:\n{self.tail()}")

    def quorum_state(self) -> tuple[int, int] | None:
        """(leader id, leader epoch) as this node last recorded them in its ``quorum-state`` file
        (FileBasedStateStore writes it at every election it takes part in or learns of); None
        while it knows no leader. (DescribeQuorum would not do: only the leader answers it.)"""
        try:
            state = json.loads((self.log_dir / "@metadata-0" / "quorum-state").read_text())
        except (OSError, ValueError):
            return None
        if int(state.get("leaderId", -1)) < 0:
            return None
        return int(state["leaderId"]), int(state["leaderEpoch"])


@pytest.fixture
def network():
    why = can_make_namespaces()
    if why is not None:
        pytest.skip(f"no network partition test: {why}")
    net = Network(brokers=NODES).create()
    yield net
    net.delete()


def test_a_cut_active_controller_commits_nothing_and_follows_after_healing(network, tmp_path_factory):
    voters = ",".join(f"{i}@{network.address(i - 1)}:{CONTROLLER_PORT}" for i in range(1, NODES + 1))
    nodes = {i: NamespacedKRaftNode(tmp_path_factory.mktemp(f"netns-kraft{i}-"), network, i, voters)
             for i in range(1, NODES + 1)}
    cluster_id = random_uuid_text()
    try:
        for node in nodes.values():
            node.format(cluster_id)
        run_in_namespace(network.hub, scenario, network, nodes)
    finally:
        for node in nodes.values():
            if node.running:
                node.kill()


def bootstrap(nodes, ids) -> str:
    return ",".join(nodes[i].bootstrap for i in ids)


def one_leader(nodes, ids, min_epoch: int = 0) -> tuple[int, int]:
    """The (leader, epoch) every node of ``ids`` agrees on, once they all do, at least ``min_epoch``."""
    seen: dict = {}

    def agreed() -> bool:
        seen.clear()
        seen.update({i: nodes[i].quorum_state() for i in ids})
        views = set(seen.values())
        return len(views) == 1 and None not in views and next(iter(views))[1] >= min_epoch

    wait_until(agreed, WAIT, lambda: f"no agreed leader of epoch >= {min_epoch}: {seen}", interval=0.2)
    return next(iter(seen.values()))


def metadata(node: NamespacedKRaftNode):
    """The node's own Metadata (v9) answer for every topic, asked of it alone (a client would go
    on to other brokers, the cut one among them)."""
    request = build_entity(request_schema(ApiKeys.METADATA, 9), {
        "topics": None, "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
    with RawClient(KAFKA_PORT, timeout=10, host=node.address) as client:
        return client.request(ApiKeys.METADATA, 9, request)


def registered_brokers(nodes, via: int) -> set[int] | None:
    """The unfenced brokers as node ``via``'s metadata lists them (None if it does not answer)."""
    try:
        return {int(b.node_id) for b in metadata(nodes[via]).brokers}
    except OSError:
        return None


def topic_names(nodes, via: int) -> set[str] | None:
    try:
        return {t.name for t in metadata(nodes[via]).topics}
    except OSError:
        return None


def create_topic(servers: str, name: str, replicas: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=15000)
    try:
        admin.create_topics([NewTopic(name, 1, replicas)], timeout_ms=10000)
    finally:
        admin.close()


def produce(servers: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=servers, acks="all", retries=10, request_timeout_ms=10000,
                             max_block_ms=60000, delivery_timeout_ms=60000)
    try:
        for value in values:
            producer.send(topic, value, partition=0).get(timeout=60)
    finally:
        producer.close(timeout=10)


def consume(servers: str, topic: str, count: int) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False, request_timeout_ms=20000)
    tp = TopicPartition(topic, 0)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got: list[bytes] = []

        def read_all() -> bool:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in records)
            return len(got) >= count

        wait_until(read_all, WAIT, lambda: f"{topic}: read {len(got)} of {count}")
        return got
    finally:
        consumer.close()


def ask_cut_controller_for_a_topic(address: str, name: str) -> object:
    """CreateTopics sent straight to the cut node's controller listener, from inside its
    namespace: the controller appends the topic's records to its log at its old epoch, where
    they can never commit. What it ended with: the answer's error, or the socket's timeout.

    (Not through the node's broker: a broker forwards CreateTopics and, as Kafka's
    BrokerToControllerRequestThread does, resends it to whichever controller is active until
    its retry timeout, so once healed the new controller could legitimately create it.)"""
    request = build_entity(request_schema(ApiKeys.CREATE_TOPICS, 5), {
        "topics": [{"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
        "timeout": 5000, "validate_only": False})
    try:
        with RawClient(CONTROLLER_PORT, timeout=15, host=address) as client:
            response = client.request(ApiKeys.CREATE_TOPICS, 5, request)
    except OSError as e:
        return e
    return Errors.for_code(int(response.topics[0].error_code))


def scenario(network: Network, nodes: dict[int, NamespacedKRaftNode]) -> None:
    for node in nodes.values():
        node.start(wait=False)
    for node in nodes.values():
        node.wait_started(WAIT)
    everyone = sorted(nodes)
    # every node's metadata lists every broker before a client is let in (a client that learns
    # of a broker from one node's answer would not find it in another's)
    for i in everyone:
        wait_until(lambda: registered_brokers(nodes, i) == set(everyone), WAIT,
                   lambda: f"node {i} lists {registered_brokers(nodes, i)}")
    leader, epoch = one_leader(nodes, everyone)
    others = [i for i in everyone if i != leader]

    before = [b"before-%d" % i for i in range(30)]
    create_topic(bootstrap(nodes, everyone), "before", 3)
    produce(bootstrap(nodes, everyone), "before", before)

    network.cut(leader - 1)

    # the majority side elects a leader of a later epoch and fences the cut node's broker
    new_leader, new_epoch = one_leader(nodes, others, min_epoch=epoch + 1)
    assert new_leader in others
    # (on both: a client bootstrapped from either must not be sent to the cut node's address)
    for i in others:
        wait_until(lambda: registered_brokers(nodes, i) == set(others), WAIT,
                   lambda: f"node {leader} not fenced in node {i}'s metadata: {registered_brokers(nodes, i)}")

    # ...and serves: a topic created, records acknowledged by both of its replicas
    during = [b"during-%d" % i for i in range(30)]
    create_topic(bootstrap(nodes, others), "during", 2)
    produce(bootstrap(nodes, others), "during", during)
    produce(bootstrap(nodes, others), "before", [b"before-late"])

    # the cut node still believes it leads its old epoch, but commits nothing
    assert nodes[leader].quorum_state() == (leader, epoch)
    outcome = run_in_namespace(network.namespaces[leader - 1], ask_cut_controller_for_a_topic,
                               nodes[leader].address, "isolated")
    assert outcome is not Errors.NONE, "the cut controller answered that it created a topic"
    assert "isolated" not in (topic_names(nodes, new_leader) or ())

    network.heal(leader - 1)

    # one leader and one epoch on every node, the old leader following it
    assert one_leader(nodes, everyone, min_epoch=new_epoch) == (new_leader, new_epoch)
    wait_until(lambda: registered_brokers(nodes, new_leader) == set(everyone), WAIT,
               lambda: f"node {leader} not unfenced after healing: {registered_brokers(nodes, new_leader)}")
    # the healed node has the metadata it missed, and not what it appended alone
    wait_until(lambda: "during" in (topic_names(nodes, leader) or ()), WAIT,
               "the healed node never learned of 'during'")
    for i in everyone:
        names = topic_names(nodes, i)
        assert names is not None and "isolated" not in names, f"node {i} lists a topic only the cut node took: {names}"
    # (the raft client's diverging-epoch truncation of its metadata log)
    assert "Truncated to offset" in nodes[leader].output(), nodes[leader].tail(80)

    # everything acknowledged is there, read through the healed node as well
    assert consume(nodes[leader].bootstrap, "before", len(before) + 1) == before + [b"before-late"]
    assert consume(bootstrap(nodes, everyone), "during", len(during)) == during
