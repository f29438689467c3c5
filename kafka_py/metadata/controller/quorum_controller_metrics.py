"""Port of metadata/src/main/java/org/apache/kafka/controller/QuorumControllerMetrics.java
(Kafka 3.0.0, with the gauges Kafka 3.3.1 added).

The KIP-631 controller metrics in a Yammer registry, under the ZooKeeper controller's
names so dashboards keep working: kafka.controller:type=KafkaController,name=
ActiveControllerCount / GlobalTopicCount / GlobalPartitionCount / OfflinePartitionsCount /
PreferredReplicaImbalanceCount (gauges) and kafka.controller:type=ControllerEventManager,
name=EventQueueTimeMs / EventQueueProcessingTimeMs (histograms). Kafka 3.0 fed the
processing time into the queue-time histogram by mistake; here each goes to its own.

Kafka 3.3.1's gauges, also under type=KafkaController: FencedBrokerCount and
ActiveBrokerCount (registered brokers fenced and not), LastAppliedRecordOffset and
LastAppliedRecordTimestamp (the active controller's newest write, uncommitted included, with
the time it was handed to the log; a standby's last committed record and its append time),
LastCommittedRecordOffset, and LastAppliedRecordLagMs (now minus that timestamp).

The values are written by the controller thread and read by whoever reads the registry;
a lock makes each read see a whole write.
"""
from __future__ import annotations

import threading

from kafka_py.metadata.controller.controller_metrics import ControllerMetrics
from kafka_py.core.metrics.kafka_metrics_group import default_registry, explicit_metric_name
from kafka_py.core.metrics.yammer import MetricName, MetricsRegistry
from kafka_py.clients.common.utils.time import Time

_GROUP = "kafka.controller"


def _metric_name(type_name: str, name: str) -> MetricName:
    return explicit_metric_name(_GROUP, type_name, name)


ACTIVE_CONTROLLER_COUNT = _metric_name("KafkaController", "ActiveControllerCount")
EVENT_QUEUE_TIME_MS = _metric_name("ControllerEventManager", "EventQueueTimeMs")
EVENT_QUEUE_PROCESSING_TIME_MS = _metric_name("ControllerEventManager",
                                              "EventQueueProcessingTimeMs")
GLOBAL_TOPIC_COUNT = _metric_name("KafkaController", "GlobalTopicCount")
GLOBAL_PARTITION_COUNT = _metric_name("KafkaController", "GlobalPartitionCount")
OFFLINE_PARTITION_COUNT = _metric_name("KafkaController", "OfflinePartitionsCount")
PREFERRED_REPLICA_IMBALANCE_COUNT = _metric_name("KafkaController",
                                                 "PreferredReplicaImbalanceCount")
FENCED_BROKER_COUNT = _metric_name("KafkaController", "FencedBrokerCount")
ACTIVE_BROKER_COUNT = _metric_name("KafkaController", "ActiveBrokerCount")
LAST_APPLIED_RECORD_OFFSET = _metric_name("KafkaController", "LastAppliedRecordOffset")
LAST_COMMITTED_RECORD_OFFSET = _metric_name("KafkaController", "LastCommittedRecordOffset")
LAST_APPLIED_RECORD_TIMESTAMP = _metric_name("KafkaController", "LastAppliedRecordTimestamp")
LAST_APPLIED_RECORD_LAG_MS = _metric_name("KafkaController", "LastAppliedRecordLagMs")

ALL_METRIC_NAMES = (ACTIVE_CONTROLLER_COUNT, EVENT_QUEUE_TIME_MS,
                    EVENT_QUEUE_PROCESSING_TIME_MS, GLOBAL_TOPIC_COUNT, GLOBAL_PARTITION_COUNT,
                    OFFLINE_PARTITION_COUNT, PREFERRED_REPLICA_IMBALANCE_COUNT,
                    FENCED_BROKER_COUNT, ACTIVE_BROKER_COUNT, LAST_APPLIED_RECORD_OFFSET,
                    LAST_COMMITTED_RECORD_OFFSET, LAST_APPLIED_RECORD_TIMESTAMP,
                    LAST_APPLIED_RECORD_LAG_MS)


