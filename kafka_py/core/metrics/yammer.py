"""Port of the parts of Yammer Metrics 2.2 (com.yammer.metrics.core: MetricName, Meter,
Histogram, Timer, Gauge, MetricsRegistry; stats: EWMA, ExponentiallyDecayingSample, Snapshot)
that Kafka 2.8.2's broker registers its metrics in.

Kafka's broker metrics are Yammer metrics named by JMX object names
(``kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t``): meters (a count
and 1/5/15-minute exponentially weighted rates), histograms (count, min, max, mean and
percentiles over a sample biased towards the last five minutes), timers (a meter and a
histogram of durations) and gauges (a value read when someone asks).

The hot paths (produce, fetch, every request's timings) update meters and histograms, so
updates are kept to a few attribute writes under a lock and never allocate a container:

* ``Meter.mark`` only adds to a count. A ticker thread of the registry folds the counts into
  the moving averages every five seconds, at a fixed rate, as Yammer 2.2's ``meter-tick``
  thread does.
* ``Histogram.update`` keeps count, sum, min and max and writes the value into a fixed
  array of staged samples (a uniform sample of the values since the last tick once more
  values arrive than it holds). The ticker moves the staged samples into the forward-decay
  priority sample (Yammer's ExponentiallyDecayingSample: 1028 values, alpha 0.015), where
  each carries the weight of the values it stands for.

Several metrics that are always updated together may share one lock (``lock=``), so a
request's nine timings cost one lock round trip.
"""
from __future__ import annotations

import array
import heapq
import math
import random
import threading
import time as _time
import weakref
from typing import Any, Callable, Iterable, Optional

TICK_INTERVAL_S = 5.0
_TICK_INTERVAL_NS = 5_000_000_000

# The percentiles Yammer's JMX reporter publishes for histograms and timers, with the
# attribute names they appear under.
PERCENTILES: tuple[tuple[float, str], ...] = (
    (0.50, "50thPercentile"), (0.75, "75thPercentile"), (0.95, "95thPercentile"),
    (0.98, "98thPercentile"), (0.99, "99thPercentile"), (0.999, "999thPercentile"))


def yield_gil() -> None:
    """Let a thread waiting for the GIL have it now. The ticker's work (offering each
    histogram's staged values to its sample, ``ExponentiallyDecayingSample.add``) is pure
    Python; without this, a network or handler thread woken by a request meanwhile waits for
    the interpreter's switch interval (5 ms), once for each thread the request passes
    through, and the ticker's few milliseconds every five seconds land on the requests' p99.
    A sleep releases the GIL even for zero seconds."""
    _time.sleep(0)


class MetricName:
    """com.yammer.metrics.core.MetricName as Kafka builds it: group, type, name, scope and the
    JMX object name ``group:type=T,name=N[,tag=value...]`` (tags in the order given)."""

    __slots__ = ("group", "type", "name", "scope", "tags", "mbean_name", "attribute", "_hash")

    def __init__(self, group: str, type: str, name: str, scope: Optional[str] = None,
                 mbean_name: Optional[str] = None, tags: tuple[tuple[str, str], ...] = (),
                 attribute: Optional[str] = None) -> None:
        self.group = group
        self.type = type
        self.name = name
        self.scope = scope
        self.tags = tags
        # Set for the few metrics Kafka registers with its own metrics library rather than
        # Yammer's (socket-server-metrics, app-info): an attribute of an MBean without a name.
        self.attribute = attribute
        self.mbean_name = mbean_name or f"{group}:type={type},name={name}"
        self._hash = hash((self.mbean_name, attribute))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MetricName) and other.mbean_name == self.mbean_name
                and other.attribute == self.attribute)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return self.mbean_name if self.attribute is None else f"{self.mbean_name}/{self.attribute}"


class Clock:
    """The tick source of meters and histograms (nanoseconds); tests pass a manual one."""

    def tick(self) -> int:
        return _time.monotonic_ns()

    def time_ms(self) -> int:
        return _time.time_ns() // 1_000_000


DEFAULT_CLOCK = Clock()


class Metric:
    """What every registered metric is: something the exporter can read."""

    __slots__ = ("__weakref__",)
    kind = "metric"


class Gauge(Metric):
    """A value computed when read (``Gauge.value()``)."""

    __slots__ = ("_read",)
    kind = "gauge"

    def __init__(self, read: Callable[[], Any]) -> None:
        self._read = read

    def value(self) -> Any:
        return self._read()


