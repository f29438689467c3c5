"""Brokers talking to each other over TLS and SASL: the controller's channel, the replica
fetchers, controlled shutdown and AlterIsr all use the inter-broker listener.

Each broker has a PLAINTEXT listener for the clients and the harness, and an INTERNAL
listener named by ``inter.broker.listener.name``:

* SASL_SSL with SCRAM-SHA-512 (``sasl.mechanism.inter.broker.protocol``), client
  certificates required, the brokers' own user created in ZooKeeper with kafka-configs.sh
  before any broker starts, as Kafka's documentation has it, and sessions that end after
  ``connections.max.reauth.ms`` (the brokers re-authenticate their connections);
* SSL with client certificates required, two brokers, and the inter-broker key store of one
  of them replaced through kafka-configs.sh by one signed by a new CA, after which the other
  broker trusts only the new CA: the controller's channel and a follower's fetcher reconnect
  with the new store (the broker's shared, reconfigurable client side of the listener).

Real broker processes, real ZooKeeper, kafka-python clients; every wait is bounded and
nothing is timed.
"""
from __future__ import annotations

import pathlib
import socket
import ssl
import subprocess
import uuid

import pytest
from kafka import KafkaProducer
from kazoo.client import KazooClient

from tests.integration.broker_harness import ROOT, BrokerProcess, free_port, unique_chroot, wait_until
from tests.integration.replicated_cluster import CLUSTER_PROPS, ReplicatedCluster
from tests.integration.test_replication import log_end_offset, wait_replicas_identical
from tests.security.certs import Pki, issue_server_keystore, make_pki

BROKER_USER = "broker"
BROKER_PASSWORD = "broker-secret"
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="{user}" password="{password}";')
WAIT = 90.0
REAUTH_MS = 3000


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def _kafka_configs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def _broker(tmp_path_factory, zookeeper, chroot: str, broker_id: int, pki, protocol: str,
            password: str = BROKER_PASSWORD, keystore: pathlib.Path | None = None,
            truststore: pathlib.Path | None = None) -> BrokerProcess:
    broker = BrokerProcess(tmp_path_factory.mktemp(f"inter-broker-{protocol.lower()}-{broker_id}-"),
                           zookeeper.connect_string, chroot, broker_id)
    internal = free_port()
    props = dict(CLUSTER_PROPS)
    props.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},INTERNAL://127.0.0.1:{internal}",
        "listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,INTERNAL:{protocol}",
        "inter.broker.listener.name": "INTERNAL",
        "replica.lag.time.max.ms": "5000",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore or pki.server_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(truststore or pki.ca_cert),
        # the brokers present their key store to each other, and check each other's host name
        "listener.name.internal.ssl.client.auth": "required",
        "ssl.endpoint.identification.algorithm": "https",
    })
    if protocol.startswith("SASL"):
        props.update({
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.internal.scram-sha-512.sasl.jaas.config":
                SCRAM_JAAS.format(user=BROKER_USER, password=password),
            # sessions of 3 s: the brokers' own connections re-authenticate as they go (KIP-368)
            "listener.name.internal.connections.max.reauth.ms": str(REAUTH_MS),
        })
    broker.overrides.update(props)
    broker.write_config()
    return broker


def _start_cluster(tmp_path_factory, zookeeper, pki, protocol: str):
    chroot = unique_chroot(f"inter-broker-{protocol.lower()}")
    if protocol.startswith("SASL"):
        zk = KazooClient(hosts=zookeeper.connect_string, timeout=10.0)
        zk.start(timeout=10.0)
        try:
            zk.ensure_path(chroot)
        finally:
            zk.stop()
            zk.close()
        result = _kafka_configs("--zookeeper", zookeeper.connect_string + chroot, "--alter", "--add-config",
                                f"SCRAM-SHA-512=[iterations=4096,password={BROKER_PASSWORD}]",
                                "--entity-type", "users", "--entity-name", BROKER_USER)
        assert result.returncode == 0, result.stderr
    brokers = [_broker(tmp_path_factory, zookeeper, chroot, i, pki, protocol) for i in range(3)]
    return ReplicatedCluster(brokers).start(), chroot


def _stop(cluster: ReplicatedCluster, extra: list[BrokerProcess] = ()) -> None:
    for b in [*extra, *cluster.brokers]:
        if b.running:
            assert b.stop() == 0, b.tail()
    cluster.close()


@pytest.fixture(scope="module")
def sasl_ssl_cluster(zookeeper, tmp_path_factory, pki):
    cluster, chroot = _start_cluster(tmp_path_factory, zookeeper, pki, "SASL_SSL")
    cluster.chroot = chroot
    extra: list[BrokerProcess] = []
    cluster.extra = extra
    yield cluster
    _stop(cluster, extra)


