"""Port of core/src/main/scala/kafka/server/ConfigHandler.scala.

The DynamicConfigManager reads an entity's whole config from /config/<type>/<name> and
hands it to the handler of that entity type:

* ``TopicConfigHandler``: the topic's overrides become each of its live logs' LogConfig
  (broker defaults with the overrides on top), through the LogManager, which also keeps them
  for logs of the topic created later. ``leader.replication.throttled.replicas`` and
  ``follower.replication.throttled.replicas`` (``partition:broker`` pairs, or ``*``) name the
  partitions of this broker the leader and follower replication quotas throttle.
* ``BrokerConfigHandler``: brokers/<default> is the cluster-default dynamic layer,
  brokers/<this broker's id> the per-broker one; both go to ``DynamicBrokerConfig``. Other
  brokers' ids are not ours to apply. The per-broker layer's
  ``leader.replication.throttled.rate``, ``follower.replication.throttled.rate`` and
  ``replica.alter.log.dirs.io.max.bytes.per.second`` become the bounds of the replication
  quota managers (absent: no bound), as Kafka 2.8 applies them: from this broker's own
  znode only, never from the cluster default.

* ``UserConfigHandler``: users/<sanitized user> holds the user's SCRAM credentials; they go to
  the broker's CredentialCache, so a user added or changed with kafka-configs.sh can log in
  (or is refused) without a restart. users/<user> and users/<user>/clients/<client-id> (and
  their ``<default>`` forms) also hold client quotas, which go to the quota managers.
* ``ClientIdConfigHandler``: clients/<client-id> (or clients/<default>) quotas.
* ``IpConfigHandler``: ips/<address> (or ips/<default>) ``connection_creation_rate``, the
  per-IP connection rate limit of the ConnectionQuotas (KIP-612).

Quota values are ``producer_byte_rate`` and ``consumer_byte_rate`` (bytes per second) and
``request_percentage`` (percent of one handler thread) and ``controller_mutation_rate``
(partitions created or deleted per second); a key that is absent removes that quota for the
entity.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Optional, Protocol

from kafka_py.log.log_config import (
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LEADER_REPLICATION_THROTTLED_REPLICAS_PROP,
    MESSAGE_FORMAT_VERSION_PROP,
    UNCLEAN_LEADER_ELECTION_ENABLE_PROP,
    LogConfig,
    api_version,
)
from kafka_py.core.zk.zk_data import ConfigEntityName

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.log.log_manager import LogManager
    from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig
    from kafka_py.server.kafka_config import KafkaConfig

logger = logging.getLogger(__name__)


class ConfigHandler(Protocol):
    def process_config_changes(self, entity_name: str, value: Mapping[str, str]) -> None:
        ...


class TopicConfigHandler:
    """Applies a topic's config overrides to its logs on this broker."""

    def __init__(self, log_manager: "LogManager", kafka_config: "KafkaConfig", quotas: Any = None,
                 kafka_controller: Any = None) -> None:
        self.log_manager = log_manager
        self.kafka_config = kafka_config
        self.quotas = quotas
        self.kafka_controller = kafka_controller

    def process_config_changes(self, topic: str, topic_config: Mapping[str, str]) -> None:
        excluded = self.excluded_configs(topic, topic_config)
        self._update_log_config(topic, topic_config, excluded)
        quotas = self.quotas
        if quotas is not None:
            self._update_throttled_list(topic, topic_config, LEADER_REPLICATION_THROTTLED_REPLICAS_PROP, quotas.leader)
            self._update_throttled_list(topic, topic_config, FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
                                        quotas.follower)
        if str(topic_config.get(UNCLEAN_LEADER_ELECTION_ENABLE_PROP, "")).strip().lower() == "true":
            enable = getattr(self.kafka_controller, "enable_topic_unclean_leader_election", None)
            if enable is not None:
                enable(topic)

    def _update_throttled_list(self, topic: str, topic_config: Mapping[str, str], prop: str,
                               quota_manager: Any) -> None:
        value = topic_config.get(prop)
        if value is not None and str(value) != "":
            try:
                partitions = self.parse_throttled_partitions(topic_config, self.kafka_config.broker_id, prop)
            except ValueError as e:
                # written to ZooKeeper by hand: the broker keeps going without this throttle
                logger.error("Ignoring %s=%r of topic %s: %s", prop, value, topic, e)
                quota_manager.remove_throttle(topic)
                return
            quota_manager.mark_throttled(topic, partitions)
            logger.debug("Setting %s on broker %d for topic: %s and partitions %s", prop, self.kafka_config.broker_id,
                         topic, partitions)
        else:
            quota_manager.remove_throttle(topic)
            logger.debug("Removing %s from broker %d for topic %s", prop, self.kafka_config.broker_id, topic)

    @staticmethod
    def parse_throttled_partitions(topic_config: Mapping[str, str], broker_id: int, prop: str) -> list[int]:
        """The partitions of this broker a ``partition:broker,...`` (or ``*``) list names;
        ``[-1]`` (ALL_REPLICAS) for ``*``. ValueError for anything else."""
        from kafka_py.server.replication_quota_manager import ALL_REPLICAS

        text = str(topic_config[prop]).strip()
        entries = [e.strip() for e in text.split(",")]
        if text == "*":
            return list(ALL_REPLICAS)
        if text == "":
            return []
        partitions = []
        for entry in entries:
            partition, sep, broker = entry.partition(":")
            if not (sep and partition.isdigit() and broker.isdigit()):
                raise ValueError(f"{prop} must be the literal '*' or a list of replicas in the following format: "
                                 "[partitionId]:[brokerId],[partitionId]:[brokerId],...")
            if int(broker) == broker_id:
                partitions.append(int(partition))
        return partitions

    def _update_log_config(self, topic: str, topic_config: Mapping[str, str], excluded: set[str]) -> None:
        known = set(LogConfig.config_names())
        # Kafka's LogConfig ignores names it does not define (a newer Kafka may have written
        # them); kafka-py's refuses them, so they are left out here.
        overrides = {k: v for k, v in topic_config.items() if k in known and k not in excluded}
        unknown = sorted(k for k in topic_config if k not in known)
        if unknown:
            logger.warning("Ignoring unknown configs %s of topic %s", unknown, topic)
        # Every broker hears of every topic's change; only one hosting the topic keeps it.
        self.log_manager.update_topic_config(topic, overrides, only_if_hosted=True)

    def excluded_configs(self, topic: str, topic_config: Mapping[str, str]) -> set[str]:
        """message.format.version newer than the inter-broker protocol is not applied."""
        version_string = topic_config.get(MESSAGE_FORMAT_VERSION_PROP)
        if version_string is None:
            return set()
        ibp = self.kafka_config.inter_broker_protocol_version
        try:
            too_new = ibp < api_version(str(version_string))
        except ValueError:
            return {MESSAGE_FORMAT_VERSION_PROP}
        if too_new:
            logger.warning("Log configuration %s is ignored for `%s` because `%s` is not compatible with Kafka "
                           "inter-broker protocol version `%s`", MESSAGE_FORMAT_VERSION_PROP, topic,
                           version_string, ibp.version)
            return {MESSAGE_FORMAT_VERSION_PROP}
        return set()


