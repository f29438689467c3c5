"""Port of the authentication exceptions of clients/src/main/java/org/apache/kafka/common/errors
(SaslAuthenticationException, IllegalSaslStateException, UnsupportedSaslMechanismException,
SslAuthenticationException; Kafka 2.8.2), each tied to the error code the client gets."""
from __future__ import annotations

from kafka_py.protocol.errors import Errors


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
