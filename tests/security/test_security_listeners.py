"""TLS and SASL listeners of a real broker, driven by kafka-python and confluent-kafka
clients and by raw sockets sending bad input. No timing is asserted; every wait is bounded."""
from __future__ import annotations

import logging
import socket
import ssl
import struct
import subprocess
import sys
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError, SaslAuthenticationFailedError
from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request
from tests.integration.broker_harness import ROOT, wait_until

pytestmark = pytest.mark.metadata_modes("zookeeper", "kraft")

RECORDS = [f"record-{i}".encode() * 50 for i in range(200)]


def _topic() -> str:
    return f"sec-{uuid.uuid4().hex[:8]}"


def _produce_consume(topic: str, **client_configs) -> list[bytes]:
    producer = KafkaProducer(request_timeout_ms=20000, **client_configs)
    try:
        for value in RECORDS:
            producer.send(topic, value)
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=10)
    return _consume(topic, len(RECORDS), **client_configs)


def _consume(topic: str, expected: int, **client_configs) -> list[bytes]:
    """Records of ``topic`` from the start: until ``expected`` arrived, then one more poll
    to catch any beyond them."""
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000,
                             fetch_max_bytes=4096, max_partition_fetch_bytes=4096, **client_configs)
    try:
        got = []
        deadline = time.monotonic() + 60
        while len(got) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                got.extend(r.value for r in batch)
        for batch in consumer.poll(timeout_ms=500).values():
            got.extend(r.value for r in batch)
        return got
    finally:
        consumer.close()


def _ssl_configs(secure_broker, listener="SSL", cert=False) -> dict:
    configs = {"bootstrap_servers": secure_broker.bootstrap(listener), "security_protocol": "SSL",
               "ssl_cafile": str(secure_broker.pki.ca_cert)}
    if cert:
        configs.update(ssl_certfile=str(secure_broker.pki.client_cert), ssl_keyfile=str(secure_broker.pki.client_key))
    return configs


# ---- TLS ----------------------------------------------------------------------------------

def test_produce_and_consume_over_ssl(secure_broker) -> None:
    # Small fetches so the file regions go out through TLS in many pieces.
    assert _produce_consume(_topic(), **_ssl_configs(secure_broker)) == RECORDS


def test_confluent_kafka_over_ssl_with_client_certificate(secure_broker) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = _topic()
    common = {"bootstrap.servers": secure_broker.bootstrap("MTLS"), "security.protocol": "SSL",
              "ssl.ca.location": str(secure_broker.pki.ca_cert),
              "ssl.certificate.location": str(secure_broker.pki.client_cert),
              "ssl.key.location": str(secure_broker.pki.client_key)}
    producer = confluent_kafka.Producer(common)
    for value in RECORDS[:50]:
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**common, "group.id": "g-" + topic, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < 50 and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append(message.value())
    finally:
        consumer.close()
    assert got == RECORDS[:50]


def test_client_auth_required_refuses_a_client_without_certificate(secure_broker) -> None:
    context = ssl.create_default_context(cafile=str(secure_broker.pki.ca_cert))
    with socket.create_connection(("127.0.0.1", secure_broker.ports["MTLS"]), timeout=15) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                # TLS 1.3: the refusal arrives after the client's side of the handshake.
                tls.sendall(_api_versions_frame())
                if not tls.recv(4):
                    raise ConnectionError("closed")
    # With a certificate the same listener serves.
    assert _produce_consume(_topic(), **_ssl_configs(secure_broker, "MTLS", cert=True)) == RECORDS


# ---- SASL -------------------------------------------------------------------------------------

