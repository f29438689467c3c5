"""RaftReplicaManager (server/raft_replica_manager.py) becoming leader and follower from
metadata records, over a real LogManager in tmp_path, fed through a BrokerMetadataListener
as a KRaft broker feeds it; after Kafka's RaftReplicaManagerTest."""
from __future__ import annotations

import os
import uuid

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_config import LogConfig
from kafka_py.log.log_manager import LogManager
from kafka_py.server.kafka_config import KafkaConfig
from kafka_py.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_py.server.metadata.config_repository import CachedConfigRepository
from kafka_py.server.metadata.raft_metadata_cache import RaftMetadataCache
from kafka_py.server.raft_replica_manager import Deferred, RaftReplicaManager
from kafka_py.server.replica_manager_types import HostedPartition
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.core.utils.kafka_scheduler import KafkaScheduler
from kafka_py.clients.common.utils.time import Time
from tests.server.metadata import records as r

BROKER = 1
OTHER = 2
FOO = uuid.uuid4()
FOO0 = TopicPartition("foo", 0)
FOO1 = TopicPartition("foo", 1)

KRAFT_BROKER = {
    "process.roles": "broker", "node.id": str(BROKER), "controller.quorum.voters": "3000@localhost:9093",
    "listeners": "PLAINTEXT://localhost:9092", "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
}


class Env:
    def __init__(self, log_dir: str) -> None:
        self.config = KafkaConfig({**KRAFT_BROKER, "log.dirs": log_dir}, do_log=False)
        self.scheduler = KafkaScheduler(1, "test-scheduler-")
        self.scheduler.startup()
        defaults = self.config.log_config_defaults()
        self.log_manager = LogManager(self.config.log_dirs, LogConfig.from_props(defaults, {}),
                                      default_props=defaults, topic_config_overrides={}, time=Time.SYSTEM)
        self.cache = RaftMetadataCache(BROKER)
        self.repo = CachedConfigRepository()
        self.rm = RaftReplicaManager(self.config, Time.SYSTEM, self.scheduler, self.log_manager, self.cache,
                                     config_repository=self.repo)
        self.listener = BrokerMetadataListener(BROKER, Time.SYSTEM, self.cache, self.repo,
                                               replica_manager=self.rm)
        self.leadership_changes: list[tuple[set, set]] = []
        self.offset = 0

    def start(self) -> None:
        """What BrokerServer does once caught up: start the logs, end the deferral."""
        self.log_manager.startup()
        self.rm.startup()
        self.rm.end_metadata_change_deferral(self.on_leadership_change)

    def on_leadership_change(self, leaders, followers) -> None:
        self.leadership_changes.append(({p.topic_partition for p in leaders},
                                        {p.topic_partition for p in followers}))

    def commit(self, *records) -> None:
        self.offset += len(records)
        self.listener.exec_commits(self.offset, list(records))

    def close(self) -> None:
        self.listener.close()
        self.rm.shutdown()
        self.log_manager.shutdown()
        self.scheduler.shutdown()


def _epochs_on_disk(env, partition_dir: str) -> list[tuple[int, int]]:
    """The (epoch, start offset) entries of the partition's leader-epoch-checkpoint file."""
    with open(os.path.join(env.config.log_dirs[0], partition_dir, "leader-epoch-checkpoint")) as f:
        lines = f.read().split("\n")
    count = int(lines[1])
    return [tuple(int(v) for v in line.split()) for line in lines[2:2 + count]]


@pytest.fixture
def env(tmp_path):
    e = Env(str(tmp_path / "logs"))
    yield e
    e.close()


def brokers():
    return [r.register_broker(BROKER, 9092), r.unfence(BROKER), r.register_broker(OTHER, 9093), r.unfence(OTHER)]


def test_changes_wait_for_the_end_of_the_deferral(env):
    env.commit(*brokers())
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER, OTHER], leader=BROKER, leader_epoch=3),
               r.partition(FOO, 1, [OTHER, BROKER], leader=OTHER, leader_epoch=5))
    hosted = env.rm.get_partition(FOO0)
    assert isinstance(hosted, Deferred) and hosted.is_new
    assert hosted.partition.log is None
    assert not os.path.exists(os.path.join(env.config.log_dirs[0], "foo-0"))
    # a deferred partition serves nothing yet
    assert env.rm.online_partition(FOO0) is None

    env.start()
    leader = env.rm.online_partition(FOO0)
    assert leader.is_leader and leader.get_leader_epoch() == 3
    # the leader epoch checkpoint, written with the others at the end of the deferral, is on disk
    assert _epochs_on_disk(env, "foo-0") == [(3, 0)]
    assert leader.in_sync_replica_ids == frozenset({BROKER, OTHER})
    assert os.path.isdir(os.path.join(env.config.log_dirs[0], "foo-0"))
    follower = env.rm.online_partition(FOO1)
    assert not follower.is_leader and follower.leader_replica_id_opt == OTHER
    assert follower.get_leader_epoch() == 5
    fetcher = env.rm.replica_fetcher_manager.get_fetcher(FOO1)
    assert fetcher is not None and fetcher.source_broker.port == 9093
    assert env.leadership_changes == [({FOO0}, {FOO1})]
    assert not env.rm.deferring_metadata_changes


