"""The AclAuthorizer's rules (kafka_py/core/security/authorizer): matching without ZooKeeper through the
cache the brokers keep, then ACLs written to and read back from a real ZooKeeper by two
authorizers (two brokers' caches), with Kafka's znode paths and JSON."""
from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient

from kafka_py.core.security.authorizer import acl_entry, create_authorizer
from kafka_py.core.security.authorizer.acl import (
    ANY_BINDING_FILTER,
    ANY_ENTRY_FILTER,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation as Op,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka_py.core.security.authorizer.acl_authorizer import AclAuthorizer, VersionedAcls
from kafka_py.core.security.authorizer.authorizer import Action, AuthorizationResult, ServerContext
from kafka_py.server.auth_helper import AuthHelper, to_32_bit_field
from kafka_py.server.kafka_config import ConfigException
from kafka_py.core.zk.zk_data import EXTENDED_ACL_CHANGE_STORE, LITERAL_ACL_CHANGE_STORE, ResourceZNode
from tests.integration.broker_harness import wait_until

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED


def ace(principal: str, op: Op, permission: AclPermissionType = ALLOW, host: str = "*") -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, permission)


class Cache:
    """An AclAuthorizer fed through update_cache, as the broker's change notifications feed it."""

    def __init__(self, super_users: frozenset[str] = frozenset(), allow_everyone: bool = False) -> None:
        self.authorizer = AclAuthorizer()
        self.authorizer.super_users = super_users
        self.authorizer.should_allow_everyone_if_no_acl_is_found = allow_everyone

    def put(self, resource_type: ResourceType, name: str, pattern_type: PatternType,
            *entries: AccessControlEntry) -> None:
        self.authorizer.update_cache(ResourcePattern(resource_type, name, pattern_type),
                                     VersionedAcls(frozenset(entries), 0 if entries else -2))

    def allowed(self, principal: str, op: Op, name: str, resource_type: ResourceType = TOPIC,
                host: str = "10.0.0.1") -> bool:
        context = ServerContext(principal=principal, client_address=host)
        action = Action(op, ResourcePattern(resource_type, name, LITERAL))
        return self.authorizer.authorize(context, [action])[0] is AuthorizationResult.ALLOWED

    def by_type(self, principal: str, op: Op, resource_type: ResourceType = TOPIC, host: str = "10.0.0.1") -> bool:
        context = ServerContext(principal=principal, client_address=host)
        return self.authorizer.authorize_by_resource_type(context, op, resource_type) is AuthorizationResult.ALLOWED


# ---------------------------------------------------------------------------- matching


def test_no_acls_follows_allow_everyone_if_no_acl_found() -> None:
    assert not Cache().allowed("User:alice", Op.READ, "t")
    assert Cache(allow_everyone=True).allowed("User:alice", Op.READ, "t")
    cache = Cache(allow_everyone=True)
    cache.put(TOPIC, "t", LITERAL, ace("User:bob", Op.READ))
    # an ACL on the resource takes away the default, for everyone else
    assert not cache.allowed("User:alice", Op.READ, "t")
    assert cache.allowed("User:alice", Op.READ, "other")


def test_literal_wildcard_and_prefixed_patterns() -> None:
    cache = Cache()
    cache.put(TOPIC, "orders", LITERAL, ace("User:alice", Op.WRITE))
    cache.put(TOPIC, "*", LITERAL, ace("User:bob", Op.READ))
    cache.put(TOPIC, "pay-", PREFIXED, ace("User:carol", Op.READ))
    cache.put(TOPIC, "p", PREFIXED, ace("User:dave", Op.READ))
    assert cache.allowed("User:alice", Op.WRITE, "orders")
    assert not cache.allowed("User:alice", Op.WRITE, "orders2")
    assert cache.allowed("User:bob", Op.READ, "orders") and cache.allowed("User:bob", Op.READ, "anything")
    assert not cache.allowed("User:bob", Op.READ, "x", resource_type=GROUP)
    assert cache.allowed("User:carol", Op.READ, "pay-eu") and cache.allowed("User:carol", Op.READ, "pay-")
    assert not cache.allowed("User:carol", Op.READ, "payroll") and not cache.allowed("User:carol", Op.READ, "pa")
    assert cache.allowed("User:dave", Op.READ, "payroll") and not cache.allowed("User:dave", Op.READ, "orders")
    # a prefixed pattern does not match the prefix of a longer pattern's name ("pay-" is not "pay-*")
    cache.put(TOPIC, "pay-", PREFIXED)
    assert not cache.allowed("User:carol", Op.READ, "pay-eu")


