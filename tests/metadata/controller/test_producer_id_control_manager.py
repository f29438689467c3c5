"""ProducerIdControlManager, after Kafka 3.0's ProducerIdControlManagerTest."""
from __future__ import annotations

import random

import pytest

from kafka_py.clients.common.errors import ApiException
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.producer_id_control_manager import (
    PRODUCER_ID_BLOCK_SIZE,
    ProducerIdControlManager,
)
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.feature_map import FeatureMap
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.records.producer_ids_record.v0 import ProducerIdsRecord
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.clients.common.utils.time import MockTime

from tests.metadata.controller.env import registration_request


def test_blocks_are_consecutive_and_revertible():
    registry = SnapshotRegistry()
    cluster = ClusterControlManager(MockTime(), registry, 10**9, StripedReplicaPlacer(random.Random()))
    cluster.activate()
    for record in cluster.register_broker(registration_request(1), 42,
                                          FeatureMapAndEpoch(FeatureMap({}), -1)).records:
        cluster.replay_register_broker(record.message)
    manager = ProducerIdControlManager(cluster, registry)
    starts = []
    for i in range(3):
        result = manager.generate_next_producer_id(1, 42)
        manager.replay(result.records[0].message)
        starts.append(result.response.producer_id_start)
        if i == 0:
            registry.create_snapshot(1)
    assert starts == [0, PRODUCER_ID_BLOCK_SIZE, 2 * PRODUCER_ID_BLOCK_SIZE]
    with pytest.raises(ApiException) as info:
        manager.generate_next_producer_id(1, 41)
    assert info.value.error_name == "STALE_BROKER_EPOCH"
    with pytest.raises(RuntimeError):
        manager.replay(ProducerIdsRecord(broker_id=1, broker_epoch=42, producer_ids_end=5))
    registry.revert_to_snapshot(1)
    assert manager.generate_next_producer_id(1, 42).response.producer_id_start == PRODUCER_ID_BLOCK_SIZE