def test_records_after_the_deferral_apply_at_once(env):
    env.commit(*brokers())
    env.start()
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER, OTHER], leader=BROKER, leader_epoch=0))
    partition = env.rm.online_partition(FOO0)
    assert partition.is_leader and partition.get_leader_epoch() == 0
    assert partition.get_zk_version() == 0

    # the ISR shrinks: same leader, new partition epoch, no new leadership
    env.commit(r.partition_change(FOO, 0, isr=[BROKER]))
    assert partition.is_leader and partition.in_sync_replica_ids == frozenset({BROKER})
    assert partition.get_leader_epoch() == 0 and partition.get_zk_version() == 1

    # leadership moves to the other broker: this one follows it from the new epoch
    env.commit(r.partition_change(FOO, 0, leader=OTHER, isr=[OTHER, BROKER]))
    assert not partition.is_leader and partition.leader_replica_id_opt == OTHER
    assert partition.get_leader_epoch() == 1
    assert env.rm.replica_fetcher_manager.get_fetcher(FOO0).source_broker.port == 9093
    # and back: the fetcher goes
    env.commit(r.partition_change(FOO, 0, leader=BROKER))
    assert partition.is_leader and partition.get_leader_epoch() == 2
    # written by the time the batch is applied (epochs 0 and 1 start at offset 0 too: the
    # later one replaces the earlier)
    assert _epochs_on_disk(env, "foo-0") == [(2, 0)]
    assert env.rm.replica_fetcher_manager.get_fetcher(FOO0) is None


def test_partitions_of_other_brokers_are_not_hosted(env):
    env.commit(*brokers())
    env.start()
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [OTHER], leader=OTHER))
    assert env.rm.get_partition(FOO0) is HostedPartition.NONE
    assert env.cache.contains(FOO0)


def test_removed_topic_loses_its_logs(env):
    env.commit(*brokers())
    env.start()
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER], leader=BROKER),
               r.partition(FOO, 1, [BROKER], leader=BROKER))
    assert env.log_manager.get_log(FOO0) is not None
    env.commit(r.remove_topic(FOO))
    assert env.rm.get_partition(FOO0) is HostedPartition.NONE
    assert env.rm.get_partition(FOO1) is HostedPartition.NONE
    assert env.log_manager.get_log(FOO0) is None and env.log_manager.get_log(FOO1) is None
    assert not os.path.exists(os.path.join(env.config.log_dirs[0], "foo-0"))


def test_reassigned_away_partition_is_deleted(env):
    env.commit(*brokers())
    env.start()
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER, OTHER], leader=BROKER))
    assert env.log_manager.get_log(FOO0) is not None
    env.commit(r.partition_change(FOO, 0, leader=OTHER, replicas=[OTHER], isr=[OTHER]))
    assert env.rm.get_partition(FOO0) is HostedPartition.NONE
    assert env.log_manager.get_log(FOO0) is None


def test_removal_is_not_deferred(env):
    env.commit(*brokers())
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER], leader=BROKER))
    assert isinstance(env.rm.get_partition(FOO0), Deferred)
    env.commit(r.remove_topic(FOO))
    assert env.rm.get_partition(FOO0) is HostedPartition.NONE
    env.start()
    assert env.rm.get_partition(FOO0) is HostedPartition.NONE


def test_topic_configs_come_from_config_records(env):
    env.commit(*brokers())
    env.start()
    env.commit(r.topic("foo", FOO), r.config(ConfigResourceType.TOPIC, "foo", "retention.ms", "12345"),
               r.partition(FOO, 0, [BROKER], leader=BROKER))
    assert env.log_manager.get_log(FOO0).config.retention_ms == 12345


def test_followers_of_an_unknown_leader_still_get_a_log(env):
    env.commit(r.register_broker(BROKER, 9092), r.unfence(BROKER))
    env.start()
    env.commit(r.topic("foo", FOO), r.partition(FOO, 0, [BROKER, 7], leader=7))
    partition = env.rm.online_partition(FOO0)
    assert partition is not None and partition.log is not None
    assert env.rm.replica_fetcher_manager.get_fetcher(FOO0) is None
