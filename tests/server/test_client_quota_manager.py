"""ClientQuotaManager and ClientRequestQuotaManager against a manual clock (after Kafka's
ClientQuotaManagerTest and ClientRequestQuotaManagerTest), and the Rate they measure with."""
from __future__ import annotations

import threading
import time as _time

import pytest

from kafka_py.clients.common.sensor import MetricConfig, Quota, QuotaViolationException, Rate, Sensor, KafkaMetric
from kafka_py.network.request_channel import EndThrottlingResponse, StartThrottlingResponse
from kafka_py.server.client_quota_manager import (
    ClientQuotaManager,
    ClientQuotaManagerConfig,
    QuotaType,
)
from kafka_py.server.client_request_quota_manager import ClientRequestQuotaManager
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.clients.common.utils.time import MockTime, Time
from kafka_py.core.zk.zk_data import ConfigEntityName

DEFAULT = ConfigEntityName.DEFAULT
CONFIG = ClientQuotaManagerConfig(quota_default=500)


class _Context:
    def __init__(self, user: str, client_id: str) -> None:
        self.principal = f"User:{user}"
        self.client_id = client_id


class _Request:
    def __init__(self, user: str = "ANONYMOUS", client_id: str = "c", thread_time_ns: int = 0) -> None:
        self.context = _Context(user, client_id)
        self.request_thread_time_ns = thread_time_ns


@pytest.fixture
def time() -> MockTime:
    return MockTime()


def make(time: Time, config: ClientQuotaManagerConfig = CONFIG, quota_type: QuotaType = QuotaType.PRODUCE):
    return ClientQuotaManager(config, quota_type, time)


def record(manager: ClientQuotaManager, time: MockTime, user: str, client_id: str, value: float) -> int:
    return manager.maybe_record_and_get_throttle_time_ms(_Request(user, client_id), value, time.hi_res_milliseconds())


def test_rate_counts_at_least_samples_minus_one_windows(time) -> None:
    config = MetricConfig(samples=11, time_window_ms=1000, quota=Quota.upper_bound(500))
    rate = Rate()
    now = time.hi_res_milliseconds()
    rate.record(config, 1000, now)
    # 1000 bytes just now: measured over 10 windows, not over the 0 ms that passed.
    assert rate.measure(config, now) == pytest.approx(100.0)
    assert rate.window_size(config, now + 500) == 10_500
    # Past samples x window the recorded window is reset.
    assert rate.measure(config, now + 11_000) == 0.0


def test_sensor_raises_with_value_and_bound(time) -> None:
    config = MetricConfig(samples=2, time_window_ms=1000, quota=Quota.upper_bound(10))
    sensor = Sensor("s")
    metric = sensor.add(KafkaMetric("rate", Rate(), config))
    sensor.record(5, time.hi_res_milliseconds())
    with pytest.raises(QuotaViolationException) as e:
        sensor.record(100, time.hi_res_milliseconds())
    assert e.value.bound == 10 and e.value.value == pytest.approx(105.0) and e.value.metric is metric
    # Unchecked records never raise.
    sensor.record(1000, time.hi_res_milliseconds(), check_quotas=False)


def test_quota_violation_throttle_time_and_reaper(time) -> None:
    manager = make(time)
    calls: list[object] = []
    try:
        for _ in range(10):
            assert record(manager, time, "ANONYMOUS", "unknown", 400) == 0
            time.sleep(1000)
        # 400 x 10 + 2300 = 6300 bytes over 10.5 s = 600 B/s; (600 - 500) / 500 x 10.5 s = 2100 ms.
        time.sleep(500)
        throttle_ms = record(manager, time, "ANONYMOUS", "unknown", 2300)
        assert throttle_ms == 2100
        manager.throttle(_Request("ANONYMOUS", "unknown"), throttle_ms, calls.append)
        assert len(calls) == 1 and isinstance(calls[0], StartThrottlingResponse)
        # The reaper ends the throttle only once its time has passed (on the manual clock).
        reaper = manager.throttled_channel_reaper
        # The manual clock has not moved: nothing is due yet.
        assert len(calls) == 1 and reaper.queue_size == 1
        time.sleep(throttle_ms)
        reaper.do_work()  # due now (the reaper thread may have ended it already)
        assert isinstance(calls[1], EndThrottlingResponse) and reaper.queue_size == 0
        # Throttled until the burst's window has rolled over.
        for _ in range(10):
            record(manager, time, "ANONYMOUS", "unknown", 400)
            time.sleep(1000)
        assert record(manager, time, "ANONYMOUS", "unknown", 0) == 0
    finally:
        manager.shutdown()


