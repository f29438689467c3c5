"""Port of core/src/main/scala/kafka/server/AuthHelper.scala (Kafka 2.8.2): how KafkaApis asks
the authorizer.

Without an authorizer (``authorizer.class.name`` empty) every check passes at the cost of one
``is None`` test, so the request handlers pay nothing for authorization they do not use. With
one, a handler asks once per distinct resource name of a request (``filter_by_authorized``),
however many partitions name it, as Kafka does.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer import acl_entry
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclOperation, PatternType, ResourcePattern, ResourceType
from kafka_py.core.security.authorizer.authorizer import Action, AuthorizationResult

T = TypeVar("T")

_ALLOWED = AuthorizationResult.ALLOWED
_LITERAL = PatternType.LITERAL


def to_32_bit_field(codes: Iterable[int]) -> int:
    """Utils.to32BitField: bit ``code`` set for every code (the authorized operations of
    Metadata and DescribeGroups answers, KIP-430), as a signed 32-bit int."""
    field = 0
    for code in codes:
        if code >= 32:
            raise ValueError(f"Value {code} is too large to fit in a 32-bit field")
        field |= 1 << code
    return field - (1 << 32) if field & 0x80000000 else field


def _named_by_itself(resource: Any) -> str:
    """The name of a resource that is its own name (a topic name, say)."""
    return resource


class AuthHelper:
    def __init__(self, authorizer: Optional[Any]) -> None:
        self.authorizer = authorizer
        # AclAuthorizer answers a request's literal names without an Action per name; other
        # authorizers get Kafka's authorize(actions).
        self._literal_names = getattr(authorizer, "authorized_literal_names", None)

    def authorize(self, request_context: Any, operation: AclOperation, resource_type: ResourceType,
                  resource_name: str, log_if_allowed: bool = True, log_if_denied: bool = True,
                  ref_count: int = 1) -> bool:
        authorizer = self.authorizer
        if authorizer is None:
            return True
        fast = self._literal_names
        if fast is not None:
            return bool(fast(request_context, operation, resource_type, {resource_name: ref_count}, log_if_allowed,
                             log_if_denied))
        action = Action(operation, ResourcePattern(resource_type, resource_name, _LITERAL), ref_count,
                        log_if_allowed, log_if_denied)
        return authorizer.authorize(request_context, [action])[0] is _ALLOWED

    def authorize_cluster_operation(self, request: Any, operation: AclOperation) -> None:
        """Raise ClusterAuthorizationException unless the request may do ``operation`` on the
        cluster; the handler's error path then answers CLUSTER_AUTHORIZATION_FAILED."""
        if not self.authorize(request.context, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            raise Errors.CLUSTER_AUTHORIZATION_FAILED.exception_class(f"Request {request!r} is not authorized.")

    def authorized_operations(self, request: Any, resource_type: ResourceType, resource_name: str) -> int:
        """The bit field of the operations the requester may do on the resource (all of the
        type's operations without an authorizer)."""
        supported = acl_entry.supported_operations(resource_type)
        authorizer = self.authorizer
        allowed: Sequence[AclOperation]
        if authorizer is None:
            allowed = supported
        else:
            pattern = ResourcePattern(resource_type, resource_name, _LITERAL)
            results = authorizer.authorize(request.context, [Action(op, pattern, 1, False, False) for op in supported])
            allowed = [op for op, result in zip(supported, results) if result is _ALLOWED]
        return to_32_bit_field(op.code for op in allowed)

    def authorize_by_resource_type(self, request_context: Any, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        authorizer = self.authorizer
        if authorizer is None:
            return True
        return authorizer.authorize_by_resource_type(request_context, operation, resource_type) is _ALLOWED

    def filter_by_authorized(self, request_context: Any, operation: AclOperation, resource_type: ResourceType,
                             resources: Iterable[T], resource_name: Callable[[T], str] = _named_by_itself,
                             log_if_allowed: bool = True, log_if_denied: bool = True) -> set[str]:
        """The names among ``resources`` the requester may do ``operation`` on (one question per
        distinct name, its count the number of times the request names it)."""
        counts: dict[str, int] = {}
        for resource in resources:
            name = resource_name(resource)
            counts[name] = counts.get(name, 0) + 1
        authorizer = self.authorizer
        if authorizer is None:
            return set(counts)
        if self._literal_names is not None:
            return self._literal_names(request_context, operation, resource_type, counts, log_if_allowed,
                                       log_if_denied)
        actions = [Action(operation, ResourcePattern(resource_type, name, _LITERAL), count, log_if_allowed,
                          log_if_denied) for name, count in counts.items()]
        results = authorizer.authorize(request_context, actions)
        return {name for name, result in zip(counts, results) if result is _ALLOWED}

    def partition_seq_by_authorized(self, request_context: Any, operation: AclOperation,
                                    resource_type: ResourceType, resources: list[T],
                                    resource_name: Callable[[T], str] = _named_by_itself,
                                    log_if_allowed: bool = True,
                                    log_if_denied: bool = True) -> tuple[list[T], list[T]]:
        if self.authorizer is None:
            return list(resources), []
        allowed = self.filter_by_authorized(request_context, operation, resource_type, resources, resource_name,
                                            log_if_allowed, log_if_denied)
        return ([r for r in resources if resource_name(r) in allowed],
                [r for r in resources if resource_name(r) not in allowed])


__all__ = ["AuthHelper", "to_32_bit_field"]