def _sasl_configs(secure_broker, listener, mechanism, user, password) -> dict:
    configs = {"bootstrap_servers": secure_broker.bootstrap(listener), "security_protocol": listener,
               "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    if listener == "SASL_SSL":
        configs["ssl_cafile"] = str(secure_broker.pki.ca_cert)
    return configs


class _LoginRefusals(logging.Handler):
    """Notes each SASL refusal kafka-python's connection manager logs. The client itself keeps
    retrying a refused bootstrap until its bootstrap timeout and then reports only a timeout."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.refused = False

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if any(isinstance(a, SaslAuthenticationFailedError) for a in args) or "SaslAuthenticationFailed" in str(record.msg):
            self.refused = True


def _login(configs: dict, topic: str | None = None) -> str | None:
    """What a kafka-python producer with ``configs`` meets: "accepted" (it bootstrapped and a
    write was acknowledged), "refused" (the broker refused its login), or None when neither
    showed within a short bootstrap timeout."""
    watcher = _LoginRefusals()
    manager_log = logging.getLogger("kafka.net.manager")
    manager_log.addHandler(watcher)
    try:
        try:
            producer = KafkaProducer(request_timeout_ms=5000, max_block_ms=8000, bootstrap_timeout_ms=2000, **configs)
        except KafkaError:
            return "refused" if watcher.refused else None
        try:
            producer.send(topic or _topic(), b"must not arrive").get(timeout=10)
        except KafkaError:
            return "refused" if watcher.refused else None
        finally:
            producer.close(timeout=5)
        return "accepted"
    finally:
        manager_log.removeHandler(watcher)


def _login_outcome(configs: dict, topic: str | None = None, timeout: float = 60) -> str:
    """``_login``'s first definite answer; a slow broker only delays it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = _login(configs, topic)
        if outcome is not None:
            return outcome
    raise AssertionError(f"neither accepted nor refused within {timeout} s")


def test_sasl_plain_over_sasl_plaintext(secure_broker) -> None:
    topic = _topic()
    good = _sasl_configs(secure_broker, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
    assert _produce_consume(topic, **good) == RECORDS
    refused = _sasl_configs(secure_broker, "SASL_PLAINTEXT", "PLAIN", "alice", "wrong")
    assert _login_outcome(refused, topic) == "refused"
    # The refused client wrote nothing.
    assert _consume(topic, len(RECORDS), **good) == RECORDS


def _kafka_configs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def _scram_target(secure_broker, metadata_mode) -> list[str]:
    """Where kafka-configs.sh writes SCRAM credentials: ZooKeeper itself in ZooKeeper mode (the
    broker picks them up through /config/changes); in KRaft mode, with no ZooKeeper, the broker
    (AlterUserScramCredentials, forwarded to the controller, back as metadata records)."""
    if metadata_mode == "zookeeper":
        return ["--zookeeper", secure_broker.process.zk_connect]
    return ["--bootstrap-server", secure_broker.process.bootstrap]


def test_scram_user_added_and_deleted_with_kafka_configs(secure_broker, metadata_mode) -> None:
    target = _scram_target(secure_broker, metadata_mode)
    user = f"carol-{uuid.uuid4().hex[:6]}"
    good = _sasl_configs(secure_broker, "SASL_SSL", "SCRAM-SHA-512", user, "carol-secret")
    assert _login_outcome(good) == "refused"  # not yet a user
    result = _kafka_configs(*target, "--alter", "--add-config",
                            "SCRAM-SHA-512=[iterations=4096,password=carol-secret]",
                            "--entity-type", "users", "--entity-name", user)
    assert result.returncode == 0, result.stderr
    # Picked up without a restart.
    wait_until(lambda: _login(good) == "accepted", 60, "new SCRAM user could not log in")
    topic = _topic()
    assert _produce_consume(topic, **good) == RECORDS
    assert _login_outcome(_sasl_configs(secure_broker, "SASL_SSL", "SCRAM-SHA-512", user, "wrong")) == "refused"

    # Through the broker (AlterUserScramCredentials): SCRAM-SHA-256 for the same user.
    bootstrap = secure_broker.process.bootstrap
    result = _kafka_configs("--bootstrap-server", bootstrap, "--alter", "--add-config",
                            "SCRAM-SHA-256=[iterations=8192,password=carol-256]", "--entity-type", "users",
                            "--entity-name", user)
    assert result.returncode == 0, result.stderr
    described = _kafka_configs("--bootstrap-server", bootstrap, "--describe", "--entity-type", "users",
                               "--entity-name", user)
    assert "SCRAM-SHA-256=iterations=8192" in described.stdout and "SCRAM-SHA-512=iterations=4096" in described.stdout
    sha256 = _sasl_configs(secure_broker, "SASL_PLAINTEXT", "SCRAM-SHA-256", user, "carol-256")
    wait_until(lambda: _login(sha256) == "accepted", 60, "SCRAM-SHA-256 credential not picked up")

    result = _kafka_configs(*target, "--alter", "--delete-config", "SCRAM-SHA-512",
                            "--entity-type", "users", "--entity-name", user)
    assert result.returncode == 0, result.stderr
    wait_until(lambda: _login(good) == "refused", 60, "deleted SCRAM user could still log in")
    assert _login_outcome(sha256) == "accepted"


# ---- bad input: each closes only its own connection ------------------------------------------------

def _api_versions_frame() -> bytes:
    from tests.network.conftest import api_versions_frame
    return api_versions_frame(1)


def _frame(api: ApiKeys, version: int, body) -> bytes:
    return encode_request(RequestHeader(api, version, 5, "raw", api.request_header_version(version)), body)


def _read_frame(sock) -> bytes | None:
    def exactly(n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            try:
                chunk = sock.recv(n - len(data))
            except ConnectionResetError:  # closed with unread input: a reset
                return None
            if not chunk:
                return None
            data += chunk
        return data
    size = exactly(4)
    return None if size is None else exactly(struct.unpack(">i", size)[0])


def _closed(sock) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError):
        return True


def _error_of(frame: bytes, api: ApiKeys, version: int) -> Errors:
    return Errors.for_code(int(decode_response(frame, api, version)[1].error_code))


def _still_serving(secure_broker) -> None:
    assert _produce_consume(_topic(), **_sasl_configs(secure_broker, "SASL_PLAINTEXT", "PLAIN", "bob",
                                                      "bob-secret"))[:1] == RECORDS[:1]


def test_bad_input_closes_only_that_connection(secure_broker) -> None:
    bystander = KafkaProducer(request_timeout_ms=20000, **_ssl_configs(secure_broker))
    topic = _topic()
    bystander.send(topic, b"before").get(timeout=30)

    def connect(listener: str) -> socket.socket:
        return socket.create_connection(("127.0.0.1", secure_broker.ports[listener]), timeout=15)

    # Garbage in place of a TLS ClientHello.
    with connect("SSL") as s:
        s.sendall(b"\x00\x00\x00\x10" + b"this is not tls!" * 20)
        assert _closed(s)
    # A truncated ClientHello, then the client goes away.
    with connect("SASL_SSL") as s:
        s.sendall(bytes.fromhex("160301020001"))
    # SaslAuthenticate before SaslHandshake: ILLEGAL_SASL_STATE, then closed.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret")))
        assert _error_of(_read_frame(s), ApiKeys.SASL_AUTHENTICATE, 2) is Errors.ILLEGAL_SASL_STATE
        assert _closed(s)
    # A Metadata request before authentication: closed without an answer.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_api_versions_frame())
        assert _read_frame(s) is not None  # ApiVersions is allowed
        from kafka_py.clients.common.protocol.messages import request_schema
        s.sendall(_frame(ApiKeys.METADATA, 9, request_schema(ApiKeys.METADATA, 9)(
            topics=None, allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False)))
        assert _read_frame(s) is None
    # An unknown mechanism.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="GSSAPI")))
        assert _error_of(_read_frame(s), ApiKeys.SASL_HANDSHAKE, 1) is Errors.UNSUPPORTED_SASL_MECHANISM
        assert _closed(s)
    # A PLAIN token without separators.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN")))
        assert _error_of(_read_frame(s), ApiKeys.SASL_HANDSHAKE, 1) is Errors.NONE
        s.sendall(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"alicealice-secret")))
        frame = _read_frame(s)
        assert _error_of(frame, ApiKeys.SASL_AUTHENTICATE, 2) is Errors.SASL_AUTHENTICATION_FAILED
        assert _closed(s)
    # An over-long SCRAM message (beyond sasl.server.max.receive.size): closed.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512")))
        assert _error_of(_read_frame(s), ApiKeys.SASL_HANDSHAKE, 1) is Errors.NONE
        s.sendall(_frame(ApiKeys.SASL_AUTHENTICATE, 2,
                         SaslAuthenticateRequest(auth_bytes=b"n,,n=alice,r=" + b"x" * 100000)))
        assert _read_frame(s) is None
    # A malformed SCRAM client-first message within the limit: an authentication error.
    with connect("SASL_PLAINTEXT") as s:
        s.sendall(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-256")))
        _read_frame(s)
        s.sendall(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"n,,garbage")))
        assert _error_of(_read_frame(s), ApiKeys.SASL_AUTHENTICATE, 2) is Errors.SASL_AUTHENTICATION_FAILED

    # The broker and the other client carry on.
    bystander.send(topic, b"after").get(timeout=30)
    bystander.close(timeout=10)
    _still_serving(secure_broker)
    assert secure_broker.process.running


