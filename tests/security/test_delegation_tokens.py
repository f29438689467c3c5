"""Delegation tokens (KIP-48) on a real two-broker ZooKeeper cluster: created, described,
renewed and expired over SASL/SCRAM connections, used to log in (SCRAM with the token id,
its HMAC and the tokenauth extension) through the project's own client, learned by the
second broker through /delegation_token/token_changes, kept over a restart, and removed by
the controller's expiry check. Bad input gets Kafka's error codes; plaintext and token
logins are refused token requests. kafka-python has no SCRAM extensions, so token logins go
through kafka_py's NetworkClient (what bin/kafka-delegation-tokens.sh uses).

No timing is asserted; every wait is bounded.
"""
from __future__ import annotations

import base64
import hashlib
import hmac as hmac_lib
import json
import subprocess
import uuid
from dataclasses import dataclass

import pytest
from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.security.scram import ScramFormatter, ScramMechanism, ScramSaslClient
from kafka_py.core.utils.command_line_utils import AdminTarget, CommandError
from tests.integration.broker_harness import (
    ROOT,
    BrokerProcess,
    RawClient,
    free_port,
    read_znode,
    unique_chroot,
    wait_until,
)
from tests.integration.kraft_harness import listener_overrides

SECRET = "kafka-py-token-secret"
PASSWORDS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
MECHANISM = "SCRAM-SHA-256"


@dataclass
class TokenCluster:
    brokers: list[BrokerProcess]
    sasl_ports: list[int]
    alice_topic: str

    def sasl(self, index: int) -> str:
        return f"127.0.0.1:{self.sasl_ports[index]}"


def _props(user: str, password: str, tokenauth: bool = False) -> dict[str, str]:
    extra = ' tokenauth="true"' if tokenauth else ""
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": MECHANISM,
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                f'username="{user}" password="{password}"{extra};'}


def _send(address: str, props: dict[str, str], api: ApiKeys, values: dict, version: int = 2):
    return AdminTarget(address, props).send("token-test", api, version,
                                            build_entity(request_schema(api, version), values))


def _user(cluster: TokenCluster, name: str, index: int = 0):
    return lambda api, values, version=2: _send(cluster.sasl(index), _props(name, PASSWORDS[name]), api, values,
                                                version)


def _create(cluster: TokenCluster, owner: str, renewers=(), max_lifetime: int = -1, index: int = 0):
    response = _user(cluster, owner, index)(ApiKeys.CREATE_DELEGATION_TOKEN, {
        "renewers": [{"principal_type": "User", "principal_name": r} for r in renewers],
        "max_lifetime": max_lifetime})
    assert Errors.for_code(response.error_code) is Errors.NONE
    return response


