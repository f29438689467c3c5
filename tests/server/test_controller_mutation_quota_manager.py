"""ControllerMutationQuotaManager (KIP-599) on a manual clock: the token bucket, strict and
permissive quotas, the throttle time, the entity precedence it shares with the other quotas."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.errors import ThrottlingQuotaExceededException
from kafka_py.clients.common.sensor import KafkaMetric, MetricConfig, Quota, QuotaViolationException, Sensor, TokenBucket
from kafka_py.server.client_quota_manager import ClientQuotaManagerConfig
from kafka_py.server.controller_mutation_quota_manager import (
    UNBOUNDED_CONTROLLER_MUTATION_QUOTA,
    ControllerMutationQuotaManager,
    PermissiveControllerMutationQuota,
    StrictControllerMutationQuota,
)
from kafka_py.clients.common.utils.time import MockTime
from kafka_py.core.zk.zk_data import ConfigEntityName

# 10 windows of 1 s: a quota of 10 partitions/s holds a burst of 100
CONFIG = ClientQuotaManagerConfig(num_quota_samples=10, quota_window_size_seconds=1)


class _Context:
    def __init__(self, user: str, client_id: str) -> None:
        self.principal = f"User:{user}"
        self.client_id = client_id


class _Request:
    def __init__(self, api_version: int, user: str = "alice", client_id: str = "c") -> None:
        self.context = _Context(user, client_id)
        self.api_version = api_version


@pytest.fixture
def manager():
    m = ControllerMutationQuotaManager(CONFIG, MockTime())
    yield m
    m.shutdown()


def test_token_bucket_refills_up_to_its_burst() -> None:
    config = MetricConfig(samples=10, time_window_ms=1000, quota=Quota.upper_bound(10))
    bucket = TokenBucket()
    now = 1_000_000
    assert bucket.measure(config, now) == pytest.approx(100.0)  # full from the start
    bucket.record(config, 60, now)
    assert bucket.measure(config, now) == pytest.approx(40.0)
    assert bucket.measure(config, now + 2000) == pytest.approx(60.0)  # 10 per second back
    bucket.record(config, 100, now + 2000)
    assert bucket.measure(config, now + 2000) == pytest.approx(-40.0)
    assert bucket.measure(config, now + 100_000) == pytest.approx(100.0)  # never above the burst
    # without a quota: unbounded and nothing recorded
    free = MetricConfig(samples=10, time_window_ms=1000)
    assert TokenBucket().measure(free, now) > 1e18


def test_sensor_refuses_a_negative_bucket_only() -> None:
    sensor = Sensor("s")
    metric = sensor.add(KafkaMetric("tokens", TokenBucket(),
                                    MetricConfig(samples=10, time_window_ms=1000, quota=Quota.upper_bound(10))))
    sensor.record(100, 1_000_000)  # exactly empty: accepted
    sensor.record(0, 1_000_000)
    with pytest.raises(QuotaViolationException) as e:
        sensor.record(1, 1_000_000)
    assert e.value.value == pytest.approx(-1.0) and e.value.bound == 10 and e.value.metric is metric


def test_no_quota_is_unbounded(manager) -> None:
    assert manager.new_quota_for(_Request(6), 6) is UNBOUNDED_CONTROLLER_MUTATION_QUOTA
    UNBOUNDED_CONTROLLER_MUTATION_QUOTA.record(1e9)
    assert UNBOUNDED_CONTROLLER_MUTATION_QUOTA.throttle_time() == 0


def test_strict_quota_accepts_the_topic_that_empties_the_bucket_then_refuses(manager) -> None:
    manager.update_quota("alice", None, None, Quota.upper_bound(10))
    time = manager.time
    quota = manager.new_quota_for(_Request(6), 6)
    assert isinstance(quota, StrictControllerMutationQuota)
    quota.record(101)  # the bucket held 100: accepted, now at -1
    assert not quota.is_exceeded() and quota.throttle_time() == 0
    with pytest.raises(ThrottlingQuotaExceededException):
        quota.record(1)
    assert quota.is_exceeded()
    assert quota.throttle_time() == 100  # 1 token at 10/s
    time.sleep(40)
    assert quota.throttle_time() == 60  # less the time since
    time.sleep(100)
    assert quota.throttle_time() == 0
    # another request of the same user shares the bucket, refilled by now
    again = manager.new_quota_for(_Request(6, client_id="other"), 6)
    again.record(1)
    assert again.throttle_time() == 0


def test_permissive_quota_records_everything_and_sets_the_throttle_time(manager) -> None:
    manager.update_quota("alice", None, None, Quota.upper_bound(10))
    quota = manager.new_quota_for(_Request(5), 6)
    assert isinstance(quota, PermissiveControllerMutationQuota)
    quota.record(100)
    assert quota.throttle_time() == 0
    quota.record(50)  # never refused
    assert not quota.is_exceeded()
    assert quota.throttle_time() == 5000  # 50 tokens short at 10/s


def test_entities_and_defaults_as_the_other_quotas(manager) -> None:
    manager.update_quota(ConfigEntityName.DEFAULT, None, None, Quota.upper_bound(1))
    manager.update_quota("bob", "admin", "admin", Quota.upper_bound(1000))
    assert manager.quota("carol", "x").bound == 1
    assert manager.quota("bob", "admin").bound == 1000
    strict = manager.new_quota_for(_Request(6, user="carol"), 6)
    strict.record(11)  # burst 10: accepted, one short
    with pytest.raises(ThrottlingQuotaExceededException):
        strict.record(1)
    # bob with his client id has his own bucket of 10,000
    manager.new_quota_for(_Request(6, user="bob", client_id="admin"), 6).record(5000)
    # removing the default frees carol's next request (bound back to unlimited)
    manager.update_quota(ConfigEntityName.DEFAULT, None, None, None)
    manager.new_quota_for(_Request(6, user="carol"), 6).record(1e6)
    assert {m["type"] for m in manager.client_metrics()} == {"ControllerMutation"}
    assert all("tokens" in m for m in manager.client_metrics())


def test_tokens_mutation_rate_and_throttle_time_are_published(manager) -> None:
    from kafka_py.core.metrics.kafka_metrics_group import default_registry

    manager.update_quota("alice", None, None, Quota.upper_bound(10))
    manager.new_quota_for(_Request(6), 6).record(30)
    permissive = manager.new_quota_for(_Request(5), 6)
    permissive.record(90)  # 20 short of a 100 burst
    manager.throttle(_Request(5), permissive.throttle_time(), lambda response: None)
    gauges = {n.attribute: m.value() for n, m in default_registry().all_metrics()
              if n.mbean_name == "kafka.server:type=ControllerMutation,user=alice"}
    assert gauges["tokens"] == pytest.approx(-20.0)
    assert gauges["mutation-rate"] == pytest.approx(120 / 30.0)  # over Kafka's default 2 x 30 s
    assert gauges["throttle-time"] == 2000
    # a changed quota reaches the bucket, not the rate beside it
    manager.update_quota("alice", None, None, Quota.upper_bound(20))
    sensor = manager.get_or_create_quota_sensors("User:alice", "c").quota_sensor
    assert {m.name: m.config.quota for m in sensor.metrics} == {"tokens": Quota.upper_bound(20), "mutation-rate": None}
