"""The command-line tools against TLS and SASL listeners with ``--command-config``: the Java
admin client properties (security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config) reach
both the kafka-python admin client (topics, brokers, groups, ACLs) and the tools' own
connection (client quotas, SCRAM credentials) of kafka-configs.sh, kafka-topics.sh,
kafka-acls.sh and kafka-consumer-groups.sh.

One broker process (tests/security/conftest.py) with SASL_SSL (SCRAM-SHA-512, PLAIN) and
SASL_PLAINTEXT (PLAIN, SCRAM) listeners; no timing is asserted, every wait is bounded.
"""
from __future__ import annotations

import subprocess
import uuid

from kafka import KafkaProducer
from kafka.errors import KafkaError

from tests.integration.broker_harness import ROOT, wait_until

PLAIN_LOGIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="{}" password="{}";'
SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{}";'


def _tool(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / script), *args], capture_output=True, text=True, timeout=120)


def _command_config(tmp_path, secure_broker, protocol: str, mechanism: str, login: str) -> str:
    lines = [f"security.protocol={protocol}", f"sasl.mechanism={mechanism}", f"sasl.jaas.config={login}"]
    if protocol.endswith("SSL"):
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={secure_broker.pki.ca_cert}",
                  "ssl.endpoint.identification.algorithm=https"]
    path = tmp_path / f"{uuid.uuid4().hex[:8]}.properties"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _logs_in(secure_broker, user: str, password: str) -> bool:
    try:
        producer = KafkaProducer(bootstrap_servers=secure_broker.bootstrap("SASL_SSL"), security_protocol="SASL_SSL",
                                 ssl_cafile=str(secure_broker.pki.ca_cert), sasl_mechanism="SCRAM-SHA-512",
                                 sasl_plain_username=user, sasl_plain_password=password, max_block_ms=5000,
                                 request_timeout_ms=5000)
    except KafkaError:
        return False
    try:
        producer.partitions_for(f"login-{uuid.uuid4().hex[:6]}")
        return True
    except KafkaError:
        return False
    finally:
        producer.close(timeout=5)


def test_every_entity_type_over_sasl_ssl(secure_broker, tmp_path) -> None:
    server = secure_broker.bootstrap("SASL_SSL")
    alice = _command_config(tmp_path, secure_broker, "SASL_SSL", "PLAIN", PLAIN_LOGIN.format("alice", "alice-secret"))
    topic = f"cc-{uuid.uuid4().hex[:8]}"

    # kafka-topics.sh
    assert f'Created topic {topic}.' in _ok(_tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config",
                                                  alice, "--create", "--topic", topic, "--partitions", "2"))
    assert topic in _ok(_tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", alice, "--list"))

    # kafka-configs.sh: topics and brokers (kafka-python's admin client)
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", alice, "--alter",
              "--entity-type", "topics", "--entity-name", topic, "--add-config", "retention.ms=123456"))
    assert "retention.ms=123456" in _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config",
                                              alice, "--describe", "--entity-type", "topics", "--entity-name", topic))
    broker_id = str(secure_broker.process.broker_id)
    assert f"broker {broker_id}" in _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config",
                                              alice, "--describe", "--entity-type", "brokers",
                                              "--entity-name", broker_id))

    # kafka-configs.sh: SCRAM credentials (the tool's own connection), then a login with them
    user = f"sc-{uuid.uuid4().hex[:6]}"
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", alice, "--alter",
              "--add-config", "SCRAM-SHA-512=[iterations=4096,password=sc-secret]", "--entity-type", "users",
              "--entity-name", user))
    wait_until(lambda: _logs_in(secure_broker, user, "sc-secret"), 60, "SCRAM user added over SASL_SSL cannot log in")
    # ... and the new user's SCRAM login is the tools' login from now on
    scram = _command_config(tmp_path, secure_broker, "SASL_SSL", "SCRAM-SHA-512", SCRAM_LOGIN.format(user, "sc-secret"))

    # kafka-configs.sh: quotas of users, clients and the pair
    client = f"cl-{uuid.uuid4().hex[:6]}"
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", scram, "--alter",
              "--add-config", "producer_byte_rate=1048576", "--entity-type", "clients", "--entity-name", client))
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", scram, "--alter",
              "--add-config", "consumer_byte_rate=2048", "--entity-type", "users", "--entity-name", user,
              "--entity-type", "clients", "--entity-name", client))
    out = _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", scram, "--describe",
                    "--entity-type", "clients", "--entity-name", client))
    assert f"Quota configs for client-id '{client}' are producer_byte_rate=1048576.0" in out, out
    out = _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", scram, "--describe",
                    "--entity-type", "users", "--entity-name", user))
    assert f"SCRAM credential configs for user-principal '{user}' are SCRAM-SHA-512=iterations=4096" in out, out
    out = _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", scram, "--describe",
                    "--entity-type", "users", "--entity-name", user, "--entity-type", "clients",
                    "--entity-name", client))
    assert "consumer_byte_rate=2048.0" in out, out

    # kafka-consumer-groups.sh and kafka-acls.sh reach the listener too
    _ok(_tool("kafka-consumer-groups.sh", "--bootstrap-server", server, "--command-config", scram, "--list"))
    acls = _tool("kafka-acls.sh", "--bootstrap-server", server, "--command-config", scram, "--list")
    # no authorizer on this broker: Kafka's answer to DescribeAcls, which only a logged-in client gets
    assert "SecurityDisabled" in acls.stdout + acls.stderr, acls.stdout + acls.stderr


