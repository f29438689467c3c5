"""QuorumController on a three-node LocalLogManager quorum, after Kafka's
QuorumControllerTest: the active controller's writes reach the standbys through the log,
a renounce reverts what had not committed, brokers register, heartbeat and are fenced
when their sessions expire, and bad requests change nothing."""
from __future__ import annotations

import datetime
import uuid

import pytest
from kio.schema.alter_configs.v1.request import (
    AlterableConfig as LegacyConfig,
    AlterConfigsRequest,
    AlterConfigsResource as LegacyResource,
)
from kio.schema.alter_partition_reassignments.v0.request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from kio.schema.allocate_producer_ids.v0.request import AllocateProducerIdsRequest
from kio.schema.create_partitions.v3.request import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from kio.schema.elect_leaders.v2.request import ElectLeadersRequest, TopicPartitions
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.schema.list_partition_reassignments.v0.request import ListPartitionReassignmentsRequest
from kio.schema.unregister_broker.v0.request import UnregisterBrokerRequest
from kio.schema.update_features.v0.request import FeatureUpdateKey, UpdateFeaturesRequest

from kafka_py.clients.common.errors import ApiException
from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.metadata.controller.client_quota_control_manager import ClientQuotaEntity
from kafka_py.metadata.controller.configuration_control_manager import ConfigResource
from kafka_py.metadata.controller.quorum_controller import exception_to_apparent_controller
from kafka_py.metadata.leader_constants import NO_LEADER
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.clients.common.utils.time import MockTime

from tests.metadata.controller.env import (
    LocalLogManagerTestEnv,
    QuorumControllerTestEnv,
    alter_isr_request,
    create_topics_request,
    creatable_topic,
    heartbeat_request,
    quota_request,
    registration_request,
    result,
    wait_for,
)

CAUGHT_UP = 1 << 40  # a metadata offset every broker reports: always caught up


@pytest.fixture
def quorum():
    log_env = LocalLogManagerTestEnv(3)
    env = QuorumControllerTestEnv(log_env, time=MockTime(),
                                  config_defs={ConfigResourceType.TOPIC: LOG_CONFIG_DEF},
                                  supported_features={"metadata.version": VersionRange(1, 5)},
                                  session_timeout_ns=10 * 10**9)
    yield env
    env.close()
    log_env.close()


def register_and_unfence(controller, broker_ids, racks=None) -> dict[int, int]:
    epochs = {}
    for broker_id in broker_ids:
        rack = None if racks is None else racks[broker_id]
        reply = result(controller.register_broker(registration_request(broker_id, rack=rack)))
        assert reply.error_code == 0
        epochs[broker_id] = int(reply.broker_epoch)
    for broker_id in broker_ids:
        reply = result(controller.process_broker_heartbeat(
            heartbeat_request(broker_id, epochs[broker_id], CAUGHT_UP)))
        assert not reply.is_fenced
    return epochs


def topic_state(controller, name):
    """(topic id, partitions) as the controller's thread sees them now."""
    def read():
        rc = controller.replication_control
        topic_id = rc.topic_id(name)
        return topic_id, (rc.partitions(topic_id) if topic_id else {})
    return result(controller.append_read_event("read", read))


def api_error(future) -> Errors:
    with pytest.raises(ApiException) as info:
        result(future)
    return Errors[info.value.error_name]


def test_create_topics_replicates_to_standbys(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0, 1, 2])
    response = result(active.create_topics(create_topics_request(
        creatable_topic("foo", 3, 2, configs={"cleanup.policy": "compact"}))))
    (topic,) = response.topics
    assert topic.error_code == 0 and topic.num_partitions == 3 and topic.replication_factor == 2
    topic_id, parts = topic_state(active, "foo")
    assert topic_id == topic.topic_id
    for standby in quorum.standbys(active):
        wait_for(lambda: topic_state(standby, "foo") == (topic_id, parts), "standby catches up")
        configs = result(standby.describe_configs(
            {ConfigResource(ConfigResourceType.TOPIC, "foo"): ()}))
        assert configs[ConfigResource(ConfigResourceType.TOPIC, "foo")].result == \
            {"cleanup.policy": "compact"}
    for partition in parts.values():
        assert len(partition.replicas) == 2 and partition.isr == partition.replicas
        assert partition.leader == partition.replicas[0]
    assert quorum.metrics[quorum.controllers.index(active)].global_topics_count() == 1
    assert quorum.metrics[quorum.controllers.index(active)].global_partition_count() == 3