def test_deny_wins_over_any_allow() -> None:
    cache = Cache()
    cache.put(TOPIC, "*", LITERAL, ace("User:*", Op.ALL))
    cache.put(TOPIC, "secret", LITERAL, ace("User:alice", Op.READ, DENY))
    cache.put(TOPIC, "internal-", PREFIXED, ace("User:*", Op.WRITE, DENY))
    assert cache.allowed("User:alice", Op.READ, "public")
    assert not cache.allowed("User:alice", Op.READ, "secret")
    assert cache.allowed("User:bob", Op.READ, "secret")
    assert cache.allowed("User:alice", Op.WRITE, "secret")
    assert not cache.allowed("User:bob", Op.WRITE, "internal-x") and cache.allowed("User:bob", Op.READ, "internal-x")
    # a deny of All denies every operation
    cache.put(TOPIC, "locked", LITERAL, ace("User:alice", Op.ALL, DENY), ace("User:alice", Op.READ))
    assert not cache.allowed("User:alice", Op.READ, "locked") and not cache.allowed("User:alice", Op.DESCRIBE, "locked")


def test_implied_operations() -> None:
    cache = Cache()
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        cache.put(TOPIC, f"t-{op.name}", LITERAL, ace("User:alice", op))
        assert cache.allowed("User:alice", Op.DESCRIBE, f"t-{op.name}"), op
    cache.put(TOPIC, "t-create", LITERAL, ace("User:alice", Op.CREATE))
    assert not cache.allowed("User:alice", Op.DESCRIBE, "t-create")
    cache.put(TOPIC, "c", LITERAL, ace("User:alice", Op.ALTER_CONFIGS))
    assert cache.allowed("User:alice", Op.DESCRIBE_CONFIGS, "c") and not cache.allowed("User:alice", Op.DESCRIBE, "c")
    # Read does not imply Write, and an implied Describe is still refused by a Describe deny
    assert not cache.allowed("User:alice", Op.WRITE, "t-READ")
    cache.put(TOPIC, "t-READ", LITERAL, ace("User:alice", Op.READ), ace("User:alice", Op.DESCRIBE, DENY))
    assert not cache.allowed("User:alice", Op.DESCRIBE, "t-READ") and cache.allowed("User:alice", Op.READ, "t-READ")


def test_hosts_and_principals() -> None:
    cache = Cache()
    cache.put(TOPIC, "t", LITERAL, ace("User:alice", Op.READ, host="10.0.0.1"),
              ace("User:bob", Op.READ, host="0:0:0:0:0:0:0:1"), ace("User:bob", Op.READ, DENY, host="::ffff:10.0.0.9"))
    assert cache.allowed("User:alice", Op.READ, "t", host="10.0.0.1")
    assert not cache.allowed("User:alice", Op.READ, "t", host="10.0.0.2")
    # Java's full IPv6 form and Python's compressed one name the same address
    assert cache.allowed("User:bob", Op.READ, "t", host="::1")
    cache.put(TOPIC, "u", LITERAL, ace("User:bob", Op.READ), ace("User:bob", Op.READ, DENY, host="::ffff:10.0.0.9"))
    assert not cache.allowed("User:bob", Op.READ, "u", host="10.0.0.9") and cache.allowed("User:bob", Op.READ, "u")
    # principals compare by type and name
    assert not cache.allowed("Group:alice", Op.READ, "t", host="10.0.0.1")
    assert not cache.allowed("User:Alice", Op.READ, "t", host="10.0.0.1")


def test_super_users_are_allowed_everything() -> None:
    cache = Cache(super_users=frozenset({"User:admin"}))
    cache.put(TOPIC, "*", LITERAL, ace("User:*", Op.ALL, DENY))
    assert cache.allowed("User:admin", Op.DELETE, "t") and cache.allowed("User:admin", Op.CLUSTER_ACTION,
                                                                         "kafka-cluster", CLUSTER)
    assert not cache.allowed("User:alice", Op.READ, "t")
    assert cache.by_type("User:admin", Op.WRITE)


def test_only_literal_resources_are_authorized() -> None:
    with pytest.raises(ValueError, match="Only literal"):
        AclAuthorizer().authorize(ServerContext(), [Action(Op.READ, ResourcePattern(TOPIC, "t", PREFIXED))])


def test_authorize_by_resource_type() -> None:
    cache = Cache()
    assert not cache.by_type("User:alice", Op.WRITE)
    cache.put(TOPIC, "a-", PREFIXED, ace("User:alice", Op.WRITE))
    assert cache.by_type("User:alice", Op.WRITE) and not cache.by_type("User:alice", Op.READ)
    assert not cache.by_type("User:alice", Op.WRITE, GROUP)
    # a deny covering the only allowed prefix
    cache.put(TOPIC, "a", PREFIXED, ace("User:alice", Op.WRITE, DENY))
    assert not cache.by_type("User:alice", Op.WRITE)
    cache.put(TOPIC, "b", LITERAL, ace("User:*", Op.ALL))
    assert cache.by_type("User:alice", Op.WRITE)
    cache.put(TOPIC, "*", LITERAL, ace("User:alice", Op.WRITE, DENY))
    assert not cache.by_type("User:alice", Op.WRITE)
    with pytest.raises(ValueError):
        cache.by_type("User:alice", Op.ANY)