def _b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _token_login(cluster: TokenCluster, index: int, token_id: str, hmac: bytes):
    """A request over a connection that logged in with the token: Metadata of alice's topic."""
    return _send(cluster.sasl(index), _props(token_id, _b64(hmac), tokenauth=True), ApiKeys.METADATA,
                 {"topics": [{"name": cluster.alice_topic}], "allow_auto_topic_creation": False,
                  "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False},
                 version=9)


def _topic_error(cluster: TokenCluster, index: int, token_id: str, hmac: bytes) -> Errors | None:
    """What a token login is told of alice's topic; None when the login is refused (a broker
    learns of a token created through another one a moment later)."""
    try:
        return Errors.for_code(_token_login(cluster, index, token_id, hmac).topics[0].error_code)
    except CommandError as e:
        assert "Authentication failed" in str(e), e
        return None


def _login_refused(cluster: TokenCluster, index: int, token_id: str, password: str) -> bool:
    try:
        _send(cluster.sasl(index), _props(token_id, password, tokenauth=True), ApiKeys.METADATA,
              {"topics": [], "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
               "include_topic_authorized_operations": False}, version=9)
    except CommandError as e:
        assert "Authentication failed" in str(e), e
        return True
    return False


def _describe(cluster: TokenCluster, user: str, owners=None, index: int = 0):
    response = _user(cluster, user, index)(ApiKeys.DESCRIBE_DELEGATION_TOKEN, {
        "owners": None if owners is None else [{"principal_type": "User", "principal_name": o} for o in owners]})
    assert Errors.for_code(response.error_code) is Errors.NONE
    return {t.token_id: t for t in response.tokens}


def _renew(cluster: TokenCluster, user: str, hmac: bytes, period: int = -1, index: int = 0):
    response = _user(cluster, user, index)(ApiKeys.RENEW_DELEGATION_TOKEN, {"hmac": hmac, "renew_period": period})
    return Errors.for_code(response.error_code), response


def _expire(cluster: TokenCluster, user: str, hmac: bytes, period: int = -1, index: int = 0):
    response = _user(cluster, user, index)(ApiKeys.EXPIRE_DELEGATION_TOKEN,
                                           {"hmac": hmac, "expiry_time_period": period})
    return Errors.for_code(response.error_code), response


def _token_znode(cluster: TokenCluster, token_id: str) -> bytes | None:
    zk = cluster.brokers[0].zk()
    try:
        found = read_znode(zk, f"/delegation_token/tokens/{token_id}")
        return None if found is None else found[0]
    finally:
        zk.stop()
        zk.close()


def _plaintext(broker: BrokerProcess, api: ApiKeys, values: dict, version: int = 2):
    with RawClient(broker.port) as client:
        return client.request(api, version, build_entity(request_schema(api, version), values))


@pytest.fixture(scope="module")
def token_cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot()
    brokers, sasl_ports = [], []
    for broker_id in (0, 1):
        broker = BrokerProcess(tmp_path_factory.mktemp(f"token-broker{broker_id}"), zookeeper.connect_string,
                               chroot, broker_id)
        port = free_port()
        sasl_ports.append(port)
        broker.overrides.update(listener_overrides(broker, {"SASL_PLAINTEXT": ("SASL_PLAINTEXT", port)}))
        broker.overrides.update({
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "connection.failed.authentication.delay.ms": "50",
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            # the brokers talk to each other (and the tests administer) over PLAINTEXT
            "super.users": "User:ANONYMOUS",
            # the expiry check runs often, so an expired token goes within the test's wait
            "delegation.token.expiry.check.interval.ms": "500",
        })
        # Kafka 2.8's name on one broker, its deprecated alias on the other: the same key
        broker.overrides["delegation.token.secret.key" if broker_id == 0 else "delegation.token.master.key"] = SECRET
        broker.write_config()
        brokers.append(broker)
    for broker in brokers:
        broker.start(wait=False)
    for broker in brokers:
        broker.wait_started()
    topic = f"alice-{uuid.uuid4().hex[:8]}"
    _setup_users_and_acls(brokers, topic)
    yield TokenCluster(brokers, sasl_ports, topic)
    for broker in brokers:
        if broker.running:
            assert broker.stop() == 0, broker.tail()


def _setup_users_and_acls(brokers: list[BrokerProcess], topic: str) -> None:
    broker = brokers[0]
    formatter = ScramFormatter(ScramMechanism.SCRAM_SHA_256)
    upsertions = []
    for user, password in PASSWORDS.items():
        salt = uuid.uuid4().bytes
        upsertions.append({"name": user, "mechanism": 1, "iterations": 4096, "salt": salt,
                           "salted_password": formatter.salted_password(password, salt, 4096)})
    altered = _plaintext(broker, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, {"deletions": [], "upsertions": upsertions},
                         version=0)
    assert all(r.error_code == 0 for r in altered.results), altered
    outcome: list[Errors] = []

    def created_on_the_controller() -> bool:
        for candidate in brokers:
            created = _plaintext(candidate, ApiKeys.CREATE_TOPICS, {
                "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 2, "assignments": [],
                            "configs": []}], "timeout": 30000, "validate_only": False}, version=5)
            outcome.append(Errors.for_code(created.topics[0].error_code))
            if outcome[-1] is not Errors.NOT_CONTROLLER:
                return True
        return False

    wait_until(created_on_the_controller, 60, "no controller took the CreateTopics")
    assert outcome[-1] is Errors.NONE, outcome
    # alice alone may see her topic
    acls = _plaintext(broker, ApiKeys.CREATE_ACLS, {"creations": [{
        "resource_type": 2, "resource_name": topic, "resource_pattern_type": 3, "principal": "User:alice",
        "host": "*", "operation": 8, "permission_type": 3}]})
    assert acls.results[0].error_code == 0, acls


