"""ACLs and SCRAM credentials in KRaft mode, end to end: one combined node (broker and
controller) with the StandardAuthorizer, allow.everyone.if.no.acl.found=false, a PLAINTEXT
listener whose User:ANONYMOUS is a super user (as the inter-broker and controller principal
must be) and a SASL_PLAINTEXT listener taking SCRAM-SHA-256 logins; User:admin is a super user.

Credentials are created with bin/kafka-configs.sh (AlterUserScramCredentials, forwarded to the
controller), ACLs with bin/kafka-acls.sh (CreateAcls, DeleteAcls forwarded; DescribeAcls
answered by the broker); kafka-python clients log in as alice. Small snapshot and segment
limits make the node snapshot its metadata, so the restart finds the ACLs and credentials in
a snapshot after the log before it is gone. Every wait is bounded; no timing is asserted.
"""
from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAuthorizationFailedError

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from tests.integration.broker_harness import ROOT, RawClient, free_port, port_open, wait_until
from tests.integration.kraft_harness import UNFENCED, combined_node_config, read_text, run_tool
from tests.security.test_security_listeners import _login_outcome

SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{}";'
PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret"}
WAIT = 60.0
TOPIC = "secured"
GROUP = "alice-group"


class Node:
    def __init__(self, tmp_path: pathlib.Path) -> None:
        self.tmp_path = tmp_path
        self.config, self.port, self.log_dir = combined_node_config(tmp_path)
        self.sasl_port = free_port()
        text = self.config.read_text()
        text = re.sub(r"^listeners=PLAINTEXT://:(\d+)", r"listeners=PLAINTEXT://127.0.0.1:\1", text, flags=re.M)
        text = re.sub(r"^(listeners=.*)$", rf"\1,SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}", text, flags=re.M)
        text = re.sub(r"^advertised\.listeners=.*$", f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port},"
                      f"SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}", text, flags=re.M)
        text += ("sasl.enabled.mechanisms=SCRAM-SHA-256\n"
                 "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
                 "allow.everyone.if.no.acl.found=false\n"
                 "super.users=User:admin;User:ANONYMOUS\n"
                 "metadata.log.max.record.bytes.between.snapshots=1500\n"
                 "metadata.log.segment.min.bytes=1024\n"
                 "metadata.log.segment.bytes=4096\n"
                 "metadata.max.retention.bytes=1\n")
        self.config.write_text(text)
        self.output = tmp_path / "server.out"
        self.process: subprocess.Popen | None = None
        self.run_offset = 0
        configs = tmp_path / "command-configs"
        configs.mkdir()
        self.command_configs = {}
        for user, password in PASSWORDS.items():
            path = configs / f"{user}.properties"
            path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                            f"sasl.jaas.config={SCRAM_LOGIN.format(user, password)}\n")
            self.command_configs[user] = str(path)

    def start(self) -> None:
        self.run_offset = self.output.stat().st_size if self.output.exists() else 0
        with open(self.output, "ab") as out:
            self.process = subprocess.Popen([str(ROOT / "bin" / "kafka-server-start.sh"), str(self.config)],
                                            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                            env=dict(os.environ, LOG_DIR=str(self.tmp_path / "logs")))

        def serving() -> bool:
            assert self.process.poll() is None, self.run_output()[-3000:]
            return UNFENCED in self.run_output() and port_open(self.port) and port_open(self.sasl_port)

        wait_until(serving, 90, "the combined node did not start")

    def run_output(self) -> str:
        return read_text(self.output)[self.run_offset:]

    def stop(self) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=90)
        finally:
            self.process = None

    def sasl(self, user: str, password: str | None = None) -> dict:
        return {"bootstrap_servers": f"127.0.0.1:{self.sasl_port}", "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": user,
                "sasl_plain_password": password or PASSWORDS[user]}

    def tool(self, script: str, *args: str, user: str | None = None) -> subprocess.CompletedProcess:
        """A bin/ tool: as ``user`` over SASL, or as the anonymous super user over PLAINTEXT."""
        if user is None:
            target = ["--bootstrap-server", f"127.0.0.1:{self.port}"]
        else:
            target = ["--bootstrap-server", f"127.0.0.1:{self.sasl_port}", "--command-config",
                      self.command_configs[user]]
        return run_tool(str(ROOT / "bin" / script), *target, *args)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    node = Node(tmp_path_factory.mktemp("kraft-acls"))
    cluster_id = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "random-uuid").stdout.strip()
    formatted = run_tool(str(ROOT / "bin" / "kafka-storage.sh"), "format", "-t", cluster_id, "-c", str(node.config))
    assert formatted.returncode == 0, formatted.stderr
    node.start()
    yield node
    assert node.stop() == 0, node.run_output()[-3000:]


