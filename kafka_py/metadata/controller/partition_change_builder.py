"""Port of metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java
(Kafka 3.0.0, which replaced 2.8.2's scattered ISR and leader updates with this one
place; 2.8.2 also never bumped the leader epoch on an ISR shrink).

Works out the PartitionChangeRecord, if any, that takes a partition to a target ISR,
replica list and reassignment state:

* a reassignment completes once every replica being added is in the ISR and some ISR
  member is not being removed: the removed replicas leave the replicas and the ISR;
* a new leader is elected if the current one is not in the target ISR (or, for a
  preferred election, is not the preferred replica): the first target replica that is in
  the ISR and acceptable; failing that, if unclean election is allowed, the first
  acceptable replica at all, and the ISR becomes that replica alone (data may be lost);
* the leader epoch is bumped when the leader changes or when the ISR or the replicas
  lose a member (the leader's fetchers must restart), by setting the record's leader to
  the current one; every change bumps the partition epoch.
"""
from __future__ import annotations

import uuid
from typing import Callable, Sequence

from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.controller import replicas as Replicas
from kafka_py.metadata.leader_constants import NO_LEADER, NO_LEADER_CHANGE
from kafka_py.metadata.partition_registration import PartitionRegistration
from kafka_py.metadata.records.partition_change_record.v0 import PartitionChangeRecord


def change_record_is_no_op(record: PartitionChangeRecord) -> bool:
    return (record.isr is None and record.leader == NO_LEADER_CHANGE
            and record.replicas is None and record.removing_replicas is None
            and record.adding_replicas is None)


class PartitionChangeBuilder:
    def __init__(self, partition: PartitionRegistration, topic_id: uuid.UUID,
                 partition_id: int, is_acceptable_leader: Callable[[int], bool],
                 unclean_election_ok: Callable[[], bool]) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.is_acceptable_leader = is_acceptable_leader
        self.unclean_election_ok = unclean_election_ok
        self.target_isr: list[int] = list(partition.isr)
        self.target_replicas: list[int] = list(partition.replicas)
        self.target_removing: list[int] = list(partition.removing_replicas)
        self.target_adding: list[int] = list(partition.adding_replicas)
        self.always_elect_preferred_if_possible = False

    def set_target_isr(self, target_isr: Sequence[int]) -> PartitionChangeBuilder:
        self.target_isr = list(target_isr)
        return self

    def set_target_replicas(self, target_replicas: Sequence[int]) -> PartitionChangeBuilder:
        self.target_replicas = list(target_replicas)
        return self

    def set_always_elect_preferred_if_possible(self, value: bool) -> PartitionChangeBuilder:
        self.always_elect_preferred_if_possible = value
        return self

    def set_target_removing(self, target_removing: Sequence[int]) -> PartitionChangeBuilder:
        self.target_removing = list(target_removing)
        return self

    def set_target_adding(self, target_adding: Sequence[int]) -> PartitionChangeBuilder:
        self.target_adding = list(target_adding)
        return self

    def should_try_election(self) -> bool:
        # NO_LEADER is never in the ISR, so a leaderless partition always tries
        if self.partition.leader not in self.target_isr:
            return True
        return self.always_elect_preferred_if_possible and not self.partition.has_preferred_leader()

    def _best_leader(self) -> tuple[int, bool]:
        """(leader, unclean)."""
        for replica in self.target_replicas:
            if replica in self.target_isr and self.is_acceptable_leader(replica):
                return replica, False
        if self.unclean_election_ok():
            for replica in self.target_replicas:
                if self.is_acceptable_leader(replica):
                    return replica, True
        return NO_LEADER, False

    def _complete_reassignment_if_needed(self) -> None:
        if not self.target_removing and not self.target_adding:
            return
        new_isr, new_replicas = self.target_isr, self.target_replicas
        if self.target_removing:
            new_isr = [r for r in self.target_isr if r not in self.target_removing]
            if not new_isr:
                return
            new_replicas = [r for r in self.target_replicas if r not in self.target_removing]
            if not new_replicas:
                return
        if any(r not in new_isr for r in self.target_adding):
            return
        self.target_isr, self.target_replicas = new_isr, new_replicas
        self.target_removing, self.target_adding = [], []

    def build(self) -> ApiMessageAndVersion | None:
        """The change record, or None if nothing would change."""
        self._complete_reassignment_if_needed()
        changes: dict = {}
        if self.should_try_election():
            leader, unclean = self._best_leader()
            if leader != self.partition.leader:
                changes["leader"] = leader
                if unclean:
                    # the new leader was not in sync: the ISR is now that leader alone
                    self.target_isr = [leader]
        if "leader" not in changes:
            if (not Replicas.contains(self.target_isr, self.partition.isr)
                    or not Replicas.contains(self.target_replicas, self.partition.replicas)):
                changes["leader"] = self.partition.leader
        if self.target_isr and self.target_isr != list(self.partition.isr):
            changes["isr"] = tuple(self.target_isr)
        if self.target_replicas and self.target_replicas != list(self.partition.replicas):
            changes["replicas"] = tuple(self.target_replicas)
        if self.target_removing != list(self.partition.removing_replicas):
            changes["removing_replicas"] = tuple(self.target_removing)
        if self.target_adding != list(self.partition.adding_replicas):
            changes["adding_replicas"] = tuple(self.target_adding)
        record = PartitionChangeRecord(topic_id=self.topic_id, partition_id=self.partition_id,
                                       **changes)
        if change_record_is_no_op(record):
            return None
        return ApiMessageAndVersion.of(record)
