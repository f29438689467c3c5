"""Meters, histograms and the registry against known inputs (manual clock, no ticker thread)."""
from __future__ import annotations

import heapq
import math
import random
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup, explicit_metric_name
from kafka_py.core.metrics.yammer import (
    EWMA, Clock, ExponentiallyDecayingSample, Histogram, Meter, MetricsRegistry, Snapshot, Timer)


class ManualClock(Clock):
    def __init__(self) -> None:
        self.now_ns = 1_000_000_000

    def tick(self) -> int:
        return self.now_ns

    def advance_s(self, seconds: float) -> None:
        self.now_ns += int(seconds * 1e9)


def test_ewma_one_minute_after_three_events_then_a_minute_of_quiet():
    ewma = EWMA.minutes(1)
    ewma.tick(3)
    assert ewma.rate == pytest.approx(0.6)
    for _ in range(12):  # one minute of 5-second ticks
        ewma.tick(0)
    assert ewma.rate == pytest.approx(0.6 * math.exp(-1), rel=1e-9)  # 0.22072766...


def test_ewma_five_and_fifteen_minutes():
    five, fifteen = EWMA.minutes(5), EWMA.minutes(15)
    for e in (five, fifteen):
        e.tick(3)
        for _ in range(12):
            e.tick(0)
    assert five.rate == pytest.approx(0.6 * math.exp(-1 / 5), rel=1e-9)  # 0.49123845
    assert fifteen.rate == pytest.approx(0.6 * math.exp(-1 / 15), rel=1e-9)  # 0.56130419


def test_meter_rates_converge_to_a_steady_rate():
    clock = ManualClock()
    meter = Meter(clock=clock)
    for _ in range(12 * 30):  # 30 minutes at 100 events/s, ticked every 5 s
        meter.mark(500)
        clock.advance_s(5)
        meter.tick()
    assert meter.count == 500 * 360
    assert meter.one_minute_rate() == pytest.approx(100.0, rel=1e-6)
    assert meter.five_minute_rate() == pytest.approx(100.0, rel=1e-3)
    assert meter.fifteen_minute_rate() == pytest.approx(100.0, rel=0.2)
    assert meter.mean_rate() == pytest.approx(100.0, rel=1e-6)


def test_meter_rate_unit_nanoseconds_gives_a_fraction_of_time():
    clock = ManualClock()
    idle = Meter(clock=clock, rate_unit_s=1e-9)
    clock.advance_s(10)
    idle.mark(7_500_000_000)  # 7.5 s idle in 10 s
    assert idle.mean_rate() == pytest.approx(0.75)
    idle.tick()
    assert idle.one_minute_rate() == pytest.approx(7.5e9 / 5 * 1e-9)


def test_meters_sharing_a_lock_count_exactly_under_threads():
    lock = threading.Lock()
    a, b = Meter(lock=lock), Meter(lock=lock)

    def work():
        for _ in range(20_000):
            with lock:
                a.count += 1
                b.count += 2
            a.mark()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert a.count == 160_000 and b.count == 160_000


def test_snapshot_quantiles_of_1_to_1000():
    s = Snapshot(range(1000, 0, -1))
    assert s.value(0.5) == pytest.approx(500.5)
    assert s.value(0.75) == pytest.approx(750.75)
    assert s.value(0.99) == pytest.approx(990.99)
    assert s.value(0.999) == pytest.approx(999.999)
    assert s.value(0.0) == 1 and s.value(1.0) == 1000
    assert Snapshot([]).value(0.99) == 0.0
    with pytest.raises(ValueError):
        s.value(1.5)


def test_histogram_keeps_every_value_below_the_sample_size():
    clock = ManualClock()
    h = Histogram(clock)
    values = list(range(1, 1001))
    random.Random(3).shuffle(values)
    for v in values:
        h.update(v)
    snap = h.snapshot()
    assert h.count == 1000 and h.min_value() == 1 and h.max_value() == 1000
    assert h.mean() == pytest.approx(500.5)
    assert snap.size() == 1000
    assert snap.value(0.5) == pytest.approx(500.5)
    assert snap.value(0.99) == pytest.approx(990.99)


def test_histogram_percentiles_of_many_values_from_a_uniform_sample():
    clock = ManualClock()
    h = Histogram(clock, sample=ExponentiallyDecayingSample(clock=clock, rng=random.Random(1)))
    h._random = random.Random(2).random
    for v in range(100_000):  # far more than the stage and the sample hold, in one tick
        h.update(v)
    snap = h.snapshot()
    assert h.count == 100_000
    assert snap.size() == 1024
    assert snap.value(0.5) == pytest.approx(50_000, rel=0.08)
    assert snap.value(0.95) == pytest.approx(95_000, rel=0.03)


