"""Port of metadata/src/main/java/org/apache/kafka/metadata/authorizer/StandardAcl.java and
StandardAclWithId.java (Kafka 3.5.0).

One ACL as the metadata log holds it: the fields of an AclBinding, flattened, and (with its
id) the AccessControlEntryRecord that writes it. The id is what a RemoveAccessControlEntryRecord
names, so the controller and every broker remove exactly the entry it was given for.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class StandardAcl:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    @classmethod
    def from_acl_binding(cls, binding: AclBinding) -> "StandardAcl":
        pattern, entry = binding.pattern, binding.entry
        return cls(pattern.resource_type, pattern.name, pattern.pattern_type, entry.principal, entry.host,
                   entry.operation, entry.permission_type)

    @classmethod
    def from_record(cls, record: AccessControlEntryRecord) -> "StandardAcl":
        return cls(ResourceType.from_code(int(record.resource_type)), str(record.resource_name),
                   PatternType.from_code(int(record.pattern_type)), str(record.principal), str(record.host),
                   AclOperation.from_code(int(record.operation)),
                   AclPermissionType.from_code(int(record.permission_type)))

    def resource_pattern(self) -> ResourcePattern:
        return ResourcePattern(self.resource_type, self.resource_name, self.pattern_type)

    def entry(self) -> AccessControlEntry:
        return AccessControlEntry(self.principal, self.host, self.operation, self.permission_type)

    def to_binding(self) -> AclBinding:
        return AclBinding(self.resource_pattern(), self.entry())


@dataclass(frozen=True, slots=True)
class StandardAclWithId:
    id: uuid.UUID
    acl: StandardAcl

    @classmethod
    def from_record(cls, record: AccessControlEntryRecord) -> "StandardAclWithId":
        return cls(record.id, StandardAcl.from_record(record))

    def to_record(self) -> AccessControlEntryRecord:
        acl = self.acl
        return AccessControlEntryRecord(
            id=self.id, resource_type=acl.resource_type.code, resource_name=acl.resource_name,
            pattern_type=acl.pattern_type.code, principal=acl.principal, host=acl.host,
            operation=acl.operation.code, permission_type=acl.permission_type.code)


__all__ = ["StandardAcl", "StandardAclWithId"]
