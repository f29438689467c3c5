"""Port of metadata/src/main/java/org/apache/kafka/timeline/Revertable.java.

A timeline collection, as the snapshots see it: something that can return to an epoch.
"""
from __future__ import annotations

import abc

from kafka_py.metadata.timeline.delta import Delta


class Revertable(abc.ABC):
    @abc.abstractmethod
    def execute_revert(self, target_epoch: int, delta: Delta) -> None:
        """Return to the state at ``target_epoch``, whose snapshot kept ``delta`` for this."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Return to the initial (empty or zero) state (Kafka 3.0)."""
