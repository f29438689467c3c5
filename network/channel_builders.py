"""Port of clients/src/main/java/org/apache/kafka/common/network/ChannelBuilders.java,
SslChannelBuilder.java and SaslChannelBuilder.java (Kafka 2.8.2): on the server side, what a
listener needs to turn an accepted socket into an authenticated channel; on the client side
(``create_client_channel_builder``), what a broker's own connections to another broker's
listener need (ChannelBuilders.clientChannelBuilder): the TLS context and the SASL login.

PLAINTEXT listeners get no builder at all (their Processors keep the plain Selector).
For SSL, SASL_PLAINTEXT and SASL_SSL the builder is made once per listener when the
SocketServer starts, from the listener's view of the configuration (per-listener keys
first, see kafka_py/clients/common/security/listener_config.py); every configuration problem is a
ConfigException naming the key, so a broker with a bad key store or an unknown
mechanism does not start.

Both sides take a dynamic update of a TLS listener's stores (``listener.name.<l>.ssl.keystore.*``,
SslChannelBuilder as a ListenerReconfigurable): the listener's builder through the
SocketServer, the broker's client builder of the inter-broker listener through
DynamicBrokerConfig.client_channel_builder, which every inter-broker client shares.
"""
from __future__ import annotations

import logging
import socket
import ssl
import threading
from typing import TYPE_CHECKING, Any, Callable, Optional

from kafka_py.core.cluster.broker import SecurityProtocol
from kafka_py.network.request_channel import ANONYMOUS_PRINCIPAL
from kafka_py.network.ssl_transport_layer import SslTransportLayer
from kafka_py.clients.common.security.credential_cache import CredentialCache
from kafka_py.clients.common.security.jaas_config import AppConfigurationEntry, client_credentials, parse_jaas_config, plain_users
from kafka_py.clients.common.security.kerberos import GSSAPI_MECHANISM, KRB5_LOGIN_MODULE
from kafka_py.clients.common.security.listener_config import ListenerSecurityConfig, listener_config_prefix
from kafka_py.clients.common.security.oauthbearer import (
    OAuthBearerLogin,
    OAuthBearerSaslServer,
    new_validator_callback_handler,
    oauthbearer_jaas_entries,
)
from kafka_py.clients.common.security.oauthbearer_unsecured import OAUTHBEARER_LOGIN_MODULE, OAUTHBEARER_MECHANISM
from kafka_py.clients.common.security.plain import PLAIN_MECHANISM, PlainSaslServer
from kafka_py.clients.common.security.sasl_client_authenticator import SaslClientAuthenticator
from kafka_py.clients.common.security.sasl_server_authenticator import SaslServerAuthenticator
from kafka_py.clients.common.security.scram import ScramMechanism, ScramSaslServer
from kafka_py.clients.common.security.ssl_factory import RECONFIGURABLE_CONFIGS, SslFactory
from kafka_py.clients.common.security.ssl_principal_mapper import SslPrincipalMapper, distinguished_name
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.clients.common.errors import KafkaException
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.clients.common.security.kerberos import GssapiServerConfig, KerberosLogin
    from kafka_py.server.kafka_config import KafkaConfig

logger = logging.getLogger(__name__)

SUPPORTED_SASL_MECHANISMS = (GSSAPI_MECHANISM, PLAIN_MECHANISM, *ScramMechanism.mechanism_names(),
                             OAUTHBEARER_MECHANISM)
SASL_SERVER_CALLBACK_HANDLER_CLASS = "sasl.server.callback.handler.class"
SASL_LOGIN_CALLBACK_HANDLER_CLASS = "sasl.login.callback.handler.class"


def _mechanism_key(config: ListenerSecurityConfig, mechanism: str, key: str) -> str:
    return f"{config.prefix}{mechanism.lower()}.{key}"


