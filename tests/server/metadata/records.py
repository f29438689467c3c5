"""Metadata record builders for the broker-side KRaft tests."""
from __future__ import annotations

import uuid
from typing import Optional, Sequence

from kafka_py.metadata.records.config_record.v0 import ConfigRecord
from kafka_py.metadata.records.fence_broker_record.v0 import FenceBrokerRecord
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord
from kafka_py.metadata.records.partition_record.v0 import PartitionRecord
from kafka_py.metadata.records.quota_record.v0 import EntityData, QuotaRecord
from kafka_py.metadata.records.register_broker_record.v0 import BrokerEndpoint, RegisterBrokerRecord
from kafka_py.metadata.records.remove_topic_record.v0 import RemoveTopicRecord
from kafka_py.metadata.records.topic_record.v0 import TopicRecord
from kafka_py.metadata.records.unfence_broker_record.v0 import UnfenceBrokerRecord
from kafka_py.metadata.records.unregister_broker_record.v0 import UnregisterBrokerRecord


def register_broker(broker_id: int, port: int, epoch: int = 0, host: str = "localhost",
                    listener: str = "PLAINTEXT", rack: Optional[str] = None) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, incarnation_id=uuid.uuid4(), broker_epoch=epoch,
                                end_points=(BrokerEndpoint(name=listener, host=host, port=port,
                                                           security_protocol=0),),
                                features=(), rack=rack)


def unfence(broker_id: int, epoch: int = 0) -> UnfenceBrokerRecord:
    return UnfenceBrokerRecord(id=broker_id, epoch=epoch)


def fence(broker_id: int, epoch: int = 0) -> FenceBrokerRecord:
    return FenceBrokerRecord(id=broker_id, epoch=epoch)


def unregister(broker_id: int, epoch: int = 0) -> UnregisterBrokerRecord:
    return UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=epoch)


def topic(name: str, topic_id: uuid.UUID) -> TopicRecord:
    return TopicRecord(name=name, topic_id=topic_id)


def partition(topic_id: uuid.UUID, partition_id: int, replicas: Sequence[int], leader: int,
              isr: Optional[Sequence[int]] = None, leader_epoch: int = 0, partition_epoch: int = 0) -> PartitionRecord:
    return PartitionRecord(partition_id=partition_id, topic_id=topic_id, replicas=tuple(replicas),
                           isr=tuple(replicas if isr is None else isr), removing_replicas=(),
                           adding_replicas=(), leader=leader, leader_epoch=leader_epoch,
                           partition_epoch=partition_epoch)


def partition_change(topic_id: uuid.UUID, partition_id: int, leader: int = -2,
                     isr: Optional[Sequence[int]] = None,
                     replicas: Optional[Sequence[int]] = None) -> PartitionChangeRecord:
    return PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, leader=leader,
                                 isr=None if isr is None else tuple(isr),
                                 replicas=None if replicas is None else tuple(replicas))


def remove_topic(topic_id: uuid.UUID) -> RemoveTopicRecord:
    return RemoveTopicRecord(topic_id=topic_id)


def config(resource_type: int, resource_name: str, name: str, value: Optional[str]) -> ConfigRecord:
    return ConfigRecord(resource_type=resource_type, resource_name=resource_name, name=name, value=value)


def quota(entity: dict, key: str, value: float, remove: bool = False) -> QuotaRecord:
    return QuotaRecord(entity=tuple(EntityData(entity_type=t, entity_name=n) for t, n in entity.items()),
                       key=key, value=value, remove=remove)
