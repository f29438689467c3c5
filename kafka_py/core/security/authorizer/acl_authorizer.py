"""Port of core/src/main/scala/kafka/security/authorizer/AclAuthorizer.scala (Kafka 2.8.2): the
authorizer that keeps ACLs in ZooKeeper.

Storage. Each resource pattern's entries are one znode (kafka_py.core.zk.zk_data, ``ZkAclStore``):
``/kafka-acl/<ResourceType>/<name>`` for LITERAL patterns, ``/kafka-acl-extended/prefixed/
<ResourceType>/<name>`` for PREFIXED ones. A write is a conditional set (or create, or delete
when no entry is left) on the version last read, retried after a short random backoff when
another writer got there first; a successful change adds a notification under
``/kafka-acl-changes`` or ``/kafka-acl-extended-changes``.

Cache. Every broker keeps all ACLs in memory: ``configure`` starts watching both change paths
first and then loads every znode, so no change falls between the two; each notification makes
the broker re-read that one resource's znode. Writers (API calls, notifications) hold the
authorizer's lock and publish a new immutable ``_AclIndex``; readers take the current index
without a lock and never see it change under them (Kafka's volatile immutable TreeMap).

Decision (``authorize``), for a principal at a host doing an operation on a named resource:
super users (``super.users``, ``User:alice;User:bob``) may do anything; otherwise the entries
that apply are those of the literal name, of the type's wildcard ``*`` and of every prefixed
pattern that starts the name. No entries at all: ``allow.everyone.if.no.acl.found`` decides.
An entry applies to the principal when it names it or ``User:*``, to the host when it names
the client's address or ``*``, to the operation when it names it or ``All``. Any applying Deny
refuses, whatever the allows; otherwise one applying Allow is needed, where Read, Write,
Delete and Alter each imply Describe, and AlterConfigs implies DescribeConfigs.

The index answers that with dictionary lookups: the literal and wildcard entries by (type,
name), the prefixed ones by trying only the prefix lengths that exist for the type, each
pattern's entries split into its denies and allows by principal. A decision, once taken, is
remembered by the index it was taken against (a principal writing the same topics request
after request is then one lookup); a new index, made by any ACL change, starts with none. Hosts that are IP addresses are compared
in one canonical text form (``::1``, IPv4-mapped addresses as IPv4), the form the broker gives
the client's address in.

Audit lines go to the logger ``kafka.authorizer.logger`` (Kafka's name): denials of what a
request asked for at INFO, grants at DEBUG, and answers computed only to filter or to list
authorized operations at TRACE (logging level 5).
"""
from __future__ import annotations

import ipaddress
import logging
import random
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.clients.common.errors import ApiException, InvalidRequestException, UnsupportedVersionException
from kafka_py.core.common.zk_node_change_notification_listener import ZkNodeChangeNotificationListener
from kafka_py.core.security.authorizer import (
    ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP,
    SUPER_USERS_PROP,
    ZK_CONNECTION_TIMEOUT_PROP,
    ZK_MAX_IN_FLIGHT_REQUESTS_PROP,
    ZK_SESSION_TIMEOUT_PROP,
    ZK_URL_PROP,
)
from kafka_py.core.security.authorizer import acl_entry as AclEntry
from kafka_py.core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    WILDCARD_RESOURCE,
    parse_kafka_principal,
)
from kafka_py.core.security.authorizer.authorizer import (
    AclBindingDeleteResult,
    AclCreateResult,
    AclDeleteResult,
    Action,
    AuthorizableRequestContext,
    AuthorizationResult,
    Authorizer,
    authorize_by_resource_type_check_args,
    has_dominant_prefixed_deny,
)
from kafka_py.core.security.authorizer.authorizer_utils import validate_acl_binding
from kafka_py.core.utils.logging import TRACE
from kafka_py.core.zk.zk_data import ZkAclChangeStore, ZkAclStore, ZkVersion

logger = logging.getLogger(__name__)
authorizer_logger = logging.getLogger("kafka.authorizer.logger")

WILDCARD_PRINCIPAL = AclEntry.WILDCARD_PRINCIPAL
WILDCARD_HOST = AclEntry.WILDCARD_HOST

_ALLOW = AclPermissionType.ALLOW
_DENY = AclPermissionType.DENY
_ALL = AclOperation.ALL
# The operations whose Allow also allows the key (AclOperation's documented implications).
_IMPLIED_BY = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                      AclOperation.DELETE, AclOperation.ALTER, _ALL}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, _ALL}),
}