class StateGauge(Gauge):
    """A gauge whose value is the name of a state out of a known set (a ZooKeeper client's
    ``SessionState``: CONNECTED, CLOSED, ...). JMX shows the name; the Prometheus export has one
    sample per state, 1 for the current one."""

    __slots__ = ("states",)

    def __init__(self, read: Callable[[], str], states: tuple[str, ...]) -> None:
        super().__init__(read)
        self.states = states


class EWMA:
    """An exponentially weighted moving average of a rate, ticked every five seconds."""

    __slots__ = ("alpha", "rate", "initialized")

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.rate = 0.0  # events per second
        self.initialized = False

    @classmethod
    def minutes(cls, m: int) -> "EWMA":
        return cls(1.0 - math.exp(-TICK_INTERVAL_S / 60.0 / m))

    def tick(self, count: int) -> None:
        instant = count / TICK_INTERVAL_S
        if self.initialized:
            self.rate += self.alpha * (instant - self.rate)
        else:
            self.rate = instant
            self.initialized = True


class Meter(Metric):
    """Count plus mean and 1/5/15-minute rates (events per second)."""

    __slots__ = ("lock", "count", "event_type", "rate_unit_s", "_ticked_count", "_m1", "_m5", "_m15",
                 "_start_ns", "_clock")
    kind = "meter"

    def __init__(self, event_type: str = "events", clock: Clock = DEFAULT_CLOCK,
                 lock: Optional[threading.Lock] = None, rate_unit_s: float = 1.0) -> None:
        self.lock = lock if lock is not None else threading.Lock()
        self.count = 0
        self.event_type = event_type
        # Rates are events per this many seconds (Kafka's idle meters count nanoseconds and
        # report per nanosecond, which makes their rates fractions of time).
        self.rate_unit_s = rate_unit_s
        self._ticked_count = 0
        self._m1 = EWMA.minutes(1)
        self._m5 = EWMA.minutes(5)
        self._m15 = EWMA.minutes(15)
        self._clock = clock
        self._start_ns = clock.tick()

    def mark(self, n: int = 1) -> None:
        with self.lock:
            self.count += n

    def tick(self) -> None:
        """Fold the events since the last tick into the averages (every 5 s, by the ticker)."""
        with self.lock:
            count = self.count
        new = count - self._ticked_count
        self._ticked_count = count
        self._m1.tick(new)
        self._m5.tick(new)
        self._m15.tick(new)

    def one_minute_rate(self) -> float:
        return self._m1.rate * self.rate_unit_s

    def five_minute_rate(self) -> float:
        return self._m5.rate * self.rate_unit_s

    def fifteen_minute_rate(self) -> float:
        return self._m15.rate * self.rate_unit_s

    def mean_rate(self) -> float:
        with self.lock:
            count = self.count
        if count == 0:
            return 0.0
        elapsed = (self._clock.tick() - self._start_ns) / 1e9
        return count / elapsed * self.rate_unit_s if elapsed > 0 else 0.0


class Snapshot:
    """The sorted sample of a histogram, with Yammer 2.2's quantile interpolation."""

    __slots__ = ("values",)

    def __init__(self, values: Iterable[float]) -> None:
        self.values = sorted(values)

    def value(self, quantile: float) -> float:
        values = self.values
        if not 0.0 <= quantile <= 1.0:
            raise ValueError(f"{quantile} is not in [0..1]")
        if not values:
            return 0.0
        pos = quantile * (len(values) + 1)
        if pos < 1:
            return float(values[0])
        if pos >= len(values):
            return float(values[-1])
        lower = values[int(pos) - 1]
        upper = values[int(pos)]
        return lower + (pos - math.floor(pos)) * (upper - lower)

    @property
    def median(self) -> float:
        return self.value(0.5)

    def size(self) -> int:
        return len(self.values)