def test_histogram_sample_forgets_old_values():
    clock = ManualClock()
    h = Histogram(clock, sample=ExponentiallyDecayingSample(clock=clock, rng=random.Random(5)))
    for _ in range(1028):
        h.update(1000.0)
    h.tick()
    clock.advance_s(600)  # ten minutes later, only small values
    for _ in range(2000):
        h.update(1.0)
    for _ in range(3):
        h.tick()
    snap = h.snapshot()
    assert snap.value(0.99) == 1.0
    assert h.max_value() == 1000.0


def test_decaying_sample_rescales_after_an_hour_and_keeps_its_order():
    clock = ManualClock()
    sample = ExponentiallyDecayingSample(size=10, clock=clock, rng=random.Random(9))
    sample.add([1.0] * 10, 1.0, clock.tick())
    clock.advance_s(3700)
    sample.add([2.0] * 10, 1.0, clock.tick())
    assert sorted(sample.values()) == [2.0] * 10
    assert all(math.isfinite(p) for p in sample._priorities[:sample._count])


@given(st.lists(st.lists(st.floats(min_value=0, max_value=1e6), max_size=60), max_size=12),
       st.integers(min_value=1, max_value=40), st.integers(min_value=0, max_value=2**32),
       st.integers(min_value=0, max_value=60))
def test_decaying_sample_keeps_the_highest_priorities_as_a_min_heap_would(batches, size, seed, sift_limit):
    """Against a heap of (priority, value) tuples fed the same random draws, with offers both
    sifted in one at a time and merged (``sift_limit`` moves the line between the two)."""
    clock = ManualClock()
    sample_type = type("Sample", (ExponentiallyDecayingSample,), {"__slots__": (), "SIFT_LIMIT": sift_limit})
    sample = sample_type(size=size, clock=clock, rng=random.Random(seed))
    model_random = random.Random(seed)
    start = clock.tick()
    heap: list[tuple[float, float]] = []
    for i, batch in enumerate(batches):
        clock.advance_s(7)
        now = clock.tick()
        sample.add(batch, 2.0, now)
        base = 2.0 * math.exp(sample.alpha * (now - start) / 1e9)
        for v in batch:
            priority = base / (1.0 - model_random.random())
            if len(heap) < size:
                heapq.heappush(heap, (priority, v))
            elif priority > heap[0][0]:
                heapq.heapreplace(heap, (priority, v))
        kept = sample._count
        assert sorted(zip(sample._priorities[:kept], sample._values[:kept])) == sorted(heap)
        if len(heap) == size:  # a full sample is a min-heap by priority
            assert all(sample._priorities[(i - 1) // 2] <= sample._priorities[i] for i in range(1, size))
        assert len(sample.values()) == min(size, sum(len(b) for b in batches[:i + 1]))


def test_timer_counts_and_times():
    t = Timer()
    with t.time():
        pass
    t.update_ms(10.0)
    assert t.count == 2 and t.histogram.count == 2 and t.histogram.max_value() == 10.0


def test_registry_returns_the_registered_metric_and_removes_it():
    registry = MetricsRegistry(start_ticker=False)
    name = explicit_metric_name("kafka.server", "ReplicaManager", "IsrShrinksPerSec")
    m = registry.new_meter(name)
    assert registry.new_meter(name) is m
    with pytest.raises(ValueError):
        registry.new_histogram(name)
    registry.remove_metric(name)
    assert registry.get(name) is None and len(registry) == 0


def test_explicit_metric_name_is_kafkas_mbean_name():
    name = explicit_metric_name("kafka.network", "RequestMetrics", "ErrorsPerSec",
                                {"request": "Produce", "error": "NONE"})
    assert name.mbean_name == "kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Produce,error=NONE"
    assert name.scope == "error.NONE.request.Produce"
    assert explicit_metric_name("kafka.log", "Log", "Size", {"topic": "t", "partition": "0", "is-future": ""}
                                ).mbean_name == "kafka.log:type=Log,name=Size,topic=t,partition=0"


def test_metrics_group_takes_kafkas_package_and_class_name():
    class ReplicaManager(KafkaMetricsGroup):
        pass

    ReplicaManager.__module__ = "kafka_py.server.replica_manager"
    assert ReplicaManager().metric_name("LeaderCount").mbean_name == "kafka.server:type=ReplicaManager,name=LeaderCount"

    class GroupMetadataManager(KafkaMetricsGroup):
        pass

    GroupMetadataManager.__module__ = "kafka_py.core.coordinator.group.group_metadata_manager"
    assert (GroupMetadataManager().metric_name("NumGroups").mbean_name
            == "kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups")


def test_histograms_never_updated_hold_no_stage_or_sample_storage():
    # A broker makes seven histograms per API key and listener; most never see a value.
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        histograms = [Histogram() for _ in range(1000)]
        idle = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # an 8 KiB stage each would be 8 MB
    assert idle < 2_000_000, idle
    first = histograms[0]
    for v in (5.0, 1.0, 9.0):
        first.update(v)
    first.tick()
    assert (first.count, first.min, first.max) == (3, 1.0, 9.0)
    assert first.snapshot().values == [1.0, 5.0, 9.0]
    assert histograms[1].count == 0 and histograms[1].snapshot().values == []