def _wait_logins(cluster: TokenCluster) -> None:
    """Until every user logs in on both brokers (the credentials arrive through /config/changes)."""
    for index in (0, 1):
        for user in PASSWORDS:
            def accepted() -> bool:
                try:
                    _describe(cluster, user, index=index)
                    return True
                except CommandError:
                    return False
            wait_until(accepted, 60, f"{user} cannot log in on broker {index}")


@pytest.fixture(scope="module")
def cluster(token_cluster) -> TokenCluster:
    _wait_logins(token_cluster)
    return token_cluster


# ---- creating, describing and logging in ----------------------------------------------------

def test_token_created_on_one_broker_logs_in_as_its_owner_on_both(cluster) -> None:
    created = _create(cluster, "alice", renewers=["bob"])
    assert (created.principal_type, created.principal_name) == ("User", "alice")
    # the HMAC is HmacSHA512 of the token id keyed by the secret (the second broker derives it alike)
    assert bytes(created.hmac) == hmac_lib.new(SECRET.encode(), created.token_id.encode(), hashlib.sha512).digest()

    # ZooKeeper holds Kafka's JSON, never the HMAC
    data = _token_znode(cluster, created.token_id)
    stored = json.loads(data)
    assert stored == {"version": 1, "owner": "User%3Aalice", "renewers": ["User%3Abob"],
                      "issueTimestamp": stored["issueTimestamp"], "maxTimestamp": stored["maxTimestamp"],
                      "expiryTimestamp": stored["expiryTimestamp"], "tokenId": created.token_id}
    assert stored["issueTimestamp"] < stored["expiryTimestamp"] <= stored["maxTimestamp"]
    assert _b64(created.hmac) not in data.decode()

    # alice's token logs in as alice on either broker: her topic is visible to it, not to bob
    for index in (0, 1):
        wait_until(lambda: _topic_error(cluster, index, created.token_id, created.hmac) is Errors.NONE, 60,
                   f"the token does not log in as alice on broker {index}")
    bobs = _create(cluster, "bob")
    wait_until(lambda: _topic_error(cluster, 1, bobs.token_id, bobs.hmac) is Errors.TOPIC_AUTHORIZATION_FAILED, 60,
               "bob's token never logged in on the second broker")

    # the owner and the renewer see the token; describing by owner filters
    assert created.token_id in _describe(cluster, "alice")
    described = _describe(cluster, "bob", index=1)
    token = described[created.token_id]
    assert (token.principal_type, token.principal_name, bytes(token.hmac)) == ("User", "alice", bytes(created.hmac))
    assert [(r.principal_type, r.principal_name) for r in token.renewers] == [("User", "bob")]
    # an owner filter matches owners and renewers alike
    assert created.token_id in _describe(cluster, "bob", owners=["bob"])
    assert created.token_id not in _describe(cluster, "alice", owners=["carol"])
    assert _describe(cluster, "alice", owners=[]) == {}


def test_a_token_login_may_not_manage_tokens(cluster) -> None:
    created = _create(cluster, "alice")
    before = _describe(cluster, "alice")[created.token_id]
    props = _props(created.token_id, _b64(created.hmac), tokenauth=True)
    wait_until(lambda: _topic_error(cluster, 0, created.token_id, created.hmac) is Errors.NONE, 60, "no token login")
    answers = [
        _send(cluster.sasl(0), props, ApiKeys.CREATE_DELEGATION_TOKEN, {"renewers": [], "max_lifetime": -1}),
        _send(cluster.sasl(0), props, ApiKeys.RENEW_DELEGATION_TOKEN, {"hmac": created.hmac, "renew_period": -1}),
        _send(cluster.sasl(0), props, ApiKeys.EXPIRE_DELEGATION_TOKEN,
              {"hmac": created.hmac, "expiry_time_period": -1}),
        _send(cluster.sasl(0), props, ApiKeys.DESCRIBE_DELEGATION_TOKEN, {"owners": None}),
    ]
    assert [Errors.for_code(a.error_code) for a in answers] == [Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED] * 4
    assert answers[0].token_id == "" and bytes(answers[0].hmac) == b""
    # the token is still there, neither renewed nor expired
    assert _describe(cluster, "alice")[created.token_id].expiry_timestamp == before.expiry_timestamp