def test_acls_listing_filters() -> None:
    cache = Cache()
    cache.put(TOPIC, "orders", LITERAL, ace("User:alice", Op.READ))
    cache.put(TOPIC, "ord", PREFIXED, ace("User:bob", Op.WRITE))
    cache.put(TOPIC, "*", LITERAL, ace("User:carol", Op.DESCRIBE))
    cache.put(GROUP, "g", LITERAL, ace("User:alice", Op.READ))

    def names(pattern_filter: ResourcePatternFilter, entry_filter=ANY_ENTRY_FILTER) -> set[str]:
        return {f"{b.pattern.name}/{b.pattern.pattern_type.name}/{b.entry.principal}"
                for b in cache.authorizer.acls(AclBindingFilter(pattern_filter, entry_filter))}

    assert len(cache.authorizer.acls(ANY_BINDING_FILTER)) == 4
    assert names(ResourcePatternFilter(TOPIC, "orders", PatternType.MATCH)) == {
        "orders/LITERAL/User:alice", "ord/PREFIXED/User:bob", "*/LITERAL/User:carol"}
    assert names(ResourcePatternFilter(TOPIC, "orders", PatternType.ANY)) == {"orders/LITERAL/User:alice"}
    assert names(ResourcePatternFilter(TOPIC, "ord", PREFIXED)) == {"ord/PREFIXED/User:bob"}
    assert names(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
                 AccessControlEntryFilter("User:alice", None, Op.ANY, AclPermissionType.ANY)) == {
        "orders/LITERAL/User:alice", "g/LITERAL/User:alice"}


def test_binding_values_refuse_any() -> None:
    with pytest.raises(ValueError):
        ResourcePattern(ResourceType.ANY, "t", LITERAL)
    with pytest.raises(ValueError):
        ResourcePattern(TOPIC, "t", PatternType.MATCH)
    with pytest.raises(ValueError):
        AccessControlEntry("User:a", "*", Op.ANY, ALLOW)
    with pytest.raises(ValueError):
        AccessControlEntry("User:a", "*", Op.READ, AclPermissionType.ANY)
    assert AclBinding(ResourcePattern(ResourceType.UNKNOWN, "t", LITERAL), ace("User:a", Op.READ)).is_unknown


def test_authorized_operations_bit_fields() -> None:
    cache = Cache()
    cache.put(TOPIC, "t", LITERAL, ace("User:alice", Op.READ))
    helper = AuthHelper(cache.authorizer)

    class Request:
        context = ServerContext(principal="User:alice", client_address="10.0.0.1")

    assert helper.authorized_operations(Request, TOPIC, "t") == (1 << Op.READ.code) | (1 << Op.DESCRIBE.code)
    assert AuthHelper(None).authorized_operations(Request, ResourceType.GROUP, "g") == 0b101001000
    assert to_32_bit_field([31]) == -(2**31)
    assert helper.filter_by_authorized(Request.context, Op.READ, TOPIC, ["t", "u", "t"]) == {"t"}
    assert AuthHelper(None).filter_by_authorized(Request.context, Op.READ, TOPIC, ["t", "u"]) == {"t", "u"}


# ---------------------------------------------------------------------------- ZooKeeper data


def test_znode_json_and_change_events_are_kafkas() -> None:
    entries = [ace("User:alice", Op.DESCRIBE_CONFIGS)]
    data = ResourceZNode.encode(entries)
    assert data == (b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow",'
                    b'"operation":"DescribeConfigs","host":"*"}]}')
    assert acl_entry.from_bytes(data) == frozenset(entries)
    # as Kafka reads names: Pascal case, or any case without the underscores
    assert acl_entry.from_bytes(b'{"version":1,"acls":[{"principal":"User:b","permissionType":"deny",'
                                b'"operation":"idempotentWrite","host":"h"}]}') == {
        ace("User:b", Op.IDEMPOTENT_WRITE, DENY, "h")}
    assert Op.from_name("IDEMPOTENT_WRITE") is Op.UNKNOWN
    with pytest.raises(ValueError):
        acl_entry.from_bytes(b'{"version":2,"acls":[]}')
    literal = ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx:1", LITERAL)
    prefixed = ResourcePattern(GROUP, "g-", PREFIXED)
    assert ResourceZNode.path(literal) == "/kafka-acl/TransactionalId/tx:1"
    assert ResourceZNode.path(prefixed) == "/kafka-acl-extended/prefixed/Group/g-"
    assert LITERAL_ACL_CHANGE_STORE.encode(literal) == b"TRANSACTIONAL_ID:tx:1"
    assert LITERAL_ACL_CHANGE_STORE.decode(b"TRANSACTIONAL_ID:tx:1") == literal
    assert EXTENDED_ACL_CHANGE_STORE.encode(prefixed) == (
        b'{"version":1,"resourceType":"GROUP","name":"g-","patternType":"PREFIXED"}')
    assert EXTENDED_ACL_CHANGE_STORE.decode(EXTENDED_ACL_CHANGE_STORE.encode(prefixed)) == prefixed
    for bad in (b"no separator", b"{}", b'{"version":9}'):
        with pytest.raises(ValueError):
            (LITERAL_ACL_CHANGE_STORE if bad == b"no separator" else EXTENDED_ACL_CHANGE_STORE).decode(bad)