def test_requests_to_a_standby_fail_with_not_controller(quorum):
    active = quorum.active_controller()
    standby = quorum.standbys(active)[0]
    with pytest.raises(ApiException) as info:
        result(standby.create_topics(create_topics_request(creatable_topic("foo", 1, 1))))
    assert info.value.error_name == "NOT_CONTROLLER"
    assert exception_to_apparent_controller(info.value) == active.node_id()


def test_bad_topics_get_kafka_errors_and_change_nothing(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0, 1])
    response = result(active.create_topics(create_topics_request(
        creatable_topic("too-many-replicas", 1, 3),
        creatable_topic("bad name!", 1, 1),
        creatable_topic("bad-config", 1, 1, configs={"no.such.config": "1"}),
        creatable_topic("bad-value", 1, 1, configs={"retention.ms": "soon"}),
        creatable_topic("zero-partitions", 0, 1),
        creatable_topic("unknown-broker", assignments={0: [0, 7]}),
    )))
    errors = {t.name: Errors(t.error_code) for t in response.topics}
    assert errors == {
        "too-many-replicas": Errors.INVALID_REPLICATION_FACTOR,
        "bad name!": Errors.INVALID_TOPIC_EXCEPTION,
        "bad-config": Errors.INVALID_CONFIG,
        "bad-value": Errors.INVALID_CONFIG,
        "zero-partitions": Errors.INVALID_PARTITIONS,
        "unknown-broker": Errors.INVALID_REPLICA_ASSIGNMENT,
    }
    assert result(active.append_read_event(
        "topics", lambda: active.replication_control.topic_names())) == []
    configs = result(active.describe_configs(
        {ConfigResource(ConfigResourceType.TOPIC, "bad-value"): ()}))
    assert configs[ConfigResource(ConfigResourceType.TOPIC, "bad-value")].result == {}
    again = result(active.create_topics(create_topics_request(creatable_topic("ok", 1, 2))))
    assert again.topics[0].error_code == 0
    dup = result(active.create_topics(create_topics_request(creatable_topic("ok", 1, 2))))
    assert Errors(dup.topics[0].error_code) is Errors.TOPIC_ALREADY_EXISTS


def test_validate_only_creates_nothing(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0])
    response = result(active.create_topics(create_topics_request(
        creatable_topic("foo", 2, 1), validate_only=True)))
    assert response.topics[0].error_code == 0
    assert topic_state(active, "foo") == (None, {})


def test_renounce_reverts_uncommitted_changes(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0, 1, 2])
    result(active.create_topics(create_topics_request(creatable_topic("committed", 1, 3))))
    manager = quorum.log_env.log_managers[active.node_id()]
    # The active node stops reading the log, then the log hands the leadership on: its
    # next write is refused by the log, but it applies it in memory and waits.
    manager.set_max_read_offset(quorum.log_env.shared.end_offset())
    manager.renounce(active.cur_claim_epoch())
    pending = active.create_topics(create_topics_request(creatable_topic("lost", 1, 3)))
    wait_for(lambda: topic_state(active, "lost")[0] is not None, "the uncommitted topic applied")
    assert not pending.done()
    manager.set_max_read_offset(LATEST_EPOCH)
    assert api_error(pending) is Errors.NOT_CONTROLLER
    assert topic_state(active, "lost") == (None, {})
    assert topic_state(active, "committed")[0] is not None
    new_active = quorum.active_controller()
    assert topic_state(new_active, "lost") == (None, {})
    assert topic_state(new_active, "committed")[0] is not None


def test_fencing_on_missed_heartbeats_moves_leaders(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1, 2])
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", assignments={0: [0, 1, 2], 1: [0, 2, 1]}))))
    topic_id, parts = topic_state(active, "foo")
    assert parts[0].leader == 0 and parts[1].leader == 0
    time: MockTime = quorum.time
    # brokers 1 and 2 keep heartbeating; broker 0 goes silent
    for _ in range(3):
        time.advance(4000)
        for broker_id in (1, 2):
            result(active.process_broker_heartbeat(
                heartbeat_request(broker_id, epochs[broker_id], CAUGHT_UP)))
    wait_for(lambda: not active.cluster_control.unfenced(0), "broker 0 fenced")
    _, parts = topic_state(active, "foo")
    assert parts[0].leader == 1 and parts[0].isr == (1, 2)
    assert parts[1].leader == 2 and parts[1].isr == (2, 1)
    assert parts[0].leader_epoch == 1
    # standbys see the same
    for standby in quorum.standbys(active):
        wait_for(lambda: topic_state(standby, "foo")[1] == parts, "standby sees the fencing")