class BrokerConfigHandler:
    """Hands the per-broker and cluster-default dynamic layers to DynamicBrokerConfig."""

    def __init__(self, broker_config: "DynamicBrokerConfig", quota_managers: Any = None) -> None:
        self.broker_config = broker_config
        self.quota_managers = quota_managers

    def process_config_changes(self, broker_id: str, properties: Mapping[str, str]) -> None:
        if broker_id == ConfigEntityName.DEFAULT:
            self.broker_config.update_default_config(properties)
            return
        try:
            entity_id = int(broker_id.strip())
        except ValueError:
            logger.warning("Ignoring config change of broker entity %r: not a broker id", broker_id)
            return
        if entity_id == self.broker_config.broker_id:
            self.broker_config.update_broker_config(entity_id, properties)
            managers = self.quota_managers
            if managers is not None:
                for manager, prop in ((managers.leader, LEADER_REPLICATION_THROTTLED_RATE_PROP),
                                      (managers.follower, FOLLOWER_REPLICATION_THROTTLED_RATE_PROP),
                                      (managers.alter_log_dirs, REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND_PROP)):
                    manager.update_quota(_replication_quota(properties, prop))


LEADER_REPLICATION_THROTTLED_RATE_PROP = "leader.replication.throttled.rate"
FOLLOWER_REPLICATION_THROTTLED_RATE_PROP = "follower.replication.throttled.rate"
REPLICA_ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND_PROP = "replica.alter.log.dirs.io.max.bytes.per.second"


def _replication_quota(properties: Mapping[str, str], prop: str) -> Any:
    """The bound of a replication throttle in a broker's dynamic config (Long.MaxValue when
    absent, as Kafka's getOrDefault). A value that is not a non-negative integer, written to
    ZooKeeper by hand, is logged and treated as absent."""
    from kafka_py.clients.common.sensor import Quota
    from kafka_py.server.replication_quota_manager import QUOTA_BYTES_PER_SECOND_DEFAULT

    raw = properties.get(prop)
    value = QUOTA_BYTES_PER_SECOND_DEFAULT
    if raw is not None:
        try:
            value = int(str(raw).strip())
            if value < 0:
                raise ValueError(raw)
        except ValueError:
            logger.error("Ignoring %s=%r: a replication throttle must be a non-negative integer", prop, raw)
            value = QUOTA_BYTES_PER_SECOND_DEFAULT
    return Quota.upper_bound(float(value))


