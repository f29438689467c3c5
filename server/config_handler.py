"""Port of core/src/main/scala/kafka/server/ConfigHandler.scala (topic and broker handlers).

The DynamicConfigManager reads an entity's whole config from /config/<type>/<name> and
hands it to the handler of that entity type:

* ``TopicConfigHandler``: the topic's overrides become each of its live logs' LogConfig
  (broker defaults with the overrides on top), through the LogManager, which also keeps them
  for logs of the topic created later.
* ``BrokerConfigHandler``: brokers/<default> is the cluster-default dynamic layer,
  brokers/<this broker's id> the per-broker one; both go to ``DynamicBrokerConfig``. Other
  brokers' ids are not ours to apply.

* ``UserConfigHandler``: users/<sanitized user> holds the user's SCRAM credentials; they go to
  the broker's CredentialCache, so a user added or changed with kafka-configs.sh can log in
  (or is refused) without a restart.

Client and IP quota handlers and the quota half of the user handler are not ported (kafka-py
enforces no quotas), nor are replication throttles, which only a quota manager would act on.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from kafka_py.log.log_config import (
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
    LEADER_REPLICATION_THROTTLED_REPLICAS_PROP,
    MESSAGE_FORMAT_VERSION_PROP,
    UNCLEAN_LEADER_ELECTION_ENABLE_PROP,
    LogConfig,
    api_version,
)
from kafka_py.zk.zk_data import ConfigEntityName

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
        for prop in (LEADER_REPLICATION_THROTTLED_REPLICAS_PROP, FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP):
            if topic_config.get(prop):
                logger.debug("%s of topic %s is stored but not enforced: kafka-py has no replication quotas",
                             prop, topic)
        if str(topic_config.get(UNCLEAN_LEADER_ELECTION_ENABLE_PROP, "")).strip().lower() == "true":
            enable = getattr(self.kafka_controller, "enable_topic_unclean_leader_election", None)
            if enable is not None:
                enable(topic)

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


class UserConfigHandler:
    """users/<user> (and users/<user>/clients/<client>, quota-only, ignored): SCRAM credentials."""

    def __init__(self, credential_provider: Any) -> None:
        self.credential_provider = credential_provider

    def process_config_changes(self, sanitized_entity: str, properties: Mapping[str, str]) -> None:
        from kafka_py.security.sanitizer import desanitize

        parts = sanitized_entity.split("/")
        if len(parts) != 1 or parts[0] == ConfigEntityName.DEFAULT:
            return  # quota entities (user/client pairs, defaults): no credentials there
        self.credential_provider.update_user(desanitize(parts[0]), properties)
