"""ReplicationQuotaManager (ReplicationQuotaManagerTest.scala's cases) and how the topic and
broker config handlers feed it."""
from __future__ import annotations

import pytest

from kafka_py.clients.common.sensor import Quota
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.config_handler import BrokerConfigHandler, TopicConfigHandler
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.quota_factory import instantiate
from kafka_py.server.replication_quota_manager import (
    ALL_REPLICAS,
    LEADER_REPLICATION,
    QUOTA_BYTES_PER_SECOND_DEFAULT,
    ReplicationQuotaManager,
    ReplicationQuotaManagerConfig,
)
from kafka_py.clients.common.utils.time import MockTime


def tp1(partition: int) -> TopicPartition:
    return TopicPartition("topic1", partition)


def test_only_the_marked_partitions_are_throttled():
    quota = ReplicationQuotaManager(ReplicationQuotaManagerConfig(), LEADER_REPLICATION, MockTime())
    assert not quota.is_throttled(tp1(1))
    quota.mark_throttled("topic1", [1, 2, 3])
    assert [quota.is_throttled(tp1(p)) for p in (1, 2, 3, 4)] == [True, True, True, False]
    # a new list replaces the old one; removing the throttle clears the topic
    quota.mark_throttled("topic1", [4])
    assert [quota.is_throttled(tp1(p)) for p in (1, 4)] == [False, True]
    quota.remove_throttle("topic1")
    assert not quota.is_throttled(tp1(4)) and not quota.has_throttled_partitions


def test_wildcard_throttles_every_partition_of_the_topic_only():
    quota = ReplicationQuotaManager(ReplicationQuotaManagerConfig(), LEADER_REPLICATION, MockTime())
    quota.mark_throttled("MyTopic")
    assert quota.is_throttled(TopicPartition("MyTopic", 0)) and quota.is_throttled(TopicPartition("MyTopic", 7))
    assert not quota.is_throttled(TopicPartition("MyOtherTopic", 0))
    quota.mark_throttled("MyTopic", list(ALL_REPLICAS))
    assert quota.is_throttled(TopicPartition("MyTopic", 3))


def test_quota_is_exceeded_then_returns_below_its_bound_as_time_passes():
    time = MockTime()
    quota = ReplicationQuotaManager(ReplicationQuotaManagerConfig(num_quota_samples=10, quota_window_size_seconds=1),
                                    LEADER_REPLICATION, time)
    quota.update_quota(Quota.upper_bound(100))
    assert not quota.is_quota_exceeded()
    # the first window counts as a whole one: skip it
    time.sleep(1000)
    time.sleep(500)
    quota.record(1)
    assert not quota.is_quota_exceeded()
    quota.record(149)  # 150 B in 1.5 s
    assert not quota.is_quota_exceeded()
    quota.record(1)  # 151 B in 1.5 s
    assert quota.byte_rate() == pytest.approx(151 / 1.5)
    assert quota.is_quota_exceeded()
    time.sleep(500)  # 151 B in 2 s
    assert not quota.is_quota_exceeded()
    assert quota.byte_rate() == pytest.approx(151 / 2, abs=0.1)
    time.sleep(500)
    quota.record(99)  # 250 B in 2.5 s
    assert quota.byte_rate() == pytest.approx(250 / 2.5)
    assert not quota.is_quota_exceeded()
    quota.record(1)
    assert quota.is_quota_exceeded()
    time.sleep(2000)
    assert not quota.is_quota_exceeded()
    assert quota.byte_rate() == pytest.approx(251 / 4.5)


def test_a_new_bound_applies_at_once_to_the_rate_measured_so_far():
    time = MockTime()
    quota = ReplicationQuotaManager(ReplicationQuotaManagerConfig(), LEADER_REPLICATION, time)
    assert quota.upper_bound == QUOTA_BYTES_PER_SECOND_DEFAULT
    time.sleep(1000)
    quota.record(5000)
    assert not quota.is_quota_exceeded()  # no bound yet
    quota.update_quota(Quota.upper_bound(1000))
    assert quota.upper_bound == 1000 and quota.is_quota_exceeded()
    quota.update_quota(Quota.upper_bound(10_000))
    assert not quota.is_quota_exceeded()
    quota.update_quota(None)
    assert quota.upper_bound == QUOTA_BYTES_PER_SECOND_DEFAULT and not quota.is_quota_exceeded()


