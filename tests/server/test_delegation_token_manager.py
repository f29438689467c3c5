"""DelegationTokenManager (server/delegation_token_manager.py) against a real ZooKeeper with a
manual clock: the expiry rules a running cluster can only show through waits (an expired
token's renew and expire answers, the expiry check's removal), the disabled manager, the
token znode's JSON and the SCRAM credentials a token gets."""
from __future__ import annotations

import base64
import uuid

import pytest

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.clients.common.security.delegation_token import DelegationToken, TokenInformation
from kafka_py.clients.common.security.scram import ScramFormatter, ScramMechanism, ScramSaslClient, ScramSaslServer
from kafka_py.server.delegation_token_manager import (
    DelegationTokenManager,
    create_hmac,
    filter_token,
    to_json_compatible_map,
    token_information_from_bytes,
)
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.clients.common.utils.time import MockTime
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.utils.json import encode_as_bytes

SECRET = "manager-test-secret"


def _config(connect: str, **extra: str) -> KafkaConfig:
    return KafkaConfig({"broker.id": "0", "zookeeper.connect": connect, "log.dirs": "/nonexistent", **extra},
                       do_log=False)


@pytest.fixture
def env(zookeeper):
    connect = f"{zookeeper.connect_string}/tokens-{uuid.uuid4().hex}"
    zk = KafkaZkClient(connect, session_timeout_ms=6000)
    time = MockTime()
    cache = CredentialCache()
    manager = DelegationTokenManager(_config(connect, **{"delegation.token.master.key": SECRET,
                                                         "delegation.token.max.lifetime.ms": "10000",
                                                         "delegation.token.expiry.time.ms": "4000"}),
                                     cache.token_cache, time, zk)
    manager.startup()
    yield manager, zk, time, cache
    manager.shutdown()
    zk.close()


def test_expired_tokens_answer_expired_until_the_check_removes_them(env) -> None:
    manager, zk, time, cache = env
    created = manager.create_token("User:alice", ["User:bob"], -1)
    assert created.error is Errors.NONE
    assert created.expiry_timestamp - created.issue_timestamp == 4000
    assert created.max_timestamp - created.issue_timestamp == 10000
    # a requested lifetime beyond the maximum is cut to it
    assert manager.create_token("User:alice", [], 60_000).max_timestamp - time.milliseconds() == 10000

    # renewals move the expiry, never beyond the maximum
    time.sleep(3000)
    assert manager.renew_token("User:bob", created.hmac, 100_000) == (Errors.NONE, created.max_timestamp)
    time.sleep(10_000)
    assert manager.renew_token("User:alice", created.hmac, -1) == (Errors.DELEGATION_TOKEN_EXPIRED, -1)
    assert manager.expire_token("User:alice", created.hmac, -1) == (Errors.DELEGATION_TOKEN_EXPIRED, -1)
    # an expired token still in the cache logs in, as in Kafka, until the check removes it
    assert cache.token_credential("SCRAM-SHA-256", created.token_id) is not None

    manager.expire_tokens()
    assert zk.get_delegation_token_info(created.token_id) is None
    assert manager.get_all_token_information() == []
    assert cache.token_credential("SCRAM-SHA-256", created.token_id) is None
    assert manager.renew_token("User:alice", created.hmac, -1) == (Errors.DELEGATION_TOKEN_NOT_FOUND, -1)


def test_a_restarted_manager_loads_the_tokens_from_zookeeper(env, zookeeper) -> None:
    manager, zk, time, _ = env
    created = manager.create_token("User:alice", [], -1)
    again = DelegationTokenManager(manager.config, CredentialCache().token_cache, time, zk)
    again.startup()
    try:
        token = again.get_token(created.token_id)
        assert token is not None and token.hmac == created.hmac
        assert token.token_info.owner == "User:alice"
    finally:
        again.shutdown()


def test_tokens_log_in_as_their_owner_with_either_scram_mechanism(env) -> None:
    manager, _, _, cache = env
    created = manager.create_token("User:alice", [], -1)
    password = base64.b64encode(created.hmac).decode()
    for mechanism in ScramMechanism:
        credential = cache.token_credential(mechanism.mechanism_name, created.token_id)
        # Kafka's derivation: the base64 HMAC as the password, the mechanism's minimum iterations
        assert credential.credential.iterations == mechanism.min_iterations
        formatter = ScramFormatter(mechanism)
        salted = formatter.salted_password(password, credential.credential.salt, mechanism.min_iterations)
        assert formatter.server_key(salted) == credential.credential.server_key
        server = ScramSaslServer(mechanism, lambda user: None,
                                 lambda token_id, m=mechanism: cache.token_credential(m.mechanism_name, token_id))
        client = ScramSaslClient(mechanism, created.token_id, password, {"tokenauth": "true"})
        client.verify_server_final(server.evaluate_response(client.final_message(
            server.evaluate_response(client.first_message()))))
        assert server.complete and server.authorization_id == "alice" and server.token_authenticated


def test_a_manager_without_a_secret_key_is_disabled(zookeeper) -> None:
    config = _config(f"{zookeeper.connect_string}/unused")
    assert not config.token_auth_enabled
    manager = DelegationTokenManager(config, CredentialCache().token_cache, MockTime(), None)
    manager.startup()  # touches no ZooKeeper: the client is None
    assert manager.create_token("User:alice", [], -1).error is Errors.DELEGATION_TOKEN_AUTH_DISABLED
    assert manager.renew_token("User:alice", b"x", -1) == (Errors.DELEGATION_TOKEN_AUTH_DISABLED, -1)
    assert manager.expire_token("User:alice", b"x", -1) == (Errors.DELEGATION_TOKEN_AUTH_DISABLED, -1)
    # an empty key is no key; the 2.8 name wins over its alias
    assert not _config("zk:1", **{"delegation.token.secret.key": ""}).token_auth_enabled
    both = _config("zk:1", **{"delegation.token.secret.key": "a", "delegation.token.master.key": "b"})
    assert both.delegation_token_secret_key.value == "a"


def test_token_json_and_describe_filter() -> None:
    info = TokenInformation("id-1", "User:alice smith", ("User:bob",), 1, 3, 2)
    token = DelegationToken(info, create_hmac("id-1", SECRET.encode()))
    data = encode_as_bytes(to_json_compatible_map(token))
    assert b'"owner":"User%3Aalice%20smith"' in data and b'"renewers":["User%3Abob"]' in data
    assert token_information_from_bytes(data) == info
    assert token_information_from_bytes(b"") is None
    with pytest.raises(ValueError):
        token_information_from_bytes(data.replace(b'"version":1', b'"version":2'))

    def nobody(token_id: str) -> bool:
        return False

    assert filter_token("User:alice smith", None, info, nobody)
    assert filter_token("User:bob", ["User:bob"], info, nobody)
    assert not filter_token("User:carol", None, info, nobody)
    assert filter_token("User:carol", None, info, lambda token_id: token_id == "id-1")
    assert not filter_token("User:carol", ["User:dave"], info, lambda token_id: True)
