"""Port of metadata/src/main/java/org/apache/kafka/metadata/authorizer/StandardAuthorizerData.java
(Kafka 3.5.0).

The ACLs a StandardAuthorizer decides with: every StandardAcl by its id, and the same entries
grouped by resource pattern in the immutable index AclAuthorizer decides with
(``_AclIndex`` of kafka_py/core/security/authorizer/acl_authorizer.py), so both authorizers give
the same answer for the same ACLs. Kafka's class is immutable and copied on change; here the
index is the immutable part, replaced (never changed) by each add or remove, and readers take
the current one without a lock.
"""
from __future__ import annotations

import uuid
from typing import Iterable, Mapping

from kafka_py.metadata.authorizer.standard_acl import StandardAcl
from kafka_py.core.security.authorizer.acl import AclBinding, AclBindingFilter, ResourcePattern
from kafka_py.core.security.authorizer.acl_authorizer import NO_ACLS, VersionedAcls, _AclIndex


class StandardAuthorizerData:
    def __init__(self) -> None:
        self.acls_by_id: dict[uuid.UUID, StandardAcl] = {}
        # resource pattern -> {id: entry}: one pattern's entries, whichever ids hold them
        self._by_pattern: dict[ResourcePattern, dict[uuid.UUID, object]] = {}
        self.index = _AclIndex.empty()

    def add_acl(self, acl_id: uuid.UUID, acl: StandardAcl) -> None:
        existing = self.acls_by_id.get(acl_id)
        if existing is not None:
            if existing == acl:
                return
            raise RuntimeError(f"An ACL with id {acl_id} already exists: {existing}")
        self.acls_by_id[acl_id] = acl
        pattern = acl.resource_pattern()
        entries = self._by_pattern.setdefault(pattern, {})
        entries[acl_id] = acl.entry()
        self._reindex(pattern)

    def remove_acl(self, acl_id: uuid.UUID) -> StandardAcl:
        acl = self.acls_by_id.pop(acl_id, None)
        if acl is None:
            raise RuntimeError(f"No ACL with id {acl_id} found.")
        pattern = acl.resource_pattern()
        entries = self._by_pattern.get(pattern, {})
        entries.pop(acl_id, None)
        if not entries:
            self._by_pattern.pop(pattern, None)
        self._reindex(pattern)
        return acl

    def load_snapshot(self, acls: Mapping[uuid.UUID, StandardAcl]) -> None:
        """Replace every ACL with ``acls``."""
        self.acls_by_id = {}
        self._by_pattern = {}
        self.index = _AclIndex.empty()
        for acl_id, acl in acls.items():
            self.acls_by_id[acl_id] = acl
            self._by_pattern.setdefault(acl.resource_pattern(), {})[acl_id] = acl.entry()
        index = _AclIndex.empty()
        for pattern in self._by_pattern:
            index = index.updated(pattern, self._versioned(pattern))
        self.index = index

    def _versioned(self, pattern: ResourcePattern) -> VersionedAcls:
        entries = self._by_pattern.get(pattern)
        return VersionedAcls(frozenset(entries.values()), 0) if entries else NO_ACLS

    def _reindex(self, pattern: ResourcePattern) -> None:
        self.index = self.index.updated(pattern, self._versioned(pattern))

    def acls(self, binding_filter: AclBindingFilter) -> Iterable[AclBinding]:
        for pattern, versioned in self.index.acls.items():
            for entry in versioned.acls:
                binding = AclBinding(pattern, entry)
                if binding_filter.matches(binding):
                    yield binding

    def acl_count(self) -> int:
        return len(self.acls_by_id)


__all__ = ["StandardAuthorizerData"]
