"""SASL/OAUTHBEARER without sockets: the client first message of RFC 7628, the unsecured JWS
validator's checks and Kafka's answers to each, the login that writes tokens, the broker's
client side through the server's state machine, and the session bounded by the token's expiry."""
from __future__ import annotations

import base64
import json

import pytest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.clients.common.security.errors import AuthenticationException, SaslAuthenticationException, SaslException
from kafka_py.clients.common.security.jaas_config import parse_jaas_config
from kafka_py.clients.common.security.oauthbearer import (
    OAuthBearerClientInitialResponse,
    OAuthBearerLogin,
    OAuthBearerSaslClient,
    OAuthBearerSaslServer,
    load_class,
    new_validator_callback_handler,
)
from kafka_py.clients.common.security.oauthbearer_unsecured import (
    OAuthBearerConfigException,
    OAuthBearerUnsecuredJws,
    OAuthBearerUnsecuredLoginCallbackHandler,
    OAuthBearerUnsecuredValidatorCallbackHandler,
)
from kafka_py.clients.common.security.sasl_client_authenticator import SaslClientAuthenticator
from kafka_py.clients.common.security.sasl_server_authenticator import SaslServerAuthenticator
from kafka_py.clients.common.utils.time import MockTime

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def _b64(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def jws(claims: dict, header: dict | None = None, signature: str = "") -> str:
    return f"{_b64(header or {'alg': 'none'})}.{_b64(claims)}.{signature}"


def first_message(token: str, extensions: str = "", authzid: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}{extensions}\x01\x01".encode()


def _validator(options: str = "", time: MockTime | None = None):
    handler = OAuthBearerUnsecuredValidatorCallbackHandler(time or MockTime())
    handler.configure({}, "OAUTHBEARER", parse_jaas_config(f"{MODULE} required {options};"))
    return handler


def _refusal(server: OAuthBearerSaslServer, message: bytes) -> tuple[str, str]:
    """(the JSON answer, the failure's message after the client's %x01)."""
    answer = server.evaluate_response(message)
    assert answer and not server.complete
    with pytest.raises(SaslAuthenticationException) as failure:
        server.evaluate_response(b"\x01")
    return answer.decode(), str(failure.value)


def test_a_valid_token_authenticates_with_its_extensions_and_expiry() -> None:
    clock = MockTime(current_time_ms=1_700_000_000_000)
    now = clock.milliseconds() / 1000
    server = OAuthBearerSaslServer(_validator(time=clock))
    token = jws({"sub": "alice", "iat": now, "exp": now + 60, "scope": "read"})
    assert server.evaluate_response(first_message(token, "\x01traceId=abc\x01tenant=a b")) == b""
    assert server.complete and server.authorization_id == "alice"
    assert server.credential_expiration_ms == clock.milliseconds() + 60_000
    assert server.extensions == {"traceId": "abc", "tenant": "a b"}
    assert server.token.scope == frozenset({"read"}) and server.token.start_time_ms == clock.milliseconds()


@pytest.mark.parametrize("claims, header, signature", [
    ({"sub": "alice", "exp": -60.0}, None, ""),                              # expired
    ({"sub": "alice"}, None, ""),                                              # no exp
    ({"sub": "alice", "exp": "soon"}, None, ""),                               # exp not a number
    ({"exp": 4e9}, None, ""),                                                  # no subject
    ({"sub": 42, "exp": 4e9}, None, ""),                                       # subject not a string
    ({"sub": "  ", "exp": 4e9}, None, ""),                                     # blank subject
    ({"sub": "alice", "exp": 4e9, "iat": 3.9e9}, None, ""),                    # issued in the future
    ({"sub": "alice", "exp": 1e9, "iat": 1.1e9}, None, ""),                    # expires before it was issued
    ({"sub": "alice", "exp": 4e9}, {"alg": "HS256"}, ""),                      # signed
    ({"sub": "alice", "exp": 4e9}, {"typ": "JWT"}, ""),                        # no algorithm
    ({"sub": "alice", "exp": 4e9}, None, "c2ln"),                              # a signature
])
def test_a_bad_claim_set_is_an_invalid_token(claims, header, signature) -> None:
    clock = MockTime(current_time_ms=2_000_000_000_000)
    if claims.get("exp") == -60.0:
        claims = dict(claims, exp=clock.milliseconds() / 1000 - 60)
    server = OAuthBearerSaslServer(_validator(time=clock))
    assert _refusal(server, first_message(jws(claims, header, signature))) == \
        ('{"status":"invalid_token"}', '{"status":"invalid_token"}')


@pytest.mark.parametrize("token", ["abc", "a.b", "a..b", "a.e30.", "e30.bm90IGpzb24.", "W10.W10.", "bnVsbA.bnVsbA."])
def test_a_malformed_compact_serialization_is_an_invalid_token(token) -> None:
    server = OAuthBearerSaslServer(_validator())
    answer, _ = _refusal(server, first_message(token))
    assert answer == '{"status":"invalid_token"}'


def test_clock_skew_and_the_required_scope() -> None:
    clock = MockTime(current_time_ms=2_000_000_000_000)
    now = clock.milliseconds() / 1000
    lenient = _validator('unsecuredValidatorAllowableClockSkewMs="5000" unsecuredValidatorRequiredScope="read write"',
                         clock)
    # expired 2 s ago and issued 2 s ahead: within the 5 s of skew
    ok = OAuthBearerSaslServer(lenient)
    assert ok.evaluate_response(first_message(jws({"sub": "a", "iat": now + 2, "exp": now - 2 + 10,
                                                   "scope": ["write", "read", "x"]}))) == b""
    late = OAuthBearerSaslServer(lenient)
    assert _refusal(late, first_message(jws({"sub": "a", "exp": now - 6, "scope": ["read", "write"]})))[0] \
        == '{"status":"invalid_token"}'
    narrow = OAuthBearerSaslServer(lenient)
    assert _refusal(narrow, first_message(jws({"sub": "a", "exp": now + 60, "scope": "read"}))) == \
        ('{"status":"insufficient_scope", "scope":"[read, write]"}',) * 2
    renamed = _validator('unsecuredValidatorPrincipalClaimName="client_id" unsecuredValidatorScopeClaimName="scp" '
                         'unsecuredValidatorRequiredScope="read"', clock)
    server = OAuthBearerSaslServer(renamed)
    assert server.evaluate_response(first_message(jws({"client_id": "svc", "exp": now + 9, "scp": ["read"]}))) == b""
    assert server.authorization_id == "svc"
    with pytest.raises(OAuthBearerConfigException):
        _validator('unsecuredValidatorAllowableClockSkewMs="-1"')
    with pytest.raises(OAuthBearerConfigException):
        _validator('unsecuredValidatorRequiredScope="a\\"b"')


@pytest.mark.parametrize("message", [
    b"", b"\x01", b"\x00\xff\xfe garbage", b"n,,auth=Bearer abc", b"y,,\x01auth=Bearer abc\x01\x01",
    b"n,,\x01auth=Basic abc\x01\x01", b"n,,\x01auth=Bearer\x01\x01", b"n,,\x01traceId=x\x01\x01",
    b"n,,\x01auth=Bearer a\x01bad-key=x\x01\x01", b"n,,\x01auth=Bearer a\x01k=\x7f\x01\x01",
])
def test_a_message_that_does_not_parse_is_a_sasl_exception(message) -> None:
    with pytest.raises(SaslException):
        OAuthBearerSaslServer(_validator()).evaluate_response(message)


def test_the_authorization_id_must_be_the_subject() -> None:
    server = OAuthBearerSaslServer(_validator())
    with pytest.raises(SaslAuthenticationException, match="different from the token's principal name"):
        server.evaluate_response(first_message(jws({"sub": "alice", "exp": 4e9}), authzid="bob"))
    same = OAuthBearerSaslServer(_validator())
    assert same.evaluate_response(first_message(jws({"sub": "alice", "exp": 4e9}), authzid="alice")) == b""
    parsed = OAuthBearerClientInitialResponse.parse(first_message("t0k.en.", "\x01a=b=c", "alice"))
    assert (parsed.token_value, parsed.authorization_id, parsed.extensions) == ("t0k.en.", "alice", {"a": "b=c"})
    assert OAuthBearerClientInitialResponse.parse(parsed.to_bytes()).extensions == {"a": "b=c"}


def test_a_validator_by_dotted_path() -> None:
    entries = parse_jaas_config(f'{MODULE} required acceptedSubject="alice";')
    handler = new_validator_callback_handler(
        "tests.security.oauth_callback_handlers.SingleSubjectValidatorCallbackHandler", {}, entries)
    assert OAuthBearerSaslServer(handler).evaluate_response(first_message(jws({"sub": "alice", "exp": 4e9}))) == b""
    assert _refusal(OAuthBearerSaslServer(handler), first_message(jws({"sub": "bob", "exp": 4e9})))[0] == \
        '{"status":"invalid_token"}'
    with pytest.raises(SaslAuthenticationException, match="1 extensions are invalid! They are: tenant: unknown"):
        OAuthBearerSaslServer(handler).evaluate_response(
            first_message(jws({"sub": "alice", "exp": 4e9}), "\x01tenant=red"))
    for path in ("nodots", "tests.security.no_such_module.X", "tests.security.oauth_callback_handlers.Nope"):
        with pytest.raises(ValueError):
            load_class(path)


def test_the_unsecured_login_writes_what_the_validator_accepts() -> None:
    clock = MockTime(current_time_ms=1_800_000_000_500)
    handler = OAuthBearerUnsecuredLoginCallbackHandler(clock)
    handler.configure({}, "OAUTHBEARER", parse_jaas_config(
        f'{MODULE} required unsecuredLoginStringClaim_sub="broker" unsecuredLoginLifetimeSeconds="30" '
        f'unsecuredLoginListClaim_scope=",read,write" unsecuredLoginNumberClaim_level="3" '
        f'unsecuredLoginExtension_traceId="t1";'))
    token = handler.token()
    assert token.principal_name == "broker" and token.scope == frozenset({"read", "write"})
    assert token.lifetime_ms == clock.milliseconds() + 30_000 and token.start_time_ms == clock.milliseconds()
    assert token.claims["level"] == 3.0 and handler.extensions() == {"traceId": "t1"}
    assert isinstance(OAuthBearerUnsecuredJws(token.value, "sub", "scope"), OAuthBearerUnsecuredJws)
    for bad in ('unsecuredLoginStringClaim_exp="1"', 'unsecuredLoginLifetimeSeconds="soon"',
                'unsecuredLoginExtension_x="1"', 'unsecuredLoginStringClaim_name="no subject"'):
        broken = OAuthBearerUnsecuredLoginCallbackHandler(clock)
        broken.configure({}, "OAUTHBEARER", parse_jaas_config(f"{MODULE} required {bad};"))
        with pytest.raises(OAuthBearerConfigException):
            broken.token()

    # The login keeps its token until 80-85 % of its lifetime, then takes a new one.
    login = OAuthBearerLogin(handler, time=clock)
    first = login.token()
    clock.advance(20_000)
    assert login.token() is first
    clock.advance(6_000)
    assert login.token() is not first


def _frame(api: ApiKeys, version: int, body) -> bytes:
    return encode_request(RequestHeader(api, version, 7, "c", api.request_header_version(version)), body)[4:]


def test_the_broker_client_side_through_the_server_state_machine_and_the_session_bound() -> None:
    clock = MockTime(current_time_ms=1_800_000_000_000)
    login_handler = OAuthBearerUnsecuredLoginCallbackHandler(clock)
    login_handler.configure({}, "OAUTHBEARER", parse_jaas_config(
        f'{MODULE} required unsecuredLoginStringClaim_sub="broker" unsecuredLoginLifetimeSeconds="10";'))
    login = OAuthBearerLogin(login_handler, time=clock)
    validator = _validator('unsecuredValidatorRequiredScope="replicate"', clock)

    def server(max_reauth_ms):
        return SaslServerAuthenticator(["OAUTHBEARER"], lambda m: OAuthBearerSaslServer(validator), "c",
                                       {"OAUTHBEARER": max_reauth_ms}, clock)

    def run(authenticator: SaslServerAuthenticator) -> int:
        def exchange(api, version, body):
            step = authenticator.handle_frame(_frame(api, version, body))
            return decode_response(step.response[4:], api, version)[1]
        return SaslClientAuthenticator("OAUTHBEARER", None, None, login=login).authenticate(exchange)

    # the required scope is missing: refused with the JSON after the client's %x01
    with pytest.raises(AuthenticationException, match='"status":"insufficient_scope"'):
        run(server(60_000))
    validator = _validator("", clock)
    # the session ends with the token (10 s), not after connections.max.reauth.ms (60 s) ...
    bounded = server(60_000)
    assert run(bounded) == 10_000 and bounded.principal == "User:broker"
    # ... nor at all when sessions do not end (connections.max.reauth.ms 0), as in Kafka
    assert run(server(0)) == 0
    shorter = server(4_000)
    assert run(shorter) == 4_000

    # garbage: SASL_AUTHENTICATION_FAILED with Kafka's fixed message
    garbage = server(0)
    garbage.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="OAUTHBEARER")))
    step = garbage.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, 2,
                                       request_schema(ApiKeys.SASL_AUTHENTICATE, 2)(auth_bytes=b"\xff\x00junk")))
    answer = decode_response(step.response[4:], ApiKeys.SASL_AUTHENTICATE, 2)[1]
    assert Errors.for_code(int(answer.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == ("Authentication failed during authentication due to invalid credentials "
                                    "with SASL mechanism OAUTHBEARER")
    assert step.failure is not None


def test_the_client_acknowledges_an_error_with_control_a() -> None:
    handler = OAuthBearerUnsecuredLoginCallbackHandler()
    handler.configure({}, "OAUTHBEARER", parse_jaas_config(f'{MODULE} required unsecuredLoginStringClaim_sub="x";'))
    client = OAuthBearerSaslClient(OAuthBearerLogin(handler))
    assert client.evaluate_challenge(None).startswith(b"n,,\x01auth=Bearer ")
    assert client.evaluate_challenge(b'{"status":"invalid_token"}') == b"\x01"
    assert not client.complete


def _startup_error(**props: str):
    from kafka_py.network.socket_server import SocketServer
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.clients.common.config.config_def import ConfigException

    server = SocketServer(KafkaConfig({"zookeeper.connect": "127.0.0.1:1", **props}, do_log=False))
    try:
        with pytest.raises(ConfigException) as info:
            server.startup(start_processing_requests=False)
        return info.value
    finally:
        server.shutdown()


def test_configuration_errors_stop_startup_naming_the_key() -> None:
    sasl = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER"}
    handler_key = "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"
    error = _startup_error(**sasl, **{handler_key: "tests.security.no_such_module.Validator"})
    assert error.name == handler_key and "no_such_module" in str(error)
    # the dotted-path class's own configure fails (it needs its acceptedSubject option)
    error = _startup_error(**sasl, **{
        handler_key: "tests.security.oauth_callback_handlers.SingleSubjectValidatorCallbackHandler"})
    assert error.name == handler_key and "acceptedSubject" in str(error)
    error = _startup_error(**sasl, **{"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
                                      f'{MODULE} required unsecuredValidatorAllowableClockSkewMs="-5";'})
    assert error.name == "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config" and "negative" in str(error)
    # PLAIN and SCRAM take no plug-in validator here: refused rather than ignored
    error = _startup_error(**{**sasl, "sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
                              "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule '
                                                  'required user_a="b";',
                              "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class": "x.Y"})
    assert error.name == "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class"
    # the broker's own inter-broker login must be able to make a token
    internal = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
                "inter.broker.listener.name": "INTERNAL", "sasl.enabled.mechanisms": "OAUTHBEARER",
                "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER"}
    error = _startup_error(**internal)
    assert error.name == "listener.name.internal.oauthbearer.sasl.jaas.config"
    error = _startup_error(**internal, **{"listener.name.internal.oauthbearer.sasl.jaas.config":
                                          f'{MODULE} required unsecuredLoginExtension_role="replica";'})
    assert error.name == "listener.name.internal.oauthbearer.sasl.jaas.config" and "without a token" in str(error)


@pytest.mark.parametrize("claims", [
    {"sub": "alice", "exp": 10 ** 400}, {"sub": "alice", "exp": 1e400}, {"sub": "alice", "exp": -(10 ** 400)},
    {"sub": "alice", "exp": 4e9, "iat": 10 ** 400}, {"sub": "alice", "exp": 4e9, "scope": {"a": 1}},
])
def test_numbers_beyond_a_double_and_odd_claims_get_an_answer(claims) -> None:
    server = OAuthBearerSaslServer(_validator())
    answer = server.evaluate_response(first_message(jws(claims)))
    assert answer in (b"", b'{"status":"invalid_token"}')


def test_a_validator_that_returns_a_broken_token_refuses_the_client() -> None:
    class Broken:
        def handle(self, callbacks) -> None:
            for callback in callbacks:
                if hasattr(callback, "token_value"):
                    callback.token = object()

    with pytest.raises(SaslException, match="internal error on the server"):
        OAuthBearerSaslServer(Broken()).evaluate_response(first_message(jws({"sub": "a", "exp": 4e9})))

    class Raising:
        def handle(self, callbacks) -> None:
            raise RuntimeError("key server down")

    with pytest.raises(SaslException, match="key server down"):
        OAuthBearerSaslServer(Raising()).evaluate_response(first_message(jws({"sub": "a", "exp": 4e9})))


def test_a_login_by_dotted_path_for_the_broker_and_the_tools() -> None:
    from kafka_py.network.channel_builders import inter_broker_client_channel_builder
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.core.utils.command_line_utils import CommandError, oauthbearer_login

    handler = "tests.security.oauth_callback_handlers.StaticSubjectLoginCallbackHandler"
    config = KafkaConfig({
        "zookeeper.connect": "127.0.0.1:1",
        "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL", "sasl.enabled.mechanisms": "OAUTHBEARER",
        "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
        "listener.name.internal.oauthbearer.sasl.jaas.config": f'{MODULE} required subject="replicator";',
        "listener.name.internal.oauthbearer.sasl.login.callback.handler.class": handler}, do_log=False)
    login = inter_broker_client_channel_builder(config).login
    assert login.token().principal_name == "replicator" and login.extensions() == {"origin": "static"}

    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
             "sasl.jaas.config": f'{MODULE} required subject="ops";', "sasl.login.callback.handler.class": handler}
    assert oauthbearer_login(props).token().principal_name == "ops"
    with pytest.raises(CommandError, match="cannot log in"):
        oauthbearer_login({**props, "sasl.login.callback.handler.class": "tests.security.nowhere.Login"})
