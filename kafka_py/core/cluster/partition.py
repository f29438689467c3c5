"""Port of core/src/main/scala/kafka/cluster/Partition.scala (with Replica.scala).

A Partition is this broker's view of one partition it hosts: the local log, who leads and
in which epoch, the assignment, the ISR, and (when this broker leads) what every follower
has fetched so far. The ReplicaManager creates one per partition named in a LeaderAndIsr
request and routes produce, fetch, ListOffsets and DeleteRecords through it.

Locking follows Kafka. ``_leader_isr_update_lock`` is a reentrant read-write lock: appends,
reads and high-watermark moves take it shared; leadership and ISR changes take it
exclusive, so an append never lands in a log whose leadership is being taken away. Under it
the Log takes its own lock (order: partition, then log). Delayed operations are completed
only after the lock is released (``_try_complete_delayed_requests``), because completing a
delayed fetch reads this very partition.

As leader, a partition tracks its followers (``update_follower_fetch_state``, called for
their fetches) and keeps the ISR: followers that stop catching up leave it
(``maybe_shrink_isr``), caught-up ones join it again (``_maybe_expand_isr``), each change
proposed to the controller through the broker's AlterIsr manager
(server/alter_isr_manager.py) and committed only when its answer comes. The high watermark
is the smallest log end offset of the ISR; with a single replica it equals the log end
offset right after each append. As follower, it appends what its fetcher brings and
truncates when told to.
"""
from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence

from kafka_py.core.api.leader_and_isr import INITIAL_CONTROLLER_EPOCH, LeaderAndIsr
from kafka_py.clients.common.errors import (
    ApiException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    PolicyViolationException,
)
from kafka_py.clients.common.isolation_level import IsolationLevel
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log import Log, UnexpectedAppendOffsetException
from kafka_py.log.log_append_info import (
    LeaderHwChange,
    LogAppendInfo,
    LogOffsetSnapshot,
    LogReadInfo,
    LogStartOffsetIncrementReason,
)
from kafka_py.log.log_files import UNKNOWN_OFFSET
from kafka_py.log.producer_state_manager import AppendOrigin
from kafka_py.log.verification_guard import VerificationGuard
from kafka_py.log.log_offset_metadata import (
    UNKNOWN_OFFSET_METADATA,
    FetchDataInfo,
    FetchIsolation,
    LogOffsetMetadata,
)
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    LeaderAndIsrPartitionState,
)
from kafka_py.clients.common.record.default_record_batch import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from kafka_py.clients.common.record.file_records import TimestampAndOffset
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.alter_isr_manager import AlterIsrItem
from kafka_py.server.delayed_operation_key import TopicPartitionOperationKey
from kafka_py.server.replica_manager_types import LogDeleteRecordsResult
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.core.utils.reentrant_read_write_lock import ReentrantReadWriteLock

logger = logging.getLogger(__name__)
state_change_logger = logging.getLogger("state.change.logger")

DELETE_RECORDS_HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK


def _error_class(error: Errors) -> type[ApiException]:
    """The exception class an Errors member raises (made on demand for those the broker
    does not define itself), so that it can be both raised and caught."""
    return error.exception_class


NotEnoughReplicasException = _error_class(Errors.NOT_ENOUGH_REPLICAS)
FencedLeaderEpochException = _error_class(Errors.FENCED_LEADER_EPOCH)
UnknownLeaderEpochException = _error_class(Errors.UNKNOWN_LEADER_EPOCH)
OffsetNotAvailableException = _error_class(Errors.OFFSET_NOT_AVAILABLE)


# ---------------------------------------------------------------------------- value types


# Assignment: SimpleAssignmentState / OngoingReassignmentState


@dataclass(frozen=True, slots=True)
class SimpleAssignmentState:
    replicas: tuple[int, ...] = ()

    @property
    def replication_factor(self) -> int:
        return len(self.replicas)

    def is_adding_replica(self, broker_id: int) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class OngoingReassignmentState:
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    replicas: tuple[int, ...]

    @property
    def replication_factor(self) -> int:
        # the size of the assignment before the reassignment started
        return len([r for r in self.replicas if r not in self.adding_replicas])

    def is_adding_replica(self, broker_id: int) -> bool:
        return broker_id in self.adding_replicas


# Kafka's AssignmentState trait: the replicas, with or without a reassignment in progress
AssignmentState = SimpleAssignmentState | OngoingReassignmentState


# ISR states: committed to ZooKeeper, or a change in flight to the controller


@dataclass(frozen=True, slots=True)
class CommittedIsr:
    isr: frozenset = frozenset()

    @property
    def maximal_isr(self) -> frozenset:
        return self.isr

    is_inflight = False


@dataclass(frozen=True, slots=True)
class PendingExpandIsr:
    isr: frozenset
    new_in_sync_replica_id: int

    @property
    def maximal_isr(self) -> frozenset:
        # the replica being added already counts for the HW and for acks=all (KIP-497)
        return self.isr | {self.new_in_sync_replica_id}

    is_inflight = True


@dataclass(frozen=True, slots=True)
class PendingShrinkIsr:
    isr: frozenset
    out_of_sync_replica_ids: frozenset

    @property
    def maximal_isr(self) -> frozenset:
        return self.isr

    is_inflight = True


