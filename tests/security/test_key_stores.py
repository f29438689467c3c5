"""JKS, PKCS12 and PEM key and trust stores, made by keytool and openssl (tests/security/keystores.py),
on a broker's TLS listeners and on the clients of it.

One broker process for the module (ZooKeeper mode) with two TLS listeners beside PLAINTEXT:
JKS (JKS key and trust stores, the key under its own password, client certificates required;
the inter-broker listener, so the broker's own connections use the JKS stores as a client)
and P12 (PKCS12 stores). Clients: kafka-python with PEM files exported from the stores by
openssl, confluent-kafka (librdkafka) with its PKCS12 key store, the bin/ tools with JKS and
PKCS12 stores in --command-config. A dynamic update through kafka-configs.sh replaces the P12
listener's key store: new connections get the new certificate, an open one goes on; stores
that fail validation are refused and the current one stays; a store under another password is
taken with its password, which ZooKeeper holds encrypted with password.encoder.secret.
Configuration errors are checked
in-process on a SocketServer, and once on a broker process. Every wait is bounded.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import ssl
import struct
import subprocess
import uuid

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_py.network.socket_server import SocketServer
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.config.config_def import ConfigException
from tests.integration.broker_harness import ROOT, RawClient, free_port, wait_until
from tests.integration.conftest import new_broker
from tests.integration.kraft_harness import listener_overrides
from tests.network.conftest import api_versions_frame
from tests.security.certs import CLIENT_DN, Pki, make_pki
from tests.security.keystores import (
    KEY_PASSWORD,
    OTHER_PASSWORD,
    STORE_PASSWORD,
    TRUST_PASSWORD,
    JavaStores,
    make_java_stores,
)


WRONG = "not-the-password-42"
ENCODER_SECRET = "encoder-secret-7"


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return make_pki(pathlib.Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="module")
def stores(tmp_path_factory, pki) -> JavaStores:
    return make_java_stores(pathlib.Path(tmp_path_factory.mktemp("java-stores")), pki)


def _jks_listener(prefix: str, stores: JavaStores) -> dict[str, str]:
    return {
        f"{prefix}ssl.keystore.type": "JKS", f"{prefix}ssl.keystore.location": str(stores.broker_jks),
        f"{prefix}ssl.keystore.password": STORE_PASSWORD, f"{prefix}ssl.key.password": KEY_PASSWORD,
        f"{prefix}ssl.truststore.type": "JKS", f"{prefix}ssl.truststore.location": str(stores.truststore_jks),
        f"{prefix}ssl.truststore.password": TRUST_PASSWORD,
    }


def _p12_listener(prefix: str, stores: JavaStores) -> dict[str, str]:
    return {
        f"{prefix}ssl.keystore.type": "PKCS12", f"{prefix}ssl.keystore.location": str(stores.broker_p12),
        f"{prefix}ssl.keystore.password": STORE_PASSWORD,
        f"{prefix}ssl.truststore.type": "PKCS12", f"{prefix}ssl.truststore.location": str(stores.truststore_p12),
        f"{prefix}ssl.truststore.password": TRUST_PASSWORD,
    }


@pytest.fixture(scope="module")
def store_broker(request, tmp_path_factory, stores):
    ports = {"JKS": free_port(), "P12": free_port()}
    broker = new_broker(request, "zookeeper", tmp_path_factory.mktemp("store-broker"))
    broker.overrides.update(listener_overrides(broker, {name: ("SSL", port) for name, port in ports.items()}))
    broker.overrides.update(_jks_listener("listener.name.jks.", stores))
    broker.overrides.update(_p12_listener("listener.name.p12.", stores))
    broker.overrides.update({"listener.name.jks.ssl.client.auth": "required", "inter.broker.listener.name": "JKS",
                             "password.encoder.secret": ENCODER_SECRET})
    broker.write_config()
    broker.start()
    broker.ports = ports
    yield broker
    if broker.running:
        assert broker.stop() == 0, broker.tail()


@pytest.fixture(scope="module")
def exported_pem(tmp_path_factory, stores) -> dict[str, pathlib.Path]:
    """The client's key and certificate, and the trusted CA, exported from the stores by openssl."""
    d = pathlib.Path(tmp_path_factory.mktemp("exported"))
    exports = {"client": (stores.client_p12, STORE_PASSWORD, ["-nodes"]),
               "ca": (stores.truststore_p12, TRUST_PASSWORD, ["-nokeys"])}
    for name, (store, password, options) in exports.items():
        subprocess.run(["openssl", "pkcs12", "-in", str(store), "-passin", f"pass:{password}", *options,
                        "-out", str(d / f"{name}.pem")], check=True, capture_output=True, timeout=60)
    return {name: d / f"{name}.pem" for name in exports}


