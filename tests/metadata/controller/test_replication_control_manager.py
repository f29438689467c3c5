"""ReplicationControlManager, after Kafka's ReplicationControlManagerTest: the managers on
one SnapshotRegistry with records replayed by hand, so each request's records can be
checked before they are applied; and a property: a revert to the snapshot taken before
any sequence of writes restores every partition."""
from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given, settings, strategies as st
from kio.schema.create_topics.v7.response import CreateTopicsResponse
from kio.schema.elect_leaders.v2.request import ElectLeadersRequest, TopicPartitions

from kafka_py.clients.common.errors import ApiException
from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.configuration_control_manager import (
    ConfigResource,
    ConfigurationControlManager,
)
from kafka_py.metadata.controller.replication_control_manager import ReplicationControlManager
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.feature_map import FeatureMap
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.leader_constants import NO_LEADER
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import AlterConfigOpType, ConfigResourceType
from kafka_py.clients.common.utils.time import MockTime

from tests.metadata.controller.env import (
    MockControllerMetrics,
    alter_isr_request,
    create_topics_request,
    creatable_topic,
    heartbeat_request,
    registration_request,
)

CAUGHT_UP = 1 << 40


class ReplicationControlTestContext:
    def __init__(self, seed: int = 0) -> None:
        self.time = MockTime(0, 0)
        self.registry = SnapshotRegistry()
        self.metrics = MockControllerMetrics()
        self.config = ConfigurationControlManager(
            self.registry, {ConfigResourceType.TOPIC: LOG_CONFIG_DEF})
        self.cluster = ClusterControlManager(self.time, self.registry, 10**9,
                                             StripedReplicaPlacer(random.Random(seed)))
        self.cluster.activate()
        self.replication = ReplicationControlManager(self.registry, 3, 1, self.config,
                                                     self.cluster, self.metrics)
        self.epochs: dict[int, int] = {}
        self.offset = 0

    def replay(self, records) -> None:
        self.offset += 1
        handlers = {
            MetadataRecordType.REGISTER_BROKER_RECORD: self.cluster.replay_register_broker,
            MetadataRecordType.FENCE_BROKER_RECORD: self.cluster.replay_fence_broker,
            MetadataRecordType.UNFENCE_BROKER_RECORD: self.cluster.replay_unfence_broker,
            MetadataRecordType.UNREGISTER_BROKER_RECORD: self.cluster.replay_unregister_broker,
            MetadataRecordType.TOPIC_RECORD: self.replication.replay_topic,
            MetadataRecordType.PARTITION_RECORD: self.replication.replay_partition,
            MetadataRecordType.PARTITION_CHANGE_RECORD: self.replication.replay_partition_change,
            MetadataRecordType.REMOVE_TOPIC_RECORD: self.replication.replay_remove_topic,
            MetadataRecordType.CONFIG_RECORD: self.config.replay,
        }
        for record in records:
            handlers[MetadataRecordType.from_id(type(record.message).__api_key__)](record.message)

    def register_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            self.offset += 1
            result = self.cluster.register_broker(registration_request(broker_id), self.offset,
                                                  FeatureMapAndEpoch(FeatureMap({}), -1))
            self.epochs[broker_id] = self.offset
            self.replay(result.records)

    def unfence_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            result = self.replication.process_broker_heartbeat(
                heartbeat_request(broker_id, self.epochs[broker_id], CAUGHT_UP), self.offset)
            assert not result.response.is_fenced
            self.replay(result.records)

    def fence_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            result = self.replication.process_broker_heartbeat(
                heartbeat_request(broker_id, self.epochs[broker_id], CAUGHT_UP, want_fence=True),
                self.offset)
            self.replay(result.records)

    def create(self, *topics) -> CreateTopicsResponse:
        result = self.replication.create_topics(create_topics_request(*topics))
        self.replay(result.records)
        return result.response

    def partition(self, name: str, index: int):
        return self.replication.get_partition(self.replication.topic_id(name), index)


