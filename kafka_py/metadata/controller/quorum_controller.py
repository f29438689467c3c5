"""Port of metadata/src/main/java/org/apache/kafka/controller/QuorumController.java
(Kafka 2.8.2, with Kafka 3.0.0's leadership handling, CreatePartitions, reassignment,
AllocateProducerIds, one-at-a-time fencing and snapshots, and Kafka 3.5.0's ACLs and SCRAM
credentials: AclControlManager, ScramControlManager).

The KRaft controller. The node that leads the metadata log is the active controller;
the others are standbys that only replay what the active one writes. Everything runs
on one KafkaEventQueue thread, so the state needs no locks:

* a read event reads the state as of the last committed offset;
* a write event turns a request into records and a response (the managers' methods),
  replays the records into the in-memory state at once, hands them to the
  MetaLogManager, and waits in the ControllerPurgatory until the log commits their
  offset; only then does its future complete. A write with no records waits for the
  highest pending offset, since what it read may not have committed yet;
* commits (handle_commits) complete purgatory entries on the active controller and are
  replayed on standbys;
* every write takes an in-memory snapshot at its offset, and the snapshots below the
  committed offset are dropped, so losing the leadership reverts the state to the last
  committed offset and fails every pending operation with NOT_CONTROLLER.

A request to a controller that is not active fails with NOT_CONTROLLER, whose message
names the active controller when it is known ("The active controller appears to be
node N"). An unexpected (non-API) error in a write is a bug or a broken log: the
controller renounces, reverting to what committed, and the error is answered as
UNKNOWN_SERVER_ERROR.

Snapshots (Kafka 3.0): every controller, active or standby, counts the bytes of the committed
batches it has read; past ``metadata.log.max.record.bytes.between.snapshots`` it writes a
snapshot of its state at the last committed offset. The SnapshotGeneratorManager keeps an
in-memory snapshot at that offset (so writes that follow do not show) and writes the
managers' records a few batches per event, between other events. A snapshot handed over by
the log (``handle_snapshot``: at startup when the log start has moved past the records, or
after a standby fetched one) replaces the whole state before the records that follow it.

Requests and responses are the kio message classes of each API, answered in the
request's version.

The ControllerMetrics follow the state: the managers count topics, partitions and brokers as
records replay, and the last applied and committed offsets move with writes and commits
(Kafka 3.3.1's updateWriteOffset and updateLastCommittedState).
"""
from __future__ import annotations

import logging
import random
import threading
import uuid
from concurrent.futures import Future
from typing import Any, Callable, Collection, Mapping, Sequence

from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import ApiException
from kafka_py.metadata.api_message_and_version import ApiMessage, ApiMessageAndVersion
from kafka_py.metadata.controller.acl_control_manager import AclControlManager
from kafka_py.metadata.controller.client_quota_control_manager import (
    ClientQuotaAlteration,
    ClientQuotaControlManager,
    ClientQuotaEntity,
)
from kafka_py.metadata.controller.cluster_control_manager import ClusterControlManager
from kafka_py.metadata.controller.configuration_control_manager import (
    ConfigResource,
    ConfigurationControlManager,
    ConfigurationValidator,
    default_config_validator,
)
from kafka_py.metadata.controller.controller import Controller
from kafka_py.metadata.controller.controller_messages import make, response_module
from kafka_py.metadata.controller.controller_metrics import ControllerMetrics
from kafka_py.metadata.controller.controller_purgatory import ControllerPurgatory
from kafka_py.metadata.controller.controller_result import ControllerResult
from kafka_py.metadata.controller.controller_result_and_offset import ControllerResultAndOffset
from kafka_py.metadata.controller.deferred_event import DeferredEvent
from kafka_py.metadata.controller.feature_control_manager import FeatureControlManager
from kafka_py.metadata.controller.producer_id_control_manager import ProducerIdControlManager
from kafka_py.metadata.controller.quorum_controller_metrics import QuorumControllerMetrics
from kafka_py.metadata.controller.replica_placer import ReplicaPlacer
from kafka_py.metadata.controller.replication_control_manager import ReplicationControlManager
from kafka_py.metadata.controller.scram_control_manager import ScramControlManager
from kafka_py.metadata.controller.snapshot_generator import Section, SnapshotGenerator
from kafka_py.metadata.controller.striped_replica_placer import StripedReplicaPlacer
from kafka_py.metadata.feature_map_and_epoch import FeatureMapAndEpoch
from kafka_py.metadata.metalog.meta_log_leader import MetaLogLeader
from kafka_py.metadata.metalog.meta_log_listener import MetaLogListener
from kafka_py.metadata.metalog.meta_log_manager import MetaLogManager
from kafka_py.metadata.queue.event_queue import (
    EarliestDeadlineFunction,
    Event,
    RejectedExecutionException,
)
from kafka_py.metadata.queue.event_queue import TimeoutException as QueueTimeoutException
from kafka_py.metadata.queue.kafka_event_queue import KafkaEventQueue
from kafka_py.metadata.records.metadata_record_type import MetadataRecordType
from kafka_py.metadata.timeline.snapshot_registry import LATEST_EPOCH, SnapshotRegistry
from kafka_py.metadata.version_range import VersionRange
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.server.zk_admin_manager import AlterConfigOpType, ConfigResourceType
from kafka_py.raft.snapshot.snapshot_reader import SnapshotReader
from kafka_py.clients.common.config.config_def import ConfigDef
from kafka_py.core.utils.java_limits import LONG_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.time import SystemTime, Time

logger = logging.getLogger(__name__)

ACTIVE_CONTROLLER_EXCEPTION_TEXT_PREFIX = "The active controller appears to be node "
MAYBE_FENCE_REPLICAS = "maybeFenceReplicas"
GENERATE_SNAPSHOT = "generateSnapshot"
MAX_BATCHES_PER_GENERATE_CALL = 10
_NS_PER_MS = 1_000_000
_NS_PER_MINUTE = 60 * 1_000_000_000


def exception_to_apparent_controller(e: BaseException) -> int:
    """The node a NOT_CONTROLLER error names as active, or -1."""
    message = str(e)
    if message.startswith(ACTIVE_CONTROLLER_EXCEPTION_TEXT_PREFIX):
        return int(message[len(ACTIVE_CONTROLLER_EXCEPTION_TEXT_PREFIX):])
    return -1


