"""Port of core/src/main/scala/kafka/server/ReplicationQuotaManager.scala (Kafka 2.8.2): the
byte-rate throttles of replication traffic used while partitions are reassigned.

A broker keeps three of them (server/quota_factory.py):

* ``leader``: bytes this broker sends to followers, bounded by the per-broker dynamic config
  ``leader.replication.throttled.rate``; it applies to the partitions the topic config
  ``leader.replication.throttled.replicas`` lists with this broker's id;
* ``follower``: bytes this broker's replica fetchers receive, bounded by
  ``follower.replication.throttled.rate``, for the replicas of
  ``follower.replication.throttled.replicas`` on this broker;
* ``alter_log_dirs``: bytes copied between this broker's log dirs,
  ``replica.alter.log.dirs.io.max.bytes.per.second``.

The bound is measured over ``replication.quota.window.num`` windows of
``replication.quota.window.size.seconds`` with Kafka's SimpleRate. Every byte of a throttled
partition is recorded (``record``), in or out of the ISR, so the total stays within the rate;
but only a replica *out* of the ISR is held back while the rate is over its bound (the leader
answers it without data, the follower leaves it out of its next fetch: see
ReplicaManager.should_leader_throttle and ReplicaFetcherThread._should_follower_throttle),
so a throttle never pushes an in-sync replica out of the ISR.

Both the bound (``update_quota``) and the throttled partitions (``mark_throttled``,
``remove_throttle``) change at runtime, from the DynamicConfigManager's handlers
(server/config_handler.py).

The measured rate is the ``byte-rate`` attribute of ``kafka.server:type=LeaderReplication``
(``FollowerReplication``, ``AlterLogDirsReplication``) in the broker's metrics registry, as
Kafka's JmxReporter names it.
"""
from __future__ import annotations

import abc
import logging
import threading
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from kafka_py.clients.common.sensor import KafkaMetric, MetricConfig, Quota, QuotaViolationException, Sensor, SimpleRate
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

#: ReplicationQuotaManagerConfig.QuotaBytesPerSecondDefault: no throttle (Long.MaxValue).
QUOTA_BYTES_PER_SECOND_DEFAULT = LONG_MAX
#: 10 whole windows and the current one.
DEFAULT_NUM_QUOTA_SAMPLES = 11
DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1

#: Constants.AllReplicas: the marker for "every partition of the topic" (a ``*`` config).
ALL_REPLICAS: tuple[int, ...] = (-1,)

# QuotaType names of the three managers (QuotaFactory.QuotaType).
LEADER_REPLICATION = "LeaderReplication"
FOLLOWER_REPLICATION = "FollowerReplication"
ALTER_LOG_DIRS_REPLICATION = "AlterLogDirsReplication"


class ReplicaQuota(abc.ABC):
    """Kafka's ReplicaQuota trait: what the ReplicaManager, DelayedFetch and the replica
    fetchers ask of a replication throttle. QuotaFactory's UNBOUNDED_QUOTA never throttles."""

    @abc.abstractmethod
    def record(self, value: int) -> None: ...

    @abc.abstractmethod
    def is_throttled(self, topic_partition: TopicPartition) -> bool: ...

    @abc.abstractmethod
    def is_quota_exceeded(self) -> bool: ...


@dataclass(frozen=True)
class ReplicationQuotaManagerConfig:
    quota_bytes_per_second_default: int = QUOTA_BYTES_PER_SECOND_DEFAULT
    num_quota_samples: int = DEFAULT_NUM_QUOTA_SAMPLES
    quota_window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS


