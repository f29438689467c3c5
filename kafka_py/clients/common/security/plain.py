"""Port of clients/src/main/java/org/apache/kafka/common/security/plain/internals/PlainSaslServer.java
and PlainServerCallbackHandler.java (Kafka 2.8.2): SASL/PLAIN (RFC 4616).

The client sends one token, ``authzid NUL authcid NUL password``; the server answers
with an empty token or fails. Users and passwords come from the listener's JAAS config
(``user_<name>="<password>"`` options of PlainLoginModule). Pure code: no sockets.
"""
from __future__ import annotations

import hmac
from typing import Callable, Mapping, Optional

from kafka_py.clients.common.security.errors import SaslAuthenticationException

PLAIN_MECHANISM = "PLAIN"


def parse_plain_token(token: bytes) -> tuple[str, str, str]:
    """(authorization id, user name, password); SaslAuthenticationException when malformed."""
    try:
        text = bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        raise SaslAuthenticationException("Invalid SASL/PLAIN response: not UTF-8") from None
    parts = text.split("\0")
    if len(parts) != 3:
        raise SaslAuthenticationException(
            f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
    authzid, username, password = parts
    if not username:
        raise SaslAuthenticationException("Authentication failed: username not specified")
    if not password:
        raise SaslAuthenticationException("Authentication failed: password not specified")
    return authzid, username, password


def plain_client_token(username: str, password: str) -> bytes:
    return b"\0" + username.encode("utf-8") + b"\0" + password.encode("utf-8")


class PlainSaslServer:
    """One PLAIN exchange: ``evaluate_response(token)`` once; then ``authorization_id``."""

    mechanism = PLAIN_MECHANISM

    def __init__(self, users: Mapping[str, str] | Callable[[str], Optional[str]]) -> None:
        self._lookup = users.get if isinstance(users, Mapping) else users
        self.complete = False
        self.authorization_id: Optional[str] = None

    def evaluate_response(self, token: bytes) -> bytes:
        if self.complete:
            raise SaslAuthenticationException("Authentication failed: PLAIN exchange already completed")
        authzid, username, password = parse_plain_token(token)
        expected = self._lookup(username)
        # compare_digest on both branches so an unknown user takes as long as a wrong password.
        if not hmac.compare_digest(password.encode("utf-8"), (expected or "\0" + password).encode("utf-8")) \
                or expected is None:
            raise SaslAuthenticationException("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationException(
                "Authentication failed: Client requested an authorization id that is different from username")
        self.authorization_id = username
        self.complete = True
        return b""
