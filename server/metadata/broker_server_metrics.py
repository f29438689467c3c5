"""Port of core/src/main/scala/kafka/server/metadata/BrokerServerMetrics.scala (Kafka 3.3.1).

How far a KRaft broker has got in the metadata log, as Kafka-metrics attributes of the JMX
bean ``kafka.server:type=broker-metadata-metrics`` (on the Prometheus endpoint
``kafka_server_broker_metadata_metrics_<attribute>``):

* last-applied-record-offset: the offset of the last metadata record the broker applied;
* last-applied-record-timestamp: the time the leader appended that record's batch;
* last-applied-record-lag-ms: now minus that time;
* metadata-load-error-count: records the BrokerMetadataListener could not apply to its image;
* metadata-apply-error-count: failures publishing an applied batch to the broker's
  components (the replica manager's partition changes, config changes).

The BrokerMetadataListener writes the values on its event thread; scrapes read them from
another, so a lock keeps each read whole.
"""
from __future__ import annotations

import threading
from typing import Callable, Optional

from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.core.metrics.yammer import MetricName, MetricsRegistry
from kafka_py.clients.common.utils.time import Time

METRIC_GROUP_NAME = "broker-metadata-metrics"

LAST_APPLIED_RECORD_OFFSET = "last-applied-record-offset"
LAST_APPLIED_RECORD_TIMESTAMP = "last-applied-record-timestamp"
LAST_APPLIED_RECORD_LAG_MS = "last-applied-record-lag-ms"
METADATA_LOAD_ERROR_COUNT = "metadata-load-error-count"
METADATA_APPLY_ERROR_COUNT = "metadata-apply-error-count"


def broker_metadata_metric_name(attribute: str) -> MetricName:
    return MetricName("kafka.server", METRIC_GROUP_NAME, "", None, f"kafka.server:type={METRIC_GROUP_NAME}", (),
                      attribute=attribute)


class BrokerServerMetrics:
    def __init__(self, time: Time = Time.SYSTEM, registry: Optional[MetricsRegistry] = None) -> None:
        self.time = time
        self.registry = registry if registry is not None else default_registry()
        self._lock = threading.Lock()
        self._last_applied_record_offset = 0
        self._last_applied_record_timestamp = 0
        self._metadata_load_error_count = 0
        self._metadata_apply_error_count = 0
        gauges: dict[str, Callable[[], int]] = {
            LAST_APPLIED_RECORD_OFFSET: self.last_applied_record_offset,
            LAST_APPLIED_RECORD_TIMESTAMP: self.last_applied_record_timestamp,
            LAST_APPLIED_RECORD_LAG_MS: lambda: self.time.milliseconds() - self.last_applied_record_timestamp(),
            METADATA_LOAD_ERROR_COUNT: self.metadata_load_error_count,
            METADATA_APPLY_ERROR_COUNT: self.metadata_apply_error_count,
        }
        self._names = [broker_metadata_metric_name(attribute) for attribute in gauges]
        for name, read in zip(self._names, gauges.values()):
            self.registry.new_gauge(name, read)

    def set_last_applied_record(self, offset: int, timestamp: int) -> None:
        with self._lock:
            self._last_applied_record_offset = offset
            self._last_applied_record_timestamp = timestamp

    def last_applied_record_offset(self) -> int:
        with self._lock:
            return self._last_applied_record_offset

    def last_applied_record_timestamp(self) -> int:
        with self._lock:
            return self._last_applied_record_timestamp

    def increment_metadata_load_error_count(self) -> None:
        with self._lock:
            self._metadata_load_error_count += 1

    def metadata_load_error_count(self) -> int:
        with self._lock:
            return self._metadata_load_error_count

    def increment_metadata_apply_error_count(self) -> None:
        with self._lock:
            self._metadata_apply_error_count += 1

    def metadata_apply_error_count(self) -> int:
        with self._lock:
            return self._metadata_apply_error_count

    def close(self) -> None:
        for name in self._names:
            self.registry.remove_metric(name)


__all__ = ["BrokerServerMetrics", "METRIC_GROUP_NAME", "broker_metadata_metric_name"]
