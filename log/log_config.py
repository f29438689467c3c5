"""Port of core/src/main/scala/kafka/log/LogConfig.scala (with the pieces of kafka/api/ApiVersion.scala
and kafka.server.ThrottledReplicaListValidator that topic configs need).

Every topic-level config of Kafka 2.8.2, with Kafka's defaults, types and validators. A
``LogConfig`` is an immutable value: build it with ``LogConfig.from_props(defaults,
overrides)`` from raw properties (broker defaults already translated to topic keys, plus the
topic's overrides from ZooKeeper), or ``LogConfig(segment_size=...)`` in code and tests; both
paths validate every value and raise InvalidConfigException naming the key, the value and
what is allowed.
"""
from __future__ import annotations

import logging
import random
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from kafka_py.clients.common.errors import InvalidConfigException
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import LOG_OVERHEAD, RECORD_OVERHEAD_V0, TimestampType
from kafka_py.clients.common.config.config_def import (
    NO_DEFAULT_VALUE,
    ConfigDef,
    ConfigException,
    Importance,
    Type,
    Validator,
    at_least,
    between,
    in_list,
    valid_list,
)
from kafka_py.core.utils.java_limits import LONG_MAX

logger = logging.getLogger(__name__)

# -- topic config names (Kafka's TopicConfig constants) ---------------------------------------

SEGMENT_BYTES_PROP = "segment.bytes"
SEGMENT_MS_PROP = "segment.ms"
SEGMENT_JITTER_MS_PROP = "segment.jitter.ms"
SEGMENT_INDEX_BYTES_PROP = "segment.index.bytes"
FLUSH_MESSAGES_PROP = "flush.messages"
FLUSH_MS_PROP = "flush.ms"
RETENTION_BYTES_PROP = "retention.bytes"
RETENTION_MS_PROP = "retention.ms"
MAX_MESSAGE_BYTES_PROP = "max.message.bytes"
INDEX_INTERVAL_BYTES_PROP = "index.interval.bytes"
DELETE_RETENTION_MS_PROP = "delete.retention.ms"
MIN_COMPACTION_LAG_MS_PROP = "min.compaction.lag.ms"
MAX_COMPACTION_LAG_MS_PROP = "max.compaction.lag.ms"
FILE_DELETE_DELAY_MS_PROP = "file.delete.delay.ms"
MIN_CLEANABLE_DIRTY_RATIO_PROP = "min.cleanable.dirty.ratio"
CLEANUP_POLICY_PROP = "cleanup.policy"
UNCLEAN_LEADER_ELECTION_ENABLE_PROP = "unclean.leader.election.enable"
MIN_IN_SYNC_REPLICAS_PROP = "min.insync.replicas"
COMPRESSION_TYPE_PROP = "compression.type"
PRE_ALLOCATE_ENABLE_PROP = "preallocate"
MESSAGE_FORMAT_VERSION_PROP = "message.format.version"
MESSAGE_TIMESTAMP_TYPE_PROP = "message.timestamp.type"
MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_PROP = "message.timestamp.difference.max.ms"
LEADER_REPLICATION_THROTTLED_REPLICAS_PROP = "leader.replication.throttled.replicas"
FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP = "follower.replication.throttled.replicas"
MESSAGE_DOWNCONVERSION_ENABLE_PROP = "message.downconversion.enable"

DELETE = "delete"
COMPACT = "compact"

# Values a broker or topic may give compression.type (BrokerCompressionCodec).
BROKER_COMPRESSION_OPTIONS = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


# -- ApiVersion: what message.format.version (and inter.broker.protocol.version) accept -------

@dataclass(frozen=True, order=True)
class ApiVersion:
    """One Kafka inter-broker protocol / message format version (kafka.api.ApiVersion)."""

    id: int
    short_version: str = field(compare=False)
    sub_version: str = field(compare=False)
    record_version: int = field(compare=False)  # highest record batch magic of this version

    @property
    def version(self) -> str:
        return f"{self.short_version}-{self.sub_version}" if self.sub_version else self.short_version

    def __str__(self) -> str:
        return self.version


