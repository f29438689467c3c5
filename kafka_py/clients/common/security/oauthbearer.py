"""Port of clients/src/main/java/org/apache/kafka/common/security/oauthbearer/internals/OAuthBearerSaslServer.java
(Kafka 2.8.2), with OAuthBearerClientInitialResponse.java, OAuthBearerSaslClient.java (the callbacks
both hand to their handlers are in kafka_py/clients/common/security/oauthbearer_callbacks.py), and the token refresh of
internals/OAuthBearerRefreshingLogin.java and internals/expiring/ExpiringCredentialRefreshingLogin.java:
SASL/OAUTHBEARER (RFC 7628, KIP-255).

The exchange. The client's first message is a GS2 header and key/value pairs, each ended by
``\\x01``: ``n,[a=<authzid>],\\x01auth=Bearer <token>\\x01[<key>=<value>\\x01...]\\x01``. The
server hands the token to its validator; a valid token completes the exchange with an empty
answer and the principal is the token's principal name. A refused token is answered (in a
successful SaslAuthenticate response) with the JSON error of RFC 7628 section 3.2.2,
``{"status":"invalid_token"}`` (``insufficient_scope`` with the ``scope`` wanted when a required
scope is missing); the client then sends the single byte ``\\x01``, and the server fails the
exchange with that JSON as the SASL_AUTHENTICATION_FAILED message. A first message that does not
parse is a SaslException: the client is told only that authentication failed.

Validators. The validator of a listener is a callback handler: Kafka's unsecured one
(kafka_py/clients/common/security/oauthbearer_unsecured.py) unless
``listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class`` names another, here a
Python class by its dotted path (``package.module.ClassName``). That class is made with no
arguments and must have Kafka's AuthenticateCallbackHandler methods:

* ``configure(configs, sasl_mechanism, jaas_config_entries)``: once, when the listener starts;
  ``configs`` maps the broker's keys to their values, ``sasl_mechanism`` is ``OAUTHBEARER``,
  ``jaas_config_entries`` the listener's OAuthBearerLoginModule entries
  (kafka_py.clients.common.security.jaas_config.AppConfigurationEntry: ``login_module_name``, ``control_flag``,
  ``options``). An exception here stops the broker's start.
* ``handle(callbacks)``: for each callback, an ``OAuthBearerValidatorCallback`` (read
  ``token_value``; set ``token`` to an object with ``value``, ``principal_name``, ``scope``,
  ``lifetime_ms`` (expiry, ms since the epoch) and ``start_time_ms``, or call
  ``error(status, scope=None, open_id_configuration=None)``), or an
  ``OAuthBearerExtensionsValidatorCallback`` (``input_extensions``; call ``valid(name)`` or
  ``invalid(name, message)``). A callback it does not handle raises
  UnsupportedCallbackException (for the extensions callback this means: accept none). Any other
  exception refuses the client with Kafka's "internal error on the server" failure.
* ``close()``.

One handler serves all the listener's connections, on several network threads at once.

The client side (a broker logging in to another broker, the bin/ tools) is OAuthBearerSaslClient
with an OAuthBearerLogin: the token comes from the login callback handler (Kafka's unsecured one,
or ``sasl.login.callback.handler.class`` by dotted path, with an ``OAuthBearerTokenCallback`` and
a ``SaslExtensionsCallback``) and is reused until its refresh time: the share
``sasl.login.refresh.window.factor`` (plus up to ``sasl.login.refresh.window.jitter``) of its
lifetime. Kafka refreshes on a thread of its own and also bounds the refresh time with
``sasl.login.refresh.min.period.seconds`` and ``sasl.login.refresh.buffer.seconds``; here the token
is renewed when a connection next authenticates or re-authenticates past that time, which is when
a fresh one is needed.
"""
from __future__ import annotations

import importlib
import logging
import random
import re
import threading
from typing import Any, Mapping, Optional, Sequence

from kafka_py.clients.common.security.errors import SaslAuthenticationException, SaslException
from kafka_py.clients.common.security.oauthbearer_callbacks import (  # noqa: F401 - the callbacks are this module's API too
    AUTH_KEY,
    EXTENSION_KEY_PATTERN,
    EXTENSION_VALUE_PATTERN,
    OAuthBearerExtensionsValidatorCallback,
    OAuthBearerTokenCallback,
    OAuthBearerValidatorCallback,
    SaslExtensionsCallback,
    validate_extensions,
)
from kafka_py.clients.common.security.oauthbearer_unsecured import (
    OAUTHBEARER_LOGIN_MODULE,
    OAUTHBEARER_MECHANISM,
    OAuthBearerUnsecuredLoginCallbackHandler,
    OAuthBearerUnsecuredValidatorCallbackHandler,
    UnsupportedCallbackException,
)
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