PRODUCER_BYTE_RATE_OVERRIDE_CONFIG = "producer_byte_rate"
CONSUMER_BYTE_RATE_OVERRIDE_CONFIG = "consumer_byte_rate"
REQUEST_PERCENTAGE_OVERRIDE_CONFIG = "request_percentage"
CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG = "controller_mutation_rate"
IP_CONNECTION_RATE_OVERRIDE_CONFIG = "connection_creation_rate"


def _quota_value(entity: str, properties: Mapping[str, str], key: str) -> Any:
    """The quota ``key`` of an entity's config as a Quota, None when absent. A value that is not
    a positive number (written to ZooKeeper by hand) is logged and treated as absent."""
    from kafka_py.clients.common.sensor import Quota

    raw = properties.get(key)
    if raw is None:
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        logger.error("Ignoring %s=%r of %s: a quota must be a positive number", key, raw, entity)
        return None
    return Quota.upper_bound(value)


class QuotaConfigHandler:
    """Hands an entity's ``<client-id>``, ``<user>`` or ``<user, client-id>`` quotas to the
    produce, fetch and request quota managers."""

    def __init__(self, quota_managers: Any) -> None:
        self.quota_managers = quota_managers

    def update_quota_config(self, sanitized_user: Optional[str], sanitized_client_id: Optional[str],
                            config: Mapping[str, str]) -> None:
        from kafka_py.clients.common.security.sanitizer import desanitize

        managers = self.quota_managers
        if managers is None:
            return
        client_id = None if sanitized_client_id is None else desanitize(sanitized_client_id)
        entity = "/".join(p for p in (sanitized_user and f"user {sanitized_user}",
                                      sanitized_client_id and f"client-id {sanitized_client_id}") if p)
        for manager, key in ((managers.produce, PRODUCER_BYTE_RATE_OVERRIDE_CONFIG),
                             (managers.fetch, CONSUMER_BYTE_RATE_OVERRIDE_CONFIG),
                             (managers.request, REQUEST_PERCENTAGE_OVERRIDE_CONFIG),
                             (managers.controller_mutation, CONTROLLER_MUTATION_RATE_OVERRIDE_CONFIG)):
            manager.update_quota(sanitized_user, client_id, sanitized_client_id, _quota_value(entity, config, key))


class ClientIdConfigHandler(QuotaConfigHandler):
    """clients/<client-id>: that client id's quotas (``<default>``: every client id's default)."""

    def process_config_changes(self, sanitized_client_id: str, client_config: Mapping[str, str]) -> None:
        self.update_quota_config(None, sanitized_client_id, client_config)


class UserConfigHandler(QuotaConfigHandler):
    """users/<user> and users/<user>/clients/<client-id>: quotas, and a user's SCRAM credentials."""

    def __init__(self, credential_provider: Any, quota_managers: Any = None) -> None:
        super().__init__(quota_managers)
        self.credential_provider = credential_provider

    def process_config_changes(self, sanitized_entity: str, properties: Mapping[str, str]) -> None:
        from kafka_py.clients.common.security.sanitizer import desanitize

        # <user> or <user>/clients/<client-id>
        parts = sanitized_entity.split("/")
        if len(parts) not in (1, 3):
            raise ValueError(f"Invalid quota entity path: {sanitized_entity}")
        sanitized_user = parts[0]
        sanitized_client_id = parts[2] if len(parts) == 3 else None
        self.update_quota_config(sanitized_user, sanitized_client_id, properties)
        if sanitized_client_id is None and sanitized_user != ConfigEntityName.DEFAULT:
            self.credential_provider.update_user(desanitize(sanitized_user), properties)


class IpConfigHandler:
    """ips/<address>: the connection creation rate of one client address (``<default>``: every
    address's default), for the ConnectionQuotas."""

    def __init__(self, connection_quotas: Any) -> None:
        self.connection_quotas = connection_quotas

    def process_config_changes(self, ip: str, config: Mapping[str, str]) -> None:
        import ipaddress
        import socket

        raw = config.get(IP_CONNECTION_RATE_OVERRIDE_CONFIG)
        rate = None
        if raw is not None:
            try:
                rate = int(str(raw).strip())
            except ValueError:
                logger.error("Ignoring %s=%r of ip %s: not an integer", IP_CONNECTION_RATE_OVERRIDE_CONFIG, raw, ip)
            else:
                if rate < 0:
                    logger.error("Ignoring %s=%r of ip %s: must be at least 0", IP_CONNECTION_RATE_OVERRIDE_CONFIG,
                                 raw, ip)
                    rate = None
        from kafka_py.clients.common.security.sanitizer import desanitize

        address = None
        if ip != ConfigEntityName.DEFAULT:
            ip = desanitize(ip)
            try:
                address = str(ipaddress.ip_address(ip))
            except ValueError:
                try:
                    address = socket.gethostbyname(ip)
                except OSError as e:
                    raise ValueError(f"Unable to resolve address {ip}") from e
        self.connection_quotas.update_ip_connection_rate_quota(address, rate)