class ExponentiallyDecayingSample:
    """Forward-decay priority sampling (Cormode et al.), Yammer's biased histogram sample.

    Each value is kept with priority ``weight * exp(alpha * t) / u`` (``u`` uniform in (0, 1],
    ``t`` seconds since the landmark); the ``size`` highest priorities survive, so a value's
    chance of staying falls by half about every 46 seconds at alpha 0.015 and the sample
    stands for roughly the last five minutes. The landmark moves every hour (priorities are
    rescaled), as in Yammer, so the exponent never grows without bound.
    """

    RESCALE_THRESHOLD_NS = 3_600_000_000_000

    __slots__ = ("size", "alpha", "_priorities", "_values", "_count", "_start_ns", "_next_rescale_ns",
                 "_random")

    def __init__(self, size: int = 1028, alpha: float = 0.015, clock: Clock = DEFAULT_CLOCK,
                 rng: Optional[random.Random] = None) -> None:
        self.size = size
        self.alpha = alpha
        # Two flat arrays of doubles, not a heap of (priority, value) tuples: a tuple and its
        # two floats cost about 110 bytes a sample against 16 here. Both take their full
        # size at the first offer: a broker has a few hundred histograms (seven per API
        # key) whose samples fill one request at a time, and storage grown with the sample
        # kept growing for as long as requests kept arriving (topic churn: CreateTopics,
        # DeleteTopics, Metadata), over a thousand of each kind. A histogram never offered
        # anything costs nothing. The first ``_count`` slots hold the sample; once full, a
        # binary min-heap by priority.
        self._priorities = array.array("d")
        self._values = array.array("d")
        self._count = 0
        # Made at the first offer too: seeding a generator from the OS's entropy costs ~0.15 ms,
        # and a KRaft node makes about a thousand histograms as it starts (docs/kraft.md).
        self._random = rng
        self._start_ns = clock.tick()
        self._next_rescale_ns = self._start_ns + self.RESCALE_THRESHOLD_NS

    def add(self, values: Iterable[float], weight: float, now_ns: int) -> None:
        """Offer ``values``, each standing for ``weight`` observations made at ``now_ns``."""
        if now_ns >= self._next_rescale_ns:
            self._rescale(now_ns)
        base = weight * math.exp(self.alpha * (now_ns - self._start_ns) / 1e9)
        rng = self._random
        if rng is None:
            rng = self._random = random.Random()
        rnd = rng.random
        values = values if isinstance(values, list) else list(values)
        offered = [base / (1.0 - rnd()) for _ in values]  # 1 - random() lies in (0, 1]
        size, count = self.size, self._count
        if not self._priorities:
            self._priorities = array.array("d", bytes(8 * size))
            self._values = array.array("d", bytes(8 * size))
        priorities = self._priorities
        if count + len(offered) < size:
            end = count + len(offered)
            priorities[count:end] = array.array("d", offered)
            self._values[count:end] = array.array("d", values)
            self._count = end
        elif count == size and len(offered) <= self.SIFT_LIMIT:
            for p, v in zip(offered, values):
                if p > priorities[0]:
                    self._replace_min(p, v)
        else:
            self._merge(offered, values)
        yield_gil()  # up to a thousand values offered in pure Python: let the request path in

    # A full sample is a binary min-heap by priority over the two arrays. A few values (a
    # quiet histogram's tick) go in one at a time, each replacing the root and sifting
    # down; more than this many are merged with one sort instead.
    SIFT_LIMIT = 256

    def _replace_min(self, priority: float, value: float) -> None:
        priorities, values, size = self._priorities, self._values, self.size
        pos, child = 0, 1
        while child < size:
            right = child + 1
            if right < size and priorities[right] < priorities[child]:
                child = right
            if priorities[child] >= priority:
                break
            priorities[pos] = priorities[child]
            values[pos] = values[child]
            pos, child = child, 2 * child + 1
        priorities[pos] = priority
        values[pos] = value

    def _merge(self, offered: list[float], values: list[float]) -> None:
        """Keep the ``size`` highest priorities of the kept and the offered (there are at least
        ``size``), as one replacement at a time would, in ascending order (a min-heap)."""
        count = self._count
        all_priorities = self._priorities[:count].tolist() + offered
        all_values = self._values[:count].tolist() + values
        order = sorted(range(len(all_priorities)), key=all_priorities.__getitem__)[-self.size:]
        # written in place: the storage taken at the first offer is all a sample ever uses
        self._priorities[:] = array.array("d", [all_priorities[i] for i in order])
        self._values[:] = array.array("d", [all_values[i] for i in order])
        self._count = self.size

    def _rescale(self, now_ns: int) -> None:
        factor = math.exp(-self.alpha * (now_ns - self._start_ns) / 1e9)
        count = self._count
        # scaling every priority by one factor keeps the heap's order
        self._priorities[:count] = array.array("d", [p * factor for p in self._priorities[:count]])
        self._start_ns = now_ns
        self._next_rescale_ns = now_ns + self.RESCALE_THRESHOLD_NS

    def values(self) -> list[float]:
        return self._values[:self._count].tolist()

    def clear(self) -> None:
        self._count = 0


# The stage of a histogram that has not seen a value yet (never written: record replaces it).
_EMPTY_STAGE = array.array("d")