def _produce(cluster: ReplicatedCluster, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", request_timeout_ms=30000,
                             retries=10, retry_backoff_ms=200)
    try:
        futures = [producer.send(topic, v, partition=0) for v in values]
        for f in futures:
            f.get(timeout=120)
    finally:
        producer.close(timeout=30)


def _topic() -> str:
    return f"ib-{uuid.uuid4().hex[:8]}"


def test_sasl_ssl_inter_broker_replicates_and_a_restarted_follower_rejoins(sasl_ssl_cluster) -> None:
    cluster = sasl_ssl_cluster
    topic = _topic()
    cluster.create_topic(topic, {0: [0, 1, 2]})
    cluster.wait_fully_replicated(topic, 1)
    _produce(cluster, topic, [b"first-%04d" % i for i in range(300)])
    batches = wait_replicas_identical(cluster, topic)
    assert batches and log_end_offset(cluster.brokers[0], topic) == 300

    state = cluster.state(topic)
    controller = cluster.controller_id()
    follower = next(i for i in (0, 1, 2) if i != state["leader"] and i != controller)
    assert cluster.broker(follower).kill() != 0
    # the leader drops it from the ISR (AlterIsr to the controller over the inter-broker listener)
    cluster.wait_state(topic, lambda s: follower not in s["isr"], f"{follower} leaves the ISR")
    _produce(cluster, topic, [b"while-down-%04d" % i for i in range(200)])
    cluster.broker(follower).restart()
    # the restarted follower catches up over SASL_SSL and is taken back into the ISR
    cluster.wait_fully_replicated(topic, 1)
    _produce(cluster, topic, [b"after-%04d" % i for i in range(100)])
    wait_replicas_identical(cluster, topic)
    assert log_end_offset(cluster.brokers[follower], topic) == 600

    # A clean stop of the leader asks the controller (over the same listener) to move its
    # leadership first: controlled shutdown.
    leader = cluster.state(topic)["leader"]
    assert cluster.broker(leader).stop() == 0
    assert "Controlled shutdown succeeded" in cluster.broker(leader).output()
    assert cluster.state(topic)["leader"] not in (leader, -1)
    cluster.broker(leader).start(WAIT)
    cluster.wait_fully_replicated(topic, 1)
    # All along, sessions of REAUTH_MS ended under the brokers' connections: they re-authenticated
    # in time, never used one past its end.
    for b in cluster.brokers:
        assert "SASL session expired" not in b.output(), b.tail(60)


def test_a_broker_with_a_wrong_inter_broker_password_cannot_replicate(sasl_ssl_cluster, zookeeper,
                                                                      tmp_path_factory, pki) -> None:
    cluster = sasl_ssl_cluster
    intruder = _broker(tmp_path_factory, zookeeper, cluster.chroot, 3, pki, "SASL_SSL", password="not-the-secret")
    cluster.extra.append(intruder)
    # It starts: the controller reaches it (inbound, the controller's own right credentials).
    intruder.start(WAIT)
    topic = _topic()
    cluster.create_topic(topic, {0: [0, 3]})
    cluster.wait_state(topic, lambda s: s["leader"] == 0, "broker 0 leads")
    _produce(cluster, topic, [b"v-%03d" % i for i in range(20)])
    # Its fetcher cannot log in to broker 0's INTERNAL listener, and says why.
    wait_until(lambda: "failed authentication due to" in intruder.output(), WAIT,
               f"the intruder never reported its failed login:\n{intruder.tail(60)}", interval=0.5)
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in intruder.output()
    # The leader logs the refused logins (INFO, as Kafka's SaslServerAuthenticator failures).
    wait_until(lambda: "Failed authentication with" in cluster.broker(0).output(), WAIT,
               "the leader never logged the refused login", interval=0.5)
    assert log_end_offset(intruder, topic) == 0
    assert cluster.state(topic)["isr"] == [0]
    assert intruder.stop() == 0, intruder.tail()


def _tls_handshake(port: int, ca: pathlib.Path, client: Pki) -> None:
    """A TLS handshake with the listener on ``port``, presenting ``client``'s certificate, then
    one ApiVersions round trip (a refused client certificate shows on the first read in TLS 1.3)."""
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(str(client.client_cert), str(client.client_key))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            # ApiVersions v0, correlation id 1, client id "t"
            body = b"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x01t"
            tls.sendall(len(body).to_bytes(4, "big") + body)
            if len(tls.recv(4)) != 4:
                raise ConnectionError("closed by the broker")


