"""ClusterControlManager, after Kafka's ClusterControlManagerTest: registration records and
their replay, fencing records, broker epoch checks, feature checks at registration, and
a new incarnation replacing an expired one."""
from __future__ import annotations

import random
import uuid

import pytest

from kafka_py.clients.common.errors import ApiException
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.feature_map import FeatureMap
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.records.fence_broker_record.v0 import FenceBrokerRecord
from kafka_py.metadata.records.unfence_broker_record.v0 import UnfenceBrokerRecord
from kafka_py.metadata.records.unregister_broker_record.v0 import UnregisterBrokerRecord
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.utils.time import MockTime

from tests.metadata.controller.env import registration_request

NO_FEATURES = FeatureMapAndEpoch(FeatureMap({}), -1)
SESSION_NS = 1_000_000_000


def new_manager():
    registry = SnapshotRegistry()
    manager = ClusterControlManager(MockTime(0, 0), registry, SESSION_NS,
                                    StripedReplicaPlacer(random.Random(1)))
    manager.activate()
    return registry, manager


def register(manager, broker_id, epoch, **kwargs):
    result = manager.register_broker(registration_request(broker_id, **kwargs), epoch, NO_FEATURES)
    for record in result.records:
        manager.replay_register_broker(record.message)
    return result


def test_register_replay_fence_unfence():
    _, manager = new_manager()
    result = register(manager, 1, 100, rack="r1")
    assert result.response.epoch == 100
    registration = manager.broker_registrations()[1]
    assert registration.fenced and registration.rack == "r1"
    assert registration.listeners["PLAINTEXT"].port == 9093
    assert not manager.unfenced(1)
    manager.replay_unfence_broker(UnfenceBrokerRecord(id=1, epoch=100))
    assert manager.unfenced(1)
    manager.replay_fence_broker(FenceBrokerRecord(id=1, epoch=100))
    assert manager.fenced_broker_ids() == {1}
    with pytest.raises(RuntimeError):
        manager.replay_fence_broker(FenceBrokerRecord(id=1, epoch=99))
    manager.replay_unregister_broker(UnregisterBrokerRecord(broker_id=1, broker_epoch=100))
    assert 1 not in manager.broker_registrations()


def test_check_broker_epoch():
    _, manager = new_manager()
    register(manager, 1, 100)
    manager.check_broker_epoch(1, 100)
    for broker_id, epoch in ((1, 99), (2, 100)):
        with pytest.raises(ApiException) as info:
            manager.check_broker_epoch(broker_id, epoch)
        assert info.value.error_name == "STALE_BROKER_EPOCH"


def test_unsupported_feature_version_is_refused():
    _, manager = new_manager()
    finalized = FeatureMapAndEpoch(FeatureMap({"foo": VersionRange(2, 3)}), 5)
    with pytest.raises(ApiException) as info:
        manager.register_broker(registration_request(1, features=[("foo", 1, 2)]), 10, finalized)
    assert info.value.error_name == "UNSUPPORTED_VERSION"
    ok = manager.register_broker(registration_request(1, features=[("foo", 1, 5)]), 10, finalized)
    assert len(ok.records) == 1


def test_new_incarnation_only_after_the_session_expires():
    _, manager = new_manager()
    register(manager, 1, 100)
    manager.replay_unfence_broker(UnfenceBrokerRecord(id=1, epoch=100))
    manager.heartbeat_manager().touch(1, False, 0)
    with pytest.raises(ApiException) as info:
        manager.register_broker(registration_request(1, incarnation=uuid.uuid4()), 101, NO_FEATURES)
    assert info.value.error_name == "DUPLICATE_BROKER_REGISTRATION"
    manager.time.advance(2000)
    result = register(manager, 1, 101, incarnation=uuid.uuid4())
    assert manager.broker_registrations()[1].epoch == 101 and result.response.epoch == 101


def test_standby_has_no_heartbeat_manager():
    _, manager = new_manager()
    manager.deactivate()
    with pytest.raises(RuntimeError):
        manager.register_broker(registration_request(1), 1, NO_FEATURES)


def test_registrations_revert_with_the_snapshot():
    registry, manager = new_manager()
    register(manager, 1, 100)
    registry.create_snapshot(100)
    register(manager, 2, 101)
    manager.replay_unfence_broker(UnfenceBrokerRecord(id=1, epoch=100))
    registry.revert_to_snapshot(100)
    assert set(manager.broker_registrations()) == {1} and not manager.unfenced(1)
