"""Port of metadata/src/main/java/org/apache/kafka/controller/ReplicaPlacer.java (Kafka
3.0.0; 2.8.2's ReplicaPlacementPolicy.createPlacement, with the first partition id added).

How new partitions' replicas are chosen among the usable brokers.
"""
from __future__ import annotations

import abc
from typing import Iterator

from kafka_py.metadata.usable_broker import UsableBroker


class ReplicaPlacer(abc.ABC):
    @abc.abstractmethod
    def place(self, start_partition: int, num_partitions: int, replication_factor: int,
              iterator: Iterator[UsableBroker]) -> list[list[int]]:
        """One replica list per new partition; raises InvalidReplicationFactorException
        when the brokers cannot hold ``replication_factor`` replicas."""
