"""Port of metadata/src/main/java/org/apache/kafka/metadata/FeatureMap.java.

Feature names and the version range of each: what the controller has finalized.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from kafka_py.metadata.version_range import VersionRange


@dataclass(frozen=True, slots=True)
class FeatureMap:
    features: Mapping[str, VersionRange] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A read-only copy, so the caller's dict can change without changing this value.
        object.__setattr__(self, "features", MappingProxyType(dict(self.features)))

    def get(self, name: str) -> VersionRange | None:
        return self.features.get(name)

    def __hash__(self) -> int:
        # the generated hash would hash the mapping, which has none
        return hash(frozenset(self.features.items()))

    def __str__(self) -> str:
        return "{" + ", ".join(f"{name}: {self.features[name]}" for name in sorted(self.features)) + "}"
