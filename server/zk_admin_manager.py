"""Port of core/src/main/scala/kafka/server/ZkAdminManager.scala, with
core/src/main/scala/kafka/server/ConfigHelper.scala (DescribeConfigs) and the log-level
half of core/src/main/scala/kafka/utils/Log4jController.scala (over Python's logging).

The admin APIs of a ZooKeeper-based broker write ZooKeeper and nothing else:

* CreateTopics: validate, pick a replica assignment (AdminUtils), write the topic's config
  and /brokers/topics/<t>; the controller notices and elects leaders. With a timeout the
  answer waits in a DelayedCreatePartitions until this broker's metadata cache shows a
  leader for every new partition (KafkaApis calls ``try_complete_delayed_topic_operations``
  after each UpdateMetadata).
* DeleteTopics: /admin/delete_topics/<t>; waits in a DelayedDeleteTopics until the cache no
  longer has the topic.
* CreatePartitions: extend /brokers/topics/<t>; waits like CreateTopics.
* AlterConfigs / IncrementalAlterConfigs: validate, then write /config/topics/<t> or
  /config/brokers/<id|<default>> plus a /config/changes notification, which every broker's
  DynamicConfigManager applies. BROKER_LOGGER changes apply to this process's loggers.
* DescribeConfigs: a topic's effective configs (its override, else the broker synonym that
  supplies the default) and the broker's configs with their sources and synonyms.

The methods are version-neutral: KafkaApis turns requests into these arguments and the
results (``ApiError``, ``CreateTopicResult``, ``DescribeConfigsResult`` ...) into kio
responses of the version asked for.
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Protocol, Sequence

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import (
    AdminOperationException,
    ApiException,
    InvalidConfigException,
    InvalidConfigurationException,
    InvalidRequestException,
    ThrottlingQuotaExceededException,
    UnknownTopicOrPartitionException,
)
from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.log.log_config import TOPIC_CONFIG_SYNONYMS
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_create_partitions import CreatePartitionsMetadata, DelayedCreatePartitions
from kafka_py.server.delayed_delete_topics import DelayedDeleteTopics, DeleteTopicMetadata
from kafka_py.server.delayed_operation import DelayedOperationPurgatory
from kafka_py.server.controller_mutation_quota_manager import (
    UNBOUNDED_CONTROLLER_MUTATION_QUOTA,
    ControllerMutationQuota,
)
from kafka_py.server.delayed_operation_key import TopicKey
from kafka_py.server.dynamic_broker_config import DynamicBrokerConfig, base_config_name, is_password_config
from kafka_py.server.kafka_config import CONFIG_DEF as BROKER_CONFIG_DEF
from kafka_py.server.kafka_config import DYNAMIC_BROKER_CONFIGS, KafkaConfig, broker_config_synonyms
from kafka_py.clients.common.config.config_def import ConfigDef, ConfigException, ConfigKey, Type
from kafka_py.core.utils.logging import TRACE, IdentLogger
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.admin_zk_client import (
    AdminUtils,
    AdminZkClient,
    BrokerMetadata,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidTopicException,
    Topic,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
)
from kafka_py.core.zk.zk_data import ConfigEntityName, ConfigType

if TYPE_CHECKING:
    # ZooKeeper mode only: a KRaft node imports this module without the ZooKeeper client.
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient

logger = logging.getLogger(__name__)

__all__ = [
    "ZkAdminManager", "ConfigHelper", "Log4jController", "ApiError", "ConfigResourceType", "ConfigSource",
    "ConfigDataType", "AlterConfigOpType", "CreatableTopic", "CreatableTopicConfigs", "CreateTopicResult",
    "DescribeConfigsSynonym", "DescribeConfigsResourceResult", "DescribeConfigsResult",
    "NO_NUM_PARTITIONS", "NO_REPLICATION_FACTOR",
]

#: CreateTopicsRequest's "use the broker default" markers.
NO_NUM_PARTITIONS = -1
NO_REPLICATION_FACTOR = -1


# -- protocol enums (clients' ConfigResource.Type, DescribeConfigsResponse.ConfigSource /
# ConfigType, AlterConfigOp.OpType) ----------------------------------------------------------

class ConfigResourceType(enum.IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8

    @classmethod
    def for_id(cls, resource_type: int) -> "ConfigResourceType":
        try:
            return cls(int(resource_type))
        except ValueError:
            return cls.UNKNOWN

    def __str__(self) -> str:
        return self.name


class ConfigSource(enum.IntEnum):
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    #: The admin client's name for TOPIC_CONFIG.
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class ConfigDataType(enum.IntEnum):
    """DescribeConfigs' config_type (v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9

    @classmethod
    def for_type(cls, config_type: Type | None) -> "ConfigDataType":
        return cls.UNKNOWN if config_type is None else cls[config_type.name]


class AlterConfigOpType(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


# -- value types ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class CreatableTopic:
    """CreateTopicsRequest's CreatableTopic, version-neutral: assignments partition -> brokers,
    configs name -> value (None values are refused, as Kafka does)."""

    name: str
    num_partitions: int = NO_NUM_PARTITIONS
    replication_factor: int = NO_REPLICATION_FACTOR
    assignments: Mapping[int, Sequence[int]] = field(default_factory=dict)
    configs: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, topic: Any, name: str | None = None) -> "CreatableTopic":
        """Accept this class, kio's CreatableTopic (tuples of assignment / config objects) or
        any object with the same attributes."""
        if isinstance(topic, CreatableTopic):
            return topic
        raw_assignments = getattr(topic, "assignments", None) or {}
        if isinstance(raw_assignments, Mapping):
            assignments = {int(p): [int(b) for b in brokers] for p, brokers in raw_assignments.items()}
        else:
            assignments = {int(a.partition_index): [int(b) for b in a.broker_ids] for a in raw_assignments}
        raw_configs = getattr(topic, "configs", None) or {}
        if isinstance(raw_configs, Mapping):
            configs = dict(raw_configs)
        else:
            configs = {c.name: c.value for c in raw_configs}
        return cls(name=getattr(topic, "name", None) or name or "",
                   num_partitions=int(getattr(topic, "num_partitions", NO_NUM_PARTITIONS)),
                   replication_factor=int(getattr(topic, "replication_factor", NO_REPLICATION_FACTOR)),
                   assignments=assignments, configs=configs)


