"""Port of clients/src/main/java/org/apache/kafka/common/security/authenticator/SaslServerAuthenticator.java
(Kafka 2.8.2): the server side of a SASL connection, from its first frame until the
client is authenticated (or refused).

The state machine is Kafka's:

* ``INITIAL_REQUEST`` / ``HANDSHAKE_OR_VERSIONS_REQUEST``: ApiVersions is answered (once),
  SaslHandshake names the mechanism. A first frame that is no Kafka request is, when the
  listener enables GSSAPI, a Kafka 0.9 client's first GSSAPI token: the exchange goes on
  in raw tokens as after SaslHandshake v0. Any other request ends the connection
  (IllegalSaslStateException); a SaslAuthenticate is answered with ILLEGAL_SASL_STATE
  first so the client learns why.
* ``AUTHENTICATE``: after SaslHandshake v1, each frame is a SaslAuthenticate request whose
  ``auth_bytes`` go to the mechanism, and the challenge goes back in a SaslAuthenticate
  response. After SaslHandshake v0, frames are raw mechanism tokens (size-prefixed, no
  Kafka header), answered the same way.
* ``COMPLETE``: the principal is ``User:<authorization id>``; further frames are requests.
  After a SCRAM login with a delegation token (``tokenauth=true``) the authorization id is
  the token's owner and the KafkaPrincipal is marked token-authenticated.
* ``FAILED``: the failure response (if the framing allows one) is sent, then the
  connection is closed after ``connection.failed.authentication.delay.ms``.

Re-authentication (KIP-368). With ``connections.max.reauth.ms`` above 0 for the mechanism,
a completed authentication has a session lifetime: SaslAuthenticate v1+ answers it as
``session_lifetime_ms``, and ``session_expiration_ns`` is when the session ends. Before
then the client sends a new SaslHandshake on the authenticated connection; the channel
(network/secure_selector.py) hands it to a fresh authenticator made with
``reauthenticate(previous, now_ns)``, which starts in ``REAUTH_PROCESS_HANDSHAKE``: the
mechanism must be the one used before (otherwise the exchange fails at its next frame,
``REAUTH_BAD_MECHANISM``), and the principal must come out the same. A mechanism whose
credential expires (OAUTHBEARER's token) says when as ``credential_expiration_ms``, and the
session ends by then. A SCRAM user deleted
meanwhile, or a changed password, fails the re-authentication, and the connection is
closed as after any failed authentication.

No sockets here: ``handle_frame`` takes one received frame and returns what to send
and what happened, so the whole exchange is testable with bytes.
"""
from __future__ import annotations

import datetime
import enum
import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from kafka_py.network.channel_metadata_registry import client_information_of
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.headers import RequestHeader
from kafka_py.clients.common.protocol.messages import (
    api_versions_response,
    decode_request,
    encode_response,
    response_schema,
    unsupported_api_versions_response,
)
from kafka_py.clients.common.security.errors import (
    AuthenticationException,
    IllegalSaslStateException,
    SaslAuthenticationException,
    SaslException,
    UnsupportedSaslMechanismException,
)
from kafka_py.clients.common.security.kafka_principal import USER_TYPE, KafkaPrincipal
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

GSSAPI_MECHANISM = "GSSAPI"


class SaslState(enum.Enum):
    INITIAL_REQUEST = 1
    HANDSHAKE_OR_VERSIONS_REQUEST = 2
    HANDSHAKE_REQUEST = 3
    AUTHENTICATE = 4
    COMPLETE = 5
    FAILED = 6
    REAUTH_PROCESS_HANDSHAKE = 7
    REAUTH_BAD_MECHANISM = 8


@dataclass
class AuthenticationStep:
    """What one frame led to: bytes to send (a whole size-prefixed frame) or None, and
    the failure when the exchange failed (the connection is to be closed after the send)."""

    response: Optional[bytes] = None
    failure: Optional[AuthenticationException] = None
    complete: bool = False