class Histogram(Metric):
    """Count, min, max, mean and percentiles of a stream of values."""

    STAGE_SIZE = 1024

    __slots__ = ("lock", "count", "sum", "min", "max", "_staged", "_staged_n", "_sample", "_clock",
                 "_random", "_snapshot", "_snapshot_count", "stage_owner")
    kind = "histogram"

    def __init__(self, clock: Clock = DEFAULT_CLOCK, lock: Optional[threading.Lock] = None,
                 sample: Optional[ExponentiallyDecayingSample] = None) -> None:
        self.lock = lock if lock is not None else threading.Lock()
        self.count = 0
        self.sum = 0.0
        self.min = math.inf
        self.max = -math.inf
        # Allocated by the first value (record): most of a broker's histograms (seven per API
        # key and listener) never see one, and 8 KiB each of fresh memory was ~10 ms of a
        # KRaft node's start (docs/kraft.md).
        self._staged = _EMPTY_STAGE
        self._staged_n = 0
        self._clock = clock
        self._sample = sample or ExponentiallyDecayingSample(clock=clock)
        self._random = random.random
        self._snapshot: Optional[Snapshot] = None
        self._snapshot_count = -1
        # Set when another object stages this histogram's values (see ``fold``): reading
        # ticks that owner first, so a snapshot sees everything recorded so far.
        self.stage_owner: Any = None

    def update(self, value: float) -> None:
        with self.lock:
            self.record(value)

    def record(self, value: float) -> None:
        """``update`` for a caller that already holds ``self.lock``."""
        self.count += 1
        self.sum += value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        n = self._staged_n
        self._staged_n = n + 1
        if n < 1024:
            try:
                self._staged[n] = value
            except IndexError:  # the first value this histogram sees
                self._staged = array.array("d", bytes(8 * self.STAGE_SIZE))
                self._staged[n] = value
        else:
            # Past the stage's size keep a uniform sample of the values since the last tick
            # (Vitter's algorithm R); each staged value then stands for n / 1024 of them.
            j = int(self._random() * (n + 1))
            if j < 1024:
                self._staged[j] = value

    def tick(self) -> None:
        """Move the staged values into the decaying sample (the registry's ticker calls this)."""
        with self.lock:
            n = self._staged_n
            if n == 0:
                return
            kept = min(n, self.STAGE_SIZE)
            values = self._staged[:kept].tolist()
            self._staged_n = 0
        self._sample.add(values, n / kept, self._clock.tick())

    def fold(self, values: list, n: int) -> None:
        """Take ``values``, a uniform sample of ``n`` observations staged elsewhere (a caller that
        stages several histograms' values together, like RequestMetrics). Count is exact; sum,
        min and max are those of the sample, the sum scaled to ``n``."""
        if n <= 0 or not values:
            return
        # Computed before taking the lock, which the request path may share (RequestMetrics):
        # a call under it is where the GIL may go to a thread that then waits for the lock.
        total = sum(values) * (n / len(values))
        low, high = min(values), max(values)
        with self.lock:
            self.count += n
            self.sum += total
            if low < self.min:
                self.min = low
            if high > self.max:
                self.max = high
        self._sample.add(values, n / len(values), self._clock.tick())

    def snapshot(self) -> Snapshot:
        owner = self.stage_owner
        if owner is not None:
            owner.tick()
        self.tick()
        with self.lock:
            count = self.count
        if self._snapshot is None or count != self._snapshot_count:
            self._snapshot = Snapshot(self._sample.values())
            self._snapshot_count = count
        return self._snapshot

    def mean(self) -> float:
        with self.lock:
            return self.sum / self.count if self.count else 0.0

    def min_value(self) -> float:
        with self.lock:
            return self.min if self.count else 0.0

    def max_value(self) -> float:
        with self.lock:
            return self.max if self.count else 0.0

    def clear(self) -> None:
        with self.lock:
            self.count = 0
            self.sum = 0.0
            self.min = math.inf
            self.max = -math.inf
            self._staged_n = 0
            self._sample.clear()
            self._snapshot = None


class Timer(Metric):
    """A meter of events and a histogram of their durations (milliseconds in Kafka's timers)."""

    __slots__ = ("meter", "histogram", "duration_unit")
    kind = "timer"

    def __init__(self, clock: Clock = DEFAULT_CLOCK, duration_unit: str = "ms") -> None:
        self.meter = Meter("calls", clock)
        self.histogram = Histogram(clock)
        self.duration_unit = duration_unit

    def update_ms(self, duration_ms: float) -> None:
        self.meter.mark()
        self.histogram.update(duration_ms)

    def time(self) -> "_TimerContext":
        """``with timer.time(): ...`` records the block's duration in milliseconds."""
        return _TimerContext(self)

    @property
    def count(self) -> int:
        return self.meter.count