def test_create_topics_places_on_unfenced_brokers():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2, 3)
    response = ctx.create(creatable_topic("foo", 1, 3))
    assert Errors(response.topics[0].error_code) is Errors.INVALID_REPLICATION_FACTOR
    assert "fenced" in response.topics[0].error_message
    ctx.unfence_brokers(0, 1, 2)
    response = ctx.create(creatable_topic("foo", 4, 3))
    assert response.topics[0].error_code == 0
    for index in range(4):
        p = ctx.partition("foo", index)
        assert len(set(p.replicas)) == 3 and p.leader == p.replicas[0]
        assert p.leader in (0, 1, 2)
    assert ctx.metrics.global_partition_count() == 4 and ctx.metrics.global_topics_count() == 1


def test_replication_factor_above_the_brokers_changes_nothing():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(0, 1)
    result = ctx.replication.create_topics(create_topics_request(
        creatable_topic("foo", 1, 3, configs={"retention.ms": "10"})))
    assert Errors(result.response.topics[0].error_code) is Errors.INVALID_REPLICATION_FACTOR
    assert result.records == ()
    assert ctx.replication.topic_id("foo") is None


def test_manual_assignment_validation():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1)
    cases = {
        "dup": ({0: [0, 0]}, Errors.INVALID_REPLICA_ASSIGNMENT),
        "unequal": ({0: [0, 1], 1: [0]}, Errors.INVALID_REPLICA_ASSIGNMENT),
        "fenced": ({0: [2]}, Errors.INVALID_REPLICA_ASSIGNMENT),
        "gap": ({0: [0], 2: [1]}, Errors.INVALID_REPLICA_ASSIGNMENT),
        "ok": ({0: [2, 0, 1], 1: [1, 2, 0]}, Errors.NONE),
    }
    response = ctx.create(*(creatable_topic(name, assignments=a) for name, (a, _) in cases.items()))
    assert {t.name: Errors(t.error_code) for t in response.topics} == \
        {name: e for name, (_, e) in cases.items()}
    # the fenced broker 2 is a replica but not in the ISR, and cannot lead
    p = ctx.partition("ok", 0)
    assert p.replicas == (2, 0, 1) and p.isr == (0, 1) and p.leader == 0


def test_fencing_a_broker_shrinks_isrs_and_moves_leaders():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    ctx.create(creatable_topic("foo", assignments={0: [0, 1, 2], 1: [1, 2, 0]}),
               creatable_topic("bar", assignments={0: [0]}))
    ctx.fence_brokers(0)
    p0, p1, p2 = ctx.partition("foo", 0), ctx.partition("foo", 1), ctx.partition("bar", 0)
    assert p0.leader == 1 and p0.isr == (1, 2) and p0.leader_epoch == 1
    assert p1.leader == 1 and p1.isr == (1, 2) and p1.leader_epoch == 1  # shrink bumps too
    assert p2.leader == NO_LEADER and p2.isr == (0,)
    assert ctx.metrics.offline_partition_count() == 1
    assert not ctx.cluster.unfenced(0)
    # unfencing gives the leaderless partition its leader back
    ctx.unfence_brokers(0)
    assert ctx.partition("bar", 0).leader == 0
    assert ctx.metrics.offline_partition_count() == 0


def test_session_timeout_fences_one_broker_at_a_time():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    ctx.create(creatable_topic("foo", assignments={0: [0, 1, 2]}))
    ctx.time.advance(2000)
    first = ctx.replication.maybe_fence_one_stale_broker()
    ctx.replay(first.records)
    fenced = {b for b in range(3) if not ctx.cluster.unfenced(b)}
    assert len(fenced) == 1
    for _ in range(2):
        ctx.replay(ctx.replication.maybe_fence_one_stale_broker().records)
    assert ctx.cluster.fenced_broker_ids() == {0, 1, 2}
    assert ctx.replication.maybe_fence_one_stale_broker().records == ()
    assert ctx.partition("foo", 0).leader == NO_LEADER