def _der(certificate_file: pathlib.Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(certificate_file.read_text())


class TlsConnection:
    """A raw TLS connection to a listener: the certificate it presented, and ApiVersions over it."""

    def __init__(self, port: int, ca: pathlib.Path, client_pem: pathlib.Path | None = None) -> None:
        context = ssl.create_default_context(cafile=str(ca))
        if client_pem is not None:
            context.load_cert_chain(str(client_pem))
        raw = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.peer_certificate = self.sock.getpeercert(binary_form=True)
        self._correlation_id = 0

    def api_versions(self) -> int:
        """The error code of an ApiVersions answer on this connection."""
        self._correlation_id += 1
        self.sock.sendall(api_versions_frame(self._correlation_id))
        size = struct.unpack(">i", self._read(4))[0]
        payload = self._read(size)
        correlation_id, error_code = struct.unpack(">ih", payload[:6])
        assert correlation_id == self._correlation_id
        return error_code

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the broker")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()


def _tool(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=120)


def _java_command_config(tmp_path: pathlib.Path, stores: JavaStores) -> str:
    path = tmp_path / f"client-{uuid.uuid4().hex[:6]}.properties"
    path.write_text("\n".join([
        "security.protocol=SSL",
        "ssl.truststore.type=JKS", f"ssl.truststore.location={stores.truststore_jks}",
        f"ssl.truststore.password={TRUST_PASSWORD}",
        "ssl.keystore.type=PKCS12", f"ssl.keystore.location={stores.client_p12}",
        f"ssl.keystore.password={STORE_PASSWORD}",
    ]) + "\n")
    return str(path)


# ---- clients over the JKS and PKCS12 listeners ---------------------------------------------

def test_kafka_python_with_exported_pem_files(store_broker, stores, exported_pem) -> None:
    """The JKS listener requires a client certificate; kafka-python presents the one exported
    from the client's PKCS12 store and trusts the CA exported from the PKCS12 trust store."""
    topic = f"jks-{uuid.uuid4().hex[:8]}"
    bootstrap = f"127.0.0.1:{store_broker.ports['JKS']}"
    tls = dict(security_protocol="SSL", ssl_cafile=str(exported_pem["ca"]),
               ssl_certfile=str(exported_pem["client"]), ssl_check_hostname=True)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", max_block_ms=30000, **tls)
    try:
        for i in range(5):
            producer.send(topic, f"record-{i}".encode()).get(timeout=30)
    finally:
        producer.close(timeout=10)
    # assigned, not subscribed: no group (and no offsets topic) to wait for
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False,
                             **tls)
    values: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, 0)])
        for _ in range(60):
            for records in consumer.poll(timeout_ms=1000).values():
                values.extend(r.value for r in records)
            if len(values) >= 5:
                break
    finally:
        consumer.close()
    assert values == [f"record-{i}".encode() for i in range(5)]

    connection = TlsConnection(store_broker.ports["JKS"], exported_pem["ca"], exported_pem["client"])
    try:
        assert connection.peer_certificate == _der(stores.broker_jks.with_name("broker.crt"))
        assert connection.api_versions() == 0
    finally:
        connection.close()


