"""bin/kafka-acls.sh's options (kafka_py/core/admin/acl_command.py): what --producer and --consumer
stand for, Kafka's usage errors, and the tool run against ZooKeeper with --authorizer-properties
(through a broker it is exercised by tests/security/test_authorization.py)."""
from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner

from kafka_py.core.security.authorizer.acl import PatternType
from kafka_py.core.admin import acl_command
from kafka_py.core.admin.acl_command import AclCommandOptions, get_resource_filter_to_acls


def options(**values) -> AclCommandOptions:
    defaults = {"resource_pattern_type": PatternType.LITERAL}
    return AclCommandOptions({**defaults, **values})


def summary(opts: AclCommandOptions) -> dict:
    return {(f.resource_type.name, f.name, f.pattern_type.name):
            sorted((a.principal, a.host, a.operation.name, a.permission_type.name) for a in acls)
            for f, acls in get_resource_filter_to_acls(opts).items()}


def test_producer_and_consumer_shortcuts() -> None:
    assert summary(options(producer=True, topic=("t",), transactional_id=("tx",), idempotent=True,
                           allow_principal=("User:alice",))) == {
        ("TOPIC", "t", "LITERAL"): [("User:alice", "*", op, "ALLOW") for op in ("CREATE", "DESCRIBE", "WRITE")],
        ("TRANSACTIONAL_ID", "tx", "LITERAL"): [("User:alice", "*", op, "ALLOW") for op in ("DESCRIBE", "WRITE")],
        ("CLUSTER", "kafka-cluster", "LITERAL"): [("User:alice", "*", "IDEMPOTENT_WRITE", "ALLOW")],
    }
    assert summary(options(consumer=True, topic=("p-",), group=("g",), allow_principal=("User:bob",),
                           allow_host=("10.0.0.1",), resource_pattern_type=PatternType.PREFIXED)) == {
        ("TOPIC", "p-", "PREFIXED"): [("User:bob", "10.0.0.1", "DESCRIBE", "ALLOW"),
                                      ("User:bob", "10.0.0.1", "READ", "ALLOW")],
        ("GROUP", "g", "PREFIXED"): [("User:bob", "10.0.0.1", "READ", "ALLOW")],
    }
    both = summary(options(consumer=True, producer=True, topic=("t",), group=("g",),
                           allow_principal=("User:c",)))
    assert [op for _, _, op, _ in both[("TOPIC", "t", "LITERAL")]] == ["CREATE", "DESCRIBE", "READ", "WRITE"]


def test_operations_allow_and_deny() -> None:
    assert summary(options(topic=("t",), operation=("Read", "describe"), allow_principal=("User:a",),
                           deny_principal=("User:b",), deny_host=("1.2.3.4",))) == {
        ("TOPIC", "t", "LITERAL"): [("User:a", "*", "DESCRIBE", "ALLOW"), ("User:a", "*", "READ", "ALLOW"),
                                    ("User:b", "1.2.3.4", "DESCRIBE", "DENY"), ("User:b", "1.2.3.4", "READ", "DENY")]}
    # the default operation is All
    assert summary(options(cluster=True, allow_principal=("User:a",))) == {
        ("CLUSTER", "kafka-cluster", "LITERAL"): [("User:a", "*", "ALL", "ALLOW")]}


@pytest.mark.parametrize("args, message", [
    (["--list"], "authorizer-properties"),
    (["--bootstrap-server", "h:1", "--list", "--add"], "exactly one action"),
    (["--bootstrap-server", "h:1", "--list", "--producer", "--topic", "t"], "can't be used with"),
    (["--bootstrap-server", "h:1", "--add", "--producer", "--operation", "Read", "--topic", "t"], "can't be used"),
    (["--bootstrap-server", "h:1", "--add", "--producer", "--allow-principal", "User:a"], "you must specify a --topic"),
    (["--bootstrap-server", "h:1", "--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"],
     "--group"),
    (["--bootstrap-server", "h:1", "--add", "--idempotent", "--topic", "t"], "only available if --producer"),
    (["--bootstrap-server", "h:1", "--add", "--topic", "t"], "--allow-principal, --deny-principal"),
    (["--bootstrap-server", "h:1", "--add", "--topic", "t", "--allow-principal", "User:a",
      "--resource-pattern-type", "match"], "not valid when adding"),
    (["--bootstrap-server", "h:1", "--add", "--group", "g", "--allow-principal", "User:a", "--operation",
      "Write"], "only supports operations"),
    (["--bootstrap-server", "h:1", "--add", "--allow-principal", "User:a"], "at least one resource"),
    (["--bootstrap-server", "h:1", "--list", "--resource-pattern-type", "wild"], "Unknown resource-pattern-type"),
    (["--bootstrap-server", "h:1", "--authorizer", "x", "--list"], "Only one of"),
])
def test_usage_errors(args, message) -> None:
    result = CliRunner().invoke(acl_command.main, args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_invalid_principal_is_an_error() -> None:
    result = CliRunner().invoke(acl_command.main, ["--bootstrap-server", "127.0.0.1:1", "--add", "--topic", "t",
                                                   "--allow-principal", "alice"])
    assert result.exit_code == 1
    assert "Error while executing ACL command: expected a string in format principalType:principalName" in \
        result.output


def test_add_list_remove_through_zookeeper(zookeeper) -> None:
    connect = f"{zookeeper.connect_string}/acl-command-{uuid.uuid4().hex[:8]}"
    base = ["--authorizer-properties", f"zookeeper.connect={connect}"]
    runner = CliRunner()
    added = runner.invoke(acl_command.main, base + ["--add", "--allow-principal", "User:alice", "--operation",
                                                    "Write", "--topic", "orders"])
    assert added.exit_code == 0, added.output
    assert ("Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: \n"
            " \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n") in added.output
    assert "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders" in added.output
    listed = runner.invoke(acl_command.main, base + ["--list", "--principal", "User:alice"])
    assert "ACLs for principal `User:alice`" in listed.output and "name=orders" in listed.output
    # nothing removed without confirmation
    kept = runner.invoke(acl_command.main, base + ["--remove", "--topic", "orders"], input="n\n")
    assert "Are you sure you want to delete all ACLs for resource filter" in kept.output
    assert "name=orders" in runner.invoke(acl_command.main, base + ["--list", "--topic", "orders"]).output
    removed = runner.invoke(acl_command.main, base + ["--remove", "--topic", "orders"], input="y\n")
    assert removed.exit_code == 0, removed.output
    assert "name=orders" not in runner.invoke(acl_command.main, base + ["--list"]).output
