"""Port of core/src/main/scala/kafka/coordinator/group/DelayedSync.scala (Kafka 2.8.2).

After a generation starts (CompletingRebalance), every member must send SyncGroup within
the rebalance timeout. A ``DelayedSync`` completes once all have (or once the group has
moved on to another state or generation); if it expires first, the coordinator removes the
members that never synced and rebalances without them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_py.core.coordinator.group.delayed_rebalance import DelayedRebalance

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
    from kafka_py.core.coordinator.group.group_metadata import GroupMetadata


class DelayedSync(DelayedRebalance):
    def __init__(self, coordinator: "GroupCoordinator", group: "GroupMetadata", generation_id: int,
                 rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms, group.lock)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_pending_sync(self.group, self.generation_id, self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)

    def on_complete(self) -> None:
        pass


__all__ = ["DelayedSync"]
