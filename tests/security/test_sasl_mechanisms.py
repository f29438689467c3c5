"""Pure tests of the SASL code: SCRAM (RFC 7677's example exchange), PLAIN, JAAS parsing,
principal mapping and the SaslServerAuthenticator state machine, all without sockets."""
from __future__ import annotations

import base64

import pytest
from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import decode_response, encode_request, request_schema
from kafka_py.clients.common.security import scram
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.clients.common.security.errors import SaslAuthenticationException
from kafka_py.clients.common.security.jaas_config import client_credentials, parse_jaas_config, plain_users
from kafka_py.clients.common.security.plain import PlainSaslServer, parse_plain_token
from kafka_py.clients.common.security.sasl_server_authenticator import SaslServerAuthenticator, SaslState
from kafka_py.clients.common.security.scram import (
    ClientFirstMessage,
    ScramFormatter,
    ScramMechanism,
    ScramSaslClient,
    ScramSaslServer,
    credential_from_string,
    credential_to_string,
)
from kafka_py.clients.common.security.ssl_principal_mapper import SslPrincipalMapper, distinguished_name, parse_rules


# ---- SCRAM ------------------------------------------------------------------------------

def test_rfc7677_example_exchange(monkeypatch) -> None:
    mechanism = ScramMechanism.SCRAM_SHA_256
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = ScramFormatter(mechanism).generate_credential("pencil", 4096, salt)
    monkeypatch.setattr(scram, "secure_random_nonce", lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    server = ScramSaslServer(mechanism, {"user": credential}.get)
    first = server.evaluate_response(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.evaluate_response(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                                     b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_client_and_server_agree_and_wrong_password_fails(mechanism) -> None:
    credential = ScramFormatter(mechanism).generate_credential("secret", 4096)
    server = ScramSaslServer(mechanism, {"a,b=c": credential}.get)
    client = ScramSaslClient(mechanism, "a,b=c", "secret")
    client.verify_server_final(server.evaluate_response(client.final_message(
        server.evaluate_response(client.first_message()))))
    assert server.authorization_id == "a,b=c" and client.complete

    server = ScramSaslServer(mechanism, {"u": credential}.get)
    client = ScramSaslClient(mechanism, "u", "wrong")
    challenge = server.evaluate_response(client.first_message())
    with pytest.raises(SaslAuthenticationException, match="invalid credentials"):
        server.evaluate_response(client.final_message(challenge))


@pytest.mark.parametrize("message", [
    b"", b"garbage", b"y,,n=u,r=abc", b"n,,n=u", b"n,,r=abc,n=u", b"\xff\xfe", b"n,,n=u,r=a,b", b"n" * 100000,
])
def test_malformed_client_first_messages_fail_cleanly(message) -> None:
    server = ScramSaslServer(ScramMechanism.SCRAM_SHA_512, lambda user: None)
    with pytest.raises(SaslAuthenticationException):
        server.evaluate_response(message)


def test_unknown_user_and_tokenauth_refused() -> None:
    server = ScramSaslServer(ScramMechanism.SCRAM_SHA_512, lambda user: None)
    with pytest.raises(SaslAuthenticationException, match="invalid credentials"):
        server.evaluate_response(b"n,,n=nobody,r=abc")
    # a token login where no token is known (a listener without a token cache, or an unknown
    # token id) is refused like a wrong password; a user of that name does not stand in for it
    credential = ScramFormatter(ScramMechanism.SCRAM_SHA_512).generate_credential("pw", 4096)
    server = ScramSaslServer(ScramMechanism.SCRAM_SHA_512, lambda user: credential)
    with pytest.raises(SaslAuthenticationException, match="invalid credentials"):
        server.evaluate_response(b"n,,n=u,r=abc,tokenauth=true")
    server = ScramSaslServer(ScramMechanism.SCRAM_SHA_512, lambda user: credential, lambda token_id: None)
    with pytest.raises(SaslAuthenticationException, match="invalid credentials"):
        server.evaluate_response(b"n,,n=u,r=abc,tokenauth=true")


def test_credential_text_round_trip_and_cache() -> None:
    credential = ScramFormatter(ScramMechanism.SCRAM_SHA_512).generate_credential("pw", 8192)
    text = credential_to_string(credential)
    assert text.startswith("salt=") and text.endswith(",iterations=8192")
    assert credential_from_string(text) == credential
    with pytest.raises(ValueError):
        credential_from_string("salt=!!,stored_key=a,server_key=b,iterations=1")
    cache = CredentialCache()
    cache.update_user("alice", {"SCRAM-SHA-512": text})
    assert cache.get("SCRAM-SHA-512", "alice") == credential
    cache.update_user("alice", {})
    assert cache.get("SCRAM-SHA-512", "alice") is None


def test_client_first_message_parse() -> None:
    first = ClientFirstMessage.parse(b"n,a=alice,n=alice,r=nonce,ext=1")
    assert (first.sasl_name, first.authorization_id, first.nonce, first.extensions) == \
        ("alice", "alice", "nonce", {"ext": "1"})


# ---- PLAIN, JAAS --------------------------------------------------------------------------

def test_plain() -> None:
    assert parse_plain_token(b"\0alice\0pw") == ("", "alice", "pw")
    for token, message in [(b"alicepw", "expected 3 tokens, got 1"), (b"\0\0pw", "username not specified"),
                           (b"\0alice\0", "password not specified"), (b"a\0b\0c\0d", "got 4")]:
        with pytest.raises(SaslAuthenticationException, match=message):
            parse_plain_token(token)
    server = PlainSaslServer({"alice": "pw"})
    assert server.evaluate_response(b"\0alice\0pw") == b"" and server.authorization_id == "alice"
    for token in (b"\0alice\0bad", b"\0bob\0pw", b"bob\0alice\0pw"):
        with pytest.raises(SaslAuthenticationException):
            PlainSaslServer({"alice": "pw"}).evaluate_response(token)


def test_jaas_config() -> None:
    entries = parse_jaas_config(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="a\\"lice";')
    assert plain_users(entries) == {"admin": "admin-secret", "alice": 'a"lice'}
    assert client_credentials(entries) == ("admin", "admin-secret")
    for bad in ("", "X required a=b", "X a=b;", 'X required a="b;', "X required a=;"):
        with pytest.raises(ValueError):
            parse_jaas_config(bad)


# ---- principal mapping ----------------------------------------------------------------------

def test_distinguished_name_and_rules() -> None:
    subject = ((("countryName", "US"),), (("organizationName", "kafka-py"),),
               (("organizationalUnitName", "eng"),), (("commonName", "alice, jr"),))
    dn = distinguished_name(subject)
    assert dn == "CN=alice\\, jr,OU=eng,O=kafka-py,C=US"
    assert SslPrincipalMapper("DEFAULT").get_name(dn) == dn
    mapper = SslPrincipalMapper("RULE:^CN=([a-z]*).*,OU=(.*?),.*$/$1@$2/U,DEFAULT")
    assert mapper.get_name("CN=bob,OU=ops,O=x") == "BOB@OPS"
    assert mapper.get_name("O=x") == "O=x"
    with pytest.raises(Exception):
        SslPrincipalMapper("RULE:^CN=(.*)$/$1/").get_name("O=x")
    with pytest.raises(ValueError):
        parse_rules("RULE:bad")


# ---- the authenticator ----------------------------------------------------------------------

def _frame(api: ApiKeys, version: int, body, correlation_id: int = 7) -> bytes:
    header = RequestHeader(api, version, correlation_id, "c", api.request_header_version(version))
    return encode_request(header, body)[4:]


def _response(step_response: bytes, api: ApiKeys, version: int):
    return decode_response(step_response[4:], api, version)[1]


def _authenticator(mechanisms=("PLAIN",)) -> SaslServerAuthenticator:
    return SaslServerAuthenticator(list(mechanisms), lambda m: PlainSaslServer({"alice": "pw"}))


def test_authenticator_plain_v1_and_v0() -> None:
    auth = _authenticator()
    versions = auth.handle_frame(_frame(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
        client_software_name="t", client_software_version="1")))
    assert versions.failure is None and auth.state is SaslState.HANDSHAKE_REQUEST
    step = auth.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN")))
    assert _response(step.response, ApiKeys.SASL_HANDSHAKE, 1).mechanisms == ("PLAIN",)
    step = auth.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"\0alice\0pw")))
    assert step.complete and auth.principal == "User:alice"

    auth = _authenticator()
    auth.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 0, request_schema(ApiKeys.SASL_HANDSHAKE, 0)(mechanism="PLAIN")))
    step = auth.handle_frame(b"\0alice\0pw")  # v0: a raw token
    assert step.complete and step.response == b"\0\0\0\0"


