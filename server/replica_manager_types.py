"""Port of the case classes at the head of core/src/main/scala/kafka/server/ReplicaManager.scala
(Kafka 2.8.2): HostedPartition, LogDeleteRecordsResult and FetchPartitionData.

Kafka declares them beside ReplicaManager, and Scala lets the classes ReplicaManager builds
on (Partition, DelayedDeleteRecords, the replica fetchers) use them while ReplicaManager
uses those classes. Python modules cannot import each other that way, so these types live
one step below ReplicaManager, where all of them can import them:

* ``HostedPartition``: what ``ReplicaManager.get_partition`` answers, read by
  DelayedDeleteRecords;
* ``LogDeleteRecordsResult``: what ``Partition.delete_records_on_leader`` answers;
* ``FetchPartitionData``: one partition of a fetch answer, made by ReplicaManager's reads
  and by the ReplicaFetcherThread from its leader's Fetch response.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.requests import EpochEndOffset
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords

if TYPE_CHECKING:
    from kafka_py.core.cluster.partition import Partition


class HostedPartition:
    """Kafka's HostedPartition: None (not hosted), Online(partition) or Offline (failed log dir)."""

    __slots__ = ()
    NONE: "HostedPartition"
    OFFLINE: "HostedPartition"

    @dataclass(frozen=True, eq=False, slots=True)
    class Online:
        partition: Partition


class _NoneHostedPartition(HostedPartition):
    __slots__ = ()

    def __repr__(self) -> str:
        return "HostedPartition.None"


class _OfflineHostedPartition(HostedPartition):
    __slots__ = ()

    def __repr__(self) -> str:
        return "HostedPartition.Offline"


HostedPartition.NONE = _NoneHostedPartition()
HostedPartition.OFFLINE = _OfflineHostedPartition()

# what the replica manager holds per partition: NONE, OFFLINE or an Online(partition)
HostedPartitionState = HostedPartition | HostedPartition.Online


@dataclass(frozen=True, slots=True)
class LogDeleteRecordsResult:
    """Result of DeleteRecords on the leader's log."""

    requested_offset: int
    low_watermark: int
    exception: Optional[BaseException] = None

    @property
    def error(self) -> Errors:
        return Errors.NONE if self.exception is None else Errors.for_exception(self.exception)


@dataclass(frozen=True, slots=True)
class FetchPartitionData:
    """One partition of a fetch answer. ``records`` is a FileRecords slice (to be sent with
    sendfile) or MemoryRecords.EMPTY on the leader, the fetched bytes on a follower (its
    fetcher's answer); ``last_stable_offset`` is None after an error."""

    error: Errors
    high_watermark: int
    log_start_offset: int
    records: FileRecords | MemoryRecords | memoryview | bytes
    diverging_epoch: Optional[EpochEndOffset] = None
    last_stable_offset: Optional[int] = None
    aborted_transactions: Optional[list] = None
    preferred_read_replica: Optional[int] = None
    is_reassignment_fetch: bool = False

    @property
    def error_code(self) -> int:
        return self.error.code


__all__ = ["HostedPartition", "LogDeleteRecordsResult", "FetchPartitionData"]
