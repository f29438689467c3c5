"""QuorumControllerMetrics: the KIP-631 names in a Yammer registry, gauges that follow
what the controller sets, and close() taking them all away; and the values a quorum of
QuorumControllers on a LocalLogManager reports: broker and offline counts through fencing,
the last applied and committed offsets, and counts that follow a renounce's revert."""
from __future__ import annotations

import pytest

from kafka_py.metadata.controller.quorum_controller_metrics import (
    ACTIVE_CONTROLLER_COUNT,
    ALL_METRIC_NAMES,
    EVENT_QUEUE_PROCESSING_TIME_MS,
    EVENT_QUEUE_TIME_MS,
    GLOBAL_PARTITION_COUNT,
    LAST_APPLIED_RECORD_LAG_MS,
    LAST_APPLIED_RECORD_OFFSET,
    LAST_APPLIED_RECORD_TIMESTAMP,
    LAST_COMMITTED_RECORD_OFFSET,
    OFFLINE_PARTITION_COUNT,
    QuorumControllerMetrics,
)
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH
from kafka_py.core.metrics.yammer import MetricsRegistry
from kafka_py.clients.common.utils.time import MockTime
from tests.metadata.controller.env import (
    LocalLogManagerTestEnv,
    QuorumControllerTestEnv,
    create_topics_request,
    creatable_topic,
    heartbeat_request,
    registration_request,
    result,
    wait_for,
)


def test_names_gauges_and_close():
    registry = MetricsRegistry()
    metrics = QuorumControllerMetrics(registry)
    names = {name.mbean_name for name, _ in registry.all_metrics()}
    assert names == {
        "kafka.controller:type=KafkaController,name=ActiveControllerCount",
        "kafka.controller:type=KafkaController,name=GlobalTopicCount",
        "kafka.controller:type=KafkaController,name=GlobalPartitionCount",
        "kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
        "kafka.controller:type=KafkaController,name=PreferredReplicaImbalanceCount",
        "kafka.controller:type=ControllerEventManager,name=EventQueueTimeMs",
        "kafka.controller:type=ControllerEventManager,name=EventQueueProcessingTimeMs",
        "kafka.controller:type=KafkaController,name=FencedBrokerCount",
        "kafka.controller:type=KafkaController,name=ActiveBrokerCount",
        "kafka.controller:type=KafkaController,name=LastAppliedRecordOffset",
        "kafka.controller:type=KafkaController,name=LastCommittedRecordOffset",
        "kafka.controller:type=KafkaController,name=LastAppliedRecordTimestamp",
        "kafka.controller:type=KafkaController,name=LastAppliedRecordLagMs",
    }
    assert registry.get(ACTIVE_CONTROLLER_COUNT).value() == 0
    metrics.set_active(True)
    metrics.set_global_partition_count(7)
    metrics.set_offline_partition_count(2)
    assert registry.get(ACTIVE_CONTROLLER_COUNT).value() == 1
    assert registry.get(GLOBAL_PARTITION_COUNT).value() == 7
    assert registry.get(OFFLINE_PARTITION_COUNT).value() == 2
    metrics.update_event_queue_time(5)
    metrics.update_event_queue_processing_time(9)
    assert registry.get(EVENT_QUEUE_TIME_MS).count == 1 and registry.get(EVENT_QUEUE_TIME_MS).max == 5
    assert registry.get(EVENT_QUEUE_PROCESSING_TIME_MS).max == 9
    metrics.close()
    assert all(registry.get(name) is None for name in ALL_METRIC_NAMES)


def test_last_applied_record_gauges_and_lag():
    registry = MetricsRegistry()
    time = MockTime()
    metrics = QuorumControllerMetrics(registry, time)
    metrics.set_last_applied_record_offset(41)
    metrics.set_last_committed_record_offset(40)
    metrics.set_last_applied_record_timestamp(time.milliseconds())
    time.advance(250)
    assert registry.get(LAST_APPLIED_RECORD_OFFSET).value() == 41
    assert registry.get(LAST_COMMITTED_RECORD_OFFSET).value() == 40
    assert registry.get(LAST_APPLIED_RECORD_TIMESTAMP).value() == time.milliseconds() - 250
    assert registry.get(LAST_APPLIED_RECORD_LAG_MS).value() == 250
    metrics.close()


# ---- the values a running quorum of controllers reports ------------------------------------

CAUGHT_UP = 1 << 40


