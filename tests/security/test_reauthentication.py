"""SASL sessions and re-authentication (KIP-368, ``connections.max.reauth.ms``) on a real broker.

SaslAuthenticate v1+ answers the session lifetime; a connection used past it without
re-authenticating is closed; kafka-python and confluent-kafka (librdkafka) re-authenticate
on their own and carry on, and a SCRAM user deleted meanwhile is cut off at its next
re-authentication. Sleeps only ever wait past a deadline the broker enforces; nothing is timed.
"""
from __future__ import annotations

import logging
import socket
import struct
import subprocess
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from tests.integration.broker_harness import ROOT, BrokerProcess, free_port, unique_chroot, wait_until
from tests.security.certs import make_pki

SCRAM_LIFETIME_MS = 3000
PLAIN_LIFETIME_MS = 5000
PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'


@pytest.fixture(scope="module")
def reauth_broker(zookeeper, tmp_path_factory):
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    ports = {"SASL_PLAINTEXT": free_port(), "SASL_SSL": free_port()}
    metrics_port = free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("reauth-broker"), zookeeper.connect_string, unique_chroot())
    broker.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{ports['SASL_PLAINTEXT']},"
                     f"SASL_SSL://127.0.0.1:{ports['SASL_SSL']}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.server_keystore),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "connections.max.reauth.ms": str(SCRAM_LIFETIME_MS),
        # per listener and mechanism, as Kafka reads it
        "listener.name.sasl_plaintext.plain.connections.max.reauth.ms": str(PLAIN_LIFETIME_MS),
        "connection.failed.authentication.delay.ms": "50",
        "kafka.py.metrics.prometheus.port": str(metrics_port),
        "kafka.py.metrics.prometheus.host": "127.0.0.1",
    })
    broker.write_config()
    broker.start()
    broker.sasl_ports = ports
    broker.metrics_port = metrics_port
    broker.pki = pki
    yield broker
    if broker.running:
        assert broker.stop() == 0, broker.tail()


def _sasl_plaintext_metrics(broker) -> dict:
    """The SASL_PLAINTEXT listener's socket-server-metrics summed over its network threads,
    (a NaN, an average or maximum of nothing, left out) and the SocketServer's
    ExpiredConnectionsKilledCount."""
    from tests.integration.test_metrics import scrape

    prefix = "kafka_server_socket_server_metrics_"
    totals: dict = {}
    samples = scrape(broker.metrics_port)
    for (name, labels), v in samples.items():
        if name.startswith(prefix) and ("listener", "SASL_PLAINTEXT") in labels and v == v:  # NaN: none measured
            totals[name[len(prefix):]] = totals.get(name[len(prefix):], 0.0) + v
    totals["ExpiredConnectionsKilledCount"] = samples[("kafka_network_socketserver_expiredconnectionskilledcount", ())]
    return totals


# ---- the wire, by hand ----------------------------------------------------------------------

class _Connection:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.correlation = 0

    def request(self, api: ApiKeys, version: int, body):
        self.correlation += 1
        header = RequestHeader(api, version, self.correlation, "reauth-test", api.request_header_version(version))
        self.sock.sendall(encode_request(header, body))
        size = struct.unpack(">i", self._exactly(4))[0]
        return decode_response(self._exactly(size), api, version)[1]

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the broker")
            data += chunk
        return data

    def login_plain(self, user: str = "alice", password: str = "alice-secret"):
        handshake = self.request(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert Errors.for_code(int(handshake.error_code)) is Errors.NONE
        return self.request(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=b"\0" + user.encode() + b"\0" + password.encode()))

    def metadata(self):
        return self.request(ApiKeys.METADATA, 9, request_schema(ApiKeys.METADATA, 9)(
            topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False))

    def closed_by_broker(self) -> bool:
        try:
            self.metadata()
        except (ConnectionError, OSError):
            return True
        return False

    def close(self) -> None:
        self.sock.close()