def test_alter_isr_validation():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    ctx.create(creatable_topic("foo", assignments={0: [0, 1, 2]}))
    p = ctx.partition("foo", 0)

    def alter(new_isr, broker=0, leader_epoch=p.leader_epoch, version=p.partition_epoch,
              topic="foo", partition=0):
        result = ctx.replication.alter_isr(alter_isr_request(
            broker, ctx.epochs[broker], topic, partition, leader_epoch, new_isr, version))
        return Errors(result.response.topics[0].partitions[0].error_code), result.records

    assert alter([0, 1, 7])[0] is Errors.INVALID_REQUEST  # not a replica
    assert alter([1, 2])[0] is Errors.INVALID_REQUEST     # drops the leader
    assert alter([0, 0])[0] is Errors.INVALID_REQUEST     # duplicate
    assert alter([0], topic="bar")[0] is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert alter([0], partition=3)[0] is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert alter([0], leader_epoch=5)[0] is Errors.FENCED_LEADER_EPOCH
    assert alter([0], version=9)[0] is Errors.INVALID_UPDATE_VERSION
    error, records = alter([0, 2])
    assert error is Errors.NONE and len(records) == 1
    ctx.replay(records)
    assert ctx.partition("foo", 0).isr == (0, 2)
    # the same, stale, request again
    assert alter([0, 2])[0] is Errors.FENCED_LEADER_EPOCH or \
        alter([0, 2])[0] is Errors.INVALID_UPDATE_VERSION
    with pytest.raises(ApiException):
        ctx.replication.alter_isr(alter_isr_request(0, 999, "foo", 0, 0, [0], 0))


def test_preferred_election_and_unclean_config():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    ctx.create(creatable_topic("foo", assignments={0: [0, 1, 2]}))
    ctx.fence_brokers(0)
    assert ctx.partition("foo", 0).leader == 1
    assert ctx.metrics.preferred_replica_imbalance_count() == 1
    request = ElectLeadersRequest(election_type=0, topic_partitions=(
        TopicPartitions(topic="foo", partitions=(0, 4)),
        TopicPartitions(topic="nope", partitions=(0,))))
    result = ctx.replication.elect_leaders(request)
    codes = [[Errors(p.error_code) for p in t.partition_result]
             for t in result.response.replica_election_results]
    assert codes == [[Errors.PREFERRED_LEADER_NOT_AVAILABLE, Errors.UNKNOWN_TOPIC_OR_PARTITION],
                     [Errors.UNKNOWN_TOPIC_OR_PARTITION]]
    ctx.unfence_brokers(0)
    # back in the ISR (the leader's AlterIsr), broker 0 can take its leadership back
    p = ctx.partition("foo", 0)
    ctx.replay(ctx.replication.alter_isr(alter_isr_request(
        1, ctx.epochs[1], "foo", 0, p.leader_epoch, [1, 2, 0], p.partition_epoch)).records)
    result = ctx.replication.elect_leaders(request)
    assert result.response.replica_election_results[0].partition_result[0].error_code == 0
    ctx.replay(result.records)
    assert ctx.partition("foo", 0).leader == 0
    assert ctx.metrics.preferred_replica_imbalance_count() == 0
    with pytest.raises(ApiException):
        ctx.replication.elect_leaders(ElectLeadersRequest(election_type=7, topic_partitions=None))


def test_unclean_leader_election_follows_the_config():
    for enabled in (False, True):
        ctx = ReplicationControlTestContext()
        ctx.register_brokers(0, 1)
        ctx.unfence_brokers(0, 1)
        ctx.create(creatable_topic("foo", assignments={0: [0, 1]}))
        p = ctx.partition("foo", 0)
        ctx.replay(ctx.replication.alter_isr(alter_isr_request(
            0, ctx.epochs[0], "foo", 0, p.leader_epoch, [0], p.partition_epoch)).records)
        if enabled:
            ctx.replay([ctx.config.incremental_alter_configs({
                ConfigResource(ConfigResourceType.BROKER, ""): {
                    "unclean.leader.election.enable": (AlterConfigOpType.SET, "true")}}).records[0]])
        ctx.fence_brokers(0)
        p = ctx.partition("foo", 0)
        assert (p.leader, p.isr) == ((1, (1,)) if enabled else (NO_LEADER, (0,)))


