"""kafka-topics.sh without a broker: option rules, parsing, and the --describe lines."""
from __future__ import annotations

import uuid

import click
import pytest
from click.testing import CliRunner

from kafka_py.core.utils.command_line_utils import CommandError, ConfigEntry
from kafka_py.core.admin.topic_command import (
    IncludeList,
    PartitionDescription,
    PartitionInfo,
    Reassignment,
    TopicCommandOptions,
    describe_lines,
    do_get_topics,
    format_topic_id,
    main,
    parse_replica_assignment,
    parse_topic_configs_to_be_added,
)

BOOTSTRAP = "localhost:9092"


def opts(**kwargs) -> TopicCommandOptions:
    kwargs.setdefault("bootstrap_server", BOOTSTRAP)
    return TopicCommandOptions(**kwargs)


def entry(name: str, value: str, source: str = "DYNAMIC_TOPIC_CONFIG") -> ConfigEntry:
    return ConfigEntry(name, value, source, False, False)


# -- option parsing ---------------------------------------------------------------------------

def test_replica_assignment() -> None:
    assert parse_replica_assignment("0:1, 1:2 ,2:0") == {0: [0, 1], 1: [1, 2], 2: [2, 0]}
    assert parse_replica_assignment("3") == {0: [3]}


@pytest.mark.parametrize("text, message", [
    ("0:0", "may not contain duplicate entries: 0"),
    ("0:1,2", "Partition 1 has different replication factor"),
    ("a:b", "broker ids must be integers"),
])
def test_bad_replica_assignment(text: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        parse_replica_assignment(text)


def test_topic_configs_are_validated_before_sending() -> None:
    assert parse_topic_configs_to_be_added(["retention.ms = 1000", "cleanup.policy=compact"]) == {
        "retention.ms": "1000", "cleanup.policy": "compact"}
    with pytest.raises(CommandError, match='format "key=val"'):
        parse_topic_configs_to_be_added(["retention.ms"])
    with pytest.raises(CommandError, match="Unknown topic config name: retention.hours"):
        parse_topic_configs_to_be_added(["retention.hours=1"])
    with pytest.raises(CommandError, match="retention.ms"):
        parse_topic_configs_to_be_added(["retention.ms=soon"])


def test_message_format_version_warns() -> None:
    lines: list[str] = []
    parse_topic_configs_to_be_added(["message.format.version=2.8"], lines.append)
    assert lines and lines[0].startswith("WARNING: The configuration message.format.version=2.8 is specified.")


def test_include_list_is_a_whole_name_regex() -> None:
    topics = ["orders", "orders-dlq", "payments", "__consumer_offsets"]
    assert do_get_topics(topics, "orders", False) == ["orders"]
    assert do_get_topics(topics, "orders.*", False) == ["orders", "orders-dlq"]
    assert do_get_topics(topics, "orders,payments", False) == ["orders", "payments"]
    assert do_get_topics(topics, None, False) == sorted(topics)
    assert do_get_topics(topics, None, True) == ["orders", "orders-dlq", "payments"]
    assert do_get_topics(topics, "__.*", True) == []
    assert IncludeList("'pay.*'").is_topic_allowed("payments", False)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "exactly one action"),
    ({"create": True, "list": True}, "exactly one action"),
    ({"create": True}, "topic"),
    ({"delete": True}, "topic"),
    ({"alter": True, "topic": "t"}, "partitions"),
    ({"alter": True, "topic": "t", "partitions": 2, "config": ("a=b",)}, "kafka-configs CLI"),
    ({"list": True, "partitions": 3}, "--partitions"),
    ({"alter": True, "topic": "t", "partitions": 3, "replication_factor": 1}, "--replication-factor"),
    ({"create": True, "topic": "t", "replica_assignment": "0", "partitions": 1}, "--replica-assignment"),
    ({"delete": True, "topic": "t", "if_not_exists": True}, "--if-not-exists"),
    ({"create": True, "topic": "t", "if_exists": True}, "--if-exists"),
    ({"describe": True, "under_replicated_partitions": True, "unavailable_partitions": True}, "can't be used"),
    ({"describe": True, "under_min_isr_partitions": True, "topics_with_overrides": True}, "can't be used"),
    ({"list": True, "under_replicated_partitions": True}, "--under-replicated-partitions"),
    ({"create": True, "topic": "t", "exclude_internal": True}, "--exclude-internal"),
    ({"describe": True, "if_exists": True}, "topic"),
    ({"create": True, "topic": "t", "delete_config": ("a",)}, "--delete-config"),
    ({"list": True, "zookeeper": "zk:2181"}, "Only one of --bootstrap-server or --zookeeper must be specified"),
    ({"list": True, "bootstrap_server": None}, "Only one of --bootstrap-server or --zookeeper must be specified"),
    ({"create": True, "topic": "t", "partitions": 1, "bootstrap_server": None, "zookeeper": "zk:2181"},
     "replication-factor"),
    ({"describe": True, "delete_config": ("a",), "bootstrap_server": None, "zookeeper": "zk:2181"},
     "--delete-config"),
])
def test_check_args_rejects(kwargs: dict, message: str) -> None:
    with pytest.raises(click.UsageError, match=message):
        opts(**kwargs).check_args()