def test_session_lifetime_expiry_and_reauthentication_on_the_wire(reauth_broker) -> None:
    port = reauth_broker.sasl_ports["SASL_PLAINTEXT"]
    before = _sasl_plaintext_metrics(reauth_broker)
    expiring, renewed = _Connection(port), _Connection(port)
    try:
        answer = expiring.login_plain()
        authenticated_at = time.monotonic()
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE
        assert answer.session_lifetime.total_seconds() * 1000 == PLAIN_LIFETIME_MS
        assert renewed.login_plain().session_lifetime.total_seconds() * 1000 == PLAIN_LIFETIME_MS
        assert expiring.metadata().brokers and renewed.metadata().brokers

        # Halfway, one connection re-authenticates on the same socket: a new session.
        time.sleep(PLAIN_LIFETIME_MS / 2000)
        again = renewed.login_plain()
        assert Errors.for_code(int(again.error_code)) is Errors.NONE
        assert again.session_lifetime.total_seconds() * 1000 == PLAIN_LIFETIME_MS
        # ... at most once a second: a second SaslHandshake at once is an ordinary (refused) request
        refused = renewed.request(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN"))
        assert Errors.for_code(int(refused.error_code)) is Errors.ILLEGAL_SASL_STATE

        # Past the first session's end the other one is closed at its next request.
        time.sleep(max(0.0, authenticated_at + PLAIN_LIFETIME_MS / 1000 + 0.3 - time.monotonic()))
        assert expiring.closed_by_broker()
        assert renewed.metadata().brokers
    finally:
        expiring.close()
        renewed.close()
    wait_until(lambda: "SASL session expired" in reauth_broker.output(), 30,
               "the broker did not log the expired session")
    # Kafka's Selector metrics counted it all: two logins, one re-authentication (with its
    # latency), one connection killed at the end of its session
    after = _sasl_plaintext_metrics(reauth_broker)
    for metric, n in (("successful_authentication_total", 2), ("successful_reauthentication_total", 1),
                      ("expired_connections_killed_count", 1), ("ExpiredConnectionsKilledCount", 1),
                      ("successful_authentication_no_reauth_total", 0), ("failed_authentication_total", 0)):
        assert after[metric] - before.get(metric, 0.0) == n, metric
    assert after.get("reauthentication_latency_max", -1) >= 0  # some thread measured one


def test_reauthentication_as_another_user_is_refused(reauth_broker) -> None:
    connection = _Connection(reauth_broker.sasl_ports["SASL_PLAINTEXT"])
    try:
        assert Errors.for_code(int(connection.login_plain().error_code)) is Errors.NONE
        time.sleep(1.1)  # past the one-second minimum between re-authentications
        # the JAAS users are alice only: a wrong password fails like a change of user would
        before = _sasl_plaintext_metrics(reauth_broker)
        answer = connection.login_plain(password="wrong")
        assert Errors.for_code(int(answer.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
        assert connection.closed_by_broker()
    finally:
        connection.close()
    after = _sasl_plaintext_metrics(reauth_broker)
    assert after["failed_reauthentication_total"] - before["failed_reauthentication_total"] == 1
    assert after["failed_authentication_total"] == before["failed_authentication_total"]


# ---- real clients -----------------------------------------------------------------------------

def _kafka_configs(*args: str) -> None:
    result = subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), *args], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def _add_user(broker, user: str, password: str) -> None:
    _kafka_configs("--zookeeper", broker.zk_connect, "--alter", "--add-config",
                   f"SCRAM-SHA-512=[iterations=4096,password={password}]", "--entity-type", "users",
                   "--entity-name", user)


def _delete_user(broker, user: str) -> None:
    _kafka_configs("--zookeeper", broker.zk_connect, "--alter", "--delete-config", "SCRAM-SHA-512",
                   "--entity-type", "users", "--entity-name", user)


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


def _failed_reauthentications(broker) -> int:
    return broker.output().count("Failed re-authentication with")


def test_kafka_python_reauthenticates_and_a_deleted_user_is_cut_off(reauth_broker) -> None:
    user, password, topic = f"erin-{uuid.uuid4().hex[:6]}", "erin-secret", f"reauth-{uuid.uuid4().hex[:8]}"
    _add_user(reauth_broker, user, password)
    configs = dict(bootstrap_servers=f"127.0.0.1:{reauth_broker.sasl_ports['SASL_SSL']}",
                   security_protocol="SASL_SSL", ssl_cafile=str(reauth_broker.pki.ca_cert),
                   sasl_mechanism="SCRAM-SHA-512", sasl_plain_username=user, sasl_plain_password=password)
    captured = _Captured()
    client_logger = logging.getLogger("kafka.net.connection")
    previous_level = client_logger.level
    client_logger.setLevel(logging.DEBUG)
    client_logger.addHandler(captured)
    # a record the client cannot deliver expires after delivery_timeout_ms, and then closing is clean
    producer = KafkaProducer(acks=1, request_timeout_ms=10000, delivery_timeout_ms=12000, max_block_ms=10000,
                             **configs)
    try:
        # Across more than two session lifetimes: every record acknowledged, on re-authenticated connections.
        sent = []
        deadline = time.monotonic() + 2.5 * SCRAM_LIFETIME_MS / 1000
        while time.monotonic() < deadline or len(sent) < 10:
            value = b"v-%05d" % len(sent)
            producer.send(topic, value).get(timeout=30)
            sent.append(value)
            time.sleep(0.05)
        assert captured.count("Beginning SASL re-authentication") >= 2, captured.lines[-20:]
        assert captured.count("SASL re-authentication failed") == 0

        consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **configs)
        try:
            got = []
            until = time.monotonic() + 60
            while len(got) < len(sent) and time.monotonic() < until:
                for batch in consumer.poll(timeout_ms=1000).values():
                    got.extend(r.value for r in batch)
        finally:
            consumer.close()
        assert got == sent

        # The user is deleted: the next re-authentication fails and nothing more gets through.
        failed_before = _failed_reauthentications(reauth_broker)
        _delete_user(reauth_broker, user)
        cut_off = None
        until = time.monotonic() + 60
        while cut_off is None and time.monotonic() < until:
            try:
                producer.send(topic, b"after-delete").get(timeout=30)
            except Exception as e:  # noqa: BLE001 - the client's way of saying it cannot get through
                cut_off = e
            time.sleep(0.05)
        assert cut_off is not None, "the deleted user could still produce"
        wait_until(lambda: _failed_reauthentications(reauth_broker) > failed_before, 30,
                   "the broker did not refuse the re-authentication")
        assert captured.count("SASL re-authentication failed") >= 1
    finally:
        client_logger.removeHandler(captured)
        client_logger.setLevel(previous_level)
        producer.close(timeout=30)


