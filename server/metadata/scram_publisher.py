"""Port of core/src/main/scala/kafka/server/metadata/ScramPublisher.scala (Kafka 3.5.0).

Hands the SCRAM records of committed metadata to a node's CredentialCache, which its SASL
listeners authenticate SCRAM logins against: a UserScramCredentialRecord sets one user's
credential for one mechanism, a RemoveUserScramCredentialRecord removes it, and a snapshot,
which holds every credential, replaces them all. Each node, broker or controller, keeps its
own cache, so a credential logs in on every node's SASL listener once it has committed.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.controller.scram_control_manager import SCRAM_MECHANISM_TYPES, credential_from_record
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

_UPSERT = MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD.value
_REMOVE = MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD.value
RECORD_TYPES = frozenset((MetadataRecordType.USER_SCRAM_CREDENTIAL_RECORD,
                          MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD))


class ScramPublisher:
    def __init__(self, node_type: str, node_id: int, credential_provider: Any) -> None:
        self.credential_provider = credential_provider
        self.logger = IdentLogger(logger, f"[ScramPublisher {node_type} id={node_id}] ")

    def name(self) -> str:
        return self.logger.ident.strip()

    def publish(self, last_offset: int, records: Sequence[ApiMessage], is_snapshot: bool = False) -> None:
        cache = self.credential_provider
        if cache is None:
            return
        if is_snapshot:
            credentials = {}
            for record in records:
                key = int(type(record).__api_key__)
                mechanism = SCRAM_MECHANISM_TYPES.get(int(getattr(record, "mechanism", 0)))
                if key == _UPSERT and mechanism is not None:
                    credentials[(mechanism.mechanism_name, str(record.name))] = credential_from_record(record)
                elif key == _REMOVE and mechanism is not None:
                    credentials.pop((mechanism.mechanism_name, str(record.name)), None)
            cache.load(credentials)
            return
        for record in records:
            key = int(type(record).__api_key__)
            if key not in (_UPSERT, _REMOVE):
                continue
            mechanism = SCRAM_MECHANISM_TYPES.get(int(record.mechanism))
            if mechanism is None:
                self.logger.error("Unknown SCRAM mechanism %d for user %s in the metadata batch ending at offset "
                                  "%d", int(record.mechanism), record.name, last_offset)
            elif key == _UPSERT:
                cache.update_credential(mechanism.mechanism_name, str(record.name), credential_from_record(record))
            else:
                cache.remove_credentials(mechanism.mechanism_name, str(record.name))


__all__ = ["RECORD_TYPES", "ScramPublisher"]
