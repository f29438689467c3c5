"""Port of clients/src/main/java/org/apache/kafka/common/network/ChannelBuilders.java,
SslChannelBuilder.java and SaslChannelBuilder.java (Kafka 2.8.2), server side: what a
listener needs to turn an accepted socket into an authenticated channel.

PLAINTEXT listeners get no builder at all (their Processors keep the plain Selector).
For SSL, SASL_PLAINTEXT and SASL_SSL the builder is made once per listener when the
SocketServer starts, from the listener's view of the configuration (per-listener keys
first, see kafka_py/security/listener_config.py); every configuration problem is a
ConfigException naming the key, so a broker with a bad key store or an unknown
mechanism does not start.
"""
from __future__ import annotations

import logging
import socket
import ssl
from typing import Any, Callable, Optional

from kafka_py.cluster.broker import SecurityProtocol
from kafka_py.network.request_channel import ANONYMOUS_PRINCIPAL
from kafka_py.network.ssl_transport_layer import SslTransportLayer
from kafka_py.security.credential_cache import CredentialCache
from kafka_py.security.jaas_config import parse_jaas_config, plain_users
from kafka_py.security.listener_config import ListenerSecurityConfig
from kafka_py.security.plain import PLAIN_MECHANISM, PlainSaslServer
from kafka_py.security.sasl_server_authenticator import SaslServerAuthenticator
from kafka_py.security.scram import ScramMechanism, ScramSaslServer
from kafka_py.security.ssl_factory import create_server_context
from kafka_py.security.ssl_principal_mapper import SslPrincipalMapper, distinguished_name
from kafka_py.utils.config_def import ConfigException

logger = logging.getLogger(__name__)

SUPPORTED_SASL_MECHANISMS = (PLAIN_MECHANISM, *ScramMechanism.mechanism_names())


class SaslServerConfig:
    """A SASL listener's mechanisms and where each finds its users."""

    def __init__(self, config: ListenerSecurityConfig, credential_cache: CredentialCache) -> None:
        mechanisms = [m for m in (config.get("sasl.enabled.mechanisms") or []) if m]
        unsupported = [m for m in mechanisms if m not in SUPPORTED_SASL_MECHANISMS]
        if not mechanisms or unsupported:
            raise config.error("sasl.enabled.mechanisms",
                               (f"unsupported SASL mechanisms {unsupported}" if unsupported else "no mechanism enabled")
                               + f"; kafka-py supports {', '.join(SUPPORTED_SASL_MECHANISMS)}")
        self.enabled_mechanisms = mechanisms
        self.credential_cache = credential_cache
        self.plain_users: dict[str, str] = {}
        if PLAIN_MECHANISM in mechanisms:
            found = config.jaas_config(PLAIN_MECHANISM)
            key = f"{config.prefix}plain.sasl.jaas.config"
            if found is None:
                raise ConfigException(key, None, f"listener {config.listener_name}: SASL/PLAIN needs a JAAS config "
                                      "with org.apache.kafka.common.security.plain.PlainLoginModule "
                                      "and user_<name>=\"<password>\" options")
            key, text = found
            try:
                self.plain_users = plain_users(parse_jaas_config(text))
            except ValueError as e:
                raise ConfigException(key, "[hidden]", f"invalid JAAS config: {e}") from None
        reauth = config.get("connections.max.reauth.ms") or 0
        if reauth:
            raise config.error("connections.max.reauth.ms",
                               "re-authentication (KIP-368) is not supported by kafka-py; allowed value: 0")
        self.session_lifetime_ms = 0

    def mechanism_server(self, mechanism: str) -> Any:
        if mechanism == PLAIN_MECHANISM:
            return PlainSaslServer(self.plain_users)
        scram = ScramMechanism.for_mechanism_name(mechanism)
        cache = self.credential_cache
        return ScramSaslServer(scram, lambda user: cache.get(mechanism, user))

    def new_authenticator(self, connection_id: str) -> SaslServerAuthenticator:
        return SaslServerAuthenticator(self.enabled_mechanisms, self.mechanism_server, connection_id,
                                       self.session_lifetime_ms)


class ChannelBuilder:
    """Builds the transport and authenticator of each new connection of one listener."""

    def __init__(self, listener_name: str, security_protocol: SecurityProtocol,
                 ssl_context: Optional[ssl.SSLContext], principal_mapper: Optional[SslPrincipalMapper],
                 sasl: Optional[SaslServerConfig], failed_authentication_delay_ms: int,
                 max_authentication_receive_size: int) -> None:
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self.ssl_context = ssl_context
        self.principal_mapper = principal_mapper
        self.sasl = sasl
        self.failed_authentication_delay_ms = failed_authentication_delay_ms
        self.max_authentication_receive_size = max_authentication_receive_size

    def build_transport(self, sock: socket.socket) -> Optional[SslTransportLayer]:
        if self.ssl_context is None:
            return None
        return SslTransportLayer(self.ssl_context, sock)

    def build_authenticator(self, connection_id: str) -> Optional[SaslServerAuthenticator]:
        return None if self.sasl is None else self.sasl.new_authenticator(connection_id)

    def ssl_principal(self, peer_certificate: Optional[dict]) -> str:
        """Kafka's DefaultKafkaPrincipalBuilder for SSL: the mapped DN, ANONYMOUS without a certificate."""
        if not peer_certificate or self.principal_mapper is None:
            return ANONYMOUS_PRINCIPAL
        dn = distinguished_name(peer_certificate.get("subject", ()))
        return "User:" + self.principal_mapper.get_name(dn)


def create_channel_builder(config: Any, listener_name: str, security_protocol: SecurityProtocol,
                           credential_cache: CredentialCache) -> Optional[ChannelBuilder]:
    """The listener's ChannelBuilder; None for PLAINTEXT. ConfigException for a bad configuration."""
    if security_protocol is SecurityProtocol.PLAINTEXT:
        return None
    view = ListenerSecurityConfig.for_listener(config, listener_name)
    ssl_context = None
    mapper = None
    if security_protocol in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL):
        ssl_context = create_server_context(view)
        rules = view.get_string("ssl.principal.mapping.rules") or "DEFAULT"
        try:
            mapper = SslPrincipalMapper(rules)
        except ValueError as e:
            raise view.error("ssl.principal.mapping.rules", str(e)) from None
    sasl = None
    if security_protocol in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL):
        sasl = SaslServerConfig(view, credential_cache)
    return ChannelBuilder(listener_name, security_protocol, ssl_context, mapper, sasl,
                          int(view.get("connection.failed.authentication.delay.ms") or 0),
                          int(view.get("sasl.server.max.receive.size") or 524288))
