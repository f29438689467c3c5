"""The ISR, AlterIsr, elections and controlled shutdown across three real broker processes.

Brokers 0, 1 and 2 share one ZooKeeper chroot. What the tests look at is what an operator
would: the partition state znodes (/brokers/topics/<t>/partitions/<p>/state), the brokers'
logs, kafka-python clients and bin/kafka-topics.sh. Every wait is bounded; no timing is
asserted.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

from tests.integration.broker_harness import ROOT, BrokerProcess, read_znode, unique_chroot, wait_until

LAG_MS = 3000  # replica.lag.time.max.ms for these clusters: a silent follower leaves the ISR soon


# -- the cluster -------------------------------------------------------------------------------

class Cluster:
    def __init__(self, brokers: list[BrokerProcess]) -> None:
        self.brokers = brokers
        self.zk = brokers[0].zk()
        self.paused: set[int] = set()  # stopped with SIGSTOP: running, but answering nobody
        self._admin: KafkaAdminClient | None = None

    def start(self) -> "Cluster":
        for b in self.brokers:
            b.start(wait=False)
        for b in self.brokers:
            b.wait_started()
        return self

    def live(self) -> list[BrokerProcess]:
        return [b for b in self.brokers if b.running and b.broker_id not in self.paused]

    def pause(self, broker_id: int) -> None:
        os.kill(self.brokers[broker_id].process.pid, signal.SIGSTOP)
        self.paused.add(broker_id)

    def resume(self, broker_id: int) -> None:
        os.kill(self.brokers[broker_id].process.pid, signal.SIGCONT)
        self.paused.discard(broker_id)

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.live())

    def admin(self) -> KafkaAdminClient:
        if self._admin is None:
            self._admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=30000)
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
        self.zk.stop()
        self.zk.close()

    def controller_id(self) -> int:
        data, _ = self.zk.get("/controller")
        return int(json.loads(data)["brokerid"])

    def roles_avoiding_the_controller(self) -> tuple[int, int, int]:
        """(leader, follower, follower to silence): the silenced one is not the controller, which
        must stay reachable to answer the leader's AlterIsr."""
        controller = self.controller_id()
        silenced = next(b for b in (2, 1, 0) if b != controller)
        leader, follower = [b for b in (0, 1, 2) if b != silenced]
        return leader, follower, silenced

    def state(self, topic: str, partition: int) -> dict | None:
        """The partition state znode's JSON plus its zkVersion."""
        found = read_znode(self.zk, f"/brokers/topics/{topic}/partitions/{partition}/state")
        return None if found is None else dict(json.loads(found[0]), zk_version=found[1].version)

    def wait_state(self, topic: str, partition: int, condition, message: str, timeout: float = 60.0) -> dict:
        found: list[dict] = []

        def check() -> bool:
            s = self.state(topic, partition)
            if s is not None and condition(s):
                found.append(s)
                return True
            return False

        wait_until(check, timeout, f"{message}; last state {self.state(topic, partition)}", interval=0.2)
        return found[0]

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 3,
                     assignment: dict[int, list[int]] | None = None, **configs: str) -> None:
        topic_configs = {k.replace("_", "."): v for k, v in configs.items()}
        if assignment is not None:
            new = NewTopic(name, replica_assignments=assignment, topic_configs=topic_configs)
        else:
            new = NewTopic(name, partitions, replication_factor, topic_configs=topic_configs)
        self.admin().create_topics([new], timeout_ms=30000)
        for p in range(partitions if assignment is None else len(assignment)):
            self.wait_state(name, p, lambda s: s["leader"] >= 0, f"{name}-{p} has a leader")

    def tool(self, script: str, *args: str) -> list[str]:
        done = subprocess.run([str(ROOT / "bin" / script), "--bootstrap-server", self.bootstrap, *args],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    def topics_tool(self, *args: str) -> list[str]:
        return self.tool("kafka-topics.sh", *args)

    def metadata_isr(self, topic: str, partition: int, via: int) -> list[int]:
        """The ISR broker ``via`` answers in Metadata: what its cache got from the controller.
        (Asked directly: admin clients may pick a paused broker and wait on it.)"""
        [found] = [t for t in self.brokers[via].metadata((topic,)).topics if t.name == topic]
        [p] = [x for x in found.partitions if x.partition_index == partition]
        return sorted(int(i) for i in p.isr_nodes)


@pytest.fixture
def make_cluster(broker_factory):
    made: list[Cluster] = []

    def make(**overrides: str) -> Cluster:
        chroot = unique_chroot("isr")
        props = {"replica.lag.time.max.ms": str(LAG_MS), "controlled.shutdown.retry.backoff.ms": "500",
                 "auto.leader.rebalance.enable": "false"}
        props.update(overrides)
        cluster = Cluster([broker_factory(i, chroot=chroot, overrides=props) for i in range(3)]).start()
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        for b in cluster.brokers:
            if b.process is not None and b.process.poll() is None:
                os.kill(b.process.pid, signal.SIGCONT)  # a paused broker cannot stop
        cluster.close()


def broker(cluster: Cluster, broker_id: int) -> BrokerProcess:
    return cluster.brokers[broker_id]


def topic_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def read_offsets(cluster: Cluster, topic: str) -> list[int]:
    """The offsets of partition 0 from the beginning up to its high watermark, in order (the
    producers are done: nothing is written while it reads)."""
    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, enable_auto_commit=False)
    try:
        end = consumer.end_offsets([tp])[tp]
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        offsets: list[int] = []
        wait_until(lambda: (offsets.extend(r.offset for batch in consumer.poll(timeout_ms=500).values()
                                           for r in batch) or consumer.position(tp) >= end),
                   60, f"{topic}-0 not read up to {end}")
        return offsets
    finally:
        consumer.close()


