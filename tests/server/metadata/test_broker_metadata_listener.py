"""BrokerMetadataListener, MetadataImage and RaftMetadataCache fed real metadata records,
after Kafka's BrokerMetadataListenerTest, MetadataPartitionsTest and RaftMetadataCacheTest."""
from __future__ import annotations

import uuid

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.metadata.controller.configuration_control_manager import ConfigResource
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_py.server.metadata.config_repository import CachedConfigRepository
from kafka_py.server.metadata.metadata_image import MetadataImage, MetadataImageBuilder
from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.clients.common.utils.time import Time
from tests.server.metadata import records as r

BROKER_ID = 1


class RecordingReplicaManager:
    def __init__(self) -> None:
        self.calls: list[tuple[int, set, set]] = []

    def handle_metadata_records(self, image_builder, offset, on_leadership_change) -> None:
        builder = image_builder.partitions_builder()
        self.calls.append((offset, {p.to_topic_partition() for p in builder.local_changed()},
                           {p.to_topic_partition() for p in builder.local_removed()}))


class RecordingConfigHandler:
    def __init__(self) -> None:
        self.changes: list[tuple[str, dict]] = []

    def process_config_changes(self, name, props) -> None:
        self.changes.append((name, dict(props)))


class RecordingGroupCoordinator:
    def __init__(self) -> None:
        self.deleted: list[TopicPartition] = []

    def handle_deleted_partitions(self, partitions) -> None:
        self.deleted.extend(partitions)


@pytest.fixture
def env():
    cache = RaftMetadataCache(BROKER_ID)
    repo = CachedConfigRepository()
    replica_manager = RecordingReplicaManager()
    topic_handler = RecordingConfigHandler()
    broker_handler = RecordingConfigHandler()
    group = RecordingGroupCoordinator()
    listener = BrokerMetadataListener(BROKER_ID, Time.SYSTEM, cache, repo, group_coordinator=group,
                                      replica_manager=replica_manager, topic_config_handler=topic_handler,
                                      broker_config_handler=broker_handler)
    yield listener, cache, repo, replica_manager, topic_handler, broker_handler, group
    listener.close()


def test_registered_brokers_are_fenced_until_unfenced(env):
    listener, cache, *_ = env
    listener.exec_commits(0, [r.register_broker(1, 9092), r.register_broker(2, 9093)])
    assert cache.get_alive_brokers() == []
    assert cache.current_image().brokers.get(1).fenced
    listener.exec_commits(2, [r.unfence(1)])
    assert [b.id for b in cache.get_alive_brokers()] == [1]
    assert cache.get_alive_broker(1).get_node("PLAINTEXT").port == 9092
    assert cache.get_alive_broker(2) is None
    assert [n.port for n in cache.get_alive_broker_nodes("PLAINTEXT")] == [9092]
    listener.exec_commits(3, [r.unfence(2), r.fence(1)])
    assert [b.id for b in cache.get_alive_brokers()] == [2]
    listener.exec_commits(5, [r.unregister(2)])
    assert cache.current_image().brokers.get(2) is None
    assert listener.highest_metadata_offset() == 5


def test_topics_and_partitions_answer_metadata(env):
    listener, cache, _repo, replica_manager, *_ = env
    foo = uuid.uuid4()
    listener.exec_commits(0, [r.register_broker(1, 9092), r.register_broker(2, 9093), r.unfence(1)])
    listener.exec_commits(5, [r.topic("foo", foo), r.partition(foo, 0, [1, 2], leader=1),
                              r.partition(foo, 1, [2, 1], leader=2)])
    assert cache.get_all_topics() == {"foo"}
    assert cache.num_partitions("foo") == 2
    assert cache.contains("foo") and cache.contains(TopicPartition("foo", 1))
    assert not cache.contains(TopicPartition("foo", 2))
    (metadata,) = cache.get_topic_metadata(["foo", "missing"], "PLAINTEXT")
    assert metadata.topic_id == foo
    by_partition = {p.partition_index: p for p in metadata.partitions}
    assert by_partition[0].error is Errors.NONE and by_partition[0].leader_id == 1
    # broker 2 is registered but fenced: no leader for clients
    assert by_partition[1].error is Errors.LEADER_NOT_AVAILABLE and by_partition[1].leader_id == -1
    # v0 clients lose the replicas without an address and are told so
    (v0,) = cache.get_topic_metadata(["foo"], "PLAINTEXT", error_unavailable_endpoints=True)
    p0 = {p.partition_index: p for p in v0.partitions}[0]
    assert p0.error is Errors.REPLICA_NOT_AVAILABLE and p0.replica_nodes == (1,)
    assert cache.get_non_existing_topics({"foo", "bar"}) == {"bar"}
    assert cache.get_partition_leader_endpoint("foo", 0, "PLAINTEXT").port == 9092
    assert cache.get_partition_leader_endpoint("foo", 1, "PLAINTEXT").is_empty()
    info = cache.get_partition_info("foo", 1)
    assert (info.leader, info.isr, info.replicas) == (2, (2, 1), (2, 1))
    # the replica manager heard of both local partitions
    assert replica_manager.calls == [(5, {TopicPartition("foo", 0), TopicPartition("foo", 1)}, set())]