def test_delete_topic_removes_configs_and_isr_entries():
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(0, 1)
    response = ctx.create(creatable_topic("foo", 2, 2, configs={"retention.ms": "10"}))
    topic_id = response.topics[0].topic_id
    assert ctx.config.get_configs(ConfigResource(ConfigResourceType.TOPIC, "foo")) == \
        {"retention.ms": "10"}
    result = ctx.replication.delete_topics([topic_id, uuid.uuid4()])
    assert [e.error for e in result.response.values()] == [Errors.NONE, Errors.UNKNOWN_TOPIC_ID]
    ctx.replay(result.records)
    assert ctx.replication.topic_id("foo") is None
    assert ctx.config.get_configs(ConfigResource(ConfigResourceType.TOPIC, "foo")) == {}
    assert list(ctx.replication.brokers_to_isrs().partitions_with_broker_in_isr(0)) == []
    assert ctx.metrics.global_partition_count() == 0


def test_cancel_reassignment_reverts():
    from kio.schema.alter_partition_reassignments.v0.request import (
        AlterPartitionReassignmentsRequest,
        ReassignablePartition,
        ReassignableTopic,
    )
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2, 3)
    ctx.unfence_brokers(0, 1, 2, 3)
    ctx.create(creatable_topic("foo", assignments={0: [0, 1, 2]}))

    def reassign(replicas):
        result = ctx.replication.alter_partition_reassignments(AlterPartitionReassignmentsRequest(
            topics=(ReassignableTopic(name="foo", partitions=(
                ReassignablePartition(partition_index=0, replicas=replicas),)),)))
        ctx.replay(result.records)
        return Errors(result.response.responses[0].partitions[0].error_code)

    assert reassign(None) is Errors.NO_REASSIGNMENT_IN_PROGRESS
    assert reassign((1, 2, 3)) is Errors.NONE
    p = ctx.partition("foo", 0)
    assert p.adding_replicas == (3,) and p.removing_replicas == (0,)
    assert reassign((1, 2, 9)) is Errors.INVALID_REPLICA_ASSIGNMENT
    assert reassign(None) is Errors.NONE
    p = ctx.partition("foo", 0)
    # (Kafka's revert keeps the merged order, less the replicas being added)
    assert p.replicas == (1, 2, 0) and p.isr == (0, 1, 2) and not p.is_reassigning()
    # a reordering completes at once
    assert reassign((2, 1, 0)) is Errors.NONE
    assert ctx.partition("foo", 0).replicas == (2, 1, 0)


OPS = st.lists(st.tuples(st.sampled_from(["create", "fence", "unfence", "shrink", "delete"]),
                         st.integers(0, 3)), max_size=12)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_revert_restores_every_partition(ops):
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2, 3)
    ctx.unfence_brokers(0, 1, 2)
    ctx.create(creatable_topic("base", 3, 2))
    ctx.registry.create_snapshot(ctx.offset)
    saved_offset = ctx.offset

    def state():
        return {name: ctx.replication.partitions(ctx.replication.topic_id(name))
                for name in ctx.replication.topic_names()}, ctx.cluster.fenced_broker_ids()

    before = state()
    counter = 0
    for op, n in ops:
        if op == "create":
            counter += 1
            ctx.create(creatable_topic(f"t{counter}", n + 1, 1))
        elif op == "fence" and ctx.cluster.unfenced(n):
            ctx.fence_brokers(n)
        elif op == "unfence" and not ctx.cluster.unfenced(n):
            ctx.unfence_brokers(n)
        elif op == "shrink":
            p = ctx.partition("base", n % 3)
            if p.leader != NO_LEADER:
                ctx.replay(ctx.replication.alter_isr(alter_isr_request(
                    p.leader, ctx.epochs[p.leader], "base", n % 3, p.leader_epoch, [p.leader],
                    p.partition_epoch)).records)
        elif op == "delete" and counter:
            topic_id = ctx.replication.topic_id(f"t{counter}")
            if topic_id is not None:
                ctx.replay(ctx.replication.delete_topics([topic_id]).records)
    ctx.registry.revert_to_snapshot(saved_offset)
    assert state() == before
    assert ctx.replication.global_partition_count() == 3
