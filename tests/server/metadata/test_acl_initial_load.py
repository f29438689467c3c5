"""A KRaft node's StandardAuthorizer before it has read the metadata log up to its high
watermark (Kafka 3.5's initial load): super users only, everyone else AuthorizerNotReady, and
the listeners that are not early-start wait for it. Then the MetadataLoader that says when the
node has caught up, control batches included."""
from __future__ import annotations

import concurrent.futures
import time
import uuid

import pytest

from kafka_py.core.cluster.broker import Broker, EndPoint, ListenerName, SecurityProtocol
from kafka_py.clients.common.errors import AuthorizerNotReadyException
from kafka_py.metadata.authorizer.standard_acl import StandardAcl, StandardAclWithId
from kafka_py.metadata.authorizer.standard_authorizer import StandardAuthorizer
from kafka_py.metadata.records.access_control_entry_record.v0 import AccessControlEntryRecord
from kafka_py.core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafka_py.core.security.authorizer.authorizer import Action, AuthorizationResult, ServerContext
from kafka_py.server.metadata.acl_publisher import AclPublisher
from kafka_py.server.metadata.metadata_loader import MetadataLoader
from kafka_py.clients.common.utils.time import Time
from kafka_py.core.zk.zk_data import BrokerInfo

ALICE = ServerContext(principal="User:alice")
ADMIN = ServerContext(principal="User:admin")


def _authorizer(**configs: str) -> StandardAuthorizer:
    authorizer = StandardAuthorizer()
    authorizer.configure({"super.users": "User:admin", "controller.listener.names": "CONTROLLER", **configs})
    return authorizer


def _deny_alice_on(topic: str) -> tuple[uuid.UUID, StandardAcl]:
    binding = AclBinding(ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                         AccessControlEntry("User:alice", "*", AclOperation.ALL, AclPermissionType.DENY))
    return uuid.uuid4(), StandardAcl.from_acl_binding(binding)


def _read(authorizer: StandardAuthorizer, context: ServerContext, topic: str) -> AuthorizationResult:
    action = Action(AclOperation.READ, ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL))
    return authorizer.authorize(context, [action])[0]


def test_before_the_initial_load_only_super_users_are_answered():
    # allow.everyone.if.no.acl.found would let alice read a topic whose Deny is not loaded yet
    authorizer = _authorizer(**{"allow.everyone.if.no.acl.found": "true"})
    assert _read(authorizer, ADMIN, "payments") is AuthorizationResult.ALLOWED
    with pytest.raises(AuthorizerNotReadyException):
        _read(authorizer, ALICE, "payments")
    with pytest.raises(AuthorizerNotReadyException):
        authorizer.authorized_literal_names(ALICE, AclOperation.READ, ResourceType.TOPIC, {"payments": 1})
    with pytest.raises(AuthorizerNotReadyException):
        authorizer.authorize_by_resource_type(ALICE, AclOperation.READ, ResourceType.TOPIC)
    assert authorizer.authorize_by_resource_type(ADMIN, AclOperation.WRITE, ResourceType.TOPIC) \
        is AuthorizationResult.ALLOWED

    authorizer.add_acl(*_deny_alice_on("payments"))
    authorizer.complete_initial_load()
    assert authorizer.loading_complete
    assert _read(authorizer, ALICE, "payments") is AuthorizationResult.DENIED
    assert _read(authorizer, ALICE, "orders") is AuthorizationResult.ALLOWED
    assert authorizer.authorized_literal_names(ALICE, AclOperation.READ, ResourceType.TOPIC,
                                               {"payments": 1, "orders": 1}) == {"orders"}


def _broker_info(*names: str) -> BrokerInfo:
    end_points = tuple(EndPoint("127.0.0.1", 9092 + i, ListenerName(name), SecurityProtocol.PLAINTEXT)
                       for i, name in enumerate(names))
    return BrokerInfo(Broker(1, end_points), BrokerInfo.CURRENT_VERSION)


def test_start_holds_back_all_but_the_early_start_listeners():
    authorizer = _authorizer(**{"early.start.listeners": "REPLICATION"})
    futures = {e.listener_name.value: f for e, f in authorizer.start(_broker_info("CLIENTS", "REPLICATION")).items()}
    assert futures["REPLICATION"].done()
    assert not futures["CLIENTS"].done()
    authorizer.complete_initial_load()
    assert futures["CLIENTS"].result(timeout=0) is None

    # by default the controller listeners start early; a close before the load fails the rest
    closed = _authorizer()
    futures = {e.listener_name.value: f for e, f in closed.start(_broker_info("CONTROLLER", "CLIENTS")).items()}
    assert futures["CONTROLLER"].done() and not futures["CLIENTS"].done()
    closed.close()
    with pytest.raises(concurrent.futures.TimeoutError):
        futures["CLIENTS"].result(timeout=0)
    with pytest.raises(AuthorizerNotReadyException):
        _read(closed, ALICE, "orders")


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.01)


def _acl_record(topic: str) -> AccessControlEntryRecord:
    return StandardAclWithId(*_deny_alice_on(topic)).to_record()


def test_the_loader_completes_the_load_when_the_log_read_reaches_the_high_watermark():
    authorizer = _authorizer()
    high_watermark = [None]
    loader = MetadataLoader(1, Time.SYSTEM, [AclPublisher("controller", 1, authorizer)],
                            high_watermark=lambda: high_watermark[0])
    try:
        # no high watermark known yet (no leader): not caught up, whatever was read
        loader.handle_commits(0, [_acl_record("payments")])
        loader.handle_commits_read_to(0)
        # commits up to offset 4 with a control batch (a LeaderChange) at 5 after them
        high_watermark[0] = 6
        loader.handle_commits(4, [_acl_record("orders")])
        loader.handle_commits_read_to(4)
        _wait_for(lambda: loader.last_offset == 4, "the commits were not published")
        assert not loader.caught_up and not authorizer.loading_complete
        with pytest.raises(AuthorizerNotReadyException):
            _read(authorizer, ALICE, "other")
        # the read goes past the control batch: caught up, with both ACLs in place
        loader.handle_commits_read_to(5)
        _wait_for(lambda: authorizer.loading_complete, "the initial load never completed")
        assert loader.caught_up
        assert _read(authorizer, ALICE, "payments") is AuthorizationResult.DENIED
        assert _read(authorizer, ALICE, "orders") is AuthorizationResult.DENIED
    finally:
        loader.close()