def _oauthbearer_validator(config: ListenerSecurityConfig) -> Any:
    """The listener's OAUTHBEARER validator: the class named by
    listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class (the only form
    Kafka's SaslChannelBuilder reads), else the unsecured JWS validator, configured with the
    listener's OAuthBearerLoginModule options."""
    entries = []
    found = config.jaas_config(OAUTHBEARER_MECHANISM)
    if found is not None:
        key, text = found
        try:
            entries = oauthbearer_jaas_entries(parse_jaas_config(text))
        except ValueError as e:
            raise ConfigException(key, "[hidden]", f"invalid JAAS config: {e}") from None
    if not entries:
        # Kafka insists on an OAuthBearerLoginModule entry; without one every option is at its default.
        entries = [AppConfigurationEntry(OAUTHBEARER_LOGIN_MODULE, "required", {})]
    key = _mechanism_key(config, OAUTHBEARER_MECHANISM, SASL_SERVER_CALLBACK_HANDLER_CLASS)
    class_path = config.originals.get(key)
    class_path = str(class_path).strip() if class_path else None
    try:
        return new_validator_callback_handler(class_path, config.values, entries[:1])
    except Exception as e:  # noqa: BLE001 - whatever the handler raises, the listener cannot start
        raise ConfigException(key if class_path else f"{config.prefix}oauthbearer.sasl.jaas.config",
                              class_path or "[hidden]", f"listener {config.listener_name}: the OAUTHBEARER "
                              f"validator cannot be made: {e}") from None


def _gssapi_server_config(config: ListenerSecurityConfig) -> GssapiServerConfig:
    """The listener's GSSAPI: the broker's principal and keytab from its Krb5LoginModule entry
    (listener.name.<listener>.gssapi.sasl.jaas.config, most specific first), the service name
    and the principal.to.local rules; the keytab is read now, so a principal it has no key of
    stops the broker's start."""
    from kafka_py.clients.common.security.kerberos import (
        GssapiServerConfig,
        KerberosLogin,
        KerberosShortNamer,
        ServiceNameError,
        default_kerberos_realm,
    )
    service_key = "sasl.kerberos.service.name"
    service_name = config.get_for_mechanism(service_key, GSSAPI_MECHANISM)
    found = config.jaas_config(GSSAPI_MECHANISM)
    if found is None:
        raise ConfigException(f"{config.prefix}gssapi.sasl.jaas.config", None,
                              f"listener {config.listener_name}: SASL/GSSAPI needs a JAAS config with "
                              f"{KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true "
                              "keyTab=\"<path>\" principal=\"<service>/<host>@<REALM>\"")
    key, text = found
    try:
        login = KerberosLogin(parse_jaas_config(text), service_name)
    except ServiceNameError as e:
        raise ConfigException(config.key_name(service_key), service_name,
                              f"listener {config.listener_name}: GSSAPI needs one service name: {e}") from None
    except ValueError as e:
        raise ConfigException(key, "[hidden]", f"listener {config.listener_name}: {e}") from None
    rules_key = "sasl.kerberos.principal.to.local.rules"
    rules = config.get_for_mechanism(rules_key, GSSAPI_MECHANISM)
    try:
        short_namer = KerberosShortNamer.from_unparsed_rules(default_kerberos_realm(), rules)
    except ValueError as e:
        raise ConfigException(config.key_name(rules_key), rules, str(e)) from None
    try:
        login.login()
    except (ValueError, ImportError) as e:
        raise ConfigException(key, "[hidden]", f"listener {config.listener_name}: GSSAPI login failed: {e}") from None
    gssapi = GssapiServerConfig(login, short_namer)
    return gssapi


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
        # (version, error) -> the ApiVersions response of the listener, set by the SocketServer;
        # None: the authenticator's own, without features
        self.api_version_supplier: Any = None
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
        # A validator the broker cannot run must not be dropped silently: only OAUTHBEARER's is a plug-in here.
        for mechanism in mechanisms:
            key = _mechanism_key(config, mechanism, SASL_SERVER_CALLBACK_HANDLER_CLASS)
            if mechanism != OAUTHBEARER_MECHANISM and config.originals.get(key):
                raise ConfigException(key, config.originals[key], "kafka-py takes a server callback handler "
                                      f"for OAUTHBEARER only, not for {mechanism}")
        self.oauthbearer_validator = (_oauthbearer_validator(config) if OAUTHBEARER_MECHANISM in mechanisms
                                      else None)
        self.gssapi = _gssapi_server_config(config) if GSSAPI_MECHANISM in mechanisms else None
        # connections.max.reauth.ms per mechanism, most specific first, as Kafka's SaslChannelBuilder
        # reads it: listener.name.<listener>.<mechanism>.connections.max.reauth.ms, then the
        # listener's, then the broker's. 0: sessions never end (no re-authentication).
        self.connections_max_reauth_ms: dict[str, int] = {}
        for mechanism in mechanisms:
            value = config.get_for_mechanism("connections.max.reauth.ms", mechanism)
            self.connections_max_reauth_ms[mechanism] = max(0, int(value or 0))

    def mechanism_server(self, mechanism: str) -> Any:
        # The authenticator asks only for an enabled mechanism, and each enabled one was set up above.
        if mechanism == GSSAPI_MECHANISM:
            assert self.gssapi is not None
            return self.gssapi.new_server()
        if mechanism == PLAIN_MECHANISM:
            return PlainSaslServer(self.plain_users)
        if mechanism == OAUTHBEARER_MECHANISM:
            return OAuthBearerSaslServer(self.oauthbearer_validator)
        scram = ScramMechanism.for_mechanism_name(mechanism)
        assert scram is not None  # the supported mechanisms left are SCRAM's
        cache = self.credential_cache
        return ScramSaslServer(scram, lambda user: cache.get(mechanism, user),
                               lambda token_id: cache.token_credential(mechanism, token_id))

    def new_authenticator(self, connection_id: str, time: Time = Time.SYSTEM) -> SaslServerAuthenticator:
        authenticator = SaslServerAuthenticator(self.enabled_mechanisms, self.mechanism_server, connection_id,
                                                self.connections_max_reauth_ms, time)
        authenticator.api_version_supplier = self.api_version_supplier
        return authenticator