def test_sasl_plaintext_and_refused_logins(secure_broker, tmp_path) -> None:
    server = secure_broker.bootstrap("SASL_PLAINTEXT")
    bob = _command_config(tmp_path, secure_broker, "SASL_PLAINTEXT", "PLAIN", PLAIN_LOGIN.format("bob", "bob-secret"))
    client = f"cl-{uuid.uuid4().hex[:6]}"
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", bob, "--alter",
              "--add-config", "request_percentage=50", "--entity-type", "clients", "--entity-name", client))
    assert "request_percentage=50.0" in _ok(_tool("kafka-configs.sh", "--bootstrap-server", server,
                                                  "--command-config", bob, "--describe", "--entity-type", "clients",
                                                  "--entity-name", client))

    # A wrong password: one line naming the failure, status 1, for the tool's own connection and
    # for kafka-python's admin client alike.
    wrong = _command_config(tmp_path, secure_broker, "SASL_PLAINTEXT", "PLAIN", PLAIN_LOGIN.format("bob", "nope"))
    for args in (("--describe", "--entity-type", "clients", "--entity-name", client),
                 ("--describe", "--entity-type", "topics")):
        result = _tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", wrong, *args)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "Traceback" not in result.stderr and result.stderr.strip(), result.stderr
        # the refusal itself, not a bootstrap timeout
        assert "SaslAuthenticationException" in result.stderr, result.stderr
    # A TLS listener with no trust store for its CA: refused, never a traceback.
    untrusted = tmp_path / "untrusted.properties"
    untrusted.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
                         f"sasl.jaas.config={PLAIN_LOGIN.format('bob', 'bob-secret')}\n")
    result = _tool("kafka-configs.sh", "--bootstrap-server", secure_broker.bootstrap("SASL_SSL"), "--command-config",
                   str(untrusted), "--describe", "--entity-type", "clients")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    # A bad value names its key.
    bad = tmp_path / "bad.properties"
    bad.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=NTLM\n"
                   f"sasl.jaas.config={PLAIN_LOGIN.format('bob', 'bob-secret')}\n")
    result = _tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", str(bad), "--describe",
                   "--entity-type", "clients")
    assert result.returncode == 1 and "sasl.mechanism" in result.stderr, result.stdout + result.stderr