@dataclass(frozen=True)
class CreatableTopicConfigs:
    """One config of a created topic, as CreateTopics v5+ returns it."""

    name: str
    value: str | None
    read_only: bool
    config_source: int
    is_sensitive: bool


@dataclass(frozen=True)
class CreateTopicResult:
    """One topic's CreateTopics answer. ``num_partitions``, ``replication_factor``,
    ``configs`` and ``topic_id`` are filled only on success for topics the caller asked
    metadata for (-1 / empty otherwise), as KafkaApis resets them on failure."""

    name: str
    error: Errors
    message: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: tuple[CreatableTopicConfigs, ...] = ()
    topic_id: Any = None


@dataclass(frozen=True)
class DescribeConfigsSynonym:
    name: str
    value: str | None
    source: int


@dataclass(frozen=True)
class DescribeConfigsResourceResult:
    name: str
    value: str | None
    read_only: bool
    config_source: int
    is_sensitive: bool
    synonyms: tuple[DescribeConfigsSynonym, ...] = ()
    config_type: int = ConfigDataType.UNKNOWN
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        """DescribeConfigs v0's is_default (v1+ carry ``config_source`` instead)."""
        return self.config_source == ConfigSource.DEFAULT_CONFIG


@dataclass(frozen=True)
class DescribeConfigsResult:
    resource_type: int
    resource_name: str
    error: Errors
    error_message: str | None
    configs: tuple[DescribeConfigsResourceResult, ...] = ()

    @property
    def error_code(self) -> int:
        return self.error.code


def _resource_repr(resource_type: Any, name: str) -> str:
    # Kafka's ConfigResource.toString, which its error messages embed.
    return f"ConfigResource(type={ConfigResourceType.for_id(resource_type).name}, name='{name}')"


def _resource_name_to_broker_id(resource_name: str) -> int:
    try:
        return int(resource_name)
    except (TypeError, ValueError):
        raise InvalidRequestException(f"Broker id must be an integer, but it is: {resource_name}") from None


# -- Log4jController over Python logging --------------------------------------------------------

_LOG4J_TO_PYTHON = {"FATAL": logging.CRITICAL, "ERROR": logging.ERROR, "WARN": logging.WARNING,
                    "INFO": logging.INFO, "DEBUG": logging.DEBUG, "TRACE": TRACE}


class Log4jController:
    """Loggers of this process and their levels, named as log4j names them."""

    ROOT_LOGGER = "root"
    VALID_LOG_LEVELS = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")

    @staticmethod
    def _level_name(level: int) -> str:
        for name in ("FATAL", "ERROR", "WARN", "INFO", "DEBUG"):
            if level >= _LOG4J_TO_PYTHON[name]:
                return name
        return "TRACE"

    @staticmethod
    def _existing_logger(name: str) -> logging.Logger | None:
        if name == Log4jController.ROOT_LOGGER:
            return logging.getLogger()
        existing = logging.Logger.manager.loggerDict.get(name)
        return existing if isinstance(existing, logging.Logger) else None

    @staticmethod
    def loggers() -> dict[str, str]:
        """Every logger with its level; one without a level of its own shows its inherited one."""
        result = {Log4jController.ROOT_LOGGER: Log4jController._level_name(logging.getLogger().level)}
        for name, existing in list(logging.Logger.manager.loggerDict.items()):
            if isinstance(existing, logging.Logger):
                result[name] = Log4jController._level_name(existing.getEffectiveLevel())
        return result

    @staticmethod
    def logger_exists(name: str) -> bool:
        return Log4jController._existing_logger(name) is not None

    @staticmethod
    def log_level(name: str, level: str) -> bool:
        existing = Log4jController._existing_logger(name)
        if not name.strip() or not level.strip() or existing is None:
            return False
        existing.setLevel(_LOG4J_TO_PYTHON.get(level.strip().upper(), logging.DEBUG))
        return True

    @staticmethod
    def unset_log_level(name: str) -> bool:
        existing = Log4jController._existing_logger(name)
        if not name.strip() or existing is None:
            return False
        existing.setLevel(logging.NOTSET)
        return True


# -- ConfigHelper ----------------------------------------------------------------------------------


def alter_log_level_configs(log: Any, ops: Sequence[tuple[str, "AlterConfigOpType", str | None]]) -> None:
    """Set or unset the log levels of IncrementalAlterConfigs' BROKER_LOGGER resource (checked
    before), logging each change on ``log``."""
    for name, op, value in ops:
        if op is AlterConfigOpType.SET:
            log.info("Updating the log level of %s to %s", name, value)
            Log4jController.log_level(name, value or "")
        elif op is AlterConfigOpType.DELETE:
            log.info("Unset the log level of %s", name)
            Log4jController.unset_log_level(name)