def check_quota(manager, time, user, client_id, expected_bound, value, expect_throttle) -> None:
    assert manager.quota(user, client_id).bound == expected_bound
    expected_max = (expected_bound * (CONFIG.num_quota_samples - 1) * CONFIG.quota_window_size_seconds
                    if expected_bound < LONG_MAX else float(LONG_MAX))
    assert manager.get_max_value_in_quota_window(f"User:{user}", client_id) == pytest.approx(expected_max)
    throttle_ms = record(manager, time, user, client_id, value * CONFIG.num_quota_samples)
    assert (throttle_ms > 0) == expect_throttle, (user, client_id, throttle_ms)


def test_quota_config_precedence(time) -> None:
    """Kafka's testQuotaConfigPrecedence, value for value."""
    m = make(time, ClientQuotaManagerConfig())
    q = Quota.upper_bound
    try:
        m.update_quota(DEFAULT, None, None, q(1000))
        m.update_quota(None, DEFAULT, DEFAULT, q(2000))
        m.update_quota(DEFAULT, DEFAULT, DEFAULT, q(3000))
        m.update_quota("userA", None, None, q(4000))
        m.update_quota("userA", "client1", "client1", q(5000))
        m.update_quota("userB", None, None, q(6000))
        m.update_quota("userB", "client1", "client1", q(7000))
        m.update_quota("userB", DEFAULT, DEFAULT, q(8000))
        m.update_quota("userC", None, None, q(10000))
        m.update_quota(None, "client1", "client1", q(9000))

        check_quota(m, time, "userA", "client1", 5000, 4500, False)  # <user, client> over <user>
        check_quota(m, time, "userA", "client2", 4000, 4500, True)  # <user> over <client> and defaults
        check_quota(m, time, "userA", "client3", 4000, 0, True)  # <user> shared by the user's clients
        check_quota(m, time, "userA", "client1", 5000, 0, False)  # <user, client> is its own

        check_quota(m, time, "userB", "client1", 7000, 8000, True)
        check_quota(m, time, "userB", "client2", 8000, 7000, False)  # <user, default client> per client
        check_quota(m, time, "userB", "client3", 8000, 7000, False)

        check_quota(m, time, "userD", "client1", 3000, 3500, True)  # <default user, default client>
        check_quota(m, time, "userD", "client2", 3000, 2500, False)
        check_quota(m, time, "userE", "client1", 3000, 2500, False)

        m.update_quota(DEFAULT, DEFAULT, DEFAULT, None)
        check_quota(m, time, "userD", "client1", 1000, 0, False)  # new tags, new rate
        check_quota(m, time, "userE", "client4", 1000, 1500, True)
        check_quota(m, time, "userF", "client4", 1000, 800, False)  # <default user> shared by the user's clients
        check_quota(m, time, "userF", "client5", 1000, 800, True)

        m.update_quota(DEFAULT, None, None, None)
        check_quota(m, time, "userF", "client4", 2000, 0, False)  # <default client> shared across users
        check_quota(m, time, "userF", "client5", 2000, 0, False)
        check_quota(m, time, "userF", "client5", 2000, 2500, True)
        check_quota(m, time, "userG", "client5", 2000, 0, True)

        m.update_quota("userA", None, None, q(8000))
        m.update_quota("userA", "client1", "client1", q(10000))
        check_quota(m, time, "userA", "client2", 8000, 0, False)
        check_quota(m, time, "userA", "client2", 8000, 4500, True)  # the new bound and the earlier values
        check_quota(m, time, "userA", "client1", 10000, 0, False)
        check_quota(m, time, "userA", "client1", 10000, 6000, True)
        m.update_quota("userA", "client1", "client1", None)
        check_quota(m, time, "userA", "client6", 8000, 0, True)  # the shared user quota
        m.update_quota("userA", "client6", "client6", q(11000))
        check_quota(m, time, "userA", "client6", 11000, 8500, False)
        m.update_quota("userA", DEFAULT, DEFAULT, q(12000))
        m.update_quota("userA", "client6", "client6", None)
        check_quota(m, time, "userA", "client6", 12000, 4000, True)
    finally:
        m.shutdown()


