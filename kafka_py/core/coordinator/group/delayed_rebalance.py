"""Port of core/src/main/scala/kafka/coordinator/group/DelayedRebalance.scala (Kafka 2.8.2).

The common parent of DelayedJoin and DelayedSync, so that both live in one "Rebalance"
purgatory. Both run under their group's lock.
"""
from __future__ import annotations

from typing import Any

from kafka_py.server.delayed_operation import DelayedOperation


class DelayedRebalance(DelayedOperation):
    def __init__(self, rebalance_timeout_ms: int, group_lock: Any) -> None:
        super().__init__(rebalance_timeout_ms, group_lock)


__all__ = ["DelayedRebalance"]