def test_alter_isr_with_stale_epochs_is_refused(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1, 2])
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", assignments={0: [0, 1, 2]}))))
    _, parts = topic_state(active, "foo")
    p = parts[0]
    stale_leader = result(active.alter_isr(alter_isr_request(
        0, epochs[0], "foo", 0, p.leader_epoch + 1, [0, 1], p.partition_epoch)))
    assert Errors(stale_leader.topics[0].partitions[0].error_code) is Errors.FENCED_LEADER_EPOCH
    stale_version = result(active.alter_isr(alter_isr_request(
        0, epochs[0], "foo", 0, p.leader_epoch, [0, 1], p.partition_epoch + 5)))
    assert Errors(stale_version.topics[0].partitions[0].error_code) is Errors.INVALID_UPDATE_VERSION
    not_leader = result(active.alter_isr(alter_isr_request(
        1, epochs[1], "foo", 0, p.leader_epoch, [0, 1], p.partition_epoch)))
    assert Errors(not_leader.topics[0].partitions[0].error_code) is Errors.INVALID_REQUEST
    assert api_error(active.alter_isr(alter_isr_request(
        0, epochs[0] + 100, "foo", 0, p.leader_epoch, [0, 1], p.partition_epoch))) \
        is Errors.STALE_BROKER_EPOCH
    assert topic_state(active, "foo")[1][0] == p
    ok = result(active.alter_isr(alter_isr_request(
        0, epochs[0], "foo", 0, p.leader_epoch, [0, 1], p.partition_epoch)))
    answer = ok.topics[0].partitions[0]
    assert answer.error_code == 0 and tuple(answer.isr) == (0, 1)
    assert answer.current_isr_version == p.partition_epoch + 1
    assert topic_state(active, "foo")[1][0].isr == (0, 1)


def unclean_setup(quorum, enable: bool):
    """A partition whose only ISR member (broker 0) is fenced; broker 1, out of sync, lives."""
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1])
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", assignments={0: [0, 1]}))))
    _, parts = topic_state(active, "foo")
    shrunk = result(active.alter_isr(alter_isr_request(
        0, epochs[0], "foo", 0, parts[0].leader_epoch, [0], parts[0].partition_epoch)))
    assert shrunk.topics[0].partitions[0].error_code == 0
    if enable:
        response = result(active.incremental_alter_configs(IncrementalAlterConfigsRequest(
            resources=(AlterConfigsResource(resource_type=2, resource_name="foo", configs=(
                AlterableConfig(name="unclean.leader.election.enable", config_operation=0,
                                value="true"),)),), validate_only=False)))
        assert response.responses[0].error_code == 0
    result(active.process_broker_heartbeat(
        heartbeat_request(0, epochs[0], CAUGHT_UP, want_fence=True)))
    return active


def test_no_unclean_election_when_disabled(quorum):
    active = unclean_setup(quorum, enable=False)
    _, parts = topic_state(active, "foo")
    assert parts[0].leader == NO_LEADER and parts[0].isr == (0,)
    response = result(active.elect_leaders(ElectLeadersRequest(
        election_type=0, topic_partitions=(TopicPartitions(topic="foo", partitions=(0,)),))))
    error = response.replica_election_results[0].partition_result[0].error_code
    assert Errors(error) is Errors.LEADER_NOT_AVAILABLE
    assert topic_state(active, "foo")[1][0].leader == NO_LEADER


def test_unclean_election_when_enabled(quorum):
    active = unclean_setup(quorum, enable=True)
    _, parts = topic_state(active, "foo")
    assert parts[0].leader == 1 and parts[0].isr == (1,)


def test_unclean_election_request(quorum):
    active = unclean_setup(quorum, enable=False)
    response = result(active.elect_leaders(ElectLeadersRequest(
        election_type=1, topic_partitions=(TopicPartitions(topic="foo", partitions=(0,)),))))
    assert response.replica_election_results[0].partition_result[0].error_code == 0
    _, parts = topic_state(active, "foo")
    assert parts[0].leader == 1 and parts[0].isr == (1,)


def test_controlled_shutdown_moves_leaderships(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1, 2])
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", assignments={0: [0, 1, 2], 1: [1, 0, 2]}))))
    reply = result(active.process_broker_heartbeat_reply(
        heartbeat_request(0, epochs[0], CAUGHT_UP, want_shut_down=True)))
    assert reply.in_controlled_shutdown and not reply.should_shut_down
    _, parts = topic_state(active, "foo")
    assert all(0 not in p.isr and p.leader != 0 for p in parts.values())
    # no leaderships left, and every active broker is past the shutdown offset
    for broker_id in (1, 2):
        result(active.process_broker_heartbeat(heartbeat_request(broker_id, epochs[broker_id],
                                                                 CAUGHT_UP)))
    reply = result(active.process_broker_heartbeat_reply(
        heartbeat_request(0, epochs[0], CAUGHT_UP, want_shut_down=True)))
    assert reply.should_shut_down