def _versions() -> tuple[ApiVersion, ...]:
    table = [
        ("0.8.0", "", 0), ("0.8.1", "", 0), ("0.8.2", "", 0), ("0.9.0", "", 0),
        ("0.10.0", "IV0", 1), ("0.10.0", "IV1", 1),
        ("0.10.1", "IV0", 1), ("0.10.1", "IV1", 1), ("0.10.1", "IV2", 1),
        ("0.10.2", "IV0", 1),
        ("0.11.0", "IV0", 2), ("0.11.0", "IV1", 2), ("0.11.0", "IV2", 2),
        ("1.0", "IV0", 2), ("1.1", "IV0", 2),
        ("2.0", "IV0", 2), ("2.0", "IV1", 2),
        ("2.1", "IV0", 2), ("2.1", "IV1", 2), ("2.1", "IV2", 2),
        ("2.2", "IV0", 2), ("2.2", "IV1", 2),
        ("2.3", "IV0", 2), ("2.3", "IV1", 2),
        ("2.4", "IV0", 2), ("2.4", "IV1", 2),
        ("2.5", "IV0", 2), ("2.6", "IV0", 2),
        ("2.7", "IV0", 2), ("2.7", "IV1", 2), ("2.7", "IV2", 2),
        ("2.8", "IV0", 2), ("2.8", "IV1", 2),
    ]
    return tuple(ApiVersion(i, short, sub, magic) for i, (short, sub, magic) in enumerate(table))


ALL_API_VERSIONS: tuple[ApiVersion, ...] = _versions()
LATEST_API_VERSION: ApiVersion = ALL_API_VERSIONS[-1]
# Full names map to themselves; a short name ("2.8", "0.10.0") to the last internal version of it.
_API_VERSIONS_BY_NAME: dict[str, ApiVersion] = {
    **{v.version: v for v in ALL_API_VERSIONS},
    **{v.short_version: v for v in ALL_API_VERSIONS},
}
_DOT = re.compile(r"\.")


def api_version(version: str) -> ApiVersion:
    """Parse "2.8", "2.8-IV1", "2.8.2", "0.10.2", "0.10.2.1" ... (Kafka's ApiVersion.apply).

    Only the release-line part counts: three dotted parts for 0.x versions, two otherwise.
    """
    parts = _DOT.split(version)
    num_parts = 3 if version.startswith("0.") else 2
    key = ".".join(parts[:num_parts])
    try:
        return _API_VERSIONS_BY_NAME[key]
    except KeyError:
        raise ValueError(f"Version `{version}` is not a valid version") from None


class ApiVersionValidator(Validator):
    def ensure_valid(self, name: str, value: Any) -> None:
        try:
            api_version(str(value))
        except ValueError as e:
            raise ConfigException(name, value, str(e)) from None

    def __str__(self) -> str:
        return "[" + ", ".join(dict.fromkeys(v.version for v in ALL_API_VERSIONS)) + "]"


