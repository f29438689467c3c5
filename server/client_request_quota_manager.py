"""Port of core/src/main/scala/kafka/server/ClientRequestQuotaManager.scala (Kafka 2.8.2).

``request_percentage`` quotas: the share of one request handler thread a user / client id
may use, in percent per quota window (so 200 is two threads' worth). What is recorded for a
request is the time a handler thread spent on it (``Request.request_thread_time_ns``, from
being taken off the queue to the end of its local handling), as a percentage of a second.
The throttle time is capped at one quota window, as in Kafka, so one long request cannot
silence a client for longer.

Requests brokers send each other (the ClusterAction APIs: LeaderAndIsr, StopReplica,
UpdateMetadata, ControlledShutdown, WriteTxnMarkers, AlterIsr) and fetches from follower
replicas are exempt; their time is recorded in an exempt sensor, which no quota checks.
Its rate is Kafka's ``kafka.server:type=Request`` attribute ``exempt-request-time`` (the
percentage of a handler thread those requests take), registered, as in Kafka, when the
first exempt request is recorded with request quotas in force.
"""
from __future__ import annotations

from typing import Any

from kafka_py.clients.common.sensor import KafkaMetric, MetricConfig, QuotaViolationException, Rate, Sensor
from kafka_py.core.metrics.kafka_metrics_group import default_registry
from kafka_py.core.metrics.yammer import Gauge, MetricName
from kafka_py.server.client_quota_manager import (
    ClientQuotaManager,
    ClientQuotaManagerConfig,
    QuotaType,
    bounded_throttle_time,
)
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import Time

QUOTA_REQUEST_PERCENT_DEFAULT = float(INT_MAX)
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1_000_000_000
EXEMPT_SENSOR_NAME = f"exempt-{QuotaType.REQUEST}"
EXEMPT_METRIC_NAME = "exempt-request-time"
# kafka.server:type=Request / exempt-request-time, as Kafka's JmxReporter names it
EXEMPT_METRIC = MetricName("kafka.server", str(QuotaType.REQUEST), "", None,
                           f"kafka.server:type={QuotaType.REQUEST}", (), attribute=EXEMPT_METRIC_NAME)


def nanos_to_percentage(nanos: int) -> float:
    return nanos * NANOS_TO_PERCENTAGE_PER_SECOND


class ClientRequestQuotaManager(ClientQuotaManager):
    def __init__(self, config: ClientQuotaManagerConfig, time: Time = Time.SYSTEM,
                 thread_name_prefix: str = "") -> None:
        super().__init__(config, QuotaType.REQUEST, time, thread_name_prefix)
        self.max_throttle_time_ms = config.quota_window_size_seconds * 1000
        self.exempt_sensor = Sensor(EXEMPT_SENSOR_NAME)
        self._exempt_metric = KafkaMetric(EXEMPT_METRIC_NAME, Rate(),
                                          MetricConfig(config.num_quota_samples,
                                                       config.quota_window_size_seconds * 1000))
        self.exempt_sensor.add(self._exempt_metric)
        self._exempt_gauge: Gauge | None = None

    def record_exempt(self, value: float) -> None:
        self.exempt_sensor.record(value, self.time.hi_res_milliseconds(), False)
        if self._exempt_gauge is None:
            self._register_exempt_gauge()

    def _register_exempt_gauge(self) -> None:
        sensor, metric, now = self.exempt_sensor, self._exempt_metric, self.time.hi_res_milliseconds
        registry = default_registry()
        # another broker of this process: the newest one counts
        registry.remove_metric(EXEMPT_METRIC)
        self._exempt_gauge = registry.new_gauge(EXEMPT_METRIC, lambda: sensor.measure(metric, now()))

    def shutdown(self) -> None:
        super().shutdown()
        gauge, self._exempt_gauge = self._exempt_gauge, None
        registry = default_registry()
        if gauge is not None and registry.get(EXEMPT_METRIC) is gauge:
            registry.remove_metric(EXEMPT_METRIC)

    def maybe_record_and_get_throttle_time_ms(self, request: Any, time_ms: int) -> int:  # type: ignore[override]
        """Record the handler time of ``request``; the throttle time if that broke the quota."""
        if not self.quotas_enabled:
            return 0
        context = request.context
        return self.record_and_get_throttle_time_ms(
            context.principal, context.client_id or "", nanos_to_percentage(request.request_thread_time_ns),
            time_ms)

    def maybe_record_exempt(self, request: Any) -> None:
        if self.quotas_enabled:
            self.record_exempt(nanos_to_percentage(request.request_thread_time_ns))

    def throttle_time(self, e: QuotaViolationException, time_ms: int) -> int:
        return bounded_throttle_time(e, self.max_throttle_time_ms, time_ms)

    @property
    def quota_metric_name(self) -> str:
        return "request-time"