@dataclass(frozen=True, slots=True)
class VersionedAcls:
    """A resource pattern's entries and the version of its znode (UNKNOWN_VERSION: none)."""

    acls: frozenset
    zk_version: int

    @property
    def exists(self) -> bool:
        return self.zk_version != ZkVersion.UNKNOWN_VERSION


NO_ACLS = VersionedAcls(frozenset(), ZkVersion.UNKNOWN_VERSION)
# Decisions remembered per index (see _AclIndex.decisions); past this many, new ones are not.
MAX_CACHED_DECISIONS = 100_000


@lru_cache(maxsize=4096)
def canonical_host(host: str) -> str:
    """An IP address in one text form (compressed IPv6, IPv4-mapped IPv6 as IPv4); other
    hosts (``*``, names) as they are."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _split(acls: Iterable[AccessControlEntry]) -> tuple[dict, dict]:
    """A pattern's entries as (denies, allows), each by principal: principal -> ((canonical
    host, operation), ...). A check then reads only the entries of its principal and of
    ``User:*``, however many other principals the pattern names."""
    deny: dict[str, list] = {}
    allow: dict[str, list] = {}
    for acl in acls:
        if acl.permission_type is _DENY:
            target = deny
        elif acl.permission_type is _ALLOW:
            target = allow
        else:
            continue
        target.setdefault(acl.principal, []).append((canonical_host(acl.host), acl.operation))
    return ({p: tuple(e) for p, e in deny.items()}, {p: tuple(e) for p, e in allow.items()})


class _AclIndex:
    """One immutable view of every ACL, indexed for ``authorize`` (never changed once published)."""

    __slots__ = ("acls", "literal", "prefixed", "prefix_lengths", "resources", "decisions", "decisions_lock")

    def __init__(self, acls: dict, literal: dict, prefixed: dict, prefix_lengths: dict, resources: dict) -> None:
        self.acls: dict[ResourcePattern, VersionedAcls] = acls
        # (resource type, name) -> (denies, allows) of the LITERAL pattern (the name may be "*"),
        # each {principal: ((host, operation), ...)}
        self.literal: dict[tuple[ResourceType, str], tuple] = literal
        # resource type -> {prefix: (denies, allows)} of its PREFIXED patterns
        self.prefixed: dict[ResourceType, dict[str, tuple]] = prefixed
        # resource type -> the distinct prefix lengths present, ascending
        self.prefix_lengths: dict[ResourceType, tuple[int, ...]] = prefix_lengths
        # Kafka's resourceCache: (principal, host, operation, permission, resource type, pattern
        # type) -> names, for authorize_by_resource_type
        self.resources: dict[tuple, frozenset[str]] = resources
        # Decisions already taken against this index: (principal, host, operation, resource
        # type, name) -> allowed. Gone with the index when an ACL changes; bounded in size.
        self.decisions: dict[tuple, bool] = {}
        self.decisions_lock = threading.Lock()

    @staticmethod
    def empty() -> "_AclIndex":
        return _AclIndex({}, {}, {}, {}, {})

    def updated(self, resource: ResourcePattern, versioned: VersionedAcls) -> "_AclIndex":
        """A new index with ``resource``'s entries replaced (removed when there are none)."""
        acls = dict(self.acls)
        old = acls.get(resource, NO_ACLS).acls
        if versioned.acls:
            acls[resource] = versioned
        else:
            acls.pop(resource, None)
        literal, prefixed, prefix_lengths = self.literal, self.prefixed, self.prefix_lengths
        split = _split(versioned.acls) if versioned.acls else None
        if resource.pattern_type is PatternType.LITERAL:
            literal = dict(literal)
            key = (resource.resource_type, resource.name)
            if split is None:
                literal.pop(key, None)
            else:
                literal[key] = split
        elif resource.pattern_type is PatternType.PREFIXED:
            prefixed = dict(prefixed)
            inner = dict(prefixed.get(resource.resource_type, {}))
            if split is None:
                inner.pop(resource.name, None)
            else:
                inner[resource.name] = split
            prefixed[resource.resource_type] = inner
            prefix_lengths = dict(prefix_lengths)
            prefix_lengths[resource.resource_type] = tuple(sorted({len(n) for n in inner if n}))
        resources = self.resources
        added = versioned.acls - old
        removed = old - versioned.acls
        if added or removed:
            resources = dict(resources)
            for acl in added:
                key = _resource_type_key(acl, resource)
                resources[key] = resources.get(key, frozenset()) | {resource.name}
            for acl in removed:
                key = _resource_type_key(acl, resource)
                names = resources.get(key, frozenset()) - {resource.name}
                if names:
                    resources[key] = names
                else:
                    resources.pop(key, None)
        return _AclIndex(acls, literal, prefixed, prefix_lengths, resources)

    def matching(self, resource_type: ResourceType, name: str) -> list[tuple]:
        """The (denies, allows) of every pattern that applies to the named resource."""
        found = []
        literal = self.literal
        entries = literal.get((resource_type, WILDCARD_RESOURCE))
        if entries is not None:
            found.append(entries)
        if name != WILDCARD_RESOURCE:
            entries = literal.get((resource_type, name))
            if entries is not None:
                found.append(entries)
        lengths = self.prefix_lengths.get(resource_type)
        if lengths:
            inner = self.prefixed[resource_type]
            size = len(name)
            for length in lengths:
                if length > size:
                    break
                entries = inner.get(name[:length])
                if entries is not None:
                    found.append(entries)
        return found