def test_authenticator_failures() -> None:
    auth = _authenticator()
    step = auth.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="GSSAPI")))
    assert Errors.for_code(int(_response(step.response, ApiKeys.SASL_HANDSHAKE, 1).error_code)) \
        is Errors.UNSUPPORTED_SASL_MECHANISM
    assert step.failure is not None and auth.state is SaslState.FAILED

    auth = _authenticator()
    step = auth.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"x")))
    assert Errors.for_code(int(_response(step.response, ApiKeys.SASL_AUTHENTICATE, 2).error_code)) \
        is Errors.ILLEGAL_SASL_STATE

    auth = _authenticator()
    step = auth.handle_frame(_frame(ApiKeys.METADATA, 9, request_schema(ApiKeys.METADATA, 9)(
        topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False)))
    assert step.response is None and step.failure is not None

    for garbage in (b"", b"\x00", b"\xff\xff\xff\xff\xff\xff\xff\xff"):
        step = _authenticator().handle_frame(garbage)
        assert step.response is None and step.failure is not None

    auth = _authenticator()
    auth.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="PLAIN")))
    step = auth.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"alicepw")))
    response = _response(step.response, ApiKeys.SASL_AUTHENTICATE, 2)
    assert Errors.for_code(int(response.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
    assert "expected 3 tokens" in response.error_message and auth.principal is None


# ---- sessions and re-authentication (KIP-368) ---------------------------------------------------

class _Clock:
    def __init__(self) -> None:
        self.ns = 1_000_000_000

    def nanoseconds(self) -> int:
        return self.ns

    def milliseconds(self) -> int:
        return self.ns // 1_000_000


def _login(auth: SaslServerAuthenticator, user: str = "alice", password: str = "pw", mechanism: str = "PLAIN",
           version: int = 2):
    auth.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=mechanism)))
    schema = request_schema(ApiKeys.SASL_AUTHENTICATE, version)
    step = auth.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, version,
                                    schema(auth_bytes=b"\0" + user.encode() + b"\0" + password.encode())))
    return step, _response(step.response, ApiKeys.SASL_AUTHENTICATE, version)


