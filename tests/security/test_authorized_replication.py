"""Three brokers replicating over SASL_PLAINTEXT with the ACL authorizer closed by default
(``allow.everyone.if.no.acl.found=false``): the brokers log in to each other's INTERNAL
listener as ``User:broker`` (SCRAM-SHA-512, created in ZooKeeper before the first start), a
super user, so the controller's LeaderAndIsr / UpdateMetadata / StopReplica, the replica
fetchers' Fetch, AlterIsr and controlled shutdown pass their ClusterAction checks, while a
client holding only ``--producer`` ACLs writes and one without ACLs is refused.

Real broker processes and ZooKeeper, kafka-python clients, bin/kafka-acls.sh; every wait is
bounded and nothing is timed.
"""
from __future__ import annotations

import subprocess
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAuthorizationFailedError
from kazoo.client import KazooClient

from tests.integration.broker_harness import ROOT, BrokerProcess, free_port, unique_chroot
from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster
from tests.integration.test_replication import log_end_offset, wait_replicas_identical

BROKER_PASSWORD = "broker-secret"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "mallory": "mallory-secret"}
PLAIN_JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
              + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              f'username="broker" password="{BROKER_PASSWORD}";')
WAIT = 90.0


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("authorized-replication")
    zk = KazooClient(hosts=zookeeper.connect_string, timeout=10.0)
    zk.start(timeout=10.0)
    try:
        zk.ensure_path(chroot)
    finally:
        zk.stop()
        zk.close()
    result = _run("kafka-configs.sh", "--zookeeper", zookeeper.connect_string + chroot, "--alter", "--add-config",
                  f"SCRAM-SHA-512=[iterations=4096,password={BROKER_PASSWORD}]", "--entity-type", "users",
                  "--entity-name", "broker")
    assert result.returncode == 0, result.stderr
    brokers, internal_ports = [], []
    for broker_id in range(3):
        broker = BrokerProcess(tmp_path_factory.mktemp(f"authz-repl-{broker_id}-"), zookeeper.connect_string, chroot,
                               broker_id)
        internal = free_port()
        props = dict(CLUSTER_PROPS)
        props.update({
            # PLAINTEXT for the harness's readiness check only: User:ANONYMOUS has no ACL at all
            "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},INTERNAL://127.0.0.1:{internal}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
            "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            "listener.name.internal.plain.sasl.jaas.config": PLAIN_JAAS,
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            "super.users": "User:broker;User:admin",
            "replica.lag.time.max.ms": "5000",
        })
        broker.overrides.update(props)
        broker.write_config()
        brokers.append(broker)
        internal_ports.append(internal)
    started = ReplicatedCluster(brokers).start()
    started.internal_bootstrap = ",".join(f"127.0.0.1:{p}" for p in internal_ports)
    admin_config = tmp_path_factory.mktemp("authz-repl-config") / "admin.properties"
    admin_config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                            'username="admin" password="admin-secret";\n')
    started.admin_config = str(admin_config)
    yield started
    for b in brokers:
        if b.running:
            assert b.stop() == 0, b.tail()
    started.close()


def _client(cluster, user: str) -> dict:
    return {"bootstrap_servers": cluster.internal_bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN", "sasl_plain_username": user, "sasl_plain_password": USERS[user]}


def _produce(cluster, user: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(acks="all", request_timeout_ms=30000, max_block_ms=30000, retries=10,
                             retry_backoff_ms=200, **_client(cluster, user))
    try:
        futures = [producer.send(topic, v, partition=0) for v in values]
        for f in futures:
            f.get(timeout=120)
    finally:
        producer.close(timeout=30)


def test_rf3_replication_under_acls_and_a_producer_acl(cluster) -> None:
    topic = f"authz-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(request_timeout_ms=30000, **_client(cluster, "admin"))
    try:
        admin.create_topics([NewTopic(topic, replica_assignments={0: [0, 1, 2]})])
    finally:
        admin.close()
    # LeaderAndIsr and UpdateMetadata from the controller (ClusterAction) reached all three
    cluster.wait_fully_replicated(topic, 1)
    result = _run("kafka-acls.sh", "--bootstrap-server", cluster.internal_bootstrap.split(",")[0],
                  "--command-config", cluster.admin_config, "--add", "--allow-principal", "User:alice",
                  "--producer", "--topic", topic)
    assert result.returncode == 0, result.stdout + result.stderr

    _produce(cluster, "alice", topic, [b"alice-%04d" % i for i in range(200)])
    # the followers' fetches (ClusterAction) copied every batch
    batches = wait_replicas_identical(cluster, topic)
    assert batches and all(log_end_offset(b, topic) == 200 for b in cluster.brokers)
    assert sorted(cluster.state(topic)["isr"]) == [0, 1, 2]

    # No ACL, no write, and nothing appended
    with pytest.raises((TopicAuthorizationFailedError, KafkaError)):
        _produce(cluster, "mallory", topic, [b"mallory"])
    assert log_end_offset(cluster.brokers[0], topic) == 200

    # A follower's controlled shutdown and restart: ControlledShutdown to the controller,
    # AlterIsr from the leader, the restarted fetcher catching up, all as User:broker.
    state = cluster.state(topic)
    follower = next(i for i in (0, 1, 2) if i != state["leader"] and i != cluster.controller_id())
    assert cluster.broker(follower).stop() == 0
    assert "Controlled shutdown succeeded" in cluster.broker(follower).output()
    cluster.wait_state(topic, lambda s: follower not in s["isr"], f"{follower} leaves the ISR")
    _produce(cluster, "alice", topic, [b"later-%04d" % i for i in range(50)])
    cluster.broker(follower).start(WAIT)
    cluster.wait_fully_replicated(topic, 1)
    wait_replicas_identical(cluster, topic)
    assert log_end_offset(cluster.brokers[follower], topic) == 250
