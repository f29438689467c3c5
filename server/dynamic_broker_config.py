"""Port of core/src/main/scala/kafka/server/DynamicBrokerConfig.scala (simplified).

Broker configs come in four layers, highest precedence first:

1. DYNAMIC_BROKER_CONFIG: /config/brokers/<id> in ZooKeeper (resource name "<id>");
2. DYNAMIC_DEFAULT_BROKER_CONFIG: /config/brokers/<default> (resource name "");
3. STATIC_BROKER_CONFIG: server.properties and ``--override``;
4. DEFAULT_CONFIG: KafkaConfig's own defaults.

``DynamicBrokerConfig`` keeps the two dynamic layers and the ``KafkaConfig`` they make with
the static properties (``KafkaConfig.with_dynamic_overrides``). When a layer changes (read
from ZooKeeper at startup, then on every /config/changes notification naming
brokers/<id> or brokers/<default>), the new config replaces the current one and every
``BrokerReconfigurable`` interested in a changed key is told. ``DynamicLogConfig`` is the one
kafka-py has: it turns the broker's log.* defaults into new topic-config defaults for the
LogManager and every live log (keeping each log's own topic overrides on top).

A TLS listener's key and trust stores (``listener.name.<l>.ssl.keystore.location`` and the
other DYNAMIC_SECURITY_CONFIGS, only with the listener prefix) are the SocketServer's to
reconfigure: its channel builders validate the new stores before the change is taken, and
``reload_updated_files_without_config_change`` reads store files rewritten in place again.
The same keys of the inter-broker (and control-plane) listener also reach the broker's own
client side of it: ``client_channel_builder`` keeps one client channel builder per listener,
shared by the replica fetchers, the controller's channel, the broker-to-controller channel and
controlled shutdown, and registered here as a reconfigurable, so every connection they open
after an update presents the new key store (Kafka registers each client's SslChannelBuilder
as a Reconfigurable; one shared builder has the same effect without a registration per
fetcher thread).

Dynamic password configs (a listener's store passwords) are kept in ZooKeeper encrypted
with ``password.encoder.secret`` (kafka_py/core/utils/password_encoder.py), and refused, as in
Kafka, when the broker has no secret; ``password.encoder.old.secret`` re-encrypts them
with the new secret at startup.

Not ported: listener / thread-pool / metrics reconfiguration, custom (undeclared) dynamic
keys.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from kafka_py.log.log_config import LogConfig
from kafka_py.server.kafka_config import (
    CONFIG_DEF,
    DYNAMIC_BROKER_CONFIGS,
    DYNAMIC_LOG_CONFIGS,
    DYNAMIC_SECURITY_CONFIGS,
    PER_BROKER_CONFIGS,
    KafkaConfig,
)
from kafka_py.clients.common.config.config_def import ConfigDef, ConfigException, Password, Type
from kafka_py.core.utils.password_encoder import PasswordEncoder
from kafka_py.core.zk.zk_data import ConfigEntityName, ConfigType

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.log.log_manager import LogManager
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)

_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)\Z")


def base_config_name(name: str) -> str:
    """``listener.name.<l>.<key>`` -> ``<key>``; any other name unchanged."""
    match = _LISTENER_CONFIG.match(name)
    return match.group(1) if match else name


def is_password_config(name: str) -> bool:
    """A dynamic config whose value is a password (DynamicBrokerConfig.isPasswordConfig)."""
    base = base_config_name(name)
    key = CONFIG_DEF.config_keys.get(base)
    return key is not None and key.type is Type.PASSWORD and base in DYNAMIC_BROKER_CONFIGS


def config_value_as_string(name: str, value: Any) -> str | None:
    """A config value in its .properties form, as ZooKeeper and DescribeConfigs hold it."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Password):
        return value.value
    key = CONFIG_DEF.config_keys.get(base_config_name(name))
    return ConfigDef.convert_to_string(value, key.type if key is not None else None)


def _string_map(props: Mapping[str, Any]) -> dict[str, str]:
    result = {}
    for name, value in props.items():
        text = config_value_as_string(name, value)
        if text is not None:
            result[name] = text
    return result


class BrokerReconfigurable(Protocol):
    """An internal component told after the broker config changed (Kafka's trait of that name)."""

    @property
    def reconfigurable_configs(self) -> Iterable[str]:
        ...

    def validate_reconfiguration(self, new_config: KafkaConfig) -> None:
        ...

    def reconfigure(self, old_config: KafkaConfig, new_config: KafkaConfig) -> None:
        ...