class ListenerSslReconfigurable:
    """The TLS part of a channel builder that a dynamic update of its listener's stores
    reconfigures (Kafka's SslChannelBuilder as a ListenerReconfigurable): the listener-prefixed
    store keys, their validation, and the swap of the SslFactory's context under a lock, so a
    connection being made takes either the old context or the new one, never a mixture."""

    listener_name: str
    ssl_factory: Optional[SslFactory]
    _ssl_lock: threading.Lock

    @property
    def reconfigurable_configs(self) -> frozenset[str]:
        if self.ssl_factory is None:
            return frozenset()
        prefix = listener_config_prefix(self.listener_name)
        return frozenset(prefix + key for key in RECONFIGURABLE_CONFIGS)

    def validate_reconfiguration(self, new_config: Any) -> None:
        if self.ssl_factory is None:
            return
        view = ListenerSecurityConfig.for_listener(new_config, self.listener_name)
        if self.ssl_factory.configs_changed(view):
            self.ssl_factory.validate_reconfiguration(view)

    def _reconfigure_ssl(self, new_config: Any, reload_only: bool) -> Optional[ssl.SSLContext]:
        """Take the stores ``new_config`` names when this listener's store settings changed
        (ConfigException if they cannot replace the current ones); ``reload_only``: when they did
        not change, read again the store files rewritten since they were loaded
        (DynamicBrokerConfig.processListenerReconfigurable's two cases). The new context when
        it was replaced, else None."""
        if self.ssl_factory is None:
            return None
        view = ListenerSecurityConfig.for_listener(new_config, self.listener_name)
        if reload_only == self.ssl_factory.configs_changed(view):
            return None
        with self._ssl_lock:
            if not self.ssl_factory.reconfigure(view):
                return None
        logger.info("Created new %s SSL context for listener %s with keystore %s truststore %s",
                    self.ssl_factory.mode, self.listener_name, self.ssl_factory.ssl_engine_factory.keystore,
                    self.ssl_factory.ssl_engine_factory.truststore)
        return self.ssl_factory.context


