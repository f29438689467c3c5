"""Port of core/src/main/scala/kafka/server/metadata/AclPublisher.scala (Kafka 3.6.0).

Hands the ACL records of committed metadata to a node's ClusterMetadataAuthorizer (the
StandardAuthorizer): AccessControlEntryRecords add an ACL by its id,
RemoveAccessControlEntryRecords remove one, and a snapshot, which holds every ACL, replaces
them all. A broker's BrokerMetadataListener and a controller's MetadataLoader call it with
each committed batch, after the batch's records (never uncommitted ones) are final.

``caught_up`` is called once, when the node has read the log up to its high watermark: the
authorizer's initial load is then complete and it decides for everyone, no longer for super
users only. Kafka 3.6's publisher infers this from its first update, which its MetadataLoader
holds back until it has caught up; the publishers here see every batch as it commits, so the
loader (or the BrokerServer) says so instead.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.authorizer.standard_acl import StandardAclWithId
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

_ADD = MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD.value
_REMOVE = MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD.value
RECORD_TYPES = frozenset((MetadataRecordType.ACCESS_CONTROL_ENTRY_RECORD,
                          MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD))


class AclPublisher:
    def __init__(self, node_type: str, node_id: int, authorizer: Any) -> None:
        self.authorizer = authorizer
        self.logger = IdentLogger(logger, f"[AclPublisher {node_type} id={node_id}] ")

    def name(self) -> str:
        return self.logger.ident.strip()

    def caught_up(self, last_offset: int) -> None:
        authorizer = self.authorizer
        if authorizer is not None and hasattr(authorizer, "complete_initial_load"):
            self.logger.info("Caught up with the metadata log at offset %d: the ACLs are loaded", last_offset)
            authorizer.complete_initial_load()

    def close(self) -> None:
        authorizer = self.authorizer
        if authorizer is not None and hasattr(authorizer, "complete_initial_load"):
            authorizer.complete_initial_load(TimeoutError("The node stopped before it caught up with the "
                                                          "metadata log"))

    def publish(self, last_offset: int, records: Sequence[ApiMessage], is_snapshot: bool = False) -> None:
        authorizer = self.authorizer
        if authorizer is None or not hasattr(authorizer, "load_snapshot"):
            return
        if is_snapshot:
            acls = {}
            for record in records:
                key = int(type(record).__api_key__)
                if key == _ADD:
                    acl = StandardAclWithId.from_record(record)
                    acls[acl.id] = acl.acl
                elif key == _REMOVE:
                    acls.pop(record.id, None)
            authorizer.load_snapshot(acls)
            return
        for record in records:
            key = int(type(record).__api_key__)
            try:
                if key == _ADD:
                    acl = StandardAclWithId.from_record(record)
                    authorizer.add_acl(acl.id, acl.acl)
                elif key == _REMOVE:
                    authorizer.remove_acl(record.id)
            except Exception:  # noqa: BLE001 - one bad record must not stop the others
                self.logger.error("Error publishing %s from the metadata batch ending at offset %d", record,
                                  last_offset, exc_info=True)


__all__ = ["AclPublisher", "RECORD_TYPES"]