def test_no_quota_records_nothing_and_default_user_quota_round_trip(time) -> None:
    m = make(time, ClientQuotaManagerConfig())
    try:
        assert not m.quotas_enabled
        assert record(m, time, "userA", "client1", 10**9) == 0
        assert m.client_metrics() == []  # nothing was even recorded
        m.update_quota(DEFAULT, None, None, Quota.upper_bound(10))
        assert m.quotas_enabled
        assert m.quota("userA", "client1").bound == 10
        assert record(m, time, "userA", "client1", 10_000) > 0
        m.update_quota(DEFAULT, None, None, None)
        assert m.quota("userA", "client1").bound == float(LONG_MAX)
        assert record(m, time, "userA", "client1", 10_000) == 0
        (entry,) = m.client_metrics()
        assert entry["user"] == "userA" and entry["client-id"] == "" and entry["quota"] == float(LONG_MAX)
    finally:
        m.shutdown()


def test_unrecord_takes_a_throttled_value_back(time) -> None:
    m = make(time, ClientQuotaManagerConfig())
    try:
        m.update_quota(None, "c", "c", Quota.upper_bound(100))
        request = _Request("u", "c")
        now = time.hi_res_milliseconds()
        assert m.maybe_record_and_get_throttle_time_ms(request, 900, now) == 0
        assert m.maybe_record_and_get_throttle_time_ms(request, 500, now) > 0
        m.unrecord_quota_sensor(request, 500, now)
        assert m.maybe_record_and_get_throttle_time_ms(request, 0, now) == 0
    finally:
        m.shutdown()


def test_user_names_are_sanitized_into_tags(time) -> None:
    m = make(time, ClientQuotaManagerConfig())
    try:
        m.update_quota("CN%3Dalice%2COU%3Deng", None, None, Quota.upper_bound(100))
        assert m.quota("CN=alice,OU=eng", "any").bound == 100
        assert m.quota("bob", "any").bound == float(LONG_MAX)
    finally:
        m.shutdown()


def test_request_quota_is_thread_time_percentage_and_bounded(time) -> None:
    m = ClientRequestQuotaManager(ClientQuotaManagerConfig(), time)
    try:
        now = time.hi_res_milliseconds()
        # Without a quota nothing is recorded.
        assert m.maybe_record_and_get_throttle_time_ms(_Request(thread_time_ns=10**9), now) == 0
        m.update_quota(None, "c", "c", Quota.upper_bound(1))  # 1 % of a thread
        # 1 ms of handler time is 0.1 % of a second: over 10 windows 0.01 %/s, within 1.
        assert m.maybe_record_and_get_throttle_time_ms(_Request(client_id="c", thread_time_ns=10**6), now) == 0
        # A whole second of handler time is far over; the throttle is capped at one window.
        throttle = m.maybe_record_and_get_throttle_time_ms(_Request(client_id="c", thread_time_ns=10**9), now)
        assert throttle == m.max_throttle_time_ms == 1000
        m.maybe_record_exempt(_Request(client_id="c", thread_time_ns=10**9))  # never throttles
    finally:
        m.shutdown()


