"""Controller snapshots (Kafka 3.0's QuorumControllerTest snapshot tests): the active
controller (and a standby) write their state at the committed offset through the managers'
``iterator(epoch)``; a controller that starts after the log dropped what the snapshot covers
loads the snapshot, replays the log after it and reaches the same state."""
from __future__ import annotations

import pytest

from kio.schema.allocate_producer_ids.v0.request import AllocateProducerIdsRequest

from kafka_py.log.log_config import CONFIG_DEF as LOG_CONFIG_DEF
from kafka_py.metadata.controller.quorum_controller import QuorumController
from kafka_py.metadata.metalog.local_log_manager import LocalLogManager
from kafka_py.metadata.version_range import VersionRange
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.server.zk_admin_manager import ConfigResourceType
from kafka_py.clients.common.utils.time import MockTime
from tests.metadata.controller.env import (
    LocalLogManagerTestEnv,
    QuorumControllerTestEnv,
    create_topics_request,
    creatable_topic,
    heartbeat_request,
    quota_request,
    registration_request,
    result,
    wait_for,
)

CAUGHT_UP = 1 << 40
KWARGS = dict(config_defs={ConfigResourceType.TOPIC: LOG_CONFIG_DEF},
              supported_features={"metadata.version": VersionRange(1, 5)}, session_timeout_ns=10 * 10**9)


@pytest.fixture
def quorum():
    log_env = LocalLogManagerTestEnv(3)
    env = QuorumControllerTestEnv(log_env, time=MockTime(), **KWARGS)
    yield env
    env.close()
    log_env.close()


def records_of(controller: QuorumController) -> list:
    """The controller's state as the records a snapshot of it holds (read on its thread)."""
    batches = result(controller.append_read_event("snapshotRecords", controller.snapshot_records))
    return [record.message for batch in batches for record in batch]


def build_state(active: QuorumController) -> None:
    epochs = {}
    for broker_id in (0, 1, 2):
        reply = result(active.register_broker(registration_request(broker_id)))
        epochs[broker_id] = int(reply.broker_epoch)
    for broker_id in (0, 1):  # broker 2 stays fenced
        assert not result(active.process_broker_heartbeat(
            heartbeat_request(broker_id, epochs[broker_id], CAUGHT_UP))).is_fenced
    result(active.create_topics(create_topics_request(
        creatable_topic("foo", 3, 2, configs={"cleanup.policy": "compact"}), creatable_topic("bar", 2, 1),
        creatable_topic("gone", 1, 1))))
    ids = result(active.find_topic_ids(["gone"]))
    result(active.delete_topics([ids["gone"].result]))
    result(active.alter_client_quotas(quota_request({"user": "alice"}, {"producer_byte_rate": 1024.0})))
    result(active.allocate_producer_ids(AllocateProducerIdsRequest(broker_id=0, broker_epoch=epochs[0])))


def test_snapshot_records_rebuild_the_state(quorum):
    active = quorum.active_controller()
    build_state(active)
    records = records_of(active)
    names = {type(r).__name__ for r in records}
    assert {"RegisterBrokerRecord", "UnfenceBrokerRecord", "TopicRecord", "PartitionRecord", "ConfigRecord",
            "QuotaRecord", "ProducerIdsRecord"} <= names
    assert sum(1 for r in records if type(r).__name__ == "TopicRecord") == 2  # "gone" is gone
    assert sum(1 for r in records if type(r).__name__ == "UnfenceBrokerRecord") == 2


@pytest.mark.parametrize("writer", ["active", "standby"])
def test_restarted_controller_loads_the_snapshot_and_reaches_the_same_state(quorum, writer):
    active = quorum.active_controller()
    build_state(active)
    shared = quorum.log_env.shared
    source = active if writer == "active" else quorum.standbys(active)[0]
    wait_for(lambda: records_of(source) == records_of(active), "the writer has caught up")
    last_offset = result(source.begin_writing_snapshot())
    assert last_offset >= 0
    wait_for(lambda: shared.latest_snapshot() is not None, "the snapshot is frozen")
    snapshot_id, _data = shared.latest_snapshot()
    assert snapshot_id.offset == last_offset + 1
    # More changes after the snapshot, which a new controller reads from the log.
    result(active.create_topics(create_topics_request(creatable_topic("after", 1, 1))))
    # The log drops what the snapshot covers: a controller that starts now cannot replay it.
    shared.delete_before_snapshot(snapshot_id)
    assert shared.start_offset() == snapshot_id.offset

    manager = LocalLogManager(3, shared, "LocalLogManager3_")
    manager.initialize()
    fresh = QuorumController(3, manager, time=MockTime(), thread_name_prefix="Controller3_", **KWARGS)
    try:
        expected = records_of(active)
        wait_for(lambda: records_of(fresh) == expected, "the new controller reaches the same state")
        assert any(type(r).__name__ == "TopicRecord" and r.name == "after" for r in expected)
        assert result(fresh.append_read_event("lastCommitted", lambda: fresh.last_committed_offset)) >= \
            snapshot_id.offset
    finally:
        fresh.begin_shutdown()
        fresh.close()
        manager.close()
