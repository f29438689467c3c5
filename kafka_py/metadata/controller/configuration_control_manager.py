"""Port of metadata/src/main/java/org/apache/kafka/controller/ConfigurationControlManager.java
(Kafka 2.8.2, with 3.0.0's resource checks, and a validation hook and
unclean.leader.election.enable lookup that Kafka added after 3.0).

The dynamic configurations of topics and brokers (a BROKER resource named "" is the
cluster-wide default), one ConfigRecord per key; a record with a None value deletes the
key. incrementalAlterConfigs applies SET/DELETE/APPEND/SUBTRACT per key;
legacyAlterConfigs replaces a resource's whole set. Either way a resource's changes
succeed or fail together, and nothing changes state until the records are replayed.

The validation hook sees each resource's configs as they would be after the change and
raises to refuse them; the default one checks topic configs as topic creation does
(LogConfig.validate: known names, parseable values). Kafka 3.0's controller had no such
check (later releases validate through a ConfigurationValidator, which this follows);
without it a bad value would reach the log and every broker.

``ConfigResource`` is clients/.../common/config/ConfigResource.java: a resource type and
name.

``iterator(epoch)`` is Kafka 3.0.0's: the records a snapshot holds for this state.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Collection, Iterator, Mapping

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import InvalidConfigException, KafkaException
from kafka_py.log.log_config import LogConfig
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.controller.result_or_error import ResultOrError
from kafka_py.metadata.records.config_record.v0 import ConfigRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import AlterConfigOpType, ConfigResourceType
from kafka_py.clients.common.config.config_def import ConfigDef, Type
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.zk.admin_zk_client import Topic

logger = logging.getLogger(__name__)

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


@dataclass(frozen=True, slots=True)
class ConfigResource:
    type: ConfigResourceType
    name: str

    def __str__(self) -> str:
        return f"ConfigResource(type={self.type.name}, name='{self.name}')"


# (resource, its configs after the change) -> None, or raises to refuse the change
ConfigurationValidator = Callable[[ConfigResource, Mapping[str, str]], None]


def default_config_validator(resource: ConfigResource, configs: Mapping[str, str]) -> None:
    """Topic configs must be ones LogConfig knows, with values it can parse."""
    if resource.type is ConfigResourceType.TOPIC:
        LogConfig.validate(configs)


def check_config_resource(resource: ConfigResource) -> ApiError:
    if resource.type is ConfigResourceType.BROKER_LOGGER:
        # broker loggers are changed on the broker itself and never reach the metadata log
        return ApiError(Errors.INVALID_REQUEST,
                        "Unsupported configuration resource type BROKER_LOGGER ")
    if resource.type is ConfigResourceType.BROKER:
        if resource.name:
            try:
                broker_id = int(resource.name)
            except ValueError:
                return ApiError(Errors.INVALID_REQUEST,
                                "Illegal non-integral BROKER resource type name.")
            if broker_id < 0:
                return ApiError(Errors.INVALID_REQUEST,
                                "Illegal negative broker ID in BROKER resource.")
        return ApiError.NONE  # type: ignore[attr-defined]
    if resource.type is ConfigResourceType.TOPIC:
        try:
            Topic.validate(resource.name)
        except Exception:
            return ApiError(Errors.INVALID_REQUEST, "Illegal topic name.")
        return ApiError.NONE  # type: ignore[attr-defined]
    return ApiError(Errors.INVALID_REQUEST,
                    "Unsupported configuration resource type UNKNOWN.")


def _config_record(resource: ConfigResource, name: str, value: str | None) -> ApiMessageAndVersion:
    # The record's value is a non-nullable string in 2.8.2's spec; Kafka writes null to
    # delete anyway (its writer does not check), and so do we.
    return ApiMessageAndVersion.of(ConfigRecord(resource_type=int(resource.type),
                                                resource_name=resource.name, name=name,
                                                value=value))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class EffectiveTopicConfig:
    """One config of a topic as CreateTopics v5+ answers it (Kafka's ConfigEntry): its
    value (None when sensitive) and where the value comes from (a ConfigSource id)."""
    name: str
    value: str | None
    read_only: bool
    config_source: int
    is_sensitive: bool


class ConfigurationControlManager:
    def __init__(self, snapshot_registry: SnapshotRegistry,
                 config_defs: Mapping[ConfigResourceType, ConfigDef] | None = None,
                 validator: ConfigurationValidator | None = default_config_validator,
                 log_prefix: str = "", *, static_config: Mapping[str, str] | None = None,
                 node_id: int = -1) -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self.snapshot_registry = snapshot_registry
        self.config_defs = dict(config_defs or {})
        self.validator = validator
        # The controller's own server.properties and node id: with the dynamic broker
        # configs they give a new topic's effective configs (the layers a broker has).
        self.static_config = {str(k): str(v) for k, v in (static_config or {}).items() if v is not None}
        self.node_id = node_id
        self._config_data: TimelineHashMap[ConfigResource, TimelineHashMap[str, str]] = \
            TimelineHashMap(snapshot_registry)

    # -- writes --------------------------------------------------------------------------

    def incremental_alter_configs(
            self, config_changes: Mapping[ConfigResource,
                                          Mapping[str, tuple[AlterConfigOpType, str | None]]]
    ) -> ControllerResult[dict[ConfigResource, ApiError]]:
        records: list[ApiMessageAndVersion] = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, keys_to_ops in config_changes.items():
            results[resource] = self._incremental_alter_config_resource(
                resource, keys_to_ops, records)
        return ControllerResult.atomic_of(records, results)

    def _incremental_alter_config_resource(
            self, resource: ConfigResource,
            keys_to_ops: Mapping[str, tuple[AlterConfigOpType, str | None]],
            records: list[ApiMessageAndVersion]) -> ApiError:
        error = check_config_resource(resource)
        if not error.is_success():
            return error
        current = self.get_configs(resource)
        after = dict(current)
        new_records = []
        for key, (op_type, op_value) in keys_to_ops.items():
            try:
                op_type = AlterConfigOpType(op_type)
            except ValueError:
                return ApiError(Errors.INVALID_REQUEST, f"Unknown operation type {op_type}")
            current_value = current.get(key)
            new_value = current_value
            if op_type is AlterConfigOpType.SET:
                new_value = op_value
            elif op_type is AlterConfigOpType.DELETE:
                if op_value is not None:
                    return ApiError(Errors.INVALID_REQUEST,
                                    "A DELETE op was given with a non-null value.")
                new_value = None
            elif op_type in (AlterConfigOpType.APPEND, AlterConfigOpType.SUBTRACT):
                if not self.is_splittable(resource.type, key):
                    return ApiError(Errors.INVALID_CONFIG,
                                    f"Can't {op_type.name} to key {key} because its type is "
                                    f"not LIST.")
                parts = self._get_parts(new_value, key, resource)
                if op_type is AlterConfigOpType.APPEND:
                    if op_value not in parts:
                        parts.append(op_value)
                    new_value = ",".join(parts)
                elif op_value in parts:
                    parts.remove(op_value)
                    new_value = ",".join(parts)
            else:
                return ApiError(Errors.INVALID_REQUEST, f"Unknown operation type {op_type}")
            if new_value is None:
                after.pop(key, None)
            else:
                after[key] = new_value
            if current_value != new_value:
                new_records.append(_config_record(resource, key, new_value))
        error = self._validate(resource, after)
        if not error.is_success():
            return error
        records.extend(new_records)
        return ApiError.NONE  # type: ignore[attr-defined]

    def legacy_alter_configs(
            self, new_configs: Mapping[ConfigResource, Mapping[str, str]]
    ) -> ControllerResult[dict[ConfigResource, ApiError]]:
        records: list[ApiMessageAndVersion] = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, configs in new_configs.items():
            results[resource] = self._legacy_alter_config_resource(resource, configs, records)
        return ControllerResult.atomic_of(records, results)

    def _legacy_alter_config_resource(self, resource: ConfigResource,
                                      new_configs: Mapping[str, str],
                                      records: list[ApiMessageAndVersion]) -> ApiError:
        error = check_config_resource(resource)
        if not error.is_success():
            return error
        error = self._validate(resource, new_configs)
        if not error.is_success():
            return error
        current = self.get_configs(resource)
        for key, new_value in new_configs.items():
            if current.get(key) != new_value:
                records.append(_config_record(resource, key, new_value))
        for key in current:
            if key not in new_configs:
                records.append(_config_record(resource, key, None))
        return ApiError.NONE  # type: ignore[attr-defined]

    def _validate(self, resource: ConfigResource, configs: Mapping[str, str]) -> ApiError:
        if self.validator is None:
            return ApiError.NONE  # type: ignore[attr-defined]
        try:
            self.validator(resource, configs)
        except (InvalidConfigException, ValueError) as e:
            return ApiError(Errors.INVALID_CONFIG, str(e))
        except KafkaException as e:
            return ApiError.from_throwable(e)
        return ApiError.NONE  # type: ignore[attr-defined]

    def _get_parts(self, value: str | None, key: str, resource: ConfigResource) -> list[str]:
        if value is None:
            value = self.get_config_value_default(resource.type, key)
        if value is None:
            return []
        return [part for part in value.split(",") if part]

    def is_splittable(self, resource_type: ConfigResourceType, key: str) -> bool:
        config_def = self.config_defs.get(resource_type)
        if config_def is None:
            return False
        config_key = config_def.config_keys.get(key)
        return config_key is not None and config_key.type is Type.LIST

    def get_config_value_default(self, resource_type: ConfigResourceType, key: str) -> str | None:
        config_def = self.config_defs.get(resource_type)
        if config_def is None:
            return None
        config_key = config_def.config_keys.get(key)
        if config_key is None or not config_key.has_default:
            return None
        return ConfigDef.convert_to_string(config_key.default_value, config_key.type)

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the configs as of ``epoch`` (Kafka 3.0's
        ConfigurationControlIterator): one batch of ConfigRecords per resource."""
        for resource, configs in sorted(self._config_data.items(epoch), key=lambda e: (int(e[0].type), e[0].name)):
            yield [_config_record(resource, name, value) for name, value in sorted(configs.items(epoch))]

    # -- replay --------------------------------------------------------------------------

    def replay(self, record: ConfigRecord) -> None:
        resource = ConfigResource(ConfigResourceType.for_id(int(record.resource_type)),
                                  record.resource_name)
        configs = self._config_data.get(resource)
        if configs is None:
            configs = TimelineHashMap(self.snapshot_registry)
            self._config_data.put(resource, configs)
        if record.value is None:
            configs.remove(record.name)
        else:
            configs.put(record.name, record.value)
        if configs.is_empty():
            self._config_data.remove(resource)
        self.logger.info("%s: set configuration %s to %s", resource, record.name, record.value)

    # -- reads ---------------------------------------------------------------------------

    def get_configs(self, resource: ConfigResource, epoch: int = LATEST_EPOCH) -> dict[str, str]:
        configs = self._config_data.get(resource, epoch=epoch)
        return {} if configs is None else configs.to_dict(epoch)

    def describe_configs(self, last_committed_offset: int,
                         resources: Mapping[ConfigResource, Collection[str]]
                         ) -> dict[ConfigResource, ResultOrError[dict[str, str]]]:
        results: dict[ConfigResource, ResultOrError[dict[str, str]]] = {}
        for resource, keys in resources.items():
            error = check_config_resource(resource)
            if not error.is_success():
                results[resource] = ResultOrError(None, error)
                continue
            found = self.get_configs(resource, last_committed_offset)
            if keys:
                found = {k: v for k, v in found.items() if k in keys}
            results[resource] = ResultOrError(found)
        return results

    def compute_effective_topic_configs(self, creation_configs: Mapping[str, str]
                                        ) -> list[EffectiveTopicConfig]:
        """Every topic config a topic created with ``creation_configs`` would have, sorted
        by name, with its source: the topic's own value, else the first broker synonym set
        in this node's dynamic configs, the cluster's dynamic defaults, the static config
        (ConfigurationControlManager.computeEffectiveTopicConfigs of later Kafka)."""
        from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF, TOPIC_CONFIG_SYNONYMS
        from kafka_py.server.kafka_config import KafkaConfig, broker_config_synonyms
        from kafka_py.server.zk_admin_manager import ConfigSource

        node_dynamic = self.get_configs(ConfigResource(ConfigResourceType.BROKER, str(self.node_id)))
        cluster_dynamic = self.get_configs(ConfigResource(ConfigResourceType.BROKER, ""))
        layers = ((node_dynamic, ConfigSource.DYNAMIC_BROKER_CONFIG),
                  (cluster_dynamic, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                  (self.static_config, ConfigSource.STATIC_BROKER_CONFIG))
        static = self.static_config
        if "process.roles" not in static and "zookeeper.connect" not in static:
            # No server.properties (a controller built in a test): Kafka's defaults, which a
            # KafkaConfig only gives with a metadata mode named; nothing connects anywhere.
            static = {**static, "zookeeper.connect": "localhost:2181"}
        broker_config = KafkaConfig(static, False, dynamic_broker_configs=node_dynamic,
                                    dynamic_default_configs=cluster_dynamic)
        overrides = {k: v for k, v in creation_configs.items() if k in LOG_CONFIG_DEF.config_keys}
        values = LOG_CONFIG_DEF.parse({**broker_config.log_config_defaults(), **overrides})
        entries = []
        for name in sorted(LOG_CONFIG_DEF.config_keys):
            key = LOG_CONFIG_DEF.config_keys[name]
            sensitive = key.type is Type.PASSWORD
            value = None if sensitive else ConfigDef.convert_to_string(values[name], key.type)
            if name in overrides:
                source = ConfigSource.TOPIC_CONFIG
            else:
                synonym = TOPIC_CONFIG_SYNONYMS.get(name)
                synonyms = broker_config_synonyms(synonym, True) if synonym is not None else []
                source = next((layer_source for layer, layer_source in layers
                               if any(s in layer for s in synonyms)), ConfigSource.DEFAULT_CONFIG)
            entries.append(EffectiveTopicConfig(name, value, False, int(source), sensitive))
        return entries

    def delete_topic_configs(self, name: str) -> None:
        self._config_data.remove(ConfigResource(ConfigResourceType.TOPIC, name))

    def unclean_leader_election_enabled_for_topic(self, name: str) -> bool:
        """The topic's unclean.leader.election.enable, else the cluster default's, else
        false (Kafka 3.0 always said false here; later releases look the config up)."""
        value = self.get_configs(ConfigResource(ConfigResourceType.TOPIC, name)).get(
            UNCLEAN_LEADER_ELECTION_ENABLE)
        if value is None:
            value = self.get_configs(ConfigResource(ConfigResourceType.BROKER, "")).get(
                UNCLEAN_LEADER_ELECTION_ENABLE)
        return value is not None and value.strip().lower() == "true"