def test_plaintext_is_refused_every_token_request_at_every_version(cluster) -> None:
    broker = cluster.brokers[0]
    for version in (0, 1, 2):
        answers = [
            _plaintext(broker, ApiKeys.CREATE_DELEGATION_TOKEN, {"renewers": [], "max_lifetime": -1}, version),
            _plaintext(broker, ApiKeys.RENEW_DELEGATION_TOKEN, {"hmac": b"x", "renew_period": -1}, version),
            _plaintext(broker, ApiKeys.EXPIRE_DELEGATION_TOKEN, {"hmac": b"x", "expiry_time_period": -1}, version),
            _plaintext(broker, ApiKeys.DESCRIBE_DELEGATION_TOKEN, {"owners": None}, version),
        ]
        assert [Errors.for_code(a.error_code) for a in answers] == [Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED] * 4
        # the principal of a refused create is the connection's own
        assert (answers[0].principal_type, answers[0].principal_name) == ("User", "ANONYMOUS")


def test_renew_and_expire_follow_owner_and_renewers(cluster) -> None:
    created = _create(cluster, "alice", renewers=["bob"], max_lifetime=3_600_000)
    before = _describe(cluster, "alice")[created.token_id]
    wait_until(lambda: created.token_id in _describe(cluster, "bob", index=1), 60,
               "the second broker never learned of the token")

    error, renewed = _renew(cluster, "bob", created.hmac, period=1_800_000, index=1)
    assert error is Errors.NONE
    expiry = int(renewed.expiry_timestamp.timestamp() * 1000)
    assert int(before.issue_timestamp) < expiry <= int(before.max_timestamp)
    wait_until(lambda: int(_describe(cluster, "alice")[created.token_id].expiry_timestamp) == expiry, 60,
               "the renewal did not reach the first broker")

    assert _renew(cluster, "carol", created.hmac)[0] is Errors.DELEGATION_TOKEN_OWNER_MISMATCH
    assert _expire(cluster, "carol", created.hmac)[0] is Errors.DELEGATION_TOKEN_OWNER_MISMATCH
    unknown = hmac_lib.new(SECRET.encode(), b"no-such-token", hashlib.sha512).digest()
    assert _renew(cluster, "alice", unknown)[0] is Errors.DELEGATION_TOKEN_NOT_FOUND
    assert _expire(cluster, "alice", b"\x00")[0] is Errors.DELEGATION_TOKEN_NOT_FOUND
    # none of that changed the token
    assert int(_describe(cluster, "alice")[created.token_id].expiry_timestamp) == expiry

    # a positive expiry period moves the expiry; -1 removes the token everywhere at once
    error, expired = _expire(cluster, "alice", created.hmac, period=600_000)
    assert error is Errors.NONE and int(expired.expiry_timestamp.timestamp() * 1000) < expiry
    wait_until(lambda: _topic_error(cluster, 1, created.token_id, created.hmac) is Errors.NONE, 60, "no token login")
    assert _expire(cluster, "alice", created.hmac)[0] is Errors.NONE
    assert created.token_id not in _describe(cluster, "alice")
    assert _renew(cluster, "alice", created.hmac)[0] is Errors.DELEGATION_TOKEN_NOT_FOUND
    for index in (0, 1):
        wait_until(lambda: _login_refused(cluster, index, created.token_id, _b64(created.hmac)), 60,
                   f"an expired token still logs in on broker {index}")