class SaslServerAuthenticator:
    """One connection's authentication.

    ``mechanism_server(name)`` returns a fresh mechanism server (PlainSaslServer,
    ScramSaslServer) with ``evaluate_response(token) -> challenge``, ``complete`` and
    ``authorization_id``.
    """

    def __init__(self, enabled_mechanisms: Sequence[str], mechanism_server: Callable[[str], Any],
                 connection_id: str = "", connections_max_reauth_ms: int | Mapping[str, int] = 0,
                 time: Time = Time.SYSTEM) -> None:
        self.enabled_mechanisms = list(enabled_mechanisms)
        self._mechanism_server = mechanism_server
        self.connection_id = connection_id
        # connections.max.reauth.ms, per mechanism (one value for all when an int)
        self._max_reauth_ms = connections_max_reauth_ms
        self._time = time
        self.state = SaslState.INITIAL_REQUEST
        self._server: Any = None
        self._raw_tokens = False  # SaslHandshake v0: tokens without Kafka framing
        self.mechanism: Optional[str] = None
        self.principal: Optional[str] = None
        # When the session ends (time.nanoseconds()), None when it never does.
        self.session_expiration_ns: Optional[int] = None
        self._session_lifetime_ms = 0
        # Re-authentication: what the connection was authenticated as before.
        self._previous_mechanism: Optional[str] = None
        self._previous_principal: Optional[str] = None
        self._bad_mechanism_message = ""
        self.reauthentication_begin_ns: Optional[int] = None
        # Whether the client sent SaslAuthenticate v1+ (so can re-authenticate, KIP-368): the
        # selector counts successful-authentication-no-reauth-total from it.
        self.connected_client_supports_reauthentication = False
        # The connection's ChannelMetadataRegistry (network/channel_metadata_registry.py), set
        # by the selector: a valid ApiVersions request registers the client software there.
        self.metadata_registry: Any = None
        # The listener's ApiVersionManager (server/api_version_manager.py) when it serves an API
        # set of its own (a KRaft node's), set by the selector: ApiVersions lists that set, as
        # Kafka's authenticator answers with its listener's apiVersionSupplier.
        self.api_version_manager: Any = None
        # The SaslChannelBuilder's apiVersionSupplier: ApiVersions answered as KafkaApis answers it
        # (server/api_version_manager.py ApiVersionSupplier), features included; None without one.
        self.api_version_supplier: Any = None

    @property
    def reauthenticating(self) -> bool:
        return self._previous_mechanism is not None

    def reauthenticate(self, previous: "SaslServerAuthenticator", now_ns: int) -> None:
        """Make this (fresh) authenticator re-authenticate the connection ``previous``
        authenticated; its first frame is the client's SaslHandshake."""
        self._previous_mechanism = previous.mechanism
        self._previous_principal = previous.principal
        self.reauthentication_begin_ns = now_ns
        self.state = SaslState.REAUTH_PROCESS_HANDSHAKE

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    # ---- the one entry point ------------------------------------------------------------
    def handle_frame(self, frame: memoryview | bytes) -> AuthenticationStep:
        try:
            if self.state in (SaslState.INITIAL_REQUEST, SaslState.HANDSHAKE_OR_VERSIONS_REQUEST,
                              SaslState.HANDSHAKE_REQUEST, SaslState.REAUTH_PROCESS_HANDSHAKE):
                return self._handle_kafka_request(frame)
            if self.state is SaslState.REAUTH_BAD_MECHANISM:
                # As Kafka: no answer, the connection is closed after the failure delay.
                raise SaslAuthenticationException(self._bad_mechanism_message)
            if self.state is SaslState.AUTHENTICATE:
                if self._raw_tokens:
                    return self._handle_raw_token(frame)
                return self._handle_sasl_authenticate(frame)
            raise IllegalSaslStateException(f"Unexpected SASL frame in state {self.state.name}")
        except AuthenticationException as e:
            self.state = SaslState.FAILED
            return AuthenticationStep(None, e)

    # ---- before the handshake -----------------------------------------------------------
    def _parse(self, frame: memoryview | bytes) -> tuple[RequestHeader, Any]:
        try:
            return decode_request(frame)
        except Exception as e:  # noqa: BLE001 - any malformed frame is an illegal SASL state
            raise IllegalSaslStateException(f"Invalid request during SASL authentication: {e}") from None

    def _handle_kafka_request(self, frame: memoryview | bytes) -> AuthenticationStep:
        try:
            header, _ = RequestHeader.parse(frame)
        except Exception:  # noqa: BLE001
            if self.state is SaslState.INITIAL_REQUEST and GSSAPI_MECHANISM in self.enabled_mechanisms:
                # Kafka 0.9 clients send their first GSSAPI token (0x60...) with no handshake at all;
                # the whole exchange then goes on in raw tokens, as after SaslHandshake v0.
                logger.debug("First client packet on %s is not a Kafka request, using default mechanism GSSAPI",
                             self.connection_id)
                self.mechanism = GSSAPI_MECHANISM
                self._raw_tokens = True
                self._server = self._mechanism_server(GSSAPI_MECHANISM)
                self.state = SaslState.AUTHENTICATE
                return self._handle_raw_token(frame)
            raise IllegalSaslStateException("Invalid request before SASL handshake: not a Kafka request") from None
        if self.state is SaslState.INITIAL_REQUEST:
            # a Kafka request header: tokens come only after a SaslHandshake from now on
            self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
        api = header.api_key
        if self.state is SaslState.REAUTH_PROCESS_HANDSHAKE and api is not ApiKeys.SASL_HANDSHAKE:
            raise IllegalSaslStateException(f"Unexpected Kafka request of type {api.name} during SASL "
                                            "re-authentication.")
        if api is ApiKeys.API_VERSIONS and self.state is not SaslState.HANDSHAKE_REQUEST:
            header, body = self._parse(frame)
            if not api.is_version_supported(header.api_version):
                response = unsupported_api_versions_response()
            else:
                client_information = client_information_of(header.api_version, body)
                if client_information is None:  # ApiVersionsRequest.isValid: a bad software name or version
                    response = self._api_versions_response(header.api_version, Errors.INVALID_REQUEST)
                else:
                    if self.metadata_registry is not None:
                        self.metadata_registry.register_client_information(client_information)
                    response = self._api_versions_response(header.api_version)
                    self.state = SaslState.HANDSHAKE_REQUEST
            return AuthenticationStep(encode_response(header.to_response_header(), response))
        if api is ApiKeys.SASL_HANDSHAKE:
            header, body = self._parse(frame)
            return self._handle_handshake(header, body)
        if api is ApiKeys.SASL_AUTHENTICATE and api.is_version_supported(header.api_version):
            error = IllegalSaslStateException("Unexpected SaslAuthenticate request before SaslHandshake")
            self.state = SaslState.FAILED
            return AuthenticationStep(self._authenticate_response(header, Errors.ILLEGAL_SASL_STATE,
                                                                  str(error)), error)
        raise IllegalSaslStateException(f"Unexpected Kafka request of type {api.name} during SASL handshake.")

    def _api_versions_response(self, version: int, error: Errors = Errors.NONE) -> Any:
        if self.api_version_supplier is not None:
            return self.api_version_supplier(version, error)
        if self.api_version_manager is None:
            return api_versions_response(version, error)
        return self.api_version_manager.api_version_response(version, error=error)

    def _handle_handshake(self, header: RequestHeader, body: Any) -> AuthenticationStep:
        mechanism = body.mechanism
        schema = response_schema(ApiKeys.SASL_HANDSHAKE, header.api_version)
        if mechanism not in self.enabled_mechanisms:
            response = schema(error_code=Errors.UNSUPPORTED_SASL_MECHANISM.error_code,
                              mechanisms=tuple(self.enabled_mechanisms))
            self.state = SaslState.FAILED
            return AuthenticationStep(encode_response(header.to_response_header(), response),
                                      UnsupportedSaslMechanismException(f"Unsupported SASL mechanism {mechanism}"))
        self.mechanism = mechanism
        self._raw_tokens = header.api_version == 0
        response = schema(error_code=Errors.NONE.error_code, mechanisms=tuple(self.enabled_mechanisms))
        if self.reauthenticating and mechanism != self._previous_mechanism:
            # Kafka answers the handshake, then fails the exchange at the next frame.
            self._bad_mechanism_message = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                           f"re-authentication of mechanism '{self._previous_mechanism}'")
            self.state = SaslState.REAUTH_BAD_MECHANISM
        else:
            self._server = self._mechanism_server(mechanism)
            self.state = SaslState.AUTHENTICATE
        return AuthenticationStep(encode_response(header.to_response_header(), response))

    # ---- the exchange -------------------------------------------------------------------
    def _evaluate(self, token: bytes) -> bytes:
        try:
            challenge = self._server.evaluate_response(token)
        except SaslException as e:
            # The mechanism's own text may say too much (whether a user exists): the client
            # gets Kafka's fixed message, the log gets the reason.
            logger.debug("SASL %s %s failed on %s: %s", self.mechanism, self._authentication_text,
                         self.connection_id, e)
            raise SaslAuthenticationException(
                f"Authentication failed during {self._authentication_text} due to invalid credentials with SASL "
                f"mechanism {self.mechanism}") from None
        if self._server.complete:
            principal = KafkaPrincipal(USER_TYPE, self._server.authorization_id,
                                       bool(getattr(self._server, "token_authenticated", False)))
            if self.reauthenticating and principal != self._previous_principal:
                raise SaslAuthenticationException(f"Cannot change principals during re-authentication from "
                                                  f"{self._previous_principal}: {principal}")
            self.principal = principal
            self._session_lifetime_ms = self._start_session()
            self.state = SaslState.COMPLETE
        return challenge

    @property
    def _authentication_text(self) -> str:
        return "re-authentication" if self.reauthenticating else "authentication"

    def _start_session(self) -> int:
        """The session lifetime granted now (0: unlimited), and when it ends. A credential that
        expires (an OAUTHBEARER token's ``exp``) ends the session no later than it expires, when
        sessions end at all (connections.max.reauth.ms above 0), as in Kafka's ReauthInfo."""
        limits = self._max_reauth_ms
        limit = limits.get(self.mechanism, 0) if isinstance(limits, Mapping) else limits
        lifetime_ms = max(0, int(limit or 0))
        credential_expiration_ms = getattr(self._server, "credential_expiration_ms", None)
        if credential_expiration_ms is not None and lifetime_ms:
            lifetime_ms = max(0, min(lifetime_ms, int(credential_expiration_ms) - self._time.milliseconds()))
        # A delegation token's expiry shortens the session, as Kafka's credential lifetime does
        # (with re-authentication off the session still never ends).
        credential_expiration_ms = getattr(self._server, "token_expiry_timestamp_ms", None)
        if lifetime_ms and credential_expiration_ms is not None:
            lifetime_ms = max(0, min(lifetime_ms, credential_expiration_ms - self._time.milliseconds()))
        self.session_expiration_ns = self._time.nanoseconds() + lifetime_ms * 1_000_000 if lifetime_ms else None
        return lifetime_ms

    @property
    def session_lifetime_ms(self) -> int:
        return self._session_lifetime_ms

    def _handle_raw_token(self, frame: memoryview | bytes) -> AuthenticationStep:
        # v0 framing carries no error: a failure just closes the connection.
        challenge = self._evaluate(bytes(frame))
        response = len(challenge).to_bytes(4, "big") + challenge
        if self.complete:
            return AuthenticationStep(response, complete=True)
        return AuthenticationStep(response)

    def _handle_sasl_authenticate(self, frame: memoryview | bytes) -> AuthenticationStep:
        try:
            header, _ = RequestHeader.parse(frame)
        except Exception:  # noqa: BLE001
            raise IllegalSaslStateException("Invalid request during SASL authentication") from None
        if header.api_key is not ApiKeys.SASL_AUTHENTICATE:
            raise IllegalSaslStateException(
                f"Unexpected Kafka request of type {header.api_key.name} during SASL authentication.")
        header, body = self._parse(frame)
        if header.api_version > 0:
            self.connected_client_supports_reauthentication = True
        try:
            challenge = self._evaluate(bytes(body.auth_bytes))
        except SaslAuthenticationException as e:
            self.state = SaslState.FAILED
            return AuthenticationStep(
                self._authenticate_response(header, Errors.SASL_AUTHENTICATION_FAILED, str(e)), e)
        response = self._authenticate_response(header, Errors.NONE, None, challenge)
        return AuthenticationStep(response, complete=self.complete)

    def _authenticate_response(self, header: RequestHeader, error: Errors, message: Optional[str],
                               auth_bytes: bytes = b"") -> bytes:
        schema = response_schema(ApiKeys.SASL_AUTHENTICATE, header.api_version)
        values: dict[str, Any] = {"error_code": error.error_code, "error_message": message,
                                  "auth_bytes": auth_bytes}
        if header.api_version >= 1:
            lifetime = self._session_lifetime_ms if error is Errors.NONE and self.complete else 0
            values["session_lifetime"] = datetime.timedelta(milliseconds=lifetime)
        return encode_response(header.to_response_header(), schema(**values))
