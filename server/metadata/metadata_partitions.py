"""Port of core/src/main/scala/kafka/server/metadata/MetadataPartitions.scala (Kafka 2.8.2),
with Kafka 3.0.0's merge of a PartitionChangeRecord (its replicas, adding and removing
replicas, which 3.0's reassignment writes).

The partitions of a KRaft broker's MetadataImage, by topic name and partition id, and the
topic id <-> name maps. A ``MetadataPartitionsBuilder`` copies only the per-topic maps it
changes, and remembers which partitions of *this* broker a batch of records changed or
removed (``local_changed``, ``local_removed``): those are what the RaftReplicaManager turns
into leader and follower transitions and log deletions.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Set

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.metadata.leader_constants import NO_LEADER_CHANGE
from kafka_py.clients.common.protocol.requests import LeaderAndIsrPartitionState


@dataclass(frozen=True, slots=True)
class MetadataPartition:
    topic_name: str
    partition_index: int
    leader_id: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    partition_epoch: int
    offline_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @classmethod
    def from_record(cls, name: str, record: Any) -> "MetadataPartition":
        """A PartitionRecord's partition. Offline replicas are not tracked yet (KAFKA-12285)."""
        return cls(name, int(record.partition_id), int(record.leader), int(record.leader_epoch),
                   tuple(int(r) for r in record.replicas), tuple(int(r) for r in record.isr),
                   int(record.partition_epoch), (),
                   tuple(int(r) for r in (record.adding_replicas or ())),
                   tuple(int(r) for r in (record.removing_replicas or ())))

    def to_topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic_name, self.partition_index)

    def to_leader_and_isr_partition_state(self, is_new: bool) -> LeaderAndIsrPartitionState:
        """The state Partition.make_leader / make_follower take; the partition epoch stands in
        for ZooKeeper's zkVersion (it is what AlterIsr's current_isr_version names)."""
        return LeaderAndIsrPartitionState(
            topic_name=self.topic_name, partition_index=self.partition_index, controller_epoch=-1,
            leader=self.leader_id, leader_epoch=self.leader_epoch, isr=self.isr, zk_version=self.partition_epoch,
            replicas=self.replicas, adding_replicas=self.adding_replicas, removing_replicas=self.removing_replicas,
            is_new=is_new)

    def is_replica_for(self, broker_id: int) -> bool:
        return broker_id in self.replicas

    def merge(self, record: Any) -> "MetadataPartition":
        """This partition after a PartitionChangeRecord: a new leader bumps the leader epoch,
        every change bumps the partition epoch; absent fields keep their values."""
        if int(record.leader) == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader_id, self.leader_epoch
        else:
            leader, leader_epoch = int(record.leader), self.leader_epoch + 1

        def pick(new: Optional[Iterable[int]], old: tuple[int, ...]) -> tuple[int, ...]:
            return old if new is None else tuple(int(r) for r in new)

        return MetadataPartition(
            self.topic_name, self.partition_index, leader, leader_epoch,
            pick(getattr(record, "replicas", None), self.replicas), pick(record.isr, self.isr),
            self.partition_epoch + 1, self.offline_replicas,
            pick(getattr(record, "adding_replicas", None), self.adding_replicas),
            pick(getattr(record, "removing_replicas", None), self.removing_replicas))


