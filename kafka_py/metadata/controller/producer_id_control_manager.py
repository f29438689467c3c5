"""Port of metadata/src/main/java/org/apache/kafka/controller/ProducerIdControlManager.java
(Kafka 3.0.0; 2.8.2's controller had no producer id allocation, KIP-730).

Hands brokers blocks of producer ids for AllocateProducerIds, recording the end of the
last block handed out in a ProducerIdsRecord, so no id is ever given twice, even across
controller failover. ``ProducerIdsBlock`` is server-common's ProducerIdsBlock.

``iterator(epoch)`` gives the records a snapshot holds for this state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.records.producer_ids_record.v0 import ProducerIdsRecord
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.timeline.timeline_long import TimelineLong
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.java_limits import LONG_MAX

PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass(frozen=True, slots=True)
class ProducerIdsBlock:
    broker_id: int
    producer_id_start: int
    producer_id_len: int

    def producer_id_end(self) -> int:
        """The last id of the block (inclusive)."""
        return self.producer_id_start + self.producer_id_len - 1


class ProducerIdControlManager:
    def __init__(self, cluster_control: ClusterControlManager,
                 snapshot_registry: SnapshotRegistry) -> None:
        self.cluster_control = cluster_control
        # the first id not yet handed out
        self._last_producer_id = TimelineLong(snapshot_registry)

    def generate_next_producer_id(self, broker_id: int,
                                  broker_epoch: int) -> ControllerResult[ProducerIdsBlock]:
        self.cluster_control.check_broker_epoch(broker_id, broker_epoch)
        producer_id = self._last_producer_id.get()
        if producer_id > LONG_MAX - PRODUCER_ID_BLOCK_SIZE:
            raise Errors.UNKNOWN_SERVER_ERROR.exception(
                "Exhausted all producerIds as the next block's end producerId has exceeded "
                "the long type limit")
        record = ProducerIdsRecord(broker_id=broker_id, broker_epoch=broker_epoch,
                                   producer_ids_end=producer_id + PRODUCER_ID_BLOCK_SIZE)
        block = ProducerIdsBlock(broker_id, producer_id, PRODUCER_ID_BLOCK_SIZE)
        return ControllerResult.of([ApiMessageAndVersion.of(record)], block)

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The record that rebuilds the next producer id as of ``epoch`` (Kafka 3.0): the
        block's end, credited to no broker."""
        producer_id = self._last_producer_id.get(epoch)
        if producer_id > 0:
            yield [ApiMessageAndVersion.of(ProducerIdsRecord(broker_id=0, broker_epoch=0,
                                                             producer_ids_end=producer_id))]

    def replay(self, record: ProducerIdsRecord) -> None:
        if record.producer_ids_end <= self._last_producer_id.get():
            raise RuntimeError("Producer ID from record is not monotonically increasing")
        self._last_producer_id.set(int(record.producer_ids_end))

    def last_producer_id(self, epoch: int = LATEST_EPOCH) -> int:
        return self._last_producer_id.get(epoch)