SEPARATOR = "\x01"
BYTE_CONTROL_A = b"\x01"
INTERNAL_ERROR_ON_SERVER = "Authentication could not be performed due to an internal error on the server"

# RFC 7628 / RFC 5801: a saslname is any ASCII but NUL, ',' and '=' (which are escaped =2C, =3D)
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_CLIENT_INITIAL_RESPONSE = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{SEPARATOR}"
    rf"(?P<kvpairs>(?:{EXTENSION_KEY_PATTERN.pattern}={EXTENSION_VALUE_PATTERN.pattern}{SEPARATOR})*){SEPARATOR}")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)", re.ASCII)


class OAuthBearerClientInitialResponse:
    """The client's first (and only) message: the token, the authorization id and extensions."""

    def __init__(self, token_value: str, authorization_id: str = "",
                 extensions: Optional[Mapping[str, str]] = None) -> None:
        validate_extensions(extensions)
        self.token_value = token_value
        self.authorization_id = authorization_id or ""
        self.extensions = dict(extensions or {})

    @classmethod
    def parse(cls, response: bytes) -> "OAuthBearerClientInitialResponse":
        text = bytes(response).decode("utf-8", errors="replace")
        match = _CLIENT_INITIAL_RESPONSE.fullmatch(text)
        if match is None:
            raise SaslException("Invalid OAUTHBEARER client first message")
        properties: dict[str, str] = {}
        pairs = match.group("kvpairs")
        for pair in pairs.split(SEPARATOR)[:-1] if pairs else ():
            key, value = pair.split("=", 1)
            properties[key] = value
        auth = properties.pop(AUTH_KEY, None)
        if auth is None:
            raise SaslException("Invalid OAUTHBEARER client first message: 'auth' not specified")
        validate_extensions(properties)
        auth_match = _AUTH.fullmatch(auth)
        if auth_match is None:
            raise SaslException("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        scheme = auth_match.group("scheme")
        if scheme.lower() != "bearer":
            raise SaslException(f"Invalid scheme in OAUTHBEARER client first message: {scheme}")
        return cls(auth_match.group("token"), match.group("authzid") or "", properties)

    def to_bytes(self) -> bytes:
        authzid = f"a={self.authorization_id}" if self.authorization_id else ""
        extensions = SEPARATOR.join(f"{k}={v}" for k, v in self.extensions.items())
        if extensions:
            extensions = SEPARATOR + extensions
        return f"n,{authzid},{SEPARATOR}auth=Bearer {self.token_value}{extensions}{SEPARATOR}{SEPARATOR}".encode()


# ---- the server --------------------------------------------------------------------------------

def _json_error_response(status: str, scope: Optional[str], open_id_configuration: Optional[str]) -> str:
    # Kafka's exact text, spacing included
    text = '{"status":"%s"' % status
    if scope is not None:
        text += ', "scope":"%s"' % scope
    if open_id_configuration is not None:
        text += ', "openid-configuration":"%s"' % open_id_configuration
    return text + "}"


class OAuthBearerSaslServer:
    """One OAUTHBEARER exchange on the server: ``evaluate_response(token)``; when ``complete``,
    ``authorization_id`` (the token's principal), ``token``, ``extensions`` (those the validator
    accepted) and ``credential_expiration_ms`` (the token's expiry, which bounds the session)."""

    mechanism = OAUTHBEARER_MECHANISM

    def __init__(self, callback_handler: Any) -> None:
        self._callback_handler = callback_handler
        self.complete = False
        self.token: Any = None
        self.extensions: dict[str, str] = {}
        self._error_message: Optional[str] = None

    @property
    def authorization_id(self) -> str:
        if not self.complete:
            raise RuntimeError("Authentication exchange has not completed")
        return self.token.principal_name

    @property
    def credential_expiration_ms(self) -> Optional[int]:
        return int(self.token.lifetime_ms) if self.complete else None

    def evaluate_response(self, response: bytes) -> bytes:
        if response == BYTE_CONTROL_A and self._error_message is not None:
            logger.debug("Received %%x01 response from client after it received our error")
            raise SaslAuthenticationException(self._error_message)
        self._error_message = None
        try:
            client_response = OAuthBearerClientInitialResponse.parse(response)
        except SaslException as e:
            logger.debug("%s", e)
            raise
        return self._process(client_response.token_value, client_response.authorization_id,
                             client_response.extensions)

    def _handle(self, callback: Any) -> None:
        try:
            self._callback_handler.handle([callback])
        except UnsupportedCallbackException:
            raise
        except Exception as e:  # noqa: BLE001 - a validator's failure is the server's, not the client's
            message = f"{INTERNAL_ERROR_ON_SERVER}: {e}"
            logger.debug(message, exc_info=True)
            raise SaslException(message) from e

    def _process(self, token_value: str, authorization_id: str, extensions: Mapping[str, str]) -> bytes:
        callback = OAuthBearerValidatorCallback(token_value)
        try:
            self._handle(callback)
        except UnsupportedCallbackException as e:
            raise SaslException(f"{INTERNAL_ERROR_ON_SERVER}: {e}") from e
        token = callback.token
        if token is None:
            self._error_message = _json_error_response(callback.error_status or "invalid_token", callback.error_scope,
                                                       callback.error_open_id_configuration)
            logger.debug(self._error_message)
            return self._error_message.encode("utf-8")
        principal = getattr(token, "principal_name", None)
        lifetime_ms = getattr(token, "lifetime_ms", None)
        if not isinstance(principal, str) or not principal or not isinstance(lifetime_ms, int):
            # a validator's bug, not the client's: refused as an internal error
            raise SaslException(f"{INTERNAL_ERROR_ON_SERVER}: the validated token has no principal_name (str) "
                                f"or lifetime_ms (int)")
        if authorization_id and authorization_id != principal:
            raise SaslAuthenticationException(
                f"Authentication failed: Client requested an authorization id ({authorization_id}) that is "
                f"different from the token's principal name ({principal})")
        valid_extensions = self._process_extensions(token, extensions)
        self.token = token
        self.extensions = valid_extensions
        self.complete = True
        logger.debug("Successfully authenticate User=%s", principal)
        return b""

    def _process_extensions(self, token: Any, extensions: Mapping[str, str]) -> dict[str, str]:
        callback = OAuthBearerExtensionsValidatorCallback(token, extensions)
        try:
            self._handle(callback)
        except UnsupportedCallbackException:
            pass  # a validator that knows nothing of extensions accepts none
        if callback.invalid_extensions:
            listed = "; ".join(f"{name}: {message}" for name, message in callback.invalid_extensions.items())
            message = (f"Authentication failed: {len(callback.invalid_extensions)} extensions are invalid! "
                       f"They are: {listed}")
            logger.debug(message)
            raise SaslAuthenticationException(message)
        return dict(callback.validated_extensions)


# ---- plug-in classes ---------------------------------------------------------------------------

def load_class(path: str) -> type:
    """The class a dotted path (``package.module.ClassName``) names; ValueError saying why not."""
    module_name, _, class_name = path.strip().rpartition(".")
    if not module_name or not class_name:
        raise ValueError(f"{path} is not a dotted path package.module.ClassName")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - any import failure is a configuration error
        raise ValueError(f"cannot import {module_name}: {e}") from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"{module_name} has no class {class_name}")
    return cls