def test_confluent_kafka_with_a_pkcs12_key_store(store_broker, stores, exported_pem) -> None:
    """librdkafka reads the client's PKCS12 key store itself (ssl.keystore.location) and
    authenticates to the JKS listener, which requires it."""
    topic = f"p12-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{store_broker.ports['P12']}", security_protocol="SSL",
                             ssl_cafile=str(exported_pem["ca"]), max_block_ms=30000)
    try:
        producer.send(topic, b"over-pkcs12").get(timeout=30)
    finally:
        producer.close(timeout=10)
    consumer = ConfluentConsumer({
        "bootstrap.servers": f"127.0.0.1:{store_broker.ports['JKS']}", "security.protocol": "SSL",
        "ssl.keystore.location": str(stores.client_p12), "ssl.keystore.password": STORE_PASSWORD,
        "ssl.ca.location": str(exported_pem["ca"]), "group.id": f"g-{uuid.uuid4().hex[:6]}",
        "auto.offset.reset": "earliest",
    })
    try:
        consumer.subscribe([topic])
        received = []
        for _ in range(60):
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                received.append(message.value())
                break
    finally:
        consumer.close()
    assert received == [b"over-pkcs12"]


def test_tools_read_jks_and_pkcs12_stores(store_broker, stores, tmp_path) -> None:
    """--command-config with a JKS trust store and a PKCS12 key store, against the listener that
    requires client certificates."""
    config = _java_command_config(tmp_path, stores)
    server = f"127.0.0.1:{store_broker.ports['JKS']}"
    topic = f"tool-{uuid.uuid4().hex[:8]}"
    created = _tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", config, "--create",
                    "--topic", topic, "--partitions", "1")
    assert created.returncode == 0, created.stdout + created.stderr
    listed = _tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", config, "--list")
    assert topic in listed.stdout.split(), listed.stdout + listed.stderr
    wrong = tmp_path / "wrong.properties"
    wrong.write_text(pathlib.Path(config).read_text().replace(f"ssl.truststore.password={TRUST_PASSWORD}",
                                                              "ssl.truststore.password=not-it"))
    refused = _tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", str(wrong), "--list")
    assert refused.returncode != 0
    assert "ssl.truststore.password" in refused.stderr and "Traceback" not in refused.stderr


# ---- dynamic key store update --------------------------------------------------------------