def test_broker_reregistration_and_duplicates(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0])
    other = registration_request(0, incarnation=uuid.uuid4())
    assert api_error(active.register_broker(other)) is Errors.DUPLICATE_BROKER_REGISTRATION
    again = result(active.register_broker(registration_request(0)))
    assert again.broker_epoch > epochs[0]
    assert api_error(active.process_broker_heartbeat(
        heartbeat_request(0, epochs[0], CAUGHT_UP))) is Errors.STALE_BROKER_EPOCH
    result(active.unregister_broker(UnregisterBrokerRequest(broker_id=0)))
    assert api_error(active.unregister_broker(UnregisterBrokerRequest(broker_id=0))) \
        is Errors.BROKER_ID_NOT_REGISTERED


def test_delete_topics_and_create_partitions(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0, 1, 2])
    created = result(active.create_topics(create_topics_request(creatable_topic("foo", 1, 2))))
    topic_id = created.topics[0].topic_id
    response = result(active.create_partitions(CreatePartitionsRequest(topics=(
        CreatePartitionsTopic(name="foo", count=3, assignments=None),
        CreatePartitionsTopic(name="foo-unknown", count=3, assignments=None),
    ), timeout=datetime.timedelta(seconds=30), validate_only=False)))
    codes = [Errors(r.error_code) for r in response.results]
    assert codes == [Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION]
    assert len(topic_state(active, "foo")[1]) == 3
    response = result(active.create_partitions(CreatePartitionsRequest(topics=(
        CreatePartitionsTopic(name="foo", count=2, assignments=None),
        CreatePartitionsTopic(name="foo", count=5, assignments=(
            CreatePartitionsAssignment(broker_ids=(0, 1)),
            CreatePartitionsAssignment(broker_ids=(0, 0)))),
    ), timeout=datetime.timedelta(seconds=30), validate_only=False)))
    codes = [Errors(r.error_code) for r in response.results]
    assert codes == [Errors.INVALID_PARTITIONS, Errors.INVALID_REPLICA_ASSIGNMENT]
    assert len(topic_state(active, "foo")[1]) == 3
    deleted = result(active.delete_topics([topic_id, uuid.uuid4()]))
    assert deleted[topic_id].is_success()
    assert [e.error for k, e in deleted.items() if k != topic_id] == [Errors.UNKNOWN_TOPIC_ID]
    assert topic_state(active, "foo") == (None, {})
    ids = result(active.find_topic_ids(["foo"]))
    assert ids["foo"].error.error is Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_partition_reassignment(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1, 2, 3])
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", assignments={0: [0, 1, 2]}))))
    response = result(active.alter_partition_reassignments(AlterPartitionReassignmentsRequest(
        topics=(ReassignableTopic(name="foo", partitions=(
            ReassignablePartition(partition_index=0, replicas=(3, 1, 2)),
            ReassignablePartition(partition_index=5, replicas=(3, 1, 2)))),))))
    codes = [Errors(p.error_code) for p in response.responses[0].partitions]
    assert codes == [Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION]
    listing = result(active.list_partition_reassignments(ListPartitionReassignmentsRequest(
        topics=None)))
    (ongoing,) = listing.topics[0].partitions
    assert tuple(ongoing.adding_replicas) == (3,) and tuple(ongoing.removing_replicas) == (0,)
    _, parts = topic_state(active, "foo")
    p = parts[0]
    assert p.replicas == (3, 1, 2, 0)
    # the new replica catches up: the leader's AlterIsr completes the reassignment and, as
    # the leader (0) is being removed, moves the leadership
    answer = result(active.alter_isr(alter_isr_request(
        0, epochs[0], "foo", 0, p.leader_epoch, [0, 1, 2, 3], p.partition_epoch)))
    assert Errors(answer.topics[0].partitions[0].error_code) is Errors.FENCED_LEADER_EPOCH
    _, parts = topic_state(active, "foo")
    assert parts[0].replicas == (3, 1, 2) and not parts[0].is_reassigning()
    assert parts[0].leader == 3 and 0 not in parts[0].isr
    listing = result(active.list_partition_reassignments(ListPartitionReassignmentsRequest(
        topics=None)))
    assert listing.topics == ()


