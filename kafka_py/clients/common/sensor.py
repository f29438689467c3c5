"""Port of the parts of clients/src/main/java/org/apache/kafka/common/metrics that client quotas
and the network threads' authentication metrics use (Kafka 2.8.2): Sensor.java,
KafkaMetric.java, MetricConfig.java, Quota.java, QuotaViolationException.java,
stats/SampledStat.java, stats/WindowedSum.java, stats/Rate.java, stats/Avg.java, stats/Max.java,
stats/SimpleRate.java, stats/TokenBucket.java, stats/CumulativeSum.java and stats/Meter.java.

A ``Sensor`` records values into its stats; a stat whose ``MetricConfig`` carries a ``Quota``
is checked after every quota-checked record, and a value beyond the bound raises
``QuotaViolationException`` with the measured value, the bound and the metric, from which
the quota manager computes how long to throttle.

A ``Rate`` is a ``WindowedSum`` over ``samples`` windows of ``time_window_ms`` each, divided
by the time those windows span, in seconds. As in Kafka, the span counts at least
``samples - 1`` whole windows, so a client that has just started is measured as if it had
been quiet before (its first burst is allowed up to (samples - 1) windows' worth), and a
window older than ``samples x time_window_ms`` is reset before it is measured.

The registry of Kafka's ``Metrics`` class is not ported: the quota managers and the
network threads' selectors keep their sensors themselves (server/client_quota_manager.py,
network/selector.py) and register what they measure as gauges of the broker's metrics
registry (kafka_py/core/metrics/), under the JMX names Kafka's JmxReporter gives them.
"""
from __future__ import annotations

import threading
from typing import Optional

from kafka_py.core.utils.java_limits import LONG_MAX

_UNBOUNDED_EVENT_WINDOW = LONG_MAX


class Quota:
    """An upper (or lower) bound on a metric's value."""

    __slots__ = ("bound", "upper")

    def __init__(self, bound: float, upper: bool = True) -> None:
        self.bound = float(bound)
        self.upper = upper

    @staticmethod
    def upper_bound(bound: float) -> "Quota":
        return Quota(bound, True)

    @staticmethod
    def lower_bound(bound: float) -> "Quota":
        return Quota(bound, False)

    def acceptable(self, value: float) -> bool:
        return value <= self.bound if self.upper else value >= self.bound

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quota) and other.bound == self.bound and other.upper == self.upper

    def __hash__(self) -> int:
        return hash((self.bound, self.upper))

    def __repr__(self) -> str:
        return f"{'upper' if self.upper else 'lower'}={self.bound}"


class MetricConfig:
    """How a metric is sampled, and its quota if any."""

    __slots__ = ("quota", "samples", "time_window_ms", "event_window")

    def __init__(self, samples: int = 2, time_window_ms: int = 30_000, quota: Optional[Quota] = None,
                 event_window: int = _UNBOUNDED_EVENT_WINDOW) -> None:
        if samples < 1:
            raise ValueError("The number of samples must be at least 1.")
        self.samples = int(samples)
        self.time_window_ms = int(time_window_ms)
        self.quota = quota
        self.event_window = event_window


class QuotaViolationException(Exception):
    """A quota-checked record left the metric beyond its bound."""

    def __init__(self, metric: "KafkaMetric", value: float, bound: float) -> None:
        super().__init__(f"'{metric.name}' violated quota. Actual: {value:.6f}, Threshold: {bound:.6f}")
        self.metric = metric
        self.value = value
        self.bound = bound


class _Sample:
    __slots__ = ("initial_value", "event_count", "last_window_ms", "value")

    def __init__(self, initial_value: float, now: int) -> None:
        self.initial_value = initial_value
        self.event_count = 0
        self.last_window_ms = now
        self.value = initial_value

    def reset(self, now: int) -> None:
        self.event_count = 0
        self.last_window_ms = now
        self.value = self.initial_value

    def is_complete(self, time_ms: int, config: MetricConfig) -> bool:
        return time_ms - self.last_window_ms >= config.time_window_ms or self.event_count >= config.event_window