class _TimerContext:
    __slots__ = ("_timer", "_start")

    def __init__(self, timer: Timer) -> None:
        self._timer = timer
        self._start = 0

    def __enter__(self) -> "_TimerContext":
        self._start = _time.monotonic_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.update_ms((_time.monotonic_ns() - self._start) / 1e6)


class MetricsRegistry:
    """Metrics by name, and the ticker thread that keeps meter rates and histogram samples
    current (``metrics-meter-tick-thread``). ``new_*`` return the metric already registered
    under a name, as Yammer's do."""

    def __init__(self, clock: Clock = DEFAULT_CLOCK, start_ticker: bool = True) -> None:
        self.clock = clock
        self._metrics: dict[MetricName, Metric] = {}
        self._lock = threading.Lock()
        self._ticked: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._ticker: Optional[threading.Thread] = None
        self._start_ticker = start_ticker
        self._stop = threading.Event()

    # ---- registration -----------------------------------------------------------
    def _get_or_add(self, name: MetricName, factory: Callable[[], Metric], kind: str) -> Any:
        with self._lock:
            existing = self._metrics.get(name)
            if existing is not None:
                if existing.kind != kind:
                    raise ValueError(f"{name} is already registered as a {existing.kind}")
                return existing
            metric = factory()
            self._metrics[name] = metric
            if kind in ("meter", "histogram", "timer"):
                self._ticked.add(metric)
                self._ensure_ticker()
            return metric

    def new_gauge(self, name: MetricName, read: Callable[[], Any]) -> Gauge:
        return self._get_or_add(name, lambda: Gauge(read), "gauge")

    def new_state_gauge(self, name: MetricName, read: Callable[[], str], states: tuple[str, ...]) -> StateGauge:
        return self._get_or_add(name, lambda: StateGauge(read, states), "gauge")

    def new_meter(self, name: MetricName, event_type: str = "events",
                  lock: Optional[threading.Lock] = None, rate_unit_s: float = 1.0) -> Meter:
        return self._get_or_add(name, lambda: Meter(event_type, self.clock, lock, rate_unit_s), "meter")

    def new_histogram(self, name: MetricName, lock: Optional[threading.Lock] = None) -> Histogram:
        return self._get_or_add(name, lambda: Histogram(self.clock, lock), "histogram")

    def new_timer(self, name: MetricName) -> Timer:
        return self._get_or_add(name, lambda: Timer(self.clock), "timer")

    def remove_metric(self, name: MetricName) -> None:
        with self._lock:
            metric = self._metrics.pop(name, None)
            if metric is not None:
                self._ticked.discard(metric)

    def all_metrics(self) -> list[tuple[MetricName, Metric]]:
        with self._lock:
            return list(self._metrics.items())

    def get(self, name: MetricName) -> Optional[Metric]:
        return self._metrics.get(name)

    def find(self, mbean_name: str) -> Optional[Metric]:
        """The metric registered under a JMX object name (tests and tools)."""
        with self._lock:
            for name, metric in self._metrics.items():
                if name.mbean_name == mbean_name:
                    return metric
        return None

    def __len__(self) -> int:
        return len(self._metrics)

    # ---- ticking ----------------------------------------------------------------
    def _ensure_ticker(self) -> None:
        if self._start_ticker and self._ticker is None:
            self._ticker = threading.Thread(target=self._tick_loop, name="metrics-meter-tick-thread", daemon=True)
            self._ticker.start()

    def add_ticked(self, ticked: Any) -> None:
        """Something else the ticker calls ``tick()`` on every five seconds (held weakly)."""
        with self._lock:
            self._ticked.add(ticked)
            self._ensure_ticker()

    def tick_all(self) -> None:
        for metric in list(self._ticked):
            if isinstance(metric, Timer):
                metric.meter.tick()
                metric.histogram.tick()
            else:
                metric.tick()

    def _tick_loop(self) -> None:
        # At a fixed rate: the rates assume exactly one tick per five seconds.
        next_tick = _time.monotonic() + TICK_INTERVAL_S
        while not self._stop.wait(max(0.0, next_tick - _time.monotonic())):
            next_tick += TICK_INTERVAL_S
            try:
                self.tick_all()
            except Exception:  # noqa: BLE001 - a bad tick must not stop the ticking
                pass

    def shutdown(self) -> None:
        self._stop.set()