def test_session_lifetime_and_reauthentication() -> None:
    clock = _Clock()
    users = {"alice": "pw", "bob": "pw"}
    new = lambda: SaslServerAuthenticator(["PLAIN", "SCRAM-SHA-256"], lambda m: PlainSaslServer(users), "c",  # noqa: E731
                                          {"PLAIN": 5000, "SCRAM-SHA-256": 0}, clock)
    auth = new()
    step, response = _login(auth)
    assert step.complete and response.session_lifetime.total_seconds() == 5.0
    assert auth.session_expiration_ns == clock.ns + 5000 * 1_000_000
    # v0 of SaslAuthenticate has no lifetime field, but the session still ends
    v0 = new()
    step, _ = _login(v0, version=0)
    assert step.complete and v0.session_expiration_ns is not None

    # a re-authentication as the same user renews the session
    clock.ns += 4000 * 1_000_000
    again = new()
    again.reauthenticate(auth, clock.ns)
    assert again.state is SaslState.REAUTH_PROCESS_HANDSHAKE
    step, response = _login(again)
    assert step.complete and again.principal == "User:alice" and again.reauthenticating
    assert again.session_expiration_ns == clock.ns + 5000 * 1_000_000

    # ... as another user: refused
    other = new()
    other.reauthenticate(auth, clock.ns)
    step, response = _login(other, user="bob")
    assert Errors.for_code(int(response.error_code)) is Errors.SASL_AUTHENTICATION_FAILED
    assert "Cannot change principals" in response.error_message and step.failure is not None

    # ... with another mechanism: the handshake is answered, the next frame fails without answer
    switch = new()
    switch.reauthenticate(auth, clock.ns)
    step = switch.handle_frame(_frame(ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-256")))
    assert step.failure is None and switch.state is SaslState.REAUTH_BAD_MECHANISM
    step = switch.handle_frame(_frame(ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=b"x")))
    assert step.response is None and "not supported for re-authentication" in str(step.failure)

    # ... with anything but a SaslHandshake first: refused
    wrong = new()
    wrong.reauthenticate(auth, clock.ns)
    step = wrong.handle_frame(_frame(ApiKeys.API_VERSIONS, 3, request_schema(ApiKeys.API_VERSIONS, 3)(
        client_software_name="t", client_software_version="1")))
    assert step.failure is not None and step.response is None

    # a mechanism without a limit: no session end, lifetime 0
    scram_less = SaslServerAuthenticator(["PLAIN"], lambda m: PlainSaslServer(users), "c", 0, clock)
    step, response = _login(scram_less)
    assert response.session_lifetime.total_seconds() == 0 and scram_less.session_expiration_ns is None


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_client_authenticator_against_the_server_authenticator(mechanism) -> None:
    """The broker's client side (SaslClientAuthenticator) through the server's state machine, bytes only."""
    from kafka_py.clients.common.security.sasl_client_authenticator import SaslClientAuthenticator
    from kafka_py.clients.common.security.errors import AuthenticationException

    cache = CredentialCache()
    cache.update_user("broker", {m.mechanism_name: scram.credential_to_string(
        ScramFormatter(m).generate_credential("secret", 4096)) for m in ScramMechanism})

    def server_for(name):
        if name == "PLAIN":
            return PlainSaslServer({"broker": "secret"})
        return ScramSaslServer(ScramMechanism.for_mechanism_name(name), lambda u: cache.get(name, u))

    def run(password: str, server: SaslServerAuthenticator, reauthenticating: bool = False) -> int:
        def exchange(api, version, body):
            step = server.handle_frame(_frame(api, version, body))
            if step.response is None:
                raise ConnectionError("closed")
            return _response(step.response, api, version)
        return SaslClientAuthenticator(mechanism, "broker", password).authenticate(exchange, reauthenticating)

    server = SaslServerAuthenticator(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], server_for, "c",
                                     {mechanism: 3000})
    assert run("secret", server) == 3000 and server.principal == "User:broker"
    again = SaslServerAuthenticator(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], server_for, "c", {mechanism: 3000})
    again.reauthenticate(server, 0)
    assert run("secret", again, reauthenticating=True) == 3000
    with pytest.raises(AuthenticationException):
        run("wrong", SaslServerAuthenticator([mechanism], server_for, "c"))
    with pytest.raises(AuthenticationException, match="not enabled"):
        run("secret", SaslServerAuthenticator(["SCRAM-SHA-999"], server_for, "c"))
    delays = [SaslClientAuthenticator.reauthentication_delay_ms(10000) for _ in range(50)]
    assert all(8500 <= d <= 9500 for d in delays)


