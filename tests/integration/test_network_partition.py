"""A leader cut off from ZooKeeper and the other brokers by a network partition.

The test builds its own network out of Linux network namespaces: a hub namespace holding a
bridge, ZooKeeper and the test's clients, and one namespace per broker joined to the bridge by
a veth pair. Addresses are in 10.213.0.0/16 and exist only inside those namespaces; nothing
outside them (or loopback) is touched. The partition is the hub end of the leader's veth pair
set down (and, inside the leader's namespace, the other addresses made unreachable so that
connects fail at once): the leader keeps its address, but reaches nobody and nobody reaches it,
except a client the test runs inside the leader's own namespace.

What must hold:
* the controller, once the leader's ZooKeeper session has expired, elects a new leader from
  the ISR, and acks=all writes go on there;
* the isolated old leader acknowledges no acks=all write: its followers are gone, and the
  AlterIsr that would shrink its ISR cannot reach the controller;
* healed, the old leader registers again, follows, truncates the records it took alone, and
  every replica ends up with the same batches holding every acknowledged record.

Needs root and `ip netns`; skips otherwise.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid

import pytest
from kafka import KafkaProducer
from kafka.errors import KafkaError

from tests.integration.broker_harness import ROOT, BrokerProcess, unique_chroot, wait_until
from tests.integration.netns_harness import (KAFKA_PORT, ZK_PORT, Network, can_make_namespaces, enter_namespace,
                                            run_in_namespace)
from tests.integration.replicated_cluster import (CLUSTER_PROPS, WAIT, ProduceLoad, ReplicatedCluster,
                                                  check_nothing_lost)
from tests.integration.test_replication import values_in_log

class NamespacedZooKeeper:
    """ZooKeeper (bin/zookeeper-server-start.sh) inside the hub namespace, on the hub address."""

    def __init__(self, workdir, network: Network) -> None:
        self.workdir = workdir
        self.network = network
        self.process: subprocess.Popen | None = None

    @property
    def connect_string(self) -> str:
        return f"{self.network.hub_address}:{ZK_PORT}"

    def start(self) -> None:
        config = self.workdir / "zookeeper.properties"
        config.write_text(f"dataDir={self.workdir / 'zookeeper-data'}\nclientPort={ZK_PORT}\n"
                          f"clientPortAddress={self.network.hub_address}\nmaxClientCnxns=0\n"
                          "admin.enableServer=false\ntickTime=500\n4lw.commands.whitelist=srvr,ruok\n")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.network.hub, str(ROOT / "bin" / "zookeeper-server-start.sh"), str(config)],
            stdout=open(self.workdir / "zookeeper.out", "wb"), stderr=subprocess.STDOUT,
            env=dict(os.environ, LOG_DIR=str(self.workdir / "logs")), start_new_session=True)

        def serving() -> bool:  # (called in the hub namespace)
            if self.process.poll() is not None:
                raise RuntimeError((self.workdir / "zookeeper.out").read_text())
            try:
                with socket.create_connection((self.network.hub_address, ZK_PORT), timeout=1) as s:
                    s.sendall(b"srvr")
                    return b"Mode: standalone" in s.recv(4096)
            except OSError:
                return False

        wait_until(serving, 60, "zookeeper did not start in the hub namespace", interval=0.1)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


class NamespacedBroker(BrokerProcess):
    """A broker started inside its namespace, listening on its namespace's address. Its checks
    run from the hub namespace (the test body's)."""

    def __init__(self, workdir, network: Network, zk_connect: str, chroot: str, broker_id: int,
                 overrides: dict[str, str]) -> None:
        self.address = network.address(broker_id)
        namespace = network.namespaces[broker_id]
        props = dict(overrides, listeners=f"PLAINTEXT://{self.address}:{KAFKA_PORT}")
        super().__init__(workdir, zk_connect, chroot, broker_id, port=KAFKA_PORT, overrides=props,
                         preexec_fn=lambda: enter_namespace(namespace))

    @property
    def bootstrap(self) -> str:
        return f"{self.address}:{KAFKA_PORT}"

    def wait_started(self, timeout: float = 60.0) -> None:
        marker = f"[KafkaServer id={self.broker_id}] started".encode()
        start_offset = self._run_offset

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"broker exited with {self.process.returncode}:\n{self.tail()}")
            with open(self.output_path, "rb") as f:
                f.seek(start_offset)
                return marker in f.read()

        wait_until(ready, timeout, f"broker {self.broker_id} did not start:\n{self.tail()}")
        wait_until(lambda: self.registration() is not None, timeout, "broker not registered in ZooKeeper")


