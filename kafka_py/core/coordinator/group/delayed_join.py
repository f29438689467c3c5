"""Port of core/src/main/scala/kafka/coordinator/group/DelayedJoin.scala (Kafka 2.8.2):
DelayedJoin and InitialDelayedJoin.

A ``DelayedJoin`` waits, while its group prepares a rebalance, for every known member to
send JoinGroup again; it completes as soon as they all have (``try_complete`` is checked
on each join under the group's key) or when the rebalance timeout passes, and then the
coordinator drops the members that did not rejoin and starts the next generation.

An ``InitialDelayedJoin`` is used instead when the group was Empty: it never completes
early, so that consumers starting together land in one generation instead of one rebalance
each. Every time it expires having seen new members join, it waits another
``group.initial.rebalance.delay.ms`` (never beyond the rebalance timeout in total).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_py.core.coordinator.group.delayed_rebalance import DelayedRebalance
from kafka_py.server.delayed_operation_key import GroupJoinKey

if TYPE_CHECKING:  # pragma: no cover
    from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
    from kafka_py.core.coordinator.group.group_metadata import GroupMetadata


class DelayedJoin(DelayedRebalance):
    def __init__(self, coordinator: "GroupCoordinator", group: "GroupMetadata", rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms, group.lock)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_expiration(self) -> None:
        # The completion may have appended the group's record with a deferred wake-up of
        # waiting produces (ReplicaManager's action queue); this thread belongs to no request
        # handler that would run it later, so run it here.
        self.coordinator.group_manager.replica_manager.try_complete_actions()

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    def __init__(self, coordinator: "GroupCoordinator", purgatory: Any, group: "GroupMetadata",
                 configured_rebalance_delay_ms: int, delay_ms: int, remaining_ms: int) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.purgatory = purgatory
        self.configured_rebalance_delay_ms = configured_rebalance_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        with self.group.lock:
            if self.group.new_member_added and self.remaining_ms != 0:
                self.group.new_member_added = False
                delay = min(self.configured_rebalance_delay_ms, self.remaining_ms)
                remaining = max(self.remaining_ms - self.delay_ms, 0)
                self.purgatory.try_complete_else_watch(
                    InitialDelayedJoin(self.coordinator, self.purgatory, self.group,
                                       self.configured_rebalance_delay_ms, delay, remaining),
                    [GroupJoinKey(self.group.group_id)])
            else:
                super().on_complete()


__all__ = ["DelayedJoin", "InitialDelayedJoin"]