def test_ssl_inter_broker_key_store_replaced_at_runtime(zookeeper, tmp_path_factory, pki) -> None:
    """Broker 0 starts with a key store of the old CA, broker 1 with one of a new CA; both trust
    both CAs, and replicate. Broker 0's inter-broker key store is replaced dynamically by one of
    the new CA; broker 1 then restarts trusting only the new CA. Broker 0's clients of the
    listener (the controller's channel, then its fetcher) can reach broker 1 only with the new
    store, which they take without a restart of broker 0."""
    new_ca = make_pki(tmp_path_factory.mktemp("pki-new-ca"))
    renewed = issue_server_keystore(new_ca, "broker-0")
    stores = pathlib.Path(tmp_path_factory.mktemp("trust"))
    both = pki.ca_cert.read_text() + new_ca.ca_cert.read_text()
    trust = {i: stores / f"trust-{i}.pem" for i in (0, 1)}
    for path in trust.values():
        path.write_text(both)
    chroot = unique_chroot("inter-broker-ssl")
    overrides = {"default.replication.factor": "2", "offsets.topic.replication.factor": "2"}
    brokers = [_broker(tmp_path_factory, zookeeper, chroot, 0, pki, "SSL", truststore=trust[0]),
               _broker(tmp_path_factory, zookeeper, chroot, 1, new_ca, "SSL", truststore=trust[1])]
    for b in brokers:
        b.overrides.update(overrides)
        b.write_config()
    cluster = ReplicatedCluster(brokers)
    try:
        # broker 0 first: it is the controller throughout
        cluster.start([0])
        assert cluster.wait_controller() == 0
        cluster.start([1])
        topic = _topic()
        # partition 0 led by broker 0, partition 1 by broker 1 (broker 0 its follower)
        cluster.create_topic(topic, {0: [0, 1], 1: [1, 0]})
        for p in (0, 1):
            cluster.wait_state(topic, lambda s: sorted(s["isr"]) == [0, 1], f"{topic}-{p}: full ISR", p)
        _produce(cluster, topic, [b"before-%04d" % i for i in range(100)])
        wait_replicas_identical(cluster, topic, ids=(0, 1))

        result = _kafka_configs("--bootstrap-server", brokers[0].bootstrap, "--entity-type", "brokers",
                                "--entity-name", "0", "--alter", "--add-config",
                                f"listener.name.internal.ssl.keystore.location={renewed}")
        assert result.returncode == 0, result.stdout + result.stderr
        # the listener's server side and the broker's client side of it both take the new store
        for side in ("server", "client"):
            wait_until(lambda side=side: f"Created new {side} SSL context for listener INTERNAL"
                       in brokers[0].output(), WAIT, f"broker 0 never took the new store ({side})",
                       interval=0.2)

        # Broker 1 comes back trusting the new CA only: a certificate of the old CA is refused.
        assert brokers[1].stop() == 0, brokers[1].tail()
        trust[1].write_text(new_ca.ca_cert.read_text())
        internal_port = int(brokers[1].overrides["listeners"].rsplit(":", 1)[1])
        # broker 1's own start waits on the controller's UpdateMetadata: broker 0's channel to it
        # reconnects, and only the new key store gets through
        brokers[1].start(WAIT)
        with pytest.raises(OSError):
            _tls_handshake(internal_port, new_ca.ca_cert, pki)
        _tls_handshake(internal_port, new_ca.ca_cert, new_ca)
        for p in (0, 1):
            cluster.wait_state(topic, lambda s: sorted(s["isr"]) == [0, 1], f"{topic}-{p}: full ISR again", p)
        # Broker 1 leads partition 1 again; broker 0's fetcher connects to it anew.
        elected = subprocess.run([str(ROOT / "bin" / "kafka-leader-election.sh"), "--bootstrap-server",
                                  brokers[0].bootstrap, "--election-type", "preferred", "--topic", topic,
                                  "--partition", "1"], capture_output=True, text=True, timeout=120)
        assert elected.returncode == 0, elected.stdout + elected.stderr
        cluster.wait_state(topic, lambda s: s["leader"] == 1, f"{topic}-1: broker 1 leads", 1)
        wait_until(lambda: brokers[1].leads(topic, [1]), WAIT, "broker 1 never led partition 1")
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap(), acks="all", request_timeout_ms=30000,
                                 retries=10, retry_backoff_ms=200)
        try:
            for f in [producer.send(topic, b"after-%04d" % i, partition=1) for i in range(100)]:
                f.get(timeout=120)
        finally:
            producer.close(timeout=30)
        wait_replicas_identical(cluster, topic, ids=(0, 1), partition=1)
        assert log_end_offset(brokers[0], topic, 1) == log_end_offset(brokers[1], topic, 1) >= 100
        assert "failed authentication" not in brokers[0].output(), brokers[0].tail(60)
    finally:
        _stop(cluster)
