"""Port of metadata/src/main/java/org/apache/kafka/controller/ClusterControlManager.java
(Kafka 2.8.2, with 3.0.0's placement from a first partition id and fenced-broker set).

The hard state of the cluster, the part that is in the metadata log: which brokers are
registered, with which epoch, incarnation, listeners, supported features and rack, and
whether each is fenced. The soft state (heartbeats) is the BrokerHeartbeatManager's,
which exists only while this controller is active.

A broker's epoch is the log offset its RegisterBrokerRecord is expected to get, so a
re-registration always gives a larger epoch and every later request carrying the old
one is refused (STALE_BROKER_EPOCH). A broker id that is still in a live session under
another incarnation is refused (DUPLICATE_BROKER_REGISTRATION); once the old session
has expired, the new incarnation replaces it. A (re-)registered broker is fenced until
a heartbeat shows it has caught up with the metadata log.

``iterator(epoch)`` is Kafka 3.0.0's: the records a snapshot holds for this state.

Every replayed registration change sets the controller's FencedBrokerCount and
ActiveBrokerCount (Kafka 3.3.1's updateMetrics). They are counted again from the
registrations rather than adjusted by one, so they also come out right after the state is
reverted to a snapshot (``update_metrics``).
"""
from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Iterator

from kafka_py.core.cluster.broker import EndPoint, ListenerName, SecurityProtocol
from kafka_py.metadata.api_message_and_version import ApiMessageAndVersion
from kafka_py.metadata.broker_registration import BrokerRegistration
from kafka_py.metadata.broker_registration_reply import BrokerRegistrationReply
from kafka_py.metadata.controller.broker_heartbeat_manager import BrokerHeartbeatManager
from kafka_py.metadata.controller.controller_metrics import ControllerMetrics
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.controller.replica_placer import ReplicaPlacer
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.records.fence_broker_record.v0 import FenceBrokerRecord
from kafka_py.metadata.records.register_broker_record.v0 import (
    BrokerEndpoint,
    BrokerFeature,
    RegisterBrokerRecord,
)
from kafka_py.metadata.records.unfence_broker_record.v0 import UnfenceBrokerRecord
from kafka_py.metadata.records.unregister_broker_record.v0 import UnregisterBrokerRecord
from kafka_py.metadata.timeline.snapshot_registry import SnapshotRegistry
from kafka_py.metadata.timeline.timeline_hash_map import TimelineHashMap
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)


class ReadyBrokersFuture:
    def __init__(self, future: Future, min_brokers: int) -> None:
        self.future = future
        self.min_brokers = min_brokers