class QuorumControllerMetrics(ControllerMetrics):
    def __init__(self, registry: MetricsRegistry | None = None, time: Time | None = None) -> None:
        self.registry = registry if registry is not None else default_registry()
        self.time = time if time is not None else Time.SYSTEM
        self._lock = threading.Lock()
        self._active = False
        self._global_topic_count = 0
        self._global_partition_count = 0
        self._offline_partition_count = 0
        self._preferred_replica_imbalance_count = 0
        self._fenced_broker_count = 0
        self._active_broker_count = 0
        self._last_applied_record_offset = 0
        self._last_committed_record_offset = 0
        self._last_applied_record_timestamp = 0
        self.registry.new_gauge(ACTIVE_CONTROLLER_COUNT, lambda: 1 if self.active() else 0)
        self._event_queue_time = self.registry.new_histogram(EVENT_QUEUE_TIME_MS)
        self._event_queue_processing_time = self.registry.new_histogram(
            EVENT_QUEUE_PROCESSING_TIME_MS)
        self.registry.new_gauge(GLOBAL_TOPIC_COUNT, self.global_topics_count)
        self.registry.new_gauge(GLOBAL_PARTITION_COUNT, self.global_partition_count)
        self.registry.new_gauge(OFFLINE_PARTITION_COUNT, self.offline_partition_count)
        self.registry.new_gauge(PREFERRED_REPLICA_IMBALANCE_COUNT,
                                self.preferred_replica_imbalance_count)
        self.registry.new_gauge(FENCED_BROKER_COUNT, self.fenced_broker_count)
        self.registry.new_gauge(ACTIVE_BROKER_COUNT, self.active_broker_count)
        self.registry.new_gauge(LAST_APPLIED_RECORD_OFFSET, self.last_applied_record_offset)
        self.registry.new_gauge(LAST_COMMITTED_RECORD_OFFSET, self.last_committed_record_offset)
        self.registry.new_gauge(LAST_APPLIED_RECORD_TIMESTAMP, self.last_applied_record_timestamp)
        self.registry.new_gauge(LAST_APPLIED_RECORD_LAG_MS,
                                lambda: self.time.milliseconds() - self.last_applied_record_timestamp())

    def set_active(self, active: bool) -> None:
        with self._lock:
            self._active = active

    def active(self) -> bool:
        with self._lock:
            return self._active

    def update_event_queue_time(self, duration_ms: int) -> None:
        self._event_queue_time.update(duration_ms)

    def update_event_queue_processing_time(self, duration_ms: int) -> None:
        self._event_queue_processing_time.update(duration_ms)

    def set_global_topics_count(self, topic_count: int) -> None:
        with self._lock:
            self._global_topic_count = topic_count

    def global_topics_count(self) -> int:
        with self._lock:
            return self._global_topic_count

    def set_global_partition_count(self, partition_count: int) -> None:
        with self._lock:
            self._global_partition_count = partition_count

    def global_partition_count(self) -> int:
        with self._lock:
            return self._global_partition_count

    def set_offline_partition_count(self, offline_partitions: int) -> None:
        with self._lock:
            self._offline_partition_count = offline_partitions

    def offline_partition_count(self) -> int:
        with self._lock:
            return self._offline_partition_count

    def set_preferred_replica_imbalance_count(self, replica_imbalances: int) -> None:
        with self._lock:
            self._preferred_replica_imbalance_count = replica_imbalances

    def preferred_replica_imbalance_count(self) -> int:
        with self._lock:
            return self._preferred_replica_imbalance_count

    def set_fenced_broker_count(self, broker_count: int) -> None:
        with self._lock:
            self._fenced_broker_count = broker_count

    def fenced_broker_count(self) -> int:
        with self._lock:
            return self._fenced_broker_count

    def set_active_broker_count(self, broker_count: int) -> None:
        with self._lock:
            self._active_broker_count = broker_count

    def active_broker_count(self) -> int:
        with self._lock:
            return self._active_broker_count

    def set_last_applied_record_offset(self, offset: int) -> None:
        with self._lock:
            self._last_applied_record_offset = offset

    def last_applied_record_offset(self) -> int:
        with self._lock:
            return self._last_applied_record_offset

    def set_last_committed_record_offset(self, offset: int) -> None:
        with self._lock:
            self._last_committed_record_offset = offset

    def last_committed_record_offset(self) -> int:
        with self._lock:
            return self._last_committed_record_offset

    def set_last_applied_record_timestamp(self, timestamp: int) -> None:
        with self._lock:
            self._last_applied_record_timestamp = timestamp

    def last_applied_record_timestamp(self) -> int:
        with self._lock:
            return self._last_applied_record_timestamp

    def close(self) -> None:
        for name in ALL_METRIC_NAMES:
            self.registry.remove_metric(name)
