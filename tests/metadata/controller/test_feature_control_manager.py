"""FeatureControlManager, after Kafka's FeatureControlManagerTest."""
from __future__ import annotations

from kafka_py.metadata.controller.feature_control_manager import FeatureControlManager
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.errors import Errors


def update(manager, updates, downgradeables=(), brokers=None):
    result = manager.update_features(updates, set(downgradeables), brokers or {})
    for record in result.records:
        manager.replay(record.message)
    return {name: error.error for name, error in result.response.items()}


def test_update_checks_ranges_brokers_and_downgrades():
    registry = SnapshotRegistry()
    manager = FeatureControlManager({"foo": VersionRange(1, 5), "bar": VersionRange(1, 2)},
                                    registry)
    assert update(manager, {"foo": VersionRange(0, 2)}) == {"foo": Errors.INVALID_UPDATE_VERSION}
    assert update(manager, {"foo": VersionRange(1, 6)}) == {"foo": Errors.INVALID_UPDATE_VERSION}
    assert update(manager, {"baz": VersionRange(1, 1)}) == {"baz": Errors.INVALID_UPDATE_VERSION}
    assert update(manager, {"foo": VersionRange(1, 3)},
                  brokers={0: {"foo": VersionRange(1, 2)}}) == {"foo": Errors.INVALID_UPDATE_VERSION}
    assert update(manager, {"foo": VersionRange(1, 3)},
                  brokers={0: {"foo": VersionRange(1, 4)}}) == {"foo": Errors.NONE}
    registry.create_snapshot(10)
    assert update(manager, {"foo": VersionRange(1, 2)}) == {"foo": Errors.INVALID_UPDATE_VERSION}
    assert update(manager, {"foo": VersionRange(1, 2)}, downgradeables={"foo"}) == {"foo": Errors.NONE}
    assert manager.finalized_features(10).map.get("foo") == VersionRange(1, 3)
    assert manager.get("foo") == VersionRange(1, 2)
