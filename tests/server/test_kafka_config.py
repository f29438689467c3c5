"""KafkaConfig (port of KafkaConfig.scala) and the .properties parser under it: Kafka 2.8.2's
defaults, precedence rules, validation messages naming key and value, unknown-key warnings,
dynamic overrides, and java.util.Properties parsing."""
from __future__ import annotations

import logging
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_py.core.cluster.broker import ListenerName, SecurityProtocol
from kafka_py.log.log_config import LogConfig
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.clients.common.record.default_record_batch import TimestampType
from kafka_py.server.kafka_config import (
    CONFIG_DEF,
    DYNAMIC_BROKER_CONFIGS,
    ConfigException,
    KafkaConfig,
    ProcessRole,
    broker_config_synonyms,
)
from kafka_py.clients.common.utils import properties

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
LOGGER = "kafka_py.server.kafka_config"


def make_config(**overrides: object) -> KafkaConfig:
    props: dict[str, object] = {"zookeeper.connect": "localhost:2181", "broker.id": "0"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return KafkaConfig(props, do_log=False)


def config_from(props: dict[str, object]) -> KafkaConfig:
    return KafkaConfig({"zookeeper.connect": "localhost:2181", **props}, do_log=False)


def assert_config_error(props: dict[str, object], key: str, value_text: str, allowed_text: str) -> ConfigException:
    with pytest.raises(ConfigException) as info:
        config_from(props)
    message = str(info.value)
    assert info.value.name == key
    assert key in message
    assert value_text in message
    assert allowed_text in message
    return info.value


# -- defaults ---------------------------------------------------------------------------------

# Values read off core/src/main/scala/kafka/server/KafkaConfig.scala (object Defaults) at 2.8.2.
KAFKA_2_8_2_DEFAULTS = {
    "zookeeper.session.timeout.ms": 18000,
    "zookeeper.max.in.flight.requests": 10,
    "broker.id": -1,
    "broker.id.generation.enable": True,
    "reserved.broker.max.id": 1000,
    "message.max.bytes": 1048588,
    "num.network.threads": 3,
    "num.io.threads": 8,
    "background.threads": 10,
    "queued.max.requests": 500,
    "request.timeout.ms": 30000,
    "socket.send.buffer.bytes": 102400,
    "socket.receive.buffer.bytes": 102400,
    "socket.request.max.bytes": 104857600,
    "max.connections.per.ip": 2147483647,
    "max.connections": 2147483647,
    "connections.max.idle.ms": 600000,
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
    "num.partitions": 1,
    "log.dir": "/tmp/kafka-logs",
    "log.segment.bytes": 1073741824,
    "log.roll.hours": 168,
    "log.retention.hours": 168,
    "log.retention.bytes": -1,
    "log.retention.check.interval.ms": 300000,
    "log.cleanup.policy": ["delete"],
    "log.cleaner.threads": 1,
    "log.cleaner.dedupe.buffer.size": 134217728,
    "log.cleaner.io.buffer.size": 524288,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.backoff.ms": 15000,
    "log.cleaner.min.cleanable.ratio": 0.5,
    "log.cleaner.enable": True,
    "log.cleaner.delete.retention.ms": 86400000,
    "log.index.size.max.bytes": 10485760,
    "log.index.interval.bytes": 4096,
    "log.flush.interval.messages": 9223372036854775807,
    "log.segment.delete.delay.ms": 60000,
    "log.flush.offset.checkpoint.interval.ms": 60000,
    "log.flush.start.offset.checkpoint.interval.ms": 60000,
    "log.initial.task.delay.ms": 30000,
    "log.message.format.version": "2.8-IV1",
    "log.message.timestamp.type": "CreateTime",
    "num.recovery.threads.per.data.dir": 1,
    "auto.create.topics.enable": True,
    "min.insync.replicas": 1,
    "controller.socket.timeout.ms": 30000,
    "default.replication.factor": 1,
    "replica.lag.time.max.ms": 30000,
    "replica.socket.timeout.ms": 30000,
    "replica.fetch.max.bytes": 1048576,
    "replica.fetch.wait.max.ms": 500,
    "replica.fetch.response.max.bytes": 10485760,
    "replica.high.watermark.checkpoint.interval.ms": 5000,
    "fetch.purgatory.purge.interval.requests": 1000,
    "delete.records.purgatory.purge.interval.requests": 1,
    "leader.imbalance.per.broker.percentage": 10,
    "leader.imbalance.check.interval.seconds": 300,
    "unclean.leader.election.enable": False,
    "inter.broker.protocol.version": "2.8-IV1",
    "controlled.shutdown.max.retries": 3,
    "controlled.shutdown.retry.backoff.ms": 5000,
    "group.min.session.timeout.ms": 6000,
    "group.max.session.timeout.ms": 1800000,
    "group.initial.rebalance.delay.ms": 3000,
    "offset.metadata.max.bytes": 4096,
    "offsets.load.buffer.size": 5242880,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 50,
    "offsets.topic.segment.bytes": 104857600,
    "offsets.retention.minutes": 10080,
    "offsets.retention.check.interval.ms": 600000,
    "offsets.commit.timeout.ms": 5000,
    "offsets.commit.required.acks": -1,
    "transactional.id.expiration.ms": 604800000,
    "transaction.max.timeout.ms": 900000,
    "transaction.state.log.min.isr": 2,
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.num.partitions": 50,
    "max.incremental.fetch.session.cache.slots": 1000,
    "fetch.max.bytes": 57671680,
    "compression.type": "producer",
    "delete.topic.enable": True,
}


def test_defaults_are_kafka_2_8_2s():
    values = make_config(broker_id="-1").values()
    mismatches = {k: (values[k], v) for k, v in KAFKA_2_8_2_DEFAULTS.items() if values[k] != v}
    assert mismatches == {}


def test_derived_defaults():
    config = make_config()
    assert config.listeners[0].host is None and config.listeners[0].port == 9092
    assert config.listeners[0].listener_name == ListenerName("PLAINTEXT")
    assert config.advertised_listeners == config.listeners
    assert config.inter_broker_listener_name == ListenerName("PLAINTEXT")
    assert config.inter_broker_security_protocol is SecurityProtocol.PLAINTEXT
    assert config.log_dirs == ["/tmp/kafka-logs"]
    assert config.log_retention_time_millis == 168 * 3600 * 1000
    assert config.log_roll_time_millis == 168 * 3600 * 1000
    assert config.log_roll_time_jitter_millis == 0
    assert config.log_flush_interval_ms == 2**63 - 1
    assert config.zk_connection_timeout_ms == 18000
    assert config.offsets_topic_compression_codec is CompressionType.NONE
    assert config.log_message_timestamp_type is TimestampType.CREATE_TIME
    assert config.producer_id_expiration_ms == 604800000
    assert config.max_connections_per_ip_overrides == {}
    assert config.num_replica_alter_log_dirs_threads == 1
    assert config.uses_topic_id


def test_repo_server_properties_parses_without_unknown_keys(caplog):
    with caplog.at_level(logging.INFO, logger=LOGGER):
        config = KafkaConfig.from_file(REPO_ROOT / "config" / "server.properties")
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []
    assert config.broker_id == 0
    assert [e.connection_string for e in config.listeners] == ["PLAINTEXT://localhost:9092"]
    assert config.zk_connect == "localhost:2181"
    assert config.offsets_topic_replication_factor == 1
    assert config.group_initial_rebalance_delay == 0
    assert config.log_cleanup_interval_ms == 300000


def test_values_are_logged_like_kafka(caplog):
    with caplog.at_level(logging.INFO, logger=LOGGER):
        KafkaConfig({"zookeeper.connect": "zk:2181", "log.cleanup.policy": "compact,delete"})
    dumps = [r.getMessage() for r in caplog.records if r.getMessage().startswith("KafkaConfig values: ")]
    assert len(dumps) == 1
    lines = dumps[0].split("\n")
    assert "\tnum.io.threads = 8" in lines
    assert "\tlog.cleanup.policy = [compact, delete]" in lines
    assert "\tlisteners = null" in lines
    assert "\tlog.cleaner.io.max.bytes.per.second = 1.7976931348623157E308" in lines
    names = [line.split(" = ")[0].strip() for line in lines[1:]]
    assert names == sorted(names) == sorted(CONFIG_DEF.names())


# -- precedence -------------------------------------------------------------------------------

@pytest.mark.parametrize("props, expected", [
    ({"log.retention.hours": "1"}, 3_600_000),
    ({"log.retention.minutes": "30", "log.retention.hours": "1"}, 1_800_000),
    ({"log.retention.ms": "1234", "log.retention.minutes": "30", "log.retention.hours": "1"}, 1234),
    ({"log.retention.ms": "-5"}, -1),
    ({"log.retention.minutes": "-1"}, -1),
])
def test_log_retention_precedence(props, expected):
    config = config_from(props)
    assert config.log_retention_time_millis == expected
    assert config.log_config_defaults()["retention.ms"] == expected


def test_log_roll_and_jitter_precedence():
    assert config_from({"log.roll.hours": "2"}).log_roll_time_millis == 7_200_000
    assert config_from({"log.roll.ms": "500", "log.roll.hours": "2"}).log_roll_time_millis == 500
    assert config_from({"log.roll.jitter.hours": "1"}).log_roll_time_jitter_millis == 3_600_000
    assert config_from({"log.roll.jitter.ms": "7", "log.roll.jitter.hours": "1"}).log_roll_time_jitter_millis == 7


def test_log_dirs_wins_over_log_dir():
    assert config_from({"log.dir": "/a"}).log_dirs == ["/a"]
    assert config_from({"log.dir": "/a", "log.dirs": "/b, /c ,/d"}).log_dirs == ["/b", "/c", "/d"]
    assert config_from({"log.dirs": "/b,,/c,"}).log_dirs == ["/b", "/c"]


def test_fallbacks_between_keys():
    config = config_from({"log.flush.scheduler.interval.ms": "3000", "zookeeper.session.timeout.ms": "9000"})
    assert config.log_flush_interval_ms == 3000
    assert config.zk_connection_timeout_ms == 9000
    config = config_from({"log.flush.interval.ms": "10", "log.flush.scheduler.interval.ms": "3000",
                          "zookeeper.connection.timeout.ms": "100"})
    assert config.log_flush_interval_ms == 10
    assert config.zk_connection_timeout_ms == 100


def test_advertised_listeners_and_legacy_host_port():
    config = config_from({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://broker1:19092"})
    assert [(e.host, e.port) for e in config.advertised_listeners] == [("broker1", 19092)]
    assert config.listeners[0].host is None  # empty host: all interfaces
    legacy = config_from({"host.name": "h", "port": "1234", "advertised.host.name": "pub"})
    assert [(e.host, e.port) for e in legacy.listeners] == [("h", 1234)]
    assert [(e.host, e.port) for e in legacy.advertised_listeners] == [("pub", 1234)]


def test_several_listeners_and_inter_broker_listener():
    config = config_from({
        "listeners": "CLIENT://0.0.0.0:9092,REPLICATION://[::1]:9093",
        "advertised.listeners": "CLIENT://client.example:9092,REPLICATION://[::1]:9093",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,replication:plaintext",
        "inter.broker.listener.name": "replication",
    })
    assert [e.listener_name.value for e in config.listeners] == ["CLIENT", "REPLICATION"]
    assert config.listeners[1].host == "::1"
    assert config.inter_broker_listener_name == ListenerName("REPLICATION")
    assert config.listener_security_protocol_map[ListenerName("REPLICATION")] is SecurityProtocol.PLAINTEXT


def test_port_zero_may_repeat():
    config = config_from({"listeners": "A://:0,B://:0",
                          "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT",
                          "inter.broker.listener.name": "A"})
    assert [e.port for e in config.listeners] == [0, 0]


def test_max_connections_per_ip_overrides():
    config = config_from({"max.connections.per.ip.overrides": "127.0.0.1:5, host-a:7, ::1:9"})
    assert config.max_connections_per_ip_overrides == {"127.0.0.1": 5, "host-a": 7, "::1": 9}


def test_typed_values_are_accepted():
    config = KafkaConfig({"zookeeper.connect": "zk:2181", "broker.id": 3, "num.io.threads": 2,
                          "auto.create.topics.enable": False, "log.cleanup.policy": ["compact"],
                          "log.cleaner.min.cleanable.ratio": 0.25}, do_log=False)
    assert (config.broker_id, config.num_io_threads, config.auto_create_topics_enable) == (3, 2, False)
    assert config.log_cleanup_policy == ["compact"]
    assert config.log_cleaner_min_clean_ratio == 0.25


# -- overrides and files --------------------------------------------------------------------

def test_from_file_with_overrides(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("broker.id=1\nzookeeper.connect=zk:2181\nnum.io.threads=4\n")
    config = KafkaConfig.from_file(path, ["num.io.threads=6", "broker.rack=r=1", "log.dirs=/data"], do_log=False)
    assert config.num_io_threads == 6
    assert config.rack == "r=1"  # only the first '=' separates key and value
    assert config.log_dirs == ["/data"]
    assert config.broker_id == 1
    assert config.config_source("num.io.threads") == "STATIC_BROKER_CONFIG"
    assert config.config_source("num.network.threads") == "DEFAULT_CONFIG"


def test_override_without_value_is_an_empty_string(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("zookeeper.connect=zk:2181\n")
    with pytest.raises(ConfigException) as info:
        KafkaConfig.from_file(path, ["num.io.threads"], do_log=False)
    assert info.value.name == "num.io.threads"


def test_unknown_keys_are_warned_like_kafka(tmp_path, caplog):
    path = tmp_path / "server.properties"
    path.write_text("zookeeper.connect=zk:2181\nzookeper.session.timeout.ms=1\n"
                    "listener.name.plaintext.max.connections=5\nproducer.id.expiration.ms=100\n")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        config = KafkaConfig.from_file(path)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert messages == [
        "The configuration 'zookeper.session.timeout.ms' was supplied but isn't a known config.",
        # Kafka 2.8 has no producer.id.expiration.ms (3.0 added it).
        "The configuration 'producer.id.expiration.ms' was supplied but isn't a known config.",
    ]
    assert config.unknown_keys() == ["zookeper.session.timeout.ms", "producer.id.expiration.ms"]


def test_malformed_file_names_the_file(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("zookeeper.connect=zk:2181\nbroker.rack=\\u12\n")
    with pytest.raises(ConfigException, match="Malformed"):
        KafkaConfig.from_file(path, do_log=False)


# -- invalid values -------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, allowed", [
    ("num.io.threads", "abc", "Not a number of type INT"),
    ("num.io.threads", "0", "Value must be at least 1"),
    ("broker.id", "99999999999", "32-bit integer"),
    ("auto.create.topics.enable", "yes", "either true or false"),
    ("log.cleanup.policy", "shred", "String must be one of: compact, delete"),
    ("log.message.timestamp.type", "WallClock", "CreateTime, LogAppendTime"),
    ("inter.broker.protocol.version", "9.9", "is not a valid version"),
    ("fetch.max.bytes", "1000", "Value must be at least 1024"),
    ("max.incremental.fetch.session.cache.slots", "-1", "Value must be at least 0"),
    ("offsets.topic.compression.codec", "7", "Value must be no more than 4"),
    ("log.prefault.bytes", "-1", "Value must be at least 0"),
    ("log.prefault.bytes", "16MB", "Not a number of type LONG"),
])
def test_bad_values_name_key_value_and_what_is_allowed(key, value, allowed):
    assert_config_error({key: value}, key, value, allowed)


@pytest.mark.parametrize("listeners, allowed", [
    ("PLAINTEXT//localhost:9092", "Unable to parse"),
    ("PLAINTEXT://localhost:port", "Unable to parse"),
    ("PLAINTEXT://localhost:9092junk", "Unable to parse"),
    ("UNKNOWN://localhost:9092", "No security protocol defined for listener UNKNOWN"),
    ("PLAINTEXT://a:9092,plaintext://b:9093", "Each listener must have a different name"),
    ("PLAINTEXT://a:70000", "must be between 0 and 65535"),
])
def test_bad_listeners(listeners, allowed):
    assert_config_error({"listeners": listeners}, "listeners", listeners, allowed)


def test_duplicate_ports_rejected_for_listeners_but_not_advertised():
    props = {"listeners": "A://a:9092,B://b:9092", "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT",
             "inter.broker.listener.name": "A"}
    assert_config_error(props, "listeners", "A://a:9092,B://b:9092", "Each listener must have a different port")
    config = config_from({**props, "listeners": "A://a:9092,B://b:9093",
                          "advertised.listeners": "A://pub:9092,B://pub:9092"})
    assert [e.port for e in config.advertised_listeners] == [9092, 9092]


def test_cross_key_validation():
    assert_config_error({"broker.id": "1001"}, "broker.id", "1001", "not greater than reserved.broker.max.id (1000)")
    assert_config_error({"broker.id": "-1", "broker.id.generation.enable": "false"}, "broker.id", "-1",
                        "greater than or equal to 0")
    assert_config_error({"log.dirs": " , "}, "log.dirs", " , ", "At least one log directory")
    assert_config_error({"log.retention.ms": "0"}, "log.retention.ms", "0", "unlimited (-1)")
    assert_config_error({"replica.fetch.wait.max.ms": "40000"}, "replica.fetch.wait.max.ms", "40000",
                        "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms")
    assert_config_error({"compression.type": "brotli"}, "compression.type", "brotli",
                        "Valid options are uncompressed,zstd,lz4,snappy,gzip,producer")
    assert_config_error({"offsets.commit.required.acks": "5", "offsets.topic.replication.factor": "3"},
                        "offsets.commit.required.acks", "5", "less or equal to offsets.topic.replication.factor")
    assert_config_error({"log.message.format.version": "2.8", "inter.broker.protocol.version": "0.10.2"},
                        "log.message.format.version", "2.8", "inter.broker.protocol.version is set to version 0.11.0")
    assert_config_error({"log.cleaner.dedupe.buffer.size": "1048576"}, "log.cleaner.dedupe.buffer.size",
                        "1048576", "at least 1MB per cleaner thread")
    assert_config_error({"max.connections.per.ip": "0"}, "max.connections.per.ip", "0",
                        "max.connections.per.ip.overrides property is set")
    assert_config_error({"max.connections.per.ip.overrides": "bad host:3"}, "max.connections.per.ip.overrides",
                        "bad host:3", "invalid addresses : bad host")
    assert_config_error({"max.connections.per.ip.overrides": "hostonly"}, "max.connections.per.ip.overrides",
                        "hostonly", "key:value")


def test_missing_zookeeper_connect():
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"broker.id": "0"}, do_log=False)
    assert info.value.name == "zookeeper.connect"
    assert "Missing required configuration `zookeeper.connect`" in str(info.value)


def test_listener_cross_checks():
    assert_config_error({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
                        "advertised.listeners", "0.0.0.0", "nonroutable meta-address")
    assert_config_error({"listeners": "A://:9092", "listener.security.protocol.map": "A:PLAINTEXT"},
                        "inter.broker.listener.name", "PLAINTEXT", "must be a listener name defined in "
                        "advertised.listeners")
    assert_config_error({"listeners": "A://:9092", "advertised.listeners": "A://h:9092,PLAINTEXT://h:9093",
                         "listener.security.protocol.map": "A:PLAINTEXT,PLAINTEXT:PLAINTEXT"},
                        "advertised.listeners", "A://h:9092,PLAINTEXT://h:9093", "subset of the ones defined")
    assert_config_error({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
                        "inter.broker.listener.name", "PLAINTEXT", "Only one of inter.broker.listener.name")
    assert_config_error({"inter.broker.listener.name": "OTHER"}, "inter.broker.listener.name", "OTHER",
                        "not found in listener.security.protocol.map")
    assert_config_error({"listener.security.protocol.map": "PLAINTEXT:TLS"}, "listener.security.protocol.map",
                        "PLAINTEXT:TLS", "Invalid security protocol `TLS`")


def test_unsupported_features_are_refused():
    # The Kafka names of the authorizers kafka-py ports are taken; any other class is refused.
    assert_config_error({"authorizer.class.name": "com.example.MyAuthorizer"},
                        "authorizer.class.name", "com.example.MyAuthorizer", "kafka.security.authorizer.AclAuthorizer")
    assert_config_error({"zookeeper.set.acl": "true"}, "zookeeper.set.acl", "true", "allowed value: false")


def test_bad_topic_default_is_reported_with_the_broker_key():
    assert_config_error({"log.cleaner.min.cleanable.ratio": "1.5"}, "log.cleaner.min.cleanable.ratio", "1.5",
                        "Value must be no more than 1")
    assert_config_error({"log.flush.scheduler.interval.ms": "-3"}, "log.flush.scheduler.interval.ms", "-3",
                        "Value must be at least 0")
    assert_config_error({"log.cleaner.min.compaction.lag.ms": "10", "log.cleaner.max.compaction.lag.ms": "5"},
                        "log.cleaner.min.compaction.lag.ms", "10", "log.cleaner.max.compaction.lag.ms (5)")


# -- topic defaults -------------------------------------------------------------------------

def test_log_config_defaults_feed_log_config():
    config = config_from({"log.segment.bytes": "1048576", "log.roll.hours": "1", "log.retention.minutes": "5",
                          "log.cleanup.policy": "compact", "compression.type": "GZIP", "message.max.bytes": "2000",
                          "log.message.timestamp.type": "LogAppendTime", "log.message.format.version": "2.1",
                          "min.insync.replicas": "2", "log.preallocate": "true"})
    log_config = config.default_log_config()
    assert log_config == LogConfig.from_props(config.log_config_defaults())
    assert log_config.segment_size == 1048576
    assert log_config.segment_ms == 3_600_000
    assert log_config.retention_ms == 300_000
    assert log_config.compact and not log_config.delete
    assert log_config.compression_type == "gzip"
    assert log_config.max_message_size == 2000
    assert log_config.message_timestamp_type is TimestampType.LOG_APPEND_TIME
    assert log_config.message_format_version.version == "2.1-IV2"
    assert log_config.min_in_sync_replicas == 2
    assert log_config.preallocate
    # A topic's own override wins over the broker default.
    assert LogConfig.from_props(config.log_config_defaults(), {"segment.bytes": "4096"}).segment_size == 4096


# -- dynamic configs ------------------------------------------------------------------------

def test_dynamic_overrides_layer_over_static_props():
    config = config_from({"log.retention.hours": "1", "num.io.threads": "8"})
    updated = config.with_dynamic_overrides({"log.retention.ms": "1000", "num.io.threads": "12"},
                                            {"log.retention.ms": "2000", "message.max.bytes": "5000"})
    assert updated.log_retention_time_millis == 1000  # per-broker beats cluster default
    assert updated.message_max_bytes == 5000
    assert updated.num_io_threads == 12
    assert updated.config_source("log.retention.ms") == "DYNAMIC_BROKER_CONFIG"
    assert updated.config_source("message.max.bytes") == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert updated.config_source("log.retention.hours") == "STATIC_BROKER_CONFIG"
    assert updated.log_config_defaults()["max.message.bytes"] == 5000
    assert config.log_retention_time_millis == 3_600_000  # the original is unchanged
    # None keeps a layer; an empty mapping clears it.
    kept = updated.with_dynamic_overrides(None, {})
    assert kept.log_retention_time_millis == 1000 and kept.message_max_bytes == 1048588


def test_dynamic_overrides_keep_a_generated_broker_id():
    config = make_config(broker_id="-1")
    config.broker_id = 1001
    assert config.with_dynamic_overrides({"log.retention.ms": "5"}).broker_id == 1001


def test_dynamic_overrides_are_validated():
    config = make_config()
    with pytest.raises(ConfigException, match=r"Cannot update these configs dynamically: \['broker.id'\]"):
        config.with_dynamic_overrides({"broker.id": "3"})
    with pytest.raises(ConfigException, match="broker id must be specified"):
        config.with_dynamic_overrides(None, {"listeners": "PLAINTEXT://:9099"})
    with pytest.raises(ConfigException, match="not be greater than double the current value 8"):
        config.with_dynamic_overrides({"num.io.threads": "17"})
    with pytest.raises(ConfigException, match="at least half the current value 8"):
        config.with_dynamic_overrides({"num.io.threads": "3"})
    with pytest.raises(ConfigException) as info:
        config.with_dynamic_overrides({"log.retention.bytes": "lots"})
    assert info.value.name == "log.retention.bytes"


def test_dynamic_config_sets():
    assert {"log.retention.ms", "log.segment.bytes", "message.max.bytes", "num.io.threads",
            "max.connections.per.ip", "log.cleaner.threads", "advertised.listeners"} <= DYNAMIC_BROKER_CONFIGS
    assert "log.message.format.version" not in DYNAMIC_BROKER_CONFIGS
    assert "log.retention.hours" not in DYNAMIC_BROKER_CONFIGS
    assert "broker.id" not in DYNAMIC_BROKER_CONFIGS
    assert DYNAMIC_BROKER_CONFIGS <= CONFIG_DEF.names()
    assert KafkaConfig.is_dynamic("listener.name.plaintext.max.connections")
    assert broker_config_synonyms("log.retention.hours") == ["log.retention.ms", "log.retention.minutes",
                                                             "log.retention.hours"]


def test_describe_configs_views():
    config = config_from({"log.cleanup.policy": "compact,delete", "log.dirs": "/a"})
    assert config.value_as_string("log.cleanup.policy") == "compact,delete"
    assert config.value_as_string("auto.create.topics.enable") == "true"
    assert config.value_as_string("listeners") is None
    assert config.originals_strings()["log.dirs"] == "/a"
    assert config.get("num.io.threads") == 8
    with pytest.raises(KeyError):
        config.get("no.such.key")


# -- the .properties parser -----------------------------------------------------------------

# -- KRaft mode (process.roles) ------------------------------------------------------------------

# A combined node as in Kafka 2.8.2's config/kraft/server.properties.
KRAFT_COMBINED = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": "1@localhost:9093",
    "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
    "advertised.listeners": "PLAINTEXT://localhost:9092",
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
}
KRAFT_BROKER = {**KRAFT_COMBINED, "process.roles": "broker", "node.id": "2", "listeners": "PLAINTEXT://:9092"}
KRAFT_CONTROLLER = {"process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@localhost:9093",
                    "listeners": "PLAINTEXT://:9093", "controller.listener.names": "PLAINTEXT"}


def kraft_config(base: dict[str, object], **changes: object) -> KafkaConfig:
    props = {**base, **{k.replace("_", "."): v for k, v in changes.items()}}
    return KafkaConfig({k: v for k, v in props.items() if v is not None}, do_log=False)


def assert_kraft_error(base: dict[str, object], changes: dict[str, object], key: str, value_text: str,
                       allowed_text: str) -> ConfigException:
    props = {k: v for k, v in {**base, **changes}.items() if v is not None}
    with pytest.raises(ConfigException) as info:
        KafkaConfig(props, do_log=False)
    message = str(info.value)
    assert info.value.name == key, message
    assert key in message and value_text in message and allowed_text in message, message
    return info.value


# Kafka 2.8.2's KafkaConfig defaults (object Defaults and RaftConfig) for the KRaft keys, and
# Kafka 3.0's for the metadata log keys it added.
KRAFT_DEFAULTS = {
    "process.roles": [],
    "node.id": -1,
    "initial.broker.registration.timeout.ms": 60000,
    "broker.heartbeat.interval.ms": 2000,
    "broker.session.timeout.ms": 9000,
    "metadata.log.dir": None,
    "controller.listener.names": None,
    "sasl.mechanism.controller.protocol": "GSSAPI",
    "controller.quorum.voters": [],
    "controller.quorum.election.timeout.ms": 1000,
    "controller.quorum.fetch.timeout.ms": 2000,
    "controller.quorum.election.backoff.max.ms": 1000,
    "controller.quorum.request.timeout.ms": 2000,
    "controller.quorum.retry.backoff.ms": 20,
    "controller.quorum.append.linger.ms": 25,
    "metadata.log.max.record.bytes.between.snapshots": 20 * 1024 * 1024,
    "metadata.log.segment.bytes": 1024 * 1024 * 1024,
    "metadata.log.segment.min.bytes": 8 * 1024 * 1024,
    "metadata.log.segment.ms": 7 * 24 * 3600 * 1000,
    "metadata.max.retention.bytes": -1,
    "metadata.max.retention.ms": 7 * 24 * 3600 * 1000,
}


def test_kraft_defaults_and_zookeeper_mode_unchanged():
    config = make_config()
    values = config.values()
    assert {k: values[k] for k in KRAFT_DEFAULTS} == KRAFT_DEFAULTS
    assert config.requires_zookeeper and not config.uses_self_managed_quorum
    assert config.process_roles == frozenset()
    assert config.node_id == config.broker_id == 0
    assert config.controller_listener_names == [] and config.controller_listeners == []
    assert config.metadata_log_dir == "/tmp/kafka-logs"
    assert (config.quorum_election_timeout_ms, config.quorum_fetch_timeout_ms, config.quorum_election_backoff_ms,
            config.quorum_request_timeout_ms, config.quorum_retry_backoff_ms, config.quorum_linger_ms) == \
        (1000, 2000, 1000, 2000, 20, 25)
    assert (config.broker_heartbeat_interval_ms, config.broker_session_timeout_ms,
            config.initial_registration_timeout_ms) == (2000, 9000, 60000)


def test_kraft_quorum_keys_are_raft_configs():
    # One home for the controller.quorum.* definitions: kafka_py/raft/raft_config.py.
    from kafka_py.raft import raft_config

    for name, key in raft_config.CONFIG_DEF.config_keys.items():
        ours = CONFIG_DEF.config_keys[name]
        assert (ours.type, ours.default_value, ours.validator, ours.documentation) == \
            (key.type, key.default_value, key.validator, key.documentation)
        assert ours.internal_config


def test_kraft_keys_are_internal_as_in_kafka_2_8_2():
    config = make_config()
    for name in KRAFT_DEFAULTS:
        assert CONFIG_DEF.config_keys[name].internal_config
        assert name in config.values() and name not in config.non_internal_values()
    assert "num.io.threads" in config.non_internal_values()


def test_kraft_combined_node():
    config = kraft_config(KRAFT_COMBINED)
    assert config.uses_self_managed_quorum and not config.requires_zookeeper
    assert config.process_roles == frozenset({ProcessRole.BROKER, ProcessRole.CONTROLLER})
    assert config.zk_connect is None
    assert config.node_id == config.broker_id == 1
    assert config.quorum_voters == ["1@localhost:9093"]
    assert config.controller_listener_names == ["CONTROLLER"]
    assert [e.connection_string for e in config.controller_listeners] == ["CONTROLLER://:9093"]
    assert [e.connection_string for e in config.data_plane_listeners] == ["PLAINTEXT://:9092"]
    assert [e.connection_string for e in config.advertised_listeners] == ["PLAINTEXT://localhost:9092"]


def test_kraft_advertised_listeners_default_leaves_out_the_controller_listener():
    config = kraft_config(KRAFT_COMBINED, advertised_listeners=None)
    assert [e.connection_string for e in config.advertised_listeners] == ["PLAINTEXT://:9092"]


def test_kraft_controller_listener_names_are_normalised():
    config = kraft_config(KRAFT_COMBINED, controller_listener_names="controller")
    assert config.controller_listener_names == ["CONTROLLER"]
    assert [e.port for e in config.controller_listeners] == [9093]


def test_kraft_controller_only_node_needs_no_inter_broker_listener():
    config = kraft_config(KRAFT_CONTROLLER)
    assert config.process_roles == frozenset({ProcessRole.CONTROLLER})
    assert config.advertised_listeners == [] and config.data_plane_listeners == []
    assert [e.port for e in config.controller_listeners] == [9093]


def test_kraft_broker_only_node():
    config = kraft_config(KRAFT_BROKER)
    assert config.process_roles == frozenset({ProcessRole.BROKER})
    assert config.controller_listeners == []
    assert config.controller_listener_names == ["CONTROLLER"]


def test_kraft_node_id_is_the_broker_id():
    assert kraft_config(KRAFT_COMBINED, node_id="1", broker_id="1").broker_id == 1
    # As in Kafka, node.id falls back to broker.id
    config = kraft_config(KRAFT_COMBINED, node_id=None, broker_id="1")
    assert config.node_id == config.broker_id == 1
    # and a ZooKeeper-mode broker given a node.id takes it as its broker id.
    assert config_from({"node.id": "7"}).broker_id == 7


def test_kraft_metadata_log_dir():
    assert kraft_config(KRAFT_COMBINED, log_dirs="/d1,/d2").metadata_log_dir == "/d1"
    assert kraft_config(KRAFT_COMBINED, log_dirs="/d1,/d2", metadata_log_dir="/meta").metadata_log_dir == "/meta"


def test_kraft_does_not_require_zookeeper_connect():
    # and a ZooKeeper-mode config still does
    kraft_config(KRAFT_COMBINED)
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"broker.id": "0"}, do_log=False)
    assert info.value.name == "zookeeper.connect"


def test_kraft_requires_node_id():
    with pytest.raises(ConfigException) as info:
        kraft_config(KRAFT_COMBINED, node_id=None)
    assert info.value.name == "node.id"
    assert str(info.value) == ("Missing configuration `node.id` which is required when `process.roles` is "
                               "defined (i.e. when running in KRaft mode).")
    assert_kraft_error(KRAFT_COMBINED, {"node.id": "-3"}, "node.id", "-3", "required when `process.roles`")


@pytest.mark.parametrize("changes, key, value, allowed", [
    ({"process.roles": "broker,zookeeper"}, "process.roles", "zookeeper", "String must be one of: broker, controller"),
    ({"process.roles": "broker,broker"}, "process.roles", "broker,broker", "Duplicate role names"),
    ({"node.id": "abc"}, "node.id", "abc", "Not a number"),
    ({"node.id": "1", "broker.id": "2"}, "node.id", "1", "same value as `broker.id` (2)"),
    ({"controller.quorum.voters": ""}, "controller.quorum.voters", "", "must contain a parseable set of voters"),
    ({"controller.quorum.voters": "1@localhost"}, "controller.quorum.voters", "1@localhost",
     "`{id}@{host}:{port}`"),
    ({"controller.quorum.voters": "2@localhost:9093"}, "node.id", "1",
     "the node id 1 must be included in the set of voters controller.quorum.voters=2@localhost:9093"),
    ({"controller.listener.names": None}, "controller.listener.names", "null",
     "must contain at least one value appearing in the 'listeners'"),
    ({"controller.listener.names": "CONTROLLER,OTHER"}, "controller.listener.names", "CONTROLLER,OTHER",
     "must only contain values appearing in the 'listeners' configuration"),
    ({"advertised.listeners": "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093"}, "advertised.listeners",
     "CONTROLLER://localhost:9093", "cannot contain any of controller.listener.names (CONTROLLER)"),
    ({"control.plane.listener.name": "CONTROLLER"}, "control.plane.listener.name", "CONTROLLER",
     "not supported in KRaft mode"),
    ({"listeners": "CONTROLLER://:9093", "advertised.listeners": None}, "listeners", "CONTROLLER://:9093",
     "There must be at least one advertised listener"),
    ({"controller.quorum.election.timeout.ms": "-1"}, "controller.quorum.election.timeout.ms", "-1",
     "at least 0"),
    ({"metadata.log.segment.bytes": "5"}, "metadata.log.segment.bytes", "5", "at least 12"),
])
def test_kraft_combined_node_validation(changes, key, value, allowed):
    assert_kraft_error(KRAFT_COMBINED, changes, key, value, allowed)


@pytest.mark.parametrize("changes, key, value, allowed", [
    ({"node.id": "1"}, "node.id", "1", "just the 'broker' role, the node id 1 must not be included in the set "
     "of voters controller.quorum.voters=1@localhost:9093"),
    ({"controller.listener.names": None}, "controller.listener.names", "null",
     "must contain at least one value when running KRaft with just the broker role"),
    # a broker-only node must not listen on the controller listener
    ({"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093"}, "listeners", "CONTROLLER://:9093",
     "must not contain a value appearing in the 'listeners' configuration when running KRaft with just the "
     "broker role"),
    ({"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"}, "controller.listener.names", "CONTROLLER",
     "Controller listener with name CONTROLLER defined in controller.listener.names not found in "
     "listener.security.protocol.map"),
    ({"inter.broker.listener.name": "OTHER", "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,"
      "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT"}, "inter.broker.listener.name", "OTHER",
     "must be a listener name defined in advertised.listeners"),
])
def test_kraft_broker_node_validation(changes, key, value, allowed):
    assert_kraft_error(KRAFT_BROKER, changes, key, value, allowed)


@pytest.mark.parametrize("changes, key, value, allowed", [
    ({"controller.quorum.voters": "2@localhost:9093"}, "node.id", "1",
     "the node id 1 must be included in the set of voters"),
    ({"controller.listener.names": "CONTROLLER"}, "controller.listener.names", "CONTROLLER",
     "must contain at least one value appearing in the 'listeners' configuration when running the KRaft "
     "controller role; listeners are PLAINTEXT://:9093"),
    ({"listeners": "PLAINTEXT://:9093,SSL://:9094"}, "listeners", "SSL://:9094",
     "must only contain KRaft controller listeners from controller.listener.names when process.roles=controller"),
    ({"advertised.listeners": "SSL://localhost:9094"}, "advertised.listeners", "SSL://localhost:9094",
     "The advertised.listeners config must only contain KRaft controller listeners"),
])
def test_kraft_controller_node_validation(changes, key, value, allowed):
    assert_kraft_error(KRAFT_CONTROLLER, changes, key, value, allowed)


def test_zookeeper_mode_advertised_listeners_may_not_include_a_controller_listener():
    # Kafka 2.8.2 checks this whatever the mode.
    assert_config_error({"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
                         "advertised.listeners": "PLAINTEXT://h:9092,CONTROLLER://h:9093",
                         "controller.listener.names": "CONTROLLER",
                         "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"},
                        "advertised.listeners", "CONTROLLER://h:9093", "cannot contain any of controller.listener.names")


@pytest.mark.parametrize("name, roles, node_id", [
    ("server.properties", {ProcessRole.BROKER, ProcessRole.CONTROLLER}, 1),
    ("broker.properties", {ProcessRole.BROKER}, 2),
    ("controller.properties", {ProcessRole.CONTROLLER}, 1),
])
def test_repo_kraft_properties_parse_without_unknown_keys(name, roles, node_id, caplog):
    with caplog.at_level(logging.INFO, logger=LOGGER):
        config = KafkaConfig.from_file(REPO_ROOT / "config" / "kraft" / name)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert config.process_roles == roles and config.node_id == node_id
    assert config.quorum_voters == ["1@localhost:9093"]
    assert config.uses_self_managed_quorum


def test_properties_separators_and_comments():
    text = (
        "# a comment\n"
        "! another comment\n"
        "   # indented comment\n"
        "\n"
        "a=1\n"
        "b:2\n"
        "c 3\n"
        "d = 4\n"
        "e\t:\t5\n"
        "f  =  = 6\n"
        "g\n"
        "h=\n"
        "  i=leading space of the key is dropped\n"
        "j=value # not a comment\n"
        "a=last wins\n"
    )
    assert properties.load(text) == {
        "a": "last wins", "b": "2", "c": "3", "d": "4", "e": "5", "f": "= 6", "g": "", "h": "",
        "i": "leading space of the key is dropped", "j": "value # not a comment",
    }


def test_properties_continuations():
    text = (
        "list=a,\\\n"
        "     b,\\\n"
        "\tc\n"
        "even=ends with a backslash\\\\\n"
        "next=x\n"
        "# comment ending in a backslash \\\n"
        "after.comment=y\n"
        "hash=1\\\n"
        "#2\n"
        "blank=start\\\n"
        "\n"
        "not.joined=z\n"
        "crlf=p\\\r\n"
        "  q\r\n"
        "eof=tail\\"
    )
    assert properties.load(text) == {
        "list": "a,b,c",
        "even": "ends with a backslash\\",
        "next": "x",
        "after.comment": "y",
        "hash": "1#2",  # a continuation line is never a comment
        "blank": "start",
        "not.joined": "z",
        "crlf": "pq",
        "eof": "tail",
    }


def test_properties_escapes():
    text = (
        "key\\ with\\ spaces=v\n"
        "key\\=eq\\:colon=v2\n"
        "tabs=a\\tb\\nc\\rd\\fe\n"
        "unicode=\\u00e9\\u4e2d\\uD83D\\uDE00\n"
        "other=\\q\\\\x\n"
        "path=C:\\\\kafka\\\\logs\n"
    )
    assert properties.load(text) == {
        "key with spaces": "v",
        "key=eq:colon": "v2",
        "tabs": "a\tb\nc\rd\fe",
        "unicode": "\u00e9\u4e2d\U0001F600",
        "other": "q\\x",
        "path": "C:\\kafka\\logs",
    }


def test_properties_malformed_unicode_escape():
    with pytest.raises(properties.PropertiesParseError) as info:
        properties.load("a=1\nb=\\u00G1\n")
    assert info.value.line_number == 2


def test_properties_store_format():
    text = properties.store({"version": "0", "cluster.id": "a b=c:d", " lead": "x#!", "uni": "\u00e9"}, "",
                            timestamp=0)
    lines = text.split("\n")
    assert lines[0] == "#"
    assert lines[1].startswith("#") and lines[1].endswith("1970")
    assert lines[2:] == ["version=0", "cluster.id=a b\\=c\\:d", "\\ lead=x\\#\\!", "uni=\\u00E9", ""]
    assert text.isascii()


def test_parse_key_value_args():
    assert properties.parse_key_value_args(["a=1", "b=x=y", "c", "d="]) == {"a": "1", "b": "x=y", "c": "", "d": ""}
    with pytest.raises(ValueError, match="Missing value for key c"):
        properties.parse_key_value_args(["c"], accept_missing_value=False)


_KEYS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_VALUES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_properties_store_load_round_trip(props):
    assert properties.load(properties.store(props, "comment\nsecond line")) == props


def test_properties_load_file_latin1_fallback(tmp_path):
    path = tmp_path / "x.properties"
    path.write_bytes(b"name=caf\xe9\n")  # ISO-8859-1, as Java writes without escapes
    assert properties.load_file(path) == {"name": "caf\u00e9"}


def test_each_authorizer_only_in_its_own_mode():
    standard = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert kraft_config(KRAFT_COMBINED, authorizer_class_name=standard).get("authorizer.class.name") == standard
    assert kraft_config(KRAFT_CONTROLLER, authorizer_class_name=standard).get("authorizer.class.name") == standard
    # ZooKeeper's AclAuthorizer on a KRaft node stops it, naming the key and the authorizer to use
    for acl_authorizer in ("kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"):
        assert_kraft_error(KRAFT_BROKER, {"authorizer.class.name": acl_authorizer}, "authorizer.class.name",
                           acl_authorizer, standard)
    assert_config_error({"authorizer.class.name": standard}, "authorizer.class.name", standard, "process.roles")
