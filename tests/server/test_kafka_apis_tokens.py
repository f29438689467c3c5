"""The delegation token handlers of KafkaApis (server/kafka_apis_tokens.py) on their own, at
every version: which connections may send token requests (KafkaApis.allowTokenRequests), the
order of the checks, and a broker without a secret key. Requests are encoded as a client
encodes them and answered through a real RequestChannel (tests/server/test_kafka_apis.py's
stack). Tokens made, renewed and used on a running cluster: tests/security/test_delegation_tokens.py."""
from __future__ import annotations

import pytest

from kafka_py.network.request_channel import ANONYMOUS_PRINCIPAL, CloseConnectionResponse, Request, RequestContext
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.entities import build_entity
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.clients.common.security.kafka_principal import KafkaPrincipal
from kafka_py.server.delegation_token_manager import DelegationTokenManager
from kafka_py.clients.common.utils.time import MockTime
from tests.network.test_request_channel import send_bytes
from tests.server.test_kafka_apis import WAIT_S, Apis

REQUESTS = {
    ApiKeys.CREATE_DELEGATION_TOKEN: {"renewers": [{"principal_type": "User", "principal_name": "bob"}],
                                      "max_lifetime": -1},
    ApiKeys.RENEW_DELEGATION_TOKEN: {"hmac": b"\x01", "renew_period": -1},
    ApiKeys.EXPIRE_DELEGATION_TOKEN: {"hmac": b"\x01", "expiry_time_period": -1},
    ApiKeys.DESCRIBE_DELEGATION_TOKEN: {"owners": None},
}
CASES = [(api, version) for api in REQUESTS for version in (0, 1, 2)]


class TokenApis(Apis):
    def __init__(self, tmp_path) -> None:
        super().__init__(tmp_path)
        # a broker without delegation.token.secret.key: tokens disabled
        self.apis.token_manager = DelegationTokenManager(self.broker.config, CredentialCache().token_cache,
                                                         MockTime(), None)

    def ask(self, api: ApiKeys, version: int, protocol: str, principal: str, values: dict | None = None):
        self._correlation_id += 1
        body = build_entity(request_schema(api, version), REQUESTS[api] if values is None else values)
        header = RequestHeader.for_request(api, version, self._correlation_id, "tokens-test")
        frame = memoryview(bytearray(encode_request(header, body)[4:]))
        context = RequestContext(header, f"127.0.0.1:9093-127.0.0.1:5000-{self._correlation_id}", "127.0.0.1",
                                 listener_name=protocol, security_protocol=protocol, principal=principal)
        request = Request(0, context, 0, frame)
        self.apis.handle(request)
        response = self.collector.responses.get(timeout=WAIT_S)
        if isinstance(response, CloseConnectionResponse):
            return response
        _, decoded = decode_response(send_bytes(response.response_send)[4:], api, version)
        return decoded


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = TokenApis(tmp_path_factory.mktemp("token-apis"))
    yield e
    e.close()


@pytest.mark.parametrize("api, version", CASES, ids=[f"{a.name}-v{v}" for a, v in CASES])
def test_who_may_send_token_requests(env, api, version) -> None:
    refused = [
        ("PLAINTEXT", ANONYMOUS_PRINCIPAL),
        ("SSL", ANONYMOUS_PRINCIPAL),  # one-way TLS
        ("SASL_PLAINTEXT", KafkaPrincipal("User", "alice", token_authenticated=True)),
        ("SASL_SSL", KafkaPrincipal("User", "alice", token_authenticated=True)),
    ]
    for protocol, principal in refused:
        answer = env.ask(api, version, protocol, principal)
        assert Errors.for_code(answer.error_code) is Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, (protocol, principal)
    # a client certificate, or a login with a password: past that check, to the disabled tokens
    for protocol, principal in (("SSL", "User:CN=alice"), ("SASL_PLAINTEXT", KafkaPrincipal("User", "alice"))):
        answer = env.ask(api, version, protocol, principal)
        assert Errors.for_code(answer.error_code) is Errors.DELEGATION_TOKEN_AUTH_DISABLED, (protocol, principal)


def test_the_answers_of_a_refused_or_disabled_request(env) -> None:
    created = env.ask(ApiKeys.CREATE_DELEGATION_TOKEN, 2, "SASL_SSL", "User:alice")
    assert (created.principal_type, created.principal_name, created.token_id, bytes(created.hmac)) == \
        ("User", "alice", "", b"")
    assert [round(t.timestamp() * 1000) for t in (created.issue_timestamp, created.expiry_timestamp,
                                                  created.max_timestamp)] == [-1, -1, -1]
    renewed = env.ask(ApiKeys.RENEW_DELEGATION_TOKEN, 1, "SASL_SSL", "User:alice")
    assert round(renewed.expiry_timestamp.timestamp() * 1000) == -1
    # the renewer types are checked before the tokens are found disabled, as in Kafka
    groups = env.ask(ApiKeys.CREATE_DELEGATION_TOKEN, 0, "SASL_SSL", "User:alice", {
        "renewers": [{"principal_type": "Group", "principal_name": "g"}], "max_lifetime": -1})
    assert Errors.for_code(groups.error_code) is Errors.INVALID_PRINCIPAL_TYPE
    described = env.ask(ApiKeys.DESCRIBE_DELEGATION_TOKEN, 2, "SASL_SSL", "User:alice", {"owners": []})
    assert Errors.for_code(described.error_code) is Errors.DELEGATION_TOKEN_AUTH_DISABLED and described.tokens == ()


def test_without_a_token_manager_the_connection_is_closed(env) -> None:
    manager, env.apis.token_manager = env.apis.token_manager, None
    try:
        for api in REQUESTS:
            assert isinstance(env.ask(api, 2, "SASL_SSL", "User:alice"), CloseConnectionResponse)
    finally:
        env.apis.token_manager = manager