# -- the ISR ---------------------------------------------------------------------------------------

def test_a_follower_that_stops_fetching_leaves_the_isr_through_alter_isr(make_cluster):
    # A long session keeps the paused broker registered: only its leader can take it out of
    # the ISR, and a leader's AlterIsr leaves the leader epoch as it was (controller-made
    # changes bump it).
    cluster = make_cluster(**{"zookeeper.session.timeout.ms": "30000"})
    leader, follower, silenced = cluster.roles_avoiding_the_controller()
    topic = topic_name("isr-shrink")
    cluster.create_topic(topic, assignment={0: [leader, follower, silenced]}, min_insync_replicas="2")
    before = cluster.state(topic, 0)
    assert before["leader"] == leader and sorted(before["isr"]) == [0, 1, 2]

    producer = KafkaProducer(bootstrap_servers=broker(cluster, leader).bootstrap, acks=1)
    # The producer learns the topic's leader before the pause: a metadata request it sent to
    # the paused broker would wait out its timeout, and a few of those on a loaded machine
    # outlast the paused broker's ZooKeeper session (the controller then moves the partition).
    producer.partitions_for(topic)
    cluster.pause(silenced)
    try:
        # A follower is out of sync only once the leader has records it lacks.
        for i in range(5):
            producer.send(topic, b"r%d" % i).get(timeout=30)
        after = cluster.wait_state(topic, 0, lambda s: silenced not in s["isr"], "the paused follower leaves the ISR")
        assert after["leader"] == leader and leader in after["isr"]
        assert after["leader_epoch"] == before["leader_epoch"], "the ISR change was not the leader's AlterIsr"
        assert after["zk_version"] > before["zk_version"]
        # the znode is written before the controller answers: the leader commits a moment later
        wait_until(lambda: "ISR updated to" in broker(cluster, leader).output(), 30, "the leader commits the ISR")

        # The controller told every broker: their metadata shows the ISR of the znode.
        shown = sorted(cluster.state(topic, 0)["isr"])
        for via in (leader, follower):
            wait_until(lambda: cluster.metadata_isr(topic, 0, via) == shown, 30,
                       f"broker {via}'s metadata shows ISR {shown}", interval=0.5)
    finally:
        producer.close()
        cluster.resume(silenced)


