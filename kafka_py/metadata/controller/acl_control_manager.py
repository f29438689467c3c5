"""Port of metadata/src/main/java/org/apache/kafka/controller/AclControlManager.java (Kafka
3.5.0; 2.8.2's controller kept no ACLs).

The ACLs of a KRaft cluster, as the active controller keeps them: each StandardAcl by the id of
the AccessControlEntryRecord that created it, and the set of ACLs (an ACL exists at most
once). Both are timeline collections, so the state of an uncommitted write rolls back with
the rest of the controller's when it loses the leadership.

``create_acls`` validates each binding and gives each new one a fresh random id; creating an
ACL that exists already (or twice in one request) succeeds and writes nothing. ``delete_acls``
writes a RemoveAccessControlEntryRecord for each ACL a filter matches and answers with the
bindings removed. Both write their records as one atomic batch. Neither changes the state:
the records do when replayed (Kafka's createAcls adds to the set while generating, to catch
duplicates within a request; here a set local to the request does that).

A binding with an UNKNOWN or ANY resource type or operation, a pattern type other than
LITERAL or PREFIXED, a permission type other than ALLOW or DENY, or an empty resource name
fails with INVALID_REQUEST; an UNKNOWN filter too. At most MAX_RECORDS_PER_USER_OP records
come from one request (Kafka's BoundedList limit).

``iterator(epoch)`` gives the records a snapshot holds for this state.
"""
from __future__ import annotations

import logging
import uuid
from typing import Iterator, Sequence

from kafka_py.clients.common.errors import ApiException, InvalidRequestException
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.authorizer.standard_acl import StandardAcl, StandardAclWithId
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.records.access_control_entry_record.v0 import AccessControlEntryRecord
from kafka_py.metadata.records.remove_access_control_entry_record.v0 import RemoveAccessControlEntryRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.timeline.timeline_hash_set import TimelineHashSet
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.security.authorizer.acl import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafka_py.core.security.authorizer.authorizer import AclBindingDeleteResult, AclCreateResult, AclDeleteResult
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

# QuorumController.MAX_RECORDS_PER_USER_OP (Kafka 3.5)
MAX_RECORDS_PER_USER_OP = 10_000
# how many ACL records go in one snapshot batch
SNAPSHOT_BATCH_SIZE = 10