class ThrottledReplicaListValidator(Validator):
    """Either the single entry "*" or entries "<partition>:<broker>" (kafka.server's validator)."""

    _ENTRY = re.compile(r"([0-9]+:[0-9]+)?\Z")

    def ensure_valid(self, name: str, value: Any) -> None:
        if not isinstance(value, (list, tuple)):
            raise ConfigException(name, value, f"{name} must be a List but was {type(value).__name__}")
        entries = [str(v).strip() for v in value]
        if not (all(self._ENTRY.match(e) for e in entries) or "".join(entries).strip() == "*"):
            raise ConfigException(name, value, f"{name} must be the literal '*' or a list of replicas in the "
                                  "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")

    def __str__(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."


# -- defaults (Kafka's object Defaults, from kafka.server.Defaults) ---------------------------

class Defaults:
    SEGMENT_SIZE = 1024 * 1024 * 1024
    SEGMENT_MS = 24 * 7 * 60 * 60 * 1000
    SEGMENT_JITTER_MS = 0
    FLUSH_INTERVAL = LONG_MAX
    FLUSH_MS = LONG_MAX
    RETENTION_SIZE = -1
    RETENTION_MS = 24 * 7 * 60 * 60 * 1000
    MAX_MESSAGE_SIZE = 1024 * 1024 + LOG_OVERHEAD  # 1 MiB plus the log overhead of one batch
    MAX_INDEX_SIZE = 10 * 1024 * 1024
    INDEX_INTERVAL = 4096
    FILE_DELETE_DELAY_MS = 60000
    DELETE_RETENTION_MS = 24 * 60 * 60 * 1000
    MIN_COMPACTION_LAG_MS = 0
    MAX_COMPACTION_LAG_MS = LONG_MAX
    MIN_CLEANABLE_DIRTY_RATIO = 0.5
    CLEANUP_POLICY = DELETE
    UNCLEAN_LEADER_ELECTION_ENABLE = False
    MIN_IN_SYNC_REPLICAS = 1
    COMPRESSION_TYPE = "producer"
    PRE_ALLOCATE_ENABLE = False
    MESSAGE_FORMAT_VERSION = LATEST_API_VERSION.version
    MESSAGE_TIMESTAMP_TYPE = "CreateTime"
    MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS = LONG_MAX
    LEADER_REPLICATION_THROTTLED_REPLICAS: tuple[str, ...] = ()
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS: tuple[str, ...] = ()
    MESSAGE_DOWNCONVERSION_ENABLE = True


# -- the definition -----------------------------------------------------------------------

class LogConfigDef(ConfigDef):
    """A ConfigDef that also records, per topic key, the broker key supplying its default."""

    def __init__(self, base: ConfigDef | None = None) -> None:
        super().__init__(base)
        self.server_default_config_names: dict[str, str] = (
            dict(base.server_default_config_names) if isinstance(base, LogConfigDef) else {})

    def define(self, name: str, type: Type, default_value: Any = NO_DEFAULT_VALUE, validator: Validator | None = None,
               importance: Importance = Importance.MEDIUM, documentation: str = "",
               server_default_config_name: str | None = None, *, internal_config: bool = False) -> "LogConfigDef":
        super().define(name, type, default_value, validator, importance, documentation,
                       internal_config=internal_config)
        if server_default_config_name is not None:
            self.server_default_config_names[name] = server_default_config_name
        return self

    def server_config_name(self, config_name: str) -> str | None:
        return self.server_default_config_names.get(config_name)


_M = Importance.MEDIUM

CONFIG_DEF: LogConfigDef = (
    LogConfigDef()
    .define(SEGMENT_BYTES_PROP, Type.INT, Defaults.SEGMENT_SIZE, at_least(RECORD_OVERHEAD_V0), _M,
            "Size of one segment file; retention and compaction work a whole segment at a time.",
            "log.segment.bytes")
    .define(SEGMENT_MS_PROP, Type.LONG, Defaults.SEGMENT_MS, at_least(1), _M,
            "Roll a new segment after this long even if the current one is not full, so retention "
            "and compaction can reach old data.", "log.roll.ms")
    .define(SEGMENT_JITTER_MS_PROP, Type.LONG, Defaults.SEGMENT_JITTER_MS, at_least(0), _M,
            "Largest random amount taken off segment.ms per segment, so partitions do not all roll "
            "at the same moment.", "log.roll.jitter.ms")
    .define(SEGMENT_INDEX_BYTES_PROP, Type.INT, Defaults.MAX_INDEX_SIZE, at_least(0), _M,
            "Size preallocated for each offset and time index file; trimmed when the segment rolls.",
            "log.index.size.max.bytes")
    .define(FLUSH_MESSAGES_PROP, Type.LONG, Defaults.FLUSH_INTERVAL, at_least(0), _M,
            "fsync the log after this many messages; by default the OS decides and replication "
            "provides durability.", "log.flush.interval.messages")
    .define(FLUSH_MS_PROP, Type.LONG, Defaults.FLUSH_MS, at_least(0), _M,
            "fsync the log when this much time passed since the last flush.", "log.flush.interval.ms")
    # May be negative: -1 means no size limit.
    .define(RETENTION_BYTES_PROP, Type.LONG, Defaults.RETENTION_SIZE, None, _M,
            "Largest size a partition may grow to before old segments are deleted (delete policy); "
            "-1 for no limit.", "log.retention.bytes")
    .define(RETENTION_MS_PROP, Type.LONG, Defaults.RETENTION_MS, at_least(-1), _M,
            "How long to keep a segment before deleting it (delete policy); -1 for no time limit.",
            "log.retention.ms")
    .define(MAX_MESSAGE_BYTES_PROP, Type.INT, Defaults.MAX_MESSAGE_SIZE, at_least(0), _M,
            "Largest record batch size the log accepts.", "message.max.bytes")
    .define(INDEX_INTERVAL_BYTES_PROP, Type.INT, Defaults.INDEX_INTERVAL, at_least(0), _M,
            "Bytes of log between two offset index entries.", "log.index.interval.bytes")
    .define(DELETE_RETENTION_MS_PROP, Type.LONG, Defaults.DELETE_RETENTION_MS, at_least(0), _M,
            "How long tombstones stay in a compacted log.", "log.cleaner.delete.retention.ms")
    .define(MIN_COMPACTION_LAG_MS_PROP, Type.LONG, Defaults.MIN_COMPACTION_LAG_MS, at_least(0), _M,
            "Youngest a message may be and still be compacted.", "log.cleaner.min.compaction.lag.ms")
    .define(MAX_COMPACTION_LAG_MS_PROP, Type.LONG, Defaults.MAX_COMPACTION_LAG_MS, at_least(1), _M,
            "Oldest a message may get before it must become eligible for compaction.",
            "log.cleaner.max.compaction.lag.ms")
    .define(FILE_DELETE_DELAY_MS_PROP, Type.LONG, Defaults.FILE_DELETE_DELAY_MS, at_least(0), _M,
            "Delay between marking a segment deleted and removing its files.", "log.segment.delete.delay.ms")
    .define(MIN_CLEANABLE_DIRTY_RATIO_PROP, Type.DOUBLE, Defaults.MIN_CLEANABLE_DIRTY_RATIO, between(0, 1), _M,
            "Share of a compacted log that must be uncompacted before the cleaner works on it.",
            "log.cleaner.min.cleanable.ratio")
    .define(CLEANUP_POLICY_PROP, Type.LIST, Defaults.CLEANUP_POLICY, valid_list(COMPACT, DELETE), _M,
            "What happens to old segments: \"delete\" removes them, \"compact\" keeps the last value "
            "per key; both may be given.", "log.cleanup.policy")
    .define(UNCLEAN_LEADER_ELECTION_ENABLE_PROP, Type.BOOLEAN, Defaults.UNCLEAN_LEADER_ELECTION_ENABLE, None, _M,
            "Allow a replica outside the ISR to become leader as a last resort (may lose data).",
            "unclean.leader.election.enable")
    .define(MIN_IN_SYNC_REPLICAS_PROP, Type.INT, Defaults.MIN_IN_SYNC_REPLICAS, at_least(1), _M,
            "Fewest in-sync replicas for an acks=all produce to succeed.", "min.insync.replicas")
    .define(COMPRESSION_TYPE_PROP, Type.STRING, Defaults.COMPRESSION_TYPE, in_list(*BROKER_COMPRESSION_OPTIONS), _M,
            "Compression the log stores: a codec, \"uncompressed\", or \"producer\" to keep what "
            "the producer sent.", "compression.type")
    .define(PRE_ALLOCATE_ENABLE_PROP, Type.BOOLEAN, Defaults.PRE_ALLOCATE_ENABLE, None, _M,
            "Preallocate a new segment file at its full size.", "log.preallocate")
    .define(MESSAGE_FORMAT_VERSION_PROP, Type.STRING, Defaults.MESSAGE_FORMAT_VERSION, ApiVersionValidator(), _M,
            "Message format version the log writes, named by the Kafka version that introduced it.",
            "log.message.format.version")
    .define(MESSAGE_TIMESTAMP_TYPE_PROP, Type.STRING, Defaults.MESSAGE_TIMESTAMP_TYPE,
            in_list("CreateTime", "LogAppendTime"), _M,
            "Whether record timestamps are the producer's (CreateTime) or the broker's at append "
            "(LogAppendTime).", "log.message.timestamp.type")
    .define(MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_PROP, Type.LONG, Defaults.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS,
            at_least(0), _M,
            "With CreateTime, reject a batch whose timestamp is further than this from the broker's clock.",
            "log.message.timestamp.difference.max.ms")
    .define(LEADER_REPLICATION_THROTTLED_REPLICAS_PROP, Type.LIST, list(Defaults.LEADER_REPLICATION_THROTTLED_REPLICAS),
            ThrottledReplicaListValidator(), _M,
            "Replicas whose replication is throttled on the leader side, as partition:broker pairs, "
            "or * for all.", LEADER_REPLICATION_THROTTLED_REPLICAS_PROP)
    .define(FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP, Type.LIST,
            list(Defaults.FOLLOWER_REPLICATION_THROTTLED_REPLICAS), ThrottledReplicaListValidator(), _M,
            "Replicas whose replication is throttled on the follower side, as partition:broker pairs, "
            "or * for all.", FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP)
    .define(MESSAGE_DOWNCONVERSION_ENABLE_PROP, Type.BOOLEAN, Defaults.MESSAGE_DOWNCONVERSION_ENABLE, None,
            Importance.LOW,
            "Whether the broker converts batches down for fetches from old consumers.",
            "log.message.downconversion.enable")
)


@dataclass(frozen=True)
class ConfigSynonym:
    """A broker key that can supply a topic config's default; ``ms_per_unit`` converts its unit."""

    name: str
    ms_per_unit: int = 1


# Topic key -> broker keys able to supply its default, highest precedence first.
ALL_TOPIC_CONFIG_SYNONYMS: dict[str, tuple[ConfigSynonym, ...]] = {
    SEGMENT_BYTES_PROP: (ConfigSynonym("log.segment.bytes"),),
    SEGMENT_MS_PROP: (ConfigSynonym("log.roll.ms"), ConfigSynonym("log.roll.hours", 3_600_000)),
    SEGMENT_JITTER_MS_PROP: (ConfigSynonym("log.roll.jitter.ms"), ConfigSynonym("log.roll.jitter.hours", 3_600_000)),
    SEGMENT_INDEX_BYTES_PROP: (ConfigSynonym("log.index.size.max.bytes"),),
    FLUSH_MESSAGES_PROP: (ConfigSynonym("log.flush.interval.messages"),),
    FLUSH_MS_PROP: (ConfigSynonym("log.flush.interval.ms"), ConfigSynonym("log.flush.scheduler.interval.ms")),
    RETENTION_BYTES_PROP: (ConfigSynonym("log.retention.bytes"),),
    RETENTION_MS_PROP: (ConfigSynonym("log.retention.ms"), ConfigSynonym("log.retention.minutes", 60_000),
                        ConfigSynonym("log.retention.hours", 3_600_000)),
    MAX_MESSAGE_BYTES_PROP: (ConfigSynonym("message.max.bytes"),),
    INDEX_INTERVAL_BYTES_PROP: (ConfigSynonym("log.index.interval.bytes"),),
    DELETE_RETENTION_MS_PROP: (ConfigSynonym("log.cleaner.delete.retention.ms"),),
    MIN_COMPACTION_LAG_MS_PROP: (ConfigSynonym("log.cleaner.min.compaction.lag.ms"),),
    MAX_COMPACTION_LAG_MS_PROP: (ConfigSynonym("log.cleaner.max.compaction.lag.ms"),),
    FILE_DELETE_DELAY_MS_PROP: (ConfigSynonym("log.segment.delete.delay.ms"),),
    MIN_CLEANABLE_DIRTY_RATIO_PROP: (ConfigSynonym("log.cleaner.min.cleanable.ratio"),),
    CLEANUP_POLICY_PROP: (ConfigSynonym("log.cleanup.policy"),),
    UNCLEAN_LEADER_ELECTION_ENABLE_PROP: (ConfigSynonym("unclean.leader.election.enable"),),
    MIN_IN_SYNC_REPLICAS_PROP: (ConfigSynonym("min.insync.replicas"),),
    COMPRESSION_TYPE_PROP: (ConfigSynonym("compression.type"),),
    PRE_ALLOCATE_ENABLE_PROP: (ConfigSynonym("log.preallocate"),),
    MESSAGE_FORMAT_VERSION_PROP: (ConfigSynonym("log.message.format.version"),),
    MESSAGE_TIMESTAMP_TYPE_PROP: (ConfigSynonym("log.message.timestamp.type"),),
    MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_PROP: (ConfigSynonym("log.message.timestamp.difference.max.ms"),),
    MESSAGE_DOWNCONVERSION_ENABLE_PROP: (ConfigSynonym("log.message.downconversion.enable"),),
}

# Topic key -> the broker key with the highest precedence (Kafka's TopicConfigSynonyms).
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {k: v[0].name for k, v in ALL_TOPIC_CONFIG_SYNONYMS.items()}


def server_config_synonyms() -> dict[str, str]:
    """Topic config name -> the broker config name that supplies its default (a copy)."""
    return dict(TOPIC_CONFIG_SYNONYMS)


# LogConfig attribute -> topic config name, in definition order.
_ATTRIBUTE_KEYS: dict[str, str] = {
    "segment_size": SEGMENT_BYTES_PROP,
    "segment_ms": SEGMENT_MS_PROP,
    "segment_jitter_ms": SEGMENT_JITTER_MS_PROP,
    "max_index_size": SEGMENT_INDEX_BYTES_PROP,
    "flush_interval": FLUSH_MESSAGES_PROP,
    "flush_ms": FLUSH_MS_PROP,
    "retention_size": RETENTION_BYTES_PROP,
    "retention_ms": RETENTION_MS_PROP,
    "max_message_size": MAX_MESSAGE_BYTES_PROP,
    "index_interval": INDEX_INTERVAL_BYTES_PROP,
    "delete_retention_ms": DELETE_RETENTION_MS_PROP,
    "min_compaction_lag_ms": MIN_COMPACTION_LAG_MS_PROP,
    "max_compaction_lag_ms": MAX_COMPACTION_LAG_MS_PROP,
    "file_delete_delay_ms": FILE_DELETE_DELAY_MS_PROP,
    "min_cleanable_ratio": MIN_CLEANABLE_DIRTY_RATIO_PROP,
    "cleanup_policy": CLEANUP_POLICY_PROP,
    "unclean_leader_election_enable": UNCLEAN_LEADER_ELECTION_ENABLE_PROP,
    "min_in_sync_replicas": MIN_IN_SYNC_REPLICAS_PROP,
    "compression_type": COMPRESSION_TYPE_PROP,
    "preallocate": PRE_ALLOCATE_ENABLE_PROP,
    "message_format_version": MESSAGE_FORMAT_VERSION_PROP,
    "message_timestamp_type": MESSAGE_TIMESTAMP_TYPE_PROP,
    "message_timestamp_difference_max_ms": MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS_PROP,
    "leader_replication_throttled_replicas": LEADER_REPLICATION_THROTTLED_REPLICAS_PROP,
    "follower_replication_throttled_replicas": FOLLOWER_REPLICATION_THROTTLED_REPLICAS_PROP,
    "message_downconversion_enable": MESSAGE_DOWNCONVERSION_ENABLE_PROP,
}
_KEY_ATTRIBUTES: dict[str, str] = {v: k for k, v in _ATTRIBUTE_KEYS.items()}


def _raw(attribute: str, value: Any) -> Any:
    """The ConfigDef form of a LogConfig attribute value (for validation and to_props)."""
    if attribute == "message_format_version" and isinstance(value, ApiVersion):
        return value.version
    if attribute == "message_timestamp_type" and isinstance(value, TimestampType):
        return value.type_name
    if isinstance(value, tuple):
        return list(value)
    return value


def _target_compression(compression_type: str) -> CompressionType | None:
    """Kafka's BrokerCompressionCodec.getTargetCompressionCodec: None keeps the producer's codec."""
    if compression_type == "producer":
        return None
    if compression_type == "uncompressed":
        return CompressionType.NONE
    return CompressionType.for_name(compression_type)


@dataclass(frozen=True)
class LogConfig:
    """The effective configuration of one log. ``LogConfig()`` is Kafka's defaults."""

    segment_size: int = Defaults.SEGMENT_SIZE
    segment_ms: int = Defaults.SEGMENT_MS
    segment_jitter_ms: int = Defaults.SEGMENT_JITTER_MS
    max_index_size: int = Defaults.MAX_INDEX_SIZE
    flush_interval: int = Defaults.FLUSH_INTERVAL
    flush_ms: int = Defaults.FLUSH_MS
    retention_size: int = Defaults.RETENTION_SIZE
    retention_ms: int = Defaults.RETENTION_MS
    max_message_size: int = Defaults.MAX_MESSAGE_SIZE
    index_interval: int = Defaults.INDEX_INTERVAL
    delete_retention_ms: int = Defaults.DELETE_RETENTION_MS
    min_compaction_lag_ms: int = Defaults.MIN_COMPACTION_LAG_MS
    max_compaction_lag_ms: int = Defaults.MAX_COMPACTION_LAG_MS
    file_delete_delay_ms: int = Defaults.FILE_DELETE_DELAY_MS
    min_cleanable_ratio: float = Defaults.MIN_CLEANABLE_DIRTY_RATIO
    #: Lower-case policies; see ``compact`` and ``delete``. A string "compact,delete" is accepted.
    cleanup_policy: tuple[str, ...] = (Defaults.CLEANUP_POLICY,)
    unclean_leader_election_enable: bool = Defaults.UNCLEAN_LEADER_ELECTION_ENABLE
    min_in_sync_replicas: int = Defaults.MIN_IN_SYNC_REPLICAS
    #: Lower-case broker compression option ("producer", "uncompressed", "gzip", ...).
    compression_type: str = Defaults.COMPRESSION_TYPE
    preallocate: bool = Defaults.PRE_ALLOCATE_ENABLE
    #: An ApiVersion; a version string is accepted and parsed.
    message_format_version: ApiVersion = LATEST_API_VERSION
    #: A TimestampType; "CreateTime" / "LogAppendTime" are accepted and parsed.
    message_timestamp_type: TimestampType = TimestampType.CREATE_TIME
    message_timestamp_difference_max_ms: int = Defaults.MESSAGE_TIMESTAMP_DIFFERENCE_MAX_MS
    leader_replication_throttled_replicas: tuple[str, ...] = Defaults.LEADER_REPLICATION_THROTTLED_REPLICAS
    follower_replication_throttled_replicas: tuple[str, ...] = Defaults.FOLLOWER_REPLICATION_THROTTLED_REPLICAS
    message_downconversion_enable: bool = Defaults.MESSAGE_DOWNCONVERSION_ENABLE
    #: Topic config names that came from the topic's own overrides rather than broker defaults.
    overridden_configs: frozenset[str] = field(default=frozenset(), compare=False)
    # Derived once from the values above when the config is made (Kafka's LogConfig vals
    # and BrokerCompressionCodec.getTargetCompressionCodec), so the append path only reads.
    #: The cleanup policy holds "compact".
    compact: bool = field(init=False, repr=False, compare=False)
    #: Kafka's maxSegmentMs: a compacted topic with a max compaction lag rolls at least that often.
    max_segment_ms: int = field(init=False, repr=False, compare=False)
    #: The codec appended batches are written in; None keeps the producer's ("producer").
    target_compression: CompressionType | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every value goes through the same parser and validators as raw properties, so a
        # LogConfig built in code can never hold what a properties file could not.
        for attribute, key in _ATTRIBUTE_KEYS.items():
            config_key = CONFIG_DEF.config_keys[key]
            parsed = CONFIG_DEF.parse_value(config_key, _raw(attribute, getattr(self, attribute)), True)
            object.__setattr__(self, attribute, self._typed(attribute, parsed))
        object.__setattr__(self, "overridden_configs", frozenset(self.overridden_configs))
        compact = COMPACT in self.cleanup_policy
        object.__setattr__(self, "compact", compact)
        object.__setattr__(self, "max_segment_ms", min(self.max_compaction_lag_ms, self.segment_ms)
                           if compact and self.max_compaction_lag_ms > 0 else self.segment_ms)
        object.__setattr__(self, "target_compression", _target_compression(self.compression_type))

    @staticmethod
    def _typed(attribute: str, parsed: Any) -> Any:
        if attribute == "message_format_version":
            return api_version(parsed)
        if attribute == "message_timestamp_type":
            return TimestampType.for_name(parsed)
        if attribute in ("cleanup_policy", "compression_type"):
            parsed = [p.lower() for p in parsed] if isinstance(parsed, list) else parsed.lower()
        if isinstance(parsed, list):
            return tuple(parsed)
        return parsed

    # -- construction from properties ------------------------------------------------------

    @classmethod
    def from_props(cls, defaults: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
                   *, ignore_unknown: bool = False) -> "LogConfig":
        """Merge broker defaults (topic keys) with a topic's overrides and validate the result.

        Unknown names are rejected unless ``ignore_unknown`` (for configs read back from
        ZooKeeper that a newer Kafka may have written). Values may be strings or typed.
        """
        defaults = dict(defaults or {})
        overrides = dict(overrides or {})
        props = {**defaults, **overrides}
        if not ignore_unknown:
            cls.validate_names(props)
        parsed = CONFIG_DEF.parse(props)
        values = {attr: parsed[key] for attr, key in _ATTRIBUTE_KEYS.items()}
        return cls(**values, overridden_configs=frozenset(k for k in overrides if k in _KEY_ATTRIBUTES))

    @staticmethod
    def validate_names(props: Mapping[str, Any]) -> None:
        for name in props:
            if name not in _KEY_ATTRIBUTES:
                hint = ""
                for topic_key, synonyms in ALL_TOPIC_CONFIG_SYNONYMS.items():
                    if any(s.name == name for s in synonyms):
                        hint = f" ({name} is a broker config; the topic config is {topic_key})"
                        break
                raise InvalidConfigException(f"Unknown topic config name: {name}{hint}")

    @classmethod
    def validate(cls, props: Mapping[str, Any]) -> None:
        """Check a topic's override properties as topic creation and alteration do: known names,
        parseable and valid values, and min.compaction.lag.ms <= max.compaction.lag.ms."""
        cls.validate_names(props)
        values = CONFIG_DEF.parse(props)
        cls.validate_values(values)

    @staticmethod
    def validate_values(values: Mapping[str, Any]) -> None:
        min_lag = values.get(MIN_COMPACTION_LAG_MS_PROP, Defaults.MIN_COMPACTION_LAG_MS)
        max_lag = values.get(MAX_COMPACTION_LAG_MS_PROP, Defaults.MAX_COMPACTION_LAG_MS)
        if min_lag > max_lag:
            raise InvalidConfigException(
                f"conflict topic config setting {MIN_COMPACTION_LAG_MS_PROP} ({min_lag}) > "
                f"{MAX_COMPACTION_LAG_MS_PROP} ({max_lag})")

    # -- lookups about the definition ------------------------------------------------------

    @staticmethod
    def config_names() -> list[str]:
        return sorted(CONFIG_DEF.names())

    @staticmethod
    def config_type(name: str) -> Type | None:
        key = CONFIG_DEF.config_keys.get(name)
        return key.type if key is not None else None

    @staticmethod
    def server_config_name(name: str) -> str | None:
        return CONFIG_DEF.server_config_name(name)

    @staticmethod
    def attribute_for(name: str) -> str:
        """The LogConfig attribute holding topic config ``name``."""
        return _KEY_ATTRIBUTES[name]

    # -- derived values --------------------------------------------------------------------

    @property
    def delete(self) -> bool:
        return DELETE in self.cleanup_policy

    @property
    def record_version(self) -> int:
        """Highest record batch magic the configured message format allows."""
        return self.message_format_version.record_version

    @property
    def init_file_size(self) -> int:
        return self.segment_size if self.preallocate else 0

    def random_segment_jitter(self) -> int:
        if self.segment_jitter_ms == 0:
            return 0
        return random.randrange(2**31) % min(self.segment_jitter_ms, self.segment_ms)

    def values(self) -> dict[str, Any]:
        """Topic config name -> value in ConfigDef form (strings, ints, lists ...)."""
        return {key: _raw(attr, getattr(self, attr)) for attr, key in _ATTRIBUTE_KEYS.items()}

    def to_props(self) -> dict[str, str | None]:
        """Topic config name -> value as a .properties string (DescribeConfigs, ZooKeeper); None
        for a config without a value."""
        return {key: ConfigDef.convert_to_string(value, CONFIG_DEF.config_keys[key].type)
                for key, value in self.values().items()}

    def with_overrides(self, overrides: Mapping[str, Any]) -> "LogConfig":
        """A copy with some topic configs changed (validated), marking them overridden."""
        props = self.values()
        props.update(overrides)
        self.validate_names(overrides)
        parsed = CONFIG_DEF.parse(props)
        values = {attr: parsed[key] for attr, key in _ATTRIBUTE_KEYS.items()}
        return LogConfig(**values, overridden_configs=self.overridden_configs | frozenset(overrides))

    def overridden_configs_as_loggable_string(self) -> str:
        props = self.to_props()
        return "{" + ", ".join(f"{k}={props[k]}" for k in sorted(self.overridden_configs)) + "}"

