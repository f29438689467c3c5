"""SASL/OAUTHBEARER (KIP-255) on a real broker: stock clients, the broker's own inter-broker
login, bad tokens refused and counted, a validator given by dotted path, sessions bounded by
the token's ``exp`` (KIP-368), and the bin/ tools.

One ZooKeeper-mode broker for the module, with a PLAINTEXT listener (the harness) and three
SASL_PLAINTEXT listeners offering OAUTHBEARER:

* INTERNAL, the inter-broker listener (``sasl.mechanism.inter.broker.protocol=OAUTHBEARER``, the
  broker logs in with the unsecured login as ``broker``, tokens of 6 s), sessions of at most 60 s;
* SCOPED, the unsecured validator requiring the scope ``kafka.produce``;
* CUSTOM, the validator tests/security/oauth_callback_handlers.py by dotted path, accepting
  ``alice`` only.

Sleeps only ever wait past a deadline the broker enforces (a token's expiry); nothing is timed.
"""
from __future__ import annotations

import base64
import json
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

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
MAX_REAUTH_MS = 60_000
BROKER_TOKEN_LIFETIME_S = 6
INVALID_CREDENTIALS = ("Authentication failed during authentication due to invalid credentials with SASL "
                       "mechanism OAUTHBEARER")


@pytest.fixture(scope="module")
def oauth_broker(zookeeper, tmp_path_factory):
    ports = {name: free_port() for name in ("INTERNAL", "SCOPED", "CUSTOM")}
    metrics_port = free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("oauth-broker"), zookeeper.connect_string, unique_chroot())
    broker.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},"
                     + ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,SCOPED:SASL_PLAINTEXT,"
                                          "CUSTOM:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
        "listener.name.internal.oauthbearer.sasl.jaas.config":
            f'{MODULE} required unsecuredLoginStringClaim_sub="broker" unsecuredLoginExtension_role="replica" '
            f'unsecuredLoginLifetimeSeconds="{BROKER_TOKEN_LIFETIME_S}";',
        "listener.name.internal.oauthbearer.connections.max.reauth.ms": str(MAX_REAUTH_MS),
        "listener.name.scoped.oauthbearer.sasl.jaas.config":
            f'{MODULE} required unsecuredValidatorRequiredScope="kafka.produce" '
            f'unsecuredValidatorAllowableClockSkewMs="1000";',
        "listener.name.custom.oauthbearer.sasl.jaas.config": f'{MODULE} required acceptedSubject="alice";',
        "listener.name.custom.oauthbearer.sasl.server.callback.handler.class":
            "tests.security.oauth_callback_handlers.SingleSubjectValidatorCallbackHandler",
        "connection.failed.authentication.delay.ms": "50",
        "kafka.py.metrics.prometheus.port": str(metrics_port),
        "kafka.py.metrics.prometheus.host": "127.0.0.1",
    })
    broker.write_config()
    broker.start()
    broker.started_at = time.monotonic()
    broker.oauth_ports = ports
    broker.metrics_port = metrics_port
    yield broker
    if broker.running:
        assert broker.stop() == 0, broker.tail()


def _listener_metrics(broker, listener: str) -> dict:
    """A listener's socket-server-metrics summed over its network threads (NaNs left out)."""
    from tests.integration.test_metrics import scrape

    prefix = "kafka_server_socket_server_metrics_"
    totals: dict = {}
    for (name, labels), v in scrape(broker.metrics_port).items():
        if name.startswith(prefix) and ("listener", listener) in labels and v == v:
            totals[name[len(prefix):]] = totals.get(name[len(prefix):], 0.0) + v
    return totals