@pytest.fixture
def quorum():
    log_env = LocalLogManagerTestEnv(3)
    env = QuorumControllerTestEnv(log_env, time=MockTime(), session_timeout_ns=10 * 10**9)
    yield env
    env.close()
    log_env.close()


def _metrics_of(quorum, controller):
    return quorum.metrics[quorum.controllers.index(controller)]


def _register(controller, broker_ids) -> dict[int, int]:
    return {b: int(result(controller.register_broker(registration_request(b))).broker_epoch) for b in broker_ids}


def _register_and_unfence(controller, broker_id: int) -> None:
    epoch = _register(controller, [broker_id])[broker_id]
    assert not result(controller.process_broker_heartbeat(heartbeat_request(broker_id, epoch, CAUGHT_UP))).is_fenced


def _created(response) -> None:
    assert all(topic.error_code == 0 for topic in response.topics), response


def test_broker_counts_follow_registration_and_fencing(quorum):
    active = quorum.active_controller()
    epochs = _register(active, [0, 1, 2])
    metrics = _metrics_of(quorum, active)
    assert (metrics.fenced_broker_count(), metrics.active_broker_count()) == (3, 0)
    for broker_id in (0, 1, 2):
        result(active.process_broker_heartbeat(heartbeat_request(broker_id, epochs[broker_id], CAUGHT_UP)))
    assert (metrics.fenced_broker_count(), metrics.active_broker_count()) == (0, 3)
    _created(result(active.create_topics(create_topics_request(creatable_topic("solo", assignments={0: [0]})))))
    assert metrics.offline_partition_count() == 0
    # broker 0 stops heartbeating: fenced, and the partition only it holds goes offline
    for _ in range(3):
        quorum.time.advance(4000)
        for broker_id in (1, 2):
            result(active.process_broker_heartbeat(heartbeat_request(broker_id, epochs[broker_id], CAUGHT_UP)))
    wait_for(lambda: metrics.fenced_broker_count() == 1, "broker 0 counted as fenced")
    assert metrics.active_broker_count() == 2
    wait_for(lambda: metrics.offline_partition_count() == 1, "the partition counted offline")
    for standby in quorum.standbys(active):
        standby_metrics = _metrics_of(quorum, standby)
        wait_for(lambda: (standby_metrics.fenced_broker_count(), standby_metrics.active_broker_count(),
                          standby_metrics.offline_partition_count()) == (1, 2, 1), "a standby counts the same")


def test_last_applied_and_committed_offsets(quorum):
    active = quorum.active_controller()
    _register_and_unfence(active, 0)
    _created(result(active.create_topics(create_topics_request(creatable_topic("t", 2, 1)))))
    metrics = _metrics_of(quorum, active)
    # the active controller applies its writes before they commit; once this one has, both agree
    committed = result(active.append_read_event("offset", lambda: active.last_committed_offset))
    assert committed > 0
    assert metrics.last_applied_record_offset() == committed == metrics.last_committed_record_offset()
    assert metrics.last_applied_record_timestamp() == quorum.time.milliseconds()
    for standby in quorum.standbys(active):
        standby_metrics = _metrics_of(quorum, standby)
        wait_for(lambda: standby_metrics.last_committed_record_offset() == committed, "a standby commits")
        assert standby_metrics.last_applied_record_offset() == committed
        assert standby_metrics.global_topics_count() == 1 and standby_metrics.global_partition_count() == 2


def test_a_renounce_counts_the_reverted_state_again(quorum):
    active = quorum.active_controller()
    _register_and_unfence(active, 0)
    _created(result(active.create_topics(create_topics_request(creatable_topic("committed", 1, 1)))))
    metrics = _metrics_of(quorum, active)
    manager = quorum.log_env.log_managers[active.node_id()]
    # the next write applies in memory but never commits on this node
    manager.set_max_read_offset(quorum.log_env.shared.end_offset())
    manager.renounce(active.cur_claim_epoch())
    pending = active.create_topics(create_topics_request(creatable_topic("lost", 3, 1)))
    wait_for(lambda: metrics.global_topics_count() == 2, "the uncommitted topic counted")
    assert metrics.last_applied_record_offset() > metrics.last_committed_record_offset()
    manager.set_max_read_offset(LATEST_EPOCH)
    with pytest.raises(Exception):
        result(pending)
    wait_for(lambda: not metrics.active(), "the controller renounced")
    assert (metrics.global_topics_count(), metrics.global_partition_count()) == (1, 1)
    assert metrics.last_applied_record_offset() == metrics.last_committed_record_offset()