class DynamicBrokerConfig:
    def __init__(self, kafka_config: KafkaConfig) -> None:
        self._lock = threading.RLock()
        self._current_config = kafka_config
        #: The static layer as strings (DescribeConfigs' STATIC_BROKER_CONFIG synonyms).
        self.static_broker_configs: dict[str, str] = _string_map(kafka_config.static_originals)
        #: KafkaConfig's defaults as strings (DEFAULT_CONFIG synonyms); keys without one are absent.
        self.static_default_configs: dict[str, str] = _string_map(
            {k.name: k.default_value for k in CONFIG_DEF.config_keys.values() if k.has_default})
        self._dynamic_broker_configs: dict[str, str] = _string_map(kafka_config.dynamic_broker_configs)
        self._dynamic_default_configs: dict[str, str] = _string_map(kafka_config.dynamic_default_configs)
        self._broker_reconfigurables: list[BrokerReconfigurable] = []
        # listener name -> the broker's client channel builder of it (see client_channel_builder)
        self._client_channel_builders: dict[str, Any] = {}
        self._password_encoder = self._maybe_create_password_encoder(kafka_config.get("password.encoder.secret"))

    # -- views ---------------------------------------------------------------------------------

    @property
    def broker_id(self) -> int:
        return self._current_config.broker_id

    @property
    def current_kafka_config(self) -> KafkaConfig:
        with self._lock:
            return self._current_config

    @property
    def current_dynamic_broker_configs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._dynamic_broker_configs)

    @property
    def current_dynamic_default_configs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._dynamic_default_configs)

    # -- start-up ------------------------------------------------------------------------------

    def initialize(self, zk_client: "KafkaZkClient") -> None:
        """Load both dynamic layers from ZooKeeper (KafkaServer does this before it builds the
        components that read the config)."""
        from kafka_py.core.zk.admin_zk_client import AdminZkClient

        admin = AdminZkClient(zk_client)
        self.update_default_config(admin.fetch_entity_config(ConfigType.BROKER, ConfigEntityName.DEFAULT))
        props = admin.fetch_entity_config(ConfigType.BROKER, str(self.broker_id))
        props = self._maybe_reencode_passwords(props, admin)
        self.update_broker_config(self.broker_id, props)

    def _maybe_create_password_encoder(self, secret: Any) -> PasswordEncoder | None:
        if secret is None:
            return None
        config = self._current_config
        return PasswordEncoder(secret, config.get("password.encoder.keyfactory.algorithm"),
                               config.get("password.encoder.cipher.algorithm"),
                               config.get("password.encoder.key.length"), config.get("password.encoder.iterations"))

    def _maybe_reencode_passwords(self, persistent_props: Mapping[str, Any], admin: Any) -> dict[str, Any]:
        """Passwords encrypted with ``password.encoder.old.secret`` are encrypted again with the
        current secret and written back (the secret was changed while the broker was down)."""
        props = dict(persistent_props)
        decoder = self._maybe_create_password_encoder(self._current_config.get("password.encoder.old.secret"))
        if decoder is None or self._password_encoder is None:
            return props
        changed = False
        for name, value in persistent_props.items():
            if not is_password_config(name) or value is None:
                continue
            try:
                decoded = decoder.decode(str(value))
            except ConfigException:
                continue  # already under the new secret
            props[name] = self._password_encoder.encode(decoded)
            changed = True
        if changed:
            admin.change_broker_config(self.broker_id, props)
        return props

    def add_broker_reconfigurable(self, reconfigurable: BrokerReconfigurable) -> None:
        names = set(reconfigurable.reconfigurable_configs)
        non_dynamic = sorted(n for n in names if base_config_name(n) not in DYNAMIC_BROKER_CONFIGS)
        if non_dynamic:
            raise ValueError(f"Reconfigurable contains non-dynamic configs {non_dynamic}")
        with self._lock:
            self._broker_reconfigurables.append(reconfigurable)

    def remove_broker_reconfigurable(self, reconfigurable: BrokerReconfigurable) -> None:
        with self._lock:
            if reconfigurable in self._broker_reconfigurables:
                self._broker_reconfigurables.remove(reconfigurable)

    def client_channel_builder(self, listener_name: str, create: Callable[[KafkaConfig], Any]) -> Any:
        """The broker's one client channel builder of ``listener_name``, made by ``create`` from the
        current config the first time it is asked for, and from then on reconfigured with the
        listener's key and trust stores (it is a BrokerReconfigurable). Every inter-broker client
        shares it, so a connection made after a dynamic store update uses the new stores wherever
        it is made, and connections already open keep theirs."""
        with self._lock:
            builder = self._client_channel_builders.get(listener_name)
            if builder is None:
                builder = create(self._current_config)
                self._client_channel_builders[listener_name] = builder
                if builder is not None and builder.reconfigurable_configs:
                    self.add_broker_reconfigurable(builder)
            return builder

    def clear(self) -> None:
        with self._lock:
            self._dynamic_broker_configs.clear()
            self._dynamic_default_configs.clear()
            self._broker_reconfigurables.clear()
            self._client_channel_builders.clear()

    # -- updates from ZooKeeper ------------------------------------------------------------------

    def update_broker_config(self, broker_id: int, persistent_props: Mapping[str, Any]) -> None:
        """The per-broker layer read from /config/brokers/<broker_id> (the whole layer)."""
        with self._lock:
            try:
                props = self.from_persistent_props(persistent_props, per_broker_config=True)
                self._update_current_config(broker_layer=props)
            except Exception:  # noqa: BLE001 - a bad znode must not stop the broker
                logger.exception("Per-broker configs of %s could not be applied: %s", broker_id,
                                 sorted(persistent_props))

    def update_default_config(self, persistent_props: Mapping[str, Any]) -> None:
        """The cluster-default layer read from /config/brokers/<default> (the whole layer)."""
        with self._lock:
            try:
                props = self.from_persistent_props(persistent_props, per_broker_config=False)
                self._update_current_config(default_layer=props)
            except Exception:  # noqa: BLE001
                logger.exception("Cluster default configs could not be applied: %s", sorted(persistent_props))

    def _update_current_config(self, broker_layer: dict[str, str] | None = None,
                               default_layer: dict[str, str] | None = None) -> None:
        old_config = self._current_config
        new_broker = self._dynamic_broker_configs if broker_layer is None else broker_layer
        new_default = self._dynamic_default_configs if default_layer is None else default_layer
        new_config = old_config.with_dynamic_overrides(per_broker=new_broker, cluster_default=new_default)
        to_update = self._reconfigurables_for(old_config, new_config)
        # Validate every interested component before committing anything, so a refused
        # change leaves config and components as they were.
        for reconfigurable in to_update:
            reconfigurable.validate_reconfiguration(new_config)
        self._dynamic_broker_configs = dict(new_broker)
        self._dynamic_default_configs = dict(new_default)
        self._current_config = new_config
        for reconfigurable in to_update:
            reconfigurable.reconfigure(old_config, new_config)

    def _reconfigurables_for(self, old_config: KafkaConfig, new_config: KafkaConfig) -> list[BrokerReconfigurable]:
        old, new = old_config.originals, new_config.originals
        changed = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
        if not changed:
            return []
        return [r for r in self._broker_reconfigurables if changed & set(r.reconfigurable_configs)]

    # -- validation and persistence (ZkAdminManager) ---------------------------------------------

    def validate(self, props: Mapping[str, Any], per_broker_config: bool) -> None:
        """Would ``props`` be accepted as the whole per-broker (or cluster-default) layer?
        Raises ConfigException naming the offending key."""
        with self._lock:
            KafkaConfig.validate_dynamic_configs(props, per_broker_config)
            if per_broker_config:
                candidate = self._current_config.with_dynamic_overrides(per_broker=props)
            else:
                candidate = self._current_config.with_dynamic_overrides(cluster_default=props)
            for reconfigurable in self._reconfigurables_for(self._current_config, candidate):
                try:
                    reconfigurable.validate_reconfiguration(candidate)
                except ConfigException:
                    raise
                except Exception as e:
                    raise ConfigException(sorted(props)[0] if props else "", None,
                                          f"Invalid dynamic configuration: {e}") from e

    def reload_updated_files_without_config_change(self, props: Mapping[str, Any]) -> None:
        """An AlterConfigs of this broker's layer reads again the store files rewritten in place
        whose settings it does not change (a change of settings is applied through ZooKeeper)."""
        with self._lock:
            candidate = self._current_config.with_dynamic_overrides(per_broker=props)
            for reconfigurable in list(self._broker_reconfigurables):
                reload = getattr(reconfigurable, "reload_updated_files", None)
                if reload is not None:
                    reload(candidate)

    def to_persistent_props(self, config_props: Mapping[str, Any], per_broker_config: bool) -> dict[str, str]:
        props = _string_map(config_props)
        for name, value in list(props.items()):
            if not is_password_config(name):
                continue
            if not per_broker_config:
                raise ConfigException(name, "[hidden]", "Password config can be defined only at broker level")
            if self._password_encoder is None:
                raise ConfigException(name, "[hidden]", "Password encoder secret not configured")
            props[name] = self._password_encoder.encode(value)
        return props

    def from_persistent_props(self, persistent_props: Mapping[str, Any], per_broker_config: bool) -> dict[str, str]:
        """The layer as it can be applied: keys that are unknown, not dynamic, invalid, or (at
        cluster level) per-broker only are dropped with an error, as Kafka ignores them."""
        props = _string_map(persistent_props)
        level = "broker" if per_broker_config else "default cluster"

        def drop(names: list[str], message: str) -> None:
            if names:
                for n in names:
                    props.pop(n, None)
                logger.error("%s: %s", message, sorted(names))

        drop([k for k in props if base_config_name(k) not in CONFIG_DEF.config_keys],
             f"Unknown configs in the dynamic {level} config will be ignored")
        drop([k for k in props if base_config_name(k) not in DYNAMIC_BROKER_CONFIGS],
             "Non-dynamic configs configured in ZooKeeper will be ignored")
        drop([k for k in props if k in DYNAMIC_SECURITY_CONFIGS],
             "Security configs can be dynamically updated only using listener prefix, base configs will be ignored")
        invalid = []
        for name, value in props.items():
            key = CONFIG_DEF.config_keys[base_config_name(name)]
            try:
                CONFIG_DEF.parse_value(key, value, True)
            except ConfigException:
                invalid.append(name)
        drop(invalid, f"Dynamic {level} config contains invalid values, these configs will be ignored")
        if not per_broker_config:
            drop([k for k in props if base_config_name(k) in PER_BROKER_CONFIGS or _LISTENER_CONFIG.match(k)],
                 "Per-broker configs defined at default cluster level will be ignored")
        for name in [k for k in props if is_password_config(k)]:
            try:
                if self._password_encoder is None:
                    raise ConfigException(name, "[hidden]", "Password encoder secret not configured")
                props[name] = self._password_encoder.decode(props[name]).value
            except ConfigException as e:
                logger.error("Dynamic password config %s could not be decoded, ignoring: %s", name, e)
                props.pop(name)
        return props


