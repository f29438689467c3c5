"""Port of metadata/src/main/java/org/apache/kafka/controller/PartitionReassignmentReplicas.java
(Kafka 3.0.0; 2.8.2 had no KRaft reassignment).

What a reassignment from the current replicas to the target ones adds and removes, and
the merged replica list it runs with: the target replicas followed by those removed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True, slots=True)
class PartitionReassignmentReplicas:
    removing: tuple[int, ...]
    adding: tuple[int, ...]
    merged: tuple[int, ...]

    @classmethod
    def of(cls, current: Sequence[int], target: Sequence[int]) -> PartitionReassignmentReplicas:
        removing = tuple(sorted(set(current) - set(target)))
        adding = tuple(sorted(set(target) - set(current)))
        return cls(removing, adding, tuple(target) + removing)