def test_dynamic_key_store_update(store_broker, stores, exported_pem, tmp_path) -> None:
    port = store_broker.ports["P12"]
    ca = exported_pem["ca"]
    original = _der(stores.broker_jks.with_name("broker.crt"))
    renewed = _der(stores.broker_renewed_p12.with_suffix(".crt"))
    admin = ["--bootstrap-server", f"127.0.0.1:{store_broker.ports['JKS']}",
             "--command-config", _java_command_config(tmp_path, stores),
             "--entity-type", "brokers", "--entity-name", str(store_broker.broker_id), "--alter", "--add-config"]

    old = TlsConnection(port, ca)
    try:
        assert old.peer_certificate == original
        assert old.api_versions() == 0

        result = _tool("kafka-configs.sh", *admin,
                       f"listener.name.p12.ssl.keystore.location={stores.broker_renewed_p12}")
        assert result.returncode == 0, result.stdout + result.stderr

        def new_connections_see_the_renewed_certificate() -> bool:
            connection = TlsConnection(port, ca)
            try:
                return connection.peer_certificate == renewed and connection.api_versions() == 0
            finally:
                connection.close()

        wait_until(new_connections_see_the_renewed_certificate, 30, "the renewed key store was never used")
        # the connection made before the update goes on with its own session
        assert old.api_versions() == 0
        assert old.api_versions() == 0
    finally:
        old.close()

    refusals = {
        # another password: the current one cannot open it
        f"listener.name.p12.ssl.keystore.location={stores.broker_other_password_p12}": "password was incorrect",
        f"listener.name.p12.ssl.keystore.location={tmp_path / 'missing.p12'}": "cannot read the store file",
        # a certificate for another name (the client's): clients checking the name would fail
        f"listener.name.p12.ssl.keystore.location={stores.client_p12}": "DistinguishedName does not match",
        f"ssl.keystore.location={stores.broker_p12}": "only per-listener using the listener prefix",
        # passwords only per broker, never as cluster defaults
    }
    for config, problem in refusals.items():
        result = _tool("kafka-configs.sh", *admin, config)
        assert result.returncode != 0, config
        assert problem in result.stderr + result.stdout, (config, result.stderr)
        assert "Traceback" not in result.stderr
    at = admin.index("--entity-name")
    default_level = admin[:at] + ["--entity-default"] + admin[at + 2:]
    result = _tool("kafka-configs.sh", *default_level, f"listener.name.p12.ssl.keystore.password={OTHER_PASSWORD}")
    assert result.returncode != 0 and "broker id must be specified" in result.stderr, result.stderr
    # the store of the accepted update still serves
    connection = TlsConnection(port, ca)
    try:
        assert connection.peer_certificate == renewed and connection.api_versions() == 0
    finally:
        connection.close()

    # A store under another password, given with it: the password goes to ZooKeeper encrypted
    # with password.encoder.secret, and the broker decrypts it to open the store.
    live = tmp_path / "live.p12"
    shutil.copy(stores.broker_other_password_p12, live)
    update = (f"listener.name.p12.ssl.keystore.location={live},"
              f"listener.name.p12.ssl.keystore.password={OTHER_PASSWORD}")
    result = _tool("kafka-configs.sh", *admin, update)
    assert result.returncode == 0, result.stdout + result.stderr
    other = _der(stores.broker_other_password_p12.with_suffix(".crt"))

    def new_connections_see(certificate: bytes) -> bool:
        connection = TlsConnection(port, ca)
        try:
            return connection.peer_certificate == certificate
        finally:
            connection.close()

    wait_until(lambda: new_connections_see(other), 30, "the store under another password was never used")
    zk = store_broker.zk()
    try:
        data, _ = zk.get(f"/config/brokers/{store_broker.broker_id}")
    finally:
        zk.stop()
        zk.close()
    stored = json.loads(data)["config"]
    assert OTHER_PASSWORD.encode() not in data
    assert "encryptedPassword:" in stored["listener.name.p12.ssl.keystore.password"]
    assert stored["listener.name.p12.ssl.keystore.location"] == str(live)

    # The store file rewritten in place (the renewed key and certificate, the same password):
    # the same settings sent again make the broker read it anew.
    renewed_key = stores.broker_renewed_p12.with_suffix(".key")
    subprocess.run(["openssl", "pkcs12", "-export", "-in", str(stores.broker_renewed_p12.with_suffix(".crt")),
                    "-inkey", str(renewed_key), "-name", "broker", "-out", str(tmp_path / "rewritten.p12"),
                    "-passout", f"pass:{OTHER_PASSWORD}"], check=True, capture_output=True, timeout=60)
    os.replace(tmp_path / "rewritten.p12", live)
    result = _tool("kafka-configs.sh", *admin, update)
    assert result.returncode == 0, result.stdout + result.stderr
    wait_until(lambda: new_connections_see(renewed), 30, "the store rewritten in place was never read again")
    assert store_broker.running


# ---- configuration errors ------------------------------------------------------------------

