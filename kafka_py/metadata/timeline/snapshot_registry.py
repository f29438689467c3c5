"""Port of metadata/src/main/java/org/apache/kafka/timeline/SnapshotRegistry.java
(Kafka 2.8.2, with 3.0.0's get_or_create_snapshot, has_snapshot, register and reset).

The snapshots of a set of timeline collections, oldest first. A change to a collection
is recorded in the newest snapshot only, so there are usually one or two snapshots live
and a linked list serves better than a sorted structure. Deleting a snapshot folds its
deltas into the previous one (reads at the older epoch still need them); deleting the
oldest simply drops them.
"""
from __future__ import annotations

import logging
from typing import Iterator

from kafka_py.metadata.timeline.revertable import Revertable
from kafka_py.metadata.timeline.snapshot import Snapshot
from kafka_py.core.utils.java_limits import LONG_MAX, LONG_MIN
from kafka_py.core.utils.logging import IdentLogger

logger = logging.getLogger(__name__)

# The epoch that means "the current state", not any snapshot.
LATEST_EPOCH = LONG_MAX


class SnapshotRegistry:
    def __init__(self, log_prefix: str = "") -> None:
        self.logger = IdentLogger(logger, log_prefix)
        self._snapshots: dict[int, Snapshot] = {}
        # The sentinel of the circular list; its epoch is below every real epoch, so an
        # empty registry's latest epoch is LONG_MIN.
        self._head = Snapshot(LONG_MIN)
        self._revertables: list[Revertable] = []

    def iterator(self, start: Snapshot | int | None = None) -> Iterator[Snapshot]:
        """The snapshots from ``start`` (a snapshot or an epoch; default the oldest) to
        the newest. The current snapshot may be deleted while iterating."""
        if start is None:
            cur = self._head.next
        elif isinstance(start, Snapshot):
            cur = start
        else:
            cur = self.get_snapshot(start)
        while cur is not self._head:
            result = cur
            cur = cur.next
            yield result

    def reverse_iterator(self) -> Iterator[Snapshot]:
        """The snapshots from the newest to the oldest."""
        cur = self._head.prev
        while cur is not self._head:
            result = cur
            cur = cur.prev
            yield result

    def newest_snapshot(self) -> Snapshot | None:
        """The newest snapshot, where changes are recorded (Kafka's reverseIterator().next())."""
        last = self._head.prev
        return None if last is self._head else last

    def epochs_list(self) -> list[int]:
        return [snapshot.epoch for snapshot in self.iterator()]

    def has_snapshot(self, epoch: int) -> bool:
        return epoch in self._snapshots

    def get_snapshot(self, epoch: int) -> Snapshot:
        snapshot = self._snapshots.get(epoch)
        if snapshot is None:
            epochs = ", ".join(str(e) for e in self.epochs_list())
            raise ValueError(f"No snapshot for epoch {epoch}. Snapshot epochs are: {epochs}")
        return snapshot

    def create_snapshot(self, epoch: int) -> Snapshot:
        """A new snapshot at ``epoch``, which must be above every existing one; later
        changes start at ``epoch + 1``."""
        last = self._head.prev
        if last.epoch >= epoch:
            raise ValueError(f"Can't create a new snapshot at epoch {epoch} because there is "
                             f"already a snapshot with epoch {last.epoch}")
        snapshot = Snapshot(epoch)
        last.append_next(snapshot)
        self._snapshots[epoch] = snapshot
        self.logger.debug("Creating snapshot %d", epoch)
        return snapshot

    def get_or_create_snapshot(self, epoch: int) -> Snapshot:
        """As create_snapshot, but the newest snapshot is returned if it is at ``epoch``."""
        last = self._head.prev
        if last is not self._head and last.epoch == epoch:
            return last
        return self.create_snapshot(epoch)

    def revert_to_snapshot(self, target_epoch: int) -> None:
        """Return every registered collection to its state at ``target_epoch``, deleting the
        snapshots after it; the target snapshot itself stays."""
        target = self.get_snapshot(target_epoch)
        # (when target is the newest, its next is the sentinel and nothing is deleted)
        for snapshot in self.iterator(target.next):
            self.logger.debug("Deleting snapshot %d because we are reverting to %d",
                              snapshot.epoch, target_epoch)
            self.delete_snapshot(snapshot)
        target.handle_revert()

    def delete_snapshot(self, target: Snapshot | int) -> None:
        snapshot = target if isinstance(target, Snapshot) else self.get_snapshot(target)
        prev = snapshot.prev
        if prev is not self._head:
            prev.merge_from(snapshot)
        else:
            snapshot.erase()
        self.logger.debug("Deleting snapshot %d", snapshot.epoch)
        if self._snapshots.get(snapshot.epoch) is snapshot:
            del self._snapshots[snapshot.epoch]

    def delete_snapshots_up_to(self, target_epoch: int) -> None:
        """Delete every snapshot whose epoch is below ``target_epoch``."""
        for snapshot in self.iterator():
            if snapshot.epoch >= target_epoch:
                return
            self.delete_snapshot(snapshot)

    def latest_epoch(self) -> int:
        """The epoch of the newest snapshot (LONG_MIN when there is none)."""
        return self._head.prev.epoch

    def register(self, revertable: Revertable) -> None:
        """Add a collection for reset() to clear (Kafka 3.0)."""
        self._revertables.append(revertable)

    def reset(self) -> None:
        """Delete every snapshot and empty every registered collection (Kafka 3.0)."""
        self.delete_snapshots_up_to(LATEST_EPOCH)
        for revertable in self._revertables:
            revertable.reset()
