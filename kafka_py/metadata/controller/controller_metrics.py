"""Port of metadata/src/main/java/org/apache/kafka/controller/ControllerMetrics.java
(Kafka 3.0.0, which adds the topic, partition, offline and imbalance counts, and Kafka 3.3.1,
which adds the fenced and active broker counts and the last applied and committed records).

What the quorum controller reports about itself. MockControllerMetrics in the tests and
QuorumControllerMetrics (Yammer metrics under Kafka's JMX names) implement it.
"""
from __future__ import annotations

import abc


class ControllerMetrics(abc.ABC):
    @abc.abstractmethod
    def set_active(self, active: bool) -> None: ...

    @abc.abstractmethod
    def active(self) -> bool: ...

    @abc.abstractmethod
    def update_event_queue_time(self, duration_ms: int) -> None: ...

    @abc.abstractmethod
    def update_event_queue_processing_time(self, duration_ms: int) -> None: ...

    @abc.abstractmethod
    def set_global_topics_count(self, topic_count: int) -> None: ...

    @abc.abstractmethod
    def global_topics_count(self) -> int: ...

    @abc.abstractmethod
    def set_global_partition_count(self, partition_count: int) -> None: ...

    @abc.abstractmethod
    def global_partition_count(self) -> int: ...

    @abc.abstractmethod
    def set_offline_partition_count(self, offline_partitions: int) -> None: ...

    @abc.abstractmethod
    def offline_partition_count(self) -> int: ...

    @abc.abstractmethod
    def set_preferred_replica_imbalance_count(self, replica_imbalances: int) -> None: ...

    @abc.abstractmethod
    def preferred_replica_imbalance_count(self) -> int: ...

    @abc.abstractmethod
    def set_fenced_broker_count(self, broker_count: int) -> None: ...

    @abc.abstractmethod
    def fenced_broker_count(self) -> int: ...

    @abc.abstractmethod
    def set_active_broker_count(self, broker_count: int) -> None: ...

    @abc.abstractmethod
    def active_broker_count(self) -> int: ...

    @abc.abstractmethod
    def set_last_applied_record_offset(self, offset: int) -> None: ...

    @abc.abstractmethod
    def last_applied_record_offset(self) -> int: ...

    @abc.abstractmethod
    def set_last_committed_record_offset(self, offset: int) -> None: ...

    @abc.abstractmethod
    def last_committed_record_offset(self) -> int: ...

    @abc.abstractmethod
    def set_last_applied_record_timestamp(self, timestamp: int) -> None: ...

    @abc.abstractmethod
    def last_applied_record_timestamp(self) -> int: ...

    def close(self) -> None:
        pass
