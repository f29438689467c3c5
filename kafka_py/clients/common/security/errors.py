"""Port of the authentication exceptions of clients/src/main/java/org/apache/kafka/common/errors
(SaslAuthenticationException, IllegalSaslStateException, UnsupportedSaslMechanismException,
SslAuthenticationException; Kafka 2.8.2), each tied to the error code the client gets, and of
javax.security.sasl.SaslException: a mechanism's failure whose text must not reach the client
(the authenticator answers it with a fixed message)."""
from __future__ import annotations

from kafka_py.clients.common.protocol.errors import Errors


class AuthenticationException(Exception):
    error = Errors.SASL_AUTHENTICATION_FAILED


class SaslAuthenticationException(AuthenticationException):
    error = Errors.SASL_AUTHENTICATION_FAILED


class IllegalSaslStateException(AuthenticationException):
    error = Errors.ILLEGAL_SASL_STATE


class UnsupportedSaslMechanismException(AuthenticationException):
    error = Errors.UNSUPPORTED_SASL_MECHANISM


class SslAuthenticationException(AuthenticationException):
    error = None  # no wire code: TLS failures close the connection


class SaslException(Exception):
    """A SASL mechanism refused the exchange; unlike SaslAuthenticationException its message is
    for the broker's log only."""