def _is_not_controller(e: BaseException) -> bool:
    return isinstance(e, ApiException) and e.error_name == "NOT_CONTROLLER"


class _UnknownServerException(ApiException):
    """clients' UnknownServerException, carrying the exception that caused it."""

    error_name = "UNKNOWN_SERVER_ERROR"


class QuorumController(Controller):
    def __init__(self, node_id: int, log_manager: MetaLogManager, *,
                 time: Time | None = None, thread_name_prefix: str | None = None,
                 log_prefix: str | None = None,
                 config_defs: Mapping[ConfigResourceType, ConfigDef] | None = None,
                 config_validator: ConfigurationValidator | None = default_config_validator,
                 supported_features: Mapping[str, VersionRange] | None = None,
                 default_replication_factor: int = 3, default_num_partitions: int = 1,
                 replica_placer: ReplicaPlacer | None = None,
                 session_timeout_ns: int = 18 * 1_000_000_000,
                 controller_metrics: ControllerMetrics | None = None,
                 snapshot_max_new_record_bytes: int = LONG_MAX,
                 static_config: Mapping[str, str] | None = None) -> None:
        self._node_id = node_id
        self.time = time if time is not None else SystemTime()
        log_prefix = log_prefix if log_prefix is not None else f"[Controller {node_id}] "
        self.logger = IdentLogger(logger, log_prefix)
        self.controller_metrics = (controller_metrics if controller_metrics is not None
                                   else QuorumControllerMetrics())
        self.snapshot_registry = SnapshotRegistry(log_prefix)
        self.purgatory = ControllerPurgatory()
        self.configuration_control = ConfigurationControlManager(
            self.snapshot_registry, config_defs, config_validator, log_prefix,
            static_config=static_config, node_id=node_id)
        self.client_quota_control = ClientQuotaControlManager(self.snapshot_registry)
        self.cluster_control = ClusterControlManager(
            self.time, self.snapshot_registry, session_timeout_ns,
            replica_placer if replica_placer is not None else StripedReplicaPlacer(random.Random()),
            log_prefix, self.controller_metrics)
        self.feature_control = FeatureControlManager(supported_features or {},
                                                     self.snapshot_registry)
        self.producer_id_control = ProducerIdControlManager(self.cluster_control,
                                                            self.snapshot_registry)
        self.replication_control = ReplicationControlManager(
            self.snapshot_registry, default_replication_factor, default_num_partitions,
            self.configuration_control, self.cluster_control, self.controller_metrics, log_prefix)
        self.acl_control = AclControlManager(self.snapshot_registry, log_prefix)
        self.scram_control = ScramControlManager(self.snapshot_registry, log_prefix)
        self.log_manager = log_manager
        self.meta_log_listener = QuorumMetaLogListener(self)
        # written only by the event thread; read by any thread through cur_claim_epoch()
        self._claim_lock = threading.Lock()
        self._cur_claim_epoch = -1
        # event thread only
        self.last_committed_offset = -1
        self.last_committed_epoch = -1
        self.last_committed_timestamp = -1
        self.write_offset = -1
        self.snapshot_max_new_record_bytes = snapshot_max_new_record_bytes
        self.new_bytes_since_last_snapshot = 0
        self.snapshot_generator_manager = SnapshotGeneratorManager(self)
        self.queue = KafkaEventQueue(self.time, log_prefix,
                                     thread_name_prefix if thread_name_prefix is not None
                                     else f"Node{node_id}_")
        try:
            self.log_manager.register(self.meta_log_listener)
        except BaseException:
            self.queue.close()
            raise

    # -- leadership ----------------------------------------------------------------------

    def node_id(self) -> int:
        return self._node_id

    def cur_claim_epoch(self) -> int:
        with self._claim_lock:
            return self._cur_claim_epoch

    def _set_claim_epoch(self, epoch: int) -> None:
        with self._claim_lock:
            self._cur_claim_epoch = epoch

    def read_epoch(self) -> int:
        """The epoch reads are made at: the committed offset on the active controller,
        whose state also holds uncommitted writes; the current state on a standby, which
        holds only what has committed (and keeps no snapshots to read at)."""
        return self.last_committed_offset if self.cur_claim_epoch() != -1 else LATEST_EPOCH

    def new_not_controller_exception(self) -> ApiException:
        latest = self.log_manager.leader().node_id
        if latest < 0:
            return Errors.NOT_CONTROLLER.exception("No controller appears to be active.")
        return Errors.NOT_CONTROLLER.exception(f"{ACTIVE_CONTROLLER_EXCEPTION_TEXT_PREFIX}{latest}")

    def _claim(self, new_epoch: int) -> None:
        cur = self.cur_claim_epoch()
        if cur != -1:
            if new_epoch <= cur:
                return
            # a newer epoch of our own: the older one ended without us hearing of it
            self.logger.warning("Claiming controller epoch %d without having renounced "
                                "epoch %d; renouncing it now.", new_epoch, cur)
            self._renounce()
        self.logger.info("Becoming the active controller at epoch %d, committed offset %d.",
                         new_epoch, self.last_committed_offset)
        self._set_claim_epoch(new_epoch)
        self.controller_metrics.set_active(True)
        self.update_write_offset(self.last_committed_offset)
        self.cluster_control.activate()
        # the active controller always keeps a snapshot at the committed offset, which a
        # renounce reverts to (Kafka 3.0)
        self.snapshot_registry.get_or_create_snapshot(self.last_committed_offset)

    def _renounce(self) -> None:
        self._set_claim_epoch(-1)
        self.controller_metrics.set_active(False)
        self.purgatory.fail_all(self.new_not_controller_exception())
        if self.snapshot_registry.has_snapshot(self.last_committed_offset):
            self.snapshot_registry.revert_to_snapshot(self.last_committed_offset)
        else:
            self.logger.error("No in-memory snapshot at the committed offset %d to revert to.",
                              self.last_committed_offset)
        # a standby keeps no snapshots (it only replays what has committed), but the one a
        # snapshot being written reads from
        generating = self.snapshot_generator_manager.snapshot_last_offset_from_log()
        self.snapshot_registry.delete_snapshots_up_to(LATEST_EPOCH if generating is None else generating)
        self.update_write_offset(-1)
        self.update_state_metrics()
        self.cluster_control.deactivate()
        self._cancel_maybe_fence_replicas()

    # -- metrics -------------------------------------------------------------------------

    def update_write_offset(self, offset: int) -> None:
        """The active controller reports its newest write, committed or not, as the last
        applied record, timed when it was handed to the log (the log does not say when it
        appends); a standby reports the last committed record (Kafka 3.3.1)."""
        self.write_offset = offset
        if self.cur_claim_epoch() != -1:
            self.controller_metrics.set_last_applied_record_offset(offset)
            self.controller_metrics.set_last_applied_record_timestamp(self.time.milliseconds())
        else:
            self.controller_metrics.set_last_applied_record_offset(self.last_committed_offset)
            self.controller_metrics.set_last_applied_record_timestamp(self.last_committed_timestamp)

    def update_last_committed_state(self, offset: int, epoch: int, timestamp: int) -> None:
        self.last_committed_offset = offset
        self.last_committed_epoch = epoch
        self.last_committed_timestamp = timestamp
        self.controller_metrics.set_last_committed_record_offset(offset)
        if self.cur_claim_epoch() == -1:
            self.controller_metrics.set_last_applied_record_offset(offset)
            self.controller_metrics.set_last_applied_record_timestamp(timestamp)

    def update_state_metrics(self) -> None:
        """Count topics, partitions and brokers again after the state jumped back to a
        snapshot (a renounce, a snapshot loaded), which replays no record to count them."""
        self.replication_control.update_metrics()
        self.cluster_control.update_metrics()

    # -- snapshots -----------------------------------------------------------------------

    def maybe_generate_snapshot(self, batch_size_in_bytes: int) -> None:
        self.new_bytes_since_last_snapshot += batch_size_in_bytes
        if (self.new_bytes_since_last_snapshot >= self.snapshot_max_new_record_bytes
                and self.snapshot_generator_manager.generator is None):
            if self.cur_claim_epoch() != -1 and not self.snapshot_registry.has_snapshot(self.last_committed_offset):
                # The committed batch ended inside a write split over batches, where the active
                # controller keeps no in-memory snapshot: wait for the write's last batch.
                return
            if self.cur_claim_epoch() == -1:
                # The active controller keeps an in-memory snapshot at every pending write; a
                # standby makes the one the generator reads only now.
                self.snapshot_registry.get_or_create_snapshot(self.last_committed_offset)
            self.logger.info("Generating a snapshot that includes (epoch=%d, offset=%d) after %d committed bytes "
                             "since the last snapshot.", self.last_committed_epoch, self.last_committed_offset,
                             self.new_bytes_since_last_snapshot)
            self.snapshot_generator_manager.create_snapshot_generator(
                self.last_committed_offset, self.last_committed_epoch, self.last_committed_timestamp)
            self.new_bytes_since_last_snapshot = 0

    def begin_writing_snapshot(self) -> Future:
        """Start a snapshot at the last committed offset unless one is being written; completes
        with the last offset the snapshot covers (Kafka's beginWritingSnapshot, for tests)."""
        future: Future = Future()

        def run() -> None:
            manager = self.snapshot_generator_manager
            if manager.generator is None:
                if self.cur_claim_epoch() == -1:
                    self.snapshot_registry.get_or_create_snapshot(self.last_committed_offset)
                manager.create_snapshot_generator(self.last_committed_offset, self.last_committed_epoch,
                                                  self.last_committed_timestamp)
            generator = manager.generator
            future.set_result(-1 if generator is None else generator.last_contained_log_offset())

        self.append_control_event("beginWritingSnapshot", run)
        return future

    def _reset_state(self) -> None:
        """Forget everything before loading a snapshot (Kafka 3.0's resetState)."""
        self.snapshot_generator_manager.cancel()
        self.snapshot_registry.reset()
        self.new_bytes_since_last_snapshot = 0
        self.update_last_committed_state(-1, -1, -1)

    def snapshot_records(self, epoch: int = LATEST_EPOCH) -> list[list[ApiMessageAndVersion]]:
        """Every manager's records as of ``epoch``, in a snapshot's order (for tests and tools)."""
        return [batch for _name, iterator in self._snapshot_sections(epoch) for batch in iterator]

    def _snapshot_sections(self, epoch: int) -> list[tuple[str, Any]]:
        return [("features", self.feature_control.iterator(epoch)),
                ("cluster", self.cluster_control.iterator(epoch)),
                ("replication", self.replication_control.iterator(epoch)),
                ("configuration", self.configuration_control.iterator(epoch)),
                ("clientQuotas", self.client_quota_control.iterator(epoch)),
                ("producerIds", self.producer_id_control.iterator(epoch)),
                ("acls", self.acl_control.iterator(epoch)),
                ("scram", self.scram_control.iterator(epoch))]

    # -- events --------------------------------------------------------------------------

    def _handle_event_end(self, name: str, start_ns: int) -> None:
        delta_ns = self.time.nanoseconds() - start_ns
        self.logger.debug("Processed %s in %d us", name, delta_ns // 1000)
        self.controller_metrics.update_event_queue_processing_time(delta_ns // _NS_PER_MS)

    def _handle_event_exception(self, name: str, start_ns: int | None,
                                exception: BaseException) -> BaseException:
        if start_ns is None:
            self.logger.info("unable to start processing %s because of %s.", name,
                             type(exception).__name__)
            if isinstance(exception, ApiException):
                return exception
            return self._unknown_server_exception(exception)
        delta_us = (self.time.nanoseconds() - start_ns) // 1000
        if isinstance(exception, ApiException):
            self.logger.info("%s: failed with %s in %d us", name, type(exception).__name__,
                             delta_us)
            return exception
        epoch = self.cur_claim_epoch()
        self.logger.warning("%s: failed with unknown server exception %s at epoch %d in %d us. "
                            "Reverting to last committed offset %d.", name,
                            type(exception).__name__, epoch, delta_us,
                            self.last_committed_offset, exc_info=exception)
        if epoch != -1:
            self._renounce()
            # let the log choose a leader again, rather than keep a leader that no longer
            # acts as the controller
            self.log_manager.renounce(epoch)
        return self._unknown_server_exception(exception)

    @staticmethod
    def _unknown_server_exception(cause: BaseException) -> ApiException:
        e = _UnknownServerException(str(cause) or type(cause).__name__)
        e.__cause__ = cause
        return e

    def append_control_event(self, name: str, handler: Callable[[], None]) -> None:
        self.queue.append(ControlEvent(self, name, handler))

    def append_read_event(self, name: str, handler: Callable[[], Any]) -> Future:
        event = ControllerReadEvent(self, name, handler)
        self.queue.append(event)
        return event.future

    def append_write_event(self, name: str, op: ControllerWriteOperation | Callable[[], ControllerResult],
                           deadline_ns: int | None = None) -> Future:
        event = ControllerWriteEvent(self, name, _as_operation(op))
        if deadline_ns is None:
            self.queue.append(event)
        else:
            self.queue.append_with_deadline(deadline_ns, event)
        return event.future

    def _schedule_deferred_write_event(self, name: str, deadline_ns: int,
                                       op: ControllerWriteOperation) -> None:
        event = ControllerWriteEvent(self, name, op)
        self.queue.schedule_deferred(name, EarliestDeadlineFunction(deadline_ns), event)

        def on_done(future: Future) -> None:
            e = future.exception()
            if e is None:
                return
            if (isinstance(e.__cause__, RejectedExecutionException)
                    or isinstance(e, QueueTimeoutException)):
                # (a deferred event only times out when the queue shuts down)
                self.logger.error("Cancelling deferred write event %s because the event queue "
                                  "is now closed.", name)
            elif _is_not_controller(e):
                self.logger.debug("Cancelling deferred write event %s because this controller "
                                  "is no longer active.", name)
            else:
                self.logger.error("Unexpected exception while executing deferred write event "
                                  "%s. Rescheduling for a minute from now.", name, exc_info=e)
                self._schedule_deferred_write_event(name, deadline_ns + _NS_PER_MINUTE, op)

        event.future.add_done_callback(on_done)

    def _reschedule_maybe_fence_stale_brokers(self) -> None:
        next_check_ns = self.cluster_control.heartbeat_manager().next_check_time_ns()
        if next_check_ns == LONG_MAX:
            self._cancel_maybe_fence_replicas()
            return

        def fence() -> ControllerResult:
            result = self.replication_control.maybe_fence_one_stale_broker()
            self._reschedule_maybe_fence_stale_brokers()
            return result

        self._schedule_deferred_write_event(MAYBE_FENCE_REPLICAS, next_check_ns,
                                            _as_operation(fence))

    def _cancel_maybe_fence_replicas(self) -> None:
        self.queue.cancel_deferred(MAYBE_FENCE_REPLICAS)

    def replay(self, message: ApiMessage, offset: int) -> None:
        """Apply one committed (or, on the active controller, just written) record."""
        record_type = MetadataRecordType.from_id(int(type(message).__api_key__))
        T = MetadataRecordType
        handlers = {
            T.REGISTER_BROKER_RECORD: self.cluster_control.replay_register_broker,
            T.UNREGISTER_BROKER_RECORD: self.cluster_control.replay_unregister_broker,
            T.TOPIC_RECORD: self.replication_control.replay_topic,
            T.PARTITION_RECORD: self.replication_control.replay_partition,
            T.CONFIG_RECORD: self.configuration_control.replay,
            T.PARTITION_CHANGE_RECORD: self.replication_control.replay_partition_change,
            T.FENCE_BROKER_RECORD: self.cluster_control.replay_fence_broker,
            T.UNFENCE_BROKER_RECORD: self.cluster_control.replay_unfence_broker,
            T.REMOVE_TOPIC_RECORD: self.replication_control.replay_remove_topic,
            T.FEATURE_LEVEL_RECORD: self.feature_control.replay,
            T.REMOVE_FEATURE_LEVEL_RECORD: self.feature_control.replay_remove,
            T.QUOTA_RECORD: self.client_quota_control.replay,
            T.PRODUCER_IDS_RECORD: self.producer_id_control.replay,
            T.ACCESS_CONTROL_ENTRY_RECORD: self.acl_control.replay,
            T.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: self.acl_control.replay_remove,
            T.USER_SCRAM_CREDENTIAL_RECORD: self.scram_control.replay,
            T.REMOVE_USER_SCRAM_CREDENTIAL_RECORD: self.scram_control.replay_remove,
        }
        handler = handlers.get(record_type)
        if handler is None:
            raise RuntimeError(f"Unhandled record type {record_type.name}")
        handler(message)

    # -- the API -------------------------------------------------------------------------

    @staticmethod
    def _completed(value: Any) -> Future:
        future: Future = Future()
        future.set_result(value)
        return future

    def alter_isr(self, request) -> Future:
        if not request.topics:
            return self._completed(make(response_module(request).AlterIsrResponse,
                                        error_code=Errors.NONE.error_code, topics=()))
        return self.append_write_event("alterIsr",
                                       lambda: self.replication_control.alter_isr(request))

    def create_topics(self, request) -> Future:
        if not request.topics:
            return self._completed(make(response_module(request).CreateTopicsResponse,
                                        topics=()))

        def op() -> ControllerResult:
            result = self.replication_control.create_topics(request)
            return result.without_records() if getattr(request, "validate_only", False) else result

        return self.append_write_event("createTopics", op, self._deadline(request))

    def _deadline(self, request) -> int | None:
        timeout = getattr(request, "timeout", None)
        if timeout is None:
            return None
        timeout_ms = int(timeout.total_seconds() * 1000)
        return self.time.nanoseconds() + max(timeout_ms, 0) * _NS_PER_MS

    def delete_topics(self, ids: Collection[uuid.UUID]) -> Future:
        if not ids:
            return self._completed({})
        return self.append_write_event("deleteTopics",
                                       lambda: self.replication_control.delete_topics(ids))

    def find_topic_ids(self, names: Collection[str]) -> Future:
        if not names:
            return self._completed({})
        return self.append_read_event("findTopicIds", lambda: self.replication_control
                                      .find_topic_ids(self.read_epoch(), names))

    def find_topic_names(self, ids: Collection[uuid.UUID]) -> Future:
        if not ids:
            return self._completed({})
        return self.append_read_event("findTopicNames", lambda: self.replication_control
                                      .find_topic_names(self.read_epoch(), ids))

    def unregister_broker(self, request) -> Future:
        module = response_module(request)

        def op() -> ControllerResult:
            result = self.replication_control.unregister_broker(int(request.broker_id))
            return ControllerResult(result.records, make(module.UnregisterBrokerResponse,
                                                         error_code=Errors.NONE.error_code),
                                    result.is_atomic)

        return self.append_write_event("unregisterBroker", op)

    def describe_configs(self, resources: Mapping[ConfigResource, Collection[str]]) -> Future:
        return self.append_read_event("describeConfigs", lambda: self.configuration_control
                                      .describe_configs(self.read_epoch(), resources))

    def elect_leaders(self, request) -> Future:
        return self.append_write_event("electLeaders",
                                       lambda: self.replication_control.elect_leaders(request),
                                       self._deadline(request))

    def finalized_features(self) -> Future:
        return self.append_read_event("getFinalizedFeatures", lambda: FeatureMapAndEpoch(
            self.feature_control.finalized_features(self.read_epoch()).map,
            self.last_committed_offset))

    def update_features(self, request) -> Future:
        """UpdateFeatures: each feature's finalized range becomes 1..max_version_level."""
        module = response_module(request)

        def op() -> ControllerResult:
            updates = {u.feature: VersionRange(1, int(u.max_version_level))
                       for u in request.feature_updates}
            downgradeables = {u.feature for u in request.feature_updates if u.allow_downgrade}
            broker_features = {broker_id: r.supported_features for broker_id, r in
                               self.cluster_control.broker_registrations().items()}
            result = self.feature_control.update_features(updates, downgradeables,
                                                          broker_features)
            results = tuple(make(module.UpdatableFeatureResult, feature=name,
                                 error_code=error.error.error_code, error_message=error.message)
                            for name, error in result.response.items())
            return ControllerResult(result.records, make(
                module.UpdateFeaturesResponse, error_code=Errors.NONE.error_code,
                error_message=None, results=results), result.is_atomic)

        return self.append_write_event("updateFeatures", op, self._deadline(request))

    def incremental_alter_configs(self, request) -> Future:
        """IncrementalAlterConfigs; BROKER_LOGGER resources are refused (brokers handle
        those themselves)."""
        module = response_module(request)
        changes: dict[ConfigResource, dict[str, tuple[AlterConfigOpType, str | None]]] = {}
        for resource in request.resources:
            key = ConfigResource(ConfigResourceType.for_id(resource.resource_type),
                                 resource.resource_name)
            ops = changes.setdefault(key, {})
            for config in resource.configs:
                try:
                    op_type = AlterConfigOpType(int(config.config_operation))
                except ValueError:
                    op_type = None  # type: ignore[assignment]
                ops[config.name] = (op_type, config.value)

        def op() -> ControllerResult:
            bad = {r for r, ops in changes.items() if any(o is None for o, _ in ops.values())}
            result = self.configuration_control.incremental_alter_configs(
                {r: ops for r, ops in changes.items() if r not in bad})
            errors = dict(result.response)
            for r in bad:
                errors[r] = ApiError(Errors.INVALID_REQUEST, "Unknown config operation type")
            response = make(module.IncrementalAlterConfigsResponse,
                            responses=self._config_responses(module, request.resources, errors))
            result = ControllerResult(result.records, response, result.is_atomic)
            return result.without_records() if request.validate_only else result

        return self.append_write_event("incrementalAlterConfigs", op)

    def legacy_alter_configs(self, request) -> Future:
        """AlterConfigs: each named resource's configs are replaced as a whole."""
        module = response_module(request)
        new_configs = {ConfigResource(ConfigResourceType.for_id(r.resource_type), r.resource_name):
                       {c.name: c.value for c in r.configs} for r in request.resources}
        if not new_configs:
            return self._completed(make(module.AlterConfigsResponse, responses=()))

        def op() -> ControllerResult:
            bad = {r for r, configs in new_configs.items()
                   if any(v is None for v in configs.values())}
            result = self.configuration_control.legacy_alter_configs(
                {r: c for r, c in new_configs.items() if r not in bad})
            errors = dict(result.response)
            for r in bad:
                errors[r] = ApiError(Errors.INVALID_REQUEST, "Null value not supported for "
                                                             "a config in AlterConfigs")
            response = make(module.AlterConfigsResponse,
                            responses=self._config_responses(module, request.resources, errors))
            result = ControllerResult(result.records, response, result.is_atomic)
            return result.without_records() if request.validate_only else result

        return self.append_write_event("legacyAlterConfigs", op)

    @staticmethod
    def _config_responses(module, resources, errors: Mapping[ConfigResource, ApiError]) -> tuple:
        responses = []
        for r in resources:
            key = ConfigResource(ConfigResourceType.for_id(r.resource_type), r.resource_name)
            error = errors.get(key, ApiError.NONE)  # type: ignore[attr-defined]
            responses.append(make(module.AlterConfigsResourceResponse,
                                  error_code=error.error.error_code, error_message=error.message,
                                  resource_type=r.resource_type, resource_name=r.resource_name))
        return tuple(responses)

    def process_broker_heartbeat(self, request) -> Future:
        """A BrokerHeartbeatRequest; the future holds the BrokerHeartbeatResponse. The
        controller's own view (with in_controlled_shutdown) is process_broker_heartbeat_reply."""
        module = response_module(request)
        future: Future = Future()
        inner = self.process_broker_heartbeat_reply(request)

        def done(f: Future) -> None:
            e = f.exception()
            if e is not None:
                future.set_exception(e)
                return
            reply = f.result()
            future.set_result(make(module.BrokerHeartbeatResponse,
                                   error_code=Errors.NONE.error_code,
                                   is_caught_up=reply.is_caught_up, is_fenced=reply.is_fenced,
                                   should_shut_down=reply.should_shut_down))

        inner.add_done_callback(done)
        return future

    def process_broker_heartbeat_reply(self, request) -> Future:
        """Kafka's processBrokerHeartbeat: the future holds a BrokerHeartbeatReply."""
        controller = self

        class HeartbeatOperation(ControllerWriteOperation):
            in_controlled_shutdown = False

            def generate_records_and_result(self) -> ControllerResult:
                result = controller.replication_control.process_broker_heartbeat(
                    request, controller.last_committed_offset)
                self.in_controlled_shutdown = result.response.in_controlled_shutdown
                controller._reschedule_maybe_fence_stale_brokers()
                return result

            def process_batch_end_offset(self, offset: int) -> None:
                if self.in_controlled_shutdown:
                    controller.cluster_control.heartbeat_manager() \
                        .update_controlled_shutdown_offset(int(request.broker_id), offset)

        return self.append_write_event("processBrokerHeartbeat", HeartbeatOperation())

    def register_broker(self, request) -> Future:
        """A BrokerRegistrationRequest; its epoch is the offset its record should get."""
        module = response_module(request)

        def op() -> ControllerResult:
            result = self.cluster_control.register_broker(
                request, self.write_offset + 1,
                self.feature_control.finalized_features(LATEST_EPOCH))
            self._reschedule_maybe_fence_stale_brokers()
            return ControllerResult(result.records, make(
                module.BrokerRegistrationResponse, error_code=Errors.NONE.error_code,
                broker_epoch=result.response.epoch), result.is_atomic)

        return self.append_write_event("registerBroker", op)

    def alter_client_quotas(self, request) -> Future:
        module = response_module(request)
        alterations = [ClientQuotaAlteration(
            ClientQuotaEntity.of({e.entity_type: e.entity_name for e in entry.entity}),
            tuple((o.key, None if o.remove else float(o.value)) for o in entry.ops))
            for entry in request.entries]
        if not alterations:
            return self._completed(make(module.AlterClientQuotasResponse, entries=()))

        def op() -> ControllerResult:
            result = self.client_quota_control.alter_client_quotas(alterations)
            entries = []
            for entry, alteration in zip(request.entries, alterations):
                error = result.response[alteration.entity]
                entries.append(make(module.EntryData, error_code=error.error.error_code,
                                    error_message=error.message,
                                    entity=tuple(make(module.EntityData, entity_type=e.entity_type,
                                                      entity_name=e.entity_name)
                                                 for e in entry.entity)))
            result = ControllerResult(result.records, make(module.AlterClientQuotasResponse,
                                                           entries=tuple(entries)), result.is_atomic)
            return result.without_records() if request.validate_only else result

        return self.append_write_event("alterClientQuotas", op)

    def describe_client_quotas(self, components: Sequence[tuple[str, int, str | None]],
                               strict: bool) -> Future:
        return self.append_read_event("describeClientQuotas", lambda: self.client_quota_control
                                      .describe_client_quotas(components, strict,
                                                              self.read_epoch()))

    def create_partitions(self, request) -> Future:
        if not request.topics:
            return self._completed(make(response_module(request).CreatePartitionsResponse,
                                        results=()))

        def op() -> ControllerResult:
            result = self.replication_control.create_partitions(request)
            return result.without_records() if request.validate_only else result

        return self.append_write_event("createPartitions", op, self._deadline(request))

    def alter_partition_reassignments(self, request) -> Future:
        if not request.topics:
            return self._completed(make(response_module(request).AlterPartitionReassignmentsResponse,
                                        error_code=Errors.NONE.error_code, responses=()))
        return self.append_write_event(
            "alterPartitionReassignments",
            lambda: self.replication_control.alter_partition_reassignments(request),
            self._deadline(request))

    def list_partition_reassignments(self, request) -> Future:
        # a write with no records: it answers once what it read has committed (Kafka 3.0
        # reads the latest, uncommitted state here, so it must wait the same way)
        return self.append_write_event(
            "listPartitionReassignments",
            lambda: ControllerResult.of((), self.replication_control
                                        .list_partition_reassignments(request)))

    def allocate_producer_ids(self, request) -> Future:
        module = response_module(request)

        def op() -> ControllerResult:
            result = self.producer_id_control.generate_next_producer_id(
                int(request.broker_id), int(request.broker_epoch))
            block = result.response
            return ControllerResult(result.records, make(
                module.AllocateProducerIdsResponse, error_code=Errors.NONE.error_code,
                producer_id_start=block.producer_id_start,
                producer_id_len=block.producer_id_len), result.is_atomic)

        return self.append_write_event("allocateProducerIds", op)

    # -- ACLs and SCRAM credentials (Kafka 3.5) ------------------------------------------

    def create_acls(self, request_context: Any, acl_bindings: Sequence[Any]) -> Future:
        """The AclMutator's createAcls: one AclCreateResult per binding, once committed."""
        if not acl_bindings:
            return self._completed([])
        bindings = list(acl_bindings)
        return self.append_write_event("createAcls", lambda: self.acl_control.create_acls(bindings))

    def delete_acls(self, request_context: Any, acl_binding_filters: Sequence[Any]) -> Future:
        """The AclMutator's deleteAcls: one AclDeleteResult per filter, once committed."""
        if not acl_binding_filters:
            return self._completed([])
        filters = list(acl_binding_filters)
        return self.append_write_event("deleteAcls", lambda: self.acl_control.delete_acls(filters))

    def describe_acls(self, binding_filter: Any) -> Future:
        return self.append_read_event("describeAcls", lambda: self.acl_control.describe_acls(
            binding_filter, self.read_epoch()))

    def alter_user_scram_credentials(self, request) -> Future:
        module = response_module(request)

        def op() -> ControllerResult:
            result = self.scram_control.alter_credentials(request)
            return ControllerResult(result.records, make(
                module.AlterUserScramCredentialsResponse, results=tuple(
                    make(module.AlterUserScramCredentialsResult, user=user, error_code=error.error.error_code,
                         error_message=error.message) for user, error in result.response)), result.is_atomic)

        return self.append_write_event("alterUserScramCredentials", op)

    def wait_for_ready_brokers(self, min_brokers: int) -> Future:
        future: Future = Future()
        self.append_control_event("waitForReadyBrokers",
                                  lambda: self.cluster_control.add_ready_brokers_future(
                                      future, min_brokers))
        return future

    def begin_shutdown(self) -> None:
        self.queue.begin_shutdown("QuorumController#beginShutdown")

    def close(self) -> None:
        self.queue.close()
        # The queue's thread has ended: a snapshot still being written is abandoned.
        self.snapshot_generator_manager.abandon()
        self.controller_metrics.close()

    def __str__(self) -> str:
        return f"QuorumController(nodeId={self._node_id})"


# -- events ------------------------------------------------------------------------------

class ControllerWriteOperation:
    """Makes a write's records and response from the current (possibly uncommitted)
    state. It changes no state itself, except soft state such as heartbeats; the state
    changes when the records are replayed."""

    def generate_records_and_result(self) -> ControllerResult:
        raise NotImplementedError

    def process_batch_end_offset(self, offset: int) -> None:
        """Told the offset the records were written at (the last write's if none)."""


class _CallableOperation(ControllerWriteOperation):
    def __init__(self, fn: Callable[[], ControllerResult]) -> None:
        self.fn = fn

    def generate_records_and_result(self) -> ControllerResult:
        return self.fn()


def _as_operation(op) -> ControllerWriteOperation:
    return op if isinstance(op, ControllerWriteOperation) else _CallableOperation(op)


class ControlEvent(Event):
    """An internal event (a log callback); nothing waits on it."""

    def __init__(self, controller: QuorumController, name: str, handler: Callable[[], None]) -> None:
        self.controller = controller
        self.name = name
        self.handler = handler
        self.created_ns = controller.time.nanoseconds()
        self.start_ns: int | None = None

    def run(self) -> None:
        c = self.controller
        now = c.time.nanoseconds()
        c.controller_metrics.update_event_queue_time((now - self.created_ns) // _NS_PER_MS)
        self.start_ns = now
        c.logger.debug("Executing %s.", self)
        self.handler()
        c._handle_event_end(str(self), now)

    def handle_exception(self, e: BaseException) -> None:
        self.controller._handle_event_exception(self.name, self.start_ns, e)

    def __str__(self) -> str:
        return self.name


class ControllerReadEvent(Event):
    """Reads the committed state for an API."""

    def __init__(self, controller: QuorumController, name: str, handler: Callable[[], Any]) -> None:
        self.controller = controller
        self.name = name
        self.handler = handler
        self.future: Future = Future()
        self.created_ns = controller.time.nanoseconds()
        self.start_ns: int | None = None

    def run(self) -> None:
        c = self.controller
        now = c.time.nanoseconds()
        c.controller_metrics.update_event_queue_time((now - self.created_ns) // _NS_PER_MS)
        self.start_ns = now
        value = self.handler()
        c._handle_event_end(str(self), now)
        self.future.set_result(value)

    def handle_exception(self, e: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(
                self.controller._handle_event_exception(self.name, self.start_ns, e))

    def __str__(self) -> str:
        return f"{self.name}({id(self)})"


class ControllerWriteEvent(Event, DeferredEvent):
    """Changes the state; completes when its records commit."""

    def __init__(self, controller: QuorumController, name: str, op: ControllerWriteOperation) -> None:
        self.controller = controller
        self.name = name
        self.op = op
        self.future: Future = Future()
        self.created_ns = controller.time.nanoseconds()
        self.start_ns: int | None = None
        self.result_and_offset: ControllerResultAndOffset | None = None

    def run(self) -> None:
        c = self.controller
        now = c.time.nanoseconds()
        c.controller_metrics.update_event_queue_time((now - self.created_ns) // _NS_PER_MS)
        controller_epoch = c.cur_claim_epoch()
        if controller_epoch == -1:
            raise c.new_not_controller_exception()
        self.start_ns = now
        result = self.op.generate_records_and_result()
        if not result.records:
            self.op.process_batch_end_offset(c.write_offset)
            # a read after all, but of the latest state, which may hold uncommitted
            # changes: answer once the newest pending write has committed
            pending = c.purgatory.highest_pending_offset()
            if pending is None:
                self.result_and_offset = ControllerResultAndOffset.of(-1, result)
                c.logger.debug("Completing read-only operation %s immediately because the "
                               "purgatory is empty.", self)
                self.complete(None)
                return
            self.result_and_offset = ControllerResultAndOffset.of(pending, result)
            c.logger.debug("Read-only operation %s will be completed when the log reaches "
                           "offset %d", self, pending)
        else:
            if result.is_atomic:
                offset = c.log_manager.schedule_atomic_write(controller_epoch, result.records)
            else:
                offset = c.log_manager.schedule_write(controller_epoch, result.records)
            self.op.process_batch_end_offset(offset)
            c.update_write_offset(offset)
            self.result_and_offset = ControllerResultAndOffset.of(offset, result)
            for record in result.records:
                c.replay(record.message, offset)
            c.snapshot_registry.get_or_create_snapshot(offset)
            c.logger.debug("Read-write operation %s will be completed when the log reaches "
                           "offset %d.", self, offset)
        c.purgatory.add(self.result_and_offset.offset, self)

    def handle_exception(self, e: BaseException) -> None:
        self.complete(e)

    def complete(self, exception: BaseException | None) -> None:
        if self.future.done():
            return
        if exception is None:
            self.controller._handle_event_end(str(self), self.start_ns)
            self.future.set_result(self.result_and_offset.response)
        else:
            self.future.set_exception(
                self.controller._handle_event_exception(self.name, self.start_ns, exception))

    def __str__(self) -> str:
        return f"{self.name}({id(self)})"


class SnapshotGeneratorManager:
    """The snapshot being written, if any, and its generateSnapshot events (Kafka 3.0's
    QuorumController.SnapshotGeneratorManager). Event thread only."""

    def __init__(self, controller: QuorumController) -> None:
        self.controller = controller
        self.generator: SnapshotGenerator | None = None

    def create_snapshot_generator(self, committed_offset: int, committed_epoch: int, committed_timestamp: int) -> None:
        c = self.controller
        if self.generator is not None:
            raise RuntimeError("Snapshot generator already exists.")
        if not c.snapshot_registry.has_snapshot(committed_offset):
            raise RuntimeError(f"Cannot generate a snapshot at committed offset {committed_offset} because it does "
                               f"not exists in the snapshot registry.")
        writer = c.log_manager.create_snapshot(committed_offset, committed_epoch, committed_timestamp)
        if writer is None:
            c.logger.info("Skipping generation of snapshot for committed offset %d and epoch %d since it already "
                          "exists", committed_offset, committed_epoch)
            return
        self.generator = SnapshotGenerator(c.logger.ident, writer, MAX_BATCHES_PER_GENERATE_CALL,
                                           [Section(name, iterator)
                                            for name, iterator in c._snapshot_sections(committed_offset)])
        self.reschedule(0)

    def cancel(self) -> None:
        c = self.controller
        if self.generator is None:
            return
        c.logger.error("Cancelling snapshot %d", self.generator.last_contained_log_offset())
        self.generator.writer().close()
        self.generator = None
        # Its in-memory snapshot is no longer needed.
        c.snapshot_registry.delete_snapshots_up_to(c.last_committed_offset)
        c.queue.cancel_deferred(GENERATE_SNAPSHOT)

    def abandon(self) -> None:
        """Close the writer of a snapshot the controller will never finish (it is closing)."""
        if self.generator is not None:
            self.generator.writer().close()
            self.generator = None

    def reschedule(self, delay_ns: int) -> None:
        c = self.controller
        c.queue.schedule_deferred(GENERATE_SNAPSHOT, EarliestDeadlineFunction(c.time.nanoseconds() + delay_ns),
                                  ControlEvent(c, GENERATE_SNAPSHOT, self.run))

    def run(self) -> None:
        c = self.controller
        if self.generator is None:
            c.logger.debug("No snapshot is in progress.")
            return
        try:
            next_delay = self.generator.generate_batches()
        except Exception:
            c.logger.exception("Error while generating snapshot %d", self.generator.last_contained_log_offset())
            self.generator.writer().close()
            self.generator = None
            return
        if next_delay is None:
            c.logger.info("Finished generating snapshot %d.", self.generator.last_contained_log_offset())
            self.generator.writer().close()
            self.generator = None
            # Only the active controller needs in-memory snapshots (those of pending writes);
            # a standby drops the one the snapshot was read from.
            c.snapshot_registry.delete_snapshots_up_to(c.last_committed_offset if c.cur_claim_epoch() != -1
                                                       else LATEST_EPOCH)
            return
        self.reschedule(next_delay)

    def snapshot_last_offset_from_log(self) -> int | None:
        return None if self.generator is None else self.generator.last_contained_log_offset()


class QuorumMetaLogListener(MetaLogListener):
    """The log's callbacks, which come on the log's thread, turned into control events."""

    def __init__(self, controller: QuorumController) -> None:
        self.controller = controller

    def handle_commits(self, last_offset: int, messages: Sequence[ApiMessage]) -> None:
        self.handle_commit_batch(last_offset, -1, -1, 0, messages)

    def handle_commit_batch(self, last_offset: int, epoch: int, append_timestamp: int, size_in_bytes: int,
                            messages: Sequence[ApiMessage]) -> None:
        c = self.controller

        def handle() -> None:
            if c.cur_claim_epoch() == -1:
                # a standby replays what the active controller wrote
                c.logger.debug("Replaying commits from the active node up to offset %d.",
                               last_offset)
                for message in messages:
                    c.replay(message, last_offset)
            else:
                # the active controller replayed its records when it wrote them
                c.logger.debug("Completing purgatory items up to offset %d.", last_offset)
                c.purgatory.complete_up_to(last_offset)
                # Keep the snapshot a snapshot being written reads from.
                generating = c.snapshot_generator_manager.snapshot_last_offset_from_log()
                c.snapshot_registry.delete_snapshots_up_to(last_offset if generating is None else generating)
            c.update_last_committed_state(last_offset, epoch, append_timestamp)
            c.maybe_generate_snapshot(size_in_bytes)

        c.append_control_event(f"handleCommits[{last_offset}]", handle)

    def handle_snapshot(self, reader: SnapshotReader[ApiMessageAndVersion]) -> None:
        c = self.controller

        def handle() -> None:
            try:
                if c.cur_claim_epoch() != -1:
                    raise RuntimeError(f"Asked to load snapshot ({reader.snapshot_id()}) when it is the active "
                                       f"controller ({c.cur_claim_epoch()})")
                c.logger.info("Starting to replay snapshot (%s), from last commit offset (%d) and epoch (%d)",
                              reader.snapshot_id(), c.last_committed_offset, c.last_committed_epoch)
                c._reset_state()
                for batch in reader:
                    offset = batch.last_offset()
                    c.logger.debug("Replaying snapshot (%s) batch with last offset of %d", reader.snapshot_id(),
                                   offset)
                    for record in batch.records:
                        c.replay(record.message, offset)
                c.update_last_committed_state(reader.last_contained_log_offset(),
                                              reader.last_contained_log_epoch(),
                                              reader.last_contained_log_timestamp())
                c.update_state_metrics()
            finally:
                reader.close()

        c.append_control_event(f"handleSnapshot[snapshotId={reader.snapshot_id()}]", handle)

    def handle_new_leader(self, leader: MetaLogLeader) -> None:
        c = self.controller
        if leader.node_id == c.node_id():
            c.append_control_event(f"handleClaim[{leader.epoch}]", lambda: c._claim(leader.epoch))
        else:
            def maybe_renounce() -> None:
                epoch = c.cur_claim_epoch()
                if epoch != -1 and leader.epoch > epoch:
                    c.logger.warning("Renouncing the leadership at epoch %d because node %d "
                                     "leads epoch %d. Reverting to last committed offset %d.",
                                     epoch, leader.node_id, leader.epoch, c.last_committed_offset)
                    c._renounce()

            c.append_control_event(f"handleNewLeader[{leader.epoch}]", maybe_renounce)

    def handle_renounce(self, epoch: int) -> None:
        c = self.controller

        def handle() -> None:
            if c.cur_claim_epoch() == epoch:
                c.logger.info("Renouncing the leadership at oldEpoch %d due to a metadata log "
                              "event. Reverting to last committed offset %d.", epoch,
                              c.last_committed_offset)
                c._renounce()

        c.append_control_event(f"handleRenounce[{epoch}]", handle)

    def begin_shutdown(self) -> None:
        self.controller.queue.begin_shutdown("MetaLogManager.Listener")
