"""Port of core/src/main/scala/kafka/server/ReplicaManager.scala.

The ReplicaManager owns the partitions this broker hosts (``all_partitions``: one
``Partition`` each, or an offline marker) and carries out everything the controller and the
clients ask of them:

* LeaderAndIsr (``become_leader_or_follower``): create the partitions and their logs, make
  them leader or follower, restore high watermarks from ``replication-offset-checkpoint``;
* StopReplica (``stop_replicas``): stop hosting partitions, deleting their logs if asked;
* UpdateMetadata (``maybe_update_metadata_cache``), with the controller-epoch check;
* Produce (``append_records``): append to the leaders' logs, and for acks=all park the
  request in the produce purgatory until the ISR has the records;
* Fetch (``fetch_messages``): read FileRecords slices from the local logs (the bytes stay in
  the segment files; the network layer sends them with sendfile), or park the fetch in the
  fetch purgatory until enough bytes arrive (long poll);
* ListOffsets, DeleteRecords, OffsetsForLeaderEpoch;
* ElectLeaders (``elect_leaders``): the controller elects, and the answer waits in the
  "ElectLeader" purgatory until the metadata cache shows the new leaders;
* the ``highwatermark-checkpoint`` task and the ``isr-expiration`` task;
* failed log dirs (``handle_log_dir_failure``, run by the LogDirFailureHandler thread off the
  LogDirFailureChannel): their partitions go offline and answer KAFKA_STORAGE_ERROR, waiting
  produces and fetches on them complete at once, and the controller is told through
  /log_dir_event_notification.

Followers replicate through ``replica_fetcher_manager`` (server/replica_fetcher_manager.py):
becoming follower removes a partition from its fetcher and adds it again for the new leader
and epoch (``_make_followers``); becoming leader or being stopped removes it; idle fetcher
threads stop after each LeaderAndIsr. ISR changes go through ``alter_isr_manager`` when one is
given.

Fetch sessions are not kept here but by KafkaApis's FetchManager (server/fetch_session.py),
which hands this manager each fetch's partitions.
"""
from __future__ import annotations

import logging
import os
import threading
import uuid
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.core.api.leader_and_isr import INITIAL_CONTROLLER_EPOCH, LeaderAndIsr
from kafka_py.core.api.request import FUTURE_LOCAL_REPLICA_ID, describe_replica_id, is_valid_broker_id
from kafka_py.core.cluster.partition import FencedLeaderEpochException, Partition, UnknownLeaderEpochException
from kafka_py.core.cluster.broker import Node
from kafka_py.clients.common.api_error import ApiError
from kafka_py.clients.common.errors import (
    CorruptRecordException,
    InvalidTopicException,
    KafkaStorageException,
    LogDirNotFoundException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    PolicyViolationException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
    UnknownTopicOrPartitionException,
)
from kafka_py.clients.common.isolation_level import IsolationLevel
from kafka_py.clients.common.replica_selector import (
    ClientMetadata,
    PartitionView,
    ReplicaSelector,
    ReplicaView,
    create_replica_selector,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log import log_files
from kafka_py.log.log_append_info import LeaderHwChange, LogAppendInfo
from kafka_py.log.log_files import UNKNOWN_OFFSET
from kafka_py.clients.common.record.default_record_batch import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from kafka_py.server.broker_topic_stats import BrokerTopicStats
from kafka_py.core.metrics.kafka_metrics_group import KafkaMetricsGroup
from kafka_py.log.log_offset_metadata import UNKNOWN_OFFSET_METADATA, FetchDataInfo, FetchIsolation
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.verification_guard import SENTINEL as VERIFICATION_SENTINEL
from kafka_py.log.verification_guard import VerificationGuard
from kafka_py.clients.common.record.record_conversion_stats import RecordConversionStats
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import response_schema
from kafka_py.clients.common.protocol.requests import DEBUGGING_REPLICA_ID, EpochEndOffset, LeaderAndIsrPartitionState, PartitionData
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.abstract_fetcher_manager import InitialFetchState
from kafka_py.server.checkpoints.offset_checkpoint_file import LazyOffsetCheckpoints, OffsetCheckpointFile
from kafka_py.server.delayed_delete_records import (
    DelayedDeleteRecords,
    DeleteRecordsPartitionResult,
    DeleteRecordsPartitionStatus,
)
from kafka_py.server.delayed_elect_leader import DelayedElectLeader
from kafka_py.server.delayed_fetch import DelayedFetch, FetchMetadata, FetchPartitionStatus
from kafka_py.server.delayed_operation import DelayedOperationPurgatory
from kafka_py.server.epoch.leader_epoch_file_cache import deferred_flushes
from kafka_py.server.delayed_operation_key import TopicPartitionOperationKey
from kafka_py.server.delayed_produce import (
    DelayedProduce,
    PartitionResponse,
    ProduceMetadata,
    ProducePartitionStatus,
)
from kafka_py.server.metadata_cache import is_internal
from kafka_py.server.quota_factory import UNBOUNDED_QUOTA
from kafka_py.server.replica_alter_log_dirs_manager import ReplicaAlterLogDirsManager, local_broker_end_point
from kafka_py.server.replica_fetcher_manager import ReplicaFetcherManager
from kafka_py.server.replica_manager_types import (
    FetchPartitionData,
    HostedPartition,
    HostedPartitionState,
    LogDeleteRecordsResult,
)
from kafka_py.server.replication_quota_manager import ReplicaQuota
from kafka_py.tuning.wakeups import call_with_deferred_wakeups

if TYPE_CHECKING:
    from kafka_py.log.log_manager import LogManager
    from kafka_py.server.alter_isr_manager import AlterIsrManager
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.server.log_dir_failure_channel import LogDirFailureChannel
    from kafka_py.server.metadata_cache import MetadataCache
    from kafka_py.server.quota_factory import QuotaManagers
    from kafka_py.core.utils.kafka_scheduler import Scheduler
    from kafka_py.clients.common.utils.time import Time
    from kafka_py.core.zk.kafka_zk_client import KafkaZkClient
from kafka_py.clients.common.config.config_def import ConfigException
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.shutdownable_thread import FatalExitError, ShutdownableThread

logger = logging.getLogger(__name__)
state_change_logger = logging.getLogger("state.change.logger")

HIGH_WATERMARK_FILENAME = "replication-offset-checkpoint"

INVALID_OFFSET_LAG = -1  # DescribeLogDirsResponse.INVALID_OFFSET_LAG

_InvalidTopicException = Errors.INVALID_TOPIC_EXCEPTION.exception_class
_ReplicaNotAvailableException = Errors.REPLICA_NOT_AVAILABLE.exception_class
ControllerMovedException = Errors.STALE_CONTROLLER_EPOCH.exception_class


def _create_replica_selector(config: KafkaConfig) -> Optional[ReplicaSelector]:
    value = config.get("replica.selector.class")
    try:
        return create_replica_selector(value, dict(config.originals))
    except ValueError as e:
        raise ConfigException("replica.selector.class", value, str(e)) from None


# Node.noNode(): what a replica without an endpoint on the client's listener is shown as
_NO_NODE = Node(-1, "", -1)

__all__ = [
    "ReplicaManager", "LogAppendResult", "LogReadResult", "PartitionResponse", "DeleteRecordsPartitionResult",
    "StopReplicaPartitionState", "ControllerMovedException", "HIGH_WATERMARK_FILENAME",
    "leader_and_isr_partition_states", "leader_and_isr_topic_ids", "build_leader_and_isr_response",
    "stop_replica_partition_states", "build_stop_replica_response",
]


_Online = HostedPartition.Online


# ---------------------------------------------------------------------------- value types


@dataclass(frozen=True, slots=True, init=False)
class LogAppendResult:
    info: LogAppendInfo
    exception: Optional[BaseException] = None

    def __init__(self, info: LogAppendInfo, exception: Optional[BaseException] = None) -> None:
        # One per partition of every produce: the fields are written through their slots'
        # setters, where the frozen dataclass's own __init__ calls object.__setattr__ for each.
        _set_info(self, info)
        _set_exception(self, exception)

    @property
    def error(self) -> Errors:
        return Errors.NONE if self.exception is None else Errors.for_exception(self.exception)


_set_info = LogAppendResult.__dict__["info"].__set__
_set_exception = LogAppendResult.__dict__["exception"].__set__


@dataclass(frozen=True, slots=True)
class LogReadResult:
    """What reading one partition gave, before it is turned into a FetchPartitionData."""

    info: FetchDataInfo
    diverging_epoch: Optional[EpochEndOffset]
    high_watermark: int
    leader_log_start_offset: int
    leader_log_end_offset: int
    follower_log_start_offset: int
    fetch_time_ms: int
    last_stable_offset: Optional[int]
    preferred_read_replica: Optional[int] = None
    exception: Optional[BaseException] = None

    @property
    def error(self) -> Errors:
        return Errors.NONE if self.exception is None else Errors.for_exception(self.exception)

    def to_fetch_partition_data(self, is_reassignment_fetch: bool) -> FetchPartitionData:
        return FetchPartitionData(self.error, self.high_watermark, self.leader_log_start_offset,
                                  self.info.records, self.diverging_epoch, self.last_stable_offset,
                                  self.info.aborted_transactions, self.preferred_read_replica,
                                  is_reassignment_fetch)

    def with_empty_fetch_info(self) -> "LogReadResult":
        return replace(self, info=FetchDataInfo(UNKNOWN_OFFSET_METADATA, MemoryRecords.EMPTY))


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionState:
    """One partition of a StopReplica request, any version."""

    partition_index: int
    leader_epoch: int = LeaderAndIsr.NO_EPOCH
    delete_partition: bool = False


class ActionQueue:
    """core/.../server/ActionQueue.scala: completions of delayed operations deferred until the
    caller no longer holds locks those operations might need (e.g. a group's lock)."""

    def __init__(self) -> None:
        self._queue: deque = deque()

    def add(self, action: Callable[[], None]) -> None:
        self._queue.append(action)

    def try_complete_actions(self) -> None:
        while True:
            try:
                action = self._queue.popleft()
            except IndexError:
                return
            action()


# ---------------------------------------------------------------------------- request views


def _version_of(request: Any, default: int) -> int:
    return int(getattr(type(request), "__version__", getattr(request, "version", default)))


def leader_and_isr_partition_states(request: Any) -> list[LeaderAndIsrPartitionState]:
    """Kafka's LeaderAndIsrRequest.partitionStates(): every partition with its topic name."""

    def convert(topic: str, s: Any) -> LeaderAndIsrPartitionState:
        return LeaderAndIsrPartitionState(
            topic_name=topic, partition_index=int(s.partition_index), controller_epoch=int(s.controller_epoch),
            leader=int(s.leader), leader_epoch=int(s.leader_epoch), isr=tuple(int(i) for i in s.isr),
            zk_version=int(s.zk_version), replicas=tuple(int(r) for r in s.replicas),
            adding_replicas=tuple(int(r) for r in getattr(s, "adding_replicas", ()) or ()),
            removing_replicas=tuple(int(r) for r in getattr(s, "removing_replicas", ()) or ()),
            is_new=bool(getattr(s, "is_new", False)))

    topic_states = getattr(request, "topic_states", None)
    if topic_states is not None:
        return [convert(ts.topic_name, s) for ts in topic_states for s in ts.partition_states]
    return [convert(s.topic_name, s) for s in getattr(request, "ungrouped_partition_states", ())]


def leader_and_isr_topic_ids(request: Any) -> dict[str, Any]:
    ids = {}
    for ts in getattr(request, "topic_states", None) or ():
        topic_id = getattr(ts, "topic_id", None)
        if topic_id is not None:
            ids[ts.topic_name] = topic_id
    return ids


def build_leader_and_isr_response(version: int, error: Errors,
                                  partition_errors: Mapping[TopicPartition, Errors],
                                  topic_ids: Optional[Mapping[str, Any]] = None) -> Any:
    """A LeaderAndIsrResponse of ``version``: per-partition errors (by topic id from v5)."""
    response_cls = response_schema(4, version)
    module = __import__(response_cls.__module__, fromlist=["LeaderAndIsrPartitionError"])
    partition_error_cls = module.LeaderAndIsrPartitionError
    if version < 5:
        errors = tuple(partition_error_cls(topic_name=tp.topic, partition_index=tp.partition,
                                           error_code=err.error_code)
                       for tp, err in partition_errors.items())
        return response_cls(error_code=error.error_code, partition_errors=errors)
    by_topic: dict[str, list] = {}
    for tp, err in partition_errors.items():
        by_topic.setdefault(tp.topic, []).append(
            partition_error_cls(partition_index=tp.partition, error_code=err.error_code))
    ids = topic_ids or {}
    topics = tuple(module.LeaderAndIsrTopicError(topic_id=ids.get(topic, uuid.UUID(int=0)),
                                                 partition_errors=tuple(errs))
                   for topic, errs in by_topic.items())
    return response_cls(error_code=error.error_code, topics=topics)


def stop_replica_partition_states(request: Any) -> dict[TopicPartition, StopReplicaPartitionState]:
    """Kafka's StopReplicaRequest.partitionStates(), for versions 0-3."""
    result: dict[TopicPartition, StopReplicaPartitionState] = {}
    topic_states = getattr(request, "topic_states", None)
    if topic_states is not None:
        for ts in topic_states:
            for s in ts.partition_states:
                result[TopicPartition(ts.topic_name, int(s.partition_index))] = StopReplicaPartitionState(
                    int(s.partition_index), int(s.leader_epoch), bool(s.delete_partition))
        return result
    delete = bool(getattr(request, "delete_partitions", False))
    topics = getattr(request, "topics", None)
    if topics is not None:
        for t in topics:
            for p in t.partition_indexes:
                result[TopicPartition(t.name, int(p))] = StopReplicaPartitionState(int(p), LeaderAndIsr.NO_EPOCH,
                                                                                   delete)
        return result
    for p in getattr(request, "ungrouped_partitions", ()):
        result[TopicPartition(p.topic_name, int(p.partition_index))] = StopReplicaPartitionState(
            int(p.partition_index), LeaderAndIsr.NO_EPOCH, delete)
    return result


def build_stop_replica_response(version: int, error: Errors, partition_errors: Mapping[TopicPartition, Errors]) -> Any:
    response_cls = response_schema(5, version)
    module = __import__(response_cls.__module__, fromlist=["StopReplicaPartitionError"])
    errors = tuple(module.StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition,
                                                    error_code=err.error_code)
                   for tp, err in partition_errors.items())
    return response_cls(error_code=error.error_code, partition_errors=errors)


