"""Port of core/src/main/scala/kafka/metrics/KafkaMetricsGroup.scala and
server-common's KafkaYammerMetrics (Kafka 2.8.2): the broker's one metrics registry and the
helper every component uses to register its metrics under Kafka's JMX names.

A class that mixes in ``KafkaMetricsGroup`` names its metrics
``<group>:type=<class>,name=<name>[,tag=value...]``; the group is Kafka's package of the
class (``kafka.server`` for ``server/replica_manager.py``'s ``ReplicaManager``), taken from the
module path, and a class can set ``metrics_group`` / ``metrics_type_name`` where its Python
home or name differs from Kafka's. Tags keep the order they are given in, as Kafka's
LinkedHashMaps do, and empty tag values are left out of the name.

``recording_enabled`` is kafka-py's switch (``kafka.py.metrics.enabled``) that lets the
request path skip its per-request timings, for measuring what they cost.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Optional

from kafka_py.core.metrics.yammer import Gauge, Histogram, Meter, MetricName, MetricsRegistry, Timer

_default_registry: Optional[MetricsRegistry] = None
_registry_lock = threading.Lock()


def default_registry() -> MetricsRegistry:
    """KafkaYammerMetrics.defaultRegistry(): the process's registry, created on first use."""
    global _default_registry
    registry = _default_registry
    if registry is None:
        with _registry_lock:
            if _default_registry is None:
                _default_registry = MetricsRegistry()
            registry = _default_registry
    return registry


class _Recording:
    """Whether the request path records its per-request metrics (on unless configured off)."""

    enabled = True


recording = _Recording()


class TimeRatio:
    """The share of time spent in some state (waiting in select, say) over the last 30 to 60
    seconds: the two 30-second samples Kafka's metrics keep for a ratio such as the selector's
    ``io-wait-ratio``. ``total`` returns the nanoseconds spent in that state so far.
    """

    WINDOW_NS = 30_000_000_000

    def __init__(self, clock: Callable[[], int], total: Callable[[], int]) -> None:
        self._clock = clock
        self._total = total
        now = clock()
        self._lock = threading.Lock()
        self._window_start = now
        self._window_total = total()
        self._previous_start = now
        self._previous_total = self._window_total

    def ratio(self) -> float:
        now = self._clock()
        total = self._total()
        with self._lock:
            if now - self._window_start >= self.WINDOW_NS:
                self._previous_start, self._previous_total = self._window_start, self._window_total
                self._window_start, self._window_total = now, total
            elapsed = now - self._previous_start
            if elapsed <= 0:
                return 0.0
            return max(0.0, min(1.0, (total - self._previous_total) / elapsed))


def _to_mbean_name(tags: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in tags.items() if v != "")


def _to_scope(tags: Mapping[str, str]) -> Optional[str]:
    kept = [(k, v.replace(".", "_")) for k, v in tags.items() if v != ""]
    return ".".join(f"{k}.{v}" for k, v in sorted(kept)) if kept else None


def explicit_metric_name(group: str, type_name: str, name: str,
                         tags: Optional[Mapping[str, str]] = None) -> MetricName:
    """KafkaMetricsGroup.explicitMetricName."""
    tags = tags or {}
    mbean = f"{group}:type={type_name}"
    if name:
        mbean += f",name={name}"
    tag_part = _to_mbean_name(tags)
    if tag_part:
        mbean += "," + tag_part
    return MetricName(group, type_name, name, _to_scope(tags), mbean,
                      tuple((k, str(v)) for k, v in tags.items() if v != ""))


def _group_of(cls: type) -> str:
    """kafka_py.server.replica_manager -> kafka.server; kafka_py.core.coordinator.group.x -> kafka.coordinator.group.

    Kafka's core packages are ``kafka.<package>``; here they are ``kafka_py.<package>`` for the
    four at the top of the tree and ``kafka_py.core.<package>`` for the rest."""
    parts = cls.__module__.split(".")
    if parts and parts[0] == "kafka_py":
        parts = parts[1:]
        if parts and parts[0] == "core":
            parts = parts[1:]
    package = parts[:-1] if len(parts) > 1 else parts
    return ".".join(["kafka", *package])


class KafkaMetricsGroup:
    """Mixin: ``new_gauge`` / ``new_meter`` / ``new_histogram`` / ``new_timer`` under this
    class's metric names, and ``remove_metric`` to take one away (on close or delete)."""

    metrics_group: Optional[str] = None
    metrics_type_name: Optional[str] = None

    def metric_name(self, name: str, tags: Optional[Mapping[str, str]] = None) -> MetricName:
        cls = type(self)
        group = self.metrics_group or _group_of(cls)
        type_name = self.metrics_type_name or cls.__name__
        return explicit_metric_name(group, type_name, name, tags)

    @property
    def metrics_registry(self) -> MetricsRegistry:
        return default_registry()

    def new_gauge(self, name: str, read: Callable[[], Any], tags: Optional[Mapping[str, str]] = None) -> Gauge:
        return self.metrics_registry.new_gauge(self.metric_name(name, tags), read)

    def new_meter(self, name: str, event_type: str = "events", tags: Optional[Mapping[str, str]] = None,
                  lock: Optional[threading.Lock] = None, rate_unit_s: float = 1.0) -> Meter:
        return self.metrics_registry.new_meter(self.metric_name(name, tags), event_type, lock, rate_unit_s)

    def new_histogram(self, name: str, tags: Optional[Mapping[str, str]] = None,
                      lock: Optional[threading.Lock] = None) -> Histogram:
        return self.metrics_registry.new_histogram(self.metric_name(name, tags), lock)

    def new_timer(self, name: str, tags: Optional[Mapping[str, str]] = None) -> Timer:
        return self.metrics_registry.new_timer(self.metric_name(name, tags))

    def remove_metric(self, name: str, tags: Optional[Mapping[str, str]] = None) -> None:
        self.metrics_registry.remove_metric(self.metric_name(name, tags))

    def replace_gauge(self, name: str, read: Callable[[], Any],
                      tags: Optional[Mapping[str, str]] = None) -> Gauge:
        """A gauge that replaces one registered under the same name: for objects of which the
        newest is the one that counts (a purgatory or log made again in the same process)."""
        metric_name = self.metric_name(name, tags)
        self.metrics_registry.remove_metric(metric_name)
        return self.metrics_registry.new_gauge(metric_name, read)

    def remove_metric_if_same(self, name: str, metric: Any, tags: Optional[Mapping[str, str]] = None) -> None:
        """Remove the metric registered under ``name`` if it is ``metric`` (not a newer one)."""
        metric_name = self.metric_name(name, tags)
        if self.metrics_registry.get(metric_name) is metric:
            self.metrics_registry.remove_metric(metric_name)


__all__ = ["KafkaMetricsGroup", "default_registry", "explicit_metric_name", "recording"]