def test_configs_quotas_features_and_producer_ids(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0])
    legacy = result(active.legacy_alter_configs(AlterConfigsRequest(resources=(
        LegacyResource(resource_type=4, resource_name="", configs=(
            LegacyConfig(name="log.retention.ms", value="1000"),)),
        LegacyResource(resource_type=4, resource_name="abc", configs=()),
    ), validate_only=False)))
    assert [Errors(r.error_code) for r in legacy.responses] == [Errors.NONE, Errors.INVALID_REQUEST]
    described = result(active.describe_configs({ConfigResource(ConfigResourceType.BROKER, ""): ()}))
    assert described[ConfigResource(ConfigResourceType.BROKER, "")].result == \
        {"log.retention.ms": "1000"}
    quotas = result(active.alter_client_quotas(quota_request(
        {"user": "alice"}, {"producer_byte_rate": 1024.0})))
    assert quotas.entries[0].error_code == 0
    bad = result(active.alter_client_quotas(quota_request(
        {"user": "bob"}, {"producer_byte_rate": 1.5})))
    assert Errors(bad.entries[0].error_code) is Errors.INVALID_REQUEST
    found = result(active.describe_client_quotas([("user", 2, None)], strict=False))
    assert found == {ClientQuotaEntity.of({"user": "alice"}): {"producer_byte_rate": 1024.0}}
    features = result(active.update_features(UpdateFeaturesRequest(feature_updates=(
        FeatureUpdateKey(feature="metadata.version", max_version_level=3, allow_downgrade=False),
        FeatureUpdateKey(feature="unknown", max_version_level=1, allow_downgrade=False)))))
    codes = {r.feature: Errors(r.error_code) for r in features.results}
    # broker 0 registered without the feature, so no range is supported by every broker
    assert codes == {"metadata.version": Errors.INVALID_UPDATE_VERSION,
                     "unknown": Errors.INVALID_UPDATE_VERSION}
    first = result(active.allocate_producer_ids(AllocateProducerIdsRequest(
        broker_id=0, broker_epoch=epochs[0])))
    second = result(active.allocate_producer_ids(AllocateProducerIdsRequest(
        broker_id=0, broker_epoch=epochs[0])))
    assert second.producer_id_start == first.producer_id_start + first.producer_id_len
    assert api_error(active.allocate_producer_ids(AllocateProducerIdsRequest(
        broker_id=0, broker_epoch=epochs[0] + 1))) is Errors.STALE_BROKER_EPOCH


def test_update_features_with_supporting_brokers(quorum):
    active = quorum.active_controller()
    result(active.register_broker(registration_request(0, features=[("metadata.version", 1, 4)])))
    response = result(active.update_features(UpdateFeaturesRequest(feature_updates=(
        FeatureUpdateKey(feature="metadata.version", max_version_level=3,
                         allow_downgrade=False),))))
    assert response.results[0].error_code == 0
    features = result(active.finalized_features())
    assert features.map.get("metadata.version") == VersionRange(1, 3)
    lower = result(active.update_features(UpdateFeaturesRequest(feature_updates=(
        FeatureUpdateKey(feature="metadata.version", max_version_level=2,
                         allow_downgrade=False),))))
    assert Errors(lower.results[0].error_code) is Errors.INVALID_UPDATE_VERSION


def test_snapshots_are_dropped_once_committed(quorum):
    active = quorum.active_controller()
    register_and_unfence(active, [0])
    for i in range(5):
        result(active.create_topics(create_topics_request(creatable_topic(f"t{i}", 1, 1))))
    # every write has committed: only the snapshot at the committed offset is left
    epochs = result(active.append_read_event(
        "epochs", lambda: (active.snapshot_registry.epochs_list(), active.last_committed_offset)))
    assert epochs[0] == [epochs[1]]
    for standby in quorum.standbys(active):
        wait_for(lambda: topic_state(standby, "t4")[0] is not None, "standby catches up")
        assert result(standby.append_read_event(
            "epochs", lambda: standby.snapshot_registry.epochs_list())) == []


def test_failover_keeps_committed_state_and_registrations(quorum):
    active = quorum.active_controller()
    epochs = register_and_unfence(active, [0, 1])
    result(active.create_topics(create_topics_request(creatable_topic("foo", 2, 2))))
    quorum.log_env.log_managers[active.node_id()].renounce(active.cur_claim_epoch())
    wait_for(lambda: not active.is_active() or active.cur_claim_epoch() > 0, "the handover")
    new_active = quorum.active_controller()
    assert topic_state(new_active, "foo")[0] is not None
    # the brokers keep their epochs across the failover
    reply = result(new_active.process_broker_heartbeat(heartbeat_request(0, epochs[0], CAUGHT_UP)))
    assert not reply.is_fenced
    more = result(new_active.create_topics(create_topics_request(creatable_topic("bar", 1, 2))))
    assert more.topics[0].error_code == 0