def validate_new_acl(binding: AclBinding) -> None:
    """AclControlManager.validateNewAcl: InvalidRequestException for what no ACL may hold."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidRequestException(f"Invalid resourceType {pattern.resource_type.name}")
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidRequestException(f"Invalid patternType {pattern.pattern_type.name}")
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise InvalidRequestException(f"Invalid operation {entry.operation.name}")
    if entry.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise InvalidRequestException(f"Invalid permissionType {entry.permission_type.name}")
    if not pattern.name:
        raise InvalidRequestException("Resource name should not be empty")


def validate_filter(binding_filter: AclBindingFilter) -> None:
    if binding_filter.pattern_filter.is_unknown:
        raise InvalidRequestException("Unknown patternFilter.")
    if binding_filter.entry_filter.is_unknown:
        raise InvalidRequestException("Unknown entryFilter.")


def _as_api_exception(e: BaseException, what: str) -> ApiException:
    if isinstance(e, ApiException):
        return e
    return Errors.UNKNOWN_SERVER_ERROR.exception(f"Unknown error while trying to {what}: {e}")


class AclControlManager:
    def __init__(self, snapshot_registry: SnapshotRegistry, log_prefix: str = "") -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self._id_to_acl: TimelineHashMap[uuid.UUID, StandardAcl] = TimelineHashMap(snapshot_registry)
        self._existing_acls: TimelineHashSet[StandardAcl] = TimelineHashSet(snapshot_registry)

    # ------------------------------------------------------------------ writes

    def create_acls(self, acls: Sequence[AclBinding]) -> ControllerResult[list[AclCreateResult]]:
        results: list[AclCreateResult] = []
        records: list[ApiMessageAndVersion] = []
        added: set[StandardAcl] = set()
        new_ids: set[uuid.UUID] = set()
        for binding in acls:
            try:
                validate_new_acl(binding)
            except Exception as e:  # noqa: BLE001 - each binding gets its own answer
                results.append(AclCreateResult(_as_api_exception(e, "create ACL")))
                continue
            acl = StandardAcl.from_acl_binding(binding)
            if acl not in self._existing_acls and acl not in added:
                if len(records) >= MAX_RECORDS_PER_USER_OP:
                    results.append(AclCreateResult(Errors.POLICY_VIOLATION.exception(
                        f"Cannot create more than {MAX_RECORDS_PER_USER_OP} ACLs in one request.")))
                    continue
                added.add(acl)
                acl_id = self._new_acl_id(new_ids)
                records.append(ApiMessageAndVersion.of(StandardAclWithId(acl_id, acl).to_record()))
            results.append(AclCreateResult.SUCCESS)  # type: ignore[attr-defined]
        return ControllerResult.atomic_of(records, results)

    def _new_acl_id(self, taken: set[uuid.UUID]) -> uuid.UUID:
        while True:
            acl_id = uuid.uuid4()
            if acl_id not in self._id_to_acl and acl_id not in taken:
                taken.add(acl_id)
                return acl_id

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> ControllerResult[list[AclDeleteResult]]:
        results: list[AclDeleteResult] = []
        removed: dict[uuid.UUID, None] = {}
        for binding_filter in filters:
            try:
                validate_filter(binding_filter)
                results.append(self._delete_acls_for_filter(binding_filter, removed))
            except Exception as e:  # noqa: BLE001 - each filter gets its own answer
                results.append(AclDeleteResult((), _as_api_exception(e, "delete ACLs")))
        records = [ApiMessageAndVersion.of(RemoveAccessControlEntryRecord(id=acl_id)) for acl_id in removed]
        return ControllerResult.atomic_of(records, results)

    def _delete_acls_for_filter(self, binding_filter: AclBindingFilter,
                                removed: dict[uuid.UUID, None]) -> AclDeleteResult:
        deleted = []
        to_remove = []
        for acl_id, acl in self._id_to_acl.items():
            binding = acl.to_binding()
            if binding_filter.matches(binding):
                deleted.append(AclBindingDeleteResult(binding))
                if acl_id not in removed:
                    to_remove.append(acl_id)
        if len(removed) + len(to_remove) > MAX_RECORDS_PER_USER_OP:
            raise Errors.POLICY_VIOLATION.exception(
                f"Cannot remove more than {MAX_RECORDS_PER_USER_OP} ACLs in a single delete operation.")
        for acl_id in to_remove:
            removed[acl_id] = None
        return AclDeleteResult(tuple(deleted))

    # ------------------------------------------------------------------ replay and reads

    def replay(self, record: AccessControlEntryRecord) -> None:
        acl_with_id = StandardAclWithId.from_record(record)
        self._id_to_acl.put(acl_with_id.id, acl_with_id.acl)
        self._existing_acls.add(acl_with_id.acl)
        self.logger.debug("Replayed AccessControlEntryRecord for %s, setting %s", acl_with_id.id, acl_with_id.acl)

    def replay_remove(self, record: RemoveAccessControlEntryRecord) -> None:
        acl = self._id_to_acl.remove(record.id)
        if acl is None:
            raise RuntimeError(f"Unable to replay {record}: no acl with that ID found.")
        if not self._existing_acls.discard(acl):
            raise RuntimeError(f"Unable to replay {record} for {acl}: acl not found in existingAcls.")
        self.logger.debug("Replayed RemoveAccessControlEntryRecord for %s, removing %s", record.id, acl)

    def id_to_acl(self, epoch: int = LATEST_EPOCH) -> dict[uuid.UUID, StandardAcl]:
        return self._id_to_acl.to_dict(epoch)

    def describe_acls(self, binding_filter: AclBindingFilter, epoch: int = LATEST_EPOCH) -> list[AclBinding]:
        return [acl.to_binding() for acl in self._id_to_acl.values(epoch)
                if binding_filter.matches(acl.to_binding())]

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the ACLs as of ``epoch`` (Kafka 3.2's AclControlManager
        iterator), SNAPSHOT_BATCH_SIZE to a batch."""
        batch: list[ApiMessageAndVersion] = []
        for acl_id, acl in sorted(self._id_to_acl.items(epoch), key=lambda item: str(item[0])):
            batch.append(ApiMessageAndVersion.of(StandardAclWithId(acl_id, acl).to_record()))
            if len(batch) == SNAPSHOT_BATCH_SIZE:
                yield batch
                batch = []
        if batch:
            yield batch


__all__ = ["AclControlManager", "MAX_RECORDS_PER_USER_OP", "validate_filter", "validate_new_acl"]
