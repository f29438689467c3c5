"""Port of core/src/main/scala/kafka/server/DelayedElectLeader.scala.

ElectLeaders asks the controller for the elections and learns which leader each partition
should get; the answer waits here, in the replica manager's "ElectLeader" purgatory keyed by
each partition, until this broker's metadata cache shows those leaders (the controller's
UpdateMetadata arrived) or the request's timeout passes. A partition still waiting then is
answered REQUEST_TIMED_OUT; partitions the controller already refused keep their errors.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Mapping

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    # the replica manager imports this module
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


class DelayedElectLeader(DelayedOperation):
    """Completes once the metadata cache shows every expected leader."""

    def __init__(self, delay_ms: int, expected_leaders: Mapping[TopicPartition, int],
                 results: Mapping[TopicPartition, ApiError], replica_manager: ReplicaManager,
                 response_callback: Callable[[dict[TopicPartition, ApiError]], None]) -> None:
        super().__init__(delay_ms)
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        self._waiting_partitions: dict[TopicPartition, int] = dict(expected_leaders)
        self._full_results: dict[TopicPartition, ApiError] = dict(results)

    def on_expiration(self) -> None:
        pass

    def on_complete(self) -> None:
        # Also reached by expiry, on the timer's thread: whatever still waits has timed out.
        # The lock keeps a concurrent try_complete from changing the maps meanwhile.
        with self.lock:
            self._update_waiting()
            timed_out = {tp: ApiError(Errors.REQUEST_TIMED_OUT) for tp in self._waiting_partitions}
            results = {**timed_out, **self._full_results}
        self.response_callback(results)

    def try_complete(self) -> bool:
        self._update_waiting()
        logger.debug("tryComplete() waitingPartitions: %s", self._waiting_partitions)
        return not self._waiting_partitions and self.force_complete()

    def _update_waiting(self) -> None:
        metadata_cache = self.replica_manager.metadata_cache
        for tp, leader in list(self._waiting_partitions.items()):
            info = metadata_cache.get_partition_info(tp.topic, tp.partition)
            if info is not None and info.leader == leader:
                del self._waiting_partitions[tp]
                self._full_results[tp] = ApiError.NONE  # type: ignore[attr-defined]


__all__ = ["DelayedElectLeader"]