def test_reaper_on_the_real_clock_ends_throttles_in_order() -> None:
    m = ClientQuotaManager(ClientQuotaManagerConfig(), QuotaType.FETCH, Time.SYSTEM)
    ended: list[int] = []
    done = threading.Event()

    def callback(index: int):
        def on(response):
            if isinstance(response, EndThrottlingResponse):
                ended.append(index)
                if len(ended) == 3:
                    done.set()
        return on

    try:
        for index, ms in enumerate((300, 50, 150)):
            m.throttle(_Request(client_id=str(index)), ms, callback(index))
        assert done.wait(10)
        assert ended == [1, 2, 0]
    finally:
        m.shutdown()
    assert not m.throttled_channel_reaper.is_alive()


def _quota_gauges(quota_type: str) -> dict:
    """The registry's gauges of one quota type: {(mbean, attribute): value}."""
    from kafka_py.core.metrics.kafka_metrics_group import default_registry

    return {(n.mbean_name, n.attribute): m.value() for n, m in default_registry().all_metrics()
            if n.group == "kafka.server" and n.type == quota_type and n.attribute is not None}


def test_client_sensors_are_published_under_kafkas_jmx_names(time) -> None:
    m = make(time, ClientQuotaManagerConfig(num_quota_samples=11, quota_window_size_seconds=1), QuotaType.FETCH)
    try:
        assert _quota_gauges("Fetch") == {}
        m.update_quota(None, "metrics-client", "metrics-client", Quota.upper_bound(100))
        mbean = "kafka.server:type=Fetch,client-id=metrics-client"
        request = _Request(client_id="metrics-client")
        throttle_ms = record(m, time, "ANONYMOUS", "metrics-client", 2000)
        assert throttle_ms > 0
        gauges = _quota_gauges("Fetch")
        # 2000 bytes over 10 windows of 1 s; nothing throttled yet
        assert gauges[(mbean, "byte-rate")] == pytest.approx(200.0)
        assert gauges[(mbean, "throttle-time")] != gauges[(mbean, "throttle-time")]  # NaN, as Kafka's Avg
        m.throttle(request, throttle_ms, lambda response: None)
        assert _quota_gauges("Fetch")[(mbean, "throttle-time")] == throttle_ms
        # a user quota measures all the user's client ids together: the user tag only;
        # a (user, client id) quota measures the pair
        m.update_quota("alice", None, None, Quota.upper_bound(10**9))
        record(m, time, "alice", "metrics-client", 10)
        assert _quota_gauges("Fetch")[("kafka.server:type=Fetch,user=alice", "byte-rate")] == pytest.approx(1.0)
        m.update_quota("bob", "metrics-client", "metrics-client", Quota.upper_bound(10**9))
        record(m, time, "bob", "metrics-client", 10)
        assert ("kafka.server:type=Fetch,user=bob,client-id=metrics-client", "byte-rate") in _quota_gauges("Fetch")
        # an hour without a record takes a client's sensors and metrics away
        time.sleep(3600 * 1000 + 31_000)
        record(m, time, "ANONYMOUS", "another-client", 1)
        assert (mbean, "byte-rate") not in _quota_gauges("Fetch")
    finally:
        m.shutdown()
    assert _quota_gauges("Fetch") == {}


def test_request_quota_publishes_request_time(time) -> None:
    m = ClientRequestQuotaManager(ClientQuotaManagerConfig(num_quota_samples=11, quota_window_size_seconds=1), time)
    try:
        m.update_quota(None, "rq", "rq", Quota.upper_bound(0.1))
        request = _Request(client_id="rq", thread_time_ns=50_000_000)  # 5% of a second
        assert m.maybe_record_and_get_throttle_time_ms(request, time.hi_res_milliseconds()) > 0
        gauges = _quota_gauges("Request")
        assert gauges[("kafka.server:type=Request,client-id=rq", "request-time")] == pytest.approx(0.5)
        assert ("kafka.server:type=Request,client-id=rq", "throttle-time") in gauges
    finally:
        m.shutdown()