class Replica:
    """A follower as the leader sees it (Replica.scala): its fetch position and lag."""

    def __init__(self, broker_id: int, topic_partition: TopicPartition) -> None:
        self.broker_id = broker_id
        self.topic_partition = topic_partition
        self._log_end_offset_metadata = UNKNOWN_OFFSET_METADATA
        self._log_start_offset = UNKNOWN_OFFSET
        self._last_fetch_leader_log_end_offset = 0
        self._last_fetch_time_ms = 0
        self._last_caught_up_time_ms = 0

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._log_end_offset_metadata

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset_metadata.message_offset

    @property
    def last_caught_up_time_ms(self) -> int:
        return self._last_caught_up_time_ms

    def update_fetch_state(self, follower_fetch_offset_metadata: LogOffsetMetadata, follower_start_offset: int,
                           follower_fetch_time_ms: int, leader_end_offset: int) -> None:
        """Record a follower fetch. The follower counts as caught up at the time of this fetch if
        it asked for the leader's current end, or at the time of its previous fetch if it asked
        for at least what the leader's end was then; so a follower always one small produce
        behind still stays in sync."""
        offset = follower_fetch_offset_metadata.message_offset
        if offset >= leader_end_offset:
            self._last_caught_up_time_ms = max(self._last_caught_up_time_ms, follower_fetch_time_ms)
        elif offset >= self._last_fetch_leader_log_end_offset:
            self._last_caught_up_time_ms = max(self._last_caught_up_time_ms, self._last_fetch_time_ms)
        self._log_start_offset = follower_start_offset
        self._log_end_offset_metadata = follower_fetch_offset_metadata
        self._last_fetch_leader_log_end_offset = leader_end_offset
        self._last_fetch_time_ms = follower_fetch_time_ms

    def reset_last_caught_up_time(self, cur_leader_log_end_offset: int, cur_time_ms: int,
                                  last_caught_up_time_ms: int) -> None:
        self._last_fetch_leader_log_end_offset = cur_leader_log_end_offset
        self._last_fetch_time_ms = cur_time_ms
        self._last_caught_up_time_ms = last_caught_up_time_ms

    def __repr__(self) -> str:
        return (f"Replica(replicaId={self.broker_id}, topic={self.topic_partition.topic}, "
                f"partition={self.topic_partition.partition}, lastCaughtUpTimeMs={self._last_caught_up_time_ms}, "
                f"logStartOffset={self._log_start_offset}, logEndOffset={self.log_end_offset})")


class DelayedOperations:
    """The purgatories a partition pokes when its high or low watermark moves."""

    def __init__(self, topic_partition: TopicPartition, produce, fetch, delete_records) -> None:
        self._key = TopicPartitionOperationKey.from_topic_partition(topic_partition)
        self.produce = produce
        self.fetch = fetch
        self.delete_records = delete_records

    def check_and_complete_all(self) -> None:
        self.fetch.check_and_complete(self._key)
        self.produce.check_and_complete(self._key)
        self.delete_records.check_and_complete(self._key)

    @property
    def num_delayed_delete(self) -> int:
        return self.delete_records.num_delayed()


def _present_epoch(epoch: Optional[int]) -> Optional[int]:
    # Requests carry -1 for "no epoch"; Kafka turns that into an empty Optional while parsing.
    if epoch is None or epoch == NO_PARTITION_LEADER_EPOCH:
        return None
    return int(epoch)


# ---------------------------------------------------------------------------- Partition


