"""Test helpers after Kafka's LocalLogManagerTestEnv, QuorumControllerTestEnv,
ControllerTestUtils and MockControllerMetrics: a quorum of QuorumControllers on one
shared in-memory log, request builders, and a bounded wait."""
from __future__ import annotations

import random
import uuid
from concurrent.futures import Future
from typing import Callable, Sequence

from kio.schema.alter_client_quotas.v1.request import (
    AlterClientQuotasRequest,
    EntityData as QuotaEntityData,
    EntryData as QuotaEntryData,
    OpData,
)
from kio.schema.broker_heartbeat.v0.request import BrokerHeartbeatRequest
from kio.schema.broker_registration.v0.request import (
    BrokerRegistrationRequest,
    Feature,
    Listener,
)
from kio.schema.create_topics.v7.request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)

from kafka_py.metadata.controller.controller_metrics import ControllerMetrics
from kafka_py.metadata.controller.quorum_controller import QuorumController
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.metalog.local_log_manager import LocalLogManager, SharedLogData
from kafka_py.clients.common.protocol.schema.alter_isr.v0.request import (
    AlterIsrRequest,
    PartitionData as IsrPartitionData,
    TopicData as IsrTopicData,
)
from kafka_py.clients.common.utils.time import MockTime, Time

WAIT_S = 30


class MockControllerMetrics(ControllerMetrics):
    def __init__(self) -> None:
        self._active = False
        self.topics = self.partitions = self.offline = self.imbalance = 0
        self.fenced_brokers = self.active_brokers = 0
        self.last_applied_offset = self.last_committed_offset = self.last_applied_timestamp = 0
        self.queue_times: list[int] = []
        self.processing_times: list[int] = []
        self.closed = False

    def set_active(self, active: bool) -> None:
        self._active = active

    def active(self) -> bool:
        return self._active

    def update_event_queue_time(self, duration_ms: int) -> None:
        self.queue_times.append(duration_ms)

    def update_event_queue_processing_time(self, duration_ms: int) -> None:
        self.processing_times.append(duration_ms)

    def set_global_topics_count(self, topic_count: int) -> None:
        self.topics = topic_count

    def global_topics_count(self) -> int:
        return self.topics

    def set_global_partition_count(self, partition_count: int) -> None:
        self.partitions = partition_count

    def global_partition_count(self) -> int:
        return self.partitions

    def set_offline_partition_count(self, offline_partitions: int) -> None:
        self.offline = offline_partitions

    def offline_partition_count(self) -> int:
        return self.offline

    def set_preferred_replica_imbalance_count(self, replica_imbalances: int) -> None:
        self.imbalance = replica_imbalances

    def preferred_replica_imbalance_count(self) -> int:
        return self.imbalance

    def set_fenced_broker_count(self, broker_count: int) -> None:
        self.fenced_brokers = broker_count

    def fenced_broker_count(self) -> int:
        return self.fenced_brokers

    def set_active_broker_count(self, broker_count: int) -> None:
        self.active_brokers = broker_count

    def active_broker_count(self) -> int:
        return self.active_brokers

    def set_last_applied_record_offset(self, offset: int) -> None:
        self.last_applied_offset = offset

    def last_applied_record_offset(self) -> int:
        return self.last_applied_offset

    def set_last_committed_record_offset(self, offset: int) -> None:
        self.last_committed_offset = offset

    def last_committed_record_offset(self) -> int:
        return self.last_committed_offset

    def set_last_applied_record_timestamp(self, timestamp: int) -> None:
        self.last_applied_timestamp = timestamp

    def last_applied_record_timestamp(self) -> int:
        return self.last_applied_timestamp

    def close(self) -> None:
        self.closed = True