def test_client_certificate_from_the_key_store(secure_broker, tmp_path) -> None:
    """A listener that requires client certificates (MTLS): ssl.keystore.location (PEM key and
    chain in one file) reaches it, for the tools' own connection and kafka-python's alike."""
    server = secure_broker.bootstrap("MTLS")
    trust = ["security.protocol=SSL", "ssl.truststore.type=PEM", f"ssl.truststore.location={secure_broker.pki.ca_cert}"]
    with_cert = tmp_path / "mtls.properties"
    with_cert.write_text("\n".join(trust + ["ssl.keystore.type=PEM",
                                            f"ssl.keystore.location={secure_broker.pki.client_keystore}"]) + "\n")
    without = tmp_path / "no-cert.properties"
    without.write_text("\n".join(trust) + "\n")
    _ok(_tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", str(with_cert), "--describe",
              "--entity-type", "clients"))
    _ok(_tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", str(with_cert), "--list"))
    result = _tool("kafka-configs.sh", "--bootstrap-server", server, "--command-config", str(without), "--describe",
                   "--entity-type", "clients")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr


def test_tools_with_their_own_broker_connections_over_sasl_ssl(secure_broker, tmp_path) -> None:
    """kafka-broker-api-versions.sh and kafka-delete-records.sh send their requests on their own
    connections to the brokers Metadata names (those of the SASL_SSL listener here);
    GetOffsetShell's consumer is kafka-python's."""
    server = secure_broker.bootstrap("SASL_SSL")
    alice = _command_config(tmp_path, secure_broker, "SASL_SSL", "PLAIN", PLAIN_LOGIN.format("alice", "alice-secret"))
    broker_id = secure_broker.process.broker_id
    versions = _ok(_tool("kafka-broker-api-versions.sh", "--bootstrap-server", server, "--command-config", alice))
    assert versions.splitlines()[0] == f"{server} (id: {broker_id} rack: null) -> ("
    assert "\tSaslAuthenticate(36): 0 to 2 [usable: 2]," in versions.splitlines()

    topic = f"dr-{uuid.uuid4().hex[:8]}"
    _ok(_tool("kafka-topics.sh", "--bootstrap-server", server, "--command-config", alice, "--create",
              "--topic", topic))
    producer = KafkaProducer(bootstrap_servers=secure_broker.process.bootstrap, acks="all")  # its PLAINTEXT listener
    try:
        for i in range(5):
            producer.send(topic, b"%d" % i)
        producer.flush(timeout=30)
    finally:
        producer.close()
    offsets = tmp_path / "offsets.json"
    offsets.write_text(f'{{"partitions": [{{"topic": "{topic}", "partition": 0, "offset": 3}}], "version": 1}}')
    deleted = _ok(_tool("kafka-delete-records.sh", "--bootstrap-server", server, "--command-config", alice,
                        "--offset-json-file", str(offsets)))
    assert deleted.splitlines()[-1] == f"partition: {topic}-0\tlow_watermark: 3"
    earliest = _ok(_tool("kafka-run-class.sh", "kafka.tools.GetOffsetShell", "--bootstrap-server", server,
                         "--command-config", alice, "--topic", topic, "--time", "-2"))
    assert earliest == f"{topic}:0:3\n"

    wrong = _command_config(tmp_path, secure_broker, "SASL_SSL", "PLAIN", PLAIN_LOGIN.format("alice", "nope"))
    for script, args in (("kafka-broker-api-versions.sh", ()), ("kafka-delete-records.sh", ("--offset-json-file",
                                                                                           str(offsets)))):
        result = _tool(script, "--bootstrap-server", server, "--command-config", wrong, *args)
        assert result.returncode == 1, result.stdout + result.stderr
        # the client's ERROR log line, as Kafka's NetworkClient logs it, then the tool's own line
        assert "Traceback" not in result.stderr, result.stderr
        assert result.stderr.splitlines()[-1] == (f"Authentication to {server} failed: SaslAuthenticationException: "
                                                  "Authentication failed: Invalid username or password")
