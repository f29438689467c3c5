"""Port of core/src/main/scala/kafka/server/ReplicaAlterLogDirsThread.scala (Kafka 2.8.2).

Moves replicas between this broker's log dirs (AlterReplicaLogDirs): an AbstractFetcherThread
whose "leader" is the partition's current log on this same broker and whose local side is
the partition's *future* log, ``<topic>-<partition>.<uuid>-future`` in the destination dir.

* nothing goes over the network: a fetch reads the current log through
  ``ReplicaManager.read_from_local_log`` as replica ``-3`` (Kafka's FutureLocalReplicaId),
  up to its log end, and the records read from the segment file are appended to the future
  log as a follower appends (offsets, epochs and producer state kept);
* the future log takes the current log's high watermark and log start offset with every
  answer; as soon as its log end reaches the current log's, the Partition swaps it in
  (``Partition.maybe_replace_current_with_future_replica``): the future directory is
  renamed ``<topic>-<partition>``, the old one ``-delete`` and deleted later, and the
  partition leaves this thread;
* one partition is copied at a time (the first ready one by topic and partition, kept until
  it is done or can no longer fetch), so each move finishes as early as it can;
* truncation goes by leader epochs against the current log (OffsetsForLeaderEpoch answered
  locally), never on fetch: the current log may have been truncated while the future one
  was offline (a restart), and a follower truncating the current log marks the future one
  for truncation too (``AbstractFetcherManager.mark_partitions_for_truncation``);
* ``quota`` is the hook for ``replica.alter.log.dirs.io.max.bytes.per.second``: while it is
  exceeded nothing is fetched, and every byte copied is recorded against it (unbounded
  unless one is given).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from kafka_py.core.api.request import FUTURE_LOCAL_REPLICA_ID
from kafka_py.core.cluster.broker import BrokerEndPoint
from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_append_info import LogAppendInfo, LogStartOffsetIncrementReason
from kafka_py.log.log_offset_metadata import FetchIsolation
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, EpochEndOffset, PartitionData
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.server.abstract_fetcher_manager import InitialFetchState
from kafka_py.server.abstract_fetcher_thread import (
    AbstractFetcherThread,
    EpochData,
    FailedPartitions,
    OffsetAndEpoch,
    OffsetTruncationState,
    PartitionFetchState,
    ReplicaFetch,
    ResultWithPartitions,
)
from kafka_py.server.quota_factory import UNBOUNDED_QUOTA
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.server.replication_quota_manager import ReplicaQuota
from kafka_py.clients.common.utils.time import Time

if TYPE_CHECKING:
    # the replica manager imports this module (through its fetcher managers)
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LocalFetch:
    """The "request" of one round: read these partitions of the current logs, at most
    ``max_bytes`` in all (Kafka builds a FetchRequest for it and never sends it)."""

    partitions: tuple[tuple[TopicPartition, PartitionData], ...]
    max_bytes: int

    def __repr__(self) -> str:
        parts = ", ".join(f"{tp}@{data.fetch_offset}" for tp, data in self.partitions)
        return f"LocalFetch(replica_id={FUTURE_LOCAL_REPLICA_ID}, [{parts}])"


class ReplicaAlterLogDirsThread(AbstractFetcherThread):
    def __init__(self, name: str, source_broker: BrokerEndPoint, broker_config: Any,
                 failed_partitions: FailedPartitions, replica_mgr: ReplicaManager,
                 quota: ReplicaQuota = UNBOUNDED_QUOTA,
                 time: Time = Time.SYSTEM) -> None:
        super().__init__(name, name, source_broker, failed_partitions,
                         fetch_back_off_ms=broker_config.replica_fetch_backoff_ms, is_interruptible=False, time=time)
        self.replica_mgr = replica_mgr
        self.quota = quota
        self.replica_id: int = broker_config.broker_id
        self._max_bytes: int = broker_config.replica_fetch_response_max_bytes
        self._fetch_size: int = broker_config.replica_fetch_max_bytes
        self._in_progress_partition: Optional[TopicPartition] = None
        self.logger.ident = f"[ReplicaAlterLogDirsThread name={name}] "

    @property
    def is_offset_for_leader_epoch_supported(self) -> bool:
        return True

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return False

    # ------------------------------------------------------------------ the future log

    def _future_log(self, topic_partition: TopicPartition):
        return self.replica_mgr.future_local_log_or_exception(topic_partition)

    def latest_epoch(self, topic_partition: TopicPartition) -> Optional[int]:
        return self._future_log(topic_partition).latest_epoch

    def log_start_offset(self, topic_partition: TopicPartition) -> int:
        return self._future_log(topic_partition).log_start_offset

    def log_end_offset(self, topic_partition: TopicPartition) -> int:
        return self._future_log(topic_partition).log_end_offset

    def end_offset_for_epoch(self, topic_partition: TopicPartition, epoch: int) -> Optional[OffsetAndEpoch]:
        found = self._future_log(topic_partition).end_offset_for_epoch(epoch)
        return None if found is None else OffsetAndEpoch(found[0], found[1])

    # ------------------------------------------------------------------ partitions

    def add_partitions(self, initial_fetch_states: Mapping[TopicPartition, InitialFetchState]) -> set[TopicPartition]:
        with self.partition_map_lock:
            # a move may have finished since the caller looked: only partitions still moving
            still_moving = {}
            for tp, state in initial_fetch_states.items():
                try:
                    if not self.replica_mgr.future_log_exists(tp):
                        continue
                    # The initial offset is the current log's high watermark when a LeaderAndIsr
                    # (re)adds the move: the future log is truncated to it, and fetches from it.
                    # A future log that ends below it (nothing or little copied yet, and no epoch
                    # to truncate by) fetches from its own end instead; Kafka fetches from the
                    # high watermark there and fails the partition on the offset mismatch.
                    end = self.log_end_offset(tp)
                    if 0 <= end < state.init_offset:
                        state = InitialFetchState(state.leader, state.current_leader_epoch, end)
                    still_moving[tp] = state
                except Exception as e:  # noqa: BLE001 - the partition went away meanwhile
                    self.logger.debug("Not adding %s: %s", tp, e)
            return super().add_partitions(still_moving)

    # ------------------------------------------------------------------ appending

    def process_partition_data(self, topic_partition: TopicPartition, fetch_offset: int,
                               partition_data: FetchPartitionData) -> Optional[LogAppendInfo]:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        future_log = partition.future_local_log_or_exception()
        records = _to_memory_records(partition_data.records)
        if fetch_offset != future_log.log_end_offset:
            raise RuntimeError(f"Offset mismatch for the future replica {topic_partition}: fetched offset = "
                               f"{fetch_offset}, log end offset = {future_log.log_end_offset}.")
        size = records.size_in_bytes
        log_append_info = (partition.append_records_to_follower_or_future_replica(records, is_future=True)
                           if size > 0 else None)
        future_log.update_high_watermark(partition_data.high_watermark)
        future_log.maybe_increment_log_start_offset(partition_data.log_start_offset,
                                                    LogStartOffsetIncrementReason.LEADER_OFFSET_INCREMENTED)
        self.quota.record(size)
        if partition.maybe_replace_current_with_future_replica():
            self.logger.info("The future log of %s caught up and replaced the current log",
                             topic_partition)
            self.remove_partitions([topic_partition])
            # the partition has left this thread: no fetch state or lag of it to update
            return None
        return log_append_info

    def truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> None:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        partition.truncate_to(truncation_state.offset, is_future=True)

    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, offset: int) -> None:
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        partition.truncate_fully_and_start_at(offset, is_future=True)

    # ------------------------------------------------------------------ reading the current log

    def fetch_from_leader(self, fetch_request: LocalFetch) -> dict[TopicPartition, FetchPartitionData]:
        results = self.replica_mgr.read_from_local_log(
            FUTURE_LOCAL_REPLICA_ID, False, FetchIsolation.LOG_END, fetch_request.max_bytes, False,
            fetch_request.partitions, UNBOUNDED_QUOTA, None)
        return {tp: result.to_fetch_partition_data(False) for tp, result in results}

    def fetch_earliest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int:
        return self.replica_mgr.get_partition_or_exception(topic_partition).local_log_or_exception().log_start_offset

    def fetch_latest_offset_from_leader(self, topic_partition: TopicPartition, current_leader_epoch: int) -> int:
        return self.replica_mgr.get_partition_or_exception(topic_partition).local_log_or_exception().log_end_offset

    def fetch_epoch_end_offsets(self, partitions: Mapping[TopicPartition, EpochData]
                                ) -> dict[TopicPartition, EpochEndOffset]:
        """Where each epoch ends in the current log, asked of the partition here."""
        result: dict[TopicPartition, EpochEndOffset] = {}
        for tp, epoch_data in partitions.items():
            try:
                if epoch_data.leader_epoch == UNDEFINED_EPOCH:
                    result[tp] = EpochEndOffset(Errors.NONE, tp.partition)
                else:
                    partition = self.replica_mgr.get_partition_or_exception(tp)
                    current = epoch_data.current_leader_epoch
                    result[tp] = partition.last_offset_for_leader_epoch(
                        None if current is None or current < 0 else current, epoch_data.leader_epoch, False)
            except Exception as e:  # noqa: BLE001 - answered as the partition's error
                self.logger.warning("Error when getting EpochEndOffset for %s: %s", tp, e)
                result[tp] = EpochEndOffset(Errors.for_exception(e), tp.partition)
        return result

    # ------------------------------------------------------------------ building a round

    def _next_ready_partition(self, partition_map: Mapping[TopicPartition, PartitionFetchState]
                              ) -> Optional[tuple[TopicPartition, PartitionFetchState]]:
        ready = [(tp, state) for tp, state in partition_map.items() if state.is_ready_for_fetch]
        if not ready:
            return None
        return min(ready, key=lambda item: (item[0].topic, item[0].partition))

    def _select_partition_to_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]
                                   ) -> Optional[tuple[TopicPartition, PartitionFetchState]]:
        # one partition at a time: the one in progress while it can fetch, else the first ready
        in_progress = self._in_progress_partition
        if in_progress is not None:
            state = partition_map.get(in_progress)
            if state is not None and state.is_ready_for_fetch:
                return in_progress, state
        self._in_progress_partition = None
        chosen = self._next_ready_partition(partition_map)
        if chosen is not None:
            tp, state = chosen
            self._in_progress_partition = tp
            self.logger.info("Beginning/resuming copy of partition %s from offset %d. Including this partition, there "
                             "are %d remaining partitions to copy by this thread.", tp,
                             state.fetch_offset, len(partition_map))
        return chosen

    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        if self.quota.is_quota_exceeded():
            return ResultWithPartitions(None, frozenset())
        chosen = self._select_partition_to_fetch(partition_map)
        if chosen is None:
            return ResultWithPartitions(None, frozenset())
        tp, fetch_state = chosen
        try:
            log_start_offset = self._future_log(tp).log_start_offset
        except KafkaStorageException as e:
            self.logger.debug("Failed to build fetch for %s: %s", tp, e)
            return ResultWithPartitions(None, frozenset({tp}))
        except Exception as e:  # noqa: BLE001 - the move was given up meanwhile; back it off
            self.logger.debug("Leaving %s out of the fetch: %s", tp, e)
            return ResultWithPartitions(None, frozenset({tp}))
        data = PartitionData(fetch_state.fetch_offset, log_start_offset, self._fetch_size,
                             fetch_state.current_leader_epoch, None)
        request = LocalFetch(((tp, data),), self._max_bytes)
        return ResultWithPartitions(ReplicaFetch({tp: data}, request), frozenset())


def _to_memory_records(records: Any) -> MemoryRecords:
    """The records read from the current log's segment file, in memory to be appended."""
    if isinstance(records, MemoryRecords):
        return records
    size = len(records)
    if size == 0:
        return MemoryRecords.EMPTY
    return records.read_into(bytearray(size), 0)


__all__ = ["ReplicaAlterLogDirsThread", "LocalFetch"]
