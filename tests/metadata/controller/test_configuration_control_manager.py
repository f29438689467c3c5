"""ConfigurationControlManager, after Kafka's ConfigurationControlManagerTest: the records
of incremental and legacy changes, list APPEND/SUBTRACT with defaults, resource checks,
validation, and reads as of a snapshot."""
from __future__ import annotations

from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.metadata.controller.configuration_control_manager import (
    ConfigResource,
    ConfigurationControlManager,
)
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import AlterConfigOpType as Op, ConfigResourceType as T

FOO = ConfigResource(T.TOPIC, "foo")
BROKER0 = ConfigResource(T.BROKER, "0")


def new_manager(**kwargs):
    registry = SnapshotRegistry()
    return registry, ConfigurationControlManager(registry, {T.TOPIC: LOG_CONFIG_DEF}, **kwargs)


def apply(manager, result):
    for record in result.records:
        manager.replay(record.message)
    return result.response


def test_incremental_set_delete_append_subtract():
    _, manager = new_manager()
    response = apply(manager, manager.incremental_alter_configs({FOO: {
        "retention.ms": (Op.SET, "100"),
        "cleanup.policy": (Op.APPEND, "compact"),
    }}))
    assert response[FOO].is_success()
    # cleanup.policy's default is "delete", so APPEND adds to it
    assert manager.get_configs(FOO) == {"retention.ms": "100", "cleanup.policy": "delete,compact"}
    apply(manager, manager.incremental_alter_configs({FOO: {
        "cleanup.policy": (Op.SUBTRACT, "delete"), "retention.ms": (Op.DELETE, None)}}))
    assert manager.get_configs(FOO) == {"cleanup.policy": "compact"}
    unchanged = manager.incremental_alter_configs({FOO: {"cleanup.policy": (Op.SET, "compact")}})
    assert unchanged.records == () and unchanged.response[FOO].is_success()


def test_incremental_errors_change_nothing():
    _, manager = new_manager()
    cases = {
        FOO: {"retention.ms": (Op.APPEND, "1")},                       # not a list
        ConfigResource(T.TOPIC, "bad/name"): {"retention.ms": (Op.SET, "1")},
        ConfigResource(T.BROKER, "-1"): {"x": (Op.SET, "1")},
        ConfigResource(T.BROKER, "abc"): {"x": (Op.SET, "1")},
        ConfigResource(T.BROKER_LOGGER, "0"): {"x": (Op.SET, "1")},
        ConfigResource(T.TOPIC, "bar"): {"retention.ms": (Op.DELETE, "1")},
        ConfigResource(T.TOPIC, "baz"): {"retention.ms": (Op.SET, "forever")},
        ConfigResource(T.TOPIC, "qux"): {"no.such.key": (Op.SET, "1")},
    }
    result = manager.incremental_alter_configs(cases)
    assert result.records == ()
    errors = {r: e.error for r, e in result.response.items()}
    assert errors[FOO] is Errors.INVALID_CONFIG
    assert errors[ConfigResource(T.TOPIC, "baz")] is Errors.INVALID_CONFIG
    assert errors[ConfigResource(T.TOPIC, "qux")] is Errors.INVALID_CONFIG
    for resource in cases:
        if resource.name not in ("foo", "baz", "qux"):
            assert errors[resource] is Errors.INVALID_REQUEST


def test_one_bad_key_fails_the_whole_resource():
    _, manager = new_manager()
    result = manager.incremental_alter_configs({FOO: {"retention.ms": (Op.SET, "5"),
                                                      "segment.bytes": (Op.SET, "x")}})
    assert result.records == () and result.response[FOO].error is Errors.INVALID_CONFIG


def test_legacy_replaces_the_whole_set():
    _, manager = new_manager()
    apply(manager, manager.legacy_alter_configs({BROKER0: {"a": "1", "b": "2"}}))
    apply(manager, manager.legacy_alter_configs({BROKER0: {"b": "3"}}))
    assert manager.get_configs(BROKER0) == {"b": "3"}


def test_validator_hook_and_describe_at_an_epoch():
    seen = []

    def validator(resource, configs):
        seen.append((resource, dict(configs)))
        if configs.get("forbidden"):
            raise ValueError("forbidden is forbidden")

    registry, manager = new_manager(validator=validator)
    apply(manager, manager.incremental_alter_configs({BROKER0: {"a": (Op.SET, "1")}}))
    registry.create_snapshot(1)
    response = apply(manager, manager.incremental_alter_configs(
        {BROKER0: {"forbidden": (Op.SET, "yes")}}))
    assert response[BROKER0].error is Errors.INVALID_CONFIG
    assert seen[-1] == (BROKER0, {"a": "1", "forbidden": "yes"})
    apply(manager, manager.incremental_alter_configs({BROKER0: {"b": (Op.SET, "2")}}))
    described = manager.describe_configs(1, {BROKER0: (), ConfigResource(T.UNKNOWN, "x"): ()})
    assert described[BROKER0].result == {"a": "1"}
    assert described[ConfigResource(T.UNKNOWN, "x")].error.error is Errors.INVALID_REQUEST
    assert manager.get_configs(BROKER0) == {"a": "1", "b": "2"}


def test_unclean_leader_election_lookup():
    _, manager = new_manager()
    assert not manager.unclean_leader_election_enabled_for_topic("foo")
    apply(manager, manager.incremental_alter_configs({ConfigResource(T.BROKER, ""): {
        "unclean.leader.election.enable": (Op.SET, "true")}}))
    assert manager.unclean_leader_election_enabled_for_topic("foo")
    apply(manager, manager.incremental_alter_configs({FOO: {
        "unclean.leader.election.enable": (Op.SET, "false")}}))
    assert not manager.unclean_leader_election_enabled_for_topic("foo")