def test_confluent_kafka_reauthenticates_and_a_deleted_user_is_cut_off(reauth_broker) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    user, password, topic = f"fay-{uuid.uuid4().hex[:6]}", "fay-secret", f"reauth-{uuid.uuid4().hex[:8]}"
    _add_user(reauth_broker, user, password)
    captured = _Captured()
    client_logger = logging.getLogger(f"rdkafka-{user}")
    client_logger.setLevel(logging.DEBUG)
    client_logger.addHandler(captured)
    client_logger.propagate = False
    producer = confluent_kafka.Producer({
        "bootstrap.servers": f"127.0.0.1:{reauth_broker.sasl_ports['SASL_PLAINTEXT']}",
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user, "sasl.password": password, "debug": "security,broker",
        "message.timeout.ms": 10000}, logger=client_logger)
    errors: list = []
    delivered: list = []

    def on_delivery(err, msg) -> None:
        (errors if err is not None else delivered).append(err or msg.value())

    try:
        deadline = time.monotonic() + 2.5 * SCRAM_LIFETIME_MS / 1000
        sent = 0
        while time.monotonic() < deadline:
            producer.produce(topic, b"c-%05d" % sent, callback=on_delivery)
            sent += 1
            producer.poll(0.05)
        assert producer.flush(30) == 0
        assert not errors and len(delivered) == sent
        assert captured.count("Received REAUTH op") >= 2, captured.lines[-20:]

        failed_before = _failed_reauthentications(reauth_broker)
        _delete_user(reauth_broker, user)
        until = time.monotonic() + 60
        while not errors and time.monotonic() < until:
            producer.produce(topic, b"after-delete", callback=on_delivery)
            producer.poll(0.1)
        assert errors, "the deleted user could still produce"
        wait_until(lambda: _failed_reauthentications(reauth_broker) > failed_before, 30,
                   "the broker did not refuse the re-authentication")
    finally:
        producer.purge()
        producer.flush(0)
        client_logger.removeHandler(captured)