class EntityConfigSource(Protocol):
    """Where ConfigHelper reads a topic's config overrides: ZooKeeper's (AdminZkClient) or, on
    a KRaft broker, the metadata log's (CachedConfigRepository)."""

    def fetch_entity_config(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        ...


class ConfigHelper:
    """DescribeConfigs, and the per-config entries CreateTopics returns."""

    def __init__(self, metadata_cache: Any, dynamic_config: DynamicBrokerConfig,
                 admin_zk_client: EntityConfigSource) -> None:
        self.metadata_cache = metadata_cache
        self.dynamic_config = dynamic_config
        self.admin_zk_client = admin_zk_client

    @property
    def config(self) -> KafkaConfig:
        return self.dynamic_config.current_kafka_config

    def describe_configs(self, resources: Iterable[Any], include_synonyms: bool = False,
                         include_documentation: bool = False) -> list[DescribeConfigsResult]:
        """``resources``: ``(resource_type, resource_name, config_names or None)`` tuples or kio
        DescribeConfigsResource objects; None or empty names mean every config."""
        results = []
        for resource in resources:
            if isinstance(resource, tuple):
                resource_type, resource_name, config_names = (tuple(resource) + (None,))[:3]
            else:
                resource_type = resource.resource_type
                resource_name = resource.resource_name
                config_names = getattr(resource, "configuration_keys", None)
            results.append(self._describe_resource(int(resource_type), resource_name, config_names,
                                                   include_synonyms, include_documentation))
        return results

    def _describe_resource(self, resource_type: int, resource_name: str, config_names: Collection[str] | None,
                           include_synonyms: bool, include_documentation: bool) -> DescribeConfigsResult:
        wanted = set(config_names) if config_names else None

        def response(configs: Mapping[str, Any],
                     create_entry: Callable[[str, Any], DescribeConfigsResourceResult]) -> DescribeConfigsResult:
            entries = tuple(create_entry(name, value) for name, value in sorted(configs.items())
                            if wanted is None or name in wanted)
            return DescribeConfigsResult(resource_type, resource_name, Errors.NONE, None, entries)

        try:
            kind = ConfigResourceType.for_id(resource_type)
            if kind is ConfigResourceType.TOPIC:
                topic = resource_name
                Topic.validate(topic)
                if not self.metadata_cache.contains_topic(topic):
                    return DescribeConfigsResult(resource_type, resource_name, Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
                topic_props = self.admin_zk_client.fetch_entity_config(ConfigType.TOPIC, topic)
                return response(self.all_topic_configs(topic_props),
                                lambda n, v: self.create_topic_config_entry(topic_props, include_synonyms,
                                                                            include_documentation, n, v))
            if kind is ConfigResourceType.BROKER:
                if not resource_name:
                    return response(self.dynamic_config.current_dynamic_default_configs,
                                    lambda n, v: self._create_broker_config_entry(False, include_synonyms,
                                                                                  include_documentation, n, v))
                if _resource_name_to_broker_id(resource_name) == self.config.broker_id:
                    return response(self._all_broker_configs(),
                                    lambda n, v: self._create_broker_config_entry(True, include_synonyms,
                                                                                  include_documentation, n, v))
                raise InvalidRequestException(f"Unexpected broker id, expected {self.config.broker_id} or empty "
                                              f"string, but received {resource_name}")
            if kind is ConfigResourceType.BROKER_LOGGER:
                if not resource_name:
                    raise InvalidRequestException("Broker id must not be empty")
                if _resource_name_to_broker_id(resource_name) != self.config.broker_id:
                    raise InvalidRequestException(f"Unexpected broker id, expected {self.config.broker_id} but "
                                                  f"received {resource_name}")
                return response(Log4jController.loggers(), lambda n, v: DescribeConfigsResourceResult(
                    name=n, value=str(v), read_only=False, config_source=ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
                    is_sensitive=False))
            raise InvalidRequestException(f"Unsupported resource type: {kind.name}")
        except Exception as e:  # noqa: BLE001 - every resource gets its own answer
            resource = _resource_repr(resource_type, resource_name)
            message = f"Error processing describe configs request for resource {resource}"
            if isinstance(e, ApiException):
                logger.info("%s: %s", message, e)
            else:
                logger.error(message, exc_info=True)
            err = ApiError.from_throwable(e)
            return DescribeConfigsResult(resource_type, resource_name, err.error, err.message)

    # -- topics ------------------------------------------------------------------------------------

    def all_topic_configs(self, topic_props: Mapping[str, str]) -> dict[str, Any]:
        """Every topic config with its effective value (the broker's defaults under the
        topic's overrides); override names no LogConfig defines are listed raw."""
        defaults = self.config.log_config_defaults()
        overrides = {k: v for k, v in topic_props.items() if k in LOG_CONFIG_DEF.config_keys}
        values = LOG_CONFIG_DEF.parse({**defaults, **overrides})
        result: dict[str, Any] = {k: v for k, v in topic_props.items() if k not in LOG_CONFIG_DEF.config_keys}
        result.update(values)
        return result

    def create_topic_config_entry(self, topic_props: Mapping[str, str], include_synonyms: bool,
                                  include_documentation: bool, name: str, value: Any) -> DescribeConfigsResourceResult:
        key = LOG_CONFIG_DEF.config_keys.get(name)
        config_type = key.type if key is not None else None
        # A config of unknown type might be a secret: hide it.
        is_sensitive = config_type is None or config_type is Type.PASSWORD
        value_as_string = None if is_sensitive else ConfigDef.convert_to_string(value, config_type)
        broker_synonym = TOPIC_CONFIG_SYNONYMS.get(name)
        all_synonyms = []
        if broker_synonym is not None:
            all_synonyms = self._config_synonyms(broker_synonym, broker_config_synonyms(broker_synonym, True),
                                                 is_sensitive)
        if name in topic_props:
            all_synonyms.insert(0, DescribeConfigsSynonym(name, value_as_string, ConfigSource.TOPIC_CONFIG))
        source = all_synonyms[0].source if all_synonyms else ConfigSource.DEFAULT_CONFIG
        return DescribeConfigsResourceResult(
            name=name, value=value_as_string, read_only=False, config_source=source, is_sensitive=is_sensitive,
            synonyms=tuple(all_synonyms) if include_synonyms else (),
            config_type=ConfigDataType.for_type(config_type),
            documentation=key.documentation if include_documentation and key is not None else None)

    # -- brokers -----------------------------------------------------------------------------------

    def _all_broker_configs(self) -> dict[str, Any]:
        config = self.config
        # Internal keys (the KRaft ones) only when the properties set them, as in Kafka.
        result: dict[str, Any] = {k: v for k, v in config.originals.items() if v is not None}
        result.update(config.non_internal_values())
        return result

    def _create_broker_config_entry(self, per_broker_config: bool, include_synonyms: bool, include_documentation: bool,
                                    name: str, value: Any) -> DescribeConfigsResourceResult:
        all_names = broker_config_synonyms(name, True)
        config_type = KafkaConfig.config_type(name)
        is_sensitive = config_type is None or config_type is Type.PASSWORD
        if is_sensitive:
            value_as_string = None
        elif isinstance(value, str):
            value_as_string = value
        else:
            value_as_string = ConfigDef.convert_to_string(value, config_type)
        all_synonyms = [s for s in self._config_synonyms(name, all_names, is_sensitive)
                        if per_broker_config or s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        source = all_synonyms[0].source if all_synonyms else ConfigSource.DEFAULT_CONFIG
        key = BROKER_CONFIG_DEF.config_keys.get(name)
        return DescribeConfigsResourceResult(
            name=name, value=value_as_string, read_only=name not in DYNAMIC_BROKER_CONFIGS, config_source=source,
            is_sensitive=is_sensitive, synonyms=tuple(all_synonyms) if include_synonyms else (),
            config_type=ConfigDataType.for_type(config_type),
            documentation=key.documentation if include_documentation and key is not None else None)

    def _config_synonyms(self, name: str, synonyms: list[str], is_sensitive: bool) -> list[DescribeConfigsSynonym]:
        """Where each of ``synonyms`` is set, in order of precedence: source first, then the
        synonym order. Entries before ``name`` itself are dropped (a listener override is not
        a synonym of its base config) -- with Kafka's consequence that a lower-precedence
        synonym set where ``name`` is not (log.retention.hours without log.retention.ms) is
        not reported for ``name``."""
        dynamic = self.dynamic_config
        layers = ((dynamic.current_dynamic_broker_configs, ConfigSource.DYNAMIC_BROKER_CONFIG),
                  (dynamic.current_dynamic_default_configs, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                  (dynamic.static_broker_configs, ConfigSource.STATIC_BROKER_CONFIG),
                  (dynamic.static_default_configs, ConfigSource.DEFAULT_CONFIG))
        found = []
        for layer, source in layers:
            for synonym in synonyms:
                if synonym in layer:
                    found.append(DescribeConfigsSynonym(synonym, None if is_sensitive else layer[synonym], source))
        for index, entry in enumerate(found):
            if entry.name == name:
                return found[index:]
        return []


# -- the admin manager -----------------------------------------------------------------------------

class ZkAdminManager:
    def __init__(self, config: KafkaConfig, metadata_cache: Any, zk_client: KafkaZkClient,
                 admin_zk_client: AdminZkClient | None = None, time: Time = Time.SYSTEM,
                 dynamic_config: DynamicBrokerConfig | None = None) -> None:
        """``dynamic_config`` should be the broker's shared DynamicBrokerConfig (the one its
        BrokerConfigHandler updates), so DescribeConfigs and validation see dynamic changes.
        Without one, a private copy is loaded from ZooKeeper once."""
        self.metadata_cache = metadata_cache
        self.zk_client = zk_client
        self.admin_zk_client = admin_zk_client if admin_zk_client is not None else AdminZkClient(zk_client)
        self.time = time
        if dynamic_config is None:
            dynamic_config = DynamicBrokerConfig(config)
            try:
                dynamic_config.initialize(zk_client)
            except Exception:  # noqa: BLE001 - describe still works on the static config
                logger.exception("Could not load dynamic broker configs")
        self.dynamic_config = dynamic_config
        self.logger = IdentLogger(logger, f"[Admin Manager on Broker {config.broker_id}]: ")
        self.topic_purgatory = DelayedOperationPurgatory("topic", broker_id=config.broker_id)
        self.config_helper = ConfigHelper(metadata_cache, dynamic_config, self.admin_zk_client)

    @property
    def config(self) -> KafkaConfig:
        """The broker's current config (static properties plus dynamic layers)."""
        return self.dynamic_config.current_kafka_config

    @property
    def has_delayed_topic_operations(self) -> bool:
        return self.topic_purgatory.num_delayed() != 0

    def try_complete_delayed_topic_operations(self, topic: str) -> int:
        """Give waiting create/delete operations on ``topic`` a chance to finish (after the
        metadata cache changed)."""
        key = TopicKey(topic)
        completed = self.topic_purgatory.check_and_complete(key)
        self.logger.debug("Request key %s unblocked %d topic requests.", key.key_label, completed)
        return completed

    def shutdown(self) -> None:
        self.topic_purgatory.shutdown()

    # -- CreateTopics ------------------------------------------------------------------------------

    def create_topics(self, timeout_ms: int, validate_only: bool, to_create: Mapping[str, Any],
                      include_configs_and_metadata: "bool | Collection[str]",
                      response_callback: Callable[[dict[str, CreateTopicResult]], None],
                      controller_mutation_quota: ControllerMutationQuota = UNBOUNDED_CONTROLLER_MUTATION_QUOTA
                      ) -> None:
        """Create topics and answer once they have leaders, on error, or on timeout.

        ``controller_mutation_quota`` is charged each created topic's partitions before it is
        written (server/controller_mutation_quota_manager.py); a strict one refuses a topic
        with THROTTLING_QUOTA_EXCEEDED once the client is over its rate.

        ``include_configs_and_metadata``: True, or the names of the topics whose partition
        count, replication factor and configs go into the answer (those the client may
        describe, in Kafka)."""
        config = self.config
        brokers = [BrokerMetadata(b.id, b.rack) for b in self.metadata_cache.get_alive_brokers()]

        def wants_metadata(topic_name: str) -> bool:
            if isinstance(include_configs_and_metadata, bool):
                return include_configs_and_metadata
            return topic_name in include_configs_and_metadata

        # One entry per requested topic, in request order: its metadata, or None while its
        # ZooKeeper writes are pending.
        entries: dict[str, CreatePartitionsMetadata | None] = {}
        populated: dict[str, tuple[int, int, tuple[CreatableTopicConfigs, ...]]] = {}
        topic_ids: dict[str, Any] = {}
        to_write: list[tuple[str, dict[str, Any], dict[int, list[int]]]] = []
        # Existence and name collisions are checked against one read of the cluster's topics
        # (with the request's own topics added as they pass): a check per topic in ZooKeeper
        # is a round trip each. A topic created meanwhile still fails on its znode's create.
        all_topics = set(self.zk_client.get_all_topics_in_cluster())

        def failed(topic: Any, e: Exception) -> None:
            if isinstance(e, TopicExistsException):
                self.logger.debug("Topic creation failed since topic '%s' already exists.", topic.name)
                entries[topic.name] = CreatePartitionsMetadata.of_error(topic.name, e)
            elif isinstance(e, ThrottlingQuotaExceededException):
                self.logger.debug("Topic creation not allowed because quota is violated: %s", topic.name)
                entries[topic.name] = CreatePartitionsMetadata.of_error(topic.name, e)
            elif isinstance(e, ApiException):
                self.logger.info("Error processing create topic request %s: %s", topic, e)
                entries[topic.name] = CreatePartitionsMetadata.of_error(topic.name, e)
            elif isinstance(e, InvalidConfigException):
                # Bad topic configs (unknown name, bad value): INVALID_CONFIG with the reason.
                self.logger.info("Error processing create topic request %s: %s", topic, e)
                entries[topic.name] = CreatePartitionsMetadata.of_error(topic.name,
                                                                        ApiError(Errors.INVALID_CONFIG, str(e)))
            else:
                self.logger.error("Error processing create topic request %s", topic, exc_info=e)
                entries[topic.name] = CreatePartitionsMetadata.of_error(topic.name, e)

        topics_by_name: dict[str, Any] = {}
        for key, raw in to_create.items():
            topic = CreatableTopic.of(raw, key)
            topics_by_name[topic.name] = topic
            try:
                if self.metadata_cache.contains_topic(topic.name):
                    raise TopicExistsException(f"Topic '{topic.name}' already exists.")
                null_configs = [k for k, v in topic.configs.items() if v is None]
                if null_configs:
                    raise InvalidRequestException(
                        f"Null value not supported for topic configs : {','.join(null_configs)}")
                if (topic.num_partitions != NO_NUM_PARTITIONS or topic.replication_factor != NO_REPLICATION_FACTOR) \
                        and topic.assignments:
                    raise InvalidRequestException("Both numPartitions or replicationFactor and replicasAssignments "
                                                  "were set. Both cannot be used at the same time.")
                num_partitions = (config.num_partitions if topic.num_partitions == NO_NUM_PARTITIONS
                                  else topic.num_partitions)
                replication_factor = (config.default_replication_factor
                                      if topic.replication_factor == NO_REPLICATION_FACTOR
                                      else topic.replication_factor)
                if topic.assignments:
                    # Unknown brokers are accepted here (unlike CreatePartitions), as Kafka's
                    # TopicCommand-compatible path does.
                    assignments = {p: list(b) for p, b in topic.assignments.items()}
                else:
                    assignments = AdminUtils.assign_replicas_to_brokers(brokers, num_partitions, replication_factor)
                self.logger.debug("Assignments for topic %s are %s", topic.name, assignments)
                configs = {k: v for k, v in topic.configs.items() if v is not None}  # all of them (checked above)
                self.admin_zk_client.validate_topic_create(topic.name, assignments, configs, all_topics=all_topics)
                # Safe before creation: a failure below discards it.
                if wants_metadata(topic.name):
                    populated[topic.name] = self._metadata_and_configs(configs, assignments)
                if validate_only:
                    entries[topic.name] = CreatePartitionsMetadata(topic.name, frozenset(assignments))
                else:
                    controller_mutation_quota.record(len(assignments))
                    all_topics.add(topic.name)
                    to_write.append((topic.name, configs, assignments))
                    entries[topic.name] = None
            except Exception as e:  # noqa: BLE001 - reported per topic
                failed(topic, e)

        if to_write:
            errors = self.admin_zk_client.create_topics_with_assignments(to_write, uses_topic_id=config.uses_topic_id)
            for name, _, assignments in to_write:
                error = errors.get(name)
                if error is None:
                    entries[name] = CreatePartitionsMetadata(name, frozenset(assignments))
                else:
                    populated.pop(name, None)
                    failed(topics_by_name[name], error)
            wanted = [name for name, _, _ in to_write if errors.get(name) is None and wants_metadata(name)]
            if wanted:
                topic_ids.update(self.zk_client.get_topic_ids_for_topics(wanted))
        metadata: list[CreatePartitionsMetadata] = [m for m in entries.values() if m is not None]

        def complete(errors: dict[str, ApiError]) -> None:
            results = {}
            for name, error in errors.items():
                if error.is_success() and name in populated:
                    num_partitions, replication_factor, configs = populated[name]
                    results[name] = CreateTopicResult(name, Errors.NONE, None, num_partitions, replication_factor,
                                                      configs, topic_ids.get(name))
                else:
                    results[name] = CreateTopicResult(name, error.error, error.message)
            response_callback(results)

        self._complete_or_delay(timeout_ms, validate_only, metadata, [m.topic for m in metadata], complete)

    def _metadata_and_configs(self, configs: Mapping[str, str], assignments: Mapping[int, Sequence[int]]
                              ) -> tuple[int, int, tuple[CreatableTopicConfigs, ...]]:
        helper = self.config_helper
        values = helper.all_topic_configs(configs)
        entries = []
        for name in sorted(LOG_CONFIG_DEF.config_keys):
            entry = helper.create_topic_config_entry(configs, False, False, name, values[name])
            entries.append(CreatableTopicConfigs(name, entry.value, entry.read_only, entry.config_source,
                                                 entry.is_sensitive))
        return len(assignments), len(assignments[0]), tuple(entries)

    def _complete_or_delay(self, timeout_ms: int, validate_only: bool, metadata: list[CreatePartitionsMetadata],
                           topics: list[str], callback: Callable[[dict[str, ApiError]], None]) -> None:
        if timeout_ms <= 0 or validate_only or not any(m.error.is_success() for m in metadata):
            results = {}
            for m in metadata:
                # Written but not waited for: the client learns it is not known to be done.
                if m.error.is_success() and not validate_only:
                    results[m.topic] = ApiError(Errors.REQUEST_TIMED_OUT)
                else:
                    results[m.topic] = m.error
            callback(results)
        else:
            delayed = DelayedCreatePartitions(timeout_ms, metadata, self, callback)
            self.topic_purgatory.try_complete_else_watch(delayed, [TopicKey(t) for t in topics])

    # -- DeleteTopics ------------------------------------------------------------------------------

    def delete_topics(self, timeout_ms: int, topics: Iterable[str],
                      response_callback: Callable[[dict[str, Errors]], None],
                      controller_mutation_quota: ControllerMutationQuota = UNBOUNDED_CONTROLLER_MUTATION_QUOTA
                      ) -> None:
        """Mark topics for deletion and answer once the cache has dropped them, or on timeout.

        With delete.topic.enable=false every topic gets TOPIC_DELETION_DISABLED (KafkaApis
        answers INVALID_REQUEST instead for DeleteTopics v0-2, as Kafka does)."""
        topics = list(dict.fromkeys(topics))
        if not self.config.delete_topic_enable:
            response_callback({t: Errors.TOPIC_DELETION_DISABLED for t in topics})
            return
        metadata = []
        for topic in topics:
            try:
                # the topic's partitions, charged before it is marked (0 if the cache lost it)
                controller_mutation_quota.record(self.metadata_cache.num_partitions(topic) or 0)
                self.admin_zk_client.delete_topic(topic)
                metadata.append(DeleteTopicMetadata(topic, Errors.NONE))
            except TopicAlreadyMarkedForDeletionException:
                # Still wait for it: repeated calls may all wait for the one deletion.
                metadata.append(DeleteTopicMetadata(topic, Errors.NONE))
            except ThrottlingQuotaExceededException:
                self.logger.debug("Topic deletion not allowed because quota is violated: %s", topic)
                metadata.append(DeleteTopicMetadata(topic, Errors.THROTTLING_QUOTA_EXCEEDED))
            except Exception as e:  # noqa: BLE001
                if isinstance(e, ApiException):
                    self.logger.info("Error processing delete topic request for topic %s: %s", topic, e)
                else:
                    self.logger.error("Error processing delete topic request for topic %s", topic,
                                      exc_info=True)
                metadata.append(DeleteTopicMetadata.of_exception(topic, e))

        if timeout_ms <= 0 or not any(m.error is Errors.NONE for m in metadata):
            response_callback({m.topic: Errors.REQUEST_TIMED_OUT if m.error is Errors.NONE else m.error
                               for m in metadata})
        else:
            delayed = DelayedDeleteTopics(timeout_ms, metadata, self, response_callback)
            self.topic_purgatory.try_complete_else_watch(delayed, [TopicKey(t) for t in topics])

    # -- CreatePartitions --------------------------------------------------------------------------

    def create_partitions(self, timeout_ms: int, new_partitions: Any, validate_only: bool,
                          callback: Callable[[dict[str, ApiError]], None],
                          controller_mutation_quota: ControllerMutationQuota = UNBOUNDED_CONTROLLER_MUTATION_QUOTA
                          ) -> None:
        """``new_partitions``: topic -> (new total count, assignments of the new partitions
        or None), or kio CreatePartitionsTopic objects."""
        all_brokers = self.admin_zk_client.get_broker_metadatas()
        all_broker_ids = {b.id for b in all_brokers}
        metadata: list[CreatePartitionsMetadata] = []
        requested = self._normalize_new_partitions(new_partitions)
        for topic, (count, new_assignments) in requested.items():
            try:
                if not Topic.is_valid(topic):
                    # No topic has a name Topic.validate refuses, and such a name must not
                    # reach ZooKeeper ("x/../y" and NUL make paths the client refuses): the
                    # answer for a topic that does not exist (KRaft Kafka's, from its topic table).
                    raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
                if self.zk_client.is_topic_marked_for_deletion(topic):
                    raise InvalidTopicException("The topic is queued for deletion.")
                existing = {}
                for tp, assignment in self.zk_client.get_full_replica_assignment_for_topics([topic]).items():
                    if assignment.is_being_reassigned():
                        # Adding partitions mid-reassignment would race the controller's
                        # own rewrite of the assignment.
                        raise Errors.REASSIGNMENT_IN_PROGRESS.exception_class(
                            f"A partition reassignment is in progress for the topic '{topic}'.")
                    existing[tp.partition] = assignment
                if not existing:
                    raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
                old_count = len(existing)
                increment = count - old_count
                if increment < 0:
                    raise InvalidPartitionsException(f"Topic currently has {old_count} partitions, which is higher "
                                                     f"than the requested {count}.")
                if increment == 0:
                    raise InvalidPartitionsException(f"Topic already has {old_count} partitions.")
                proposed = None
                if new_assignments is not None:
                    unknown = sorted({b for replicas in new_assignments for b in replicas} - all_broker_ids)
                    if unknown:
                        raise InvalidReplicaAssignmentException(
                            f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
                    if len(new_assignments) != increment:
                        raise InvalidReplicaAssignmentException(
                            f"Increasing the number of partitions by {increment} but {len(new_assignments)} "
                            "assignments provided.")
                    proposed = {old_count + i: list(r) for i, r in enumerate(new_assignments)}
                for_new = self.admin_zk_client.create_new_partitions_assignment(topic, existing, all_brokers, count,
                                                                                proposed)
                if validate_only:
                    metadata.append(CreatePartitionsMetadata(topic, frozenset(existing) | frozenset(for_new)))
                else:
                    controller_mutation_quota.record(increment)
                    updated = self.admin_zk_client.create_partitions_with_assignment(topic, existing, for_new)
                    metadata.append(CreatePartitionsMetadata(topic, frozenset(updated)))
            except (ApiException, AdminOperationException) as e:
                metadata.append(CreatePartitionsMetadata.of_error(topic, e))
            except Exception as e:  # noqa: BLE001
                self.logger.error("Error processing create partitions request for topic %s", topic,
                                  exc_info=True)
                metadata.append(CreatePartitionsMetadata.of_error(topic, e))
        self._complete_or_delay(timeout_ms, validate_only, metadata, list(requested), callback)

    @staticmethod
    def _normalize_new_partitions(new_partitions: Any) -> dict[str, tuple[int, list[list[int]] | None]]:
        def replicas(assignment: Any) -> list[int]:
            broker_ids = getattr(assignment, "broker_ids", assignment)
            return [int(b) for b in broker_ids]

        result = {}
        if isinstance(new_partitions, Mapping):
            items = [(topic, spec[0], spec[1] if len(spec) > 1 else None) if isinstance(spec, (tuple, list))
                     else (topic, spec.count, getattr(spec, "assignments", None))
                     for topic, spec in new_partitions.items()]
        else:
            items = [(t.name, t.count, t.assignments) for t in new_partitions]
        for topic, count, assignments in items:
            result[topic] = (int(count), None if assignments is None else [replicas(a) for a in assignments])
        return result

    # -- DescribeConfigs ---------------------------------------------------------------------------

    def describe_configs(self, resources: Iterable[Any], include_synonyms: bool = False,
                         include_documentation: bool = False) -> list[DescribeConfigsResult]:
        return self.config_helper.describe_configs(resources, include_synonyms, include_documentation)

    # -- AlterConfigs ------------------------------------------------------------------------------

    def alter_configs(self, resources: Mapping[tuple[int, str], Mapping[str, str | None]],
                      validate_only: bool) -> dict[tuple[int, str], ApiError]:
        """Replace each resource's whole config: ``{(resource_type, name): {key: value}}``."""
        results = {}
        for resource, entries in resources.items():
            resource_type, name = resource
            try:
                null_updates = [k for k, v in entries.items() if v is None]
                if null_updates:
                    raise InvalidRequestException(f"Null value not supported for : {','.join(null_updates)}")
                props = {k: v for k, v in entries.items() if v is not None}  # all of them (checked above)
                kind = ConfigResourceType.for_id(resource_type)
                if kind is ConfigResourceType.TOPIC:
                    self._alter_topic_configs(name, validate_only, props)
                elif kind is ConfigResourceType.BROKER:
                    self._alter_broker_configs(name, validate_only, props)
                else:
                    raise InvalidRequestException("AlterConfigs is only supported for topics and brokers, but "
                                                  f"resource type is {kind.name}")
                results[resource] = ApiError.NONE  # type: ignore[attr-defined]
            except Exception as e:  # noqa: BLE001
                results[resource] = self._alter_error(resource_type, name, e, entries)
        return results

    def _alter_error(self, resource_type: Any, name: str, e: BaseException, detail: Any) -> ApiError:
        resource = _resource_repr(resource_type, name)
        if isinstance(e, (ConfigException, ValueError)):
            # A value that does not parse or validate: INVALID_REQUEST naming the key.
            message = f"Invalid config value for resource {resource}: {e}"
            self.logger.info("%s", message)
            return ApiError(Errors.INVALID_REQUEST, message)
        if isinstance(e, InvalidConfigException):
            # Unknown config names and inconsistent combinations (Kafka's
            # InvalidConfigurationException).
            self.logger.info("Invalid config for resource %s: %s", resource, e)
            return ApiError(Errors.INVALID_CONFIG, str(e))
        message = f"Error processing alter configs request for resource {resource}, config {detail}"
        if isinstance(e, ApiException):
            self.logger.info("%s: %s", message, e)
        else:
            self.logger.error("%s", message, exc_info=True)
        return ApiError.from_throwable(e)

    def _alter_topic_configs(self, topic: str, validate_only: bool, props: Mapping[str, str]) -> None:
        if not self.metadata_cache.contains_topic(topic):
            raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
        self.admin_zk_client.validate_topic_config(topic, props)
        if not validate_only:
            self.logger.info("Updating topic %s with new configuration : %s", topic, dict(props))
            self.admin_zk_client.change_topic_config(topic, props)

    def _alter_broker_configs(self, name: str, validate_only: bool, props: Mapping[str, str]) -> None:
        broker_id = self._get_broker_id(name)
        per_broker_config = broker_id is not None
        self.dynamic_config.validate(props, per_broker_config)
        if not validate_only:
            # passwords are logged as [hidden] (ZkAdminManager.toLoggableProps)
            loggable = {k: "[hidden]" if is_password_config(k) else v for k, v in props.items()}
            if per_broker_config:
                self.dynamic_config.reload_updated_files_without_config_change(props)
                self.logger.info("Updating broker %s with new configuration : %s", broker_id, loggable)
            else:
                self.logger.info("Updating brokers with new configuration : %s", loggable)
            self.admin_zk_client.change_broker_config(
                broker_id, self.dynamic_config.to_persistent_props(props, per_broker_config))

    def _get_broker_id(self, name: str | None) -> int | None:
        if not name:
            return None
        broker_id = _resource_name_to_broker_id(name)
        if broker_id != self.config.broker_id:
            raise InvalidRequestException(f"Unexpected broker id, expected {self.config.broker_id}, but received "
                                          f"{name}")
        return broker_id

    # -- IncrementalAlterConfigs -------------------------------------------------------------------

    def incremental_alter_configs(self, resources: Mapping[tuple[int, str], Sequence[Any]],
                                  validate_only: bool) -> dict[tuple[int, str], ApiError]:
        """``{(resource_type, name): [(key, op, value), ...]}`` with op SET=0, DELETE=1,
        APPEND=2, SUBTRACT=3 (kio AlterableConfig objects are accepted too)."""
        results = {}
        for resource, raw_ops in resources.items():
            resource_type, name = resource
            try:
                ops = [self._normalize_op(op) for op in raw_ops]
                names = [key for key, _, _ in ops]
                duplicates = sorted({k for k in names if names.count(k) > 1})
                if duplicates:
                    raise InvalidRequestException(f"Error due to duplicate config keys : {','.join(duplicates)}")
                null_updates = [f"{op.name}:{key}" for key, op, value in ops
                                if value is None and op is not AlterConfigOpType.DELETE]
                if null_updates:
                    raise InvalidRequestException(f"Null value not supported for : {','.join(null_updates)}")
                kind = ConfigResourceType.for_id(resource_type)
                if kind is ConfigResourceType.TOPIC:
                    # Checked before the config is read from ZooKeeper, where an invalid name
                    # would make a path the client refuses; _alter_topic_configs checks it again.
                    if not self.metadata_cache.contains_topic(name):
                        raise UnknownTopicOrPartitionException(f"The topic '{name}' does not exist.")
                    props = self.admin_zk_client.fetch_entity_config(ConfigType.TOPIC, name)
                    self._prepare_incremental_configs(ops, props, LOG_CONFIG_DEF.config_keys)
                    self._alter_topic_configs(name, validate_only, props)
                elif kind is ConfigResourceType.BROKER:
                    broker_id = self._get_broker_id(name)
                    per_broker_config = broker_id is not None
                    entity = str(broker_id) if per_broker_config else ConfigEntityName.DEFAULT
                    persistent = self.admin_zk_client.fetch_entity_config(ConfigType.BROKER, entity)
                    props = self.dynamic_config.from_persistent_props(persistent, per_broker_config)
                    self._prepare_incremental_configs(ops, props, BROKER_CONFIG_DEF.config_keys)
                    self._alter_broker_configs(name, validate_only, props)
                elif kind is ConfigResourceType.BROKER_LOGGER:
                    self._get_broker_id(name)
                    self._validate_log_level_configs(ops)
                    if not validate_only:
                        self._alter_log_level_configs(ops)
                else:
                    raise InvalidRequestException("AlterConfigs is only supported for topics and brokers, but "
                                                  f"resource type is {kind.name}")
                results[resource] = ApiError.NONE  # type: ignore[attr-defined]
            except Exception as e:  # noqa: BLE001
                results[resource] = self._alter_error(resource_type, name, e, raw_ops)
        return results

    @staticmethod
    def _normalize_op(op: Any) -> tuple[str, AlterConfigOpType, str | None]:
        if isinstance(op, (tuple, list)):
            key, op_type, value = op
        else:
            key, op_type, value = op.name, op.config_operation, op.value
        try:
            return key, AlterConfigOpType(int(op_type)), value
        except ValueError:
            raise InvalidRequestException(f"Unknown config operation {op_type} for {key}") from None

    @staticmethod
    def _prepare_incremental_configs(ops: Sequence[tuple[str, AlterConfigOpType, str | None]], props: dict[str, str],
                                     config_keys: Mapping[str, ConfigKey]) -> None:
        def list_key(name: str) -> ConfigKey:
            key = config_keys.get(base_config_name(name))
            if key is None:
                raise InvalidConfigurationException(f"Unknown topic config name: {name}")
            return key

        for name, op, value in ops:
            if op is AlterConfigOpType.SET:
                props[name] = value  # type: ignore[assignment]
            elif op is AlterConfigOpType.DELETE:
                props.pop(name, None)
            else:
                key = list_key(name)
                verb = "append" if op is AlterConfigOpType.APPEND else "subtract"
                if key.type is not Type.LIST:
                    raise InvalidRequestException(f"Config value {verb} is not allowed for config key: {name}")
                current = props.get(name)
                if current is None:
                    current = ConfigDef.convert_to_string(key.default_value, Type.LIST) or ""
                # An empty current list contributes no element (Kafka's split would leave an
                # empty first entry, turning "" + "x" into ",x").
                old_values = [v for v in current.split(",") if v != ""]
                given = (value or "").split(",")
                if op is AlterConfigOpType.APPEND:
                    new_values = old_values + given
                else:
                    # Multiset difference: each given entry removes one occurrence.
                    new_values = list(old_values)
                    for v in given:
                        if v in new_values:
                            new_values.remove(v)
                props[name] = ",".join(new_values)

    @staticmethod
    def _validate_log_level_configs(ops: Sequence[tuple[str, AlterConfigOpType, str | None]]) -> None:
        def ensure_exists(logger_name: str) -> None:
            if not Log4jController.logger_exists(logger_name):
                raise ConfigException(logger_name, full_message=f"Logger {logger_name} does not exist!")

        for name, op, value in ops:
            if op is AlterConfigOpType.SET:
                ensure_exists(name)
                if value not in Log4jController.VALID_LOG_LEVELS:
                    raise ConfigException(name, value, full_message=(
                        f"Cannot set the log level of {name} to {value} as it is not a supported log level. "
                        f"Valid log levels are {', '.join(Log4jController.VALID_LOG_LEVELS)}"))
            elif op is AlterConfigOpType.DELETE:
                ensure_exists(name)
                if name == Log4jController.ROOT_LOGGER:
                    raise InvalidRequestException(
                        f"Removing the log level of the {Log4jController.ROOT_LOGGER} logger is not allowed")
            else:
                raise InvalidRequestException(f"{op.name} operation is not allowed for the BROKER_LOGGER resource")

    def _alter_log_level_configs(self, ops: Sequence[tuple[str, AlterConfigOpType, str | None]]) -> None:
        alter_log_level_configs(self.logger, ops)