def test_a_token_login_is_its_owner_and_its_session_ends_with_the_token() -> None:
    """SCRAM with tokenauth=true through the server's state machine: the principal is the
    token's owner, marked token-authenticated, and with re-authentication on the session ends
    no later than the token expires (Kafka's credential lifetime)."""
    from kafka_py.clients.common.security.delegation_token import DelegationToken, TokenInformation
    from kafka_py.clients.common.security.kafka_principal import is_token_authenticated
    from kafka_py.clients.common.security.sasl_client_authenticator import SaslClientAuthenticator
    from kafka_py.server.delegation_token_manager import create_hmac, prepare_scram_credentials
    from kafka_py.clients.common.utils.time import MockTime

    time = MockTime()
    cache = CredentialCache()
    expiry = time.milliseconds() + 5000
    token = DelegationToken(TokenInformation("tok-1", "User:alice", (), time.milliseconds(), expiry + 60_000, expiry),
                            create_hmac("tok-1", b"secret"))
    cache.token_cache.update_cache(token, prepare_scram_credentials(token.hmac_as_base64_string))

    def server_for(name):
        return ScramSaslServer(ScramMechanism.for_mechanism_name(name), lambda u: cache.get(name, u),
                               lambda token_id: cache.token_credential(name, token_id))

    def login(max_reauth_ms: int, password: str = token.hmac_as_base64_string):
        server = SaslServerAuthenticator(["SCRAM-SHA-512"], server_for, "c", {"SCRAM-SHA-512": max_reauth_ms}, time)

        def exchange(api, version, body):
            step = server.handle_frame(_frame(api, version, body))
            return _response(step.response, api, version)

        lifetime = SaslClientAuthenticator("SCRAM-SHA-512", "tok-1", password, {"tokenauth": "true"}).authenticate(
            exchange)
        return server, lifetime

    server, lifetime = login(60_000)
    assert server.principal == "User:alice" and is_token_authenticated(server.principal)
    assert lifetime == 5000
    server, lifetime = login(1000)
    assert lifetime == 1000 and is_token_authenticated(server.principal)
    server, lifetime = login(0)
    assert lifetime == 0 and server.session_expiration_ns is None
    with pytest.raises(SaslAuthenticationException, match="invalid credentials"):
        login(0, password=base64.b64encode(create_hmac("tok-1", b"other")).decode())
    # a password login of the same name is no token login
    cache.update_user("alice", {"SCRAM-SHA-512": scram.credential_to_string(
        ScramFormatter(ScramMechanism.SCRAM_SHA_512).generate_credential("pw", 4096))})
    plain = SaslServerAuthenticator(["SCRAM-SHA-512"], server_for, "c", 0, time)

    def exchange(api, version, body):
        return _response(plain.handle_frame(_frame(api, version, body)).response, api, version)

    SaslClientAuthenticator("SCRAM-SHA-512", "alice", "pw").authenticate(exchange)
    assert plain.principal == "User:alice" and not is_token_authenticated(plain.principal)


