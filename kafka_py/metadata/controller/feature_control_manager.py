"""Port of metadata/src/main/java/org/apache/kafka/controller/FeatureControlManager.java
(Kafka 2.8.2; 3.0.0's is the same).

The finalized feature levels (KIP-584) as FeatureLevelRecords. An update must be at
least level 1, within what this controller supports and what every registered broker
supports, and may lower a feature's maximum only when the request allows a downgrade.

``iterator(epoch)`` is Kafka 3.0.0's: the records a snapshot holds for this state.
"""
from __future__ import annotations

from typing import Collection, Iterator, Mapping

from kafka_py.clients.common.api_error import ApiError
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.feature_map import FeatureMap
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.records.feature_level_record.v0 import FeatureLevelRecord
from kafka_py.metadata.records.remove_feature_level_record.v0 import RemoveFeatureLevelRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.errors import Errors


class FeatureControlManager:
    def __init__(self, supported_features: Mapping[str, VersionRange],
                 snapshot_registry: SnapshotRegistry) -> None:
        self.supported_features = dict(supported_features)
        self._finalized_versions: TimelineHashMap[str, VersionRange] = \
            TimelineHashMap(snapshot_registry)

    def update_features(self, updates: Mapping[str, VersionRange],
                        downgradeables: Collection[str],
                        broker_features: Mapping[int, Mapping[str, VersionRange]]
                        ) -> ControllerResult[dict[str, ApiError]]:
        records: list[ApiMessageAndVersion] = []
        results: dict[str, ApiError] = {}
        for name in sorted(updates):
            results[name] = self._update_feature(name, updates[name], name in downgradeables,
                                                 broker_features, records)
        return ControllerResult.atomic_of(records, results)

    def _update_feature(self, name: str, new_range: VersionRange, downgradeable: bool,
                        broker_features: Mapping[int, Mapping[str, VersionRange]],
                        records: list[ApiMessageAndVersion]) -> ApiError:
        if new_range.min <= 0:
            return ApiError(Errors.INVALID_UPDATE_VERSION,
                            "The lower value for the new range cannot be less than 1.")
        if new_range.max <= 0:
            return ApiError(Errors.INVALID_UPDATE_VERSION,
                            "The upper value for the new range cannot be less than 1.")
        local = self.supported_features.get(name)
        if local is None or not local.contains(new_range):
            return ApiError(Errors.INVALID_UPDATE_VERSION,
                            "The controller does not support the given feature range.")
        for broker_id, features in broker_features.items():
            broker_range = features.get(name)
            if broker_range is None or not broker_range.contains(new_range):
                return ApiError(Errors.INVALID_UPDATE_VERSION,
                                f"Broker {broker_id} does not support the given feature range.")
        current = self._finalized_versions.get(name)
        if current is not None and current.max > new_range.max and not downgradeable:
            return ApiError(Errors.INVALID_UPDATE_VERSION,
                            "Can't downgrade the maximum version of this feature without "
                            "setting downgradable to true.")
        records.append(ApiMessageAndVersion.of(FeatureLevelRecord(
            name=name, min_feature_level=new_range.min, max_feature_level=new_range.max)))
        return ApiError.NONE  # type: ignore[attr-defined]

    def finalized_features(self, last_committed_offset: int) -> FeatureMapAndEpoch:
        return FeatureMapAndEpoch(FeatureMap(self._finalized_versions.to_dict(last_committed_offset)),
                                  last_committed_offset)

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the finalized features as of ``epoch`` (Kafka 3.0's
        FeatureControlIterator): one FeatureLevelRecord per feature."""
        for name, versions in sorted(self._finalized_versions.items(epoch)):
            yield [ApiMessageAndVersion.of(FeatureLevelRecord(name=name, min_feature_level=versions.min,
                                                              max_feature_level=versions.max))]

    def replay(self, record: FeatureLevelRecord) -> None:
        self._finalized_versions.put(record.name, VersionRange(int(record.min_feature_level),
                                                               int(record.max_feature_level)))

    def replay_remove(self, record: RemoveFeatureLevelRecord) -> None:
        self._finalized_versions.remove(record.name)

    def get(self, name: str, epoch: int = LATEST_EPOCH) -> VersionRange | None:
        return self._finalized_versions.get(name, epoch=epoch)