class ChannelBuilder(ListenerSslReconfigurable):
    """Builds the transport and authenticator of each new connection of one listener."""

    def __init__(self, listener_name: str, security_protocol: SecurityProtocol,
                 ssl_context: Optional[ssl.SSLContext], principal_mapper: Optional[SslPrincipalMapper],
                 sasl: Optional[SaslServerConfig], failed_authentication_delay_ms: int,
                 max_authentication_receive_size: int, ssl_factory: Optional[SslFactory] = None) -> None:
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self.ssl_context = ssl_context
        self.ssl_factory = ssl_factory
        # ssl_context is replaced by a dynamic key store update while Processors build transports
        self._ssl_lock = threading.Lock()
        self.principal_mapper = principal_mapper
        self.sasl = sasl
        self.failed_authentication_delay_ms = failed_authentication_delay_ms
        self.max_authentication_receive_size = max_authentication_receive_size

    def build_transport(self, sock: socket.socket) -> Optional[SslTransportLayer]:
        with self._ssl_lock:
            context = self.ssl_context
        if context is None:
            return None
        return SslTransportLayer(context, sock)

    # ---- ListenerReconfigurable (SslChannelBuilder): the listener's stores at runtime -------
    # A new context serves the connections accepted after it; open ones keep the context
    # (and the certificate) their handshake used.

    def reconfigure(self, new_config: Any, reload_only: bool = False) -> None:
        """The SocketServer's call for this listener (see ``_reconfigure_ssl``)."""
        context = self._reconfigure_ssl(new_config, reload_only)
        if context is not None:
            with self._ssl_lock:
                self.ssl_context = context

    def build_authenticator(self, connection_id: str, time: Time = Time.SYSTEM) -> Optional[SaslServerAuthenticator]:
        return None if self.sasl is None else self.sasl.new_authenticator(connection_id, time)

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
    ssl_context = ssl_factory = None
    mapper = None
    if security_protocol in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL):
        ssl_factory = SslFactory(view, "server")
        ssl_context = ssl_factory.context
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
                          int(view.get("sasl.server.max.receive.size") or 524288), ssl_factory)


# ---- the client side: a broker connecting to another broker's listener --------------------

class ClientChannelBuilder(ListenerSslReconfigurable):
    """How a broker's blocking client (kafka_py/clients/network_client.py) secures a connection
    to one listener: TLS with ``ssl_context`` (the listener's key store as the client
    certificate, its trust store to verify the server, the host name checked when
    ``ssl.endpoint.identification.algorithm`` is https), then SASL with the broker's own
    user name and password. None of either for PLAINTEXT (no builder at all).

    Made with an ``ssl_factory`` (the broker's inter-broker clients), the context is the
    factory's current one, replaced by a dynamic update of the listener's stores
    (``reconfigure``, ``reload_updated_files``); each connection takes the context when it is
    made. Made with a fixed ``ssl_context`` (the tools), it never changes."""

    def __init__(self, listener_name: str, security_protocol: SecurityProtocol,
                 ssl_context: Optional[ssl.SSLContext], sasl_mechanism: Optional[str],
                 username: Optional[str] = None, password: Optional[str] = None,
                 sasl_extensions: Optional[dict[str, str]] = None, ssl_factory: Optional[SslFactory] = None) -> None:
        self.listener_name = listener_name
        self.security_protocol = security_protocol
        self.ssl_factory = ssl_factory
        self._ssl_lock = threading.Lock()
        self._ssl_context = ssl_factory.context if ssl_factory is not None else ssl_context
        self.sasl_mechanism = sasl_mechanism
        self._username = username
        self._password = password
        # SCRAM extensions: ``tokenauth=true`` when the user name is a delegation token's id
        self._sasl_extensions = sasl_extensions

    # The login of a mechanism without a password, shared by the builder's connections:
    # OAUTHBEARER's OAuthBearerLogin the tokens come from, GSSAPI's KerberosLogin
    login: Optional[OAuthBearerLogin | KerberosLogin] = None

    @property
    def ssl_context(self) -> Optional[ssl.SSLContext]:
        with self._ssl_lock:
            return self._ssl_context

    def wrap(self, sock: socket.socket, host: str) -> ssl.SSLSocket:
        """The connected, non-blocking ``sock`` under TLS; the handshake is the caller's to drive."""
        context = self.ssl_context
        if context is None:
            raise KafkaException(f"Listener {self.listener_name} ({self.security_protocol.name}) does not use TLS")
        return context.wrap_socket(sock, server_side=False, server_hostname=host or None,
                                   do_handshake_on_connect=False)

    # ---- BrokerReconfigurable, through DynamicBrokerConfig.client_channel_builder ----------

    def reconfigure(self, old_config: Any, new_config: Any) -> None:
        try:
            context = self._reconfigure_ssl(new_config, reload_only=False)
        except ConfigException as e:
            # validated before the config was taken; a store changed on disk since then
            logger.error("The client side of listener %s keeps its key and trust stores: %s", self.listener_name, e)
            return
        if context is not None:
            with self._ssl_lock:
                self._ssl_context = context

    def reload_updated_files(self, new_config: Any) -> None:
        """Store files rewritten in place under unchanged settings are read again."""
        context = self._reconfigure_ssl(new_config, reload_only=True)
        if context is not None:
            with self._ssl_lock:
                self._ssl_context = context

    def new_authenticator(self, host: str = "") -> Optional[SaslClientAuthenticator]:
        """``host``: the one connected to (GSSAPI asks for a ticket to the service on it)."""
        if self.sasl_mechanism is None:
            return None
        if self.login is not None:
            # GSSAPI and OAUTHBEARER log in with the login, without a user name or password
            return SaslClientAuthenticator(self.sasl_mechanism,
                                           None, None,  # type: ignore[arg-type] # str there: unused with a login
                                           login=self.login, host=host)
        # PLAIN and SCRAM: both builders' makers (create_client_channel_builder, the tools'
        # command config) give them the user name and password from the JAAS config
        username, password = self._username, self._password
        if username is None or password is None:
            raise KafkaException(f"SASL/{self.sasl_mechanism} on listener {self.listener_name} needs a login "
                                 "or a user name and password")
        return SaslClientAuthenticator(self.sasl_mechanism, username, password, self._sasl_extensions)

    def __repr__(self) -> str:
        return (f"ClientChannelBuilder(listener={self.listener_name}, protocol={self.security_protocol.name}, "
                f"mechanism={self.sasl_mechanism})")