# ---- authentication metrics ------------------------------------------------------------------

_AUTH_METRICS = ("failed_authentication_total", "successful_authentication_total",
                 "successful_authentication_no_reauth_total")


def _auth_totals(secure_broker) -> dict:
    """kafka_server_socket_server_metrics_<metric>{listener} summed over the network threads."""
    from tests.integration.test_metrics import scrape

    totals: dict = {}
    for (name, labels), v in scrape(secure_broker.process.metrics_port).items():
        for metric in _AUTH_METRICS:
            if name == f"kafka_server_socket_server_metrics_{metric}":
                key = (metric, dict(labels)["listener"])
                totals[key] = totals.get(key, 0.0) + v
    return totals


def _io_totals(secure_broker) -> dict:
    """The socket server's I/O totals (incoming_byte_total, ...) per listener, summed over
    the network threads."""
    from tests.integration.test_metrics import scrape

    prefix = "kafka_server_socket_server_metrics_"
    totals: dict = {}
    for (name, labels), v in scrape(secure_broker.process.metrics_port).items():
        if name.startswith(prefix) and name.endswith("_total"):
            key = (name[len(prefix):], dict(labels)["listener"])
            totals[key] = totals.get(key, 0.0) + v
    return totals


def test_authentications_are_counted_per_listener(secure_broker) -> None:
    """Kafka's Selector metrics of each listener's network threads, read from the broker's
    Prometheus endpoint: a wrong password and a TLS handshake that fails count as failed
    authentications, completed SASL exchanges and TLS handshakes as successful ones, and
    those of clients that cannot re-authenticate (SaslAuthenticate v0, any SSL connection)
    as successful-authentication-no-reauth."""
    from kio.schema.sasl_authenticate.v0 import SaslAuthenticateRequest as SaslAuthenticateRequestV0

    before = _auth_totals(secure_broker)
    io_before = _io_totals(secure_broker)

    def connect(listener: str) -> socket.socket:
        return socket.create_connection(("127.0.0.1", secure_broker.ports[listener]), timeout=15)

    def plain_login(password: str, version: int) -> Errors:
        with connect("SASL_PLAINTEXT") as s:
            s.sendall(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN")))
            assert _error_of(_read_frame(s), ApiKeys.SASL_HANDSHAKE, 1) is Errors.NONE
            request = SaslAuthenticateRequest if version == 2 else SaslAuthenticateRequestV0
            s.sendall(_frame(ApiKeys.SASL_AUTHENTICATE, version,
                             request(auth_bytes=b"\0alice\0" + password.encode())))
            return _error_of(_read_frame(s), ApiKeys.SASL_AUTHENTICATE, version)

    assert plain_login("wrong", 2) is Errors.SASL_AUTHENTICATION_FAILED
    assert plain_login("alice-secret", 2) is Errors.NONE
    assert plain_login("alice-secret", 0) is Errors.NONE
    with connect("SSL") as s:  # not TLS at all
        s.sendall(b"\x16\x03\x01\x00\x10" + b"not a hello, no" * 4)
        assert _closed(s)
    context = ssl.create_default_context(cafile=str(secure_broker.pki.ca_cert))
    with context.wrap_socket(connect("SSL"), server_hostname="localhost") as tls:
        tls.sendall(_api_versions_frame())
        assert _read_frame(tls) is not None

    def delta(metric: str, listener: str) -> float:
        return _auth_totals(secure_broker).get((metric, listener), 0.0) - before.get((metric, listener), 0.0)

    wait_until(lambda: delta("successful_authentication_total", "SSL") == 1, 30,
               "the TLS handshake was not counted")
    assert delta("failed_authentication_total", "SASL_PLAINTEXT") == 1
    assert delta("successful_authentication_total", "SASL_PLAINTEXT") == 2
    assert delta("successful_authentication_no_reauth_total", "SASL_PLAINTEXT") == 1  # the v0 one
    assert delta("failed_authentication_total", "SSL") == 1
    assert delta("successful_authentication_no_reauth_total", "SSL") == 1
    # nothing of it on the PLAINTEXT listener, whose connections need no authentication
    assert delta("successful_authentication_total", "PLAINTEXT") == 0
    from tests.integration.test_metrics import scrape
    samples = scrape(secure_broker.process.metrics_port)
    rate = sum(v for (name, labels), v in samples.items()
               if name == "kafka_server_socket_server_metrics_failed_authentication_rate"
               and ("listener", "SASL_PLAINTEXT") in labels)
    assert rate > 0

    # The listeners' byte metrics count the Kafka frames, decrypted on TLS, and not the SASL
    # exchanges; the TLS and SASL network threads time their select (their idle share).
    io_after = _io_totals(secure_broker)

    def io_delta(metric: str, listener: str) -> float:
        return io_after.get((metric, listener), 0.0) - io_before.get((metric, listener), 0.0)

    assert io_delta("incoming_byte_total", "SSL") == len(_api_versions_frame())
    assert io_delta("response_total", "SSL") == 1
    assert io_delta("request_total", "SSL") == 1
    assert io_delta("incoming_byte_total", "SASL_PLAINTEXT") == 0
    assert io_delta("connection_creation_total", "SASL_PLAINTEXT") == 3
    for listener in ("SSL", "SASL_PLAINTEXT"):
        assert io_delta("select_total", listener) > 0, listener
        assert io_delta("io_waittime_total", listener) > 0, listener


def _connections_gauges(secure_broker, family: str) -> dict:
    """kafka_server_socket_server_metrics_<family> by its labels other than networkProcessor,
    summed over the network threads."""
    from tests.integration.test_metrics import scrape

    counts: dict = {}
    for (name, labels), v in scrape(secure_broker.process.metrics_port).items():
        if name == f"kafka_server_socket_server_metrics_{family}":
            key = tuple(sorted((k, x) for k, x in labels if k != "networkProcessor"))
            counts[key] = counts.get(key, 0.0) + v
    return counts


def test_tls_connections_are_counted_by_cipher_and_protocol(secure_broker) -> None:
    """socket-server-metrics connections by cipher and protocol: a TLS 1.3 and a TLS 1.2 client
    of the SSL listener count under the suite and protocol each negotiated, and no longer once
    closed. A SASL listener's ApiVersions (answered by the authenticator, before the login)
    names the client software."""
    from kafka_py.clients.common.protocol.messages import request_schema

    def tls(version: ssl.TLSVersion) -> ssl.SSLSocket:
        context = ssl.create_default_context(cafile=str(secure_broker.pki.ca_cert))
        context.minimum_version = context.maximum_version = version
        raw = socket.create_connection(("127.0.0.1", secure_broker.ports["SSL"]), timeout=15)
        sock = context.wrap_socket(raw, server_hostname="localhost")
        sock.sendall(_api_versions_frame())  # answered: the broker's side of the handshake is done
        assert _read_frame(sock) is not None
        return sock

    def key(cipher: str, protocol: str) -> tuple:
        return (("cipher", cipher), ("listener", "SSL"), ("protocol", protocol))

    v13, v12 = tls(ssl.TLSVersion.TLSv1_3), tls(ssl.TLSVersion.TLSv1_2)
    keys = [key(v13.cipher()[0], "TLSv1.3"), key(v12.cipher()[0], "TLSv1.2")]
    try:
        counts = _connections_gauges(secure_broker, "connections_tls_info")
        assert [counts.get(k) for k in keys] == [1, 1], counts
    finally:
        v13.close()
        v12.close()
    wait_until(lambda: [_connections_gauges(secure_broker, "connections_tls_info").get(k) for k in keys] == [0, 0],
               30, "the closed TLS connections are still counted")

    versions = request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="sasl-raw", client_software_version="1")
    software = (("clientSoftwareName", "sasl-raw"), ("clientSoftwareVersion", "1"), ("listener", "SASL_PLAINTEXT"))
    with socket.create_connection(("127.0.0.1", secure_broker.ports["SASL_PLAINTEXT"]), timeout=15) as s:
        s.sendall(_frame(ApiKeys.API_VERSIONS, 3, versions))
        assert _error_of(_read_frame(s), ApiKeys.API_VERSIONS, 3) is Errors.NONE
        assert _connections_gauges(secure_broker, "connections_software").get(software) == 1
    wait_until(lambda: _connections_gauges(secure_broker, "connections_software").get(software) == 0, 30,
               "the closed SASL connection is still counted")