@pytest.fixture
def zk_connect(zookeeper):
    return f"{zookeeper.connect_string}/acl-test-{uuid.uuid4().hex[:8]}"


def _configured(zk_connect: str, **extra: str) -> AclAuthorizer:
    authorizer = create_authorizer("kafka.security.authorizer.AclAuthorizer")
    authorizer.configure({"zookeeper.connect": zk_connect, "zookeeper.session.timeout.ms": "6000", **extra})
    return authorizer


def test_two_brokers_caches_follow_zookeeper(zk_connect, zookeeper) -> None:
    first, second = _configured(zk_connect), _configured(zk_connect, **{"super.users": "User:root"})
    try:
        topic = ResourcePattern(TOPIC, "orders", LITERAL)
        prefix = ResourcePattern(TOPIC, "pay-", PREFIXED)
        results = first.create_acls(None, [AclBinding(topic, ace("User:alice", Op.READ)),
                                           AclBinding(prefix, ace("User:bob", Op.WRITE)),
                                           AclBinding(topic, ace("alice-without-type", Op.READ))])
        assert [r.exception is None for r in results] == [False, True, False]
        # the invalid principal fails its resource's write: neither entry of "orders" is stored
        assert type(results[0].exception).__name__ == "ApiException"
        first.create_acls(None, [AclBinding(topic, ace("User:alice", Op.READ))])

        def sees(authorizer: AclAuthorizer, principal: str, op: Op, name: str) -> bool:
            context = ServerContext(principal=principal, client_address="10.1.1.1")
            return authorizer.authorize(context, [Action(op, ResourcePattern(TOPIC, name, LITERAL))])[0] \
                is AuthorizationResult.ALLOWED

        wait_until(lambda: sees(second, "User:alice", Op.READ, "orders") and sees(second, "User:bob", Op.WRITE,
                                                                                  "pay-1"),
                   15, "the second cache sees both ACLs")
        assert sees(second, "User:root", Op.ALTER, "anything") and not sees(first, "User:root", Op.ALTER, "x")

        kazoo = KazooClient(hosts=zk_connect)
        kazoo.start(timeout=15)
        try:
            data, _ = kazoo.get("/kafka-acl/Topic/orders")
            assert acl_entry.from_bytes(data) == {ace("User:alice", Op.READ)}
            assert kazoo.exists("/kafka-acl-extended/prefixed/Topic/pay-")
            assert kazoo.get_children("/kafka-acl-changes") and kazoo.get_children("/kafka-acl-extended-changes")
            assert set(kazoo.get_children("/kafka-acl")) >= {"Topic", "Group", "Cluster", "TransactionalId",
                                                           "DelegationToken"}
        finally:
            kazoo.stop()

        # a delete through the second broker reaches the first
        deleted = second.delete_acls(None, [AclBindingFilter(ResourcePatternFilter(TOPIC, "orders",
                                                                                   PatternType.MATCH),
                                                             ANY_ENTRY_FILTER)])
        assert [d.acl_binding.entry.principal for d in deleted[0].acl_binding_delete_results] == ["User:alice"]
        wait_until(lambda: not sees(first, "User:alice", Op.READ, "orders"), 15, "the first cache drops it")
        assert sees(first, "User:bob", Op.WRITE, "pay-x")
        # a third cache starting now loads what is left
        third = _configured(zk_connect)
        try:
            assert {(b.pattern, b.entry.principal) for b in third.acls(ANY_BINDING_FILTER)} == {(prefix, "User:bob")}
        finally:
            third.close()
    finally:
        first.close()
        second.close()


def test_bad_configs_name_their_key(zk_connect) -> None:
    with pytest.raises(ConfigException) as info:
        _configured(zk_connect, **{"super.users": "User:ok;nocolon"})
    assert info.value.name == "super.users"
    with pytest.raises(ConfigException) as info:
        _configured(zk_connect, **{"allow.everyone.if.no.acl.found": "maybe"})
    assert info.value.name == "allow.everyone.if.no.acl.found"
    with pytest.raises(ValueError, match="not available"):
        create_authorizer("com.example.Other")
