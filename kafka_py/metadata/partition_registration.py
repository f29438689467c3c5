"""Port of metadata/src/main/java/org/apache/kafka/metadata/PartitionRegistration.java
(Kafka 3.0.0; 2.8.2 keeps the same data as ReplicationControlManager.PartitionControlInfo,
without the adding and removing replicas that reassignment needs).

One partition as the controller holds it: replicas, ISR, the replicas a reassignment is
adding and removing, the leader with its epoch, and the partition epoch, which every
change bumps (AlterIsr's current_isr_version). A PartitionChangeRecord is merged into it;
a leader change bumps the leader epoch too.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord
from kafka_py.metadata.records.partition_record.v0 import PartitionRecord


def election_was_clean(new_leader: int, isr: tuple[int, ...]) -> bool:
    return new_leader == NO_LEADER or new_leader in isr


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int

    @classmethod
    def from_record(cls, record: PartitionRecord) -> PartitionRegistration:
        return cls(tuple(record.replicas), tuple(record.isr),
                   tuple(record.removing_replicas or ()), tuple(record.adding_replicas or ()),
                   int(record.leader), int(record.leader_epoch), int(record.partition_epoch))

    def merge(self, record: PartitionChangeRecord) -> PartitionRegistration:
        def pick(new: tuple[int, ...] | None, old: tuple[int, ...]) -> tuple[int, ...]:
            return old if new is None else tuple(new)

        if record.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = int(record.leader), self.leader_epoch + 1
        return PartitionRegistration(
            pick(record.replicas, self.replicas), pick(record.isr, self.isr),
            pick(record.removing_replicas, self.removing_replicas),
            pick(record.adding_replicas, self.adding_replicas),
            leader, leader_epoch, self.partition_epoch + 1)

    def diff(self, prev: PartitionRegistration) -> str:
        parts = []
        for name in ("replicas", "isr", "removing_replicas", "adding_replicas", "leader",
                     "leader_epoch", "partition_epoch"):
            before, after = getattr(prev, name), getattr(self, name)
            if before != after:
                parts.append(f"{name}: {before} -> {after}")
        return ", ".join(parts)

    def maybe_log_partition_change(self, log: logging.Logger | logging.LoggerAdapter,
                                   description: str, prev: PartitionRegistration) -> None:
        if not election_was_clean(self.leader, prev.isr):
            log.info("UNCLEAN partition change for %s: %s", description, self.diff(prev))
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("partition change for %s: %s", description, self.diff(prev))

    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    def has_preferred_leader(self) -> bool:
        return self.leader == self.preferred_replica()

    def preferred_replica(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    def is_reassigning(self) -> bool:
        return bool(self.removing_replicas or self.adding_replicas)

    def to_record(self, topic_id: uuid.UUID, partition_id: int) -> ApiMessageAndVersion:
        return ApiMessageAndVersion.of(PartitionRecord(
            partition_id=partition_id, topic_id=topic_id, replicas=self.replicas,
            isr=self.isr, removing_replicas=self.removing_replicas,
            adding_replicas=self.adding_replicas, leader=self.leader,
            leader_epoch=self.leader_epoch, partition_epoch=self.partition_epoch))

    def __str__(self) -> str:
        return (f"PartitionRegistration(replicas={list(self.replicas)}, isr={list(self.isr)}, "
                f"removingReplicas={list(self.removing_replicas)}, "
                f"addingReplicas={list(self.adding_replicas)}, leader={self.leader}, "
                f"leaderEpoch={self.leader_epoch}, partitionEpoch={self.partition_epoch})")