def wait_for(condition: Callable[[], bool], what: str, attempts: int = 3000) -> None:
    """Poll ``condition`` (bounded); fails with ``what`` if it never holds."""
    import threading
    event = threading.Event()
    for _ in range(attempts):
        if condition():
            return
        event.wait(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def result(future: Future):
    return future.result(timeout=WAIT_S)


class LocalLogManagerTestEnv:
    def __init__(self, num_managers: int, seed: int = 0) -> None:
        self.shared = SharedLogData(random.Random(seed))
        self.log_managers: list[LocalLogManager] = []
        for node_id in range(num_managers):
            manager = LocalLogManager(node_id, self.shared, f"LocalLogManager{node_id}_")
            manager.initialize()
            self.log_managers.append(manager)

    def close(self) -> None:
        for manager in self.log_managers:
            manager.close()


class QuorumControllerTestEnv:
    """``num_controllers`` controllers, one per LocalLogManager of ``log_env``."""

    def __init__(self, log_env: LocalLogManagerTestEnv, time: Time | None = None,
                 seed: int = 0, **kwargs) -> None:
        self.log_env = log_env
        self.time = time if time is not None else MockTime()
        self.metrics: list[MockControllerMetrics] = []
        self.controllers: list[QuorumController] = []
        for i, manager in enumerate(log_env.log_managers):
            metrics = MockControllerMetrics()
            self.metrics.append(metrics)
            self.controllers.append(QuorumController(
                manager.node_id(), manager, time=self.time, controller_metrics=metrics,
                replica_placer=StripedReplicaPlacer(random.Random(seed + i)),
                thread_name_prefix=f"Controller{i}_", **kwargs))

    def active_controller(self) -> QuorumController:
        found: list[QuorumController] = []

        def one_active() -> bool:
            found[:] = [c for c in self.controllers if c.is_active()]
            return len(found) == 1
        wait_for(one_active, "one active controller")
        return found[0]

    def standbys(self, active: QuorumController) -> list[QuorumController]:
        return [c for c in self.controllers if c is not active]

    def close(self) -> None:
        for controller in self.controllers:
            controller.begin_shutdown()
        for controller in self.controllers:
            controller.close()


# -- request builders ---------------------------------------------------------------------

def registration_request(broker_id: int, incarnation: uuid.UUID | None = None,
                         rack: str | None = None, features=()) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(
        broker_id=broker_id, cluster_id="test-cluster",
        incarnation_id=incarnation or uuid.UUID(int=broker_id + 1),
        listeners=(Listener(name="PLAINTEXT", host="localhost", port=9092 + broker_id,
                            security_protocol=0),),
        features=tuple(Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                       for n, lo, hi in features),
        rack=rack)


def heartbeat_request(broker_id: int, broker_epoch: int, offset: int, want_fence: bool = False,
                      want_shut_down: bool = False) -> BrokerHeartbeatRequest:
    return BrokerHeartbeatRequest(broker_id=broker_id, broker_epoch=broker_epoch,
                                  current_metadata_offset=offset, want_fence=want_fence,
                                  want_shut_down=want_shut_down)


def create_topics_request(*topics: CreatableTopic, validate_only: bool = False) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=tuple(topics), validate_only=validate_only)


def creatable_topic(name: str, num_partitions: int = -1, replication_factor: int = -1,
                    assignments: dict[int, Sequence[int]] | None = None,
                    configs: dict[str, str | None] | None = None) -> CreatableTopic:
    return CreatableTopic(
        name=name, num_partitions=num_partitions, replication_factor=replication_factor,
        assignments=tuple(CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(b))
                          for p, b in (assignments or {}).items()),
        configs=tuple(CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()))


def alter_isr_request(broker_id: int, broker_epoch: int, topic: str, partition: int,
                      leader_epoch: int, new_isr: Sequence[int], isr_version: int) -> AlterIsrRequest:
    return AlterIsrRequest(broker_id=broker_id, broker_epoch=broker_epoch, topics=(
        IsrTopicData(name=topic, partitions=(IsrPartitionData(
            partition_index=partition, leader_epoch=leader_epoch, new_isr=tuple(new_isr),
            current_isr_version=isr_version),)),))


def quota_request(entity: dict[str, str | None], ops: dict[str, float | None],
                  validate_only: bool = False) -> AlterClientQuotasRequest:
    return AlterClientQuotasRequest(entries=(QuotaEntryData(
        entity=tuple(QuotaEntityData(entity_type=t, entity_name=n) for t, n in entity.items()),
        ops=tuple(OpData(key=k, value=0.0 if v is None else v, remove=v is None)
                  for k, v in ops.items())),), validate_only=validate_only)