def create_client_channel_builder(config: Any, listener_name: str, security_protocol: SecurityProtocol,
                                  sasl_mechanism: Optional[str]) -> Optional[ClientChannelBuilder]:
    """The client side of ``listener_name`` as the broker's own connections use it; None for
    PLAINTEXT. ConfigException naming the key when the listener's settings cannot make one:
    the mechanism not enabled on the listener, no user name and password in its JAAS text,
    an unreadable key or trust store."""
    if security_protocol is SecurityProtocol.PLAINTEXT:
        return None
    view = ListenerSecurityConfig.for_listener(config, listener_name)
    ssl_factory = None
    if security_protocol in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL):
        ssl_factory = SslFactory(view, "client")
    ssl_context = None
    mechanism = username = password = None
    if security_protocol in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL):
        mechanism = sasl_mechanism
        enabled = [m for m in (view.get("sasl.enabled.mechanisms") or []) if m]
        if mechanism not in enabled:
            raise ConfigException("sasl.mechanism.inter.broker.protocol", mechanism,
                                  "sasl.mechanism.inter.broker.protocol must be included in "
                                  f"{view.key_name('sasl.enabled.mechanisms')} when SASL is used for "
                                  f"inter-broker communication (listener {listener_name} enables {enabled})")
        if mechanism not in SUPPORTED_SASL_MECHANISMS:
            raise ConfigException("sasl.mechanism.inter.broker.protocol", mechanism,
                                  f"kafka-py supports {', '.join(SUPPORTED_SASL_MECHANISMS)}")
        if mechanism == GSSAPI_MECHANISM:
            builder = ClientChannelBuilder(listener_name, security_protocol, ssl_context, mechanism,
                                           ssl_factory=ssl_factory)
            login = builder.login = _gssapi_server_config(view).login
            found = view.jaas_config(mechanism)
            assert found is not None  # _gssapi_server_config raised the ConfigException without one
            try:
                login.login_initiator()
            except (ValueError, ImportError) as e:
                raise ConfigException(found[0], "[hidden]", f"listener {listener_name}: inter-broker SASL/GSSAPI "
                                      f"cannot log in: {e}") from None
            return builder
        found = view.jaas_config(mechanism)
        if found is None:
            raise ConfigException(f"{view.prefix}{mechanism.lower()}.sasl.jaas.config", None,
                                  f"listener {listener_name}: inter-broker SASL/{mechanism} needs a JAAS config "
                                  "with the broker's own username=\"...\" password=\"...\"")
        key, text = found
        if mechanism == OAUTHBEARER_MECHANISM:
            builder = ClientChannelBuilder(listener_name, security_protocol, ssl_context, mechanism,
                                           ssl_factory=ssl_factory)
            builder.login = oauthbearer_login(view, key, text)
            return builder
        try:
            credentials = client_credentials(parse_jaas_config(text))
        except ValueError as e:
            raise ConfigException(key, "[hidden]", f"invalid JAAS config: {e}") from None
        if credentials is None:
            raise ConfigException(key, "[hidden]", f"listener {listener_name}: inter-broker SASL/{mechanism} "
                                  "needs the broker's own username and password options in the JAAS config")
        username, password = credentials
    return ClientChannelBuilder(listener_name, security_protocol, ssl_context, mechanism, username, password,
                                ssl_factory=ssl_factory)


