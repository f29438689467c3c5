"""Port of core/src/main/scala/kafka/security/authorizer/AclEntry.scala (Kafka 2.8.2): the JSON
an ACL znode holds, the operations each resource type supports, and the error a denied
resource type answers with.

A resource's znode (``/kafka-acl/Topic/orders``) holds all of its entries::

    {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}

An entry here is an AccessControlEntry whose principal parses as ``type:name``; Kafka's
AclEntry subclass adds only that parsed principal, which the text form already is.
"""
from __future__ import annotations

from typing import Iterable, Optional

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import (
    USER_TYPE,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    ResourceType,
    parse_kafka_principal,
)
from kafka_py.core.utils.json import encode_as_bytes, parse_bytes

WILDCARD_PRINCIPAL = f"{USER_TYPE}:*"
WILDCARD_HOST = "*"
WILDCARD_RESOURCE = WILDCARD_RESOURCE
RESOURCE_SEPARATOR = ":"

RESOURCE_TYPES = frozenset(t for t in ResourceType if t not in (ResourceType.UNKNOWN, ResourceType.ANY))
ACL_OPERATIONS = frozenset(o for o in AclOperation if o not in (AclOperation.UNKNOWN, AclOperation.ANY))

PRINCIPAL_KEY = "principal"
PERMISSION_TYPE_KEY = "permissionType"
OPERATION_KEY = "operation"
HOSTS_KEY = "host"
VERSION_KEY = "version"
CURRENT_VERSION = 1
ACLS_KEY = "acls"

_O = AclOperation
_SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS,
                         _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
                           _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
}
_AUTHORIZATION_ERRORS = {
    ResourceType.TOPIC: Errors.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: Errors.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: Errors.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


def acl_entry(principal: str, permission_type: AclPermissionType, host: str,
              operation: AclOperation) -> AccessControlEntry:
    """AclEntry.apply: an entry whose principal must parse (ValueError otherwise)."""
    return AccessControlEntry(parse_kafka_principal(principal), host, operation, permission_type)


def from_bytes(data: Optional[bytes]) -> frozenset[AccessControlEntry]:
    """AclEntry.fromBytes: the entries of an ACL znode (empty for no data). A znode of another
    version, or entries that do not parse, raise ValueError."""
    js = parse_bytes(data)
    if js is None:
        return frozenset()
    if not isinstance(js, dict) or js.get(VERSION_KEY) != CURRENT_VERSION:
        raise ValueError(f"unsupported ACL znode content: {bytes(data)!r}")
    entries = []
    for item in js.get(ACLS_KEY) or ():
        entries.append(acl_entry(
            str(item[PRINCIPAL_KEY]),
            AclPermissionType.from_name(str(item[PERMISSION_TYPE_KEY])),
            str(item[HOSTS_KEY]),
            AclOperation.from_name(str(item[OPERATION_KEY]))))
    return frozenset(entries)


def to_json_compatible_map(acls: Iterable[AccessControlEntry]) -> dict:
    """AclEntry.toJsonCompatibleMap: the znode's JSON value, keys in Kafka's order."""
    return {VERSION_KEY: CURRENT_VERSION, ACLS_KEY: [to_map(acl) for acl in acls]}


def to_map(acl: AccessControlEntry) -> dict:
    return {PRINCIPAL_KEY: acl.principal, PERMISSION_TYPE_KEY: acl.permission_type.pascal_name,
            OPERATION_KEY: acl.operation.pascal_name, HOSTS_KEY: acl.host}


def to_bytes(acls: Iterable[AccessControlEntry]) -> bytes:
    return encode_as_bytes(to_json_compatible_map(acls))


def supported_operations(resource_type: ResourceType) -> tuple[AclOperation, ...]:
    """The operations an ACL on ``resource_type`` may name (besides All)."""
    try:
        return _SUPPORTED_OPERATIONS[resource_type]
    except KeyError:
        raise ValueError("Not a concrete resource type") from None


def authorization_error(resource_type: ResourceType) -> Errors:
    try:
        return _AUTHORIZATION_ERRORS[resource_type]
    except KeyError:
        raise ValueError("Authorization error type not known") from None


def entry_str(acl: AccessControlEntry) -> str:
    """AclEntry.toString."""
    return (f"{acl.principal} has {acl.permission_type.name} permission for operations: "
            f"{acl.operation.name} from hosts: {acl.host}")


__all__ = [
    "ACL_OPERATIONS", "RESOURCE_SEPARATOR", "RESOURCE_TYPES", "WILDCARD_HOST", "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE", "acl_entry", "authorization_error", "entry_str", "from_bytes", "supported_operations",
    "to_bytes", "to_json_compatible_map",
]
