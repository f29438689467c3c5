"""Port of clients/src/main/java/org/apache/kafka/server/authorizer (Kafka 2.8.2): the plug-in
interface of the broker's authorizer (Authorizer.java) and the values it takes and returns
(Action, AuthorizationResult, AclCreateResult, AclDeleteResult, AuthorizableRequestContext).

Kafka's interface returns CompletionStages from createAcls/deleteAcls so an authorizer may
complete them later; the only authorizer here (AclAuthorizer) always completes them before it
returns, as Kafka's does, so these methods return the results themselves.

The request context an authorizer sees is kafka_py.network.request_channel.RequestContext:
``principal`` (``User:alice``), ``client_address`` (the client's IP as text),
``listener_name``, ``security_protocol``, ``client_id``, ``api_key`` and ``api_version``.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Protocol, Sequence

from kafka_py.core.security.authorizer.acl import (
    ANY_ENTRY_FILTER,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    WILDCARD_RESOURCE,
)


class AuthorizationResult(enum.Enum):
    ALLOWED = 0
    DENIED = 1


@dataclass(frozen=True, slots=True)
class Action:
    """One operation on one resource to authorise. ``resource_reference_count`` says how many
    times the request names the resource; the log flags say whether an answer is worth an
    audit line (a filter over all topics, say, is not worth one per denied topic)."""

    operation: AclOperation
    resource_pattern: ResourcePattern
    resource_reference_count: int = 1
    log_if_allowed: bool = True
    log_if_denied: bool = True


class AuthorizableRequestContext(Protocol):
    # read-only: an authorizer reads the request's context, never sets it
    @property
    def principal(self) -> Any: ...
    @property
    def client_address(self) -> Any: ...
    @property
    def listener_name(self) -> Any: ...
    @property
    def security_protocol(self) -> Any: ...
    @property
    def client_id(self) -> Optional[str]: ...
    @property
    def api_key(self) -> Any: ...
    @property
    def api_version(self) -> Optional[int]: ...


@dataclass(frozen=True, slots=True)
class AclCreateResult:
    exception: Optional[BaseException] = None


AclCreateResult.SUCCESS = AclCreateResult()  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class AclBindingDeleteResult:
    acl_binding: AclBinding
    exception: Optional[BaseException] = None


@dataclass(frozen=True, slots=True)
class AclDeleteResult:
    acl_binding_delete_results: tuple[AclBindingDeleteResult, ...] = ()
    exception: Optional[BaseException] = None


@dataclass(frozen=True, slots=True)
class ServerContext:
    """A minimal AuthorizableRequestContext for calls made outside a request (tools, startup)."""

    principal: str = "User:ANONYMOUS"
    client_address: str = "127.0.0.1"
    listener_name: str = ""
    security_protocol: str = ""
    client_id: Optional[str] = ""
    api_key: Any = None
    api_version: Optional[int] = -1
    correlation_id: int = -1
    extra: dict = field(default_factory=dict)


class Authorizer:
    """The broker's authorizer. ``configure`` gets every broker config; ``authorize`` answers
    one result per action, in order."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def start(self, server_info: Any = None) -> None:
        """Ready to authorise requests of every listener (Kafka returns one future per endpoint,
        all complete at once for an authorizer that keeps its ACLs outside the cluster)."""

    def authorize(self, request_context: AuthorizableRequestContext,
                  actions: Sequence[Action]) -> list[AuthorizationResult]:
        raise NotImplementedError

    def create_acls(self, request_context: Optional[AuthorizableRequestContext],
                    acl_bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        raise NotImplementedError

    def delete_acls(self, request_context: Optional[AuthorizableRequestContext],
                    acl_binding_filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        raise NotImplementedError

    def acls(self, binding_filter: AclBindingFilter) -> Iterable[AclBinding]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def authorize_by_resource_type(self, request_context: AuthorizableRequestContext, op: AclOperation,
                                   resource_type: ResourceType) -> AuthorizationResult:
        """Whether the principal may do ``op`` on at least one resource of ``resource_type``
        (Authorizer.authorizeByResourceType's default): some matching allow without a deny that
        covers it. Used by InitProducerId for producers without IdempotentWrite."""
        authorize_by_resource_type_check_args(op, resource_type)
        probe = Action(op, ResourcePattern(resource_type, "hardcode", PatternType.LITERAL), 0, True, False)
        if self.authorize(request_context, [probe])[0] is AuthorizationResult.ALLOWED:
            return AuthorizationResult.ALLOWED
        principal = request_context.principal
        host = request_context.client_address
        deny: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allow: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        wildcard_allow = False
        for binding in self.acls(AclBindingFilter(ResourcePatternFilter(resource_type, None, PatternType.ANY),
                                                  ANY_ENTRY_FILTER)):
            entry = binding.entry
            if entry.host != host and entry.host != "*":
                continue
            if entry.principal != principal and entry.principal != "User:*":
                continue
            if entry.operation is not op and entry.operation is not AclOperation.ALL:
                continue
            pattern = binding.pattern
            if entry.permission_type is AclPermissionType.DENY:
                if pattern.pattern_type is PatternType.LITERAL and pattern.name == WILDCARD_RESOURCE:
                    return AuthorizationResult.DENIED
                if pattern.pattern_type in deny:
                    deny[pattern.pattern_type].add(pattern.name)
                continue
            if entry.permission_type is not AclPermissionType.ALLOW:
                continue
            if pattern.pattern_type is PatternType.LITERAL and pattern.name == WILDCARD_RESOURCE:
                wildcard_allow = True
            elif pattern.pattern_type in allow:
                allow[pattern.pattern_type].add(pattern.name)
        if wildcard_allow:
            return AuthorizationResult.ALLOWED
        for pattern_type, names in allow.items():
            for name in names:
                if pattern_type is PatternType.LITERAL and name in deny[PatternType.LITERAL]:
                    continue
                if not has_dominant_prefixed_deny(name, deny[PatternType.PREFIXED]):
                    return AuthorizationResult.ALLOWED
        return AuthorizationResult.DENIED


def has_dominant_prefixed_deny(name: str, deny_prefixes: Iterable[str] | set[str]) -> bool:
    """Whether a denied prefix is a prefix of ``name`` (and so covers everything it names)."""
    prefixes = deny_prefixes if isinstance(deny_prefixes, (set, frozenset)) else set(deny_prefixes)
    return any(name[:i] in prefixes for i in range(1, len(name) + 1))


def authorize_by_resource_type_check_args(op: AclOperation, resource_type: ResourceType) -> None:
    """SecurityUtils.authorizeByResourceTypeCheckArgs."""
    if resource_type is ResourceType.ANY:
        raise ValueError("Must specify a non-filter resource type for authorizeByResourceType")
    if resource_type is ResourceType.UNKNOWN:
        raise ValueError("Unknown resource type")
    if op is AclOperation.ANY:
        raise ValueError("Must specify a non-filter operation type for authorizeByResourceType")
    if op is AclOperation.UNKNOWN:
        raise ValueError("Unknown operation type")


__all__ = [
    "AclBindingDeleteResult", "AclCreateResult", "AclDeleteResult", "Action", "AuthorizableRequestContext",
    "AuthorizationResult", "Authorizer", "ServerContext", "authorize_by_resource_type_check_args",
    "has_dominant_prefixed_deny",
]