def _config(broker_id: int = 1) -> KafkaConfig:
    return KafkaConfig({"zookeeper.connect": "localhost:2181", "broker.id": str(broker_id)})


class _Logs:
    def update_topic_config(self, topic, overrides, only_if_hosted=False):
        pass


def test_topic_config_handler_marks_this_brokers_throttled_replicas():
    config = _config(1)
    quotas = instantiate(config, MockTime())
    handler = TopicConfigHandler(_Logs(), config, quotas)
    handler.process_config_changes("t", {"leader.replication.throttled.replicas": "0:1,1:2,2:1",
                                         "follower.replication.throttled.replicas": "*"})
    assert quotas.leader.throttled_partitions("t") == (0, 2)
    assert quotas.follower.throttled_partitions("t") is ALL_REPLICAS
    # this broker named nowhere: nothing of the topic throttled on the leader side here
    handler.process_config_changes("t", {"leader.replication.throttled.replicas": "1:2"})
    assert quotas.leader.throttled_partitions("t") == ()
    assert quotas.follower.throttled_partitions("t") is None
    handler.process_config_changes("t", {"leader.replication.throttled.replicas": ""})
    assert quotas.leader.throttled_partitions("t") is None
    # a list written to ZooKeeper by hand that Kafka's validator refuses throttles nothing
    handler.process_config_changes("t", {"leader.replication.throttled.replicas": "0-1"})
    assert quotas.leader.throttled_partitions("t") is None
    quotas.shutdown()


class _DynamicConfig:
    broker_id = 1

    def __init__(self):
        self.layers = []

    def update_broker_config(self, broker_id, properties):
        self.layers.append(("broker", dict(properties)))

    def update_default_config(self, properties):
        self.layers.append(("default", dict(properties)))


def test_broker_config_handler_sets_the_rates_from_this_brokers_own_config_only():
    quotas = instantiate(_config(1), MockTime())
    handler = BrokerConfigHandler(_DynamicConfig(), quotas)
    handler.process_config_changes("1", {"leader.replication.throttled.rate": "10000000",
                                         "follower.replication.throttled.rate": "2000",
                                         "replica.alter.log.dirs.io.max.bytes.per.second": "300"})
    assert (quotas.leader.upper_bound, quotas.follower.upper_bound, quotas.alter_log_dirs.upper_bound) == (
        10_000_000, 2000, 300)
    # the cluster default and other brokers' configs leave them alone, as in Kafka 2.8
    handler.process_config_changes("<default>", {"leader.replication.throttled.rate": "5"})
    handler.process_config_changes("2", {"leader.replication.throttled.rate": "5"})
    assert quotas.leader.upper_bound == 10_000_000
    # removed from the broker's config: no bound
    handler.process_config_changes("1", {"follower.replication.throttled.rate": "2000"})
    assert quotas.leader.upper_bound == QUOTA_BYTES_PER_SECOND_DEFAULT
    assert quotas.follower.upper_bound == 2000
    quotas.shutdown()


def test_the_byte_rate_is_a_gauge_under_kafkas_name_until_shutdown():
    from kafka_py.core.metrics.kafka_metrics_group import default_registry
    from kafka_py.core.metrics.yammer import MetricName

    name = MetricName("kafka.server", "FollowerReplication", "", None, "kafka.server:type=FollowerReplication", (),
                      attribute="byte-rate")
    time = MockTime()
    quota = ReplicationQuotaManager(ReplicationQuotaManagerConfig(), "FollowerReplication", time)
    quota.record(4000)
    time.sleep(2000)
    # 4,000 bytes over the 2 s since the first sample began
    assert default_registry().get(name).value() == pytest.approx(2000.0)
    quota.shutdown()
    assert default_registry().get(name) is None
