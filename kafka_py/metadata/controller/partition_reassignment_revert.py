"""Port of metadata/src/main/java/org/apache/kafka/controller/PartitionReassignmentRevert.java
(Kafka 3.0.0).

The replicas and ISR a partition returns to when its reassignment is cancelled: without
the replicas it was adding, keeping the ones it was removing. If every ISR member was
being added, the first remaining replica becomes the ISR alone: an unclean election,
which the caller allows only where unclean leader election is enabled.
"""
from __future__ import annotations

from dataclasses import dataclass

from kafka_py.clients.common.errors import InvalidReplicaAssignmentException
from kafka_py.metadata.partition_registration import PartitionRegistration


@dataclass(frozen=True, slots=True)
class PartitionReassignmentRevert:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    unclean: bool

    @classmethod
    def of(cls, registration: PartitionRegistration) -> PartitionReassignmentRevert:
        adding = set(registration.adding_replicas)
        isr = tuple(r for r in registration.isr if r not in adding)
        replicas = tuple(r for r in registration.replicas if r not in adding)
        if isr:
            return cls(replicas, isr, False)
        if not replicas:
            # only reachable if the partition had no replicas before the reassignment
            raise InvalidReplicaAssignmentException(
                "Invalid replica assignment: addingReplicas contains all replicas.")
        return cls(replicas, (replicas[0],), True)
