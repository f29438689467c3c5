"""Port of core/src/main/scala/kafka/server/metadata/MetadataImage.scala (Kafka 2.8.2).

A KRaft broker's whole view of the cluster at one offset of the metadata log: partitions,
brokers, and the active controller's id. An image is immutable; the BrokerMetadataListener
applies a batch of records to a ``MetadataImageBuilder`` over the current image and
publishes the built image in one assignment, so a reader that takes the image once sees
one consistent cluster.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.metadata.metadata_brokers import MetadataBroker, MetadataBrokers, MetadataBrokersBuilder
from kafka_py.server.metadata.metadata_partitions import (
    MetadataPartition,
    MetadataPartitions,
    MetadataPartitionsBuilder,
)

_UNSET = object()


@dataclass(frozen=True)
class MetadataImage:
    partitions: MetadataPartitions = field(default_factory=MetadataPartitions.empty)
    controller_id: Optional[int] = None
    brokers: MetadataBrokers = field(default_factory=MetadataBrokers.empty)

    def contains(self, item: "TopicPartition | str") -> bool:
        if isinstance(item, TopicPartition):
            return self.partitions.topic_partition(item.topic, item.partition) is not None
        return self.partitions.contains(item)

    def alive_broker(self, broker_id: int) -> Optional[MetadataBroker]:
        return self.brokers.alive_broker(broker_id)

    def num_alive_brokers(self) -> int:
        return len(self.brokers.alive_brokers())

    def controller(self) -> Optional[MetadataBroker]:
        return None if self.controller_id is None else self.brokers.alive_broker(self.controller_id)

    def topic_id_to_name(self, topic_id: uuid.UUID) -> Optional[str]:
        return self.partitions.topic_id_to_name(topic_id)

    def topic_name_to_id(self, name: str) -> Optional[uuid.UUID]:
        return self.partitions.topic_name_to_id(name)


class MetadataImageBuilder:
    """The next image: ``prev_image`` plus the changes of one batch of records. The
    partitions and brokers builders are made on first use, so a batch that touches only
    brokers copies no partition map."""

    def __init__(self, broker_id: int, log: Any, prev_image: MetadataImage) -> None:
        self.broker_id = broker_id
        self.log = log
        self.prev_image = prev_image
        self._partitions_builder: Optional[MetadataPartitionsBuilder] = None
        self._controller_id = prev_image.controller_id
        self._brokers_builder: Optional[MetadataBrokersBuilder] = None

    def partitions_builder(self) -> MetadataPartitionsBuilder:
        if self._partitions_builder is None:
            self._partitions_builder = MetadataPartitionsBuilder(self.broker_id, self.prev_image.partitions)
        return self._partitions_builder

    def has_partition_changes(self) -> bool:
        return self._partitions_builder is not None

    def topic_id_to_name(self, topic_id: uuid.UUID) -> Optional[str]:
        if self._partitions_builder is not None:
            return self._partitions_builder.topic_id_to_name(topic_id)
        return self.prev_image.topic_id_to_name(topic_id)

    def controller_id(self, controller_id: Optional[int]) -> None:
        self._controller_id = controller_id

    def brokers_builder(self) -> MetadataBrokersBuilder:
        if self._brokers_builder is None:
            self._brokers_builder = MetadataBrokersBuilder(self.log, self.prev_image.brokers)
        return self._brokers_builder

    def broker(self, broker_id: int) -> Optional[MetadataBroker]:
        if self._brokers_builder is None:
            return self.prev_image.brokers.get(broker_id)
        return self._brokers_builder.get(broker_id)

    def partition(self, topic_name: str, partition_id: int) -> Optional[MetadataPartition]:
        if self._partitions_builder is None:
            return self.prev_image.partitions.topic_partition(topic_name, partition_id)
        return self._partitions_builder.get(topic_name, partition_id)

    def has_changes(self) -> bool:
        return (self._partitions_builder is not None or self._controller_id != self.prev_image.controller_id
                or self._brokers_builder is not None)

    def build(self) -> MetadataImage:
        partitions = (self.prev_image.partitions if self._partitions_builder is None
                      else self._partitions_builder.build())
        return MetadataImage(partitions, self._controller_id, self.brokers())

    def brokers(self) -> MetadataBrokers:
        if self._brokers_builder is None:
            return self.prev_image.brokers
        return self._brokers_builder.build()


__all__ = ["MetadataImage", "MetadataImageBuilder"]