def test_below_ibp_2_7_iv2_the_leader_writes_the_isr_to_zookeeper_and_the_controller_announces_it(make_cluster):
    # ZkIsrManager: no AlterIsr; the leader's conditional write, then an ISR change notification.
    cluster = make_cluster(**{"zookeeper.session.timeout.ms": "30000", "inter.broker.protocol.version": "2.7-IV1",
                              "log.message.format.version": "2.7-IV1"})
    leader, follower, silenced = cluster.roles_avoiding_the_controller()
    topic = topic_name("isr-zk")
    cluster.create_topic(topic, assignment={0: [leader, follower, silenced]})
    before = cluster.state(topic, 0)
    producer = KafkaProducer(bootstrap_servers=broker(cluster, leader).bootstrap, acks=1)
    producer.partitions_for(topic)  # before the pause, as above
    cluster.pause(silenced)
    try:
        for i in range(5):
            producer.send(topic, b"r%d" % i).get(timeout=30)
        after = cluster.wait_state(topic, 0, lambda s: silenced not in s["isr"], "the paused follower leaves the ISR")
        # Written by the leader: its leadership's controller epoch and leader epoch, one version on.
        assert (after["leader"], after["leader_epoch"], after["controller_epoch"]) == (
            leader, before["leader_epoch"], before["controller_epoch"])
        assert after["zk_version"] > before["zk_version"]
        assert "AlterIsr" not in broker(cluster, leader).output()

        # Announced after the linger: the brokers' metadata shows the new ISR.
        shown = sorted(cluster.state(topic, 0)["isr"])
        for via in (leader, follower):
            wait_until(lambda: cluster.metadata_isr(topic, 0, via) == shown, 60,
                       f"broker {via}'s metadata shows ISR {shown}", interval=0.5)
        # the controller consumed the notification
        wait_until(lambda: not cluster.zk.get_children("/isr_change_notification"), 30, "notifications consumed")
    finally:
        producer.close()
        cluster.resume(silenced)


def test_a_resumed_follower_catches_up_and_rejoins_the_isr(make_cluster):
    cluster = make_cluster(**{"zookeeper.session.timeout.ms": "30000"})
    leader, follower, silenced = cluster.roles_avoiding_the_controller()
    topic = topic_name("isr-expand")
    cluster.create_topic(topic, assignment={0: [leader, follower, silenced]}, min_insync_replicas="2")
    producer = KafkaProducer(bootstrap_servers=broker(cluster, leader).bootstrap, acks="all", retries=5)
    producer.partitions_for(topic)  # before the pause (see the first test)
    # and a first record: the idempotent producer's InitProducerId goes to whichever broker it
    # picks, which must not be the one about to be paused
    producer.send(topic, b"before").get(timeout=60)
    cluster.pause(silenced)
    try:
        try:
            # acks=all waits for the silent follower until it leaves the ISR, then goes on
            for i in range(20):
                producer.send(topic, b"while-away-%d" % i).get(timeout=60)
            cluster.wait_state(topic, 0, lambda s: sorted(s["isr"]) == sorted([leader, follower]),
                               "the paused follower leaves the ISR")
        finally:
            cluster.resume(silenced)
        cluster.wait_state(topic, 0, lambda s: sorted(s["isr"]) == [0, 1, 2], "the follower rejoins the ISR")
    finally:
        producer.close()


def test_a_killed_follower_leaves_the_isr_and_acks_all_goes_on(make_cluster):
    cluster = make_cluster()
    topic = topic_name("isr-kill")
    cluster.create_topic(topic, assignment={0: [0, 1, 2]}, min_insync_replicas="2")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retries=5)
    acked = []
    try:
        for i in range(10):
            acked.append(producer.send(topic, b"before-%d" % i).get(timeout=30).offset)
        broker(cluster, 2).kill()
        cluster.wait_state(topic, 0, lambda s: sorted(s["isr"]) == [0, 1], "killed follower 2 leaves the ISR")
        for i in range(10):
            acked.append(producer.send(topic, b"after-%d" % i).get(timeout=30).offset)
        # The reports of kafka-topics.sh, from the ISR the brokers were told (min.insync.replicas=2).
        expected = f"\tTopic: {topic}\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1"
        wait_until(lambda: expected in cluster.topics_tool("--describe", "--topic", topic), 30,
                   f"--describe shows Isr: 0,1; it shows {cluster.topics_tool('--describe', '--topic', topic)}",
                   interval=0.5)
        for flag, listed in (("--under-replicated-partitions", True), ("--at-min-isr-partitions", True),
                             ("--under-min-isr-partitions", False), ("--unavailable-partitions", False)):
            lines = [line for line in cluster.topics_tool("--describe", flag) if f"Topic: {topic}\t" in line]
            assert bool(lines) == listed, (flag, lines)
    finally:
        producer.close()
    offsets = read_offsets(cluster, topic)
    assert sorted(acked) == offsets[:len(acked)]


# -- controlled shutdown ------------------------------------------------------------------------