def _records_size(records: FileRecords | MemoryRecords | memoryview | bytes) -> int:
    # FileRecords.size_in_bytes is a method, MemoryRecords' a property; both have len()
    return len(records)


# ---------------------------------------------------------------------------- ReplicaManager


class ReplicaManager(KafkaMetricsGroup):
    """Hosts this broker's partitions and serves produce, fetch and the controller's requests."""

    def __init__(self, config: KafkaConfig, time: Time, zk_client: Optional[KafkaZkClient], scheduler: Scheduler,
                 log_manager: LogManager, metadata_cache: MetadataCache,
                 log_dir_failure_channel: Optional[LogDirFailureChannel] = None, *,
                 is_shutting_down: Optional[threading.Event] = None,
                 quota_managers: Optional[QuotaManagers] = None,
                 broker_topic_stats: Optional[BrokerTopicStats] = None,
                 alter_isr_manager: Optional[AlterIsrManager] = None,
                 delayed_produce_purgatory: Optional[DelayedOperationPurgatory] = None,
                 delayed_fetch_purgatory: Optional[DelayedOperationPurgatory] = None,
                 delayed_delete_records_purgatory: Optional[DelayedOperationPurgatory] = None,
                 thread_name_prefix: Optional[str] = None) -> None:
        self.config = config
        self.time = time
        self.zk_client = zk_client
        self.scheduler = scheduler
        # KIP-392: where consumers that say their rack read from (None: always the leader)
        self.replica_selector = _create_replica_selector(config)
        self.log_manager = log_manager
        self.metadata_cache = metadata_cache
        self.log_dir_failure_channel = log_dir_failure_channel
        self.is_shutting_down = is_shutting_down if is_shutting_down is not None else threading.Event()
        self.quota_managers = quota_managers
        self.broker_topic_stats = broker_topic_stats if broker_topic_stats is not None else BrokerTopicStats()
        self._register_metrics()
        self.alter_isr_manager = alter_isr_manager
        self.thread_name_prefix = thread_name_prefix
        self.local_broker_id: int = config.broker_id

        self.delayed_produce_purgatory = delayed_produce_purgatory or DelayedOperationPurgatory(
            "Produce", broker_id=config.broker_id,
            purge_interval=config.producer_purgatory_purge_interval_requests)
        self.delayed_fetch_purgatory = delayed_fetch_purgatory or DelayedOperationPurgatory(
            "Fetch", broker_id=config.broker_id,
            purge_interval=config.fetch_purgatory_purge_interval_requests)
        self.delayed_delete_records_purgatory = delayed_delete_records_purgatory or DelayedOperationPurgatory(
            "DeleteRecords", broker_id=config.broker_id,
            purge_interval=config.delete_records_purgatory_purge_interval_requests)
        # ElectLeaders answers waiting for the metadata cache to show the new leaders
        self.delayed_elect_leader_purgatory = DelayedOperationPurgatory("ElectLeader", broker_id=config.broker_id)

        # epoch of the controller that last changed leadership here
        self.controller_epoch = INITIAL_CONTROLLER_EPOCH
        self._all_partitions: dict[TopicPartition, HostedPartitionState] = {}
        self._all_partitions_lock = threading.Lock()
        # serialises LeaderAndIsr, StopReplica and UpdateMetadata, as Kafka's replicaStateChangeLock
        self._replica_state_change_lock = threading.RLock()
        self.replica_fetcher_manager = self.create_replica_fetcher_manager()
        self.replica_alter_log_dirs_manager = self.create_replica_alter_log_dirs_manager()
        self._high_watermark_check_point_thread_started = False
        self._hw_thread_lock = threading.Lock()
        self.high_watermark_checkpoints: dict[str, OffsetCheckpointFile] = {
            os.path.abspath(d): OffsetCheckpointFile(os.path.join(d, HIGH_WATERMARK_FILENAME),
                                                     log_dir_failure_channel)
            for d in log_manager.live_log_dirs}
        # The dirs whose replication-offset-checkpoint may name a partition that is no longer
        # here: every dir until the first write, then the dirs that had logs at the last one.
        self._hw_dirs_with_entries: set[str] = set(self.high_watermark_checkpoints)
        self._action_queue = ActionQueue()
        self._log_dir_failure_handler: Optional[_LogDirFailureHandler] = None
        # topic -> config overrides read ahead for the LeaderAndIsr being handled
        self._prefetched_topic_configs: dict[str, dict[str, str]] = {}
        self._scheduled_tasks: list = []
        self.logger = IdentLogger(logger, f"[ReplicaManager broker={self.local_broker_id}] ")
        self._state_change_ident = f"[Broker id={self.local_broker_id}] "

    # -- IsrChangeListener, as Partition.apply wires it: Kafka's IsrExpandsPerSec,
    # IsrShrinksPerSec and FailedIsrUpdatesPerSec meters

    def mark_expand(self) -> None:
        self.isr_expand_rate.mark()

    def mark_shrink(self) -> None:
        self.isr_shrink_rate.mark()

    def mark_failed(self) -> None:
        self.failed_isr_updates_rate.mark()

    @property
    def isr_expand_count(self) -> int:
        return self.isr_expand_rate.count

    @property
    def isr_shrink_count(self) -> int:
        return self.isr_shrink_rate.count

    @property
    def failed_isr_updates_count(self) -> int:
        return self.failed_isr_updates_rate.count

    def create_replica_fetcher_manager(self):
        # the follower replication throttle (follower.replication.throttled.rate)
        quota = getattr(self.quota_managers, "follower", None) or UNBOUNDED_QUOTA
        return ReplicaFetcherManager(self.config, self, self.time, self.thread_name_prefix, quota)

    def create_replica_alter_log_dirs_manager(self):
        # the quota of replica.alter.log.dirs.io.max.bytes.per.second where one is configured
        quota = getattr(self.quota_managers, "alter_log_dirs", None) or UNBOUNDED_QUOTA
        return ReplicaAlterLogDirsManager(self.config, self, quota, self.time)

    # ------------------------------------------------------------------ lifecycle

    def startup(self) -> None:
        # a follower may lag up to 1.5 x replica.lag.time.max.ms before it leaves the ISR
        period = max(1, self.config.replica_lag_time_max_ms // 2)
        self._scheduled_tasks.append(self.scheduler.schedule("isr-expiration", self._maybe_shrink_isr,
                                                             delay_ms=period, period_ms=period))
        channel = self.log_dir_failure_channel
        if channel is not None and hasattr(channel, "take_next_offline_log_dir"):
            handler = self._log_dir_failure_handler = _LogDirFailureHandler(self, channel)
            handler.start()

    def start_high_watermark_check_point_thread(self) -> None:
        """Scheduled at the first LeaderAndIsr, once every partition of it exists (as Kafka)."""
        with self._hw_thread_lock:
            if self._high_watermark_check_point_thread_started:
                return
            self._high_watermark_check_point_thread_started = True
        interval = self.config.replica_high_watermark_checkpoint_interval_ms
        self._scheduled_tasks.append(self.scheduler.schedule("highwatermark-checkpoint",
                                                             self.checkpoint_high_watermarks,
                                                             delay_ms=interval, period_ms=interval))

    def shutdown(self, checkpoint_hw: bool = True) -> None:
        self.logger.info("Shutting down")
        for name in self._GAUGES:
            self.remove_metric(name)
        for task in self._scheduled_tasks:
            try:
                task.cancel()
            except Exception:  # noqa: BLE001 - the scheduler may already be down
                pass
        self._scheduled_tasks.clear()
        if self._log_dir_failure_handler is not None:
            self._log_dir_failure_handler.shutdown()
        self.replica_fetcher_manager.shutdown()
        self.replica_alter_log_dirs_manager.shutdown()
        self.delayed_fetch_purgatory.shutdown()
        self.delayed_produce_purgatory.shutdown()
        self.delayed_delete_records_purgatory.shutdown()
        self.delayed_elect_leader_purgatory.shutdown()
        if checkpoint_hw:
            self.checkpoint_high_watermarks()
        self.logger.info("Shut down completely")

    # ------------------------------------------------------------------ partitions

    @property
    def all_partitions(self) -> Mapping[TopicPartition, HostedPartitionState]:
        return self._all_partitions

    def get_partition(self, topic_partition: TopicPartition) -> HostedPartitionState:
        return self._all_partitions.get(topic_partition, HostedPartition.NONE)

    def create_partition(self, topic_partition: TopicPartition) -> Partition:
        """For tests: host a fresh partition."""
        partition = Partition.create(topic_partition, self.time, self)
        with self._all_partitions_lock:
            self._all_partitions[topic_partition] = _Online(partition)
        return partition

    def online_partition(self, topic_partition: TopicPartition) -> Optional[Partition]:
        hosted = self._all_partitions.get(topic_partition)
        return hosted.partition if isinstance(hosted, _Online) else None

    _GAUGES = ("LeaderCount", "PartitionCount", "OfflineReplicaCount", "UnderReplicatedPartitions",
               "UnderMinIsrPartitionCount", "AtMinIsrPartitionCount",
               "IsrExpandsPerSec", "IsrShrinksPerSec", "FailedIsrUpdatesPerSec")

    def _register_metrics(self) -> None:
        """Kafka's kafka.server:type=ReplicaManager gauges, read when scraped."""
        self.new_gauge("LeaderCount", lambda: self.leader_count)
        self.new_gauge("PartitionCount", lambda: self.partition_count)
        self.new_gauge("OfflineReplicaCount", lambda: self.offline_partition_count)
        self.new_gauge("UnderReplicatedPartitions", lambda: self.under_replicated_partition_count)
        self.new_gauge("UnderMinIsrPartitionCount",
                       lambda: sum(1 for p in self._leader_partitions() if p.is_under_min_isr))
        self.new_gauge("AtMinIsrPartitionCount", lambda: sum(1 for p in self._leader_partitions() if p.is_at_min_isr))
        self.new_gauge("ReassigningPartitions", lambda: sum(1 for p in self._leader_partitions() if p.is_reassigning))
        self.isr_expand_rate = self.new_meter("IsrExpandsPerSec", "expands")
        self.isr_shrink_rate = self.new_meter("IsrShrinksPerSec", "shrinks")
        self.failed_isr_updates_rate = self.new_meter("FailedIsrUpdatesPerSec", "failedUpdates")

    def _online_partitions(self) -> list[Partition]:
        return [h.partition for h in list(self._all_partitions.values()) if isinstance(h, _Online)]

    def _leader_partitions(self) -> list[Partition]:
        return [p for p in self._online_partitions() if p.leader_log_if_local is not None]

    @property
    def offline_partition_count(self) -> int:
        return sum(1 for h in list(self._all_partitions.values()) if h is HostedPartition.OFFLINE)

    @property
    def leader_count(self) -> int:
        return len(self._leader_partitions())

    @property
    def partition_count(self) -> int:
        return len(self._all_partitions)

    @property
    def under_replicated_partition_count(self) -> int:
        return sum(1 for p in self._leader_partitions() if p.is_under_replicated)

    def fetch_topic_config(self, topic: str) -> Optional[dict[str, str]]:
        """The topic's config overrides in ZooKeeper (/config/topics/<topic>); None without ZooKeeper."""
        if self.zk_client is None:
            return None
        prefetched = self._prefetched_topic_configs.get(topic)
        if prefetched is not None:
            return prefetched
        return self.zk_client.get_entity_configs("topics", topic)

    def _prefetch_topic_configs(self, topics: set[str]) -> None:
        """Read the configs of ``topics`` from ZooKeeper at once, pipelined, for the logs a
        LeaderAndIsr is about to create: Kafka's Partition reads them one partition at a time,
        which for a request creating thousands of partitions is thousands of round trips.
        Called under the replica state change lock; what it read serves that request only."""
        if self.zk_client is None or not topics:
            return
        try:
            self._prefetched_topic_configs = self.zk_client.get_entities_configs("topics", sorted(topics))
        except Exception:  # noqa: BLE001 - each log then reads its topic's config itself
            self.logger.warning("Could not read the configs of %d topics at once", len(topics),
                                exc_info=True)

    def get_partition_or_error(self, topic_partition: TopicPartition) -> tuple[Errors, Optional[Partition]]:
        """(Errors.NONE, partition), or (error, None): KAFKA_STORAGE_ERROR when offline,
        NOT_LEADER_OR_FOLLOWER when the topic exists but is not hosted here (clients then
        refresh metadata), UNKNOWN_TOPIC_OR_PARTITION otherwise."""
        hosted = self._all_partitions.get(topic_partition, HostedPartition.NONE)
        if isinstance(hosted, _Online):
            return Errors.NONE, hosted.partition
        if hosted is HostedPartition.OFFLINE:
            return Errors.KAFKA_STORAGE_ERROR, None
        if self.metadata_cache.contains(topic_partition):
            return Errors.NOT_LEADER_OR_FOLLOWER, None
        return Errors.UNKNOWN_TOPIC_OR_PARTITION, None

    def get_partition_or_exception(self, topic_partition: TopicPartition, expect_leader: bool = True) -> Partition:
        """The hosted partition or the exception of ``get_partition_or_error``.

        ``expect_leader=False`` (Kafka 2.7's flag) answers REPLICA_NOT_AVAILABLE rather than
        NOT_LEADER_OR_FOLLOWER for a known topic this broker does not host.
        """
        error, partition = self.get_partition_or_error(topic_partition)
        if partition is not None:
            return partition
        if error is Errors.KAFKA_STORAGE_ERROR:
            raise KafkaStorageException(f"Partition {topic_partition} is in an offline log directory")
        if error is Errors.NOT_LEADER_OR_FOLLOWER and not expect_leader:
            error = Errors.REPLICA_NOT_AVAILABLE
        raise error.exception_class(f"Error while fetching partition state for {topic_partition}")

    def is_adding_replica(self, topic_partition: TopicPartition, replica_id: int) -> bool:
        partition = self.online_partition(topic_partition)
        return partition is not None and partition.is_adding_replica(replica_id)

    def local_log_or_exception(self, topic_partition: TopicPartition):
        return self.get_partition_or_exception(topic_partition).local_log_or_exception()

    def local_log(self, topic_partition: TopicPartition):
        partition = self.online_partition(topic_partition)
        return None if partition is None else partition.log

    def get_log(self, topic_partition: TopicPartition):
        return self.log_manager.get_log(topic_partition)

    def future_log_exists(self, topic_partition: TopicPartition) -> bool:
        return self.get_partition_or_exception(topic_partition).future_log is not None

    def future_local_log_or_exception(self, topic_partition: TopicPartition):
        return self.get_partition_or_exception(topic_partition).future_local_log_or_exception()

    def get_log_dir(self, topic_partition: TopicPartition) -> Optional[str]:
        log = self.local_log(topic_partition)
        return None if log is None else log.parent_dir

    def get_log_config(self, topic_partition: TopicPartition):
        log = self.local_log(topic_partition)
        return None if log is None else log.config

    def get_log_end_offset(self, topic_partition: TopicPartition) -> Optional[int]:
        partition = self.online_partition(topic_partition)
        log = None if partition is None else partition.leader_log_if_local
        return None if log is None else log.log_end_offset

    def mark_partition_offline(self, topic_partition: TopicPartition) -> None:
        with self._replica_state_change_lock:
            with self._all_partitions_lock:
                self._all_partitions[topic_partition] = HostedPartition.OFFLINE

    # ------------------------------------------------------------------ produce

    def try_complete_actions(self) -> None:
        """Run deferred completions (see ``append_records``); call without holding locks."""
        self._action_queue.try_complete_actions()

    def append_records(self, timeout_ms: int, required_acks: int, internal_topics_allowed: bool, origin: AppendOrigin,
                       entries_per_partition: Mapping[TopicPartition, MemoryRecords],
                       response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
                       delayed_produce_lock: Any = None,
                       record_conversion_stats_callback: Optional[
                           Callable[[dict[TopicPartition, Optional[RecordConversionStats]]], None]] = None,
                       verification_guards: Optional[Mapping[TopicPartition, VerificationGuard]] = None) -> None:
        """Append to the leaders' logs and answer through ``response_callback``: at once for
        acks 0 and 1, once the ISR has the records for acks=-1 (or at ``timeout_ms``).

        ``verification_guards`` (a transactional produce with transaction verification on): the
        guard of each partition whose producer's transaction verification was made; the other
        partitions take transactional batches only of transactions already open on them
        (Log.append_as_leader).

        Waiting fetches and produces on the partitions are woken right after the append. A
        caller passing ``delayed_produce_lock`` holds a lock those operations may need (the
        group coordinator); their wake-up is then queued and the caller runs it with
        ``try_complete_actions`` once it has let go (Kafka defers it that way always).
        """
        if required_acks not in (-1, 0, 1):
            # a client sending this is broken; answer without touching any log
            response_callback({tp: PartitionResponse(Errors.INVALID_REQUIRED_ACKS, -1, NO_TIMESTAMP, -1)
                               for tp in entries_per_partition})
            return

        local_produce_results = self._append_to_local_log(internal_topics_allowed, origin, entries_per_partition,
                                                          required_acks, verification_guards)
        produce_status = {}
        for tp, result in local_produce_results.items():
            info = result.info
            produce_status[tp] = ProducePartitionStatus(
                info.last_offset + 1,
                PartitionResponse(result.error, info.first_offset.message_offset if info.first_offset else -1,
                                  info.log_append_time, info.log_start_offset, list(info.record_errors),
                                  info.error_message))

        def wake_waiting() -> None:
            for tp, result in local_produce_results.items():
                change = result.info.leader_hw_change
                if change is LeaderHwChange.NONE:
                    continue
                key = TopicPartitionOperationKey.from_topic_partition(tp)
                if change is LeaderHwChange.INCREASED:
                    self.delayed_produce_purgatory.check_and_complete(key)
                    self.delayed_fetch_purgatory.check_and_complete(key)
                    self.delayed_delete_records_purgatory.check_and_complete(key)
                else:
                    # the log end moved: follower fetches waiting on it may be satisfied
                    self.delayed_fetch_purgatory.check_and_complete(key)

        if delayed_produce_lock is None:
            call_with_deferred_wakeups(wake_waiting)  # kafka_py/tuning/wakeups.py
        else:
            self._action_queue.add(wake_waiting)

        if record_conversion_stats_callback is not None:
            record_conversion_stats_callback({tp: r.info.record_conversion_stats
                                              for tp, r in local_produce_results.items()})

        if self._delayed_produce_request_required(required_acks, entries_per_partition, local_produce_results):
            if delayed_produce_lock is None and self._replicated_already(produce_status):
                # What DelayedProduce.try_complete would find on its first check (an ISR of one
                # has the records at once): answer without building and watching an operation.
                response_callback({tp: status.response_status for tp, status in produce_status.items()})
                return
            delayed_produce = DelayedProduce(timeout_ms, ProduceMetadata(required_acks, produce_status), self,
                                             response_callback, delayed_produce_lock)
            keys = [TopicPartitionOperationKey.from_topic_partition(tp) for tp in entries_per_partition]
            # it may already be satisfiable (a one-replica ISR is): try before watching
            self.delayed_produce_purgatory.try_complete_else_watch(delayed_produce, keys)
        else:
            response_callback({tp: status.response_status for tp, status in produce_status.items()})

    def _replicated_already(self, produce_status: Mapping[TopicPartition, ProducePartitionStatus]) -> bool:
        """Whether every partition appended without error already has its records in the whole
        ISR (or is settled by an error from that check); if so, sets each answer's error as
        DelayedProduce.try_complete would, else changes nothing."""
        outcomes = []
        for tp, status in produce_status.items():
            if status.response_status.error is not Errors.NONE:
                continue
            error, partition = self.get_partition_or_error(tp)
            if partition is None:
                return False
            has_enough, error = partition.check_enough_replicas_reach_offset(status.required_offset)
            if not has_enough and error is Errors.NONE:
                return False
            outcomes.append((status, error))
        for status, error in outcomes:
            status.response_status.error = error
        return True

    @staticmethod
    def _delayed_produce_request_required(required_acks: int, entries_per_partition: Mapping,
                                          local_produce_results: Mapping[TopicPartition, LogAppendResult]) -> bool:
        # in Kafka's order: the failures are counted only for acks=-1 (a generator's call saved
        # on every acks 0 and 1 produce)
        if required_acks != -1 or not entries_per_partition:
            return False
        failures = sum(1 for r in local_produce_results.values() if r.exception is not None)
        return failures < len(entries_per_partition)

    def _append_to_local_log(self, internal_topics_allowed: bool, origin: AppendOrigin,
                             entries_per_partition: Mapping[TopicPartition, MemoryRecords],
                             required_acks: int,
                             verification_guards: Optional[Mapping[TopicPartition, VerificationGuard]] = None
                             ) -> dict[TopicPartition, LogAppendResult]:
        results: dict[TopicPartition, LogAppendResult] = {}
        stats = self.broker_topic_stats
        for tp, records in entries_per_partition.items():
            if is_internal(tp.topic) and not internal_topics_allowed:
                results[tp] = LogAppendResult(LogAppendInfo.unknown(), _InvalidTopicException(
                    f"Cannot append to internal topic {tp.topic}"))
                continue
            try:
                partition = self.get_partition_or_exception(tp)
            except (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, KafkaStorageException) as e:
                # not hosted here: no meters made for its topic (server/broker_topic_stats.py)
                stats.mark_produce_request(None)
                results[tp] = LogAppendResult(LogAppendInfo.unknown(), e)
                continue
            try:
                info = partition.append_records_to_leader(
                    records, origin, required_acks,
                    None if verification_guards is None else verification_guards.get(tp, VERIFICATION_SENTINEL))
                results[tp] = LogAppendResult(info)
                stats.record_produce(tp.topic, info.num_messages, records.size_in_bytes)
            except (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, RecordTooLargeException,
                    RecordBatchTooLargeException, CorruptRecordException, KafkaStorageException) as e:
                # expected per-partition failures; the client is told and may retry
                stats.mark_produce_request(tp.topic)
                results[tp] = LogAppendResult(LogAppendInfo.unknown(), e)
            except Exception as e:  # noqa: BLE001 - every partition gets an answer
                stats.mark_produce_request(tp.topic)
                stats.mark_failed_produce(tp.topic)
                record_errors = getattr(e, "record_errors", None)
                log_start_offset = self._process_failed_record(tp, e)
                if record_errors is not None:
                    info = LogAppendInfo.unknown(log_start_offset, list(record_errors), str(e))
                else:
                    info = LogAppendInfo.unknown(log_start_offset)
                results[tp] = LogAppendResult(info, e)
        return results

    def _process_failed_record(self, tp: TopicPartition, e: BaseException) -> int:
        partition = self.online_partition(tp)
        log_start_offset = -1 if partition is None else partition.log_start_offset
        if Errors.for_exception(e) is Errors.UNKNOWN_SERVER_ERROR:
            self.logger.error("Error processing append operation on partition %s", tp, exc_info=e)
        else:
            self.logger.debug("Error processing append operation on partition %s: %s", tp, e)
        return log_start_offset

    # ------------------------------------------------------------------ delete records

    def _delete_records_on_local_log(self, offset_per_partition: Mapping[TopicPartition, int]
                                     ) -> dict[TopicPartition, LogDeleteRecordsResult]:
        results = {}
        for tp, requested_offset in offset_per_partition.items():
            if is_internal(tp.topic):
                results[tp] = LogDeleteRecordsResult(-1, -1, _InvalidTopicException(
                    f"Cannot delete records of internal topic {tp.topic}"))
                continue
            try:
                partition = self.get_partition_or_exception(tp)
                results[tp] = partition.delete_records_on_leader(requested_offset)
            except (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, OffsetOutOfRangeException,
                    PolicyViolationException, KafkaStorageException) as e:
                results[tp] = LogDeleteRecordsResult(-1, -1, e)
            except Exception as e:  # noqa: BLE001
                self.logger.error("Error processing delete records operation on partition %s", tp,
                                  exc_info=e)
                results[tp] = LogDeleteRecordsResult(-1, -1, e)
        return results

    def delete_records(self, timeout_ms: int, offset_per_partition: Mapping[TopicPartition, int],
                       response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None]) -> None:
        """Move log start offsets; answer once the low watermarks reach them (or at ``timeout_ms``)."""
        local_results = self._delete_records_on_local_log(offset_per_partition)
        status = {tp: DeleteRecordsPartitionStatus(r.requested_offset,
                                                   DeleteRecordsPartitionResult(tp.partition, r.low_watermark, r.error))
                  for tp, r in local_results.items()}
        required = any(r.exception is None and r.low_watermark < r.requested_offset for r in local_results.values())
        if required:
            delayed = DelayedDeleteRecords(timeout_ms, status, self, response_callback)
            keys = [TopicPartitionOperationKey.from_topic_partition(tp) for tp in offset_per_partition]
            self.delayed_delete_records_purgatory.try_complete_else_watch(delayed, keys)
        else:
            response_callback({tp: s.response_status for tp, s in status.items()})

    # ------------------------------------------------------------------ elect leaders

    @property
    def has_delayed_election_operations(self) -> bool:
        return self.delayed_elect_leader_purgatory.num_delayed() != 0

    def try_complete_election(self, key: TopicPartitionOperationKey) -> None:
        completed = self.delayed_elect_leader_purgatory.check_and_complete(key)
        self.logger.debug("Request key %s unblocked %d ElectLeader.", key, completed)

    def elect_leaders(self, controller: Any, partitions: Iterable[TopicPartition], election_type: Any,
                      response_callback: Callable[[dict[TopicPartition, Any]], None], request_timeout_ms: int) -> None:
        """Ask the controller for preferred or unclean elections; answer (an ApiError per
        partition) once this broker's metadata cache shows the leaders it elected, or when
        ``request_timeout_ms`` has passed (REQUEST_TIMED_OUT for those still waiting)."""
        deadline = self.time.milliseconds() + request_timeout_ms

        def election_callback(results: Mapping[TopicPartition, Any]) -> None:
            expected_leaders = {tp: r for tp, r in results.items() if not isinstance(r, ApiError)}
            failures = {tp: r for tp, r in results.items() if isinstance(r, ApiError)}
            if expected_leaders:
                delayed = DelayedElectLeader(max(0, deadline - self.time.milliseconds()), expected_leaders,
                                             failures, self, response_callback)
                keys = [TopicPartitionOperationKey.from_topic_partition(tp) for tp in expected_leaders]
                self.delayed_elect_leader_purgatory.try_complete_else_watch(delayed, keys)
            else:
                # nothing was elected: nothing to wait for
                response_callback(failures)

        controller.elect_leaders(set(partitions), election_type, election_callback)

    # ------------------------------------------------------------------ list offsets

    def fetch_offset_for_timestamp(self, topic_partition: TopicPartition, timestamp: int,
                                   isolation_level: Optional[int], current_leader_epoch: Optional[int],
                                   fetch_only_from_leader: bool):
        partition = self.get_partition_or_exception(topic_partition)
        return partition.fetch_offset_for_timestamp(timestamp, isolation_level, current_leader_epoch,
                                                    fetch_only_from_leader)

    def legacy_fetch_offsets_for_timestamp(self, topic_partition: TopicPartition, timestamp: int,
                                           max_num_offsets: int, is_from_consumer: bool,
                                           fetch_only_from_leader: bool) -> list[int]:
        partition = self.get_partition_or_exception(topic_partition)
        return partition.legacy_fetch_offsets_for_timestamp(timestamp, max_num_offsets, is_from_consumer,
                                                            fetch_only_from_leader)

    # ------------------------------------------------------------------ fetch

    def fetch_messages(self, timeout_ms: int, replica_id: int, fetch_min_bytes: int, fetch_max_bytes: int,
                       hard_max_bytes_limit: bool, fetch_infos: Sequence[tuple[TopicPartition, PartitionData]],
                       quota: Optional[ReplicaQuota],
                       response_callback: Callable[[list[tuple[TopicPartition, FetchPartitionData]]], None],
                       isolation_level: int = IsolationLevel.READ_UNCOMMITTED,
                       client_metadata: Optional[ClientMetadata] = None) -> None:
        """Read from the local logs; answer at once if there is nothing to wait for (no wait
        asked, enough bytes, an error, a diverging epoch), else wait in the fetch purgatory."""
        quota = quota if quota is not None else UNBOUNDED_QUOTA
        is_from_follower = is_valid_broker_id(replica_id)
        is_from_consumer = not (is_from_follower or replica_id == FUTURE_LOCAL_REPLICA_ID)
        if not is_from_consumer:
            fetch_isolation = FetchIsolation.LOG_END
        elif int(isolation_level) == IsolationLevel.READ_COMMITTED:
            fetch_isolation = FetchIsolation.TXN_COMMITTED
        else:
            fetch_isolation = FetchIsolation.HIGH_WATERMARK
        # followers, and consumers too old to send rack information, read from the leader only;
        # the debugging replica id (kafka-replica-verification.sh) reads any replica, which Kafka
        # 2.8 allows it through the client metadata of its Fetch v12
        fetch_only_from_leader = is_from_follower or (is_from_consumer and client_metadata is None
                                                      and replica_id != DEBUGGING_REPLICA_ID)
        response_callback = self._recording_bytes_out(response_callback, is_from_follower)

        log_read_results = self.read_from_local_log(replica_id, fetch_only_from_leader, fetch_isolation,
                                                    fetch_max_bytes, hard_max_bytes_limit, fetch_infos, quota,
                                                    client_metadata)
        if is_from_follower:
            log_read_results = self._update_follower_fetch_state(replica_id, log_read_results)

        bytes_readable = 0
        error_reading_data = False
        has_diverging_epoch = False
        by_tp: dict[TopicPartition, LogReadResult] = {}
        for tp, result in log_read_results:
            if result.exception is not None:
                error_reading_data = True
            if result.diverging_epoch is not None:
                has_diverging_epoch = True
            bytes_readable += _records_size(result.info.records)
            by_tp[tp] = result

        if (timeout_ms <= 0 or not fetch_infos or bytes_readable >= fetch_min_bytes or error_reading_data
                or has_diverging_epoch):
            response_callback([(tp, result.to_fetch_partition_data(
                is_from_follower and self.is_adding_replica(tp, replica_id))) for tp, result in log_read_results])
            return

        fetch_partition_status = []
        for tp, partition_data in fetch_infos:
            read = by_tp.get(tp)
            if read is not None:
                fetch_partition_status.append((tp, FetchPartitionStatus(read.info.fetch_offset_metadata,
                                                                        partition_data)))
        fetch_metadata = FetchMetadata(fetch_min_bytes, fetch_max_bytes, hard_max_bytes_limit, fetch_only_from_leader,
                                       fetch_isolation, is_from_follower, replica_id, tuple(fetch_partition_status))
        delayed_fetch = DelayedFetch(timeout_ms, fetch_metadata, self, quota, client_metadata, response_callback)
        keys = [TopicPartitionOperationKey.from_topic_partition(tp) for tp, _ in fetch_partition_status]
        # an append may have landed since the read: try once more before watching
        self.delayed_fetch_purgatory.try_complete_else_watch(delayed_fetch, keys)

    def _recording_bytes_out(self, response_callback: Callable[[list[tuple[TopicPartition, FetchPartitionData]]], None],
                             is_from_follower: bool) -> Callable[[list[tuple[TopicPartition, FetchPartitionData]]], None]:
        """``response_callback`` that first counts the records it answers with: BytesOutPerSec for a
        consumer, ReplicationBytesOutPerSec for a follower (Kafka's BrokerTopicStats.updateBytesOut,
        which KafkaApis calls as it builds the fetch response)."""
        stats = self.broker_topic_stats

        def respond(partition_data: list[tuple[TopicPartition, FetchPartitionData]]) -> None:
            for tp, data in partition_data:
                size = _records_size(data.records)
                if size:
                    stats.update_bytes_out(tp.topic, is_from_follower, size, data.is_reassignment_fetch)
            response_callback(partition_data)

        return respond

    def read_from_local_log(self, replica_id: int, fetch_only_from_leader: bool, fetch_isolation: FetchIsolation,
                            fetch_max_bytes: int, hard_max_bytes_limit: bool,
                            read_partition_info: Sequence[tuple[TopicPartition, PartitionData]],
                            quota: Optional[ReplicaQuota] = None,
                            client_metadata: Optional[ClientMetadata] = None
                            ) -> list[tuple[TopicPartition, LogReadResult]]:
        """Read each partition in order within ``fetch_max_bytes`` overall. Until some partition
        returns data, a read may exceed the limits to return one whole batch (unless
        ``hard_max_bytes_limit``), so a batch larger than the limits cannot block a consumer."""
        quota = quota if quota is not None else UNBOUNDED_QUOTA
        limit_bytes = fetch_max_bytes
        min_one_message = not hard_max_bytes_limit
        result = []
        for tp, fetch_info in read_partition_info:
            read_result = self._read(tp, fetch_info, limit_bytes, min_one_message, replica_id, fetch_only_from_leader,
                                     fetch_isolation, hard_max_bytes_limit, quota, client_metadata)
            size = _records_size(read_result.info.records)
            if size > 0:
                min_one_message = False
            limit_bytes = max(0, limit_bytes - size)
            result.append((tp, read_result))
        return result

    def _read(self, tp: TopicPartition, fetch_info: PartitionData, limit_bytes: int, min_one_message: bool,
              replica_id: int, fetch_only_from_leader: bool, fetch_isolation: FetchIsolation,
              hard_max_bytes_limit: bool, quota: ReplicaQuota, client_metadata: Optional[ClientMetadata]
              ) -> LogReadResult:
        adjusted_max_bytes = min(fetch_info.max_bytes, limit_bytes)
        try:
            partition = self.get_partition_or_exception(tp)
        except (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, KafkaStorageException) as e:
            # not hosted here: no meters made for its topic (server/broker_topic_stats.py)
            self.broker_topic_stats.mark_fetch_request(None)
            return self._failed_read(e)
        self.broker_topic_stats.mark_fetch_request(tp.topic)
        try:
            fetch_time_ms = self.time.milliseconds()
            preferred_read_replica = (None if client_metadata is None else
                                      self.find_preferred_read_replica(partition, client_metadata, replica_id,
                                                                       fetch_info.fetch_offset, fetch_time_ms))
            if preferred_read_replica is not None:
                # the consumer is sent elsewhere: no data, just where to go and the offsets
                snapshot = partition.fetch_offset_snapshot(fetch_info.current_leader_epoch, False)
                return LogReadResult(FetchDataInfo(UNKNOWN_OFFSET_METADATA, MemoryRecords.EMPTY), None,
                                     snapshot.high_watermark.message_offset, snapshot.log_start_offset,
                                     snapshot.log_end_offset.message_offset, fetch_info.log_start_offset, -1,
                                     snapshot.last_stable_offset.message_offset, preferred_read_replica)
            read_info = partition.read_records(fetch_info.fetch_offset, fetch_info.current_leader_epoch,
                                               adjusted_max_bytes, fetch_isolation, fetch_only_from_leader,
                                               min_one_message, fetch_info.last_fetched_epoch)
            fetched = read_info.fetched_data
            if self.should_leader_throttle(quota, partition, replica_id):
                fetch_data_info = FetchDataInfo(fetched.fetch_offset_metadata, MemoryRecords.EMPTY)
            elif not hard_max_bytes_limit and fetched.first_entry_incomplete:
                # Fetch v3+: an incomplete batch is dropped; the consumer asks again with more room
                fetch_data_info = FetchDataInfo(fetched.fetch_offset_metadata, MemoryRecords.EMPTY)
            else:
                fetch_data_info = fetched
            return LogReadResult(fetch_data_info, read_info.diverging_epoch, read_info.high_watermark,
                                 read_info.log_start_offset, read_info.log_end_offset, fetch_info.log_start_offset,
                                 fetch_time_ms, read_info.last_stable_offset, preferred_read_replica)
        except (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, UnknownLeaderEpochException,
                FencedLeaderEpochException, _ReplicaNotAvailableException, KafkaStorageException,
                OffsetOutOfRangeException) as e:
            return self._failed_read(e)
        except Exception as e:  # noqa: BLE001 - one bad partition must not fail the whole fetch
            self.broker_topic_stats.mark_failed_fetch(tp.topic)
            self.logger.error("Error processing fetch with max size %d from %s on partition %s: %s",
                              adjusted_max_bytes, describe_replica_id(replica_id), tp, fetch_info, exc_info=e)
            return self._failed_read(e)

    @staticmethod
    def _failed_read(e: BaseException) -> LogReadResult:
        return LogReadResult(FetchDataInfo(UNKNOWN_OFFSET_METADATA, MemoryRecords.EMPTY), None, UNKNOWN_OFFSET,
                             UNKNOWN_OFFSET, UNKNOWN_OFFSET, UNKNOWN_OFFSET, -1, None, None, e)

    def find_preferred_read_replica(self, partition: Partition, client_metadata: ClientMetadata, replica_id: int,
                                    fetch_offset: int, current_time_ms: int) -> Optional[int]:
        """KIP-392: the replica ``replica.selector.class`` would have this consumer read from, when
        it is not the leader (None: read here). Only replicas holding ``fetch_offset`` are offered,
        in the ISR or not; a follower's own fetches never get one."""
        selector = self.replica_selector
        leader_id = partition.leader_replica_id_opt
        if selector is None or leader_id is None or is_valid_broker_id(replica_id):
            return None
        endpoints = self.metadata_cache.get_partition_replica_endpoints(partition.topic_partition,
                                                                       client_metadata.listener_name)
        views = [ReplicaView(endpoints.get(replica.broker_id, _NO_NODE), replica.log_end_offset,
                             current_time_ms - replica.last_caught_up_time_ms)
                 for replica in partition.remote_replicas
                 if replica.log_start_offset <= fetch_offset <= replica.log_end_offset]
        leader = ReplicaView(endpoints.get(leader_id, _NO_NODE), partition.local_log_or_exception().log_end_offset,
                             0)
        selected = selector.select(partition.topic_partition, client_metadata,
                                   PartitionView(frozenset(views + [leader]), leader))
        # the leader is never named in the response, nor a replica the client cannot reach
        if selected is None or selected == leader or selected.endpoint.is_empty():
            return None
        return int(selected.endpoint.id)

    def should_leader_throttle(self, quota: Optional[ReplicaQuota], partition: Partition, replica_id: int) -> bool:
        """Throttle only a replica outside the ISR, so throttling never pushes one out of it."""
        if quota is None or quota is UNBOUNDED_QUOTA:
            return False
        # Kafka's three conditions, the cheapest first: nothing is throttled most of the time
        return (quota.is_throttled(partition.topic_partition) and replica_id not in partition.in_sync_replica_ids
                and quota.is_quota_exceeded())

    def _update_follower_fetch_state(self, follower_id: int, read_results: list[tuple[TopicPartition, LogReadResult]]
                                     ) -> list[tuple[TopicPartition, LogReadResult]]:
        """Record each follower fetch on the leader (moving its HW); a fetch from a broker that
        is not an assigned replica gets no records."""
        updated = []
        for tp, result in read_results:
            if result.exception is None and result.diverging_epoch is None:
                partition = self.online_partition(tp)
                if partition is not None:
                    if not partition.update_follower_fetch_state(follower_id, result.info.fetch_offset_metadata,
                                                                 result.follower_log_start_offset,
                                                                 result.fetch_time_ms, result.leader_log_end_offset):
                        self.logger.warning("Leader %d failed to record follower %d's position %d since the replica "
                                            "is not recognized to be one of the assigned replicas %s for partition %s. "
                                            "Empty records will be returned for this partition.",
                                            self.local_broker_id, follower_id,
                                            result.info.fetch_offset_metadata.message_offset,
                                            list(partition.assignment_state.replicas), tp)
                        result = result.with_empty_fetch_info()
                else:
                    self.logger.warning("While recording the replica LEO, the partition %s hasn't been created.",
                                        tp)
            updated.append((tp, result))
        return updated

    # ------------------------------------------------------------------ OffsetsForLeaderEpoch

    def last_offset_for_leader_epoch(self, requested: Iterable[tuple[TopicPartition, Optional[int], int]]
                                     ) -> dict[TopicPartition, EpochEndOffset]:
        """For each (partition, current leader epoch or None, requested epoch): its end offset."""
        result = {}
        for tp, current_leader_epoch, leader_epoch in requested:
            hosted = self.get_partition(tp)
            if isinstance(hosted, _Online):
                result[tp] = hosted.partition.last_offset_for_leader_epoch(current_leader_epoch, leader_epoch, True)
            elif hosted is HostedPartition.OFFLINE:
                result[tp] = EpochEndOffset(Errors.KAFKA_STORAGE_ERROR, tp.partition)
            elif self.metadata_cache.contains(tp):
                result[tp] = EpochEndOffset(Errors.NOT_LEADER_OR_FOLLOWER, tp.partition)
            else:
                result[tp] = EpochEndOffset(Errors.UNKNOWN_TOPIC_OR_PARTITION, tp.partition)
        return result

    # ------------------------------------------------------------------ controller requests

    def maybe_update_metadata_cache(self, correlation_id: int, update_metadata_request: Any) -> list[TopicPartition]:
        """Apply UpdateMetadata unless it comes from an older controller (ControllerMovedException)."""
        with self._replica_state_change_lock:
            request_epoch = int(update_metadata_request.controller_epoch)
            if request_epoch < self.controller_epoch:
                msg = (f"Received update metadata request with correlation id {correlation_id} from an old "
                       f"controller {update_metadata_request.controller_id} with epoch {request_epoch}. Latest known "
                       f"controller epoch is {self.controller_epoch}")
                state_change_logger.warning("%s%s", self._state_change_ident, msg)
                raise ControllerMovedException(self._state_change_ident + msg)
            deleted = self.metadata_cache.update_metadata(correlation_id, update_metadata_request)
            self.controller_epoch = request_epoch
            return deleted

    def become_leader_or_follower(self, correlation_id: int, leader_and_isr_request: Any,
                                  on_leadership_change: Optional[Callable[[Iterable[Partition],
                                                                           Iterable[Partition]], None]] = None) -> Any:
        """Apply a LeaderAndIsr request; returns the LeaderAndIsrResponse of the request's version.

        Partition errors: STALE_CONTROLLER_EPOCH for a leader epoch not newer than the one
        held, UNKNOWN_TOPIC_OR_PARTITION when this broker is not among the replicas,
        KAFKA_STORAGE_ERROR for offline partitions; a whole request from an older controller
        gets STALE_CONTROLLER_EPOCH.
        """
        request = leader_and_isr_request
        version = _version_of(request, 5)
        start_ms = self.time.milliseconds()
        with self._replica_state_change_lock:
            controller_id = int(request.controller_id)
            request_controller_epoch = int(request.controller_epoch)
            request_partition_states = leader_and_isr_partition_states(request)
            topic_ids = leader_and_isr_topic_ids(request)
            state_change_logger.info("%sHandling LeaderAndIsr request correlationId %d from controller %d for %d "
                                     "partitions", self._state_change_ident, correlation_id, controller_id,
                                     len(request_partition_states))
            if request_controller_epoch < self.controller_epoch:
                state_change_logger.warning(
                    "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d since its controller "
                    "epoch %d is old. Latest known controller epoch is %d", self._state_change_ident, controller_id,
                    correlation_id, request_controller_epoch, self.controller_epoch)
                return build_leader_and_isr_response(
                    version, Errors.STALE_CONTROLLER_EPOCH,
                    {TopicPartition(s.topic_name, s.partition_index): Errors.STALE_CONTROLLER_EPOCH
                     for s in request_partition_states}, topic_ids)

            response_map: dict[TopicPartition, Errors] = {}
            self.controller_epoch = request_controller_epoch
            partition_states: dict[Partition, LeaderAndIsrPartitionState] = {}
            for state in request_partition_states:
                tp = TopicPartition(state.topic_name, state.partition_index)
                hosted = self.get_partition(tp)
                if hosted is HostedPartition.OFFLINE:
                    state_change_logger.warning(
                        "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d epoch %d for "
                        "partition %s as the local replica for the partition is in an offline log directory",
                        self._state_change_ident, controller_id, correlation_id, self.controller_epoch, tp)
                    response_map[tp] = Errors.KAFKA_STORAGE_ERROR
                    continue
                if isinstance(hosted, _Online):
                    partition = hosted.partition
                else:
                    with self._all_partitions_lock:
                        existing = self._all_partitions.get(tp)
                        if isinstance(existing, _Online):
                            partition = existing.partition
                        else:
                            partition = Partition.create(tp, self.time, self)
                            self._all_partitions[tp] = _Online(partition)

                current_leader_epoch = partition.get_leader_epoch()
                request_leader_epoch = state.leader_epoch
                if not partition.check_or_set_topic_id(topic_ids.get(tp.topic)):
                    response_map[tp] = Errors.INCONSISTENT_TOPIC_ID
                elif request_leader_epoch > current_leader_epoch:
                    if self.local_broker_id in state.replicas:
                        partition_states[partition] = state
                    else:
                        state_change_logger.warning(
                            "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d epoch %d for "
                            "partition %s as itself is not in assigned replica list %s", self._state_change_ident,
                            controller_id, correlation_id, self.controller_epoch, tp, list(state.replicas))
                        response_map[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    # an equal epoch is a repeat, a smaller one a stale controller's view
                    state_change_logger.info(
                        "%sIgnoring LeaderAndIsr request from controller %d with correlation id %d epoch %d for "
                        "partition %s since its associated leader epoch %d is %s the current leader epoch %d",
                        self._state_change_ident, controller_id, correlation_id, self.controller_epoch, tp,
                        request_leader_epoch, "smaller than" if request_leader_epoch < current_leader_epoch
                        else "the same as", current_leader_epoch)
                    response_map[tp] = Errors.STALE_CONTROLLER_EPOCH

            to_be_leader = {p: s for p, s in partition_states.items() if s.leader == self.local_broker_id}
            to_be_follower = {p: s for p, s in partition_states.items() if p not in to_be_leader}
            hw_checkpoints = LazyOffsetCheckpoints(self.high_watermark_checkpoints)
            self._prefetch_topic_configs({p.topic for p in partition_states if p.log is None})
            try:
                # the leader epoch checkpoints this request changes are written together at the end
                with deferred_flushes():
                    become_leader = (self._make_leaders(controller_id, self.controller_epoch, to_be_leader,
                                                        correlation_id, response_map, hw_checkpoints)
                                     if to_be_leader else set())
                    become_follower = (self._make_followers(controller_id, self.controller_epoch, to_be_follower,
                                                            correlation_id, response_map, hw_checkpoints)
                                       if to_be_follower else set())
            finally:
                self._prefetched_topic_configs = {}

            for state in request_partition_states:
                tp = TopicPartition(state.topic_name, state.partition_index)
                # a Partition created above whose log could not be created (disk failure) is offline
                if self.local_log(tp) is None:
                    self.mark_partition_offline(tp)

            # only now are all partitions in place, so checkpoints cannot miss any
            self.start_high_watermark_check_point_thread()
            self.maybe_add_log_dir_fetchers(partition_states, hw_checkpoints)
            self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
            self.replica_alter_log_dirs_manager.shutdown_idle_fetcher_threads()
            if on_leadership_change is not None:
                on_leadership_change(become_leader, become_follower)
            response = build_leader_and_isr_response(version, Errors.NONE, response_map, topic_ids)
        state_change_logger.info("%sFinished LeaderAndIsr request in %dms correlationId %d from controller %d for %d "
                                 "partitions", self._state_change_ident, self.time.milliseconds() - start_ms,
                                 correlation_id, controller_id, len(request_partition_states))
        return response

    def _make_leaders(self, controller_id: int, controller_epoch: int,
                      partition_states: Mapping[Partition, LeaderAndIsrPartitionState], correlation_id: int,
                      response_map: dict[TopicPartition, Errors], hw_checkpoints) -> set[Partition]:
        for partition in partition_states:
            response_map[partition.topic_partition] = Errors.NONE
        made = set()
        self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in partition_states})
        state_change_logger.info("%sStopped fetchers as part of LeaderAndIsr request correlationId %d from controller "
                                 "%d epoch %d as part of the become-leader transition for %d partitions",
                                 self._state_change_ident, correlation_id, controller_id, controller_epoch,
                                 len(partition_states))
        for partition, state in partition_states.items():
            try:
                if partition.make_leader(state, hw_checkpoints):
                    made.add(partition)
                else:
                    state_change_logger.info(
                        "%sSkipped the become-leader state change with correlation id %d from controller %d epoch "
                        "%d for partition %s since it is already the leader for the partition.",
                        self._state_change_ident, correlation_id, controller_id, controller_epoch,
                        partition.topic_partition)
            except KafkaStorageException as e:
                state_change_logger.error(
                    "%sSkipped the become-leader state change with correlation id %d from controller %d epoch %d for "
                    "partition %s since the replica for the partition is offline due to disk error %s",
                    self._state_change_ident, correlation_id, controller_id, controller_epoch,
                    partition.topic_partition, e)
                response_map[partition.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        return made

    def _make_followers(self, controller_id: int, controller_epoch: int,
                        partition_states: Mapping[Partition, LeaderAndIsrPartitionState], correlation_id: int,
                        response_map: dict[TopicPartition, Errors], hw_checkpoints) -> set[Partition]:
        for partition in partition_states:
            response_map[partition.topic_partition] = Errors.NONE
        made = set()
        for partition, state in partition_states.items():
            new_leader = state.leader
            try:
                if self.metadata_cache.get_alive_broker(new_leader) is not None:
                    if partition.make_follower(state, hw_checkpoints):
                        made.add(partition)
                    else:
                        state_change_logger.info(
                            "%sSkipped the become-follower state change with correlation id %d from controller %d "
                            "epoch %d for partition %s since the new leader %d is the same as the old leader",
                            self._state_change_ident, correlation_id, controller_id, controller_epoch,
                            partition.topic_partition, new_leader)
                else:
                    state_change_logger.error(
                        "%sReceived LeaderAndIsrRequest with correlation id %d from controller %d epoch %d for "
                        "partition %s but cannot become follower since the new leader %d is unavailable.",
                        self._state_change_ident, correlation_id, controller_id, controller_epoch,
                        partition.topic_partition, new_leader)
                    # the log must exist all the same, or its HW would drop out of the checkpoint (KAFKA-1647)
                    partition.create_log_if_not_exists(state.is_new, False, hw_checkpoints)
            except KafkaStorageException as e:
                state_change_logger.error(
                    "%sSkipped the become-follower state change with correlation id %d from controller %d epoch %d "
                    "for partition %s with leader %d since the replica for the partition is offline due to disk "
                    "error %s", self._state_change_ident, correlation_id, controller_id, controller_epoch,
                    partition.topic_partition, new_leader, e)
                response_map[partition.topic_partition] = Errors.KAFKA_STORAGE_ERROR

        self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in made})
        for partition in made:
            self._complete_delayed_fetch_or_produce_requests(partition.topic_partition)
        if not self.is_shutting_down.is_set() and made:
            fetch_states = {}
            listener = self.config.inter_broker_listener_name
            for partition in made:
                leader_id = partition.leader_replica_id_opt
                leader = None if leader_id is None else self.metadata_cache.get_alive_broker(leader_id)
                if leader is None:
                    continue
                try:
                    end_point = leader.broker_end_point(listener) if listener is not None else None
                except Exception:  # noqa: BLE001 - no such listener: the fetcher cannot reach it anyway
                    end_point = None
                log = partition.local_log_or_exception()
                fetch_states[partition.topic_partition] = InitialFetchState(
                    end_point, partition.get_leader_epoch(), self.initial_fetch_offset(log))
            self.replica_fetcher_manager.add_fetcher_for_partitions(fetch_states)
        return made

    @staticmethod
    def initial_fetch_offset(log) -> int:
        """Truncation happens on fetch (IBP 2.7+): start at the log end when epochs are known."""
        return log.log_end_offset if log.latest_epoch is not None else log.high_watermark

    def _complete_delayed_fetch_or_produce_requests(self, topic_partition: TopicPartition) -> None:
        key = TopicPartitionOperationKey.from_topic_partition(topic_partition)
        self.delayed_produce_purgatory.check_and_complete(key)
        self.delayed_fetch_purgatory.check_and_complete(key)

    def stop_replicas(self, correlation_id: int, controller_id: int, controller_epoch: int, broker_epoch: int,
                      partition_states: Mapping[TopicPartition, StopReplicaPartitionState]
                      ) -> tuple[dict[TopicPartition, Errors], Errors]:
        """Stop hosting partitions (deleting their logs where ``delete_partition``)."""
        with self._replica_state_change_lock:
            state_change_logger.info("%sHandling StopReplica request correlationId %d from controller %d for %d "
                                     "partitions", self._state_change_ident, correlation_id, controller_id,
                                     len(partition_states))
            response_map: dict[TopicPartition, Errors] = {}
            if controller_epoch < self.controller_epoch:
                state_change_logger.warning(
                    "%sIgnoring StopReplica request from controller %d with correlation id %d since its controller "
                    "epoch %d is old. Latest known controller epoch is %d", self._state_change_ident, controller_id,
                    correlation_id, controller_epoch, self.controller_epoch)
                return response_map, Errors.STALE_CONTROLLER_EPOCH
            self.controller_epoch = controller_epoch
            stopped: dict[TopicPartition, bool] = {}
            for tp, state in partition_states.items():
                delete_partition = bool(state.delete_partition)
                hosted = self.get_partition(tp)
                if hosted is HostedPartition.OFFLINE:
                    state_change_logger.warning(
                        "%sIgnoring StopReplica request (delete=%s) from controller %d with correlation id %d epoch %d "
                        "for partition %s as the local replica for the partition is in an offline log directory",
                        self._state_change_ident, delete_partition, controller_id, correlation_id, controller_epoch, tp)
                    response_map[tp] = Errors.KAFKA_STORAGE_ERROR
                elif isinstance(hosted, _Online):
                    current_leader_epoch = hosted.partition.get_leader_epoch()
                    request_leader_epoch = state.leader_epoch
                    # Deletion does not bump the epoch, hence its sentinel; old requests carry none.
                    # The current epoch itself is accepted, as Kafka does since KAFKA-13972 (3.5):
                    # the adding replicas of a cancelled reassignment are stopped without an epoch
                    # bump (they are not in the ISR), and 2.8.2, refusing that, left them stray.
                    if (request_leader_epoch in (LeaderAndIsr.EPOCH_DURING_DELETE, LeaderAndIsr.NO_EPOCH)
                            or request_leader_epoch >= current_leader_epoch):
                        stopped[tp] = delete_partition
                        response_map[tp] = Errors.NONE
                    else:
                        state_change_logger.warning(
                            "%sIgnoring StopReplica request (delete=%s) from controller %d with correlation id %d "
                            "epoch %d for partition %s since its associated leader epoch %d is smaller than the "
                            "current leader epoch %d", self._state_change_ident, delete_partition, controller_id,
                            correlation_id, controller_epoch, tp, request_leader_epoch, current_leader_epoch)
                        response_map[tp] = Errors.FENCED_LEADER_EPOCH
                else:
                    # not hosted, but a log may be left over from before a restart: remove it too
                    stopped[tp] = delete_partition
                    response_map[tp] = Errors.NONE

            for tp, e in self._stop_partitions(stopped).items():
                if isinstance(e, KafkaStorageException):
                    state_change_logger.error(
                        "%sIgnoring StopReplica request (delete=true) from controller %d with correlation id %d epoch "
                        "%d for partition %s as the local replica for the partition is in an offline log directory",
                        self._state_change_ident, controller_id, correlation_id, controller_epoch, tp)
                else:
                    state_change_logger.error(
                        "%sIgnoring StopReplica request (delete=true) from controller %d with correlation id %d epoch "
                        "%d for partition %s due to an unexpected %s exception: %s", self._state_change_ident,
                        controller_id, correlation_id, controller_epoch, tp, type(e).__name__, e)
                response_map[tp] = Errors.for_exception(e)
            return response_map, Errors.NONE

    def _stop_partitions(self, partitions_to_stop: Mapping[TopicPartition, bool]
                         ) -> dict[TopicPartition, BaseException]:
        # fetchers first: they look partitions up through this manager
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(partitions_to_stop))
        self.replica_alter_log_dirs_manager.remove_fetcher_for_partitions(set(partitions_to_stop))
        partitions_to_delete = []
        for tp, should_delete in partitions_to_stop.items():
            if should_delete:
                with self._all_partitions_lock:
                    hosted = self._all_partitions.get(tp)
                    if isinstance(hosted, _Online):
                        del self._all_partitions[tp]
                    else:
                        hosted = None
                if hosted is not None:
                    # logs are deleted together below, so the directories are checkpointed once
                    hosted.partition.delete()
                partitions_to_delete.append(tp)
            # operations waiting on a partition we no longer lead are answered now, not at timeout
            self._complete_delayed_fetch_or_produce_requests(tp)
        errors: dict[TopicPartition, BaseException] = {}
        if partitions_to_delete:
            self.log_manager.async_delete_partitions(partitions_to_delete,
                                                     lambda tp, e: errors.__setitem__(tp, e))
            # A topic this broker no longer hosts at all takes its BrokerTopicMetrics with it.
            with self._all_partitions_lock:
                hosted_topics = {p.topic for p in self._all_partitions}
            for topic in {tp.topic for tp in partitions_to_delete} - hosted_topics:
                self.broker_topic_stats.remove_metrics(topic)
        return errors

    # ------------------------------------------------------------------ ISR expiry

    def _maybe_shrink_isr(self) -> None:
        for tp in list(self._all_partitions):
            partition = self.online_partition(tp)
            if partition is not None:
                partition.maybe_shrink_isr()

    # ------------------------------------------------------------------ log dirs

    def maybe_add_log_dir_fetchers(self, partitions: Iterable[Partition], offset_checkpoints) -> None:
        """Resume the moves of partitions that have a future log (loaded at startup, or created
        before the partition was): attach it and have a ReplicaAlterLogDirsThread copy it."""
        future_replicas_and_initial_offset = {}
        for partition in partitions:
            tp = partition.topic_partition
            log = partition.log
            if log is None or self.log_manager.get_log(tp, is_future=True) is None:
                continue
            partition.create_log_if_not_exists(False, True, offset_checkpoints)
            # no clean while the segments are copied
            self.log_manager.pause_cleaning_for_move(tp)
            future_replicas_and_initial_offset[tp] = InitialFetchState(
                local_broker_end_point(self.local_broker_id), partition.get_leader_epoch(), log.high_watermark)
        if future_replicas_and_initial_offset:
            self.replica_alter_log_dirs_manager.add_fetcher_for_partitions(future_replicas_and_initial_offset)

    def alter_replica_log_dirs(self, partition_dirs: Mapping[TopicPartition, str]) -> dict[TopicPartition, Errors]:
        """AlterReplicaLogDirs: move each replica to its dir (a future log there, copied by a
        ReplicaAlterLogDirsThread), or remember the dir for a replica not created yet.

        Errors: LOG_DIR_NOT_FOUND for a dir not in ``log.dirs``, KAFKA_STORAGE_ERROR for an
        offline dir or partition (or while any dir is offline, as no future log is created
        then), REPLICA_NOT_AVAILABLE for a replica this broker does not host (yet),
        INVALID_TOPIC_EXCEPTION for a name too long for a future dir's name."""
        result: dict[TopicPartition, Errors] = {}
        with self._replica_state_change_lock:
            for tp, destination_dir in partition_dirs.items():
                try:
                    if len(log_files.log_future_dir_name(tp)) > 255:
                        raise InvalidTopicException("The topic name is too long.")
                    if not os.path.isabs(destination_dir):
                        # Kafka compares the path as given with the absolute paths of log.dirs
                        raise LogDirNotFoundException(f"Log dir {destination_dir} is not found in the config.")
                    destination_dir = os.path.abspath(destination_dir)
                    if not self.log_manager.is_log_dir_online(destination_dir):
                        raise KafkaStorageException(f"Log directory {destination_dir} is offline")
                    hosted = self.get_partition(tp)
                    if isinstance(hosted, _Online):
                        # a move under way to another dir is given up first
                        if hosted.partition.future_replica_dir_changed(destination_dir):
                            self.replica_alter_log_dirs_manager.remove_fetcher_for_partitions({tp})
                            hosted.partition.remove_future_local_replica()
                    elif hosted is HostedPartition.OFFLINE:
                        raise KafkaStorageException(f"Partition {tp} is offline")
                    # a replica not created yet will be created there (answered REPLICA_NOT_AVAILABLE below)
                    self.log_manager.maybe_update_preferred_log_dir(tp, destination_dir)
                    partition = self.get_partition_or_exception(tp)
                    partition.local_log_or_exception()
                    hw_checkpoints = LazyOffsetCheckpoints(self.high_watermark_checkpoints)
                    if partition.maybe_create_future_replica(destination_dir, hw_checkpoints):
                        future_log = self.future_local_log_or_exception(tp)
                        self.log_manager.pause_cleaning_for_move(tp)
                        self.replica_alter_log_dirs_manager.add_fetcher_for_partitions({tp: InitialFetchState(
                            local_broker_end_point(self.local_broker_id), partition.get_leader_epoch(),
                            future_log.high_watermark)})
                    result[tp] = Errors.NONE
                except (InvalidTopicException, LogDirNotFoundException, _ReplicaNotAvailableException,
                        KafkaStorageException) as e:
                    self.logger.warning("Unable to alter log dirs for %s: %s", tp, e)
                    result[tp] = Errors.for_exception(e)
                except NotLeaderOrFollowerException as e:
                    # a known partition without a replica here: REPLICA_NOT_AVAILABLE, as Kafka kept it
                    self.logger.warning("Unable to alter log dirs for %s: %s", tp, e)
                    result[tp] = Errors.REPLICA_NOT_AVAILABLE
                except UnknownTopicOrPartitionException as e:
                    self.logger.warning("Unable to alter log dirs for %s: %s", tp, e)
                    result[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                except Exception as e:  # noqa: BLE001 - every partition gets an answer
                    self.logger.error("Error while changing replica dir for partition %s", tp,
                                      exc_info=e)
                    result[tp] = Errors.for_exception(e)
        return result

    def describe_log_dirs(self, partitions: Optional[set[TopicPartition]]) -> list[dict[str, Any]]:
        """DescribeLogDirs: for every dir of ``log.dirs``, its error and the size and offset lag
        of each current and future log of ``partitions`` (None: all) in it, as the response's
        DescribeLogDirsResult values."""
        logs_by_dir: dict[str, list] = {}
        for log in self.log_manager.all_logs():
            logs_by_dir.setdefault(log.parent_dir, []).append(log)
        results = []
        seen = set()
        for configured in self.log_manager.log_dirs:
            absolute_path = os.path.abspath(configured)
            if absolute_path in seen:
                continue
            seen.add(absolute_path)
            try:
                if not self.log_manager.is_log_dir_online(absolute_path):
                    raise KafkaStorageException(f"Log directory {absolute_path} is offline")
                by_topic: dict[str, list[dict[str, Any]]] = {}
                for log in logs_by_dir.get(absolute_path, ()):
                    tp = log.topic_partition
                    entries = by_topic.setdefault(tp.topic, [])
                    if partitions is not None and tp not in partitions:
                        continue
                    entries.append({"partition_index": tp.partition, "partition_size": log.size,
                                    "offset_lag": self.get_log_end_offset_lag(tp, log.log_end_offset, log.is_future),
                                    "is_future_key": log.is_future})
                topics: list[dict[str, Any]] = [
                    {"name": topic, "partitions": sorted(parts, key=lambda e: e["partition_index"])}
                    for topic, parts in sorted(by_topic.items())]
                results.append({"error_code": Errors.NONE, "log_dir": absolute_path, "topics": topics})
            except KafkaStorageException as e:
                self.logger.warning("Unable to describe replica dirs for %s: %s", absolute_path, e)
                results.append({"error_code": Errors.KAFKA_STORAGE_ERROR, "log_dir": absolute_path, "topics": []})
            except Exception as e:  # noqa: BLE001 - the dir is answered with the error
                self.logger.error("Error while describing replica in dir %s", absolute_path,
                                  exc_info=e)
                results.append({"error_code": Errors.for_exception(e), "log_dir": absolute_path, "topics": []})
        return results

    def get_log_end_offset_lag(self, topic_partition: TopicPartition, log_end_offset: int, is_future: bool) -> int:
        """How far a log trails: a future log behind the current log's end, a current log
        behind the high watermark; -1 when the partition has no online log here."""
        log = self.local_log(topic_partition)
        if log is None:
            return INVALID_OFFSET_LAG
        if is_future:
            return log.log_end_offset - log_end_offset
        return max(log.high_watermark - log_end_offset, 0)

    # ------------------------------------------------------------------ checkpoints and failures

    def checkpoint_high_watermarks(self) -> None:
        """Write every hosted log's high watermark to replication-offset-checkpoint in its log dir.

        Kafka rewrites only the dirs that have logs now, so the last partition to leave a dir
        (deleted, moved to another broker or dir) stayed in that dir's file; here a dir that
        had entries is written once more, empty."""
        by_dir: dict[str, dict[TopicPartition, int]] = {}
        for partition in self._online_partitions():
            for log in (partition.log, partition.future_log):
                if log is not None:
                    by_dir.setdefault(log.parent_dir, {})[log.topic_partition] = log.high_watermark
        for log_dir in self._hw_dirs_with_entries - by_dir.keys():
            by_dir[log_dir] = {}
        self._hw_dirs_with_entries = {d for d, hws in by_dir.items() if hws}
        for log_dir, hws in by_dir.items():
            checkpoint = self.high_watermark_checkpoints.get(log_dir)
            if checkpoint is None:
                continue
            try:
                checkpoint.write(hws)
            except KafkaStorageException as e:
                self.logger.error("Error while writing to highwatermark file in directory %s: %s",
                                  log_dir, e)

    def handle_log_dir_failure(self, dir: str, send_zk_notification: bool = True) -> None:
        """Take every partition with a log in ``dir`` offline, answer what waits on them, then
        tell the log manager (which halts the broker when no dir is left) and the controller."""
        dir = os.path.abspath(dir)
        if not self.log_manager.is_log_dir_online(dir):
            return
        self.logger.warning("Stopping serving replicas in dir %s", dir)
        with self._replica_state_change_lock:
            online = self._online_partitions()
            new_offline = {p.topic_partition for p in online if p.log is not None and p.log.parent_dir == dir}
            with_offline_future = [p for p in online if p.future_log is not None and p.future_log.parent_dir == dir]
            self.replica_fetcher_manager.remove_fetcher_for_partitions(new_offline)
            self.replica_alter_log_dirs_manager.remove_fetcher_for_partitions(
                new_offline | {p.topic_partition for p in with_offline_future})
            for partition in with_offline_future:
                partition.remove_future_local_replica(delete_from_log_dir=False)
            for tp in new_offline:
                self.mark_partition_offline(tp)
            self.high_watermark_checkpoints = {d: c for d, c in self.high_watermark_checkpoints.items() if d != dir}
            self.logger.warning("Broker %d stopped fetcher for partitions %s and stopped moving logs for partitions %s "
                                "because they are in the failed log directory %s.", self.local_broker_id,
                                ",".join(sorted(map(str, new_offline))),
                                ",".join(str(p.topic_partition) for p in with_offline_future), dir)
        # Produces and fetches parked on these partitions would otherwise wait out their
        # timeouts (or, were the broker to halt, never be answered): now they find the
        # partitions offline and complete with KAFKA_STORAGE_ERROR. Outside the state-change
        # lock, as every other completion, since their callbacks send responses.
        for tp in sorted(new_offline, key=str):
            self._complete_delayed_fetch_or_produce_requests(tp)
            self.delayed_delete_records_purgatory.check_and_complete(
                TopicPartitionOperationKey.from_topic_partition(tp))
        self.log_manager.handle_log_dir_failure(dir)
        if send_zk_notification and self.zk_client is not None:
            try:
                # /log_dir_event_notification: the controller asks this broker about each of
                # its replicas and marks those answering KAFKA_STORAGE_ERROR offline
                self.zk_client.propagate_log_dir_event(self.local_broker_id)
            except Exception:  # noqa: BLE001 - the dir is offline here whatever ZooKeeper says
                self.logger.error("Error while telling the controller about the failed log dir %s",
                                  dir, exc_info=True)
        self.logger.warning("Stopped serving replicas in dir %s", dir)


class _LogDirFailureHandler:
    """Kafka's LogDirFailureHandler thread: takes failed log dirs off the LogDirFailureChannel
    and handles them, one at a time. When the last dir fails the log manager halts the broker
    (Exit.halt), which ends this thread with FatalExitError."""

    def __init__(self, replica_manager: ReplicaManager, channel: Any) -> None:
        manager = replica_manager

        class Handler(ShutdownableThread):
            def do_work(self) -> None:
                # waits until a dir fails or initiate_shutdown wakes it
                new_offline_log_dir = channel.take_next_offline_log_dir()
                if new_offline_log_dir is None:
                    return
                try:
                    manager.handle_log_dir_failure(new_offline_log_dir)
                except FatalExitError:
                    raise  # the halt: this thread is done
                except Exception:  # noqa: BLE001 - the thread must live on for the next failed dir
                    manager.logger.error("Error while handling the failure of log dir %s",
                                         new_offline_log_dir, exc_info=True)

            def initiate_shutdown(self) -> bool:
                initiated = super().initiate_shutdown()
                channel.wakeup()
                return initiated

        self._thread = Handler("LogDirFailureHandler", is_interruptible=False, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def initiate_shutdown(self) -> None:
        self._thread.initiate_shutdown()

    def shutdown(self) -> None:
        self._thread.initiate_shutdown()
        # a halt procedure may stop the broker from this very thread; it cannot wait for itself
        if threading.current_thread() is not self._thread:
            self._thread.await_shutdown()
