"""An OAUTHBEARER validator named by dotted path in the tests' broker configs
(``listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class``): it shows the
interface a real validator implements (kafka_py/clients/common/security/oauthbearer.py)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from kafka_py.clients.common.security.oauthbearer import OAuthBearerExtensionsValidatorCallback, OAuthBearerValidatorCallback
from kafka_py.clients.common.security.oauthbearer_unsecured import (
    OAuthBearerUnsecuredValidatorCallbackHandler,
    UnsupportedCallbackException,
)


class SingleSubjectValidatorCallbackHandler:
    """Takes the unsecured validator's verdict, then accepts only the subject of the JAAS option
    ``acceptedSubject``; of the extensions, ``tenant`` must be ``blue`` and the others pass."""

    def __init__(self) -> None:
        self._unsecured = OAuthBearerUnsecuredValidatorCallbackHandler()
        self.accepted_subject = ""

    def configure(self, configs: Mapping[str, Any], sasl_mechanism: str, jaas_config_entries: Sequence[Any]) -> None:
        self._unsecured.configure(configs, sasl_mechanism, jaas_config_entries)
        self.accepted_subject = jaas_config_entries[0].options["acceptedSubject"]

    def handle(self, callbacks: Sequence[Any]) -> None:
        for callback in callbacks:
            if isinstance(callback, OAuthBearerValidatorCallback):
                self._unsecured.handle([callback])
                if callback.token is not None and callback.token.principal_name != self.accepted_subject:
                    callback.error("invalid_token")
            elif isinstance(callback, OAuthBearerExtensionsValidatorCallback):
                for name, value in callback.input_extensions.items():
                    if name == "tenant" and value != "blue":
                        callback.invalid(name, "unknown tenant")
                    else:
                        callback.valid(name)
            else:
                raise UnsupportedCallbackException(callback)

    def close(self) -> None:
        pass


class StaticSubjectLoginCallbackHandler:
    """A login by dotted path (``sasl.login.callback.handler.class``): unsecured tokens for the
    subject of the JAAS option ``subject``, with the SASL extension ``origin=static``."""

    def configure(self, configs: Mapping[str, Any], sasl_mechanism: str, jaas_config_entries: Sequence[Any]) -> None:
        self.subject = jaas_config_entries[0].options["subject"]

    def handle(self, callbacks: Sequence[Any]) -> None:
        from kafka_py.clients.common.security.oauthbearer import OAuthBearerTokenCallback, SaslExtensionsCallback
        from kafka_py.clients.common.security.oauthbearer_unsecured import OAuthBearerUnsecuredLoginCallbackHandler
        from kafka_py.clients.common.security.jaas_config import AppConfigurationEntry

        for callback in callbacks:
            if isinstance(callback, OAuthBearerTokenCallback):
                unsecured = OAuthBearerUnsecuredLoginCallbackHandler()
                unsecured.configure({}, "OAUTHBEARER", [AppConfigurationEntry(
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", "required",
                    {"unsecuredLoginStringClaim_sub": self.subject})])
                callback.token = unsecured.token()
            elif isinstance(callback, SaslExtensionsCallback):
                callback.extensions = {"origin": "static"}
            else:
                raise UnsupportedCallbackException(callback)

    def close(self) -> None:
        pass
