"""Port of core/src/main/scala/kafka/coordinator/group/DelayedHeartbeat.scala (Kafka 2.8.2).

One ``DelayedHeartbeat`` per member watches its session: the coordinator completes it when
the member shows it is alive (and schedules the next one), and if it expires instead the
member is removed from its group. For a pending member (one told MEMBER_ID_REQUIRED) it
bounds how long the coordinator waits for the second JoinGroup.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_py.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
    from kafka_py.core.coordinator.group.group_metadata import GroupMetadata


class DelayedHeartbeat(DelayedOperation):
    def __init__(self, coordinator: "GroupCoordinator", group: "GroupMetadata", member_id: str, is_pending: bool,
                 timeout_ms: int) -> None:
        super().__init__(timeout_ms, group.lock)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_heartbeat(self.group, self.member_id, self.is_pending,
                                                       self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self.group, self.member_id, self.is_pending)

    def on_complete(self) -> None:
        pass


__all__ = ["DelayedHeartbeat"]
