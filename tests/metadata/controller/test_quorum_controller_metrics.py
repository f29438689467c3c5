"""QuorumControllerMetrics: the KIP-631 names in a Yammer registry, gauges that follow
what the controller sets, and close() taking them all away."""
from __future__ import annotations

from kafka_py.metadata.controller.quorum_controller_metrics import (
    ACTIVE_CONTROLLER_COUNT,
    ALL_METRIC_NAMES,
    EVENT_QUEUE_PROCESSING_TIME_MS,
    EVENT_QUEUE_TIME_MS,
    GLOBAL_PARTITION_COUNT,
    OFFLINE_PARTITION_COUNT,
    QuorumControllerMetrics,
)
from kafka_py.metrics.yammer import MetricsRegistry


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
