"""Port of core/src/main/scala/kafka/server/ControllerMutationQuotaManager.scala (Kafka 2.8.2,
KIP-599): ``controller_mutation_rate``, how many partitions per second a user / client id may
create or delete through CreateTopics, CreatePartitions and DeleteTopics.

The quota entities, their precedence and the metric-tag grouping are the ClientQuotaManager's
(server/client_quota_manager.py). What differs:

* the sensor measures with a TokenBucket (kafka_py/clients/common/sensor.py) rather than a Rate:
  credits refill at the quota's rate up to a burst of ``controller.quota.window.num x
  controller.quota.window.size.seconds x quota`` and every mutated partition spends one, so
  a client may create a burst of partitions at once and is then held to the rate;
* what is recorded is a number of partitions, per topic, by the admin manager
  (server/zk_admin_manager.py): a new topic's partitions, a CreatePartitions' added ones, a
  deleted topic's partitions;
* the throttle time is how long the bucket takes to come back to zero:
  ``-tokens / quota`` seconds.

A request gets a ControllerMutationQuota for its lifetime (``new_quota_for``):

* strict, for the versions whose clients understand THROTTLING_QUOTA_EXCEEDED (CreateTopics
  v6+, CreatePartitions v3+, DeleteTopics v5+): a topic is refused with that error when the
  bucket is already empty before it is recorded; a topic that empties it is still accepted
  (one topic's partitions are never split);
* permissive, for older versions: every topic is accepted and recorded, and the answer's
  throttle_time_ms (and the muted connection) tells the client to slow down;
* unbounded when no ``controller_mutation_rate`` has ever been set.

The answer then carries the larger of the quota's remaining throttle time and the request
quota's (KafkaApis.sendResponseMaybeThrottleWithControllerQuota).
"""
from __future__ import annotations

import logging
from typing import Any

from kafka_py.clients.common.sensor import Avg, KafkaMetric, MetricConfig, QuotaViolationException, Rate, Sensor, TokenBucket
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.client_quota_manager import (
    INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS,
    METRICS_NUM_SAMPLES,
    METRICS_SAMPLE_WINDOW_MS,
    ClientQuotaManager,
    ClientQuotaManagerConfig,
    ClientSensors,
    QuotaType,
)
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

CONTROLLER_MUTATION = "ControllerMutation"


def throttle_time_ms(e: QuotaViolationException) -> int:
    """How long until the bucket of ``e`` is back at zero: -tokens / quota, in ms."""
    if not isinstance(e.metric.measurable, TokenBucket):
        raise ValueError(f"Metric {e.metric.name} is not a TokenBucket metric, value {e.metric.measurable!r}")
    return int(round(-e.value / e.bound * 1000))


class ControllerMutationQuota:
    """The quota of one request: ``record`` the partitions a topic mutates, ``throttle_time``
    for its answer."""

    def is_exceeded(self) -> bool:
        raise NotImplementedError

    def record(self, permits: float) -> None:
        raise NotImplementedError

    def throttle_time(self) -> int:
        raise NotImplementedError


class _Unbounded(ControllerMutationQuota):
    def is_exceeded(self) -> bool:
        return False

    def record(self, permits: float) -> None:
        pass

    def throttle_time(self) -> int:
        return 0


UNBOUNDED_CONTROLLER_MUTATION_QUOTA = _Unbounded()


class AbstractControllerMutationQuota(ControllerMutationQuota):
    def __init__(self, time: Time, quota_sensor: Sensor) -> None:
        self.time = time
        self.quota_sensor = quota_sensor
        self.last_throttle_time_ms = 0
        self.last_recorded_time_ms = 0

    def _update_throttle_time(self, e: QuotaViolationException, time_ms: int) -> None:
        self.last_throttle_time_ms = throttle_time_ms(e)
        self.last_recorded_time_ms = time_ms

    def throttle_time(self) -> int:
        """The throttle time last computed, less the time since (the answer goes out later)."""
        elapsed = self.time.hi_res_milliseconds() - self.last_recorded_time_ms
        return int(min(INT_MAX, max(0, self.last_throttle_time_ms - elapsed)))


