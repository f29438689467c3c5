"""Port of the ACL handlers of core/src/main/scala/kafka/server/KafkaApis.scala (Kafka 2.8.2):
DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), versions 0 to 2, with the checks
their request classes make (clients/.../common/requests/DescribeAclsRequest.java,
CreateAclsRequest.java, DeleteAclsRequest.java).

Split from server/kafka_apis.py for size only; KafkaApis dispatches to ``AclRequestHandlers``.

What Kafka answers, and so what these answer:

* A request Kafka cannot even build closes the connection (Kafka fails to parse it): an
  UNKNOWN (code 0) resource type, pattern type, operation or permission type, or a
  version 0 request naming a pattern type other than LITERAL (ANY is read as LITERAL in
  version 0 filters).
* Describe needs Describe on the cluster, Create and Delete need Alter on it; without it
  the request fails as a whole and its error response (``@error_response_of``, Kafka's
  getErrorResponse) carries CLUSTER_AUTHORIZATION_FAILED at the top level or on every
  creation or filter. Without an authorizer the answer is SECURITY_DISABLED.
* A creation naming ANY (resource type, pattern type, operation or permission) or MATCH
  fails the whole request as Kafka's AclBinding constructor does: UNKNOWN_SERVER_ERROR for
  every creation. A CLUSTER resource not named ``kafka-cluster``, an empty name, or a code
  no enum has are INVALID_REQUEST for that creation; a principal that is not
  ``type:name`` is refused by the authorizer (UNKNOWN_SERVER_ERROR, as Kafka 2.8 answers it).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Iterable, Optional, Protocol

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import ApiException
from kafka_py.network.request_channel import Request
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.schema.create_acls.v2.response import AclCreationResult, CreateAclsResponse
from kafka_py.clients.common.protocol.schema.delete_acls.v2.response import DeleteAclsFilterResult, DeleteAclsMatchingAcl
from kafka_py.clients.common.protocol.schema.delete_acls.v2.response import DeleteAclsResponse
from kafka_py.clients.common.protocol.schema.describe_acls.v2.response import AclDescription, DescribeAclsResource
from kafka_py.clients.common.protocol.schema.describe_acls.v2.response import DescribeAclsResponse
from kafka_py.core.security.authorizer.acl import (
    CLUSTER_NAME,
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
from kafka_py.server.kafka_apis_common import error_response_of
from kafka_py.core.utils.logging import IdentLogger

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.core.security.authorizer.authorizer import Authorizer
    from kafka_py.server.auth_helper import AuthHelper

logger = logging.getLogger(__name__)

_NO_AUTHORIZER = "No Authorizer is configured on the broker"


class _Unparseable(Exception):
    """The request is one Kafka's request classes refuse to build: the connection is closed."""


def _any_unknown_code(*codes: int) -> bool:
    return any(int(code) == 0 for code in codes)


def _error_of(e: BaseException) -> ApiError:
    return ApiError.from_throwable(e if isinstance(e, ApiException) else ApiException(str(e)))


class _ConnectionCloser(Protocol):
    def close_connection(self, request: Request) -> None: ...


class AclApis(Protocol):
    """What the ACL handlers use of the APIs they serve: KafkaApis, or a KRaft controller's
    ControllerApis through a view of it (server/controller_apis.py)."""

    @property
    def auth_helper(self) -> AuthHelper: ...
    @property
    def authorizer(self) -> Optional[Authorizer]: ...
    @property
    def logger(self) -> IdentLogger: ...
    @property
    def request_channel(self) -> _ConnectionCloser: ...

    def send_response(self, request: Request, response: Any) -> None: ...

    def send_error_response(self, request: Request, error: Errors, message: Optional[str] = None) -> None: ...


