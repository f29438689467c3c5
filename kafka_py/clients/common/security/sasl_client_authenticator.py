"""Port of clients/src/main/java/org/apache/kafka/common/security/authenticator/SaslClientAuthenticator.java
(Kafka 2.8.2), with the PLAIN and SCRAM client mechanisms (PlainSaslClient of the JDK,
ScramSaslClient.java), OAUTHBEARER's (OAuthBearerSaslClient, kafka_py/clients/common/security/oauthbearer.py,
whose tokens come from an OAuthBearerLogin) and GSSAPI's (kafka_py/clients/common/security/kerberos.py, with the
broker's KerberosLogin): how a broker logs in to another broker's SASL listener.

The exchange is Kafka's, in order:

1. ApiVersions (initial authentication only; a re-authentication reuses the versions
   learnt then), to pick the SaslHandshake and SaslAuthenticate versions both sides speak;
2. SaslHandshake naming the mechanism (``sasl.mechanism.inter.broker.protocol``); an
   error answer is UnsupportedSaslMechanismException listing what the broker offers;
3. SaslAuthenticate requests carrying the mechanism's tokens until the mechanism is
   complete; an error answer is SaslAuthenticationException with the broker's message.

No socket here: ``authenticate`` is given ``exchange(api_key, version, body) -> response
body``, which the blocking NetworkClient (kafka_py/clients/network_client.py) provides
over its connection. The session lifetime the broker sends back in SaslAuthenticate v1+
(KIP-368, ``connections.max.reauth.ms``) is returned, and ``reauthentication_delay_ms``
picks when to re-authenticate: at a random point between 85 % and 95 % of it, as Kafka's
client does, so that many connections do not all re-authenticate at once.
"""
from __future__ import annotations

import datetime
import random
from typing import Any, Callable, Optional

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import request_schema
from kafka_py.clients.common.protocol.requests import CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION
from kafka_py.clients.common.security.errors import SaslAuthenticationException, UnsupportedSaslMechanismException
from kafka_py.clients.common.security.oauthbearer import OAuthBearerSaslClient
from kafka_py.clients.common.security.oauthbearer_unsecured import OAUTHBEARER_MECHANISM
from kafka_py.clients.common.security.plain import PLAIN_MECHANISM, plain_client_token
from kafka_py.clients.common.security.scram import ScramMechanism, ScramSaslClient

Exchange = Callable[[ApiKeys, int, Any], Any]

# The highest versions this client speaks (Kafka 2.8.2's).
SASL_HANDSHAKE_VERSION = 1
SASL_AUTHENTICATE_VERSION = 2


class PlainSaslClient:
    """SASL/PLAIN (RFC 4616): one token, ``NUL user NUL password``; the server answers with nothing."""

    def __init__(self, username: str, password: str) -> None:
        self._token = plain_client_token(username, password)
        self._sent = False
        self.complete = False

    def evaluate_challenge(self, challenge: Optional[bytes]) -> Optional[bytes]:
        if not self._sent:
            self._sent = True
            return self._token
        # The server's (empty) answer to the token: nothing more to send.
        self.complete = True
        return None


class ScramClientExchange:
    """A ScramSaslClient as a sequence of challenges: client-first, client-final, then the
    server-final is verified (the broker proves it knows the credential too)."""

    def __init__(self, mechanism: ScramMechanism, username: str, password: str,
                 extensions: Optional[dict[str, str]] = None) -> None:
        self._client = ScramSaslClient(mechanism, username, password, extensions)
        self._step = 0
        self.complete = False

    def evaluate_challenge(self, challenge: Optional[bytes]) -> Optional[bytes]:
        step, self._step = self._step, self._step + 1
        if step == 0:
            return self._client.first_message()
        if step == 1:
            return self._client.final_message(challenge or b"")
        if step == 2:
            self._client.verify_server_final(challenge or b"")
            self.complete = True
            return None
        raise SaslAuthenticationException("Unexpected SCRAM challenge after the exchange completed")


def new_mechanism_client(mechanism: str, username: str, password: str,
                         extensions: Optional[dict[str, str]] = None, login: Any = None, host: str = "") -> Any:
    """``extensions``: SCRAM's (``tokenauth=true`` logs in with a delegation token); PLAIN has none.
    GSSAPI's ``login`` is the broker's KerberosLogin; the service's host is ``host``, the one
    connected to."""
    if mechanism == "GSSAPI":
        if login is None:
            raise UnsupportedSaslMechanismException("SASL/GSSAPI needs the broker's Kerberos login")
        return login.sasl_client(host)
    if mechanism == PLAIN_MECHANISM:
        return PlainSaslClient(username, password)
    if mechanism == OAUTHBEARER_MECHANISM:
        # ``login``: the OAuthBearerLogin the tokens come from
        return OAuthBearerSaslClient(login)
    scram = ScramMechanism.for_mechanism_name(mechanism)
    if scram is None:
        raise UnsupportedSaslMechanismException(f"kafka-py cannot log in with SASL mechanism {mechanism}")
    return ScramClientExchange(scram, username, password, extensions)