def _ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _produce(node: Node, value: bytes) -> None:
    producer = KafkaProducer(request_timeout_ms=10000, max_block_ms=15000, **node.sasl("alice"))
    try:
        producer.send(TOPIC, value).get(timeout=20)
    finally:
        producer.close(timeout=10)


def _consume(node: Node, expected: int) -> list[bytes]:
    consumer = KafkaConsumer(TOPIC, group_id=GROUP, auto_offset_reset="earliest", consumer_timeout_ms=5000,
                             **node.sasl("alice"))
    try:
        got: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while len(got) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                got.extend(r.value for r in batch)
        return got
    finally:
        consumer.close()


def _alice_denied(node: Node) -> bool:
    try:
        _produce(node, b"refused")
    except TopicAuthorizationFailedError:
        return True
    return False


def _alice_allowed(node: Node) -> bool:
    try:
        _produce(node, b"allowed")
    except KafkaError:
        return False
    return True


def _acls(node: Node) -> str:
    return _ok(node.tool("kafka-acls.sh", "--list", "--topic", TOPIC, user="admin"))


def _describe_acls(node: Node):
    body = request_schema(ApiKeys.DESCRIBE_ACLS, 2)(
        resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1, principal_filter=None,
        host_filter=None, operation=1, permission_type=1)
    with RawClient(node.port, timeout=20) as client:
        return client.request(ApiKeys.DESCRIBE_ACLS, 2, body)


def test_the_authorizer_is_told_the_offset_it_caught_up_at(node):
    # the broker hands the ACL publisher the metadata offset it has caught up with, which the
    # publisher logs as a number before the authorizer opens the listeners
    output = node.run_output()
    assert re.search(r"Caught up with the metadata log at offset \d+: the ACLs are loaded", output), output[-3000:]
    assert "Logging error" not in output, output[-3000:]


def test_invalid_acls_get_invalid_request_and_nothing_is_recorded(node):
    cls = request_schema(ApiKeys.CREATE_ACLS, 2)
    module = __import__(cls.__module__, fromlist=["AclCreation"])
    good = dict(resource_type=2, resource_name="bad-input", resource_pattern_type=3, principal="User:x", host="*",
                operation=3, permission_type=3)
    creations = tuple(module.AclCreation(**{**good, **bad}) for bad in (
        {"resource_type": 99}, {"resource_pattern_type": 99}, {"operation": 99}, {"resource_name": ""}))
    with RawClient(node.port, timeout=30) as client:
        response = client.request(ApiKeys.CREATE_ACLS, 2, cls(creations=creations))
    assert [int(r.error_code) for r in response.results] == [Errors.INVALID_REQUEST.error_code] * 4
    described = _describe_acls(node)
    assert int(described.error_code) == 0 and described.resources == ()