def _startup_error(**props: str) -> ConfigException:
    config = KafkaConfig({"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                         **props}, do_log=False)
    server = SocketServer(config)
    try:
        with pytest.raises(ConfigException) as info:
            server.startup(start_processing_requests=False)
        return info.value
    finally:
        server.shutdown()


def test_startup_errors_name_the_key_and_the_problem(stores, pki, tmp_path) -> None:
    jks = _jks_listener("", stores)
    p12 = _p12_listener("", stores)
    cases = [
        ({**jks, "ssl.keystore.password": WRONG}, "ssl.keystore.password", "password was incorrect"),
        ({**jks, "ssl.key.password": WRONG}, "ssl.key.password", "Cannot recover key"),
        # no key password: the store's is tried, and it is not the key's
        ({k: v for k, v in jks.items() if k != "ssl.key.password"}, "ssl.keystore.password", "Cannot recover key"),
        ({**jks, "ssl.keystore.location": str(tmp_path / "missing.jks")}, "ssl.keystore.location",
         "No such file"),
        ({**jks, "ssl.keystore.type": "BKS"}, "ssl.keystore.type", "JKS, PKCS12, PEM"),
        ({**jks, "ssl.truststore.password": WRONG}, "ssl.truststore.password", "password was incorrect"),
        ({**p12, "ssl.keystore.password": WRONG}, "ssl.keystore.password", "password was incorrect"),
        ({**p12, "ssl.key.password": "other"}, "ssl.key.password", "Cannot recover key"),
        ({k: v for k, v in jks.items() if k != "ssl.keystore.password"}, "ssl.keystore.password",
         "key store password is not specified"),
        # a PKCS12 trust store's certificates are encrypted under its password
        ({k: v for k, v in p12.items() if k != "ssl.truststore.password"}, "ssl.truststore.password",
         "protected"),
        # a PEM file where the default type (JKS) is expected
        ({"ssl.keystore.location": str(pki.server_keystore)}, "ssl.keystore.type", "PEM"),
        ({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_keystore),
          "ssl.keystore.password": "x"}, "ssl.keystore.password", "cannot be specified with PEM"),
        ({"ssl.keystore.type": "JKS", "ssl.keystore.key": pki.server_key.read_text(),
          "ssl.keystore.certificate.chain": pki.server_cert.read_text()}, "ssl.keystore.type",
         "only for PEM"),
    ]
    for props, key, problem in cases:
        error = _startup_error(**props)
        assert error.name == key and problem in str(error), (props, str(error))
        for secret in (STORE_PASSWORD, KEY_PASSWORD, TRUST_PASSWORD, WRONG, OTHER_PASSWORD):
            assert secret not in str(error)
    # the same key store under a listener prefix names the prefixed key
    error = _startup_error(**{**_jks_listener("listener.name.ssl.", stores), "listener.name.ssl.ssl.key.password": "x"})
    assert error.name == "listener.name.ssl.ssl.key.password"


def test_inline_pem_and_pkcs12_stores_serve_tls(stores, pki) -> None:
    """Inline PEM (ssl.keystore.key / certificate.chain, ssl.truststore.certificates) and a JKS key
    store read as the other format's file (Java reads PKCS12 under type JKS) both serve."""
    variants = {
        "inline": {"ssl.keystore.type": "PEM", "ssl.keystore.key": pki.server_key.read_text(),
                   "ssl.keystore.certificate.chain": pki.server_cert.read_text(), "ssl.truststore.type": "PEM",
                   "ssl.truststore.certificates": pki.ca_cert.read_text()},
        "p12-as-jks": {"ssl.keystore.type": "JKS", "ssl.keystore.location": str(stores.broker_p12),
                       "ssl.keystore.password": STORE_PASSWORD},
    }
    for name, props in variants.items():
        config = KafkaConfig({"zookeeper.connect": "127.0.0.1:1",
                              "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", **props}, do_log=False)
        server = SocketServer(config)
        server.startup()
        try:
            connection = TlsConnection(server.bound_port("SSL"), pki.ca_cert)
            try:
                expected = pki.server_cert if name == "inline" else stores.broker_jks.with_name("broker.crt")
                assert connection.peer_certificate == _der(expected), name
            finally:
                connection.close()
        finally:
            server.shutdown()


def test_jks_trust_store_without_its_password_verifies_client_certificates(stores, pki) -> None:
    """Without ssl.truststore.password a JKS trust store is read unchecked, as Java reads it; its
    CA then verifies the client certificate a listener requires."""
    config = KafkaConfig({"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                          **{k: v for k, v in _jks_listener("", stores).items() if k != "ssl.truststore.password"},
                          "ssl.client.auth": "required"}, do_log=False)
    server = SocketServer(config)
    server.startup()
    try:
        client = TlsConnection(server.bound_port("SSL"), pki.ca_cert, pki.client_keystore)
        try:
            client.sock.sendall(api_versions_frame(1))
            request = server.request_channel.receive_request(15000)
        finally:
            client.close()
        assert request is not None and request.context.principal == "User:" + CLIENT_DN
    finally:
        server.shutdown()


def test_broker_process_with_a_wrong_key_password_does_not_start(request, tmp_path_factory, stores) -> None:
    broker = new_broker(request, "zookeeper", tmp_path_factory.mktemp("bad-store-broker"))
    port = free_port()
    broker.overrides.update(listener_overrides(broker, {"JKS": ("SSL", port)}))
    broker.overrides.update({**_jks_listener("listener.name.jks.", stores),
                             "listener.name.jks.ssl.key.password": "nope"})
    broker.write_config()
    broker.start(wait=False)
    try:
        broker.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pass
    finally:
        code = broker.kill() if broker.running else broker.stop()
    output = broker.output()
    assert code != 0
    assert "listener.name.jks.ssl.key.password" in output and "Cannot recover key" in output
    assert "Traceback" not in output and "nope" not in output


def test_dynamic_key_store_update_in_kraft_mode(request, stores, exported_pem, tmp_path) -> None:
    """A KRaft node's listener store changed with kafka-configs.sh: the change is forwarded to the
    controller, committed as a ConfigRecord, and the broker's listener takes it from there."""
    port = free_port()
    node = new_broker(request, "kraft", tmp_path / "kraft-node")
    node.overrides.update(listener_overrides(node, {"P12": ("SSL", port)}))
    node.overrides.update(_p12_listener("listener.name.p12.", stores))
    node.write_config()
    node.start()
    try:
        ca = exported_pem["ca"]
        renewed = _der(stores.broker_renewed_p12.with_suffix(".crt"))
        admin = ["--bootstrap-server", node.bootstrap, "--entity-type", "brokers",
                 "--entity-name", str(node.broker_id), "--alter", "--add-config"]

        def new_connections_see(certificate: bytes) -> bool:
            connection = TlsConnection(port, ca)
            try:
                return connection.peer_certificate == certificate and connection.api_versions() == 0
            finally:
                connection.close()

        assert new_connections_see(_der(stores.broker_jks.with_name("broker.crt")))
        result = _tool("kafka-configs.sh", *admin,
                       f"listener.name.p12.ssl.keystore.location={stores.broker_renewed_p12}")
        assert result.returncode == 0, result.stdout + result.stderr
        wait_until(lambda: new_connections_see(renewed), 30, "the renewed key store was never used")
        described = _tool("kafka-configs.sh", "--bootstrap-server", node.bootstrap, "--entity-type", "brokers",
                          "--entity-name", str(node.broker_id), "--describe")
        assert f"listener.name.p12.ssl.keystore.location={stores.broker_renewed_p12}" in described.stdout, \
            described.stdout + described.stderr

        # a store the listener cannot open is refused and the one in use stays
        result = _tool("kafka-configs.sh", *admin,
                       f"listener.name.p12.ssl.keystore.location={tmp_path / 'missing.p12'}")
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
        assert new_connections_see(renewed)

        # One request, four resources: a topic's config and a broker config the controller takes,
        # this broker's key store, refused here, and a log level; the answer keeps their order.
        topic = f"kraft-configs-{uuid.uuid4().hex[:6]}"
        created = _tool("kafka-topics.sh", "--bootstrap-server", node.bootstrap, "--create", "--topic", topic)
        assert created.returncode == 0, created.stdout + created.stderr

        def resource(resource_type: int, name: str, key: str, value: str) -> dict:
            return {"resource_type": resource_type, "resource_name": name,
                    "configs": [{"name": key, "config_operation": 0, "value": value}]}

        request = build_entity(request_schema(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1), {
            "validate_only": False, "resources": [
                resource(2, topic, "retention.ms", "123456"),
                resource(4, str(node.broker_id), "listener.name.p12.ssl.keystore.location", str(tmp_path / "gone.p12")),
                resource(4, "", "log.cleaner.threads", "2"),
                # a log level is set on the broker itself, never forwarded
                resource(8, str(node.broker_id), "root", "INFO")]})
        with RawClient(node.port) as client:
            answers = client.request(ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1, request).responses
        assert [(int(a.resource_type), a.resource_name) for a in answers] == [
            (2, topic), (4, str(node.broker_id)), (4, ""), (8, str(node.broker_id))]
        assert [Errors.for_code(int(a.error_code)) for a in answers] == [
            Errors.NONE, Errors.INVALID_REQUEST, Errors.NONE, Errors.NONE]
        topic_configs = _tool("kafka-configs.sh", "--bootstrap-server", node.bootstrap, "--entity-type", "topics",
                              "--entity-name", topic, "--describe")
        assert "retention.ms=123456" in topic_configs.stdout, topic_configs.stdout + topic_configs.stderr
        assert new_connections_see(renewed)
        assert node.running
    finally:
        if node.running:
            assert node.stop() == 0, node.tail()