def test_partition_change_bumps_epochs(env):
    listener, cache, _repo, replica_manager, *_ = env
    foo = uuid.uuid4()
    listener.exec_commits(2, [r.topic("foo", foo), r.partition(foo, 0, [1, 2, 3], leader=1, leader_epoch=4,
                                                               partition_epoch=7)])
    listener.exec_commits(3, [r.partition_change(foo, 0, isr=[1, 2])])
    p = cache.current_image().partitions.topic_partition("foo", 0)
    assert (p.leader_id, p.leader_epoch, p.partition_epoch, p.isr) == (1, 4, 8, (1, 2))
    listener.exec_commits(4, [r.partition_change(foo, 0, leader=2)])
    p = cache.current_image().partitions.topic_partition("foo", 0)
    assert (p.leader_id, p.leader_epoch, p.partition_epoch, p.isr) == (2, 5, 9, (1, 2))
    # reassigned away from this broker: removed locally
    listener.exec_commits(5, [r.partition_change(foo, 0, replicas=[2, 3], isr=[2, 3])])
    assert replica_manager.calls[-1] == (5, set(), {TopicPartition("foo", 0)})


def test_removed_topic_is_forgotten(env):
    listener, cache, repo, replica_manager, _topic_handler, _broker_handler, group = env
    foo = uuid.uuid4()
    listener.exec_commits(3, [r.topic("foo", foo), r.partition(foo, 0, [1], leader=1),
                              r.config(ConfigResourceType.TOPIC, "foo", "retention.ms", "1000")])
    assert repo.topic_config("foo") == {"retention.ms": "1000"}
    listener.exec_commits(4, [r.remove_topic(foo)])
    assert not cache.contains("foo")
    assert cache.current_image().topic_name_to_id("foo") is None
    assert repo.topic_config("foo") == {}
    assert group.deleted == [TopicPartition("foo", 0)]
    assert replica_manager.calls[-1] == (4, set(), {TopicPartition("foo", 0)})


def test_topic_created_and_removed_in_one_batch_is_not_local_work(env):
    listener, cache, _repo, replica_manager, *_ = env
    foo = uuid.uuid4()
    listener.exec_commits(3, [r.topic("foo", foo), r.partition(foo, 0, [1], leader=1), r.remove_topic(foo)])
    assert not cache.contains("foo")
    assert replica_manager.calls == [(3, set(), set())]


def test_a_bad_record_does_not_stop_its_batch(env):
    listener, cache, *_ = env
    listener.exec_commits(1, [r.partition(uuid.uuid4(), 0, [1], leader=1), r.register_broker(1, 9092),
                              r.unfence(1)])
    assert [b.id for b in cache.get_alive_brokers()] == [1]
    assert listener.highest_metadata_offset() == 1


def test_config_records_reach_the_repository_and_the_handlers(env):
    listener, _cache, repo, _rm, topic_handler, broker_handler, _group = env
    foo = uuid.uuid4()
    listener.exec_commits(3, [r.topic("foo", foo), r.partition(foo, 0, [1], leader=1),
                              r.config(ConfigResourceType.TOPIC, "foo", "retention.ms", "1000"),
                              r.config(ConfigResourceType.TOPIC, "foo", "cleanup.policy", "compact"),
                              r.config(ConfigResourceType.BROKER, "", "log.retention.ms", "5"),
                              r.config(ConfigResourceType.BROKER, "7", "log.retention.ms", "6")])
    # one call per resource, with its whole config, after the batch
    assert topic_handler.changes == [("foo", {"retention.ms": "1000", "cleanup.policy": "compact"})]
    # the cluster default and this broker's configs apply; another broker's do not
    assert broker_handler.changes == [("<default>", {"log.retention.ms": "5"})]
    listener.exec_commits(4, [r.config(ConfigResourceType.TOPIC, "foo", "retention.ms", None)])
    assert repo.topic_config("foo") == {"cleanup.policy": "compact"}
    assert topic_handler.changes[-1] == ("foo", {"cleanup.policy": "compact"})
    assert repo.config(ConfigResource(ConfigResourceType.BROKER, "7")) == {"log.retention.ms": "6"}


def _drain(listener: BrokerMetadataListener) -> None:
    """Wait (bounded) until the listener's queue has run everything appended before."""
    import threading

    from kafka_py.metadata.queue.event_queue import Event

    done = threading.Event()

    class Marker(Event):
        def run(self) -> None:
            done.set()

    listener.event_queue.append(Marker())
    assert done.wait(10)


def test_new_leader_is_the_controller_id(env):
    listener, cache, *_ = env
    listener.handle_new_leader(MetaLogLeader(3000, 1))
    _drain(listener)
    assert cache.get_controller_id() == 3000
    listener.handle_new_leader(MetaLogLeader(-1, 2))
    _drain(listener)
    assert cache.get_controller_id() is None