class MetadataPartitionsBuilder:
    """The partitions of the next image, and this broker's share of the changes."""

    def __init__(self, broker_id: int, prev_partitions: "MetadataPartitions") -> None:
        self.broker_id = broker_id
        self.prev_partitions = prev_partitions
        self._new_name_map: dict[str, dict[int, MetadataPartition]] = prev_partitions.copy_name_map()
        self._new_id_map: dict[uuid.UUID, str] = prev_partitions.copy_id_map()
        self._new_reverse_id_map: dict[str, uuid.UUID] = prev_partitions.copy_reverse_id_map()
        # the per-topic maps this builder made (by identity): only those may be changed in place
        self._changed: dict[int, dict[int, MetadataPartition]] = {}
        self._local_changed: set[MetadataPartition] = set()
        self._local_removed: set[MetadataPartition] = set()

    def topic_id_to_name(self, topic_id: uuid.UUID) -> Optional[str]:
        return self._new_id_map.get(topic_id)

    def topic_name_to_id(self, name: str) -> Optional[uuid.UUID]:
        return self._new_reverse_id_map.get(name)

    def remove_topic_by_id(self, topic_id: uuid.UUID) -> list[MetadataPartition]:
        name = self._new_id_map.pop(topic_id, None)
        if name is None:
            raise RuntimeError(f"Unable to locate topic with ID {topic_id}")
        self._new_reverse_id_map.pop(name, None)
        prev_partition_map = self._new_name_map.pop(name, None)
        if prev_partition_map is None:
            return []
        self._changed.pop(id(prev_partition_map), None)
        removed = list(prev_partition_map.values())
        if self._prev_image_has_topic_id(topic_id):
            self._local_removed.update(p for p in removed if p.is_replica_for(self.broker_id))
        else:
            # created and removed within this batch: nothing to tell the replica manager
            self._local_changed.difference_update(p for p in removed if p.is_replica_for(self.broker_id))
        return removed

    def handle_change(self, record: Any) -> None:
        name = self.topic_id_to_name(record.topic_id)
        if name is None:
            raise RuntimeError(f"Unable to locate topic with ID {record.topic_id}")
        partition_map = self._new_name_map.get(name)
        if partition_map is None:
            raise RuntimeError(f"Unable to locate topic with name {name}")
        partition = partition_map.get(int(record.partition_id))
        if partition is None:
            raise RuntimeError(f"Unable to locate {name}-{record.partition_id}")
        self.set(partition.merge(record))

    def add_uuid_mapping(self, name: str, topic_id: uuid.UUID) -> None:
        self._new_id_map[topic_id] = name
        self._new_reverse_id_map[name] = topic_id

    def remove_uuid_mapping(self, topic_id: uuid.UUID) -> None:
        name = self._new_id_map.pop(topic_id, None)
        if name is not None:
            self._new_reverse_id_map.pop(name, None)

    def get(self, topic_name: str, partition_id: int) -> Optional[MetadataPartition]:
        partition_map = self._new_name_map.get(topic_name)
        return None if partition_map is None else partition_map.get(partition_id)

    def _writable_partition_map(self, topic_name: str) -> dict[int, MetadataPartition]:
        prev = self._new_name_map.get(topic_name)
        if prev is not None and id(prev) in self._changed:
            return prev
        new_map = {} if prev is None else dict(prev)
        self._changed[id(new_map)] = new_map
        self._new_name_map[topic_name] = new_map
        return new_map

    def set(self, partition: MetadataPartition) -> None:
        partition_map = self._writable_partition_map(partition.topic_name)
        prev_partition = partition_map.get(partition.partition_index)
        partition_map[partition.partition_index] = partition
        if partition.is_replica_for(self.broker_id):
            self._local_changed.add(partition)
        elif prev_partition is not None:
            # reassigned away from this broker
            self._maybe_add_to_local_removed(prev_partition)

    def _maybe_add_to_local_removed(self, partition: MetadataPartition) -> None:
        if not partition.is_replica_for(self.broker_id):
            return
        current_topic_id = self._new_reverse_id_map.get(partition.topic_name)
        if current_topic_id is not None:
            prev_image_has_topic = self._prev_image_has_topic_id(current_topic_id)
        else:
            prev_image_has_topic = partition.topic_name in self.prev_partitions.all_topic_names()
        if prev_image_has_topic:
            self._local_removed.add(partition)

    def _prev_image_has_topic_id(self, topic_id: uuid.UUID) -> bool:
        return self.prev_partitions.topic_id_to_name(topic_id) is not None

    def remove(self, topic_name: str, partition_id: int) -> None:
        if topic_name not in self._new_name_map:
            return
        partition_map = self._writable_partition_map(topic_name)
        removed = partition_map.pop(partition_id, None)
        if removed is not None:
            self._maybe_add_to_local_removed(removed)

    def build(self) -> "MetadataPartitions":
        result = MetadataPartitions(self._new_name_map, self._new_id_map, self._new_reverse_id_map)
        # the image owns these maps now; should the builder be used again it starts from copies
        self._new_name_map = dict(self._new_name_map)
        self._new_id_map = dict(self._new_id_map)
        self._new_reverse_id_map = dict(self._new_reverse_id_map)
        self._changed = {}
        return result

    def local_changed(self) -> Set[MetadataPartition]:
        return self._local_changed

    def local_removed(self) -> Set[MetadataPartition]:
        return self._local_removed


class MetadataPartitions:
    """Every partition by topic name and id, and the topic ids; never changed once built."""

    __slots__ = ("_name_map", "_id_map", "_reverse_id_map")

    def __init__(self, name_map: Mapping[str, Mapping[int, MetadataPartition]], id_map: Mapping[uuid.UUID, str],
                 reverse_id_map: Optional[Mapping[str, uuid.UUID]] = None) -> None:
        self._name_map = name_map
        self._id_map = id_map
        self._reverse_id_map = reverse_id_map if reverse_id_map is not None else {n: i for i, n in id_map.items()}

    @classmethod
    def empty(cls) -> "MetadataPartitions":
        return cls({}, {}, {})

    def topic_id_to_name(self, topic_id: uuid.UUID) -> Optional[str]:
        return self._id_map.get(topic_id)

    def topic_name_to_id(self, name: str) -> Optional[uuid.UUID]:
        return self._reverse_id_map.get(name)

    def copy_name_map(self) -> dict[str, dict[int, MetadataPartition]]:
        # one level: the per-topic maps are shared until a builder changes one
        return dict(self._name_map)  # type: ignore[arg-type]

    def copy_id_map(self) -> dict[uuid.UUID, str]:
        return dict(self._id_map)

    def copy_reverse_id_map(self) -> dict[str, uuid.UUID]:
        return dict(self._reverse_id_map)

    def all_partitions(self) -> Iterator[MetadataPartition]:
        for partition_map in self._name_map.values():
            yield from partition_map.values()

    def all_topic_names(self) -> frozenset[str]:
        return frozenset(self._name_map)

    def num_topic_partitions(self, topic_name: str) -> Optional[int]:
        partition_map = self._name_map.get(topic_name)
        return None if partition_map is None else len(partition_map)

    def topic_partitions(self, topic_name: str) -> Iterator[MetadataPartition]:
        partition_map = self._name_map.get(topic_name)
        return iter(()) if partition_map is None else iter(partition_map.values())

    def topic_partition(self, topic_name: str, partition_id: int) -> Optional[MetadataPartition]:
        partition_map = self._name_map.get(topic_name)
        return None if partition_map is None else partition_map.get(partition_id)

    def contains(self, topic_name: str) -> bool:
        return topic_name in self._name_map

    def __repr__(self) -> str:
        return f"MetadataPartitions({ {t: len(m) for t, m in self._name_map.items()} })"


__all__ = ["MetadataPartition", "MetadataPartitionsBuilder", "MetadataPartitions"]