def _resource_type_key(acl: AccessControlEntry, resource: ResourcePattern) -> tuple:
    return (acl.principal, canonical_host(acl.host), acl.operation, acl.permission_type,
            resource.resource_type, resource.pattern_type)


def _api_exception(e: BaseException) -> ApiException:
    if isinstance(e, ApiException):
        return e
    # Kafka wraps anything else in a bare ApiException, which the wire knows only as
    # UNKNOWN_SERVER_ERROR.
    return ApiException(f"{type(e).__name__}: {e}")


class AclAuthorizer(Authorizer):
    """Kafka's ``kafka.security.authorizer.AclAuthorizer``."""

    def __init__(self) -> None:
        self.super_users: frozenset[str] = frozenset()
        self.should_allow_everyone_if_no_acl_is_found = False
        self.zk_client: Any = None
        self._acl_change_listeners: list[ZkNodeChangeNotificationListener] = []
        self.extended_acl_support = True
        self._index = _AclIndex.empty()
        self._lock = threading.RLock()
        # The most times a write of one resource's ACLs is retried after losing a race.
        self.max_update_retries = 10
        self._retry_backoff_ms = 100
        self._retry_backoff_jitter_ms = 50

    # ------------------------------------------------------------------ life cycle

    def configure(self, configs: Mapping[str, Any], zk_client_factory: Optional[Callable[..., Any]] = None) -> None:
        """Read ``super.users`` and ``allow.everyone.if.no.acl.found``, connect to ZooKeeper
        (``authorizer.zookeeper.url``, else ``zookeeper.connect``), watch the change paths and
        load every ACL. A bad value raises ConfigException naming its key."""
        from kafka_py.server.kafka_config import ConfigException, KafkaConfig
        from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
        from kafka_py.log.log_config import api_version

        props = {k: v for k, v in configs.items() if v is not None}
        super_users = props.get(SUPER_USERS_PROP)
        users: set[str] = set()
        if isinstance(super_users, str) and super_users.strip():
            for text in super_users.split(";"):
                try:
                    users.add(parse_kafka_principal(text.strip()))
                except ValueError as e:
                    raise ConfigException(SUPER_USERS_PROP, super_users, str(e)) from None
        self.super_users = frozenset(users)
        allow = props.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, False)
        if isinstance(allow, str):
            if allow.strip().lower() not in ("true", "false"):
                raise ConfigException(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, allow, "Expected value to be either "
                                                                                    "true or false")
            allow = allow.strip().lower() == "true"
        self.should_allow_everyone_if_no_acl_is_found = bool(allow)

        # Defaults of the ZooKeeper settings come from the broker's config, as in Kafka.
        kafka_config = KafkaConfig({k: v for k, v in props.items()
                                    if not k.startswith("authorizer.") or k == "authorizer.class.name"},
                                   do_log=False)

        def int_prop(name: str, default: int) -> int:
            value = props.get(name)
            if value is None:
                return default
            try:
                return int(str(value).strip())
            except ValueError:
                raise ConfigException(name, value, "Expected value to be a 32-bit integer") from None

        zk_url = str(props.get(ZK_URL_PROP) or kafka_config.zk_connect)
        connection_timeout_ms = int_prop(ZK_CONNECTION_TIMEOUT_PROP, kafka_config.zk_connection_timeout_ms)
        session_timeout_ms = int_prop(ZK_SESSION_TIMEOUT_PROP, kafka_config.zk_session_timeout_ms)
        max_in_flight = int_prop(ZK_MAX_IN_FLIGHT_REQUESTS_PROP, kafka_config.zk_max_in_flight_requests)
        factory = zk_client_factory or KafkaZkClient
        self.zk_client = factory(zk_url, kafka_config.zk_enable_secure_acls, session_timeout_ms,
                                 connection_timeout_ms, max_in_flight, name="ACL authorizer")
        self.zk_client.create_acl_paths()
        self.extended_acl_support = kafka_config.inter_broker_protocol_version >= api_version("2.0-IV1")
        # Watch first, then load: a change made while loading is then seen by both or the watch.
        self.start_zk_change_listeners()
        self._load_cache()

    def close(self) -> None:
        for listener in self._acl_change_listeners:
            try:
                listener.close()
            except Exception:  # noqa: BLE001 - closing the rest matters more
                logger.exception("Error closing an ACL change listener")
        self._acl_change_listeners = []
        if self.zk_client is not None:
            self.zk_client.close()
            self.zk_client = None

    def start_zk_change_listeners(self) -> None:
        listeners = []
        for change_store in ZkAclChangeStore.stores():
            listener = ZkNodeChangeNotificationListener(
                self.zk_client, change_store.acl_change_path, ZkAclChangeStore.SEQUENCE_NUMBER_PREFIX,
                _AclChangedNotificationHandler(self, change_store))
            listener.init()
            listeners.append(listener)
        self._acl_change_listeners = listeners

    def _load_cache(self) -> None:
        with self._lock:
            index = self._index
            for store in ZkAclStore.stores():
                for type_name in self.zk_client.get_resource_types(store.pattern_type):
                    resource_type = ResourceType.from_name(type_name)
                    if resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
                        logger.warning("Ignoring unknown ResourceType: %s", type_name)
                        continue
                    for name in self.zk_client.get_resource_names(store.pattern_type, resource_type):
                        resource = ResourcePattern(resource_type, name, store.pattern_type)
                        index = index.updated(resource, self._get_acls_from_zk(resource))
            self._index = index
        logger.info("Loaded %d ACL resource patterns from ZooKeeper", len(self._index.acls))

    # ------------------------------------------------------------------ authorize

    def authorize(self, request_context: AuthorizableRequestContext,
                  actions: Sequence[Action]) -> list[AuthorizationResult]:
        return [self.authorize_action(request_context, action) for action in actions]

    def authorize_action(self, request_context: AuthorizableRequestContext, action: Action) -> AuthorizationResult:
        resource = action.resource_pattern
        if resource.pattern_type is not PatternType.LITERAL:
            raise ValueError(f"Only literal resources are supported. Got: {resource.pattern_type.name}")
        principal = request_context.principal
        host = canonical_host(request_context.client_address)
        authorized = (principal in self.super_users
                      or self._acls_allow(principal, host, action.operation, resource.resource_type, resource.name))
        if authorized:
            level = logging.DEBUG if action.log_if_allowed else TRACE
        else:
            level = logging.INFO if action.log_if_denied else TRACE
        if authorizer_logger.isEnabledFor(level):
            authorizer_logger.log(level, self._audit_message(request_context, action, authorized))
        return AuthorizationResult.ALLOWED if authorized else AuthorizationResult.DENIED

    def is_super_user(self, principal: str) -> bool:
        return principal in self.super_users

    def _acls_allow(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                    name: str) -> bool:
        index = self._index
        key = (principal, host, operation, resource_type, name)
        decision = index.decisions.get(key)
        if decision is None:
            decision = self._decide(index, principal, host, operation, resource_type, name)
            with index.decisions_lock:
                if len(index.decisions) < MAX_CACHED_DECISIONS:
                    index.decisions[key] = decision
        return decision

    def _decide(self, index: _AclIndex, principal: str, host: str, operation: AclOperation,
                resource_type: ResourceType, name: str) -> bool:
        found = index.matching(resource_type, name)
        if not found:
            return self.should_allow_everyone_if_no_acl_is_found
        principals = (principal, WILDCARD_PRINCIPAL)
        for denies, _ in found:
            for p in principals:
                entries = denies.get(p)
                if entries:
                    for h, o in entries:
                        if (o is operation or o is _ALL) and (h == host or h == WILDCARD_HOST):
                            return False
        allowed_by = _IMPLIED_BY.get(operation)
        for _, allows in found:
            for p in principals:
                entries = allows.get(p)
                if entries:
                    for h, o in entries:
                        if ((h == host or h == WILDCARD_HOST)
                                and (o is operation or o is _ALL or (allowed_by is not None and o in allowed_by))):
                            return True
        return False

    def authorized_literal_names(self, request_context: AuthorizableRequestContext, operation: AclOperation,
                                 resource_type: ResourceType, names: Mapping[str, int], log_if_allowed: bool = True,
                                 log_if_denied: bool = True) -> set[str]:
        """``authorize`` for one operation on LITERAL resources of one type named ``names`` (name
        -> reference count): the names allowed. The same decisions and audit lines, without an
        Action per name unless a line is written (the request handlers' hot path)."""
        principal = request_context.principal
        if principal in self.super_users:
            allowed = set(names)
            if authorizer_logger.isEnabledFor(logging.DEBUG if log_if_allowed else TRACE):
                for name, count in names.items():
                    self._log_decision(request_context, operation, resource_type, name, count, True,
                                       log_if_allowed, log_if_denied)
            return allowed
        host = canonical_host(request_context.client_address)
        allowed = set()
        for name, count in names.items():
            ok = self._acls_allow(principal, host, operation, resource_type, name)
            if ok:
                allowed.add(name)
            level = (logging.DEBUG if log_if_allowed else TRACE) if ok else (logging.INFO if log_if_denied else TRACE)
            if authorizer_logger.isEnabledFor(level):
                self._log_decision(request_context, operation, resource_type, name, count, ok, log_if_allowed,
                                   log_if_denied)
        return allowed

    def _log_decision(self, request_context: Any, operation: AclOperation, resource_type: ResourceType, name: str,
                      count: int, authorized: bool, log_if_allowed: bool, log_if_denied: bool) -> None:
        action = Action(operation, ResourcePattern(resource_type, name, PatternType.LITERAL), count, log_if_allowed,
                        log_if_denied)
        if authorized:
            level = logging.DEBUG if log_if_allowed else TRACE
        else:
            level = logging.INFO if log_if_denied else TRACE
        authorizer_logger.log(level, self._audit_message(request_context, action, authorized))

    def authorize_by_resource_type(self, request_context: AuthorizableRequestContext, op: AclOperation,
                                   resource_type: ResourceType) -> AuthorizationResult:
        """Whether ``op`` is allowed on at least one resource of the type: some literal or
        prefixed allow that no deny covers (a literal ``*`` deny covers everything)."""
        authorize_by_resource_type_check_args(op, resource_type)
        principal = request_context.principal
        if principal in self.super_users:
            return AuthorizationResult.ALLOWED
        host = canonical_host(request_context.client_address)
        resources = self._index.resources
        action = Action(op, ResourcePattern(resource_type, "NONE", PatternType.UNKNOWN), 0, True, True)

        def matching(permission: AclPermissionType, pattern_type: PatternType) -> list[frozenset[str]]:
            out = []
            for p in (principal, WILDCARD_PRINCIPAL):
                for h in (host, WILDCARD_HOST):
                    for o in (op, _ALL):
                        names = resources.get((p, h, o, permission, resource_type, pattern_type))
                        if names:
                            out.append(names)
            return out

        def result(allowed: bool) -> AuthorizationResult:
            level = logging.DEBUG if allowed else logging.INFO
            if authorizer_logger.isEnabledFor(level):
                authorizer_logger.log(level, self._audit_message(request_context, action, allowed))
            return AuthorizationResult.ALLOWED if allowed else AuthorizationResult.DENIED

        deny_literals = matching(_DENY, PatternType.LITERAL)
        if any(WILDCARD_RESOURCE in names for names in deny_literals):
            return result(False)
        if self.should_allow_everyone_if_no_acl_is_found:
            return result(True)
        deny_prefixes = matching(_DENY, PatternType.PREFIXED)
        allow_literals = matching(_ALLOW, PatternType.LITERAL)
        allow_prefixes = matching(_ALLOW, PatternType.PREFIXED)
        if not deny_literals and not deny_prefixes:
            return result(bool(allow_literals or allow_prefixes))
        denied_prefixes = frozenset().union(*deny_prefixes) if deny_prefixes else frozenset()
        denied_literals = frozenset().union(*deny_literals) if deny_literals else frozenset()
        for names in allow_prefixes:
            if any(not has_dominant_prefixed_deny(n, denied_prefixes) for n in names):
                return result(True)
        for names in allow_literals:
            for n in names:
                if n == WILDCARD_RESOURCE or (n not in denied_literals
                                              and not has_dominant_prefixed_deny(n, denied_prefixes)):
                    return result(True)
        return result(False)

    @staticmethod
    def _audit_message(request_context: Any, action: Action, authorized: bool) -> str:
        api_key = getattr(request_context, "api_key", None)
        request = getattr(api_key, "api_name", None) or (str(api_key) if api_key is not None else "-1")
        pattern = action.resource_pattern
        return (f"Principal = {request_context.principal} is {'Allowed' if authorized else 'Denied'} "
                f"Operation = {action.operation.pascal_name} from host = {request_context.client_address} on "
                f"resource = {pattern.resource_type.pascal_name}:{pattern.pattern_type.name}:{pattern.name} "
                f"for request = {request} with resourceRefCount = {action.resource_reference_count}")

    # ------------------------------------------------------------------ ACL management

    def create_acls(self, request_context: Any, acl_bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        results: list[Optional[AclCreateResult]] = [None] * len(acl_bindings)
        to_create: dict[ResourcePattern, list[tuple[AclBinding, int]]] = {}
        for i, binding in enumerate(acl_bindings):
            try:
                if not self.extended_acl_support and binding.pattern.pattern_type is PatternType.PREFIXED:
                    raise UnsupportedVersionException("Adding ACLs on prefixed resource patterns requires "
                                                      "inter.broker.protocol.version of 2.0-IV1 or greater")
                validate_acl_binding(binding)
                to_create.setdefault(binding.pattern, []).append((binding, i))
            except Exception as e:  # noqa: BLE001 - each binding gets its own answer
                logger.debug("Failed to create ACL %s: %s", binding, e)
                results[i] = AclCreateResult(InvalidRequestException("Failed to create ACL"))
        if to_create:
            with self._lock:
                for resource, bindings in to_create.items():
                    try:
                        def add(current: frozenset, bindings=bindings) -> frozenset:
                            return current | {AclEntry.acl_entry(b.entry.principal, b.entry.permission_type,
                                                                 b.entry.host, b.entry.operation)
                                              for b, _ in bindings}

                        self._update_resource_acls(resource, add)
                        for _, i in bindings:
                            results[i] = AclCreateResult.SUCCESS  # type: ignore[attr-defined]
                    except Exception as e:  # noqa: BLE001
                        for _, i in bindings:
                            results[i] = AclCreateResult(_api_exception(e))
        return results  # type: ignore[return-value]

    def delete_acls(self, request_context: Any,
                    acl_binding_filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        deleted: dict[AclBinding, int] = {}
        exceptions: dict[AclBinding, ApiException] = {}
        filters = list(enumerate(acl_binding_filters))
        with self._lock:
            resources = list(self._index.acls)
            for _, f in filters:
                if f.pattern_filter.matches_at_most_one():
                    resources.extend(self._filter_to_resources(f.pattern_filter))
            to_update: dict[ResourcePattern, list[tuple[int, AclBindingFilter]]] = {}
            for resource in dict.fromkeys(resources):
                matching = [(i, f) for i, f in filters if f.pattern_filter.matches(resource)]
                if matching:
                    to_update[resource] = matching
            for resource, matching in to_update.items():
                being_deleted: dict[AclBinding, int] = {}

                def remove(current: frozenset, resource=resource, matching=matching,
                           being_deleted=being_deleted) -> frozenset:
                    to_remove = set()
                    for acl in current:
                        for i, f in matching:
                            if f.entry_filter.matches(acl):
                                binding = AclBinding(resource, acl)
                                deleted.setdefault(binding, i)
                                being_deleted.setdefault(binding, i)
                                to_remove.add(acl)
                    return current - to_remove

                try:
                    self._update_resource_acls(resource, remove)
                except Exception as e:  # noqa: BLE001
                    for binding in being_deleted:
                        exceptions.setdefault(binding, _api_exception(e))
        by_filter: dict[int, list[AclBindingDeleteResult]] = {}
        for binding, i in deleted.items():
            by_filter.setdefault(i, []).append(AclBindingDeleteResult(binding, exceptions.get(binding)))
        return [AclDeleteResult(tuple(by_filter.get(i, ()))) for i in range(len(acl_binding_filters))]

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        out = []
        for resource, versioned in self._index.acls.items():
            for acl in versioned.acls:
                binding = AclBinding(resource, acl)
                if binding_filter.matches(binding):
                    out.append(binding)
        return out

    @staticmethod
    def _filter_to_resources(pattern_filter: Any) -> list[ResourcePattern]:
        pattern_type = pattern_filter.pattern_type
        if pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
            return [ResourcePattern(pattern_filter.resource_type, pattern_filter.name, pattern_type)]
        if pattern_type is PatternType.ANY:
            return [ResourcePattern(pattern_filter.resource_type, pattern_filter.name, PatternType.LITERAL),
                    ResourcePattern(pattern_filter.resource_type, pattern_filter.name, PatternType.PREFIXED)]
        raise ValueError(f"Cannot determine matching resources for patternType {pattern_filter}")

    # ------------------------------------------------------------------ ZooKeeper and the cache

    def _update_resource_acls(self, resource: ResourcePattern,
                              get_new_acls: Callable[[frozenset], frozenset]) -> bool:
        """Write the entries ``get_new_acls`` makes of the current ones, conditionally on the
        znode version read; re-read and retry when another writer changed it first. Returns
        whether anything changed (a change also notifies every broker)."""
        current = self._index.acls.get(resource) or self._get_acls_from_zk(resource)
        new_versioned: Optional[VersionedAcls] = None
        retries = 0
        while retries <= self.max_update_retries:
            new_acls = frozenset(get_new_acls(current.acls))
            if new_acls:
                if current.exists:
                    ok, version = self.zk_client.conditional_set_acls_for_resource(resource, new_acls,
                                                                                   current.zk_version)
                else:
                    ok, version = self.zk_client.create_acls_for_resource_if_not_exists(resource, new_acls)
            else:
                ok, version = self.zk_client.conditional_delete(resource, current.zk_version), 0
            if ok:
                new_versioned = VersionedAcls(new_acls, version)
                break
            logger.debug("Failed to update ACLs for %s with version %d; reading them again", resource,
                         current.zk_version)
            time.sleep((self._retry_backoff_ms + random.randrange(self._retry_backoff_jitter_ms)) / 1000.0)
            current = self._get_acls_from_zk(resource)
            retries += 1
        if new_versioned is None:
            raise RuntimeError(f"Failed to update ACLs for {resource} after trying a maximum of "
                               f"{self.max_update_retries} times")
        changed = new_versioned.acls != current.acls
        self.update_cache(resource, new_versioned)
        if changed:
            logger.info("Updated ACLs for %s with new version %d", resource, new_versioned.zk_version)
            self.zk_client.create_acl_change_notification(resource)
        return changed

    def _get_acls_from_zk(self, resource: ResourcePattern) -> VersionedAcls:
        return self.zk_client.get_versioned_acls_for_resource(resource)

    def update_cache(self, resource: ResourcePattern, versioned_acls: VersionedAcls) -> None:
        """Publish an index with ``resource``'s entries replaced (the benchmark calls this too)."""
        with self._lock:
            self._index = self._index.updated(resource, versioned_acls)

    def process_acl_change_notification(self, resource: ResourcePattern) -> None:
        with self._lock:
            versioned = self._get_acls_from_zk(resource)
            logger.info("Processing Acl change notification for %s, versionedAcls : %s, zkVersion : %d",
                        resource, sorted(AclEntry.entry_str(a) for a in versioned.acls), versioned.zk_version)
            self.update_cache(resource, versioned)


class _AclChangedNotificationHandler:
    """Decodes one change notification and re-reads the resource it names."""

    def __init__(self, authorizer: AclAuthorizer, change_store: ZkAclChangeStore) -> None:
        self._authorizer = authorizer
        self._change_store = change_store

    def process_notification(self, notification_message: bytes) -> None:
        self._authorizer.process_acl_change_notification(self._change_store.decode(notification_message))


__all__ = ["AclAuthorizer", "NO_ACLS", "VersionedAcls", "authorizer_logger", "canonical_host"]
