"""Port of clients/src/main/java/org/apache/kafka/common/acl and common/resource (Kafka 2.8.2):
AclOperation, AclPermissionType, AccessControlEntry(Filter), AclBinding(Filter), ResourceType,
PatternType, ResourcePattern(Filter), with the name conversions of common/utils/SecurityUtils.java
and the principal text form of common/security/auth/KafkaPrincipal.java.

An ACL binding is a resource pattern (what) and an access control entry (who, from where, may
or may not do which operation). A pattern's name is matched LITERALly (``*`` standing for every
name of its type) or as a PREFIX; filters add ANY (every pattern type, the name matched exactly)
and MATCH (every pattern that would apply to the named resource). The wire codes of the enums
are Kafka's, as are the names written to ZooKeeper (``Read``, ``DescribeConfigs``,
``TransactionalId``: Pascal case of the Java constant) and accepted back in either that form or
upper case.

Principals are kept as their text ``<type>:<name>`` (``User:alice``); two principals are equal
when their texts are, which is what Kafka's KafkaPrincipal equality (type and name) amounts to.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

CLUSTER_NAME = "kafka-cluster"  # Resource.CLUSTER_NAME: the one name a CLUSTER resource has
WILDCARD_RESOURCE = "*"  # ResourcePattern.WILDCARD_RESOURCE
USER_TYPE = "User"  # KafkaPrincipal.USER_TYPE


def _pascal_case(name: str) -> str:
    """SecurityUtils.toPascalCase: ``DESCRIBE_CONFIGS`` -> ``DescribeConfigs``."""
    return "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))


class _CodedEnum(enum.Enum):
    """An enum of Kafka's with a one-byte wire code; unknown codes and names are UNKNOWN."""

    def __init__(self, code: int) -> None:
        self.code = code

    # Members are singletons compared by identity; the identity hash keeps dictionary
    # lookups keyed by them (the authorizer's index) as cheap as for plain objects.
    __hash__ = object.__hash__

    @classmethod
    def from_code(cls, code: int):
        return _BY_CODE[cls].get(int(code), cls["UNKNOWN"])

    @classmethod
    def from_string(cls, text: str):
        """``valueOf(text.toUpperCase())``, UNKNOWN when there is no such constant."""
        try:
            return cls[str(text).upper()]
        except KeyError:
            return cls["UNKNOWN"]

    @classmethod
    def from_name(cls, text: str):
        """SecurityUtils' lookup of a stored name: Pascal case first, then upper case."""
        return _BY_NAME[cls].get(text) or _BY_NAME[cls].get(str(text).upper()) or cls["UNKNOWN"]

    @property
    def pascal_name(self) -> str:
        """SecurityUtils.operationName / resourceTypeName / permissionTypeName."""
        return _pascal_case(self.name)

    @property
    def is_unknown(self) -> bool:
        return self.name == "UNKNOWN"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class AclOperation(_CodedEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


class AclPermissionType(_CodedEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class ResourceType(_CodedEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6


class PatternType(_CodedEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @classmethod
    def from_string(cls, text: str) -> "PatternType":
        # PatternType.fromString looks the constant's name up as given (case matters).
        return cls.__members__.get(str(text), cls.UNKNOWN)

    @property
    def is_specific(self) -> bool:
        return self not in (PatternType.UNKNOWN, PatternType.ANY, PatternType.MATCH)


_BY_CODE = {cls: {m.code: m for m in cls} for cls in (AclOperation, AclPermissionType, ResourceType, PatternType)}
_BY_NAME = {cls: {**{m.pascal_name: m for m in cls}, **{m.pascal_name.upper(): m for m in cls}}
            for cls in (AclOperation, AclPermissionType, ResourceType, PatternType)}


def parse_kafka_principal(text: Optional[str]) -> str:
    """SecurityUtils.parseKafkaPrincipal: ``type:name`` (split at the first colon), returned as
    that text; ValueError for anything without a colon."""
    if not text or ":" not in text:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return text


# ---------------------------------------------------------------------------- entries


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """Who (principal text), from where (host, ``*`` for any), which operation, allowed or denied."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self) -> None:
        if self.principal is None or self.host is None or self.operation is None or self.permission_type is None:
            raise ValueError("an access control entry needs a principal, host, operation and permission type")
        if self.operation is AclOperation.ANY:
            raise ValueError("operation must not be ANY")
        if self.permission_type is AclPermissionType.ANY:
            raise ValueError("permissionType must not be ANY")

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def to_filter(self) -> "AccessControlEntryFilter":
        return AccessControlEntryFilter(self.principal, self.host, self.operation, self.permission_type)

    def __str__(self) -> str:
        # As kafka-acls.sh prints an entry.
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
                f"permissionType={self.permission_type.name})")


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    """An entry filter: None principal or host match any; ANY operation / permission too."""

    principal: Optional[str]
    host: Optional[str]
    operation: AclOperation
    permission_type: AclPermissionType

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def matches(self, other: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != other.principal:
            return False
        if self.host is not None and self.host != other.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not other.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or self.permission_type is other.permission_type

    def find_indefinite_field(self) -> Optional[str]:
        if self.principal is None:
            return "Principal is NULL"
        if self.host is None:
            return "Host is NULL"
        if self.operation is AclOperation.ANY:
            return "Operation is ANY"
        if self.operation is AclOperation.UNKNOWN:
            return "Operation is UNKNOWN"
        if self.permission_type is AclPermissionType.ANY:
            return "Permission type is ANY"
        if self.permission_type is AclPermissionType.UNKNOWN:
            return "Permission type is UNKNOWN"
        return None

    def matches_at_most_one(self) -> bool:
        return self.find_indefinite_field() is None


ANY_ENTRY_FILTER = AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY)


# ---------------------------------------------------------------------------- resources


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    """A resource type, a name and how the name is matched (LITERAL or PREFIXED)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __post_init__(self) -> None:
        if self.resource_type is None or self.name is None or self.pattern_type is None:
            raise ValueError("a resource pattern needs a resource type, name and pattern type")
        if self.resource_type is ResourceType.ANY:
            raise ValueError("resourceType must not be ANY")
        if self.pattern_type in (PatternType.MATCH, PatternType.ANY):
            raise ValueError(f"patternType must not be {self.pattern_type.name}")

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def to_filter(self) -> "ResourcePatternFilter":
        return ResourcePatternFilter(self.resource_type, self.name, self.pattern_type)

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
                f"patternType={self.pattern_type.name})")


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    """A pattern filter: ANY resource type; a None name for any name; ANY or MATCH pattern types."""

    resource_type: ResourceType
    name: Optional[str]
    pattern_type: PatternType

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type is not ResourceType.ANY and self.resource_type is not pattern.resource_type:
            return False
        if (self.pattern_type not in (PatternType.ANY, PatternType.MATCH)
                and self.pattern_type is not pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type is PatternType.ANY or self.pattern_type is pattern.pattern_type:
            return self.name == pattern.name
        # MATCH: every pattern that applies to the named resource
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        raise ValueError(f"Unsupported PatternType: {pattern.pattern_type.name}")

    def find_indefinite_field(self) -> Optional[str]:
        if self.resource_type is ResourceType.ANY:
            return "Resource type is ANY."
        if self.resource_type is ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type is PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type is PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        return None

    def matches_at_most_one(self) -> bool:
        return self.find_indefinite_field() is None

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return (f"ResourcePattern(resourceType={self.resource_type.name}, name={name}, "
                f"patternType={self.pattern_type.name})")


ANY_PATTERN_FILTER = ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)


# ---------------------------------------------------------------------------- bindings


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown

    def to_filter(self) -> "AclBindingFilter":
        return AclBindingFilter(self.pattern.to_filter(), self.entry.to_filter())


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and self.entry_filter.matches(binding.entry)

    def matches_at_most_one(self) -> bool:
        return self.pattern_filter.matches_at_most_one() and self.entry_filter.matches_at_most_one()

    def find_indefinite_field(self) -> Optional[str]:
        return self.pattern_filter.find_indefinite_field() or self.entry_filter.find_indefinite_field()


ANY_BINDING_FILTER = AclBindingFilter(ANY_PATTERN_FILTER, ANY_ENTRY_FILTER)

__all__ = [
    "ANY_BINDING_FILTER", "ANY_ENTRY_FILTER", "ANY_PATTERN_FILTER", "CLUSTER_NAME", "USER_TYPE",
    "WILDCARD_RESOURCE", "AccessControlEntry", "AccessControlEntryFilter", "AclBinding", "AclBindingFilter",
    "AclOperation", "AclPermissionType", "PatternType", "ResourcePattern", "ResourcePatternFilter",
    "ResourceType", "parse_kafka_principal",
]