@pytest.mark.parametrize("kwargs", [
    {"list": True},
    {"describe": True},
    {"describe": True, "topic": "t", "if_exists": True, "under_replicated_partitions": True},
    {"create": True, "topic": "t", "partitions": 3, "replication_factor": 1, "config": ("a=b",)},
    {"create": True, "topic": "t", "replica_assignment": "0,0", "if_not_exists": True},
    {"alter": True, "topic": "t", "partitions": 4, "if_exists": True},
    {"delete": True, "topic": "t.*", "if_exists": True},
    # --zookeeper (deprecated, as 2.8.2 still has it): create needs partitions and a replication factor,
    # --alter may change configs
    {"create": True, "topic": "t", "partitions": 3, "replication_factor": 1, "bootstrap_server": None,
     "zookeeper": "zk:2181"},
    {"alter": True, "topic": "t", "config": ("a=b",), "delete_config": ("c",), "bootstrap_server": None,
     "zookeeper": "zk:2181"},
])
def test_check_args_accepts(kwargs: dict) -> None:
    opts(**kwargs).check_args()


def test_cli_usage_errors_need_no_broker() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--bootstrap-server", BOOTSTRAP])
    assert result.exit_code == 2 and "exactly one action" in result.output
    result = runner.invoke(main, ["--list"])
    assert result.exit_code == 2 and "bootstrap-server" in result.output
    result = runner.invoke(main, ["--bootstrap-server", "nohost", "--list"])
    assert result.exit_code == 2 and "valid host:port" in result.output


def test_cli_rejects_bad_configs_before_connecting() -> None:
    # an unreachable port: had the tool connected first this would time out instead
    result = CliRunner().invoke(main, ["--bootstrap-server", "127.0.0.1:1", "--create", "--topic", "t",
                                       "--config", "retention.ms=soon"])
    assert result.exit_code == 1
    assert result.output.startswith("Error while executing topic command : ")
    assert "retention.ms" in result.output


# -- describe output --------------------------------------------------------------------------

def test_topic_id_is_printed_as_kafka_does() -> None:
    topic_id = uuid.UUID("7f3e0a4c-3b5f-4e1d-9d2b-0123456789ab")
    text = format_topic_id(topic_id)
    assert text == "fz4KTDtfTh2dKwEjRWeJqw"
    assert format_topic_id(str(topic_id)) == text
    assert format_topic_id(uuid.UUID(int=0)) is None
    assert format_topic_id(None) is None


