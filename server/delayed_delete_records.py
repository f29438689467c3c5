"""Port of core/src/main/scala/kafka/server/DelayedDeleteRecords.scala.

DeleteRecords moves the leader's log start offset at once, but answers only when every
alive replica has moved its own past the requested offset (the partition's low watermark
reached it), an error shows up, or the timeout passes (REQUEST_TIMED_OUT).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.delayed_operation import DelayedOperation
from kafka_py.server.replica_manager_types import HostedPartition

if TYPE_CHECKING:
    # the replica manager imports this module
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)

INVALID_LOW_WATERMARK = -1  # DeleteRecordsResponse.INVALID_LOW_WATERMARK


@dataclass(slots=True)
class DeleteRecordsPartitionResult:
    """DeleteRecordsResponseData.DeleteRecordsPartitionResult; mutable as the answer firms up."""

    partition_index: int
    low_watermark: int = INVALID_LOW_WATERMARK
    error: Errors = Errors.NONE

    @property
    def error_code(self) -> int:
        return self.error.code


@dataclass(slots=True)
class DeleteRecordsPartitionStatus:
    required_offset: int
    response_status: DeleteRecordsPartitionResult
    acks_pending: bool = False

    def __str__(self) -> str:
        return (f"[acksPending: {self.acks_pending}, error: {self.response_status.error.name}, "
                f"lowWatermark: {self.response_status.low_watermark}, requiredOffset: {self.required_offset}]")


class DelayedDeleteRecords(DelayedOperation):
    """A DeleteRecords request watched in the "DeleteRecords" purgatory under each partition."""

    def __init__(self, delay_ms: int, delete_records_status: Mapping[TopicPartition, DeleteRecordsPartitionStatus],
                 replica_manager: ReplicaManager,
                 response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None]) -> None:
        super().__init__(delay_ms)
        self.delete_records_status = delete_records_status
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        for status in delete_records_status.values():
            if status.response_status.error is Errors.NONE:
                status.acks_pending = True
                status.response_status.error = Errors.REQUEST_TIMED_OUT
            else:
                status.acks_pending = False

    def try_complete(self) -> bool:
        for tp, status in self.delete_records_status.items():
            if not status.acks_pending:
                continue
            hosted = self.replica_manager.get_partition(tp)
            if isinstance(hosted, HostedPartition.Online):
                partition = hosted.partition
                if partition.leader_log_if_local is not None:
                    low_watermark = partition.low_watermark_if_leader()
                    reached, error, lw = low_watermark >= status.required_offset, Errors.NONE, low_watermark
                else:
                    reached, error, lw = False, Errors.NOT_LEADER_OR_FOLLOWER, INVALID_LOW_WATERMARK
            elif hosted is HostedPartition.OFFLINE:
                reached, error, lw = False, Errors.KAFKA_STORAGE_ERROR, INVALID_LOW_WATERMARK
            else:
                reached, error, lw = False, Errors.UNKNOWN_TOPIC_OR_PARTITION, INVALID_LOW_WATERMARK
            if error is not Errors.NONE or reached:
                status.acks_pending = False
                status.response_status.error = error
                status.response_status.low_watermark = lw
        if not any(s.acks_pending for s in self.delete_records_status.values()):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        for tp, status in self.delete_records_status.items():
            if status.acks_pending:
                logger.debug("Expiring delete records request for partition %s with status %s", tp, status)

    def on_complete(self) -> None:
        self.response_callback({tp: status.response_status for tp, status in self.delete_records_status.items()})