class ClusterControlManager:
    def __init__(self, time: Time, snapshot_registry: SnapshotRegistry,
                 session_timeout_ns: int, replica_placer: ReplicaPlacer,
                 log_prefix: str = "", controller_metrics: ControllerMetrics | None = None) -> None:
        self.log_prefix = log_prefix
        self.controller_metrics = controller_metrics
        self.logger = IdentLogger(logger, log_prefix)
        self.time = time
        self.session_timeout_ns = session_timeout_ns
        self.replica_placer = replica_placer
        self._broker_registrations: TimelineHashMap[int, BrokerRegistration] = \
            TimelineHashMap(snapshot_registry)
        self._heartbeat_manager: BrokerHeartbeatManager | None = None
        self._ready_brokers_future: ReadyBrokersFuture | None = None

    # -- activation ---------------------------------------------------------------------

    def activate(self) -> None:
        """Become active: start a heartbeat session for every registered broker now."""
        self._heartbeat_manager = BrokerHeartbeatManager(self.time, self.session_timeout_ns,
                                                         self.log_prefix)
        for registration in self._broker_registrations.values():
            self._heartbeat_manager.touch(registration.id, registration.fenced, -1)

    def deactivate(self) -> None:
        self._heartbeat_manager = None

    def heartbeat_manager(self) -> BrokerHeartbeatManager:
        if self._heartbeat_manager is None:
            raise RuntimeError("ClusterControlManager is not active.")
        return self._heartbeat_manager

    # -- reads ---------------------------------------------------------------------------

    def broker_registrations(self) -> TimelineHashMap[int, BrokerRegistration]:
        return self._broker_registrations

    def update_metrics(self) -> None:
        if self.controller_metrics is None:
            return
        registrations = list(self._broker_registrations.values())
        fenced = sum(1 for r in registrations if r.fenced)
        self.controller_metrics.set_fenced_broker_count(fenced)
        self.controller_metrics.set_active_broker_count(len(registrations) - fenced)

    def fenced_broker_ids(self) -> set[int]:
        return {r.id for r in self._broker_registrations.values() if r.fenced}

    def unfenced(self, broker_id: int) -> bool:
        registration = self._broker_registrations.get(broker_id)
        return registration is not None and not registration.fenced

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        registration = self._broker_registrations.get(broker_id)
        if registration is None:
            raise Errors.STALE_BROKER_EPOCH.exception(
                f"No broker registration found for broker id {broker_id}")
        if registration.epoch != broker_epoch:
            raise Errors.STALE_BROKER_EPOCH.exception(
                f"Expected broker epoch {registration.epoch}, but got broker epoch "
                f"{broker_epoch}")

    # -- writes --------------------------------------------------------------------------

    def register_broker(self, request, broker_epoch: int,
                        finalized_features: FeatureMapAndEpoch
                        ) -> ControllerResult[BrokerRegistrationReply]:
        """The RegisterBrokerRecord for a BrokerRegistrationRequest."""
        heartbeat_manager = self.heartbeat_manager()
        broker_id = int(request.broker_id)
        existing = self._broker_registrations.get(broker_id)
        if existing is not None:
            if heartbeat_manager.has_valid_session(broker_id):
                if existing.incarnation_id != request.incarnation_id:
                    raise Errors.DUPLICATE_BROKER_REGISTRATION.exception(
                        "Another broker is registered with that broker id.")
            elif existing.incarnation_id != request.incarnation_id:
                # the old incarnation's session has expired: forget it
                heartbeat_manager.remove(broker_id)
                existing = None
        end_points = []
        for listener in request.listeners:
            end_points.append(BrokerEndpoint(name=listener.name, host=listener.host,
                                             port=listener.port,
                                             security_protocol=listener.security_protocol))
        features = []
        for feature in request.features:
            finalized = finalized_features.map.get(feature.name)
            wanted = VersionRange(int(feature.min_supported_version),
                                  int(feature.max_supported_version))
            # The broker must support every finalized level. (Kafka 2.8 and 3.0 test the
            # other way round, which refuses a broker that supports more than is finalized;
            # later releases check as here.)
            if finalized is not None and not wanted.contains(finalized):
                raise Errors.UNSUPPORTED_VERSION.exception(
                    f"Unable to register because the broker has an unsupported version of "
                    f"{feature.name}")
            features.append(BrokerFeature(name=feature.name,
                                          min_supported_version=feature.min_supported_version,
                                          max_supported_version=feature.max_supported_version))
        record = RegisterBrokerRecord(broker_id=broker_id, incarnation_id=request.incarnation_id,
                                      broker_epoch=broker_epoch, end_points=tuple(end_points),
                                      features=tuple(features), rack=request.rack)
        heartbeat_manager.touch(broker_id, True if existing is None else existing.fenced, -1)
        return ControllerResult.of([ApiMessageAndVersion.of(record)],
                                   BrokerRegistrationReply(broker_epoch))

    def iterator(self, epoch: int) -> Iterator[list[ApiMessageAndVersion]]:
        """The records that rebuild the registrations as of ``epoch`` (Kafka 3.0's
        ClusterControlIterator). 2.8.2's RegisterBrokerRecord has no fenced flag (a replayed
        registration starts fenced), so an unfenced broker's registration is followed by its
        UnfenceBrokerRecord."""
        for broker_id, registration in sorted(self._broker_registrations.items(epoch)):
            end_points = tuple(BrokerEndpoint(name=name, host=endpoint.host, port=endpoint.port,
                                              security_protocol=endpoint.security_protocol.id)
                               for name, endpoint in sorted(registration.listeners.items()))
            features = tuple(BrokerFeature(name=name, min_supported_version=versions.min,
                                           max_supported_version=versions.max)
                             for name, versions in sorted(registration.supported_features.items()))
            batch = [ApiMessageAndVersion.of(RegisterBrokerRecord(
                broker_id=broker_id, incarnation_id=registration.incarnation_id, broker_epoch=registration.epoch,
                end_points=end_points, features=features, rack=registration.rack))]
            if not registration.fenced:
                batch.append(ApiMessageAndVersion.of(UnfenceBrokerRecord(id=broker_id, epoch=registration.epoch)))
            yield batch

    # -- replay --------------------------------------------------------------------------

    def replay_register_broker(self, record: RegisterBrokerRecord) -> None:
        broker_id = int(record.broker_id)
        listeners = {}
        for endpoint in record.end_points:
            listeners[endpoint.name] = EndPoint(
                endpoint.host, int(endpoint.port), ListenerName(endpoint.name),
                SecurityProtocol.for_id(int(endpoint.security_protocol)))
        features = {f.name: VersionRange(int(f.min_supported_version),
                                         int(f.max_supported_version)) for f in record.features}
        prev = self._broker_registrations.get(broker_id)
        # 2.8.2's record has no fenced flag: a registration always starts fenced
        self._broker_registrations.put(broker_id, BrokerRegistration(
            broker_id, int(record.broker_epoch), record.incarnation_id, listeners, features,
            record.rack, True))
        self.update_metrics()
        if prev is None:
            self.logger.info("Registered new broker: %s", record)
        elif prev.incarnation_id == record.incarnation_id:
            self.logger.info("Re-registered broker incarnation: %s", record)
        else:
            self.logger.info("Re-registered broker id %d: %s", broker_id, record)

    def _registration_for(self, record, broker_id: int, epoch: int) -> BrokerRegistration:
        registration = self._broker_registrations.get(broker_id)
        if registration is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found "
                               f"for that id")
        if registration.epoch != epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with "
                               f"that epoch found")
        return registration

    def replay_unregister_broker(self, record: UnregisterBrokerRecord) -> None:
        self._registration_for(record, int(record.broker_id), int(record.broker_epoch))
        self._broker_registrations.remove(int(record.broker_id))
        self.update_metrics()
        self.logger.info("Unregistered broker: %s", record)

    def replay_fence_broker(self, record: FenceBrokerRecord) -> None:
        registration = self._registration_for(record, int(record.id), int(record.epoch))
        self._broker_registrations.put(int(record.id), registration.clone_with_fencing(True))
        self.update_metrics()
        self.logger.info("Fenced broker: %s", record)

    def replay_unfence_broker(self, record: UnfenceBrokerRecord) -> None:
        registration = self._registration_for(record, int(record.id), int(record.epoch))
        self._broker_registrations.put(int(record.id), registration.clone_with_fencing(False))
        self.update_metrics()
        self.logger.info("Unfenced broker: %s", record)
        self._maybe_complete_ready_brokers_future()

    # -- placement and readiness ---------------------------------------------------------

    def place_replicas(self, start_partition: int, num_partitions: int,
                       num_replicas: int) -> list[list[int]]:
        def rack_of(broker_id: int) -> str | None:
            registration = self._broker_registrations.get(broker_id)
            return None if registration is None else registration.rack

        return self.heartbeat_manager().place_replicas(
            start_partition, num_partitions, num_replicas, rack_of, self.replica_placer)

    def add_ready_brokers_future(self, future: Future, min_brokers: int) -> None:
        self._ready_brokers_future = ReadyBrokersFuture(future, min_brokers)
        self._maybe_complete_ready_brokers_future()

    def _maybe_complete_ready_brokers_future(self) -> None:
        ready = self._ready_brokers_future
        if ready is None:
            return
        unfenced = sum(1 for r in self._broker_registrations.values() if not r.fenced)
        if unfenced >= ready.min_brokers:
            self._ready_brokers_future = None
            if not ready.future.done():
                ready.future.set_result(None)
