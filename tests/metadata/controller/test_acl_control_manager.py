"""AclControlManager, after Kafka 3.5's AclControlManagerTest: creation and deletion through
records, rollback of uncommitted ACLs with the timeline, snapshot records, and bad bindings."""
from __future__ import annotations

import uuid

import pytest

from kafka_py.metadata.authorizer.standard_acl import StandardAcl
from kafka_py.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_py.metadata.controller.acl_control_manager import AclControlManager
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.core.security.authorizer.acl import (
    ANY_BINDING_FILTER,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka_py.core.security.authorizer.authorizer import Action, AuthorizationResult, ServerContext

ALLOW = AclPermissionType.ALLOW


def binding(topic: str, principal: str = "User:alice", op: AclOperation = AclOperation.READ,
            pattern_type: PatternType = PatternType.LITERAL,
            resource_type: ResourceType = ResourceType.TOPIC) -> AclBinding:
    return AclBinding(ResourcePattern(resource_type, topic, pattern_type), AccessControlEntry(principal, "*", op, ALLOW))


def replay_all(manager: AclControlManager, result) -> None:
    for record in result.records:
        message = record.message
        if int(type(message).__api_key__) == MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD.value:
            manager.replay(message)
        else:
            manager.replay_remove(message)


def test_create_replay_delete_and_rollback():
    registry = SnapshotRegistry()
    manager = AclControlManager(registry)
    result = manager.create_acls([binding("orders"), binding("orders"), binding("pay", op=AclOperation.WRITE)])
    assert [r.exception for r in result.response] == [None, None, None]
    # the duplicate within the request is written once; nothing changes before replay
    assert len(result.records) == 2 and result.is_atomic
    assert manager.id_to_acl() == {}
    replay_all(manager, result)
    registry.get_or_create_snapshot(10)
    assert {a.resource_name for a in manager.id_to_acl().values()} == {"orders", "pay"}

    # an existing ACL is not written again
    again = manager.create_acls([binding("orders")])
    assert again.records == () and again.response[0].exception is None

    # uncommitted: a new ACL and the deletion of "orders"
    replay_all(manager, manager.create_acls([binding("refunds")]))
    deleted = manager.delete_acls([AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "orders",
                                                                          PatternType.LITERAL),
                                                    AccessControlEntryFilter(None, None, AclOperation.ANY,
                                                                             AclPermissionType.ANY))])
    assert [d.acl_binding for d in deleted.response[0].acl_binding_delete_results] == [binding("orders")]
    replay_all(manager, deleted)
    assert {a.resource_name for a in manager.id_to_acl().values()} == {"pay", "refunds"}
    # still readable as of the committed offset, and reverted to it
    assert {a.resource_name for a in manager.id_to_acl(10).values()} == {"orders", "pay"}
    registry.revert_to_snapshot(10)
    assert {a.resource_name for a in manager.id_to_acl().values()} == {"orders", "pay"}
    # after the revert "refunds" is new again, "orders" exists again
    assert len(manager.create_acls([binding("refunds"), binding("orders")]).records) == 1


def test_snapshot_records_rebuild_the_acls_and_the_authorizer():
    manager = AclControlManager(SnapshotRegistry())
    bindings = [binding(f"t{i}") for i in range(23)] + [binding("pre-", pattern_type=PatternType.PREFIXED)]
    replay_all(manager, manager.create_acls(bindings))
    batches = list(manager.iterator(LATEST_EPOCH))
    assert [len(b) for b in batches] == [10, 10, 4]
    other = AclControlManager(SnapshotRegistry())
    for batch in batches:
        for record in batch:
            other.replay(record.message)
    assert other.id_to_acl() == manager.id_to_acl()

    authorizer = StandardAuthorizer()
    authorizer.configure({"super.users": "User:admin"})
    authorizer.load_snapshot(other.id_to_acl())
    authorizer.complete_initial_load()
    alice = ServerContext(principal="User:alice")

    def allowed(context, name: str, op: AclOperation = AclOperation.READ) -> bool:
        action = Action(op, ResourcePattern(ResourceType.TOPIC, name, PatternType.LITERAL))
        return authorizer.authorize(context, [action])[0] is AuthorizationResult.ALLOWED

    assert allowed(alice, "t3") and allowed(alice, "pre-x") and allowed(alice, "t3", AclOperation.DESCRIBE)
    assert not allowed(alice, "t3", AclOperation.WRITE) and not allowed(alice, "other")
    assert not allowed(ServerContext(principal="User:bob"), "t3")
    assert allowed(ServerContext(principal="User:admin"), "other")
    # one removal by id
    acl_id = next(i for i, a in other.id_to_acl().items() if a.resource_name == "t3")
    authorizer.remove_acl(acl_id)
    assert not allowed(alice, "t3") and allowed(alice, "t4")
    assert len(list(authorizer.acls(ANY_BINDING_FILTER))) == 23


