"""Port of metadata/src/main/java/org/apache/kafka/metadata/FeatureMapAndEpoch.java.

The finalized features and the metadata log offset (epoch) they were read at.
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka_py.metadata.feature_map import FeatureMap


@dataclass(frozen=True, slots=True)
class FeatureMapAndEpoch:
    map: FeatureMap
    epoch: int

    def __str__(self) -> str:
        return f"{{map={self.map}, epoch={self.epoch}}}"