PARTITIONS = [
    PartitionInfo(0, 1, (1, 2), (1, 2)),
    PartitionInfo(1, 2, (2, 3), (2,)),        # under-replicated
    PartitionInfo(2, None, (3, 1), ()),       # no leader
    PartitionInfo(3, 3, (3, 1), (3, 1)),      # leader 3 is not live below
]
CONFIG = [entry("min.insync.replicas", "2"), entry("retention.ms", "1000"),
          entry("segment.bytes", "1073741824", "DEFAULT_CONFIG")]


def test_describe_prints_topic_then_partitions() -> None:
    lines = describe_lines(opts(describe=True), "t", uuid.UUID(int=1), PARTITIONS, CONFIG, {1, 2})
    assert lines == [
        "Topic: t\tTopicId: AAAAAAAAAAAAAAAAAAAAAQ\tPartitionCount: 4\tReplicationFactor: 2"
        "\tConfigs: min.insync.replicas=2,retention.ms=1000",
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: t\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: t\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: ",
        "\tTopic: t\tPartition: 3\tLeader: 3\tReplicas: 3,1\tIsr: 3,1",
    ]


@pytest.mark.parametrize("flag, expected", [
    ("under_replicated_partitions", [1, 2]),
    ("unavailable_partitions", [2, 3]),
    ("under_min_isr_partitions", [1, 2]),
    ("at_min_isr_partitions", [0, 3]),
])
def test_describe_report_filters(flag: str, expected: list[int]) -> None:
    lines = describe_lines(opts(describe=True, **{flag: True}), "t", None, PARTITIONS, CONFIG, {1, 2})
    assert [int(line.split("Partition: ")[1].split("\t")[0]) for line in lines] == expected
    assert not any(line.startswith("Topic:") for line in lines)


def test_topics_with_overrides() -> None:
    o = opts(describe=True, topics_with_overrides=True)
    assert describe_lines(o, "t", None, PARTITIONS, CONFIG, {1, 2}) == [
        "Topic: t\tPartitionCount: 4\tReplicationFactor: 2\tConfigs: min.insync.replicas=2,retention.ms=1000"]
    defaults_only = [entry("segment.bytes", "1073741824", "DEFAULT_CONFIG")]
    assert describe_lines(o, "t", None, PARTITIONS, defaults_only, {1, 2}) == []


def test_a_partition_being_reassigned_shows_its_adding_and_removing_replicas() -> None:
    moving = [PartitionInfo(0, 0, (1, 2, 3, 0), (0, 1, 2))]
    reassignment = {0: Reassignment((1, 2, 3, 0), (3,), (0,))}
    assert describe_lines(opts(describe=True), "t", None, moving, [], {0, 1, 2, 3}, reassignment) == [
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: ",
        "\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 1,2,3,0\tIsr: 0,1,2\tAdding Replicas: 3"
        "\tRemoving Replicas: 0"]
    # the replication factor is the original one: three in sync is not under-replicated
    assert describe_lines(opts(describe=True, under_replicated_partitions=True), "t", None, moving, [],
                          {0, 1, 2, 3}, reassignment) == []
    assert len(describe_lines(opts(describe=True, under_replicated_partitions=True), "t", None, moving, [],
                              {0, 1, 2, 3})) == 1


def test_static_broker_overrides_count_as_non_default() -> None:
    config = [entry("segment.bytes", "1024", "STATIC_BROKER_CONFIG")]
    line = describe_lines(opts(describe=True), "t", None, PARTITIONS[:1], config, {1})[0]
    assert line.endswith("\tConfigs: segment.bytes=1024")


def test_min_isr_without_config() -> None:
    desc = PartitionDescription("t", PartitionInfo(0, 1, (1,), (1,)), None)
    assert not desc.is_under_min_isr() and not desc.is_at_min_isr_partitions()
    leaderless = PartitionDescription("t", PartitionInfo(0, None, (1,), ()), None)
    assert leaderless.is_under_min_isr()