def test_invalid_bindings_and_filters_are_invalid_request_and_write_nothing():
    manager = AclControlManager(SnapshotRegistry())
    unknown_type = AclBinding(ResourcePattern(ResourceType.UNKNOWN, "t", PatternType.LITERAL),
                              AccessControlEntry("User:a", "*", AclOperation.READ, ALLOW))
    unknown_pattern = AclBinding(ResourcePattern(ResourceType.TOPIC, "t", PatternType.UNKNOWN),
                                 AccessControlEntry("User:a", "*", AclOperation.READ, ALLOW))
    unknown_op = AclBinding(ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL),
                            AccessControlEntry("User:a", "*", AclOperation.UNKNOWN, ALLOW))
    empty_name = binding("")
    result = manager.create_acls([unknown_type, unknown_pattern, unknown_op, empty_name])
    assert [r.exception.error_name for r in result.response] == ["INVALID_REQUEST"] * 4
    assert result.records == ()
    unknown_filter = AclBindingFilter(ResourcePatternFilter(ResourceType.UNKNOWN, None, PatternType.ANY),
                                      AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY))
    deleted = manager.delete_acls([unknown_filter])
    assert deleted.response[0].exception.error_name == "INVALID_REQUEST" and deleted.records == ()


def test_standard_acl_round_trips_through_its_record():
    acl = StandardAcl.from_acl_binding(binding("x", op=AclOperation.ALTER_CONFIGS, resource_type=ResourceType.GROUP))
    from kafka_py.metadata.authorizer.standard_acl import StandardAclWithId

    acl_id = uuid.uuid4()
    assert StandardAclWithId.from_record(StandardAclWithId(acl_id, acl).to_record()) == StandardAclWithId(acl_id, acl)


def test_quorum_controller_replicates_acls_and_reverts_uncommitted_ones():
    import time

    from kafka_py.clients.common.utils.time import MockTime
    from tests.metadata.controller.env import LocalLogManagerTestEnv, QuorumControllerTestEnv, result

    log_env = LocalLogManagerTestEnv(3)
    quorum = QuorumControllerTestEnv(log_env, time=MockTime())
    try:
        active = quorum.active_controller()
        created = result(active.create_acls(None, [binding("committed")]))
        assert [r.exception for r in created] == [None]
        # every standby replays the committed record
        deadline = time.monotonic() + 30
        standbys = [c for c in quorum.controllers if c is not active]
        while time.monotonic() < deadline and not all(
                {a.resource_name for a in c.acl_control.id_to_acl().values()} == {"committed"} for c in standbys):
            time.sleep(0.05)
        assert all({a.resource_name for a in c.acl_control.id_to_acl().values()} == {"committed"} for c in standbys)
        assert any(int(type(r.message).__api_key__) == MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD.value
                   for batch in active.snapshot_records() for r in batch)

        manager = log_env.log_managers[active.node_id()]
        manager.set_max_read_offset(log_env.shared.end_offset())
        manager.renounce(active.cur_claim_epoch())
        pending = active.create_acls(None, [binding("lost")])
        # applied in memory while it waits for a commit that never comes
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(active.acl_control.id_to_acl()) < 2:
            time.sleep(0.05)
        assert {a.resource_name for a in active.acl_control.id_to_acl().values()} == {"committed", "lost"}
        manager.set_max_read_offset(LATEST_EPOCH)
        with pytest.raises(Exception) as info:
            result(pending)
        assert getattr(info.value, "error_name", None) == "NOT_CONTROLLER"
        assert {a.resource_name for a in active.acl_control.id_to_acl().values()} == {"committed"}
        new_active = quorum.active_controller()
        assert {a.resource_name for a in new_active.acl_control.id_to_acl().values()} == {"committed"}
    finally:
        quorum.close()
        log_env.close()