class DynamicLogConfig:
    """Broker log.* defaults changed: new defaults for the LogManager and every live log."""

    def __init__(self, log_manager: "LogManager",
                 enable_default_unclean_leader_election: Callable[[], None] | None = None) -> None:
        self.log_manager = log_manager
        self._enable_default_unclean_leader_election = enable_default_unclean_leader_election

    @property
    def reconfigurable_configs(self) -> frozenset[str]:
        return DYNAMIC_LOG_CONFIGS

    def validate_reconfiguration(self, new_config: KafkaConfig) -> None:
        # Names and types were checked with the layer; topic overrides get no further checks
        # either, so nothing more is asked of broker defaults.
        pass

    def reconfigure(self, old_config: KafkaConfig, new_config: KafkaConfig) -> None:
        was_unclean = self.log_manager.current_default_config.unclean_leader_election_enable
        defaults = new_config.log_config_defaults()
        self.log_manager.reconfigure_default_log_config(LogConfig.from_props(defaults), defaults)
        self._update_logs_config(defaults)
        if (self.log_manager.current_default_config.unclean_leader_election_enable and not was_unclean
                and self._enable_default_unclean_leader_election is not None):
            self._enable_default_unclean_leader_election()

    def _update_logs_config(self, defaults: Mapping[str, Any]) -> None:
        # Each log keeps its topic's overrides over the new defaults; logs of one topic share
        # their overrides, so one LogManager update per topic covers them all.
        overrides_by_topic: dict[str, dict[str, Any]] = {}
        for log in self.log_manager.all_logs():
            config = log.config
            values = config.values()
            overrides_by_topic.setdefault(log.topic_partition.topic,
                                          {k: values[k] for k in config.overridden_configs if k in values})
        for topic, overrides in overrides_by_topic.items():
            self.log_manager.update_topic_config(topic, overrides, force=True)
