"""Port of core/src/main/scala/kafka/server/DynamicConfigManager.scala.

Entity configs live in ZooKeeper at /config/<entity type>/<entity name> (topics/<t>,
brokers/<id>, brokers/<default>, ...). Whoever changes one (AdminZkClient) then adds a
sequential /config/changes/config_change_<seq> naming it, e.g.
``{"version":2,"entity_path":"topics/foo"}``; version 1 notifications name
``entity_type`` and ``entity_name`` instead. Every broker's DynamicConfigManager watches
/config/changes through a ZkNodeChangeNotificationListener and, for each new notification,
re-reads the named entity's whole config and hands it to the handler of its type. The
notification only says "look again": a broker that misses one loses nothing, because on
startup it reads every entity's config anyway (and the listener then replays all
notifications still present, which is harmless).
"""
from __future__ import annotations

import json
import logging
from typing import Any, Mapping

from kafka_py.core.common.zk_node_change_notification_listener import (
    DEFAULT_CHANGE_EXPIRATION_MS,
    ZkNodeChangeNotificationListener,
)
from kafka_py.server.config_handler import ConfigHandler
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.admin_zk_client import AdminZkClient
from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.core.zk.zk_data import (
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityChangeNotificationZNode,
    ConfigEntityName,
    ConfigType,
)

logger = logging.getLogger(__name__)

__all__ = ["DynamicConfigManager", "ConfigType", "ConfigEntityName"]

_SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


class DynamicConfigManager:
    def __init__(self, zk_client: KafkaZkClient, config_handlers: Mapping[str, ConfigHandler],
                 change_expiration_ms: int = DEFAULT_CHANGE_EXPIRATION_MS, time: Time = Time.SYSTEM) -> None:
        self.zk_client = zk_client
        self.config_handlers = dict(config_handlers)
        self.change_expiration_ms = change_expiration_ms
        self.time = time
        self.admin_zk_client = AdminZkClient(zk_client)
        self.config_change_listener = ZkNodeChangeNotificationListener(
            zk_client, ConfigEntityChangeNotificationZNode.path(),
            ConfigEntityChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX,
            _ConfigChangedNotificationHandler(self), change_expiration_ms, time)

    def startup(self) -> None:
        """Start watching /config/changes, then apply every existing config once.

        Watching starts first so a change made while the existing configs are read is not
        lost between the two.
        """
        self.config_change_listener.init()
        for config_type, handler in self.config_handlers.items():
            if config_type == ConfigType.USER:
                entities = dict(self.admin_zk_client.fetch_all_entity_configs(ConfigType.USER))
                for user in list(entities):
                    for client in self.zk_client.get_children(
                            f"/config/{ConfigType.USER}/{user}/{ConfigType.CLIENT}"):
                        path = f"{user}/{ConfigType.CLIENT}/{client}"
                        entities[path] = self.admin_zk_client.fetch_entity_config(ConfigType.USER, path)
            else:
                entities = self.admin_zk_client.fetch_all_entity_configs(config_type)
            for entity_name, properties in entities.items():
                try:
                    handler.process_config_changes(entity_name, properties)
                except Exception:  # noqa: BLE001 - one bad entity must not keep the broker down
                    logger.exception("Error applying the config of %s/%s at startup", config_type, entity_name)

    def shutdown(self) -> None:
        self.config_change_listener.close()

    # -- notifications ----------------------------------------------------------------------------

    def process_notification(self, json_bytes: bytes) -> None:
        """Handle the data of one /config/changes child (called on the listener's thread)."""
        try:
            js = json.loads(bytes(json_bytes).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            # Not JSON: left over by the long-gone TopicConfigManager; nothing to do.
            return
        text = bytes(json_bytes).decode("utf-8", "replace")
        if not isinstance(js, dict):
            raise ValueError("Config change notification has an unexpected value. The format is:"
                             '{"version" : 1, "entity_type":"topics/clients", "entity_name" : "topic_name/client_id"}'
                             ' or {"version" : 2, "entity_path":"entity_type/entity_name"}. '
                             f"Received: {text}")
        version = js.get("version")
        if version == 1:
            self._process_entity_config_change_version1(text, js)
        elif version == 2:
            self._process_entity_config_change_version2(text, js)
        else:
            raise ValueError(f"Config change notification has unsupported version '{version}', "
                             "supported versions are 1 and 2.")

    def _process_entity_config_change_version1(self, text: str, js: Mapping[str, Any]) -> None:
        entity_type = js.get("entity_type")
        if entity_type not in (ConfigType.TOPIC, ConfigType.CLIENT):
            raise ValueError("Version 1 config change notification must have 'entity_type' set to 'clients' or "
                             f"'topics'. Received: {text}")
        entity = js.get("entity_name")
        if not isinstance(entity, str):
            raise ValueError(f"Version 1 config change notification does not specify 'entity_name'. Received: {text}")
        entity_config = self.admin_zk_client.fetch_entity_config(entity_type, entity)
        logger.info("Processing override for entityType: %s, entity: %s with config: %s",
                    entity_type, entity, entity_config)
        handler = self.config_handlers.get(entity_type)
        if handler is not None:
            handler.process_config_changes(entity, entity_config)

    def _process_entity_config_change_version2(self, text: str, js: Mapping[str, Any]) -> None:
        entity_path = js.get("entity_path")
        if not isinstance(entity_path, str):
            raise ValueError(f"Version 2 config change notification must specify 'entity_path'. Received: {text}")
        index = entity_path.find("/")
        root_entity_type = entity_path[:index] if index >= 0 else entity_path
        if index < 0 or root_entity_type not in self.config_handlers:
            entity_types = ", ".join(f"'{t}'/" for t in self.config_handlers)
            raise ValueError("Version 2 config change notification must have 'entity_path' starting with one of "
                             f"{entity_types}. Received: {text}")
        full_sanitized_entity_name = entity_path[index + 1:]
        entity_config = self.admin_zk_client.fetch_entity_config(root_entity_type, full_sanitized_entity_name)
        loggable = {k: ("[hidden]" if k in _SCRAM_MECHANISMS else v) for k, v in entity_config.items()}
        logger.info("Processing override for entityPath: %s with config: %s", entity_path, loggable)
        self.config_handlers[root_entity_type].process_config_changes(full_sanitized_entity_name, entity_config)


class _ConfigChangedNotificationHandler:
    def __init__(self, manager: DynamicConfigManager) -> None:
        self._manager = manager

    def process_notification(self, notification_message: bytes) -> None:
        self._manager.process_notification(notification_message)