class AclRequestHandlers:
    """The ACL API handlers of one KafkaApis (or ControllerApis)."""

    def __init__(self, apis: AclApis) -> None:
        self.apis = apis
        self.logger = IdentLogger(logger, apis.logger.ident)

    def _close(self, request: Request, reason: str) -> None:
        self.logger.info("Closing the connection of %s: %s", request.context.connection_id,
                         reason)
        self.apis.request_channel.close_connection(request)

    # ------------------------------------------------------------------ DescribeAcls

    @staticmethod
    @error_response_of(ApiKeys.DESCRIBE_ACLS)
    def describe_acls_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error at the top level, no resources (DescribeAclsRequest.getErrorResponse)
        return DescribeAclsResponse(throttle_time_ms=0, error_code=error.error_code,
                                    error_message=ApiError.of(error, message).message, resources=())

    def handle_describe_acls_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        pattern_type = int(getattr(body, "pattern_type_filter", PatternType.LITERAL.code))
        if version == 0:
            if pattern_type == PatternType.ANY.code:
                pattern_type = PatternType.LITERAL.code
            elif pattern_type != PatternType.LITERAL.code:
                self._close(request, "Version 0 only supports literal resource pattern types")
                return
        if _any_unknown_code(pattern_type, body.resource_type_filter, body.permission_type, body.operation):
            self._close(request, "DescribeAclsRequest contains UNKNOWN elements")
            return

        def send(error: Errors, message: Optional[str], resources: tuple[DescribeAclsResource, ...]) -> None:
            self.apis.send_response(request, DescribeAclsResponse(
                throttle_time_ms=0, error_code=error.error_code, error_message=message, resources=resources))

        self.apis.auth_helper.authorize_cluster_operation(request, AclOperation.DESCRIBE)
        authorizer = self.apis.authorizer
        if authorizer is None:
            send(Errors.SECURITY_DISABLED, _NO_AUTHORIZER, ())
            return
        binding_filter = AclBindingFilter(
            ResourcePatternFilter(ResourceType.from_code(body.resource_type_filter), body.resource_name_filter,
                                  PatternType.from_code(pattern_type)),
            AccessControlEntryFilter(body.principal_filter, body.host_filter,
                                     AclOperation.from_code(body.operation),
                                     AclPermissionType.from_code(body.permission_type)))
        send(Errors.NONE, None, acls_resources(authorizer.acls(binding_filter)))

    # ------------------------------------------------------------------ CreateAcls

    @staticmethod
    @error_response_of(ApiKeys.CREATE_ACLS)
    def create_acls_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error on every creation of the request
        result = AclCreationResult(error_code=error.error_code, error_message=ApiError.of(error, message).message)
        return CreateAclsResponse(throttle_time_ms=0, results=(result,) * len(request.body.creations))

    def handle_create_acls_request(self, request: Request) -> None:
        creations = list(request.body.creations)
        version = request.api_version
        if version == 0 and any(int(getattr(c, "resource_pattern_type", PatternType.LITERAL.code))
                                != PatternType.LITERAL.code for c in creations):
            self._close(request, "Version 0 only supports literal resource pattern types")
            return
        if any(_any_unknown_code(getattr(c, "resource_pattern_type", PatternType.LITERAL.code), c.resource_type,
                                 c.permission_type, c.operation) for c in creations):
            self._close(request, "CreatableAcls contain unknown elements")
            return

        def send(results: list[ApiError]) -> None:
            self.apis.send_response(request, CreateAclsResponse(throttle_time_ms=0, results=tuple([
                AclCreationResult(error_code=r.error.error_code, error_message=r.message) for r in results])))

        self.apis.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        authorizer = self.apis.authorizer
        if authorizer is None:
            self.apis.send_error_response(request, Errors.SECURITY_DISABLED, _NO_AUTHORIZER + ".")
            return
        try:
            bindings = [_acl_binding(c) for c in creations]
        except ValueError as e:
            # Kafka fails in the AclBinding constructor, before any creation: the whole request
            # is answered with the error of an IllegalArgumentException.
            self.logger.debug("CreateAcls with an invalid binding: %s", e)
            self.apis.send_error_response(request, *_error_of(e))
            return
        results: list[Optional[ApiError]] = [None] * len(bindings)
        valid: list[tuple[int, AclBinding]] = []
        for i, binding in enumerate(bindings):
            pattern = binding.pattern
            if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
                results[i] = ApiError(Errors.INVALID_REQUEST, f"The only valid name for the CLUSTER resource is "
                                                              f"{CLUSTER_NAME}")
            elif not pattern.name:
                results[i] = ApiError(Errors.INVALID_REQUEST, "Invalid empty resource name")
            else:
                valid.append((i, binding))
        if valid:
            created = authorizer.create_acls(request.context, [b for _, b in valid])
            for (i, _), result in zip(valid, created):
                results[i] = ApiError(Errors.NONE) if result.exception is None else _error_of(result.exception)
        send(results)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ DeleteAcls

    @staticmethod
    @error_response_of(ApiKeys.DELETE_ACLS)
    def delete_acls_error_response(request: Request, error: Errors, message: Optional[str]) -> Any:
        # the error on every filter of the request, matching nothing
        result = DeleteAclsFilterResult(error_code=error.error_code, error_message=ApiError.of(error, message).message,
                                        matching_acls=())
        return DeleteAclsResponse(throttle_time_ms=0, filter_results=(result,) * len(request.body.filters))

    def handle_delete_acls_request(self, request: Request) -> None:
        body = request.body
        version = request.api_version
        filters = []
        for f in body.filters:
            pattern_type = int(getattr(f, "pattern_type_filter", PatternType.LITERAL.code))
            if version == 0:
                if pattern_type == PatternType.ANY.code:
                    pattern_type = PatternType.LITERAL.code
                elif pattern_type != PatternType.LITERAL.code:
                    self._close(request, f"Version 0 does not support pattern type "
                                         f"{PatternType.from_code(pattern_type).name} (only LITERAL and ANY are "
                                         "supported)")
                    return
            if _any_unknown_code(pattern_type, f.resource_type_filter, f.operation, f.permission_type):
                self._close(request, "Filters contain UNKNOWN elements")
                return
            filters.append(AclBindingFilter(
                ResourcePatternFilter(ResourceType.from_code(f.resource_type_filter), f.resource_name_filter,
                                      PatternType.from_code(pattern_type)),
                AccessControlEntryFilter(f.principal_filter, f.host_filter, AclOperation.from_code(f.operation),
                                         AclPermissionType.from_code(f.permission_type))))

        self.apis.auth_helper.authorize_cluster_operation(request, AclOperation.ALTER)
        authorizer = self.apis.authorizer
        if authorizer is None:
            self.apis.send_error_response(request, Errors.SECURITY_DISABLED, _NO_AUTHORIZER + ".")
            return
        results = authorizer.delete_acls(request.context, filters)
        filter_results = []
        for result in results:
            error = ApiError(Errors.NONE) if result.exception is None else _error_of(result.exception)
            matching = []
            for deleted in result.acl_binding_delete_results:
                acl_error = ApiError(Errors.NONE) if deleted.exception is None else _error_of(deleted.exception)
                binding = deleted.acl_binding
                matching.append(DeleteAclsMatchingAcl(
                    error_code=acl_error.error.error_code, error_message=acl_error.message,
                    resource_type=binding.pattern.resource_type.code, resource_name=binding.pattern.name,
                    pattern_type=binding.pattern.pattern_type.code, principal=binding.entry.principal,
                    host=binding.entry.host, operation=binding.entry.operation.code,
                    permission_type=binding.entry.permission_type.code))
            filter_results.append(DeleteAclsFilterResult(error_code=error.error.error_code, error_message=error.message,
                                                         matching_acls=tuple(matching)))
        self.apis.send_response(request, DeleteAclsResponse(throttle_time_ms=0, filter_results=tuple(filter_results)))


