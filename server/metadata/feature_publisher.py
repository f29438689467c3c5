"""The features part of core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala
(Kafka 3.0.0): a KRaft broker's FinalizedFeatureCache (Kafka 2.8.2's FinalizedFeatureCache.scala)
fed from its committed metadata (KIP-584), for the ApiVersions answers.

A FeatureLevelRecord sets one feature's finalized range, a RemoveFeatureLevelRecord drops it,
and a snapshot, which holds every finalized feature, replaces them all. The epoch is the offset
of the last metadata batch that changed them, as Kafka 3.0's broker reports the image's offset.
"""
from __future__ import annotations

import logging
from typing import Sequence

from kafka_py.core.cluster.broker import FinalizedVersionRange
from kafka_py.metadata.api_message_and_version import ApiMessage
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.server.finalized_feature_cache import FinalizedFeatureCache
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

_LEVEL = MetadataRecordType.FEATURE_LEVEL_RECORD.value
_REMOVE = MetadataRecordType.REMOVE_FEATURE_LEVEL_RECORD.value


class FeaturePublisher:
    def __init__(self, node_type: str, node_id: int, feature_cache: FinalizedFeatureCache) -> None:
        self.feature_cache = feature_cache
        self.logger = IdentLogger(logger, f"[FeaturePublisher {node_type} id={node_id}] ")

    def name(self) -> str:
        return self.logger.ident.strip()

    def publish(self, last_offset: int, records: Sequence[ApiMessage], is_snapshot: bool = False) -> None:
        current = self.feature_cache.get()
        features: dict[str, FinalizedVersionRange] = {} if is_snapshot or current is None else dict(current.features)
        changed = is_snapshot
        for record in records:
            key = int(type(record).__api_key__)
            if key == _LEVEL:
                features[str(record.name)] = FinalizedVersionRange(int(record.min_feature_level),
                                                                   int(record.max_feature_level))
                changed = True
            elif key == _REMOVE:
                features.pop(str(record.name), None)
                changed = True
        if changed:
            self._update(features, last_offset)

    def _update(self, features: dict[str, FinalizedVersionRange], last_offset: int) -> None:
        try:
            self.feature_cache.update_or_throw(features, last_offset)
        except Exception:  # noqa: BLE001 - the controller let through what this broker cannot run
            self.logger.error("Unable to apply the finalized features of the metadata batch ending at offset %d",
                              last_offset, exc_info=True)


__all__ = ["FeaturePublisher"]