class Partition:
    """One partition hosted on this broker: its log, leadership, assignment and ISR."""

    def __init__(self, topic_partition: TopicPartition, replica_lag_time_max_ms: int, local_broker_id: int,
                 time, log_manager, metadata_cache=None, delayed_operations: Optional[DelayedOperations] = None,
                 alter_isr_manager=None, isr_change_listener=None, inter_broker_protocol_version=None,
                 topic_config_fetcher: Optional[Callable[[str], Optional[Mapping[str, str]]]] = None) -> None:
        self.topic_partition = topic_partition
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.local_broker_id = local_broker_id
        self.time = time
        self.log_manager = log_manager
        self.metadata_cache = metadata_cache
        self.delayed_operations = delayed_operations
        self.alter_isr_manager = alter_isr_manager
        self.isr_change_listener = isr_change_listener
        self.inter_broker_protocol_version = inter_broker_protocol_version
        # Kafka's PartitionStateStore.fetchTopicConfig: the topic's overrides as stored in
        # ZooKeeper, read when the log is created. Creation writes /config/topics/<t> without
        # a change notification, so the LogManager's cached overrides may not have them yet.
        self.topic_config_fetcher = topic_config_fetcher

        self._remote_replicas: dict[int, Replica] = {}
        self._leader_isr_update_lock = ReentrantReadWriteLock()
        # held while a follower append could race with swapping in a future log
        self._future_log_lock = threading.Lock()
        self._zk_version = LeaderAndIsr.INITIAL_ZK_VERSION
        self._leader_epoch = LeaderAndIsr.INITIAL_LEADER_EPOCH - 1
        # where this broker's current leader epoch started, while it leads
        self._leader_epoch_start_offset_opt: Optional[int] = None
        self.leader_replica_id_opt: Optional[int] = None
        self.isr_state = CommittedIsr(frozenset())
        self.assignment_state: AssignmentState = SimpleAssignmentState(())
        self.log: Optional[Log] = None
        self.future_log: Optional[Log] = None
        self._controller_epoch = INITIAL_CONTROLLER_EPOCH
        # Kafka keeps the topic id in the log's partition.metadata file; here in memory only.
        self._topic_id = None
        self.logger = IdentLogger(logger, f"[Partition {topic_partition} broker={local_broker_id}] ")

    @classmethod
    def create(cls, topic_partition: TopicPartition, time, replica_manager) -> "Partition":
        """Kafka's ``Partition.apply``: a partition wired to a ReplicaManager's purgatories."""
        delayed_operations = DelayedOperations(topic_partition, replica_manager.delayed_produce_purgatory,
                                               replica_manager.delayed_fetch_purgatory,
                                               replica_manager.delayed_delete_records_purgatory)
        return cls(topic_partition,
                   replica_lag_time_max_ms=replica_manager.config.replica_lag_time_max_ms,
                   local_broker_id=replica_manager.config.broker_id,
                   time=time,
                   log_manager=replica_manager.log_manager,
                   metadata_cache=replica_manager.metadata_cache,
                   delayed_operations=delayed_operations,
                   alter_isr_manager=replica_manager.alter_isr_manager,
                   isr_change_listener=replica_manager,
                   inter_broker_protocol_version=replica_manager.config.inter_broker_protocol_version,
                   topic_config_fetcher=replica_manager.fetch_topic_config)

    # ------------------------------------------------------------------ simple views

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition_id(self) -> int:
        return self.topic_partition.partition

    @property
    def replica_id(self) -> int:
        """The local replica's id, i.e. this broker's."""
        return self.local_broker_id

    @property
    def leader_epoch(self) -> int:
        return self._leader_epoch

    def get_leader_epoch(self) -> int:
        return self._leader_epoch

    def get_zk_version(self) -> int:
        return self._zk_version

    @property
    def controller_epoch(self) -> int:
        return self._controller_epoch

    @property
    def in_sync_replica_ids(self) -> frozenset:
        return self.isr_state.isr

    @property
    def assignment(self) -> tuple[int, ...]:
        return self.assignment_state.replicas

    @property
    def is_leader(self) -> bool:
        return self.leader_replica_id_opt == self.local_broker_id

    @property
    def is_under_replicated(self) -> bool:
        return self.is_leader and self.assignment_state.replication_factor - len(self.isr_state.isr) > 0

    @property
    def is_under_min_isr(self) -> bool:
        log = self.leader_log_if_local
        return log is not None and len(self.isr_state.isr) < log.config.min_in_sync_replicas

    @property
    def is_at_min_isr(self) -> bool:
        log = self.leader_log_if_local
        return log is not None and len(self.isr_state.isr) == log.config.min_in_sync_replicas

    @property
    def is_reassigning(self) -> bool:
        return isinstance(self.assignment_state, OngoingReassignmentState)

    @property
    def is_adding_local_replica(self) -> bool:
        return self.assignment_state.is_adding_replica(self.local_broker_id)

    def is_adding_replica(self, replica_id: int) -> bool:
        return self.assignment_state.is_adding_replica(replica_id)

    @property
    def remote_replicas(self) -> list[Replica]:
        return list(self._remote_replicas.values())

    def get_replica(self, replica_id: int) -> Optional[Replica]:
        return self._remote_replicas.get(replica_id)

    def _get_replica_or_exception(self, replica_id: int) -> Replica:
        replica = self._remote_replicas.get(replica_id)
        if replica is None:
            raise NotLeaderOrFollowerException(
                f"Replica with id {replica_id} is not available on broker {self.local_broker_id}")
        return replica

    @property
    def leader_log_if_local(self) -> Optional[Log]:
        return self.log if self.is_leader else None

    def local_log_or_exception(self) -> Log:
        log = self.log
        if log is None:
            raise NotLeaderOrFollowerException(
                f"Log for partition {self.topic_partition} is not available on broker {self.local_broker_id}")
        return log

    def future_local_log_or_exception(self) -> Log:
        log = self.future_log
        if log is None:
            raise NotLeaderOrFollowerException(
                f"Future log for partition {self.topic_partition} is not available on broker {self.local_broker_id}")
        return log

    def set_log(self, log: Log, is_future_log: bool = False) -> None:
        """For tests: give the partition a log directly."""
        if is_future_log:
            self.future_log = log
        else:
            self.log = log

    # ------------------------------------------------------------------ log creation

    def create_log_if_not_exists(self, is_new: bool, is_future_replica: bool, offset_checkpoints) -> None:
        if is_future_replica:
            if self.future_log is None:
                self.future_log = self._create_log(is_new, True, offset_checkpoints)
        elif self.log is None:
            self.log = self._create_log(is_new, False, offset_checkpoints)

    def _create_log(self, is_new: bool, is_future_replica: bool, offset_checkpoints):
        stored = self.topic_config_fetcher(self.topic) if self.topic_config_fetcher else None
        if stored is not None:
            # Refresh the topic's overrides from the store before creating the log.
            self.log_manager.update_topic_config(self.topic, stored)
        config = self.log_manager.fetch_log_config(self.topic)
        log = self.log_manager.get_or_create_log(self.topic_partition, config=config, is_new=is_new,
                                                 is_future=is_future_replica)
        checkpointed = None
        if offset_checkpoints is not None:
            try:
                checkpointed = offset_checkpoints.fetch(log.parent_dir, self.topic_partition)
            except ValueError:
                checkpointed = None
        if checkpointed is None:
            self.logger.info("No checkpointed highwatermark is found for partition %s",
                             self.topic_partition)
            checkpointed = 0
        initial = log.update_high_watermark(checkpointed)
        self.logger.info("Log loaded for partition %s with initial high watermark %d",
                         self.topic_partition, initial)
        return log

    # ------------------------------------------------------------------ moving between log dirs

    def future_replica_dir_changed(self, new_destination_dir: str) -> bool:
        """Whether a move of this replica is under way to a directory other than ``new_destination_dir``."""
        with self._leader_isr_update_lock.read():
            future = self.future_log
            return future is not None and future.parent_dir != new_destination_dir

    def remove_future_local_replica(self, delete_from_log_dir: bool = True) -> None:
        """Forget the future log (a move given up, or finished); its directory is deleted unless told not to."""
        with self._leader_isr_update_lock.write():
            self.future_log = None
            if delete_from_log_dir:
                self.log_manager.async_delete(self.topic_partition, is_future=True)

    def maybe_create_future_replica(self, log_dir: str, high_watermark_checkpoints) -> bool:
        """Create the future log in ``log_dir`` unless the replica is there already or a move
        there is under way; True if it was created. A move under way to another directory is
        an IllegalStateException (the caller removes it first)."""
        with self._leader_isr_update_lock.write():
            current_log_dir = self.local_log_or_exception().parent_dir
            if current_log_dir == log_dir:
                self.logger.info("Current log directory %s is same as requested log dir %s. Skipping future replica "
                                 "creation.", current_log_dir, log_dir)
                return False
            future = self.future_log
            if future is not None:
                if future.parent_dir != log_dir:
                    raise RuntimeError(f"The future log dir {future.parent_dir} of {self.topic_partition} is "
                                       f"different from the requested log dir {log_dir}")
                return False
            self.create_log_if_not_exists(False, True, high_watermark_checkpoints)
            return True

    def maybe_replace_current_with_future_replica(self) -> bool:
        """Swap in the future log once it holds everything the current one does; True if it did.

        Follower appends are held off by the future-log lock, leader appends and truncations
        by the exclusive leader/ISR lock, so neither log end can move between the check and
        the swap."""
        with self._future_log_lock:
            local_log_end_offset = self.local_log_or_exception().log_end_offset
            future = self.future_log
            if future is None or future.log_end_offset != local_log_end_offset:
                return False
            with self._leader_isr_update_lock.write():
                future = self.future_log
                if future is None:
                    # removed meanwhile by someone else, who also took it off the fetcher
                    return False
                if self.log is None or self.log.log_end_offset != future.log_end_offset:
                    return False
                self.log_manager.replace_current_with_future_log(self.topic_partition)
                self.log = future
                self.remove_future_local_replica(delete_from_log_dir=False)
                return True

    def check_or_set_topic_id(self, request_topic_id) -> bool:
        """False if the request names a different topic id than the one this partition has."""
        if request_topic_id is None or request_topic_id.int == 0:
            return True
        if self.log is None:
            return True
        if self._topic_id is None:
            self._topic_id = request_topic_id
            return True
        if self._topic_id != request_topic_id:
            state_change_logger.error("%sTopic Id in memory: %s does not match the topic Id for partition %s "
                                      "provided in the request: %s.", self.logger.ident, self._topic_id,
                                      self.topic_partition, request_topic_id)
            return False
        return True

    # ------------------------------------------------------------------ leader epoch checks

    def _check_current_leader_epoch(self, remote_leader_epoch: Optional[int]) -> Errors:
        remote = _present_epoch(remote_leader_epoch)
        if remote is None:
            return Errors.NONE
        local = self._leader_epoch
        if local > remote:
            return Errors.FENCED_LEADER_EPOCH
        if local < remote:
            return Errors.UNKNOWN_LEADER_EPOCH
        return Errors.NONE

    def _get_local_log(self, current_leader_epoch: Optional[int], require_leader: bool):
        """(log, Errors.NONE) or (None, the error)."""
        error = self._check_current_leader_epoch(current_leader_epoch)
        if error is not Errors.NONE:
            return None, error
        if require_leader and not self.is_leader:
            return None, Errors.NOT_LEADER_OR_FOLLOWER
        log = self.log
        if log is None:
            return None, Errors.NOT_LEADER_OR_FOLLOWER
        return log, Errors.NONE

    def _local_log_with_epoch_or_exception(self, current_leader_epoch: Optional[int], require_leader: bool):
        log, error = self._get_local_log(current_leader_epoch, require_leader)
        if log is None:
            raise error.exception_class(
                f"Failed to find {'leader ' if require_leader else ''}log for partition {self.topic_partition} "
                f"with leader epoch {current_leader_epoch}. The current leader is {self.leader_replica_id_opt} "
                f"and the current epoch {self._leader_epoch}")
        return log

    # ------------------------------------------------------------------ leadership

    def update_assignment_and_isr(self, assignment: Sequence[int], isr: Iterable[int],
                                  adding_replicas: Sequence[int] = (), removing_replicas: Sequence[int] = ()) -> None:
        """Store assignment and ISR; a Replica is kept for every remote broker in the assignment."""
        new_remote = [r for r in assignment if r != self.local_broker_id]
        # readers walk the map without the lock: add the new replicas before dropping old ones
        replicas = dict(self._remote_replicas)
        for replica_id in new_remote:
            if replica_id not in replicas:
                replicas[replica_id] = Replica(replica_id, self.topic_partition)
        for replica_id in [r for r in replicas if r not in new_remote]:
            del replicas[replica_id]
        self._remote_replicas = replicas
        if adding_replicas or removing_replicas:
            self.assignment_state = OngoingReassignmentState(tuple(adding_replicas), tuple(removing_replicas),
                                                             tuple(assignment))
        else:
            self.assignment_state = SimpleAssignmentState(tuple(assignment))
        self.isr_state = CommittedIsr(frozenset(isr))

    def make_leader(self, partition_state, high_watermark_checkpoints) -> bool:
        """Become leader in ``partition_state.leader_epoch``; True if this broker was not leader before.

        Followers' positions are forgotten (they may be stale from an earlier leadership) and
        the new epoch is written to the leader epoch cache at the current log end, so a
        follower holding data of a later, lost epoch can find where to truncate.
        """
        with self._leader_isr_update_lock.write():
            self._controller_epoch = int(partition_state.controller_epoch)
            isr = frozenset(int(i) for i in partition_state.isr)
            adding = tuple(int(r) for r in getattr(partition_state, "adding_replicas", ()) or ())
            removing = tuple(int(r) for r in getattr(partition_state, "removing_replicas", ()) or ())
            self.update_assignment_and_isr(tuple(int(r) for r in partition_state.replicas), isr, adding, removing)
            self.create_log_if_not_exists(bool(getattr(partition_state, "is_new", False)), False,
                                          high_watermark_checkpoints)
            leader_log = self.local_log_or_exception()
            leader_epoch_start_offset = leader_log.log_end_offset
            state_change_logger.info(
                "[Broker id=%d] Leader %s starts at leader epoch %d from offset %d with high watermark %d ISR %s "
                "addingReplicas %s removingReplicas %s. Previous leader epoch was %d.", self.local_broker_id,
                self.topic_partition, partition_state.leader_epoch, leader_epoch_start_offset,
                leader_log.high_watermark, sorted(isr), list(adding), list(removing), self._leader_epoch)
            self._leader_epoch = int(partition_state.leader_epoch)
            self._leader_epoch_start_offset_opt = leader_epoch_start_offset
            self._zk_version = int(partition_state.zk_version)
            if self.alter_isr_manager is not None:
                self.alter_isr_manager.clear_pending(self.topic_partition)
            leader_log.maybe_assign_epoch_start_offset(self._leader_epoch, leader_epoch_start_offset)

            is_new_leader = not self.is_leader
            now = self.time.milliseconds()
            for replica in self._remote_replicas.values():
                last_caught_up = now if replica.broker_id in self.isr_state.isr else 0
                replica.reset_last_caught_up_time(leader_epoch_start_offset, now, last_caught_up)
            if is_new_leader:
                self.leader_replica_id_opt = self.local_broker_id
                for replica in self._remote_replicas.values():
                    replica.update_fetch_state(UNKNOWN_OFFSET_METADATA, UNKNOWN_OFFSET, 0, UNKNOWN_OFFSET)
            # the ISR may be down to this broker alone
            leader_hw_incremented = self._maybe_increment_leader_hw(leader_log)
        if leader_hw_incremented:
            self._try_complete_delayed_requests()
        return is_new_leader

    def make_follower(self, partition_state, high_watermark_checkpoints) -> bool:
        """Follow ``partition_state.leader``; False when nothing changed (same leader, same epoch)."""
        with self._leader_isr_update_lock.write():
            new_leader_broker_id = int(partition_state.leader)
            old_leader_epoch = self._leader_epoch
            self._controller_epoch = int(partition_state.controller_epoch)
            self.update_assignment_and_isr(
                tuple(int(r) for r in partition_state.replicas), frozenset(),
                tuple(int(r) for r in getattr(partition_state, "adding_replicas", ()) or ()),
                tuple(int(r) for r in getattr(partition_state, "removing_replicas", ()) or ()))
            self.create_log_if_not_exists(bool(getattr(partition_state, "is_new", False)), False,
                                          high_watermark_checkpoints)
            follower_log = self.local_log_or_exception()
            state_change_logger.info(
                "[Broker id=%d] Follower %s starts at leader epoch %d from offset %d with high watermark %d. "
                "Previous leader epoch was %d.", self.local_broker_id, self.topic_partition,
                partition_state.leader_epoch, follower_log.log_end_offset, follower_log.high_watermark,
                self._leader_epoch)
            self._leader_epoch = int(partition_state.leader_epoch)
            self._leader_epoch_start_offset_opt = None
            self._zk_version = int(partition_state.zk_version)
            if self.alter_isr_manager is not None:
                self.alter_isr_manager.clear_pending(self.topic_partition)
            if self.leader_replica_id_opt == new_leader_broker_id and self._leader_epoch == old_leader_epoch:
                return False
            self.leader_replica_id_opt = new_leader_broker_id
            return True

    def delete(self) -> None:
        """Forget everything about the partition; the ReplicaManager deletes the log afterwards."""
        # exclusive, so no append can hit a log that is about to be renamed away
        with self._leader_isr_update_lock.write():
            self._remote_replicas = {}
            self.assignment_state = SimpleAssignmentState(())
            self.log = None
            self.future_log = None
            self.isr_state = CommittedIsr(frozenset())
            self.leader_replica_id_opt = None
            self._leader_epoch_start_offset_opt = None

    # ------------------------------------------------------------------ follower state (leader side)

    def update_follower_fetch_state(self, follower_id: int, follower_fetch_offset_metadata: LogOffsetMetadata,
                                    follower_start_offset: int, follower_fetch_time_ms: int,
                                    leader_end_offset: int) -> bool:
        """Record a follower's fetch; False if ``follower_id`` is not an assigned replica."""
        replica = self._remote_replicas.get(follower_id)
        if replica is None:
            return False
        track_lw = self.delayed_operations is not None and self.delayed_operations.num_delayed_delete > 0
        old_leader_lw = self.low_watermark_if_leader() if track_lw else -1
        prev_follower_end_offset = replica.log_end_offset
        replica.update_fetch_state(follower_fetch_offset_metadata, follower_start_offset, follower_fetch_time_ms,
                                   leader_end_offset)
        new_leader_lw = self.low_watermark_if_leader() if track_lw else -1
        leader_lw_incremented = new_leader_lw > old_leader_lw

        self._maybe_expand_isr(replica, follower_fetch_time_ms)

        leader_hw_incremented = False
        if prev_follower_end_offset != replica.log_end_offset:
            with self._leader_isr_update_lock.read():
                leader_log = self.leader_log_if_local
                if leader_log is not None:
                    leader_hw_incremented = self._maybe_increment_leader_hw(leader_log, follower_fetch_time_ms)
        if leader_lw_incremented or leader_hw_incremented:
            self._try_complete_delayed_requests()
        return True

    def _maybe_expand_isr(self, follower_replica: Replica, follower_fetch_time_ms: int) -> None:
        if not self._can_add_replica_to_isr(follower_replica.broker_id):
            return
        with self._leader_isr_update_lock.read():
            needs = self._needs_expand_isr(follower_replica)
        if needs:
            with self._leader_isr_update_lock.write():
                if self._needs_expand_isr(follower_replica):
                    self._expand_isr(follower_replica.broker_id)

    def _needs_expand_isr(self, follower_replica: Replica) -> bool:
        return (self._can_add_replica_to_isr(follower_replica.broker_id)
                and self._is_follower_at_highwatermark(follower_replica))

    def _can_add_replica_to_isr(self, follower_replica_id: int) -> bool:
        current = self.isr_state
        return not current.is_inflight and follower_replica_id not in current.isr

    def _is_follower_at_highwatermark(self, follower_replica: Replica) -> bool:
        leader_log = self.leader_log_if_local
        if leader_log is None:
            return False
        end = follower_replica.log_end_offset
        # it must also have reached the current epoch, or committed data above the HW could be lost
        start = self._leader_epoch_start_offset_opt
        return end >= leader_log.high_watermark and start is not None and end >= start

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, Errors]:
        """For acks=all: (whether the whole ISR has ``required_offset``, error)."""
        leader_log = self.leader_log_if_local
        if leader_log is None:
            return False, Errors.NOT_LEADER_OR_FOLLOWER
        cur_maximal_isr = self.isr_state.maximal_isr
        min_isr = leader_log.config.min_in_sync_replicas
        if leader_log.high_watermark >= required_offset:
            # appended before the ISR shrank below min.insync.replicas: written, but under-replicated
            if min_isr <= len(cur_maximal_isr):
                return True, Errors.NONE
            return True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return False, Errors.NONE

    def _maybe_increment_leader_hw(self, leader_log, cur_time: Optional[int] = None) -> bool:
        """Move the HW to the smallest end offset among the leader and the followers that are in
        the (maximal) ISR or caught up recently. Callers hold the leader/ISR lock."""
        if cur_time is None:
            cur_time = self.time.milliseconds() if self._remote_replicas else 0
        new_high_watermark = leader_log.log_end_offset_metadata
        if self._remote_replicas:
            maximal_isr = self.isr_state.maximal_isr
            for replica in self._remote_replicas.values():
                replica_leo = replica.log_end_offset_metadata
                if (replica_leo.message_offset < new_high_watermark.message_offset
                        and (cur_time - replica.last_caught_up_time_ms <= self.replica_lag_time_max_ms
                             or replica.broker_id in maximal_isr)):
                    new_high_watermark = replica_leo
        old = leader_log.maybe_increment_high_watermark(new_high_watermark)
        if old is not None:
            self.logger.debug("High watermark updated from %s to %s", old, new_high_watermark)
            return True
        return False

    def low_watermark_if_leader(self) -> int:
        """The smallest log start offset among the leader and the alive followers (DeleteRecords)."""
        if not self.is_leader:
            raise NotLeaderOrFollowerException(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
        low_watermark = self.local_log_or_exception().log_start_offset
        for replica in self._remote_replicas.values():
            alive = self.metadata_cache is None or self.metadata_cache.get_alive_broker(replica.broker_id) is not None
            if alive and replica.log_start_offset < low_watermark:
                low_watermark = replica.log_start_offset
        future = self.future_log
        if future is not None:
            return min(low_watermark, future.log_start_offset)
        return low_watermark

    def _try_complete_delayed_requests(self) -> None:
        """Wake operations waiting on this partition; called without the leader/ISR lock."""
        if self.delayed_operations is not None:
            self.delayed_operations.check_and_complete_all()

    def maybe_shrink_isr(self) -> None:
        """Drop followers that have not caught up for replica.lag.time.max.ms (the isr-expiration task)."""
        if self.isr_state.is_inflight:
            return
        with self._leader_isr_update_lock.read():
            needs = self._needs_shrink_isr()
        if not needs:
            return
        leader_hw_incremented = False
        with self._leader_isr_update_lock.write():
            leader_log = self.leader_log_if_local
            if leader_log is not None:
                out_of_sync = self.get_out_of_sync_replicas(self.replica_lag_time_max_ms)
                if out_of_sync:
                    self.logger.info("Shrinking ISR from %s to %s. Leader: (highWatermark: %d, endOffset: %d). "
                                     "Out of sync replicas: %s.", sorted(self.isr_state.isr),
                                     sorted(self.isr_state.isr - out_of_sync), leader_log.high_watermark,
                                     leader_log.log_end_offset,
                                     [(r, self._get_replica_or_exception(r).log_end_offset) for r in sorted(out_of_sync)])
                    self._shrink_isr(out_of_sync)
                    leader_hw_incremented = self._maybe_increment_leader_hw(leader_log)
        if leader_hw_incremented:
            self._try_complete_delayed_requests()

    def _needs_shrink_isr(self) -> bool:
        return self.leader_log_if_local is not None and bool(
            self.get_out_of_sync_replicas(self.replica_lag_time_max_ms))

    def _is_follower_out_of_sync(self, replica_id: int, leader_end_offset: int, current_time_ms: int,
                                 max_lag_ms: int) -> bool:
        replica = self._get_replica_or_exception(replica_id)
        return (replica.log_end_offset != leader_end_offset
                and current_time_ms - replica.last_caught_up_time_ms > max_lag_ms)

    def get_out_of_sync_replicas(self, max_lag_ms: int) -> frozenset:
        current = self.isr_state
        if current.is_inflight:
            return frozenset()
        candidates = current.isr - {self.local_broker_id}
        if not candidates:
            return frozenset()
        now = self.time.milliseconds()
        leader_end_offset = self.local_log_or_exception().log_end_offset
        return frozenset(r for r in candidates
                         if self._is_follower_out_of_sync(r, leader_end_offset, now, max_lag_ms))

    # ------------------------------------------------------------------ follower appends

    def _do_append_records_to_follower_or_future_replica(self, records: MemoryRecords,
                                                         is_future: bool) -> Optional[LogAppendInfo]:
        if is_future:
            with self._leader_isr_update_lock.read():
                future = self.future_log
                return None if future is None else future.append_as_follower(records)
        with self._future_log_lock:
            return self.local_log_or_exception().append_as_follower(records)

    def append_records_to_follower_or_future_replica(self, records: MemoryRecords,
                                                     is_future: bool = False) -> Optional[LogAppendInfo]:
        try:
            return self._do_append_records_to_follower_or_future_replica(records, is_future)
        except UnexpectedAppendOffsetException as e:
            log = self.future_local_log_or_exception() if is_future else self.local_log_or_exception()
            log_end_offset = log.log_end_offset
            # The leader's log start offset may fall inside the first batch a new follower fetches
            # (after DeleteRecords); restart the follower's log at that batch's base offset.
            if (log_end_offset == log.log_start_offset and e.first_offset < log_end_offset
                    and e.last_offset >= log_end_offset):
                self.logger.info("Unexpected offset in append to %s. First offset %d is less than log start offset "
                                 "%d. Since this is the first record to be appended to the %s's log, will start the "
                                 "log from offset %d.", self.topic_partition, e.first_offset,
                                 log.log_start_offset, "future replica" if is_future else "follower", e.first_offset)
                self.truncate_fully_and_start_at(e.first_offset, is_future)
                return self._do_append_records_to_follower_or_future_replica(records, is_future)
            raise

    def truncate_to(self, offset: int, is_future: bool = False) -> None:
        with self._leader_isr_update_lock.read():
            self.log_manager.truncate_to({self.topic_partition: offset}, is_future=is_future)

    def truncate_fully_and_start_at(self, new_offset: int, is_future: bool = False) -> None:
        with self._leader_isr_update_lock.read():
            self.log_manager.truncate_fully_and_start_at(self.topic_partition, new_offset, is_future=is_future)

    # ------------------------------------------------------------------ produce

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int, epoch: int) -> VerificationGuard:
        """The leader log's ``maybe_start_transaction_verification`` (log/verification_guard.py);
        NotLeaderOrFollowerException off the leader."""
        leader_log = self.leader_log_if_local
        if leader_log is None:
            raise NotLeaderOrFollowerException(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
        return leader_log.maybe_start_transaction_verification(producer_id, sequence, epoch)

    def append_records_to_leader(self, records: MemoryRecords, origin: AppendOrigin, required_acks: int,
                                 verification_guard: Optional[VerificationGuard] = None) -> LogAppendInfo:
        """Append a produce request's records; raises NotLeaderOrFollowerException off the leader
        and NotEnoughReplicasException for acks=all below min.insync.replicas (nothing written).
        ``verification_guard``: see Log.append_as_leader."""
        with self._leader_isr_update_lock.read():
            leader_log = self.leader_log_if_local
            if leader_log is None:
                raise NotLeaderOrFollowerException(
                    f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
            min_isr = leader_log.config.min_in_sync_replicas
            in_sync = self.isr_state.isr
            if required_acks == -1 and len(in_sync) < min_isr:
                raise NotEnoughReplicasException(
                    f"The size of the current ISR {set(in_sync)} is insufficient to satisfy the min.isr "
                    f"requirement of {min_isr} for partition {self.topic_partition}")
            info = leader_log.append_as_leader(records, self._leader_epoch, origin,
                                               self.inter_broker_protocol_version, verification_guard)
            # with an ISR of one this moves the HW to the new log end at once
            hw_incremented = self._maybe_increment_leader_hw(leader_log)
        info.leader_hw_change = LeaderHwChange.INCREASED if hw_incremented else LeaderHwChange.SAME
        return info

    # ------------------------------------------------------------------ fetch

    def read_records(self, fetch_offset: int, current_leader_epoch: Optional[int], max_bytes: int,
                     fetch_isolation: FetchIsolation, fetch_only_from_leader: bool, min_one_message: bool,
                     last_fetched_epoch: Optional[int] = None) -> LogReadInfo:
        """Read from the local log; the offsets returned are those from before the read, so an
        append racing with it cannot keep a follower from looking in sync."""
        with self._leader_isr_update_lock.read():
            local_log = self._local_log_with_epoch_or_exception(current_leader_epoch, fetch_only_from_leader)
            initial_high_watermark = local_log.high_watermark
            initial_log_start_offset = local_log.log_start_offset
            initial_log_end_offset = local_log.log_end_offset
            initial_last_stable_offset = local_log.last_stable_offset

            fetch_epoch = _present_epoch(last_fetched_epoch)
            if fetch_epoch is not None:
                epoch_end_offset = self.last_offset_for_leader_epoch(current_leader_epoch, fetch_epoch, False)
                if epoch_end_offset.error is not Errors.NONE:
                    raise epoch_end_offset.error.exception_class(epoch_end_offset.error.message)
                if (epoch_end_offset.end_offset == UNDEFINED_EPOCH_OFFSET
                        or epoch_end_offset.leader_epoch == UNDEFINED_EPOCH):
                    raise OffsetOutOfRangeException(
                        f"Could not determine the end offset of the last fetched epoch {last_fetched_epoch} "
                        "from the request")
                if fetch_offset < initial_log_start_offset:
                    raise OffsetOutOfRangeException(
                        f"Received request for offset {fetch_offset} for partition {self.topic_partition}, but we "
                        f"only have log segments in the range {initial_log_start_offset} to {initial_log_end_offset}.")
                if epoch_end_offset.leader_epoch < fetch_epoch or epoch_end_offset.end_offset < fetch_offset:
                    # the fetcher's log diverges: tell it where our epoch ends so it truncates
                    empty = FetchDataInfo(LogOffsetMetadata(fetch_offset), MemoryRecords.EMPTY, False, None)
                    diverging = EpochEndOffset(Errors.NONE, self.partition_id, epoch_end_offset.leader_epoch,
                                               epoch_end_offset.end_offset)
                    return LogReadInfo(empty, diverging, initial_high_watermark, initial_log_start_offset,
                                       initial_log_end_offset, initial_last_stable_offset)

            fetched = local_log.read(fetch_offset, max_bytes, fetch_isolation, min_one_message)
            return LogReadInfo(fetched, None, initial_high_watermark, initial_log_start_offset,
                               initial_log_end_offset, initial_last_stable_offset)

    def fetch_offset_snapshot(self, current_leader_epoch: Optional[int],
                              fetch_only_from_leader: bool) -> LogOffsetSnapshot:
        with self._leader_isr_update_lock.read():
            return self._local_log_with_epoch_or_exception(current_leader_epoch,
                                                           fetch_only_from_leader).fetch_offset_snapshot()

    def last_offset_for_leader_epoch(self, current_leader_epoch: Optional[int], leader_epoch: int,
                                     fetch_only_from_leader: bool) -> EpochEndOffset:
        """End offset of the largest epoch <= ``leader_epoch`` (OffsetsForLeaderEpoch)."""
        with self._leader_isr_update_lock.read():
            log, error = self._get_local_log(current_leader_epoch, fetch_only_from_leader)
            if log is None:
                return EpochEndOffset(error, self.partition_id)
            found = log.end_offset_for_epoch(leader_epoch)
            if found is None:
                return EpochEndOffset(Errors.NONE, self.partition_id)
            end_offset, epoch = found
            return EpochEndOffset(Errors.NONE, self.partition_id, epoch, end_offset)

    # ------------------------------------------------------------------ list offsets

    def fetch_offset_for_timestamp(self, timestamp: int, isolation_level: Optional[int],
                                   current_leader_epoch: Optional[int],
                                   fetch_only_from_leader: bool) -> Optional[TimestampAndOffset]:
        """ListOffsets: EARLIEST (-2), LATEST (-1) or the first offset with timestamp >= ``timestamp``.

        Clients (``isolation_level`` given) never see past the high watermark, or past the last
        stable offset with READ_COMMITTED; replicas (None) may see up to the log end.
        """
        with self._leader_isr_update_lock.read():
            local_log = self._local_log_with_epoch_or_exception(current_leader_epoch, fetch_only_from_leader)
            if isolation_level is None:
                last_fetchable_offset = local_log.log_end_offset
            elif int(isolation_level) == IsolationLevel.READ_COMMITTED:
                last_fetchable_offset = local_log.last_stable_offset
            else:
                last_fetchable_offset = local_log.high_watermark

            # Right after an election the new leader's HW may lag its epoch start; until it catches
            # up, "latest" would go backwards, so clients are told to retry instead.
            offsets_error = None
            epoch_start = self._leader_epoch_start_offset_opt
            if isolation_level is not None and epoch_start is not None and epoch_start > local_log.high_watermark:
                epoch_desc = (f"epoch {current_leader_epoch}" if _present_epoch(current_leader_epoch) is not None
                              else "unknown epoch")
                offsets_error = OffsetNotAvailableException(
                    f"Failed to fetch offsets for partition {self.topic_partition} with leader {epoch_desc} as this "
                    f"partition's high watermark ({local_log.high_watermark}) is lagging behind the start offset "
                    f"from the beginning of this epoch ({epoch_start}).")

            if timestamp == LATEST_TIMESTAMP:
                if offsets_error is not None:
                    raise offsets_error
                return TimestampAndOffset(NO_TIMESTAMP, last_fetchable_offset, self._leader_epoch)
            log = self.log_manager.get_log(self.topic_partition)
            found = log.fetch_offset_by_timestamp(timestamp) if log is not None else None
            if timestamp == EARLIEST_TIMESTAMP:
                return found
            if found is not None and found.offset < last_fetchable_offset:
                return found
            if offsets_error is not None:
                raise offsets_error
            return None

    def legacy_fetch_offsets_for_timestamp(self, timestamp: int, max_num_offsets: int, is_from_consumer: bool,
                                           fetch_only_from_leader: bool) -> list[int]:
        """ListOffsets v0."""
        with self._leader_isr_update_lock.read():
            local_log = self._local_log_with_epoch_or_exception(None, fetch_only_from_leader)
            all_offsets = local_log.legacy_fetch_offsets_before(timestamp, max_num_offsets)
            if not is_from_consumer:
                return all_offsets
            hw = local_log.high_watermark
            if any(o > hw for o in all_offsets):
                rest = list(all_offsets)
                while rest and rest[0] > hw:
                    rest.pop(0)
                return [hw] + rest
            return all_offsets

    @property
    def log_start_offset(self) -> int:
        with self._leader_isr_update_lock.read():
            log = self.leader_log_if_local
            return -1 if log is None else log.log_start_offset

    # ------------------------------------------------------------------ delete records

    def delete_records_on_leader(self, offset: int) -> LogDeleteRecordsResult:
        """Move the log start offset to ``offset`` (-1: the high watermark); may delete segments."""
        with self._leader_isr_update_lock.read():
            leader_log = self.leader_log_if_local
            if leader_log is None:
                raise NotLeaderOrFollowerException(
                    f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
            if not leader_log.config.delete:
                raise PolicyViolationException(
                    f"Records of partition {self.topic_partition} can not be deleted due to the configured policy")
            converted = leader_log.high_watermark if offset == DELETE_RECORDS_HIGH_WATERMARK else offset
            if converted < 0:
                raise OffsetOutOfRangeException(
                    f"The offset {converted} for partition {self.topic_partition} is not valid")
            leader_log.maybe_increment_log_start_offset(converted,
                                                        LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
            return LogDeleteRecordsResult(converted, self.low_watermark_if_leader())

    # ------------------------------------------------------------------ ISR changes (AlterIsr)

    def _expand_isr(self, new_in_sync_replica: int) -> None:
        if not self.isr_state.is_inflight:
            # assume the expansion succeeds: that only makes the HW harder to advance
            self._send_alter_isr_request(PendingExpandIsr(self.isr_state.isr, new_in_sync_replica))

    def _shrink_isr(self, out_of_sync_replicas: frozenset) -> None:
        if not self.isr_state.is_inflight:
            # not assumed to succeed: the HW must not advance on a smaller ISR the controller rejected
            self._send_alter_isr_request(PendingShrinkIsr(self.isr_state.isr, frozenset(out_of_sync_replicas)))

    def _send_alter_isr_request(self, proposed) -> None:
        """Extension point for replication: hand the ISR change to the AlterIsr manager."""
        if isinstance(proposed, PendingExpandIsr):
            isr_to_send = proposed.isr | {proposed.new_in_sync_replica_id}
        elif isinstance(proposed, PendingShrinkIsr):
            isr_to_send = proposed.isr - proposed.out_of_sync_replica_ids
        else:
            self._mark_isr("mark_failed")
            raise RuntimeError(f"Invalid state {proposed} for ISR change for partition {self.topic_partition}")
        if self.alter_isr_manager is None:
            self.logger.debug("No AlterIsr manager; keeping ISR %s instead of %s",
                              sorted(self.isr_state.isr), sorted(isr_to_send))
            return
        new_leader_and_isr = LeaderAndIsr(self.local_broker_id, self._leader_epoch, tuple(sorted(isr_to_send)),
                                          self._zk_version)
        item = AlterIsrItem(self.topic_partition, new_leader_and_isr,
                            functools.partial(self._on_alter_isr_response, proposed),
                            self._controller_epoch)
        old_state = self.isr_state
        self.isr_state = proposed
        if not self.alter_isr_manager.submit(item):
            self.isr_state = old_state
            self._mark_isr("mark_failed")
            raise RuntimeError(f"Failed to enqueue ISR change state {new_leader_and_isr} for partition "
                               f"{self.topic_partition}")
        self.logger.debug("Enqueued ISR change to state %s after transition to %s",
                          new_leader_and_isr, proposed)

    def _on_alter_isr_response(self, proposed, result) -> None:
        """The AlterIsr manager's callback. A committed shrink may let the high watermark move
        at once (later Kafka does the same, KAFKA-13091); waiting operations are then woken
        here, unless this thread still holds the ISR lock: ZkIsrManager answers inside
        ``submit``, and ``maybe_shrink_isr`` wakes them itself once it lets go."""
        hw_incremented = self._handle_alter_isr_response(proposed, result)
        if hw_incremented and not self._leader_isr_update_lock.is_write_locked_by_current_thread():
            self._try_complete_delayed_requests()

    def _handle_alter_isr_response(self, proposed, result) -> bool:
        """``result`` is an Errors member (failure) or the LeaderAndIsr the controller stored;
        True if committing it moved the high watermark."""
        with self._leader_isr_update_lock.write():
            if self.isr_state != proposed:
                # leadership or ISR changed some other way meanwhile: this answer is stale
                return False
            if isinstance(result, Errors):
                self._mark_isr("mark_failed")
                if result in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.FENCED_LEADER_EPOCH,
                              Errors.INVALID_UPDATE_VERSION):
                    self.logger.debug("Failed to update ISR to %s: %s. Giving up.", proposed,
                                      result.name)
                else:
                    self.logger.warning("Failed to update ISR to %s due to unexpected %s. Retrying.",
                                        proposed, result.name)
                    self._send_alter_isr_request(proposed)
                return False
            if result.leader_epoch != self._leader_epoch or result.zk_version < self._zk_version:
                self._mark_isr("mark_failed")
                return False
            self.isr_state = CommittedIsr(frozenset(result.isr))
            self._zk_version = result.zk_version
            self.logger.info("ISR updated to %s and version updated to [%d]",
                             ",".join(map(str, sorted(self.isr_state.isr))), self._zk_version)
            self._mark_isr("mark_expand" if isinstance(proposed, PendingExpandIsr) else "mark_shrink")
            leader_log = self.leader_log_if_local
            return leader_log is not None and self._maybe_increment_leader_hw(leader_log)

    def _mark_isr(self, what: str) -> None:
        fn = getattr(self.isr_change_listener, what, None)
        if fn is not None:
            fn()

    # ------------------------------------------------------------------ misc

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partition) and other.topic_partition == self.topic_partition

    def __hash__(self) -> int:
        return hash(self.topic_partition)

    def __repr__(self) -> str:
        parts = [f"Topic: {self.topic}", f"Partition: {self.partition_id}", f"Leader: {self.leader_replica_id_opt}",
                 f"Replicas: {','.join(map(str, self.assignment_state.replicas))}",
                 f"ISR: {','.join(map(str, sorted(self.isr_state.isr)))}"]
        if isinstance(self.assignment_state, OngoingReassignmentState):
            parts.append(f"AddingReplicas: {','.join(map(str, self.assignment_state.adding_replicas))}")
            parts.append(f"RemovingReplicas: {','.join(map(str, self.assignment_state.removing_replicas))}")
        return "; ".join(parts)


__all__ = [
    "Partition", "Replica", "DelayedOperations", "AlterIsrItem", "SimpleAssignmentState", "OngoingReassignmentState",
    "CommittedIsr", "PendingExpandIsr", "PendingShrinkIsr", "NotEnoughReplicasException",
    "FencedLeaderEpochException", "UnknownLeaderEpochException", "OffsetNotAvailableException",
]
