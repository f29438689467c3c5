"""Port of metadata/src/main/java/org/apache/kafka/controller/BrokersToIsrs.java
(Kafka 3.0.0, which adds the count of offline partitions).

For each broker, the partitions whose ISR it is in, and which of those it leads: what
fencing a broker, a controlled shutdown or a leaderless partition need to find without
scanning every partition. Each broker maps topic ids to tuples of partition ids; the
high bit of an entry marks the broker as that partition's leader (partition ids are
never negative). Partitions with no leader are filed under broker NO_LEADER (-1),
always with the leader bit, so the leaderless ones can be listed the same way.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Iterator, Sequence

from kafka_py.metadata.leader_constants import NO_LEADER
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.timeline.timeline_integer import TimelineInteger

LEADER_FLAG = 0x8000_0000
REPLICA_MASK = 0x7FFF_FFFF


@dataclass(frozen=True, slots=True)
class TopicIdPartition:
    topic_id: uuid.UUID
    partition_id: int

    def __str__(self) -> str:
        return f"{self.topic_id}:{self.partition_id}"


class BrokersToIsrs:
    def __init__(self, snapshot_registry: SnapshotRegistry) -> None:
        self.snapshot_registry = snapshot_registry
        self._isr_members: TimelineHashMap[int, TimelineHashMap[uuid.UUID, tuple[int, ...]]] = \
            TimelineHashMap(snapshot_registry)
        self._offline_partition_count = TimelineInteger(snapshot_registry)

    def update(self, topic_id: uuid.UUID, partition_id: int, prev_isr: Sequence[int] | None,
               next_isr: Sequence[int] | None, prev_leader: int, next_leader: int) -> None:
        """Move a partition from its previous ISR and leader (None: a new partition) to its
        next ones (None: a removed partition)."""
        if prev_isr is None:
            prev: list[int] = []
        else:
            prev = list(prev_isr)
            if prev_leader == NO_LEADER:
                prev.append(NO_LEADER)
                if next_isr is None or next_leader != NO_LEADER:
                    self._offline_partition_count.decrement()
            prev.sort()
        if next_isr is None:
            nxt: list[int] = []
        else:
            nxt = list(next_isr)
            if next_leader == NO_LEADER:
                nxt.append(NO_LEADER)
                # (Kafka counts only a leader lost, not a partition created leaderless)
                if prev_isr is None or prev_leader != NO_LEADER:
                    self._offline_partition_count.increment()
            nxt.sort()
        # a merge of the two sorted lists: drop what left, add what came, re-flag the rest
        i = j = 0
        while i < len(prev) or j < len(nxt):
            if i == len(prev) or (j < len(nxt) and nxt[j] < prev[i]):
                self._add(nxt[j], topic_id, partition_id, nxt[j] == next_leader)
                j += 1
            elif j == len(nxt) or prev[i] < nxt[j]:
                self._remove(prev[i], topic_id, partition_id, prev[i] == prev_leader)
                i += 1
            else:
                replica = prev[i]
                was_leader = replica == prev_leader
                is_leader = replica == next_leader
                if was_leader != is_leader:
                    self._change(replica, topic_id, partition_id, was_leader, is_leader)
                i += 1
                j += 1

    def remove_topic_entry_for_broker(self, topic_id: uuid.UUID, broker_id: int) -> None:
        topic_map = self._isr_members.get(broker_id)
        if topic_map is not None:
            partitions = topic_map.get(topic_id)
            if partitions is None:
                return
            if broker_id == NO_LEADER:
                self._offline_partition_count.set(
                    self._offline_partition_count.get() - len(partitions))
            topic_map.remove(topic_id)
            if topic_map.is_empty():
                self._isr_members.remove(broker_id)

    def _topic_map(self, broker_id: int, create: bool
                   ) -> TimelineHashMap[uuid.UUID, tuple[int, ...]] | None:
        topic_map = self._isr_members.get(broker_id)
        if topic_map is None and create:
            topic_map = TimelineHashMap(self.snapshot_registry)
            self._isr_members.put(broker_id, topic_map)
        return topic_map

    def _add(self, broker_id: int, topic_id: uuid.UUID, partition: int, leader: bool) -> None:
        entry = partition | LEADER_FLAG if leader else partition
        topic_map = self._topic_map(broker_id, True)
        topic_map.put(topic_id, topic_map.get(topic_id, ()) + (entry,))

    def _existing(self, broker_id: int, topic_id: uuid.UUID, what: str):
        topic_map = self._topic_map(broker_id, False)
        if topic_map is None:
            raise RuntimeError(f"Broker {broker_id} has no isrMembers entry, so we can't "
                               f"{what} {topic_id}")
        partitions = topic_map.get(topic_id)
        if partitions is None:
            raise RuntimeError(f"Broker {broker_id} has no entry in isrMembers for topic "
                               f"{topic_id}")
        return topic_map, partitions

    def _change(self, broker_id: int, topic_id: uuid.UUID, partition: int,
                was_leader: bool, is_leader: bool) -> None:
        topic_map, partitions = self._existing(broker_id, topic_id, "change")
        target = partition | LEADER_FLAG if was_leader else partition
        replacement = partition | LEADER_FLAG if is_leader else partition
        topic_map.put(topic_id, tuple(replacement if p == target else p for p in partitions))

    def _remove(self, broker_id: int, topic_id: uuid.UUID, partition: int,
                leader: bool) -> None:
        topic_map, partitions = self._existing(broker_id, topic_id, "remove")
        removed = partition | LEADER_FLAG if leader else partition
        if removed not in partitions:
            raise RuntimeError(f"Broker {broker_id} has no entry in isrMembers for "
                               f"{topic_id}:{partition}")
        remaining = tuple(p for p in partitions if p != removed)
        if remaining:
            topic_map.put(topic_id, remaining)
        else:
            topic_map.remove(topic_id)
            if topic_map.is_empty():
                self._isr_members.remove(broker_id)

    def iterator(self, broker_id: int, leaders_only: bool) -> Iterator[TopicIdPartition]:
        """The partitions whose ISR ``broker_id`` is in (or that it leads). A snapshot of the
        current state, so the caller may change the ISRs while it walks."""
        topic_map = self._isr_members.get(broker_id)
        if topic_map is None:
            return iter(())
        result = []
        for topic_id, partitions in topic_map.items():
            for entry in partitions:
                if not leaders_only or entry & LEADER_FLAG:
                    result.append(TopicIdPartition(topic_id, entry & REPLICA_MASK))
        return iter(result)

    def partitions_with_no_leader(self) -> Iterator[TopicIdPartition]:
        return self.iterator(NO_LEADER, True)

    def partitions_led_by_broker(self, broker_id: int) -> Iterator[TopicIdPartition]:
        return self.iterator(broker_id, True)

    def partitions_with_broker_in_isr(self, broker_id: int) -> Iterator[TopicIdPartition]:
        return self.iterator(broker_id, False)

    def has_leaderships(self, broker_id: int) -> bool:
        return next(self.iterator(broker_id, True), None) is not None

    def offline_partition_count(self) -> int:
        return self._offline_partition_count.get()