def _max_version(response: Any, api: ApiKeys) -> Optional[int]:
    for entry in response.api_keys:
        if int(entry.api_key) == api.value:
            return int(entry.max_version)
    return None


class SaslClientAuthenticator:
    """One connection's client side of SASL: ``authenticate`` once, then
    ``authenticate(..., reauthenticating=True)`` whenever the session is due."""

    def __init__(self, mechanism: str, username: str, password: str,
                 extensions: Optional[dict[str, str]] = None, login: Any = None, host: str = "") -> None:
        self.login = login  # OAUTHBEARER's OAuthBearerLogin, GSSAPI's KerberosLogin
        self.host = host  # the host connected to: GSSAPI's service principal names it
        self.mechanism = mechanism
        self._username = username
        self._password = password
        self._extensions = extensions
        self._handshake_version = SASL_HANDSHAKE_VERSION
        self._authenticate_version = SASL_AUTHENTICATE_VERSION
        self.session_lifetime_ms = 0

    def authenticate(self, exchange: Exchange, reauthenticating: bool = False) -> int:
        """Run the whole exchange; the session lifetime the broker granted (0: unlimited).
        Raises an AuthenticationException when the broker refuses."""
        if not reauthenticating:
            self._negotiate_versions(exchange)
        handshake = exchange(ApiKeys.SASL_HANDSHAKE, self._handshake_version,
                             request_schema(ApiKeys.SASL_HANDSHAKE, self._handshake_version)(
                                 mechanism=self.mechanism))
        error = Errors.for_code(int(handshake.error_code))
        if error is Errors.UNSUPPORTED_SASL_MECHANISM:
            raise UnsupportedSaslMechanismException(
                f"Client SASL mechanism '{self.mechanism}' not enabled in the server, enabled mechanisms are "
                f"{list(handshake.mechanisms)}")
        if error is not Errors.NONE:
            raise SaslAuthenticationException(f"SaslHandshake failed with {error.name}")
        if self._handshake_version < 1:
            raise SaslAuthenticationException("the broker does not speak SaslHandshake v1 (SaslAuthenticate)")
        mechanism = new_mechanism_client(self.mechanism, self._username, self._password, self._extensions,
                                         login=self.login, host=self.host)
        token = mechanism.evaluate_challenge(None)
        lifetime_ms = 0
        schema = request_schema(ApiKeys.SASL_AUTHENTICATE, self._authenticate_version)
        while token is not None:
            response = exchange(ApiKeys.SASL_AUTHENTICATE, self._authenticate_version, schema(auth_bytes=token))
            error = Errors.for_code(int(response.error_code))
            if error is not Errors.NONE:
                message = response.error_message or error.name
                raise SaslAuthenticationException(message)
            lifetime = getattr(response, "session_lifetime", None)
            if isinstance(lifetime, datetime.timedelta):
                lifetime_ms = int(lifetime.total_seconds() * 1000)
            elif lifetime is not None:
                lifetime_ms = int(lifetime)
            token = mechanism.evaluate_challenge(bytes(response.auth_bytes))
        if not mechanism.complete:
            raise SaslAuthenticationException(f"SASL {self.mechanism} exchange ended before it was complete")
        self.session_lifetime_ms = max(0, lifetime_ms)
        return self.session_lifetime_ms

    def _negotiate_versions(self, exchange: Exchange) -> None:
        version = ApiKeys.API_VERSIONS.latest_version  # as Kafka's ApiVersionsRequest.Builder sends
        response = exchange(ApiKeys.API_VERSIONS, version,
                            request_schema(ApiKeys.API_VERSIONS, version)(
                                client_software_name=CLIENT_SOFTWARE_NAME,
                                client_software_version=CLIENT_SOFTWARE_VERSION))
        error = Errors.for_code(int(response.error_code))
        if error is not Errors.NONE:
            raise SaslAuthenticationException(f"ApiVersions before SASL authentication failed with {error.name}")
        handshake = _max_version(response, ApiKeys.SASL_HANDSHAKE)
        authenticate = _max_version(response, ApiKeys.SASL_AUTHENTICATE)
        if handshake is None or authenticate is None:
            raise SaslAuthenticationException("the broker does not offer SaslHandshake and SaslAuthenticate")
        self._handshake_version = min(SASL_HANDSHAKE_VERSION, handshake)
        self._authenticate_version = min(SASL_AUTHENTICATE_VERSION, authenticate)

    @staticmethod
    def reauthentication_delay_ms(session_lifetime_ms: int, rng: random.Random | None = None) -> float:
        """When, after authenticating, to re-authenticate: 85-95 % of the session lifetime."""
        fraction = 0.85 + (rng or random).random() * 0.10
        return session_lifetime_ms * fraction


__all__ = ["SaslClientAuthenticator", "PlainSaslClient", "ScramClientExchange", "new_mechanism_client"]