@pytest.fixture
def network():
    why = can_make_namespaces()
    if why is not None:
        pytest.skip(f"no network partition test: {why}")
    net = Network().create()
    yield net
    net.delete()


def produce_alone(bootstrap: str, topic: str, values: list[bytes]) -> list[object]:
    """acks=all sends, no retries, to ``bootstrap`` only: what each send ended with."""
    producer = KafkaProducer(bootstrap_servers=[bootstrap], acks="all", enable_idempotence=False, retries=0,
                             request_timeout_ms=6000, max_block_ms=20000, delivery_timeout_ms=15000,
                             metadata_max_age_ms=600000)
    outcomes: list[object] = []
    try:
        futures = [producer.send(topic, v, partition=0) for v in values]
        for f in futures:
            try:
                outcomes.append(f.get(timeout=60))
            except KafkaError as e:
                outcomes.append(e)
    finally:
        producer.close(timeout=10)
    return outcomes


def test_an_isolated_leader_acknowledges_nothing_and_truncates_after_healing(network, tmp_path_factory):
    zookeeper = NamespacedZooKeeper(tmp_path_factory.mktemp("netns-zookeeper"), network)
    chroot = unique_chroot("partition")
    brokers = [NamespacedBroker(tmp_path_factory.mktemp(f"netns-broker{i}-"), network, zookeeper.connect_string,
                                chroot, i, dict(CLUSTER_PROPS)) for i in range(3)]
    try:
        run_in_namespace(network.hub, zookeeper.start)
        run_in_namespace(network.hub, scenario, network, brokers)
    finally:
        for b in brokers:
            if b.running:
                b.kill()
        zookeeper.stop()


def scenario(network: Network, brokers: list[NamespacedBroker]) -> None:
    cluster = ReplicatedCluster(brokers).start()
    try:
        controller = cluster.wait_controller()
        isolated = next(b for b in (2, 1, 0) if b != controller)
        topic = f"partitioned-{uuid.uuid4().hex[:6]}"
        cluster.create_topic(topic, {0: [isolated] + [b for b in (0, 1, 2) if b != isolated]},
                             min_insync_replicas="2")
        before = cluster.state(topic)
        assert before["leader"] == isolated and sorted(before["isr"]) == [0, 1, 2]

        load = ProduceLoad(cluster.bootstrap(), topic, 1, describe=lambda: cluster.describe(topic, 1)).start()
        try:
            load.wait_acked(200)
            network.cut(isolated)

            # the client inside the isolated leader's namespace: acks=all writes are taken into its
            # log but never acknowledged
            alone = [b"isolated-%d" % i for i in range(5)]
            outcomes = run_in_namespace(network.namespaces[isolated], produce_alone,
                                        brokers[isolated].bootstrap, topic, alone)
            assert all(isinstance(o, KafkaError) for o in outcomes), outcomes

            after = cluster.wait_state(topic, lambda s: s["leader"] not in (-1, isolated),
                                       "a new leader elected after the partition")
            assert after["leader"] in before["isr"] and isolated not in after["isr"]
            assert after["leader_epoch"] > before["leader_epoch"]
            load.wait_acked(200)  # the majority side goes on

            # the isolated broker still believes it leads: its ISR shrink never reached the controller
            assert cluster.state(topic)["leader"] != isolated
            outcomes = run_in_namespace(network.namespaces[isolated], produce_alone,
                                        brokers[isolated].bootstrap, topic, [b"isolated-late"])
            assert all(isinstance(o, KafkaError) for o in outcomes), outcomes
            alone.append(b"isolated-late")
            taken_alone = set(values_in_log(brokers[isolated], topic)) & set(alone)

            network.heal(isolated)
            cluster.wait_fully_replicated(topic, 1)
            load.wait_acked(200)
        finally:
            load.stop()
        check_nothing_lost(cluster, load, topic, 1)
        # what only the isolated leader had is gone from its log too: it truncated
        assert not set(values_in_log(brokers[isolated], topic)) & set(alone)
        print(f"isolated leader {isolated} had taken {len(taken_alone)} of {len(alone)} unacknowledged writes; "
              f"truncated")
        assert "Truncating" in brokers[isolated].output(), brokers[isolated].tail(80)
    finally:
        cluster.close()
