"""Ports of the OAUTHBEARER callbacks of clients/src/main/java/org/apache/kafka/common/security/
(Kafka 2.8.2): oauthbearer/OAuthBearerValidatorCallback.java,
oauthbearer/OAuthBearerExtensionsValidatorCallback.java, oauthbearer/OAuthBearerTokenCallback.java
and auth/SaslExtensionsCallback.java, with the extension checks of
oauthbearer/internals/OAuthBearerClientInitialResponse.java (``validate_extensions``).

What the SASL server and client (kafka_py/clients/common/security/oauthbearer.py) hand to a callback handler,
the unsecured ones (kafka_py/clients/common/security/oauthbearer_unsecured.py) or a user's, and read back.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from kafka_py.clients.common.security.errors import SaslException

AUTH_KEY = "auth"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
EXTENSION_KEY_PATTERN = re.compile(_KEY)
EXTENSION_VALUE_PATTERN = re.compile(_VALUE)


def validate_extensions(extensions: Optional[Mapping[str, str]]) -> None:
    """RFC 7628 section 3.1: extension names are letters, values printable ASCII (and blanks);
    ``auth`` is reserved."""
    if not extensions:
        return
    if AUTH_KEY in extensions:
        raise SaslException(f"Extension name {AUTH_KEY} is invalid")
    for name, value in extensions.items():
        if not EXTENSION_KEY_PATTERN.fullmatch(name):
            raise SaslException(f"Extension name {name} is invalid")
        if not EXTENSION_VALUE_PATTERN.fullmatch(value):
            raise SaslException(f"Extension value ({value}) for extension {name} is invalid")


class OAuthBearerValidatorCallback:
    """Asks a validator about one token value; it answers with ``token`` or ``error(...)``."""

    def __init__(self, token_value: str) -> None:
        if not token_value:
            raise ValueError("token value must not be empty")
        self.token_value = token_value
        self._token: Any = None
        self.error_status: Optional[str] = None
        self.error_scope: Optional[str] = None
        self.error_open_id_configuration: Optional[str] = None

    @property
    def token(self) -> Any:
        return self._token

    @token.setter
    def token(self, token: Any) -> None:
        self._token = token
        self.error_status = self.error_scope = self.error_open_id_configuration = None

    def error(self, status: str, scope: Optional[str] = None, open_id_configuration: Optional[str] = None) -> None:
        if not status:
            raise ValueError("error status must not be empty")
        self.error_status = status
        self.error_scope = scope
        self.error_open_id_configuration = open_id_configuration
        self._token = None


class OAuthBearerExtensionsValidatorCallback:
    """Asks a validator which of the client's extensions it accepts (after the token passed)."""

    def __init__(self, token: Any, extensions: Mapping[str, str]) -> None:
        self.token = token
        self.input_extensions = dict(extensions)
        self.validated_extensions: dict[str, str] = {}
        self.invalid_extensions: dict[str, str] = {}

    def valid(self, name: str) -> None:
        if name not in self.input_extensions:
            raise ValueError(f"Extension {name} was not found in the original extensions")
        self.validated_extensions[name] = self.input_extensions[name]

    def invalid(self, name: str, message: Optional[str] = None) -> None:
        self.invalid_extensions[name] = message if message is not None else ""


class OAuthBearerTokenCallback:
    """Asks a login callback handler for the token to log in with."""

    def __init__(self) -> None:
        self.token: Any = None


class SaslExtensionsCallback:
    """Asks a login callback handler for the SASL extensions to send."""

    def __init__(self) -> None:
        self.extensions: dict[str, str] = {}