def test_sigterm_moves_every_leadership_away_before_the_broker_stops(make_cluster):
    # A lag limit the test never reaches: with or without fetchers, the ISR stays whole until the stop.
    cluster = make_cluster(**{"replica.lag.time.max.ms": "600000"})
    topic = topic_name("cs")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    led_by_0 = [p for p in range(3) if cluster.state(topic, p)["leader"] == 0]
    assert led_by_0, "the default assignment spreads leaders over every broker"

    stopping = broker(cluster, 0)
    assert stopping.stop() == 0, stopping.tail()
    out = stopping.output()
    assert "Controlled shutdown succeeded" in out, stopping.tail(80)
    assert "Retrying controlled shutdown" not in out, stopping.tail(80)
    for p in range(3):
        s = cluster.state(topic, p)
        assert s["leader"] in (1, 2) and 0 not in s["isr"], s
    for p in led_by_0:
        assert len(cluster.state(topic, p)["isr"]) == 2  # the rest of the ISR stayed


def test_sigterm_of_a_leader_under_acks_all_load_costs_only_retriable_errors(make_cluster):
    cluster = make_cluster()
    topic = topic_name("cs-load")
    cluster.create_topic(topic, assignment={0: [0, 1, 2]}, min_insync_replicas="2")
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retries=10, retry_backoff_ms=200,
                             max_in_flight_requests_per_connection=1)
    stop = threading.Event()
    acked: list[int] = []
    failures: list[BaseException] = []

    def produce() -> None:
        i = 0
        while not stop.is_set() and i < 100000:
            try:
                acked.append(producer.send(topic, b"v%d" % i).get(timeout=60).offset)
            except KafkaError as e:
                failures.append(e)
            i += 1

    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    try:
        wait_until(lambda: len(acked) >= 50, 60, "the producer gets going", interval=0.1)
        assert broker(cluster, 0).stop() == 0
        count = len(acked)
        wait_until(lambda: len(acked) >= count + 50, 60, "the producer goes on with the new leader", interval=0.1)
    finally:
        stop.set()
        worker.join(120)
        producer.close()
    assert all(getattr(e, "retriable", False) for e in failures), failures
    assert cluster.state(topic, 0)["leader"] in (1, 2)
    read = set(read_offsets(cluster, topic))
    assert set(acked) <= read  # nothing acknowledged by the whole ISR was lost


def test_the_last_broker_stops_without_waiting_through_controlled_shutdown_retries(make_cluster):
    cluster = make_cluster(**{"controlled.shutdown.retry.backoff.ms": "5000", "replica.lag.time.max.ms": "600000"})
    topic = topic_name("cs-last")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    for broker_id in (1, 2):
        assert broker(cluster, broker_id).stop() == 0
    for p in range(3):
        cluster.wait_state(topic, p, lambda s: s["leader"] == 0, f"{topic}-{p} led by the last broker")
    last = broker(cluster, 0)
    assert last.stop() == 0, last.tail()
    out = last.output()
    assert "No other broker is alive to lead the remaining partitions" in out, last.tail(80)
    assert "Retrying controlled shutdown" not in out, last.tail(80)


# -- elections ---------------------------------------------------------------------------------

@pytest.mark.parametrize("scope", ["topic", "broker-default"])
def test_unclean_leader_election_enabled_at_runtime_elects_an_out_of_sync_replica(make_cluster, scope):
    cluster = make_cluster()
    topic = topic_name("unclean")
    cluster.create_topic(topic, assignment={0: [0, 1]})
    # 1 dies: the controller takes it out of the ISR, 0 leads alone.
    broker(cluster, 1).kill()
    cluster.wait_state(topic, 0, lambda s: s["isr"] == [0], "the ISR is the leader alone")
    # 0 dies too; 1 returns, but it is not in the ISR: no clean leader exists.
    broker(cluster, 0).kill()
    cluster.wait_state(topic, 0, lambda s: s["leader"] == -1, "the partition goes offline")
    broker(cluster, 1).restart()
    unavailable = [line for line in cluster.topics_tool("--describe", "--unavailable-partitions") if topic in line]
    assert unavailable and "Leader: none" in unavailable[0]
    assert cluster.state(topic, 0)["leader"] == -1

    entity = ["--topic", topic] if scope == "topic" else ["--entity-type", "brokers", "--entity-default"]
    cluster.tool("kafka-configs.sh", *entity, "--alter", "--add-config", "unclean.leader.election.enable=true")
    elected = cluster.wait_state(topic, 0, lambda s: s["leader"] == 1, "1 is elected without being in sync")
    assert elected["isr"] == [1]
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retries=5)
    try:
        assert producer.send(topic, b"after unclean election").get(timeout=30).offset >= 0
    finally:
        producer.close()