class SampledStat:
    """A stat kept as a ring of ``config.samples`` windows, combined when measured."""

    __slots__ = ("_initial_value", "_current", "samples")

    def __init__(self, initial_value: float) -> None:
        self._initial_value = initial_value
        self._current = 0
        self.samples: list[_Sample] = []

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        sample = self.current(time_ms)
        if sample.is_complete(time_ms, config):
            sample = self._advance(config, time_ms)
        self.update(sample, config, value, time_ms)
        sample.event_count += 1

    def _advance(self, config: MetricConfig, time_ms: int) -> _Sample:
        self._current = (self._current + 1) % config.samples
        if self._current >= len(self.samples):
            sample = _Sample(self._initial_value, time_ms)
            self.samples.append(sample)
            return sample
        sample = self.samples[self._current]
        sample.reset(time_ms)
        return sample

    def current(self, time_ms: int) -> _Sample:
        if not self.samples:
            self.samples.append(_Sample(self._initial_value, time_ms))
        return self.samples[self._current]

    def oldest(self, now: int) -> _Sample:
        if not self.samples:
            self.samples.append(_Sample(self._initial_value, now))
        oldest = self.samples[0]
        for sample in self.samples:
            if sample.last_window_ms < oldest.last_window_ms:
                oldest = sample
        return oldest

    def measure(self, config: MetricConfig, now: int) -> float:
        self.purge_obsolete_samples(config, now)
        return self.combine(self.samples, config, now)

    def purge_obsolete_samples(self, config: MetricConfig, now: int) -> None:
        """Reset the windows that ended more than ``samples`` windows ago."""
        expire_age = config.samples * config.time_window_ms
        for sample in self.samples:
            if now - sample.last_window_ms >= expire_age:
                sample.reset(now)

    def update(self, sample: _Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        raise NotImplementedError

    def combine(self, samples: list[_Sample], config: MetricConfig, now: int) -> float:
        raise NotImplementedError


class WindowedSum(SampledStat):
    """The sum of the values recorded in the retained windows."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0.0)

    def update(self, sample: _Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        sample.value += value

    def combine(self, samples: list[_Sample], config: MetricConfig, now: int) -> float:
        return sum(s.value for s in samples)


class Avg(SampledStat):
    """The mean of the values recorded in the retained windows (NaN when there are none, as Kafka's)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0.0)

    def update(self, sample: _Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        sample.value += value

    def combine(self, samples: list[_Sample], config: MetricConfig, now: int) -> float:
        total = 0.0
        count = 0
        for s in samples:
            total += s.value
            count += s.event_count
        return total / count if count else float("nan")


class Max(SampledStat):
    """The largest value recorded in the retained windows (NaN when there is none, as Kafka's)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(float("-inf"))

    def update(self, sample: _Sample, config: MetricConfig, value: float, time_ms: int) -> None:
        sample.value = max(sample.value, value)

    def combine(self, samples: list[_Sample], config: MetricConfig, now: int) -> float:
        count = sum(s.event_count for s in samples)
        return max(s.value for s in samples) if count else float("nan")


class Rate:
    """Per second: a WindowedSum divided by the seconds its windows span (see the module doc)."""

    __slots__ = ("stat",)

    def __init__(self) -> None:
        self.stat = WindowedSum()

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        self.stat.record(config, value, time_ms)

    def measure(self, config: MetricConfig, now: int) -> float:
        value = self.stat.measure(config, now)
        return value / (self.window_size(config, now) / 1000.0)

    def window_size(self, config: MetricConfig, now: int) -> int:
        """Milliseconds the retained windows span, never fewer than ``samples - 1`` whole windows."""
        self.stat.purge_obsolete_samples(config, now)
        total_elapsed_ms = now - self.stat.oldest(now).last_window_ms
        full_windows = total_elapsed_ms // config.time_window_ms
        min_full_windows = config.samples - 1
        if full_windows < min_full_windows:
            total_elapsed_ms += (min_full_windows - full_windows) * config.time_window_ms
        return total_elapsed_ms


class SimpleRate(Rate):
    """Kafka's stats/SimpleRate, the replication quotas' rate: the retained sum divided by the
    time since the oldest window began, but never by less than one window (so two records a
    millisecond apart do not measure as a huge rate). Unlike ``Rate`` it does not pretend a
    new stream was quiet for ``samples - 1`` windows before: a throttle bites from the start."""

    __slots__ = ()

    def window_size(self, config: MetricConfig, now: int) -> int:
        self.stat.purge_obsolete_samples(config, now)
        elapsed = now - self.stat.oldest(now).last_window_ms
        return max(elapsed, config.time_window_ms)


class TokenBucket:
    """Kafka's stats/TokenBucket (KIP-599): credits that refill at the quota's rate up to a burst
    of ``samples x window seconds x quota`` and that each record spends. Measured, it is the
    credit left, which goes negative when a record spent more than there was; the quota check
    (``Sensor``) refuses a negative credit instead of comparing with the bound. Without a quota
    in its config it measures as unbounded and records nothing."""

    __slots__ = ("tokens", "last_update_ms")

    def __init__(self) -> None:
        self.tokens = 0.0
        self.last_update_ms = 0

    @staticmethod
    def _burst(config: MetricConfig) -> float:
        return config.samples * (config.time_window_ms / 1000.0) * config.quota.bound  # type: ignore[union-attr]

    def _refill(self, quota: float, burst: float, time_ms: int) -> None:
        self.tokens = min(burst, self.tokens + quota * (time_ms - self.last_update_ms) / 1000.0)
        self.last_update_ms = time_ms

    def measure(self, config: MetricConfig, now: int) -> float:
        if config.quota is None:
            return float(LONG_MAX)
        self._refill(config.quota.bound, self._burst(config), now)
        return self.tokens

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        if config.quota is None:
            return
        burst = self._burst(config)
        self._refill(config.quota.bound, burst, time_ms)
        self.tokens = min(burst, self.tokens - value)


class CumulativeSum:
    """The sum of every value recorded, never reset (Kafka's stats/CumulativeSum)."""

    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0.0

    def record(self, config: MetricConfig, value: float, time_ms: int) -> None:
        self.total += value

    def measure(self, config: MetricConfig, now: int) -> float:
        return self.total


class KafkaMetric:
    """A named stat with its config (the config, and so the quota, may be replaced at runtime)."""

    __slots__ = ("name", "measurable", "config")

    def __init__(self, name: str, measurable: object, config: MetricConfig) -> None:
        self.name = name
        self.measurable = measurable
        self.config = config

    def measurable_value(self, time_ms: int) -> float:
        return self.measurable.measure(self.config, time_ms)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"KafkaMetric({self.name})"


class Sensor:
    """Records values into its metrics and checks their quotas (Kafka's ``Sensor``).

    ``record`` and the quota check happen under the sensor's lock, so concurrent requests of
    one client see one consistent window. ``last_record_time_ms`` lets an owner expire
    sensors nobody has recorded into for a while.
    """

    __slots__ = ("name", "metrics", "last_record_time_ms", "inactive_sensor_expiration_ms", "_lock")

    def __init__(self, name: str, inactive_sensor_expiration_ms: Optional[int] = None, now_ms: int = 0) -> None:
        self.name = name
        self.metrics: list[KafkaMetric] = []
        self.last_record_time_ms = now_ms
        self.inactive_sensor_expiration_ms = inactive_sensor_expiration_ms
        self._lock = threading.Lock()

    def add(self, metric: KafkaMetric) -> KafkaMetric:
        with self._lock:
            self.metrics.append(metric)
        return metric

    def add_meter(self, base_name: str, config: MetricConfig) -> tuple[KafkaMetric, KafkaMetric]:
        """Kafka's stats/Meter: ``<base>-rate`` (per second over the config's windows) and
        ``<base>-total`` (every value ever recorded), fed by the same records."""
        return (self.add(KafkaMetric(f"{base_name}-rate", Rate(), config)),
                self.add(KafkaMetric(f"{base_name}-total", CumulativeSum(), config)))

    def record(self, value: float, time_ms: int, check_quotas: bool = True) -> None:
        self.last_record_time_ms = time_ms
        with self._lock:
            for metric in self.metrics:
                metric.measurable.record(metric.config, value, time_ms)  # type: ignore[attr-defined]
            if check_quotas:
                self._check_quotas(time_ms)

    def check_quotas(self, time_ms: int) -> None:
        with self._lock:
            self._check_quotas(time_ms)

    def _check_quotas(self, time_ms: int) -> None:
        for metric in self.metrics:
            quota = metric.config.quota
            if quota is not None:
                value = metric.measurable_value(time_ms)
                if isinstance(metric.measurable, TokenBucket):
                    if value < 0:
                        raise QuotaViolationException(metric, value, quota.bound)
                elif not quota.acceptable(value):
                    raise QuotaViolationException(metric, value, quota.bound)

    def measure(self, metric: KafkaMetric, time_ms: int) -> float:
        """One of this sensor's metrics measured now, consistent with concurrent records."""
        with self._lock:
            return metric.measurable_value(time_ms)

    def set_metric_config(self, metric: KafkaMetric, config: MetricConfig) -> None:
        """Replace a metric's config (a quota changed) between two records."""
        with self._lock:
            metric.config = config

    def has_expired(self, now_ms: int) -> bool:
        expiration = self.inactive_sensor_expiration_ms
        return expiration is not None and now_ms - self.last_record_time_ms > expiration

    def __repr__(self) -> str:
        return f"Sensor({self.name})"
