"""Port of core/src/main/scala/kafka/server/DelayedFetch.scala.

A fetch that found fewer than ``fetch_min_bytes`` waits here (long poll) until enough bytes
have accumulated past its fetch positions, something changes that the fetcher must hear
about at once (leadership moved, the partition went away or offline, its epoch was fenced,
the log rolled or was truncated under it, a diverging epoch appeared), or ``max_wait_ms``
passes. It then reads again and answers with whatever is there.

The byte count is worked out from offset metadata alone (segment and position of the fetch
offset and of the end the fetcher may read to), so waking a waiting fetch costs no I/O.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from kafka_py.clients.common.errors import (
    KafkaStorageException,
    NotLeaderOrFollowerException,
    UnknownTopicOrPartitionException,
)
from kafka_py.clients.common.replica_selector import ClientMetadata
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_offset_metadata import UNKNOWN_OFFSET_METADATA, FetchIsolation, LogOffsetMetadata
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, PartitionData
from kafka_py.server.delayed_operation import DelayedOperation
from kafka_py.server.replica_manager_types import FetchPartitionData
from kafka_py.server.replication_quota_manager import ReplicaQuota

if TYPE_CHECKING:
    # the replica manager makes DelayedFetches
    from kafka_py.server.replica_manager import ReplicaManager

logger = logging.getLogger(__name__)

_FencedLeaderEpochException = Errors.FENCED_LEADER_EPOCH.exception_class


@dataclass(frozen=True, slots=True)
class FetchPartitionStatus:
    """Where a waiting fetch started reading a partition, and what it asked for."""

    start_offset_metadata: LogOffsetMetadata
    fetch_info: PartitionData

    def __str__(self) -> str:
        return f"[startOffsetMetadata: {self.start_offset_metadata}, fetchInfo: {self.fetch_info}]"


@dataclass(frozen=True, slots=True)
class FetchMetadata:
    fetch_min_bytes: int
    fetch_max_bytes: int
    hard_max_bytes_limit: bool
    fetch_only_leader: bool
    fetch_isolation: FetchIsolation
    is_from_follower: bool
    replica_id: int
    fetch_partition_status: Sequence[tuple[TopicPartition, FetchPartitionStatus]]

    def __str__(self) -> str:
        return (f"FetchMetadata(minBytes={self.fetch_min_bytes}, maxBytes={self.fetch_max_bytes}, "
                f"onlyLeader={self.fetch_only_leader}, fetchIsolation={self.fetch_isolation}, "
                f"replicaId={self.replica_id}, partitionStatus={list(self.fetch_partition_status)})")


class DelayedFetch(DelayedOperation):
    """A fetch watched in the "Fetch" purgatory under each of its partitions."""

    def __init__(self, delay_ms: int, fetch_metadata: FetchMetadata, replica_manager: ReplicaManager,
                 quota: Optional[ReplicaQuota], client_metadata: Optional[ClientMetadata],
                 response_callback: Callable[[list[tuple[TopicPartition, FetchPartitionData]]], None]) -> None:
        super().__init__(delay_ms)
        self.fetch_metadata = fetch_metadata
        self.replica_manager = replica_manager
        self.quota = quota
        self.client_metadata = client_metadata
        self.response_callback = response_callback

    def try_complete(self) -> bool:
        """Complete if, for some partition, this broker no longer leads or knows it, it is offline,
        the epoch was fenced, the fetch position is on another segment than the readable end,
        or a diverging epoch appeared; or if enough bytes have accumulated over all partitions."""
        metadata = self.fetch_metadata
        accumulated_size = 0
        for tp, fetch_status in metadata.fetch_partition_status:
            fetch_offset = fetch_status.start_offset_metadata
            fetch_leader_epoch = fetch_status.fetch_info.current_leader_epoch
            try:
                if fetch_offset == UNKNOWN_OFFSET_METADATA:
                    continue
                partition = self.replica_manager.get_partition_or_exception(tp)
                snapshot = partition.fetch_offset_snapshot(fetch_leader_epoch, metadata.fetch_only_leader)
                isolation = metadata.fetch_isolation
                if isolation is FetchIsolation.LOG_END:
                    end_offset = snapshot.log_end_offset
                elif isolation is FetchIsolation.HIGH_WATERMARK:
                    end_offset = snapshot.high_watermark
                else:
                    end_offset = snapshot.last_stable_offset

                # Equal offsets go straight to the byte count: right after a roll the HW keeps its
                # offset but sits on the old segment, which is not a reason to answer.
                if end_offset.message_offset != fetch_offset.message_offset:
                    if end_offset.on_older_segment(fetch_offset):
                        # the leader was truncated below the fetch position
                        logger.debug("Satisfying fetch %s since it is fetching later segments of partition %s.",
                                     metadata, tp)
                        return self.force_complete()
                    if fetch_offset.on_older_segment(end_offset):
                        # the fetcher is behind, or the log just rolled: the old segment has data to give
                        logger.debug("Satisfying fetch %s immediately since it is fetching older segments.",
                                     metadata)
                        if not self.replica_manager.should_leader_throttle(self.quota, partition,
                                                                           metadata.replica_id):
                            return self.force_complete()
                    elif fetch_offset.message_offset < end_offset.message_offset:
                        # a partition counts for no more than it asked for
                        bytes_available = min(end_offset.position_diff(fetch_offset), fetch_status.fetch_info.max_bytes)
                        if not self.replica_manager.should_leader_throttle(self.quota, partition,
                                                                           metadata.replica_id):
                            accumulated_size += bytes_available

                last_fetched_epoch = getattr(fetch_status.fetch_info, "last_fetched_epoch", None)
                if last_fetched_epoch is not None and last_fetched_epoch >= 0:
                    epoch_end = partition.last_offset_for_leader_epoch(fetch_leader_epoch, last_fetched_epoch, False)
                    if (epoch_end.error is not Errors.NONE or epoch_end.end_offset == UNDEFINED_EPOCH_OFFSET
                            or epoch_end.leader_epoch == UNDEFINED_EPOCH):
                        return self.force_complete()
                    if (epoch_end.leader_epoch < last_fetched_epoch
                            or epoch_end.end_offset < fetch_status.fetch_info.fetch_offset):
                        # truncation while waiting: the fetcher must learn of the divergence now
                        return self.force_complete()
            except NotLeaderOrFollowerException:
                logger.debug("Broker is no longer the leader or follower of %s, satisfy %s immediately", tp, metadata)
                return self.force_complete()
            except UnknownTopicOrPartitionException:
                logger.debug("Broker no longer knows of partition %s, satisfy %s immediately", tp, metadata)
                return self.force_complete()
            except KafkaStorageException:
                logger.debug("Partition %s is in an offline log directory, satisfy %s immediately", tp, metadata)
                return self.force_complete()
            except _FencedLeaderEpochException:
                logger.debug("Broker is the leader of partition %s, but the requested epoch %s is fenced by the "
                             "latest leader epoch, satisfy %s immediately", tp, fetch_leader_epoch, metadata)
                return self.force_complete()

        if accumulated_size >= metadata.fetch_min_bytes:
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        pass

    def on_complete(self) -> None:
        """Read again, whatever is there now, and answer."""
        metadata = self.fetch_metadata
        log_read_results = self.replica_manager.read_from_local_log(
            replica_id=metadata.replica_id,
            fetch_only_from_leader=metadata.fetch_only_leader,
            fetch_isolation=metadata.fetch_isolation,
            fetch_max_bytes=metadata.fetch_max_bytes,
            hard_max_bytes_limit=metadata.hard_max_bytes_limit,
            read_partition_info=[(tp, status.fetch_info) for tp, status in metadata.fetch_partition_status],
            quota=self.quota,
            client_metadata=self.client_metadata)
        fetch_partition_data = []
        for tp, result in log_read_results:
            is_reassignment_fetch = (metadata.is_from_follower
                                     and self.replica_manager.is_adding_replica(tp, metadata.replica_id))
            fetch_partition_data.append((tp, result.to_fetch_partition_data(is_reassignment_fetch)))
        self.response_callback(fetch_partition_data)
