"""Port of core/src/main/scala/kafka/server/metadata/ConfigRepository.scala and
CachedConfigRepository.scala (Kafka 2.8.2).

Where a KRaft broker reads topic and broker configs: the ConfigRecords of the metadata
log, kept by resource. ``CachedConfigRepository`` is filled by the BrokerMetadataListener;
a resource's map is replaced, never changed in place, so a reader's copy stays whole.

``fetch_entity_config`` answers in the shape of AdminZkClient's method of that name, so
ConfigHelper (DescribeConfigs) reads a topic's overrides from here unchanged.
"""
from __future__ import annotations

import threading
from typing import Mapping, Optional

from kafka_py.metadata.controller.configuration_control_manager import ConfigResource
from kafka_py.server.zk_admin_manager import ConfigResourceType


class ConfigRepository:
    def topic_config(self, topic_name: str) -> dict[str, str]:
        """A copy of the topic's config overrides; later changes are not reflected."""
        return self.config(ConfigResource(ConfigResourceType.TOPIC, topic_name))

    def broker_config(self, broker_id: int) -> dict[str, str]:
        return self.config(ConfigResource(ConfigResourceType.BROKER, str(broker_id)))

    def config(self, config_resource: ConfigResource) -> dict[str, str]:
        raise NotImplementedError


class CachedConfigRepository(ConfigRepository):
    """A ConfigRepository kept in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._config_map: dict[ConfigResource, Mapping[str, str]] = {}

    def set_topic_config(self, topic_name: str, key: str, value: Optional[str]) -> None:
        self.set_config(ConfigResource(ConfigResourceType.TOPIC, topic_name), key, value)

    def set_broker_config(self, broker_id: int, key: str, value: Optional[str]) -> None:
        self.set_config(ConfigResource(ConfigResourceType.BROKER, str(broker_id)), key, value)

    def set_config(self, config_resource: ConfigResource, key: str, value: Optional[str]) -> None:
        """Set ``key`` of the resource; a None value removes it (and an emptied resource)."""
        with self._lock:
            current = self._config_map.get(config_resource)
            new_config = dict(current) if current is not None else {}
            if value is None:
                new_config.pop(key, None)
            else:
                new_config[key] = value
            if new_config:
                self._config_map[config_resource] = new_config
            else:
                self._config_map.pop(config_resource, None)

    def config(self, config_resource: ConfigResource) -> dict[str, str]:
        with self._lock:
            current = self._config_map.get(config_resource)
        return dict(current) if current is not None else {}

    def remove(self, config_resource: ConfigResource) -> None:
        with self._lock:
            self._config_map.pop(config_resource, None)

    # -- AdminZkClient's reader, for ConfigHelper

    def fetch_entity_config(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        if root_entity_type == "topics":
            return self.topic_config(sanitized_entity_name)
        if root_entity_type == "brokers":
            name = "" if sanitized_entity_name == "<default>" else sanitized_entity_name
            return self.config(ConfigResource(ConfigResourceType.BROKER, name))
        return {}


__all__ = ["ConfigRepository", "CachedConfigRepository"]