def new_callback_handler(class_path: Optional[str], default: type, configs: Mapping[str, Any],
                         jaas_config_entries: Sequence[Any]) -> Any:
    """A configured callback handler: an instance of ``class_path`` (a dotted path) or of
    ``default``. ValueError (or the handler's own exception) when it cannot be made."""
    cls = load_class(class_path) if class_path else default
    handler = cls()
    for method in ("configure", "handle"):
        if not callable(getattr(handler, method, None)):
            raise ValueError(f"{cls.__module__}.{cls.__qualname__} has no {method} method")
    handler.configure(configs, OAUTHBEARER_MECHANISM, list(jaas_config_entries))
    return handler


def oauthbearer_jaas_entries(entries: Sequence[Any]) -> list[Any]:
    """The OAuthBearerLoginModule entries of a JAAS config."""
    return [e for e in entries if e.login_module_name == OAUTHBEARER_LOGIN_MODULE]


def new_validator_callback_handler(class_path: Optional[str], configs: Mapping[str, Any],
                                   jaas_config_entries: Sequence[Any]) -> Any:
    return new_callback_handler(class_path, OAuthBearerUnsecuredValidatorCallbackHandler, configs,
                                jaas_config_entries)


# ---- the client --------------------------------------------------------------------------------

class OAuthBearerLogin:
    """The token a client logs in with, from its login callback handler, renewed once past
    its refresh time."""

    def __init__(self, callback_handler: Any, refresh_window_factor: float = 0.8,
                 refresh_window_jitter: float = 0.05, time: Time = Time.SYSTEM,
                 rng: Optional[random.Random] = None) -> None:
        self._handler = callback_handler
        self._factor = refresh_window_factor
        self._jitter = refresh_window_jitter
        self._time = time
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._token: Any = None
        self._refresh_at_ms = 0

    @classmethod
    def from_jaas(cls, entries: Sequence[Any], configs: Mapping[str, Any] | None = None,
                  login_callback_handler_class: Optional[str] = None) -> "OAuthBearerLogin":
        """The login of a JAAS config's OAuthBearerLoginModule entry; ValueError when it has none."""
        oauth = oauthbearer_jaas_entries(entries)
        if not oauth:
            raise ValueError(f"no {OAUTHBEARER_LOGIN_MODULE} entry")
        configs = dict(configs or {})
        handler = new_callback_handler(login_callback_handler_class, OAuthBearerUnsecuredLoginCallbackHandler,
                                       configs, oauth[:1])
        factor = configs.get("sasl.login.refresh.window.factor")
        jitter = configs.get("sasl.login.refresh.window.jitter")
        return cls(handler, 0.8 if factor is None else float(factor), 0.05 if jitter is None else float(jitter))

    def token(self) -> Any:
        with self._lock:
            now = self._time.milliseconds()
            if self._token is None or now >= self._refresh_at_ms:
                callback = OAuthBearerTokenCallback()
                self._handler.handle([callback])
                token = callback.token
                if token is None:
                    raise SaslException("No OAuth Bearer tokens in Subject's private credentials")
                self._token = token
                start = token.start_time_ms if token.start_time_ms is not None else now
                lifetime = max(0, int(token.lifetime_ms) - start)
                share = self._factor + self._jitter * self._rng.random()
                self._refresh_at_ms = start + int(lifetime * share)
            return self._token

    def extensions(self) -> dict[str, str]:
        callback = SaslExtensionsCallback()
        try:
            self._handler.handle([callback])
        except UnsupportedCallbackException:
            return {}
        except Exception as e:  # noqa: BLE001
            raise SaslException(f"SASL extensions could not be obtained: {e}") from e
        return dict(callback.extensions or {})