class ReplicationQuotaManager(ReplicaQuota):
    """Tracks the byte rate of throttled replication traffic against one bound (see module doc)."""

    def __init__(self, config: ReplicationQuotaManagerConfig, replication_type: str,
                 time: Time = Time.SYSTEM) -> None:
        self.config = config
        self.replication_type = replication_type
        self.time = time
        self._lock = threading.Lock()
        # topic -> throttled partition ids (or ALL_REPLICAS). Copy-on-write: writers build a new
        # dict under the lock and publish it; readers (every fetch) take the current one.
        self._throttled_partitions: Mapping[str, tuple[int, ...]] = {}
        self._quota: Optional[Quota] = None
        self._sensor = Sensor(f"{replication_type}")
        self._rate_metric = self._sensor.add(KafkaMetric("byte-rate", SimpleRate(), self._quota_metric_config(None)))
        self._gauge_name = _byte_rate_metric_name(replication_type)
        self._gauge = self._register_gauge()

    def _register_gauge(self):
        from kafka_py.core.metrics.kafka_metrics_group import default_registry

        registry = default_registry()
        # the newest manager of its type counts (one broker per process)
        registry.remove_metric(self._gauge_name)
        return registry.new_gauge(self._gauge_name, self.byte_rate)

    def _quota_metric_config(self, quota: Optional[Quota]) -> MetricConfig:
        return MetricConfig(samples=self.config.num_quota_samples,
                            time_window_ms=self.config.quota_window_size_seconds * 1000, quota=quota)

    # -- the bound ------------------------------------------------------------------------------

    def update_quota(self, quota: Optional[Quota]) -> None:
        """A new bound (None: none); the rate measured so far is kept."""
        with self._lock:
            self._quota = quota
            self._sensor.set_metric_config(self._rate_metric, self._quota_metric_config(quota))

    @property
    def upper_bound(self) -> int:
        """The bound in bytes per second (Long.MaxValue without one)."""
        with self._lock:
            quota = self._quota
        if quota is None or quota.bound >= QUOTA_BYTES_PER_SECOND_DEFAULT:
            return QUOTA_BYTES_PER_SECOND_DEFAULT
        return int(quota.bound)

    def is_quota_exceeded(self) -> bool:
        try:
            self._sensor.check_quotas(self.time.milliseconds())
        except QuotaViolationException as e:
            logger.debug("%s: Quota violated for sensor (%s), metric: (%s), metric-value: (%s), bound: (%s)",
                         self.replication_type, self._sensor.name, e.metric.name, e.value, e.bound)
            return True
        return False

    def record(self, value: int) -> None:
        """Count ``value`` bytes of throttled traffic, whether or not the bound is exceeded."""
        self._sensor.record(float(value), self.time.milliseconds(), check_quotas=False)

    def byte_rate(self) -> float:
        """The measured rate in bytes per second."""
        return self._sensor.measure(self._rate_metric, self.time.milliseconds())

    # -- the throttled partitions ----------------------------------------------------------------

    def is_throttled(self, topic_partition: TopicPartition) -> bool:
        throttled = self._throttled_partitions
        if not throttled:
            return False
        partitions = throttled.get(topic_partition.topic)
        if partitions is None:
            return False
        return partitions is ALL_REPLICAS or topic_partition.partition in partitions

    @property
    def has_throttled_partitions(self) -> bool:
        return bool(self._throttled_partitions)

    def mark_throttled(self, topic: str, partitions: Optional[Sequence[int]] = None) -> None:
        """Throttle ``partitions`` of ``topic`` (every one when None or ALL_REPLICAS), replacing
        what was throttled of that topic before."""
        value = ALL_REPLICAS if partitions is None or tuple(partitions) == ALL_REPLICAS else tuple(partitions)
        with self._lock:
            updated = dict(self._throttled_partitions)
            updated[topic] = value
            self._throttled_partitions = updated

    def remove_throttle(self, topic: str) -> None:
        with self._lock:
            if topic in self._throttled_partitions:
                updated = dict(self._throttled_partitions)
                del updated[topic]
                self._throttled_partitions = updated

    def throttled_partitions(self, topic: str) -> Optional[tuple[int, ...]]:
        return self._throttled_partitions.get(topic)

    def shutdown(self) -> None:
        from kafka_py.core.metrics.kafka_metrics_group import default_registry

        registry = default_registry()
        if registry.get(self._gauge_name) is self._gauge:
            registry.remove_metric(self._gauge_name)


def _byte_rate_metric_name(replication_type: str):
    from kafka_py.core.metrics.yammer import MetricName

    return MetricName("kafka.server", replication_type, "", None, f"kafka.server:type={replication_type}", (),
                      attribute="byte-rate")


__all__ = [
    "ALL_REPLICAS",
    "ALTER_LOG_DIRS_REPLICATION",
    "FOLLOWER_REPLICATION",
    "LEADER_REPLICATION",
    "QUOTA_BYTES_PER_SECOND_DEFAULT",
    "ReplicaQuota",
    "ReplicationQuotaManager",
    "ReplicationQuotaManagerConfig",
]