def test_older_versions_create_describe_renew_and_expire(cluster) -> None:
    alice = _user(cluster, "alice")
    created = {version: alice(ApiKeys.CREATE_DELEGATION_TOKEN, {"renewers": [], "max_lifetime": 600_000},
                              version=version) for version in (0, 1)}
    assert all(Errors.for_code(c.error_code) is Errors.NONE for c in created.values())
    for version in (0, 1):
        described = alice(ApiKeys.DESCRIBE_DELEGATION_TOKEN, {"owners": None}, version=version)
        tokens = {t.token_id: t for t in described.tokens}
        assert {c.token_id for c in created.values()} <= set(tokens)
        assert all(bytes(tokens[c.token_id].hmac) == bytes(c.hmac) for c in created.values())
    renewed = alice(ApiKeys.RENEW_DELEGATION_TOKEN, {"hmac": created[0].hmac, "renew_period": 1000}, version=0)
    assert Errors.for_code(renewed.error_code) is Errors.NONE
    assert renewed.expiry_timestamp < created[0].expiry_timestamp
    expired = alice(ApiKeys.EXPIRE_DELEGATION_TOKEN, {"hmac": created[1].hmac, "expiry_time_period": -1}, version=1)
    assert Errors.for_code(expired.error_code) is Errors.NONE
    assert created[1].token_id not in _describe(cluster, "alice")


def test_describing_others_tokens_needs_describe_on_the_token(cluster) -> None:
    created = _create(cluster, "alice")
    assert created.token_id not in _describe(cluster, "carol")
    acls = _plaintext(cluster.brokers[0], ApiKeys.CREATE_ACLS, {"creations": [{
        "resource_type": 6, "resource_name": created.token_id, "resource_pattern_type": 3,
        "principal": "User:carol", "host": "*", "operation": 8, "permission_type": 3}]})
    assert acls.results[0].error_code == 0
    wait_until(lambda: created.token_id in _describe(cluster, "carol"), 60, "the DelegationToken ACL had no effect")
    # only that token: carol asked for alice's tokens and sees just the one she may describe
    assert set(_describe(cluster, "carol", owners=["alice"])) == {created.token_id}


def test_wrong_hmac_unknown_token_and_renewer_types_are_refused(cluster) -> None:
    created = _create(cluster, "alice")
    wait_until(lambda: _topic_error(cluster, 1, created.token_id, created.hmac) is Errors.NONE, 60, "no token login")
    wrong = hmac_lib.new(b"another-secret", created.token_id.encode(), hashlib.sha512).digest()
    assert _login_refused(cluster, 1, created.token_id, _b64(wrong))
    assert _login_refused(cluster, 1, "no-such-token", _b64(created.hmac))
    # the token id is not a user: without tokenauth it is an unknown user
    try:
        _send(cluster.sasl(1), _props(created.token_id, _b64(created.hmac)), ApiKeys.METADATA,
              {"topics": [], "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
               "include_topic_authorized_operations": False}, version=9)
        raise AssertionError("a token logged in as a user")
    except CommandError as e:
        assert "Authentication failed" in str(e)
    response = _user(cluster, "alice")(ApiKeys.CREATE_DELEGATION_TOKEN, {
        "renewers": [{"principal_type": "Group", "principal_name": "admins"}], "max_lifetime": -1})
    assert Errors.for_code(response.error_code) is Errors.INVALID_PRINCIPAL_TYPE
    assert response.token_id == ""
    # the good token still works on both brokers
    for index in (0, 1):
        assert _topic_error(cluster, index, created.token_id, created.hmac) is Errors.NONE