class OAuthBearerSaslClient:
    """The client's side of one exchange, as the project's SASL client drives mechanisms:
    ``evaluate_challenge(None)`` gives the first message; an empty answer completes, an error
    answer is acknowledged with ``\\x01`` (the server then fails the exchange)."""

    SEND_CLIENT_FIRST_MESSAGE, RECEIVE_SERVER_FIRST_MESSAGE, RECEIVE_SERVER_MESSAGE_AFTER_FAILURE, COMPLETE, \
        FAILED = range(5)

    def __init__(self, login: OAuthBearerLogin) -> None:
        self._login = login
        self.state = self.SEND_CLIENT_FIRST_MESSAGE
        self.error_response: Optional[str] = None

    @property
    def complete(self) -> bool:
        return self.state == self.COMPLETE

    def evaluate_challenge(self, challenge: Optional[bytes]) -> Optional[bytes]:
        try:
            if self.state == self.SEND_CLIENT_FIRST_MESSAGE:
                if challenge:
                    raise SaslAuthenticationException("Expected empty challenge")
                token = self._login.token()
                extensions = self._login.extensions()
                self.state = self.RECEIVE_SERVER_FIRST_MESSAGE
                return OAuthBearerClientInitialResponse(token.value, "", extensions).to_bytes()
            if self.state == self.RECEIVE_SERVER_FIRST_MESSAGE:
                if challenge:
                    self.error_response = bytes(challenge).decode("utf-8", errors="replace")
                    logger.debug("Sending %%x01 response to server after receiving an error: %s",
                                 self.error_response)
                    self.state = self.RECEIVE_SERVER_MESSAGE_AFTER_FAILURE
                    return BYTE_CONTROL_A
                self.state = self.COMPLETE
                return None
            raise SaslAuthenticationException(f"Unexpected challenge in Sasl client state {self.state}")
        except SaslAuthenticationException:
            self.state = self.FAILED
            raise
        except Exception as e:  # noqa: BLE001 - no token (a login that fails) fails this exchange only
            self.state = self.FAILED
            raise SaslAuthenticationException(f"SASL/OAUTHBEARER login failed: {e}") from e


__all__ = [
    "OAuthBearerClientInitialResponse", "OAuthBearerExtensionsValidatorCallback", "OAuthBearerLogin",
    "OAuthBearerSaslClient", "OAuthBearerSaslServer", "OAuthBearerTokenCallback", "OAuthBearerValidatorCallback",
    "SaslExtensionsCallback", "UnsupportedCallbackException", "load_class", "new_callback_handler",
    "new_validator_callback_handler", "validate_extensions",
]
