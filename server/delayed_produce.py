"""Port of core/src/main/scala/kafka/server/DelayedProduce.scala.

An acks=all produce waits here, once its records are in the leader's log, until every
partition it wrote to has them in the whole ISR (the high watermark passed them), the
partition reports an error (leadership moved, min.insync.replicas no longer met), or the
request timeout passes; then the response callback gets one PartitionResponse per partition.
Partitions still waiting at the timeout answer REQUEST_TIMED_OUT: the records are written,
but not known to be replicated.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_validator import RecordError
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.record.default_record_batch import NO_TIMESTAMP
from kafka_py.server.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    # the replica manager makes DelayedProduces
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class PartitionResponse:
    """ProduceResponse.PartitionResponse: one partition's answer to a produce request.

    Mutable on purpose: a delayed produce rewrites ``error`` as acknowledgements arrive.
    """

    error: Errors
    base_offset: int = -1
    log_append_time: int = NO_TIMESTAMP
    log_start_offset: int = -1
    record_errors: list[RecordError] = field(default_factory=list)
    error_message: Optional[str] = None

    @property
    def error_code(self) -> int:
        return self.error.code


@dataclass(slots=True)
class ProducePartitionStatus:
    """Where a partition's produce stands: the offset the ISR must reach, and the answer so far."""

    required_offset: int
    response_status: PartitionResponse
    acks_pending: bool = False

    def __str__(self) -> str:
        return (f"[acksPending: {self.acks_pending}, error: {self.response_status.error.code}, "
                f"startOffset: {self.response_status.base_offset}, requiredOffset: {self.required_offset}]")


@dataclass(frozen=True, slots=True)
class ProduceMetadata:
    produce_required_acks: int
    produce_status: Mapping[TopicPartition, ProducePartitionStatus]

    def __str__(self) -> str:
        return f"[requiredAcks: {self.produce_required_acks}, partitionStatus: {dict(self.produce_status)}]"


class DelayedProduce(DelayedOperation):
    """A produce with acks=all, watched in the "Produce" purgatory under each of its partitions."""

    def __init__(self, delay_ms: int, produce_metadata: ProduceMetadata, replica_manager: ReplicaManager,
                 response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
                 lock: Any = None) -> None:
        super().__init__(delay_ms, lock)
        self.produce_metadata = produce_metadata
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        for status in produce_metadata.produce_status.values():
            if status.response_status.error is Errors.NONE:
                # stays the answer unless the acks arrive in time
                status.acks_pending = True
                status.response_status.error = Errors.REQUEST_TIMED_OUT
            else:
                status.acks_pending = False

    def try_complete(self) -> bool:
        """Complete once no partition is still waiting: each is either an error (no longer the
        leader, or a local failure while checking) or fully replicated."""
        for tp, status in self.produce_metadata.produce_status.items():
            if not status.acks_pending:
                continue
            error, partition = self.replica_manager.get_partition_or_error(tp)
            if partition is None:
                has_enough = False
            else:
                has_enough, error = partition.check_enough_replicas_reach_offset(status.required_offset)
            if error is not Errors.NONE or has_enough:
                status.acks_pending = False
                status.response_status.error = error
        if not any(s.acks_pending for s in self.produce_metadata.produce_status.values()):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        for tp, status in self.produce_metadata.produce_status.items():
            if status.acks_pending:
                logger.debug("Expiring produce request for partition %s with status %s", tp, status)

    def on_complete(self) -> None:
        self.response_callback({tp: status.response_status
                                for tp, status in self.produce_metadata.produce_status.items()})