def test_raw_scram_exchange_with_tokenauth(cluster) -> None:
    """The SCRAM exchange itself, frame by frame: the client-first message carries tokenauth=true."""
    created = _create(cluster, "alice")
    wait_until(lambda: _topic_error(cluster, 0, created.token_id, created.hmac) is Errors.NONE, 60, "no token login")
    client = ScramSaslClient(ScramMechanism.SCRAM_SHA_512, created.token_id, _b64(created.hmac),
                             {"tokenauth": "true"})
    with RawClient(cluster.sasl_ports[0]) as raw:
        handshake = raw.request(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
        assert handshake.error_code == 0
        first = client.first_message()
        assert b",tokenauth=true" in first
        server_first = raw.request(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=first))
        assert server_first.error_code == 0
        final = raw.request(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(
            auth_bytes=client.final_message(bytes(server_first.auth_bytes))))
        assert final.error_code == 0
        client.verify_server_final(bytes(final.auth_bytes))
        # logged in as a token: token requests are refused on this connection
        answer = raw.request(ApiKeys.DESCRIBE_DELEGATION_TOKEN, 2,
                             build_entity(request_schema(ApiKeys.DESCRIBE_DELEGATION_TOKEN, 2), {"owners": None}))
        assert Errors.for_code(answer.error_code) is Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_expired_tokens_are_removed_by_the_controller(cluster) -> None:
    created = _create(cluster, "alice", max_lifetime=1000)
    wait_until(lambda: _token_znode(cluster, created.token_id) is None, 60, "the expired token was never removed")
    wait_until(lambda: created.token_id not in _describe(cluster, "alice", index=1), 60,
               "the second broker still lists the removed token")
    wait_until(lambda: _login_refused(cluster, 1, created.token_id, _b64(created.hmac)), 60,
               "a removed token still logs in")
    assert _renew(cluster, "alice", created.hmac, index=1)[0] is Errors.DELEGATION_TOKEN_NOT_FOUND


def test_tokens_survive_a_broker_restart(cluster) -> None:
    created = _create(cluster, "alice")
    broker = cluster.brokers[1]
    assert broker.stop() == 0, broker.tail()
    broker.restart()
    wait_until(lambda: _topic_error(cluster, 1, created.token_id, created.hmac) is Errors.NONE, 60,
               "the token does not log in after the restart")
    assert created.token_id in _describe(cluster, "alice", index=1)


# ---- bin/kafka-delegation-tokens.sh ---------------------------------------------------------

def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-delegation-tokens.sh"), *args], capture_output=True,
                          text=True, timeout=120)


def test_kafka_delegation_tokens_sh(cluster, tmp_path) -> None:
    configs = {}
    for user in ("alice", "bob"):
        path = tmp_path / f"{user}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in _props(user, PASSWORDS[user]).items()))
        configs[user] = str(path)
    common = ("--bootstrap-server", cluster.sasl(0))

    created = _tool(*common, "--command-config", configs["alice"], "--create", "--max-life-time-period", "-1",
                    "--renewer-principal", "User:bob")
    assert created.returncode == 0, created.stderr
    lines = created.stdout.splitlines()
    assert lines[0] == "Calling create token operation with renewers :[User:bob] , max-life-time-period :-1"
    assert lines[1].startswith("Created delegation token with tokenId : ")
    token_id = lines[1].rsplit(" ", 1)[1]
    assert lines[2] == ""
    assert lines[3].split() == ["TOKENID", "HMAC", "OWNER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE"]
    row = lines[4].split()
    assert row[0] == token_id and row[2:4] == ["User:alice", "[User:bob]"]
    hmac = row[1]
    assert base64.b64decode(hmac) == hmac_lib.new(SECRET.encode(), token_id.encode(), hashlib.sha512).digest()

    described = _tool(*common, "--command-config", configs["bob"], "--describe", "--owner-principal", "User:alice")
    assert described.returncode == 0, described.stderr
    assert "Calling describe token operation for owners :[User:alice]" in described.stdout
    assert any(line.split()[:2] == [token_id, hmac] for line in described.stdout.splitlines() if line.strip())

    renewed = _tool(*common, "--command-config", configs["bob"], "--renew", "--hmac", hmac,
                    "--renew-time-period", "-1")
    assert renewed.returncode == 0, renewed.stderr
    assert renewed.stdout.splitlines()[-1].startswith("Completed renew operation. New expiry date : ")

    expired = _tool(*common, "--command-config", configs["alice"], "--expire", "--hmac", hmac,
                    "--expiry-time-period", "-1")
    assert expired.returncode == 0, expired.stderr
    again = _tool(*common, "--command-config", configs["alice"], "--expire", "--hmac", hmac,
                  "--expiry-time-period", "-1")
    assert again.returncode == 1
    assert again.stdout.splitlines()[-1] == ("Error while executing delegation token command : "
                                             "Delegation Token is not found on server.")