def _b64(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def unsecured_jws(subject, lifetime_s: float = 3600, **claims) -> str:
    now = time.time()
    # whole seconds for iat: the broker compares it with its clock in milliseconds, and a
    # fractional iat read back within the same millisecond would lie in the broker's future
    body = {"sub": subject, "iat": int(now), "exp": now + lifetime_s, **claims}
    if subject is None:
        del body["sub"]
    return f"{_b64({'alg': 'none'})}.{_b64(body)}."


def client_first_message(token: str, extensions: str = "") -> bytes:
    return f"n,,\x01auth=Bearer {token}{extensions}\x01\x01".encode()


class _Connection:
    """A SASL connection driven by hand: SaslHandshake v1 and SaslAuthenticate v2 frames."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.correlation = 0

    def request(self, api: ApiKeys, version: int, body):
        self.correlation += 1
        header = RequestHeader(api, version, self.correlation, "oauth-test", api.request_header_version(version))
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

    def handshake(self) -> None:
        answer = self.request(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="OAUTHBEARER"))
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE

    def authenticate(self, auth_bytes: bytes):
        return self.request(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=auth_bytes))

    def login(self, token: str, extensions: str = ""):
        self.handshake()
        return self.authenticate(client_first_message(token, extensions))

    def refused(self, auth_bytes: bytes) -> tuple[str, str]:
        """Logs in with ``auth_bytes``, expecting a refusal: (the broker's JSON challenge or '' when it
        failed at once, the SASL_AUTHENTICATION_FAILED message); the connection is then closed."""
        self.handshake()
        answer = self.authenticate(auth_bytes)
        challenge = ""
        if Errors.for_code(int(answer.error_code)) is Errors.NONE:
            challenge = bytes(answer.auth_bytes).decode()
            assert challenge, "the broker accepted the token"
            answer = self.authenticate(b"\x01")  # RFC 7628: the client's answer to an error
        assert Errors.for_code(int(answer.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
        assert self.closed_by_broker()
        return challenge, answer.error_message

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


def test_the_broker_logs_in_to_its_own_inter_broker_listener_with_oauthbearer(oauth_broker) -> None:
    # The controller's channel to the broker (UpdateMetadata, LeaderAndIsr) goes over INTERNAL, so
    # a topic led here proves the broker's own unsecured token was accepted, with its extension.
    topic = f"oauth-ib-{uuid.uuid4().hex[:6]}"
    producer = KafkaProducer(bootstrap_servers=oauth_broker.bootstrap, acks="all")
    try:
        producer.send(topic, b"over-plaintext").get(timeout=60)
    finally:
        producer.close(timeout=30)
    output = oauth_broker.output()
    assert "Successfully validated token with principal broker" in output
    assert _listener_metrics(oauth_broker, "INTERNAL")["successful_authentication_total"] >= 1


def test_confluent_kafka_produces_and_consumes_and_reauthenticates_before_its_token_expires(oauth_broker) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = f"oauth-rdkafka-{uuid.uuid4().hex[:6]}"
    captured = _Captured()
    client_logger = logging.getLogger(f"rdkafka-oauth-{topic}")
    client_logger.setLevel(logging.DEBUG)
    client_logger.addHandler(captured)
    client_logger.propagate = False
    lifetime_s = 4
    security = {"bootstrap.servers": f"127.0.0.1:{oauth_broker.oauth_ports['INTERNAL']}",
                "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": f"principal=carol lifeSeconds={lifetime_s} extension_traceId=t-1"}
    before = _listener_metrics(oauth_broker, "INTERNAL")
    producer = confluent_kafka.Producer({**security, "debug": "security,broker", "message.timeout.ms": 20000},
                                        logger=client_logger)
    errors: list = []
    delivered: list = []

    def on_delivery(err, msg) -> None:
        (errors if err is not None else delivered).append(err or msg.value())

    try:
        # over more than two token lifetimes: the session (bounded by the token's exp, not by the
        # listener's 60 s) is renewed with fresh tokens and nothing is lost
        deadline = time.monotonic() + 2.5 * lifetime_s
        # (a loaded machine may take long to connect: then on until two re-authentications, within reason)
        hard_deadline = time.monotonic() + 10 * lifetime_s
        sent = 0
        while time.monotonic() < deadline or (captured.count("Received REAUTH op") < 2
                                               and time.monotonic() < hard_deadline):
            producer.produce(topic, b"r-%05d" % sent, callback=on_delivery)
            sent += 1
            producer.poll(0.05)
        assert producer.flush(30) == 0
        assert not errors and len(delivered) == sent
        assert captured.count("Received REAUTH op") >= 2, captured.lines[-20:]
    finally:
        producer.flush(0)
        client_logger.removeHandler(captured)
    after = _listener_metrics(oauth_broker, "INTERNAL")
    assert after["successful_reauthentication_total"] - before.get("successful_reauthentication_total", 0) >= 2

    consumer = confluent_kafka.Consumer({**security, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        got = []
        until = time.monotonic() + 60
        while len(got) < sent and time.monotonic() < until:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                got.append(message.value())
        assert got == [b"r-%05d" % i for i in range(sent)]
    finally:
        consumer.close()


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


def _kafka_python_provider(subject: str, **claims):
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            return unsecured_jws(subject, **claims)

        def extensions(self) -> dict:
            return {"traceId": "kp-1"}

    return Provider()


def test_kafka_python_with_a_token_provider(oauth_broker) -> None:
    topic = f"oauth-kp-{uuid.uuid4().hex[:6]}"
    configs = dict(bootstrap_servers=f"127.0.0.1:{oauth_broker.oauth_ports['SCOPED']}",
                   security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER")
    producer = KafkaProducer(acks=1, sasl_oauth_token_provider=_kafka_python_provider(
        "dave", scope=["kafka.produce", "other"]), **configs)
    try:
        values = [b"kp-%d" % i for i in range(20)]
        for value in values:
            producer.send(topic, value)
        producer.flush(30)
    finally:
        producer.close(timeout=30)
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000,
                             sasl_oauth_token_provider=_kafka_python_provider("dave", scope="kafka.produce"),
                             **configs)
    try:
        got = []
        until = time.monotonic() + 60
        while len(got) < len(values) and time.monotonic() < until:
            for batch in consumer.poll(timeout_ms=1000).values():
                got.extend(r.value for r in batch)
    finally:
        consumer.close()
    assert got == values


def test_bad_tokens_are_refused_counted_and_the_broker_serves_on(oauth_broker) -> None:
    port = oauth_broker.oauth_ports["SCOPED"]
    scope = {"scope": ["kafka.produce"]}
    before = _listener_metrics(oauth_broker, "SCOPED")
    cases = [
        # a bad claim set: the subject is a number
        (client_first_message(unsecured_jws(42, **scope)), '{"status":"invalid_token"}'),
        # expired beyond the allowed second of clock skew
        (client_first_message(unsecured_jws("erin", lifetime_s=-30, **scope)), '{"status":"invalid_token"}'),
        # no exp at all
        (client_first_message(f"{_b64({'alg': 'none'})}.{_b64({'sub': 'erin', **scope})}."),
         '{"status":"invalid_token"}'),
        # signed, not unsecured
        (client_first_message(f"{_b64({'alg': 'HS256'})}.{_b64({'sub': 'erin', 'exp': 4e9, **scope})}.c2ln"),
         '{"status":"invalid_token"}'),
        # the required scope is missing
        (client_first_message(unsecured_jws("erin", scope=["kafka.read"])),
         '{"status":"insufficient_scope", "scope":"[kafka.produce]"}'),
    ]
    for auth_bytes, status in cases:
        connection = _Connection(port)
        try:
            assert connection.refused(auth_bytes) == (status, status)
        finally:
            connection.close()
    # garbage, and a well-formed message with no token: refused at once with Kafka's fixed text
    for garbage in (b"\x00\xffnot a client first message", b"n,,\x01traceId=x\x01\x01", b"\x01"):
        connection = _Connection(port)
        try:
            assert connection.refused(garbage) == ("", INVALID_CREDENTIALS)
        finally:
            connection.close()
    after = _listener_metrics(oauth_broker, "SCOPED")
    assert after["failed_authentication_total"] - before.get("failed_authentication_total", 0) == len(cases) + 3
    # ... and serves the next client
    connection = _Connection(port)
    try:
        answer = connection.login(unsecured_jws("erin", **scope))
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE and bytes(answer.auth_bytes) == b""
        assert answer.session_lifetime.total_seconds() == 0  # this listener's sessions do not end
        assert connection.metadata().brokers
    finally:
        connection.close()
    assert _listener_metrics(oauth_broker, "SCOPED")["successful_authentication_total"] \
        - before.get("successful_authentication_total", 0) >= 1


def test_a_validator_by_dotted_path_accepts_only_its_subject(oauth_broker) -> None:
    port = oauth_broker.oauth_ports["CUSTOM"]
    before = _listener_metrics(oauth_broker, "CUSTOM")
    alice = _Connection(port)
    try:
        answer = alice.login(unsecured_jws("alice"), "\x01tenant=blue")
        assert Errors.for_code(int(answer.error_code)) is Errors.NONE
        assert alice.metadata().brokers
    finally:
        alice.close()
    bob = _Connection(port)
    try:
        assert bob.refused(client_first_message(unsecured_jws("bob"))) == ('{"status":"invalid_token"}',) * 2
    finally:
        bob.close()
    red = _Connection(port)
    try:
        assert red.refused(client_first_message(unsecured_jws("alice"), "\x01tenant=red")) == \
            ("", "Authentication failed: 1 extensions are invalid! They are: tenant: unknown tenant")
    finally:
        red.close()
    after = _listener_metrics(oauth_broker, "CUSTOM")
    assert after["failed_authentication_total"] - before.get("failed_authentication_total", 0) == 2
    assert after["successful_authentication_total"] - before.get("successful_authentication_total", 0) == 1


def test_the_session_ends_with_the_token_and_a_new_token_renews_it(oauth_broker) -> None:
    port = oauth_broker.oauth_ports["INTERNAL"]
    lifetime_s = 3.0
    expiring, renewed = _Connection(port), _Connection(port)
    try:
        answer = expiring.login(unsecured_jws("frank", lifetime_s=lifetime_s))
        authenticated_at = time.monotonic()
        lifetime_ms = answer.session_lifetime.total_seconds() * 1000
        # bounded by the token's exp, well under the listener's connections.max.reauth.ms
        assert 0 < lifetime_ms <= lifetime_s * 1000
        assert renewed.login(unsecured_jws("frank", lifetime_s=lifetime_s)).session_lifetime.total_seconds() > 0
        time.sleep(1.1)  # past the one-second minimum between re-authentications
        again = renewed.login(unsecured_jws("frank", lifetime_s=30))
        assert Errors.for_code(int(again.error_code)) is Errors.NONE
        assert lifetime_s * 1000 < again.session_lifetime.total_seconds() * 1000 <= 30_000
        # past the first token's exp the connection that did not renew is closed at its next request
        time.sleep(max(0.0, authenticated_at + lifetime_s + 0.3 - time.monotonic()))
        assert expiring.closed_by_broker()
        assert renewed.metadata().brokers
    finally:
        expiring.close()
        renewed.close()
    wait_until(lambda: "SASL session expired" in oauth_broker.output(), 30, "the broker did not log the expiry")

    # re-authenticating as someone else is refused and ends the connection
    connection = _Connection(port)
    try:
        assert Errors.for_code(int(connection.login(unsecured_jws("frank")).error_code)) is Errors.NONE
        time.sleep(1.1)
        answer = connection.login(unsecured_jws("mallory"))
        assert Errors.for_code(int(answer.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
        assert "Cannot change principals during re-authentication" in answer.error_message
        assert connection.closed_by_broker()
    finally:
        connection.close()


def _tool(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=120)


def test_the_tools_log_in_with_the_unsecured_login(oauth_broker, tmp_path) -> None:
    server = f"127.0.0.1:{oauth_broker.oauth_ports['SCOPED']}"
    config = tmp_path / "oauth.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                      f"sasl.jaas.config={MODULE} required unsecuredLoginStringClaim_sub=\"ops\" "
                      "unsecuredLoginListClaim_scope=\"|kafka.produce|kafka.admin\";\n")
    topic = f"oauth-tool-{uuid.uuid4().hex[:6]}"
    # kafka-topics.sh goes through kafka-python's admin client (a token provider) ...
    created = _tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", str(config), "--create",
                    "--topic", topic, "--partitions", "1", "--replication-factor", "1")
    assert created.returncode == 0 and f"Created topic {topic}." in created.stdout, created.stderr
    # ... kafka-broker-api-versions.sh through the tools' own connection (OAuthBearerSaslClient)
    versions = _tool("kafka-broker-api-versions.sh", "--bootstrap-server", server, "--command-config", str(config))
    assert versions.returncode == 0 and "SaslAuthenticate(36)" in versions.stdout, versions.stderr


def test_the_broker_renews_its_own_token_and_its_connections_carry_on(oauth_broker) -> None:
    """Past several of its 6-second tokens, the controller's channel (re-authenticated with new
    tokens from the broker's login) still makes a new topic's leader."""
    time.sleep(max(0.0, oauth_broker.started_at + 3 * BROKER_TOKEN_LIFETIME_S - time.monotonic()))
    topic = f"oauth-renewed-{uuid.uuid4().hex[:6]}"
    producer = KafkaProducer(bootstrap_servers=oauth_broker.bootstrap, acks="all")
    try:
        producer.send(topic, b"after-renewal").get(timeout=60)
    finally:
        producer.close(timeout=30)
    output = oauth_broker.output()
    assert "failed authentication due to" not in output
    assert output.count("Successfully validated token with principal broker") >= 2