def test_api_versions_during_sasl_lists_the_listeners_api_set() -> None:
    """A KRaft broker's listener (its own ApiVersionManager) answers ApiVersions before the login
    with its own API set: no delegation token APIs there, which a ZooKeeper-mode broker lists."""
    from kafka_py.server.api_version_manager import ListenerType, SimpleApiVersionManager, broker_apis

    def listed(authenticator: SaslServerAuthenticator) -> set[int]:
        body = request_schema(ApiKeys.API_VERSIONS, 3)(client_software_name="t", client_software_version="1")
        step = authenticator.handle_frame(_frame(ApiKeys.API_VERSIONS, 3, body))
        return {int(k.api_key) for k in _response(step.response, ApiKeys.API_VERSIONS, 3).api_keys}

    zookeeper_mode = listed(_authenticator())
    assert ApiKeys.CREATE_DELEGATION_TOKEN.id in zookeeper_mode
    kraft = _authenticator()
    kraft.api_version_manager = SimpleApiVersionManager(ListenerType.BROKER, broker_apis())
    kraft_listed = listed(kraft)
    assert ApiKeys.CREATE_DELEGATION_TOKEN.id not in kraft_listed and ApiKeys.DESCRIBE_DELEGATION_TOKEN.id not in kraft_listed
    assert ApiKeys.SASL_HANDSHAKE.id in kraft_listed and kraft.state is SaslState.HANDSHAKE_REQUEST
