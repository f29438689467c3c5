"""Port of metadata/src/main/java/org/apache/kafka/timeline/TimelineInteger.java (Kafka 3.0.0).

An integer that can be read as of a snapshot epoch. The first change after a snapshot
saves the value it replaces in that snapshot; a read at epoch E takes the value saved by
the first snapshot from E onwards that saved one, or the current value if none did.
"""
from __future__ import annotations

from kafka_py.metadata.timeline.delta import Delta
from kafka_py.metadata.timeline.revertable import Revertable
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry


class IntegerContainer(Delta):
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def merge_from(self, destination_epoch: int, source: Delta) -> None:
        # The destination holds the value at its own, older epoch: the one to keep.
        pass


class TimelineInteger(Revertable):
    INIT = 0

    def __init__(self, snapshot_registry: SnapshotRegistry) -> None:
        self.snapshot_registry = snapshot_registry
        self._value = self.INIT
        snapshot_registry.register(self)

    def get(self, epoch: int = LATEST_EPOCH) -> int:
        if epoch == LATEST_EPOCH:
            return self._value
        for snapshot in self.snapshot_registry.iterator(epoch):
            container = snapshot.get_delta(self)
            if container is not None:
                assert isinstance(container, IntegerContainer)
                return container.value
        return self._value

    def set(self, new_value: int) -> None:
        snapshot = self.snapshot_registry.newest_snapshot()
        if snapshot is not None and snapshot.get_delta(self) is None:
            snapshot.set_delta(self, IntegerContainer(self._value))
        self._value = new_value

    def increment(self) -> None:
        self.set(self.get() + 1)

    def decrement(self) -> None:
        self.set(self.get() - 1)

    def execute_revert(self, target_epoch: int, delta: Delta) -> None:
        assert isinstance(delta, IntegerContainer)
        self._value = delta.value

    def reset(self) -> None:
        self.set(self.INIT)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    # mutable, so unhashable, as a Python int holder should be
    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return str(self._value)