def test_handle_commits_runs_on_the_event_queue(env):
    listener, cache, *_ = env
    listener.handle_commits(0, [r.register_broker(1, 9092)])
    listener.handle_commits(1, [r.unfence(1)])
    _drain(listener)
    assert listener.highest_metadata_offset() == 1
    assert [b.id for b in cache.get_alive_brokers()] == [1]


def test_quota_records_reach_the_quota_managers():
    from kafka_py.server.metadata.client_quota_metadata_manager import ClientQuotaMetadataManager

    updates = []

    class Manager:
        def __init__(self, name):
            self.name = name

        def update_quota(self, sanitized_user, client_id, sanitized_client_id, quota):
            updates.append((self.name, sanitized_user, client_id, None if quota is None else quota.bound))

    class Managers:
        fetch = Manager("fetch")
        produce = Manager("produce")
        request = Manager("request")
        controller_mutation = Manager("mutation")

    ips = []

    class ConnectionQuotas:
        def update_ip_connection_rate_quota(self, ip, rate):
            ips.append((ip, rate))

    manager = ClientQuotaMetadataManager(Managers(), ConnectionQuotas())
    manager.handle_quota_record(r.quota({"user": "alice"}, "producer_byte_rate", 1024.0))
    manager.handle_quota_record(r.quota({"user": None, "client-id": "app"}, "consumer_byte_rate", 10.0))
    manager.handle_quota_record(r.quota({"client-id": None}, "request_percentage", 0, remove=True))
    manager.handle_quota_record(r.quota({"ip": "127.0.0.1"}, "connection_creation_rate", 5))
    manager.handle_quota_record(r.quota({"ip": None}, "connection_creation_rate", 0, remove=True))
    assert updates == [("produce", "alice", None, 1024.0), ("fetch", "<default>", "app", 10.0),
                       ("request", None, "<default>", None)]
    assert ips == [("127.0.0.1", 5), (None, None)]


def test_image_builder_shares_untouched_maps():
    foo, bar = uuid.uuid4(), uuid.uuid4()
    builder = MetadataImageBuilder(BROKER_ID, None, MetadataImage())
    pb = builder.partitions_builder()
    pb.add_uuid_mapping("foo", foo)
    pb.add_uuid_mapping("bar", bar)
    from kafka_py.server.metadata.metadata_partitions import MetadataPartition
    pb.set(MetadataPartition("foo", 0, 1, 0, (1,), (1,), 0))
    pb.set(MetadataPartition("bar", 0, 2, 0, (2,), (2,), 0))
    image1 = builder.build()
    builder2 = MetadataImageBuilder(BROKER_ID, None, image1)
    builder2.partitions_builder().set(MetadataPartition("foo", 1, 1, 0, (1,), (1,), 0))
    image2 = builder2.build()
    # the first image is untouched by the second's changes
    assert image1.partitions.num_topic_partitions("foo") == 1
    assert image2.partitions.num_topic_partitions("foo") == 2
    assert image2.partitions.topic_partition("bar", 0) is image1.partitions.topic_partition("bar", 0)
    assert builder2.partitions_builder().local_changed() == {MetadataPartition("foo", 1, 1, 0, (1,), (1,), 0)}


class FailingConfigHandler:
    def process_config_changes(self, name, props) -> None:
        raise ValueError(f"cannot apply {name}")


def test_broker_metadata_metrics_follow_the_batches():
    from kafka_py.core.metrics.yammer import MetricsRegistry
    from kafka_py.server.metadata.broker_server_metrics import BrokerServerMetrics, broker_metadata_metric_name
    from kafka_py.clients.common.utils.time import MockTime

    time = MockTime()
    registry = MetricsRegistry(start_ticker=False)
    metrics = BrokerServerMetrics(time, registry)
    listener = BrokerMetadataListener(BROKER_ID, time, RaftMetadataCache(BROKER_ID), CachedConfigRepository(),
                                      topic_config_handler=FailingConfigHandler(), broker_metrics=metrics)

    def read(attribute):
        return registry.get(broker_metadata_metric_name(attribute)).value()

    try:
        appended = time.milliseconds()
        listener.handle_commit_batch(4, 1, appended, 100, [r.register_broker(1, 9092), r.unfence(1)])
        _drain(listener)
        time.sleep(70)
        assert read("last-applied-record-offset") == 4
        assert read("last-applied-record-timestamp") == appended
        assert read("last-applied-record-lag-ms") == 70
        assert (read("metadata-load-error-count"), read("metadata-apply-error-count")) == (0, 0)
        # a partition of an unknown topic cannot be applied; a topic config the handler refuses
        # cannot be published
        foo = uuid.uuid4()
        listener.exec_commits(6, [r.partition(uuid.uuid4(), 0, [1], leader=1), r.topic("foo", foo),
                                  r.config(ConfigResourceType.TOPIC, "foo", "retention.ms", "1")])
        assert (read("metadata-load-error-count"), read("metadata-apply-error-count")) == (1, 1)
        # a batch without an append time moves the offset and keeps the last known time
        assert read("last-applied-record-offset") == 6
        assert read("last-applied-record-timestamp") == appended
    finally:
        listener.close()
    assert registry.all_metrics() == []
