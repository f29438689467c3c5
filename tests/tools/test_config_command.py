"""kafka-configs.sh without a broker: --add-config parsing, entity rules, output lines."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from kafka_py.core.utils.command_line_utils import CommandError, ConfigEntry, ConfigSynonym
from kafka_py.core.admin.config_command import (
    ConfigCommandOptions,
    format_config_entry,
    main,
    parse_configs_to_be_added,
    parse_configs_to_be_deleted,
)

BOOTSTRAP = "localhost:9092"


def test_add_config_pairs_and_brackets() -> None:
    assert parse_configs_to_be_added("a=1,b = 2") == {"a": "1", "b": "2"}
    assert parse_configs_to_be_added("cleanup.policy=[compact,delete],retention.ms=5") == {
        "cleanup.policy": "compact,delete", "retention.ms": "5"}
    assert parse_configs_to_be_added("ssl.endpoint.identification.algorithm=") == {
        "ssl.endpoint.identification.algorithm": ""}
    assert parse_configs_to_be_added("a=1,") == {"a": "1"}


@pytest.mark.parametrize("text", ["a", "a=1,b", "a=1=2"])
def test_add_config_rejects_malformed_pairs(text: str) -> None:
    with pytest.raises(CommandError, match='format "key=val"'):
        parse_configs_to_be_added(text)


def test_add_config_file_then_command_line(tmp_path) -> None:
    path = tmp_path / "add.properties"
    path.write_text("retention.ms=1\nsegment.ms=2\n")
    assert parse_configs_to_be_added("retention.ms=3", str(path)) == {"retention.ms": "3", "segment.ms": "2"}


def test_delete_config_lists() -> None:
    assert parse_configs_to_be_deleted(("a, b", "c")) == ["a", "b", "c"]


def test_config_entry_line() -> None:
    e = ConfigEntry("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG", False, False, (
        ConfigSynonym("retention.ms", "1000", "DYNAMIC_TOPIC_CONFIG"),
        ConfigSynonym("log.retention.hours", "168", "DEFAULT_CONFIG")))
    assert format_config_entry(e) == ("  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                                      "retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}")
    secret = ConfigEntry("ssl.key.password", None, "DYNAMIC_BROKER_CONFIG", True, False)
    assert format_config_entry(secret) == "  ssl.key.password=null sensitive=true synonyms={}"


def test_user_and_client_pairs_keep_the_command_line_order() -> None:
    argv = ("--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "app")
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, alter=True, add_config="producer_byte_rate=1",
                             entity_type=("users", "clients"), entity_name=("app",), entity_default=True, argv=argv)
    o.check_args()
    assert (o.entity_types, o.entity_names) == (["users", "clients"], ["", "app"])
    argv = ("--entity-type", "users", "--entity-name=alice", "--entity-type", "clients", "--entity-default")
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, entity_type=("users", "clients"),
                             entity_name=("alice",), entity_default=True, argv=argv)
    assert o.entity_names == ["alice", ""]
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, user="alice", client_defaults=True)
    assert (o.entity_types, o.entity_names) == (["users", "clients"], ["alice", ""])


def test_entity_flags_and_defaults() -> None:
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, broker_defaults=True)
    assert (o.entity_types, o.entity_names) == (["brokers"], [""])
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, topic="t")
    assert (o.entity_types, o.entity_names) == (["topics"], ["t"])
    o = ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, entity_type=("brokers",), entity_default=True)
    assert (o.entity_types, o.entity_names) == (["brokers"], [""])


@pytest.mark.parametrize("kwargs, message", [
    ({"entity_type": ("broker-loggers",), "entity_name": ("0",)}, "Invalid entity type broker-loggers"),
    ({"entity_type": ("topics", "clients")}, "Only 'users' and 'clients' entity types may be specified together"),
    ({"entity_type": ("topics", "topics")}, "Duplicate entity type"),
    ({}, "At least one entity type"),
    ({"entity_name": ("x",), "topic": "t"}, "should not be used in conjunction"),
    ({"entity_type": ("brokers",), "entity_name": ("zero",)}, "valid integer broker id"),
    ({"zookeeper": "zk:2181", "entity_type": ("topics",)}, "Only one of --bootstrap-server or --zookeeper"),
    ({"zookeeper": "zk:2181", "entity_type": ("ips",)}, "Only one of --bootstrap-server or --zookeeper"),
    ({"zookeeper": "zk:2181", "bootstrap_server": None, "entity_type": ("broker-loggers",)},
     "Invalid entity type broker-loggers, the entity type must be one of topics,clients,users,brokers,ips with the "
     "--zookeeper argument"),
])
def test_describe_rules(kwargs: dict, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        ConfigCommandOptions(**{"bootstrap_server": BOOTSTRAP, "describe": True, **kwargs}).check_args()


@pytest.mark.parametrize("kwargs, message", [
    ({"entity_type": ("topics",), "add_config": "a=1"}, "an entity name must be specified with --alter of topics"),
    ({"entity_type": ("brokers",), "add_config": "a=1"}, "an entity-name or default entity"),
    ({"entity_type": ("users", "clients"), "add_config": "a=1"}, "an entity-name or default entity"),
    ({"entity_type": ("users", "clients"), "entity_name": ("u",), "add_config": "a=1"},
     "An entity name must be specified for every entity type"),
    ({"entity_type": ("topics",), "entity_name": ("t",)}, "At least one of --add-config"),
    ({"topic": "t", "add_config": "a=1", "add_config_file": "f"}, "Only one of --add-config"),
])
def test_alter_rules(kwargs: dict, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        ConfigCommandOptions(bootstrap_server=BOOTSTRAP, alter=True, **kwargs).check_args()


def test_actions_are_exclusive() -> None:
    with pytest.raises(click.UsageError, match="exactly one action"):
        ConfigCommandOptions(bootstrap_server=BOOTSTRAP, topic="t").check_args()
    with pytest.raises(click.UsageError, match="can't be used"):
        ConfigCommandOptions(bootstrap_server=BOOTSTRAP, describe=True, topic="t", add_config="a=1").check_args()


@pytest.mark.parametrize("kwargs", [
    {"describe": True, "entity_type": ("topics",)},
    {"describe": True, "entity_type": ("brokers",), "entity_name": ("0",), "all": True},
    {"alter": True, "entity_type": ("brokers",), "entity_default": True, "add_config": "a=1"},
    {"alter": True, "broker": "1", "delete_config": ("a",)},
    {"alter": True, "topic": "t", "add_config": "a=1", "delete_config": ("b",)},
])
def test_accepted_combinations(kwargs: dict) -> None:
    ConfigCommandOptions(bootstrap_server=BOOTSTRAP, **kwargs).check_args()


def test_cli_errors_are_one_line() -> None:
    result = CliRunner().invoke(main, ["--bootstrap-server", BOOTSTRAP, "--describe", "--entity-type",
                                       "broker-loggers"])
    assert result.exit_code == 1
    assert result.output == ("Invalid entity type broker-loggers, the entity type must be one of "
                             "topics,clients,users,brokers,ips with the --bootstrap-server argument\n")