def _acl_binding(creation: Any) -> AclBinding:
    """CreateAclsRequest.aclBinding: ValueError for ANY or MATCH where a binding needs a value."""
    pattern = ResourcePattern(ResourceType.from_code(creation.resource_type), creation.resource_name,
                              PatternType.from_code(getattr(creation, "resource_pattern_type",
                                                            PatternType.LITERAL.code)))
    entry = AccessControlEntry(creation.principal, creation.host, AclOperation.from_code(creation.operation),
                               AclPermissionType.from_code(creation.permission_type))
    return AclBinding(pattern, entry)


def acls_resources(bindings: Iterable[AclBinding]) -> tuple[DescribeAclsResource, ...]:
    """DescribeAclsResponse.aclsResources: the bindings grouped by resource pattern."""
    by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in bindings:
        entries = by_pattern.setdefault(binding.pattern, [])
        if binding.entry not in entries:
            entries.append(binding.entry)
    return tuple([DescribeAclsResource(
        resource_type=pattern.resource_type.code, resource_name=pattern.name, pattern_type=pattern.pattern_type.code,
        acls=tuple([AclDescription(principal=e.principal, host=e.host, operation=e.operation.code,
                                   permission_type=e.permission_type.code) for e in entries]))
        for pattern, entries in by_pattern.items()])


__all__ = ["AclRequestHandlers", "acls_resources"]
