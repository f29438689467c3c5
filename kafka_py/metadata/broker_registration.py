"""Port of metadata/src/main/java/org/apache/kafka/metadata/BrokerRegistration.java.

A broker as the controller has registered it: its id and epoch, the incarnation id of
the process, one EndPoint per listener (keyed by listener name), the feature versions it
supports, its rack and whether it is fenced.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Iterable, Mapping

from kafka_py.core.cluster.broker import EndPoint
from kafka_py.metadata.version_range import VersionRange


def listeners_to_map(listeners: Iterable[EndPoint]) -> dict[str, EndPoint]:
    """The end points keyed by listener name, as a registration holds them."""
    return {endpoint.listener_name.value: endpoint for endpoint in listeners}


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    id: int
    epoch: int
    incarnation_id: uuid.UUID
    # The two mappings are read-only copies and are left out of the hash (a mapping has
    # none); they still count for equality.
    listeners: Mapping[str, EndPoint] = field(hash=False)
    supported_features: Mapping[str, VersionRange] = field(hash=False)
    rack: str | None
    fenced: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "listeners", MappingProxyType(dict(self.listeners)))
        object.__setattr__(self, "supported_features",
                           MappingProxyType(dict(self.supported_features)))

    def clone_with_fencing(self, fencing: bool) -> BrokerRegistration:
        return replace(self, fenced=fencing)

    def __str__(self) -> str:
        listeners = ", ".join(str(self.listeners[name]) for name in sorted(self.listeners))
        features = ", ".join(f"{name}: {self.supported_features[name]}"
                             for name in sorted(self.supported_features))
        return (f"BrokerRegistration(id={self.id}, epoch={self.epoch}, "
                f"incarnationId={self.incarnation_id}, listeners=[{listeners}], "
                f"supportedFeatures={{{features}}}, rack={self.rack}, fenced={self.fenced})")