class StrictControllerMutationQuota(AbstractControllerMutationQuota):
    """Refuses a topic with THROTTLING_QUOTA_EXCEEDED while the bucket is empty."""

    def is_exceeded(self) -> bool:
        return self.last_throttle_time_ms > 0

    def record(self, permits: float) -> None:
        time_ms = self.time.hi_res_milliseconds()
        try:
            # already over? refused without recording; otherwise recorded, even past zero
            self.quota_sensor.check_quotas(time_ms)
            self.quota_sensor.record(permits, time_ms, False)
        except QuotaViolationException as e:
            self._update_throttle_time(e, time_ms)
            raise Errors.THROTTLING_QUOTA_EXCEEDED.exception_class(Errors.THROTTLING_QUOTA_EXCEEDED.message) from None


class PermissiveControllerMutationQuota(AbstractControllerMutationQuota):
    """Records every topic; an empty bucket only sets the throttle time."""

    def is_exceeded(self) -> bool:
        return False

    def record(self, permits: float) -> None:
        time_ms = self.time.hi_res_milliseconds()
        try:
            self.quota_sensor.record(permits, time_ms, True)
        except QuotaViolationException as e:
            self._update_throttle_time(e, time_ms)


class ControllerMutationQuotaManager(ClientQuotaManager):
    def __init__(self, config: ClientQuotaManagerConfig, time: Time = Time.SYSTEM,
                 thread_name_prefix: str = "") -> None:
        super().__init__(config, QuotaType.CONTROLLER_MUTATION, time, thread_name_prefix)

    @property
    def quota_metric_name(self) -> str:
        return "tokens"

    def _create_sensors(self, tags: tuple[str, str], now: int) -> ClientSensors:
        suffix = ":".join(tags)
        expiration_ms = INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS * 1000
        quota_sensor = Sensor(f"{self.quota_type}-{suffix}", expiration_ms, now)
        quota_sensor.add(KafkaMetric(self.quota_metric_name, TokenBucket(),
                                     self._quota_metric_config(self._quota_limit(tags))))
        # Kafka's mutation-rate: the partitions mutated per second, measured beside the bucket
        quota_sensor.add(KafkaMetric("mutation-rate", Rate(), MetricConfig(METRICS_NUM_SAMPLES,
                                                                           METRICS_SAMPLE_WINDOW_MS)))
        throttle_sensor = Sensor(f"{self.quota_type}ThrottleTime-{suffix}", expiration_ms, now)
        throttle_sensor.add(KafkaMetric("throttle-time", Avg(),
                                        MetricConfig(METRICS_NUM_SAMPLES, METRICS_SAMPLE_WINDOW_MS)))
        return ClientSensors(tags, quota_sensor, throttle_sensor)

    def throttle_time(self, e: QuotaViolationException, time_ms: int) -> int:
        return throttle_time_ms(e)

    def record_and_get_throttle_time_ms(self, principal: str, client_id: str, value: float, time_ms: int) -> int:
        raise NotImplementedError("controller mutations are recorded through a ControllerMutationQuota")

    def _sensor_for(self, request: Any) -> Sensor:
        context = request.context
        return self.get_or_create_quota_sensors(context.principal, context.client_id or "").quota_sensor

    def new_strict_quota_for(self, request: Any) -> ControllerMutationQuota:
        if not self.quotas_enabled:
            return UNBOUNDED_CONTROLLER_MUTATION_QUOTA
        return StrictControllerMutationQuota(self.time, self._sensor_for(request))

    def new_permissive_quota_for(self, request: Any) -> ControllerMutationQuota:
        if not self.quotas_enabled:
            return UNBOUNDED_CONTROLLER_MUTATION_QUOTA
        return PermissiveControllerMutationQuota(self.time, self._sensor_for(request))

    def new_quota_for(self, request: Any, strict_since_version: int) -> ControllerMutationQuota:
        """Strict for ``request.api_version >= strict_since_version``, permissive before."""
        if request.api_version >= strict_since_version:
            return self.new_strict_quota_for(request)
        return self.new_permissive_quota_for(request)