def oauthbearer_login(view: ListenerSecurityConfig, key: str, text: str) -> OAuthBearerLogin:
    """The broker's own OAUTHBEARER login on a listener: its OAuthBearerLoginModule options
    (``unsecuredLogin*``) through the unsecured login callback handler, or the class named by
    ``listener.name.<listener>.oauthbearer.sasl.login.callback.handler.class`` (else
    ``sasl.login.callback.handler.class``). A first token is made now, so a login that cannot
    make one stops the broker's start."""
    handler_key = _mechanism_key(view, OAUTHBEARER_MECHANISM, SASL_LOGIN_CALLBACK_HANDLER_CLASS)
    class_path = view.get_for_mechanism(SASL_LOGIN_CALLBACK_HANDLER_CLASS, OAUTHBEARER_MECHANISM)
    configs = dict(view.values)
    for name in ("sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter"):
        configs[name] = view.get_for_mechanism(name, OAUTHBEARER_MECHANISM)
    try:
        login = OAuthBearerLogin.from_jaas(parse_jaas_config(text), configs, class_path or None)
        login.token()
    except Exception as e:  # noqa: BLE001 - any failure to make a token is a configuration error
        raise ConfigException(handler_key if class_path else key, class_path or "[hidden]",
                              f"listener {view.listener_name}: inter-broker SASL/OAUTHBEARER cannot log in: {e}"
                              ) from None
    return login


def inter_broker_client_channel_builder(config: KafkaConfig, control_plane: bool = False
                                        ) -> Optional[ClientChannelBuilder]:
    """The client channel builder of the inter-broker listener (``inter.broker.listener.name`` or
    ``security.inter.broker.protocol``) with ``sasl.mechanism.inter.broker.protocol``: what the
    replica fetchers and controlled shutdown connect with. ``control_plane``: the
    control-plane listener when one is configured (the controller's channel and the
    broker-to-controller channel), as Kafka picks it.

    A running broker's config leads to its DynamicBrokerConfig, which hands every caller the
    one shared, reconfigurable builder of that listener; a config of no running broker gets a
    builder of its own."""
    listener = config.inter_broker_listener_name
    protocol = config.inter_broker_security_protocol
    if control_plane:
        # both set or both None: control.plane.listener.name and its protocol in the map
        control_plane_listener = config.control_plane_listener_name
        control_plane_protocol = config.control_plane_security_protocol
        if control_plane_listener is not None and control_plane_protocol is not None:
            listener, protocol = control_plane_listener, control_plane_protocol
    if protocol is SecurityProtocol.PLAINTEXT:
        return None
    mechanism = config.sasl_mechanism_inter_broker_protocol
    dynamic_config = getattr(config, "dynamic_config", None)
    if dynamic_config is None:
        return create_client_channel_builder(config, listener.value, protocol, mechanism)
    return dynamic_config.client_channel_builder(
        listener.value, lambda current: create_client_channel_builder(current, listener.value, protocol, mechanism))