def test_scram_users_and_acls_survive_a_restart_from_a_snapshot(node):
    # SCRAM credentials through AlterUserScramCredentials, forwarded to the controller
    for user, password in PASSWORDS.items():
        _ok(node.tool("kafka-configs.sh", "--alter", "--entity-type", "users", "--entity-name", user,
                      "--add-config", f"SCRAM-SHA-256=[iterations=8192,password={password}]"))
    # DescribeUserScramCredentials, answered from the broker's view of the metadata log
    body = request_schema(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0)(users=None)
    with RawClient(node.port, timeout=20) as client:
        described = client.request(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, body)
    assert {r.user: [(int(i.mechanism), int(i.iterations)) for i in r.credential_infos]
            for r in described.results} == {"admin": [(1, 8192)], "alice": [(1, 8192)]}

    # admin logs in over SASL and, as a super user, creates the topic (forwarded in an Envelope
    # carrying User:admin, authorized by the controller)
    admin = KafkaAdminClient(request_timeout_ms=20000, **node.sasl("admin"))
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()

    # alice logs in, but may not write without ACLs
    assert _alice_denied(node)

    _ok(node.tool("kafka-acls.sh", "--add", "--allow-principal", "User:alice", "--operation", "Write",
                  "--operation", "Read", "--topic", TOPIC, user="admin"))
    _ok(node.tool("kafka-acls.sh", "--add", "--allow-principal", "User:alice", "--operation", "Read",
                  "--group", GROUP, user="admin"))
    wait_until(lambda: _alice_allowed(node), WAIT, "alice could not write after the ACLs were added")
    assert b"allowed" in _consume(node, 1)
    listed = _acls(node)
    assert "User:alice" in listed and "WRITE" in listed.upper() and "READ" in listed.upper()

    # metadata churn until the log starts at a snapshot holding the ACLs and credentials
    metadata_dir = node.log_dir / "@metadata-0"
    moved = False
    admin = KafkaAdminClient(request_timeout_ms=20000, **node.sasl("admin"))
    try:
        for i in range(300):
            admin.create_topics([NewTopic(f"churn-{i}", 1, 1)])
            admin.delete_topics([f"churn-{i}"])
            names = os.listdir(metadata_dir)
            segments = sorted(int(n[:-4]) for n in names if re.fullmatch(r"\d{20}\.log", n))
            if any(n.endswith(".checkpoint") for n in names) and segments and segments[0] > 0:
                moved = True
                break
    finally:
        admin.close()
    assert moved, os.listdir(metadata_dir)

    assert node.stop() == 0, node.run_output()[-3000:]
    node.start()
    assert "Loading snapshot" in node.run_output()
    # replayed from the snapshot: the credentials log in, the ACLs allow and are listed
    wait_until(lambda: _alice_allowed(node), WAIT, "alice lost her ACLs or credential across the restart")
    assert "User:alice" in _acls(node)
    described = _describe_acls(node)
    assert {r.resource_name for r in described.resources} == {TOPIC, GROUP}

    # DeleteAcls: denied again
    _ok(node.tool("kafka-acls.sh", "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write",
                  "--operation", "Read", "--topic", TOPIC, user="admin"))
    wait_until(lambda: _alice_denied(node), WAIT, "alice could still write after the ACLs were removed")
    assert "User:alice" not in _acls(node)

    # a removed credential no longer logs in; a wrong password never did
    assert _login_outcome(node.sasl("alice", "wrong")) == "refused"
    _ok(node.tool("kafka-configs.sh", "--alter", "--entity-type", "users", "--entity-name", "alice",
                  "--delete-config", "SCRAM-SHA-256"))
    wait_until(lambda: _login_outcome(node.sasl("alice")) == "refused", WAIT, "alice could still log in")


def test_delegation_token_apis_are_not_served(node):
    """As by Kafka 2.8.2's KRaft broker, whose token API specs name the zkBroker listener alone:
    ApiVersions does not list them, and a request of one closes the connection."""
    with RawClient(node.port, timeout=20) as client:
        versions = client.request(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
            client_software_name="kafka-py-test", client_software_version="1"))
    # and before a SASL login, where the authenticator answers ApiVersions
    with RawClient(node.sasl_port, timeout=20) as client:
        before_login = client.request(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
            client_software_name="kafka-py-test", client_software_version="1"))
    for answer in (versions, before_login):
        listed = {int(k.api_key) for k in answer.api_keys}
        assert ApiKeys.METADATA.id in listed and ApiKeys.CREATE_ACLS.id in listed
        assert not listed & {ApiKeys.CREATE_DELEGATION_TOKEN.id, ApiKeys.RENEW_DELEGATION_TOKEN.id,
                             ApiKeys.EXPIRE_DELEGATION_TOKEN.id, ApiKeys.DESCRIBE_DELEGATION_TOKEN.id}
    for api, values in ((ApiKeys.CREATE_DELEGATION_TOKEN, {"renewers": (), "max_lifetime": -1}),
                        (ApiKeys.DESCRIBE_DELEGATION_TOKEN, {"owners": None})):
        with RawClient(node.port, timeout=20) as client:
            client.send(api, 2, build_entity(request_schema(api, 2), values))
            assert client.closed_by_broker()
    # the node still serves
    assert int(_describe_acls(node).error_code) == 0
