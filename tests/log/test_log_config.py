"""LogConfig: Kafka 2.8.2's topic configs, defaults and validation (and the ConfigDef under it)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from kafka_py.clients.common.errors import InvalidConfigException
from kafka_py.log.log_config import (
    LATEST_API_VERSION,
    LogConfig,
    api_version,
    server_config_synonyms,
)
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import TimestampType
from kafka_py.clients.common.config.config_def import (
    ConfigDef,
    ConfigException,
    Importance,
    Type,
    at_least,
    case_insensitive_in_list,
    in_list,
    valid_list,
)
from kafka_py.core.utils.java_limits import LONG_MAX


# Kafka 2.8.2's topic configs and their defaults, written out independently of the module.
KAFKA_DEFAULTS = {
    "segment.bytes": 1073741824,
    "segment.ms": 604800000,
    "segment.jitter.ms": 0,
    "segment.index.bytes": 10485760,
    "flush.messages": LONG_MAX,
    "flush.ms": LONG_MAX,
    "retention.bytes": -1,
    "retention.ms": 604800000,
    "max.message.bytes": 1048588,
    "index.interval.bytes": 4096,
    "delete.retention.ms": 86400000,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": LONG_MAX,
    "file.delete.delay.ms": 60000,
    "min.cleanable.dirty.ratio": 0.5,
    "cleanup.policy": ["delete"],
    "unclean.leader.election.enable": False,
    "min.insync.replicas": 1,
    "compression.type": "producer",
    "preallocate": False,
    "message.format.version": "2.8-IV1",
    "message.timestamp.type": "CreateTime",
    "message.timestamp.difference.max.ms": LONG_MAX,
    "leader.replication.throttled.replicas": [],
    "follower.replication.throttled.replicas": [],
    "message.downconversion.enable": True,
}


def test_config_names_are_kafkas():
    assert LogConfig.config_names() == sorted(KAFKA_DEFAULTS)


def test_defaults_equal_kafkas():
    config = LogConfig()
    assert config.values() == KAFKA_DEFAULTS
    assert LogConfig.from_props({}, {}) == config
    assert config.segment_size == 1073741824
    assert config.max_index_size == 10485760
    assert config.index_interval == 4096
    assert config.delete and not config.compact
    assert config.message_timestamp_type is TimestampType.CREATE_TIME
    assert config.message_format_version == LATEST_API_VERSION
    assert config.record_version == 2
    assert config.init_file_size == 0
    assert config.max_segment_ms == 604800000
    assert config.random_segment_jitter() == 0


def test_from_props_parses_strings_and_overrides_win():
    defaults = {"segment.bytes": "2048", "retention.ms": "1000", "compression.type": "gzip"}
    overrides = {"retention.ms": " 5000 ", "cleanup.policy": "compact, delete", "preallocate": "TRUE",
                 "message.timestamp.type": "LogAppendTime", "min.cleanable.dirty.ratio": "0.25",
                 "leader.replication.throttled.replicas": "0:1, 1:2"}
    config = LogConfig.from_props(defaults, overrides)
    assert config.segment_size == 2048
    assert config.retention_ms == 5000
    assert config.compression_type == "gzip"
    assert config.compact and config.delete
    assert config.preallocate is True and config.init_file_size == 2048
    assert config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    assert config.min_cleanable_ratio == 0.25
    assert config.leader_replication_throttled_replicas == ("0:1", "1:2")
    assert config.overridden_configs == frozenset(overrides)
    assert "retention.ms=5000" in config.overridden_configs_as_loggable_string()


def test_to_props_round_trips():
    config = LogConfig.from_props({}, {"cleanup.policy": "compact", "segment.ms": "77", "segment.jitter.ms": "5",
                                       "message.format.version": "0.10.2", "follower.replication.throttled.replicas": "*"})
    again = LogConfig.from_props({}, config.to_props())
    assert again == config
    assert config.to_props()["message.format.version"] == "0.10.2-IV0"
    assert config.record_version == 1
    assert config.max_segment_ms == 77
    assert 0 <= config.random_segment_jitter() < 5


def test_direct_construction_is_validated():
    config = LogConfig(segment_size=1024, cleanup_policy="compact", message_timestamp_type="LogAppendTime",
                       message_format_version="2.8.2", max_compaction_lag_ms=50, segment_ms=100)
    assert config.cleanup_policy == ("compact",)
    assert config.message_format_version.version == "2.8-IV1"
    assert config.max_segment_ms == 50
    with pytest.raises(InvalidConfigException, match="segment.bytes"):
        LogConfig(segment_size=5)
    with pytest.raises(InvalidConfigException, match="min.insync.replicas"):
        LogConfig(min_in_sync_replicas=0)


@pytest.mark.parametrize("key,value,allowed", [
    ("segment.bytes", "13", "at least 14"),
    ("segment.bytes", "2147483648", "32-bit integer"),
    ("segment.bytes", "ten", "Not a number"),
    ("segment.ms", "0", "at least 1"),
    ("retention.ms", "-2", "at least -1"),
    ("max.compaction.lag.ms", "0", "at least 1"),
    ("min.cleanable.dirty.ratio", "1.01", "no more than 1"),
    ("min.cleanable.dirty.ratio", "abc", "Not a number"),
    ("cleanup.policy", "remove", "one of: compact, delete"),
    ("compression.type", "brotli", "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("compression.type", "GZIP", "one of"),
    ("message.timestamp.type", "NoTimestampType", "CreateTime, LogAppendTime"),
    ("message.format.version", "3.0", "not a valid version"),
    ("unclean.leader.election.enable", "yes", "either true or false"),
    ("follower.replication.throttled.replicas", "1-2", "[partitionId]:[brokerId]"),
    ("message.timestamp.difference.max.ms", "-1", "at least 0"),
])
def test_invalid_values_name_key_value_and_allowed(key, value, allowed):
    with pytest.raises(InvalidConfigException) as info:
        LogConfig.from_props({}, {key: value})
    message = str(info.value)
    assert key in message and value in message and allowed in message
    assert isinstance(info.value, ConfigException)
    assert info.value.name == key


def test_unknown_names_rejected_clearly():
    with pytest.raises(InvalidConfigException, match="Unknown topic config name: retention.hours"):
        LogConfig.from_props({}, {"retention.hours": "1"})
    with pytest.raises(InvalidConfigException, match="the topic config is segment.bytes"):
        LogConfig.from_props({"log.segment.bytes": "1024"}, {})
    config = LogConfig.from_props({}, {"some.future.config": "x", "retention.ms": "9"}, ignore_unknown=True)
    assert config.retention_ms == 9
    assert config.overridden_configs == frozenset({"retention.ms"})


def test_list_error_names_the_bad_element():
    with pytest.raises(InvalidConfigException, match="Invalid value remove for configuration cleanup.policy"):
        LogConfig.from_props({}, {"cleanup.policy": "compact,remove"})


def test_validate_checks_compaction_lags():
    LogConfig.validate({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "10"})
    with pytest.raises(InvalidConfigException, match=r"min.compaction.lag.ms \(11\) > max.compaction.lag.ms \(10\)"):
        LogConfig.validate({"min.compaction.lag.ms": "11", "max.compaction.lag.ms": "10"})
    with pytest.raises(InvalidConfigException, match="Unknown topic config name"):
        LogConfig.validate({"nope": "1"})


def test_with_overrides():
    base = LogConfig.from_props({}, {"retention.ms": "100"})
    changed = base.with_overrides({"segment.bytes": "4096"})
    assert changed.segment_size == 4096 and changed.retention_ms == 100
    assert changed.overridden_configs == {"retention.ms", "segment.bytes"}
    assert base.segment_size == 1073741824


def test_server_config_synonyms():
    synonyms = server_config_synonyms()
    assert synonyms["segment.bytes"] == "log.segment.bytes"
    assert synonyms["segment.ms"] == "log.roll.ms"
    assert synonyms["retention.ms"] == "log.retention.ms"
    assert synonyms["max.message.bytes"] == "message.max.bytes"
    assert synonyms["file.delete.delay.ms"] == "log.segment.delete.delay.ms"
    assert synonyms["min.cleanable.dirty.ratio"] == "log.cleaner.min.cleanable.ratio"
    assert synonyms["message.downconversion.enable"] == "log.message.downconversion.enable"
    assert set(synonyms) == set(KAFKA_DEFAULTS) - {"leader.replication.throttled.replicas",
                                                   "follower.replication.throttled.replicas"}
    synonyms["segment.bytes"] = "changed"
    assert server_config_synonyms()["segment.bytes"] == "log.segment.bytes"
    assert LogConfig.server_config_name("leader.replication.throttled.replicas") == "leader.replication.throttled.replicas"
    assert LogConfig.config_type("cleanup.policy") is Type.LIST


@pytest.mark.parametrize("given,expected,magic", [
    ("2.8", "2.8-IV1", 2), ("2.8.2", "2.8-IV1", 2), ("2.8-IV0", "2.8-IV0", 2), ("1.0", "1.0-IV0", 2),
    ("0.10.2.1", "0.10.2-IV0", 1), ("0.10.0", "0.10.0-IV1", 1), ("0.9.0.1", "0.9.0", 0), ("0.11.0", "0.11.0-IV2", 2),
])
def test_api_versions(given, expected, magic):
    version = api_version(given)
    assert version.version == expected
    assert version.record_version == magic


def test_api_version_ordering_and_errors():
    assert api_version("0.11.0") < api_version("2.0") < LATEST_API_VERSION
    with pytest.raises(ValueError, match="not a valid version"):
        api_version("2.9")


def test_config_def_generic_behaviour():
    definition = (ConfigDef()
                  .define("required.key", Type.STRING, importance=Importance.HIGH, documentation="must be set")
                  .define("a.bool", Type.BOOLEAN, False)
                  .define("a.list", Type.LIST, "x, y", valid_list("x", "y", "z"))
                  .define("a.mode", Type.STRING, "plain", case_insensitive_in_list("PLAIN", "SSL"))
                  .define("a.count", Type.INT, 3, at_least(1))
                  .define("a.choice", Type.STRING, "one", in_list("one", "two")))
    with pytest.raises(ConfigException, match='Missing required configuration "required.key"'):
        definition.parse({})
    values = definition.parse({"required.key": " v ", "a.bool": "True", "a.mode": "ssl", "unused": 1})
    assert values == {"required.key": "v", "a.bool": True, "a.list": ["x", "y"], "a.mode": "ssl", "a.count": 3,
                      "a.choice": "one"}
    assert definition.parse({"required.key": "v", "a.list": ""})["a.list"] == []
    with pytest.raises(ConfigException, match="a.count"):
        definition.parse({"required.key": "v", "a.count": 0})
    with pytest.raises(ConfigException, match="case insensitive"):
        definition.parse({"required.key": "v", "a.mode": "tls"})
    with pytest.raises(ConfigException, match="Invalid value One for configuration a.choice: String must be one of: one, two"):
        definition.parse({"required.key": "v", "a.choice": "One"})
    with pytest.raises(ConfigException, match="Expected value to be a 32-bit integer"):
        definition.parse({"required.key": "v", "a.count": True})
    with pytest.raises(ConfigException):
        ConfigDef().define("bad.default", Type.INT, 0, at_least(1))
    with pytest.raises(ValueError, match="defined twice"):
        definition.define("a.bool", Type.BOOLEAN, True)
    assert "a.count" in definition.to_rst()


@pytest.mark.parametrize("compression, target", [
    ("producer", None), ("uncompressed", CompressionType.NONE), ("lz4", CompressionType.LZ4),
    ("zstd", CompressionType.ZSTD)])
def test_derived_values_are_set_when_the_config_is_made(compression, target):
    config = LogConfig.from_props({}, {"compression.type": compression, "cleanup.policy": "compact",
                                       "max.compaction.lag.ms": "900", "segment.ms": "1000"})
    assert config.target_compression is target
    assert config.compact and config.max_segment_ms == 900
    # a copy with other values derives them again
    changed = replace(config, cleanup_policy=("delete",), compression_type="gzip")
    assert not changed.compact and changed.max_segment_ms == 1000
    assert changed.target_compression is CompressionType.GZIP
