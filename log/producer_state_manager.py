"""Port of core/src/main/scala/kafka/log/ProducerStateManager.scala.

Tracks, per partition, what each idempotent or transactional producer last
wrote: its epoch, the sequence/offset ranges of its last five batches (to spot
retried duplicates), the coordinator epoch of its last transaction marker and
the first offset of its open transaction. The open transactions give the
partition's first unstable offset, from which the log derives the last stable
offset.

The state is persisted in ``<20-digit offset>.snapshot`` files in the log
directory, in Kafka's binary format (all big-endian)::

    version                  int16   (1)
    crc                      uint32  CRC-32C of every byte after this field
    producer_entries         array   int32 count, then per entry:
        producer_id              int64
        epoch                    int16
        last_sequence            int32
        last_offset              int64
        offset_delta             int32
        timestamp                int64
        coordinator_epoch        int32
        current_txn_first_offset int64   (-1: no open transaction)

The transaction verifications in progress (KIP-890, log/verification_guard.py) are kept here
too, by producer id, in memory only: a ``VerificationStateEntry`` lives from the leader's
question to the coordinator until the producer's first transactional append (or a marker)
uses it, or until it expires with idle producers.

Also here, as Kafka keeps them beside the log: ``AppendOrigin``,
``CompletedTxn`` and ``LastRecord`` (Log.scala / LogValidator.scala).
Control batches are decoded with kafka_py.clients.common.record.control_record_type.

Not thread safe, as in Kafka: the owning Log calls it under its own lock.
Only the snapshot bookkeeping (``delete_snapshots_before`` and friends) takes
a lock of its own, because retention may call it from another thread.
"""
from __future__ import annotations

import bisect
import enum
import logging
import os
import struct
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, Iterable, Iterator, Mapping, Optional, TypeVar

import crc32c

from kafka_py.clients.common.errors import (
    InvalidProducerEpochException,
    InvalidTxnStateException,
    KafkaException,
    OutOfOrderSequenceException,
    TransactionCoordinatorFencedException,
)
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.log.log_files import (
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    offset_from_file,
    producer_snapshot_file,
)
from kafka_py.log.log_offset_metadata import LogOffsetMetadata
from kafka_py.log.verification_guard import VerificationStateEntry
from kafka_py.clients.common.record.control_record_type import ControlRecordType, EndTransactionMarker
from kafka_py.clients.common.record.default_record_batch import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    decrement_sequence,
)
from kafka_py.core.utils.crash_points import crash_point
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.core.utils.logging import IdentLogger
from kafka_py.clients.common.utils.utils import write_fully

logger = logging.getLogger(__name__)

__all__ = [
    "AppendOrigin",
    "BatchMetadata",
    "CompletedTxn",
    "ControlRecordType",
    "CorruptSnapshotException",
    "EndTransactionMarker",
    "LastRecord",
    "ProducerAppendInfo",
    "ProducerStateEntry",
    "ProducerStateManager",
    "SnapshotFile",
    "TxnMetadata",
    "PRODUCER_SNAPSHOT_FILE_SUFFIX",
    "producer_snapshot_file",
    "offset_from_file",
]


PRODUCER_SNAPSHOT_VERSION = 1
_VERSION_OFFSET = 0
_CRC_OFFSET = _VERSION_OFFSET + 2
_PRODUCER_ENTRIES_OFFSET = _CRC_OFFSET + 4
_HEADER = struct.Struct(">hI")
_ARRAY_SIZE = struct.Struct(">i")
# producer_id, epoch, last_sequence, last_offset, offset_delta, timestamp,
# coordinator_epoch, current_txn_first_offset
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


class CorruptSnapshotException(KafkaException):
    """A producer snapshot file cannot be trusted (bad version, CRC or layout)."""


class AppendOrigin(enum.Enum):
    """Who is appending, which decides how much producer state is validated.

    Replicated data was validated by the leader, so it is taken as is; the
    group coordinator writes without sequence numbers, so only epochs are
    checked; client appends get the full epoch and sequence checks.
    """

    REPLICATION = "Replication"
    COORDINATOR = "Coordinator"
    CLIENT = "Client"
    RAFT_LEADER = "RaftLeader"


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction closed by the COMMIT/ABORT marker at ``last_offset`` (both offsets inclusive)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(frozen=True, slots=True)
class LastRecord:
    """A producer's last write; ``last_data_offset`` is None when only a marker is left."""

    last_data_offset: Optional[int]
    producer_epoch: int


def _first_record(batch: Any) -> Any:
    # FileChannelRecordBatch only has its header in memory; load() reads the body.
    if hasattr(batch, "load"):
        batch = batch.load()
    return next(iter(batch), None)


# -- per-producer state ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Sequence and offset range of one appended batch, for duplicate detection."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta

    def __str__(self) -> str:
        return (
            f"BatchMetadata(firstSeq={self.first_seq}, lastSeq={self.last_seq}, "
            f"firstOffset={self.first_offset}, lastOffset={self.last_offset}, timestamp={self.timestamp})"
        )


@dataclass(slots=True)
class TxnMetadata:
    """An open (or completed but not yet replicated) transaction of one producer."""

    producer_id: int
    first_offset: LogOffsetMetadata
    last_offset: Optional[int] = None


class ProducerStateEntry:
    """What one producer id last wrote.

    ``batch_metadata`` holds the last NUM_BATCHES_TO_RETAIN batches, oldest
    first: a producer may have that many requests in flight, so a retry of any
    of them must still be recognised as a duplicate.
    """

    NUM_BATCHES_TO_RETAIN = 5

    __slots__ = (
        "producer_id",
        "batch_metadata",
        "producer_epoch",
        "coordinator_epoch",
        "last_timestamp",
        "current_txn_first_offset",
    )

    def __init__(
        self,
        producer_id: int,
        batch_metadata: Iterable[BatchMetadata] = (),
        producer_epoch: int = NO_PRODUCER_EPOCH,
        coordinator_epoch: int = -1,
        last_timestamp: int = NO_TIMESTAMP,
        current_txn_first_offset: Optional[int] = None,
    ):
        self.producer_id = producer_id
        self.batch_metadata: deque[BatchMetadata] = deque(batch_metadata, maxlen=self.NUM_BATCHES_TO_RETAIN)
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = last_timestamp
        self.current_txn_first_offset = current_txn_first_offset

    @classmethod
    def empty(cls, producer_id: int) -> "ProducerStateEntry":
        return cls(producer_id)

    @property
    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self.batch_metadata[0].first_offset if self.batch_metadata else -1

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        # deque(maxlen) drops the oldest batch once five are kept.
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """Switch to ``producer_epoch``; sequences restart with a new epoch, so old batches go."""
        if self.producer_epoch != producer_epoch:
            self.batch_metadata.clear()
            self.producer_epoch = producer_epoch
            return True
        return False

    def update(self, next_entry: "ProducerStateEntry") -> None:
        self.maybe_update_producer_epoch(next_entry.producer_epoch)
        self.batch_metadata.extend(next_entry.batch_metadata)
        self.coordinator_epoch = next_entry.coordinator_epoch
        self.current_txn_first_offset = next_entry.current_txn_first_offset
        self.last_timestamp = next_entry.last_timestamp

    def find_duplicate_batch(self, batch: Any) -> Optional[BatchMetadata]:
        """The retained batch with the same epoch and sequence range as ``batch``, if any."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, batch.last_sequence)

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> Optional[BatchMetadata]:
        for metadata in self.batch_metadata:
            if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                return metadata
        return None

    def copy(self) -> "ProducerStateEntry":
        return ProducerStateEntry(
            self.producer_id,
            self.batch_metadata,
            self.producer_epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProducerStateEntry):
            return NotImplemented
        return (
            self.producer_id == other.producer_id
            and list(self.batch_metadata) == list(other.batch_metadata)
            and self.producer_epoch == other.producer_epoch
            and self.coordinator_epoch == other.coordinator_epoch
            and self.last_timestamp == other.last_timestamp
            and self.current_txn_first_offset == other.current_txn_first_offset
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"ProducerStateEntry(producerId={self.producer_id}, producerEpoch={self.producer_epoch}, "
            f"currentTxnFirstOffset={self.current_txn_first_offset}, "
            f"coordinatorEpoch={self.coordinator_epoch}, lastTimestamp={self.last_timestamp}, "
            f"batchMetadata=[{', '.join(str(b) for b in self.batch_metadata)}])"
        )


class ProducerAppendInfo:
    """Validates one producer's batches of an append before any of them is written.

    Starts from the producer's state after its last successful append and
    builds the state it will have after this append, checking each batch's
    epoch and sequence against it; nothing reaches the ProducerStateManager
    until ``ProducerStateManager.update`` is called with this object, so a
    rejected append leaves no trace. Also collects the transactions this
    append opens.
    """

    def __init__(
        self,
        topic_partition: TopicPartition,
        producer_id: int,
        current_entry: ProducerStateEntry,
        origin: AppendOrigin,
        verification_state_entry: Optional[VerificationStateEntry] = None,
    ):
        self.topic_partition = topic_partition
        self.producer_id = producer_id
        self.current_entry = current_entry
        self.origin = origin
        # the producer's transaction verification in progress, if any (log/verification_guard.py)
        self.verification_state_entry = verification_state_entry
        self._transactions: list[TxnMetadata] = []
        self._updated_entry = ProducerStateEntry(
            producer_id,
            producer_epoch=current_entry.producer_epoch,
            coordinator_epoch=current_entry.coordinator_epoch,
            last_timestamp=current_entry.last_timestamp,
            current_txn_first_offset=current_entry.current_txn_first_offset,
        )

    def _maybe_validate_data_batch(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        self._check_producer_epoch(producer_epoch, offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(producer_epoch, first_seq, offset)

    def _check_producer_epoch(self, producer_epoch: int, offset: int) -> None:
        if producer_epoch < self._updated_entry.producer_epoch:
            message = (
                f"Epoch of producer {self.producer_id} at offset {offset} in {self.topic_partition} is "
                f"{producer_epoch}, which is smaller than the last seen epoch "
                f"{self._updated_entry.producer_epoch}"
            )
            if self.origin is AppendOrigin.REPLICATION:
                # The leader accepted it; a follower must not diverge from the leader's log.
                logger.warning("%s", message)
            else:
                # Since 2.7 a stale epoch on produce is InvalidProducerEpoch (abortable)
                # rather than the fatal ProducerFenced.
                raise InvalidProducerEpochException(message)

    def _check_sequence(self, producer_epoch: int, append_first_seq: int, offset: int) -> None:
        verifying = self.verification_state_entry
        if verifying is not None and append_first_seq > verifying.lowest_sequence:
            # a lower sequence of this producer is still waiting for its verification
            raise OutOfOrderSequenceException(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} in partition "
                f"{self.topic_partition}: {append_first_seq} (incoming seq. number), "
                f"{verifying.lowest_sequence} (earliest seen sequence)"
            )
        updated = self._updated_entry
        if producer_epoch != updated.producer_epoch:
            # A new epoch must start over at sequence 0, unless the producer is
            # unknown here (no epoch on record): then any sequence is accepted.
            if append_first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceException(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at offset "
                    f"{offset} in partition {self.topic_partition}: {producer_epoch} (request epoch), "
                    f"{append_first_seq} (seq. number), {updated.producer_epoch} (current producer epoch)"
                )
        else:
            if not updated.is_empty:
                current_last_seq = updated.last_seq
            elif producer_epoch == self.current_entry.producer_epoch:
                current_last_seq = self.current_entry.last_seq
            else:
                current_last_seq = NO_SEQUENCE
            # With no epoch on record (all of the producer's data was removed by
            # retention or DeleteRecords) any sequence is accepted.
            if not (
                self.current_entry.producer_epoch == NO_PRODUCER_EPOCH
                or _in_sequence(current_last_seq, append_first_seq)
            ):
                raise OutOfOrderSequenceException(
                    f"Out of order sequence number for producer {self.producer_id} at offset {offset} in "
                    f"partition {self.topic_partition}: {append_first_seq} (incoming seq. number), "
                    f"{current_last_seq} (current end sequence number)"
                )

    def append(self, batch: Any, first_offset_metadata: Optional[LogOffsetMetadata] = None) -> Optional[CompletedTxn]:
        """Apply one batch of this producer; returns the transaction a control batch completes."""
        if batch.is_control_batch:
            record = _first_record(batch)
            if record is None:
                # The cleaner removed the whole transaction; the empty marker batch changes nothing.
                return None
            marker = EndTransactionMarker.deserialize(record)
            return self.append_end_txn_marker(marker, batch.producer_epoch, batch.base_offset, record.timestamp)
        if first_offset_metadata is None:
            first_offset_metadata = LogOffsetMetadata(batch.base_offset)
        self.append_data_batch(
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.max_timestamp,
            first_offset_metadata,
            batch.last_offset,
            batch.is_transactional,
        )
        return None

    def append_data_batch(
        self,
        epoch: int,
        first_seq: int,
        last_seq: int,
        last_timestamp: int,
        first_offset_metadata: LogOffsetMetadata,
        last_offset: int,
        is_transactional: bool,
    ) -> None:
        first_offset = first_offset_metadata.message_offset
        self._maybe_validate_data_batch(epoch, first_seq, first_offset)
        updated = self._updated_entry
        updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp)
        if updated.current_txn_first_offset is not None:
            if not is_transactional:
                raise InvalidTxnStateException(
                    f"Expected transactional write from producer {self.producer_id} at offset "
                    f"{first_offset_metadata} in partition {self.topic_partition}"
                )
        elif is_transactional:
            updated.current_txn_first_offset = first_offset
            self._transactions.append(TxnMetadata(self.producer_id, first_offset_metadata))

    def _check_coordinator_epoch(self, end_txn_marker: EndTransactionMarker, offset: int) -> None:
        if self._updated_entry.coordinator_epoch > end_txn_marker.coordinator_epoch:
            if self.origin is AppendOrigin.REPLICATION:
                logger.info(
                    "Detected invalid coordinator epoch for producerId %d at offset %d in partition %s: "
                    "%d is older than previously known coordinator epoch %d",
                    self.producer_id, offset, self.topic_partition,
                    end_txn_marker.coordinator_epoch, self._updated_entry.coordinator_epoch,
                )
            else:
                raise TransactionCoordinatorFencedException(
                    f"Invalid coordinator epoch for producerId {self.producer_id} at offset {offset} in "
                    f"partition {self.topic_partition}: {end_txn_marker.coordinator_epoch} (zombie), "
                    f"{self._updated_entry.coordinator_epoch} (current)"
                )

    def append_end_txn_marker(
        self,
        end_txn_marker: EndTransactionMarker,
        producer_epoch: int,
        offset: int,
        timestamp: int,
    ) -> Optional[CompletedTxn]:
        self._check_producer_epoch(producer_epoch, offset)
        self._check_coordinator_epoch(end_txn_marker, offset)
        updated = self._updated_entry
        # A marker with no data before it does not move the LSO and needs no
        # transaction index entry, so only a non-empty transaction completes.
        completed_txn = None
        if updated.current_txn_first_offset is not None:
            completed_txn = CompletedTxn(
                self.producer_id,
                updated.current_txn_first_offset,
                offset,
                end_txn_marker.control_type == ControlRecordType.ABORT,
            )
        updated.maybe_update_producer_epoch(producer_epoch)
        updated.current_txn_first_offset = None
        updated.coordinator_epoch = end_txn_marker.coordinator_epoch
        updated.last_timestamp = timestamp
        return completed_txn

    def to_entry(self) -> ProducerStateEntry:
        return self._updated_entry

    @property
    def started_transactions(self) -> list[TxnMetadata]:
        return list(self._transactions)

    def __repr__(self) -> str:
        u = self._updated_entry
        return (
            f"ProducerAppendInfo(producerId={self.producer_id}, producerEpoch={u.producer_epoch}, "
            f"firstSequence={u.first_seq}, lastSequence={u.last_seq}, "
            f"currentTxnFirstOffset={u.current_txn_first_offset}, coordinatorEpoch={u.coordinator_epoch}, "
            f"lastTimestamp={u.last_timestamp}, startedTransactions={self._transactions})"
        )


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT_MAX)


# -- snapshot files ------------------------------------------------------------------


@dataclass(slots=True)
class SnapshotFile:
    """A producer snapshot on disk; ``offset`` is the (exclusive) end offset it covers."""

    file: str
    offset: int

    @classmethod
    def of(cls, file: str) -> "SnapshotFile":
        return cls(file, offset_from_file(file))

    def delete_if_exists(self) -> bool:
        try:
            os.remove(self.file)
            return True
        except FileNotFoundError:
            return False

    def update_parent_dir(self, parent_dir: str) -> None:
        self.file = os.path.join(parent_dir, os.path.basename(self.file))


V = TypeVar("V")


class _SortedOffsetMap(Generic[V]):
    """A small ordered map keyed by offset (Kafka uses TreeMap / ConcurrentSkipListMap)."""

    __slots__ = ("_keys", "_values")

    def __init__(self) -> None:
        self._keys: list[int] = []
        self._values: dict[int, V] = {}

    def put(self, key: int, value: V) -> None:
        if key not in self._values:
            bisect.insort(self._keys, key)
        self._values[key] = value

    def remove(self, key: int) -> Optional[V]:
        value = self._values.pop(key, None)
        if value is not None:
            del self._keys[bisect.bisect_left(self._keys, key)]
        return value

    def first_value(self) -> Optional[V]:
        return self._values[self._keys[0]] if self._keys else None

    def last_value(self) -> Optional[V]:
        return self._values[self._keys[-1]] if self._keys else None

    def values(self) -> list[V]:
        return [self._values[k] for k in self._keys]

    def values_before(self, key: int) -> list[V]:
        return [self._values[k] for k in self._keys[: bisect.bisect_left(self._keys, key)]]

    def get(self, key: int) -> Optional[V]:
        return self._values.get(key)

    def clear(self) -> None:
        self._keys.clear()
        self._values.clear()

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._keys))


def _encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    entries = list(entries)
    buffer = bytearray(_PRODUCER_ENTRIES_OFFSET + _ARRAY_SIZE.size + _SNAPSHOT_ENTRY.size * len(entries))
    _ARRAY_SIZE.pack_into(buffer, _PRODUCER_ENTRIES_OFFSET, len(entries))
    position = _PRODUCER_ENTRIES_OFFSET + _ARRAY_SIZE.size
    for entry in entries:
        _SNAPSHOT_ENTRY.pack_into(
            buffer,
            position,
            entry.producer_id,
            entry.producer_epoch,
            entry.last_seq,
            entry.last_data_offset,
            entry.last_offset_delta,
            entry.last_timestamp,
            entry.coordinator_epoch,
            -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset,
        )
        position += _SNAPSHOT_ENTRY.size
    crc = crc32c.crc32c(memoryview(buffer)[_PRODUCER_ENTRIES_OFFSET:])
    _HEADER.pack_into(buffer, _VERSION_OFFSET, PRODUCER_SNAPSHOT_VERSION, crc)
    return bytes(buffer)


def _decode_snapshot(data: bytes) -> list[ProducerStateEntry]:
    if len(data) < _PRODUCER_ENTRIES_OFFSET + _ARRAY_SIZE.size:
        raise CorruptSnapshotException(
            f"Snapshot failed schema validation: {len(data)} bytes is too short for the snapshot header"
        )
    version, crc = _HEADER.unpack_from(data, _VERSION_OFFSET)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotException(f"Snapshot contained an unknown file version {version}")
    computed_crc = crc32c.crc32c(memoryview(data)[_PRODUCER_ENTRIES_OFFSET:])
    if crc != computed_crc:
        raise CorruptSnapshotException(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed_crc}"
        )
    (count,) = _ARRAY_SIZE.unpack_from(data, _PRODUCER_ENTRIES_OFFSET)
    position = _PRODUCER_ENTRIES_OFFSET + _ARRAY_SIZE.size
    available = len(data) - position
    if count < 0:
        raise CorruptSnapshotException(f"Snapshot failed schema validation: Array size {count} cannot be negative")
    if count * _SNAPSHOT_ENTRY.size > available:
        raise CorruptSnapshotException(
            f"Snapshot failed schema validation: Error reading array of size {count}, "
            f"only {available} bytes available"
        )
    entries = []
    for producer_id, epoch, seq, offset, offset_delta, timestamp, coordinator_epoch, txn_first in (
        _SNAPSHOT_ENTRY.iter_unpack(data[position : position + count * _SNAPSHOT_ENTRY.size])
    ):
        # A producer whose only record left is a marker has no data batch (offset -1).
        batches = [BatchMetadata(seq, offset, offset_delta, timestamp)] if offset >= 0 else []
        entries.append(
            ProducerStateEntry(
                producer_id,
                batches,
                epoch,
                coordinator_epoch,
                timestamp,
                txn_first if txn_first >= 0 else None,
            )
        )
    return entries


def _write_file_durably(path: str, data: bytes) -> None:
    # Through a temporary file, so a crash mid-write cannot leave a torn
    # snapshot under the real name (Kafka writes in place and relies on the CRC).
    tmp_path = path + ".tmp"
    fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            write_fully(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        crash_point("producer_state.snapshot.before_rename")
        os.replace(tmp_path, path)
    except BaseException:
        try:
            os.remove(tmp_path)
        except OSError:
            pass
        raise
    dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


# -- the manager ---------------------------------------------------------------------


class ProducerStateManager:
    """Producer id -> last write state of one partition, plus its open transactions.

    Producer ids stay as long as their data does and until they have been idle
    for ``max_producer_id_expiration_ms`` (a producer with an open transaction
    never expires). State survives restarts through snapshot files; offsets
    between the latest snapshot and the log end are rebuilt by the Log from
    the segments.
    """

    def __init__(
        self,
        topic_partition: TopicPartition,
        log_dir: str | os.PathLike[str],
        max_producer_id_expiration_ms: int = 86400000,
    ):
        self.topic_partition = topic_partition
        self._log_dir = os.fspath(log_dir)
        self.max_producer_id_expiration_ms = max_producer_id_expiration_ms
        self.logger = IdentLogger(logger, f"[ProducerStateManager partition={topic_partition}] ")
        self._snapshots_lock = threading.RLock()
        self._snapshots = self._load_snapshots()
        self._producers: dict[int, ProducerStateEntry] = {}
        self._last_map_offset = 0
        self._last_snap_offset = 0
        # Open transactions by first offset.
        self._ongoing_txns: _SortedOffsetMap[TxnMetadata] = _SortedOffsetMap()
        # Completed transactions whose marker is not yet below the high watermark.
        self._unreplicated_txns: _SortedOffsetMap[TxnMetadata] = _SortedOffsetMap()
        # Transaction verifications in progress, by producer id (log/verification_guard.py).
        self._verification_states: dict[int, VerificationStateEntry] = {}

    # -- file helpers (Kafka keeps these on the companion objects) -----------------------

    @staticmethod
    def is_snapshot_file(path: str | os.PathLike[str]) -> bool:
        return os.fspath(path).endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX)

    @staticmethod
    def offset_from_file(path: str | os.PathLike[str]) -> int:
        return offset_from_file(os.fspath(path))

    @staticmethod
    def list_snapshot_files(dir: str | os.PathLike[str]) -> list[SnapshotFile]:
        dir = os.fspath(dir)
        try:
            names = os.listdir(dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        result = []
        for name in names:
            path = os.path.join(dir, name)
            if ProducerStateManager.is_snapshot_file(name) and os.path.isfile(path):
                result.append(SnapshotFile.of(path))
        return result

    @staticmethod
    def read_snapshot(file: str | os.PathLike[str]) -> list[ProducerStateEntry]:
        """Entries of a snapshot file; CorruptSnapshotException if it cannot be trusted."""
        with open(file, "rb") as f:
            data = f.read()
        return _decode_snapshot(data)

    @staticmethod
    def write_snapshot(file: str | os.PathLike[str], entries: Mapping[int, ProducerStateEntry]) -> None:
        _write_file_durably(os.fspath(file), _encode_snapshot(entries.values()))

    # -- snapshots -----------------------------------------------------------------------

    def _load_snapshots(self) -> _SortedOffsetMap[SnapshotFile]:
        snapshots: _SortedOffsetMap[SnapshotFile] = _SortedOffsetMap()
        for snapshot in self.list_snapshot_files(self._log_dir):
            snapshots.put(snapshot.offset, snapshot)
        return snapshots

    def remove_stray_snapshots(self, segment_base_offsets: Iterable[int]) -> None:
        """Delete snapshots without a segment, except the newest one past every segment.

        A clean shutdown writes a snapshot at the log end offset, above the
        last segment's base offset; that one must survive, the rest without a
        segment are leftovers.
        """
        base_offsets = set(segment_base_offsets)
        max_segment_base_offset = max(base_offsets) if base_offsets else None
        with self._snapshots_lock:
            snapshots = self._load_snapshots()
            latest_stray: Optional[SnapshotFile] = None
            for snapshot in snapshots.values():
                if snapshot.offset not in base_offsets:
                    if latest_stray is not None:
                        latest_stray.delete_if_exists()
                        snapshots.remove(latest_stray.offset)
                    latest_stray = snapshot
            if (
                latest_stray is not None
                and max_segment_base_offset is not None
                and latest_stray.offset < max_segment_base_offset
            ):
                removed = snapshots.remove(latest_stray.offset)
                if removed is not None:
                    removed.delete_if_exists()
            self._snapshots = snapshots

    def take_snapshot(self) -> None:
        """Write a snapshot at the map end offset, unless one already covers it."""
        if self._last_map_offset > self._last_snap_offset:
            snapshot = SnapshotFile(producer_snapshot_file(self._log_dir, self._last_map_offset), self._last_map_offset)
            self.logger.info("Writing producer snapshot at offset %d", self._last_map_offset)
            self.write_snapshot(snapshot.file, self._producers)
            with self._snapshots_lock:
                self._snapshots.put(snapshot.offset, snapshot)
            self._last_snap_offset = self._last_map_offset

    def fetch_snapshot(self, offset: int) -> Optional[str]:
        """The path of the snapshot at exactly ``offset``, if there is one."""
        with self._snapshots_lock:
            snapshot = self._snapshots.get(offset)
        return None if snapshot is None else snapshot.file

    @property
    def latest_snapshot_offset(self) -> Optional[int]:
        snapshot = self._latest_snapshot_file()
        return None if snapshot is None else snapshot.offset

    @property
    def oldest_snapshot_offset(self) -> Optional[int]:
        with self._snapshots_lock:
            snapshot = self._snapshots.first_value()
        return None if snapshot is None else snapshot.offset

    def _latest_snapshot_file(self) -> Optional[SnapshotFile]:
        with self._snapshots_lock:
            return self._snapshots.last_value()

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete snapshot files with an offset below ``offset``. Thread safe."""
        with self._snapshots_lock:
            for snapshot in self._snapshots.values_before(offset):
                self.remove_and_delete_snapshot(snapshot.offset)

    def remove_and_delete_snapshot(self, snapshot_offset: int) -> None:
        with self._snapshots_lock:
            snapshot = self._snapshots.remove(snapshot_offset)
        if snapshot is not None:
            snapshot.delete_if_exists()

    def update_parent_dir(self, parent_dir: str | os.PathLike[str]) -> None:
        """Follow the log to a renamed directory (e.g. marked for deletion or moved)."""
        self._log_dir = os.fspath(parent_dir)
        with self._snapshots_lock:
            for snapshot in self._snapshots.values():
                snapshot.update_parent_dir(self._log_dir)

    @property
    def log_dir(self) -> str:
        return self._log_dir

    # -- loading and truncation ------------------------------------------------------------

    def _load_from_snapshot(self, log_start_offset: int, current_time_ms: int) -> None:
        while True:
            snapshot = self._latest_snapshot_file()
            if snapshot is None:
                self._last_snap_offset = log_start_offset
                self._last_map_offset = log_start_offset
                return
            try:
                self.logger.info("Loading producer state from snapshot file '%s'", snapshot.file)
                for entry in self.read_snapshot(snapshot.file):
                    if not self._is_producer_expired(current_time_ms, entry):
                        self.load_producer_entry(entry)
                self._last_snap_offset = snapshot.offset
                self._last_map_offset = snapshot.offset
                return
            except CorruptSnapshotException as e:
                # Fall back to the next older snapshot; the log is replayed from there.
                self.logger.warning(
                    "Failed to load producer snapshot from '%s': %s", snapshot.file, e
                )
                self.remove_and_delete_snapshot(snapshot.offset)

    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        self._producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            offset = entry.current_txn_first_offset
            self._ongoing_txns.put(offset, TxnMetadata(entry.producer_id, LogOffsetMetadata(offset)))

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, current_time_ms: int) -> None:
        """Drop snapshots outside (log_start_offset, log_end_offset] and reload from the newest left.

        When the map already ends at ``log_end_offset`` the in-memory state is
        kept, only moved past ``log_start_offset``. The log end offset is
        assumed to be at or below the high watermark, which is why the
        unreplicated transactions can be dropped.
        """
        with self._snapshots_lock:
            for snapshot in self._snapshots.values():
                if snapshot.offset > log_end_offset or snapshot.offset <= log_start_offset:
                    self.remove_and_delete_snapshot(snapshot.offset)
        if log_end_offset != self.map_end_offset:
            self._producers.clear()
            self._ongoing_txns.clear()
            self._unreplicated_txns.clear()
            self._load_from_snapshot(log_start_offset, current_time_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and snapshot; the map restarts at ``offset``."""
        self._producers.clear()
        self._ongoing_txns.clear()
        self._unreplicated_txns.clear()
        with self._snapshots_lock:
            for snapshot in self._snapshots.values():
                self.remove_and_delete_snapshot(snapshot.offset)
        self._last_snap_offset = 0
        self._last_map_offset = offset

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated_transactions(log_start_offset)
        if self._last_map_offset < log_start_offset:
            self._last_map_offset = log_start_offset
        latest = self.latest_snapshot_offset
        self._last_snap_offset = latest if latest is not None else log_start_offset

    # -- updates ---------------------------------------------------------------------------

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        current_entry = self._producers.get(producer_id)
        if current_entry is None:
            current_entry = ProducerStateEntry.empty(producer_id)
        verifying = self._verification_states.get(producer_id) if self._verification_states else None
        return ProducerAppendInfo(self.topic_partition, producer_id, current_entry, origin, verifying)

    # -- transaction verification (KIP-890) ------------------------------------------------

    def maybe_create_verification_state_entry(self, producer_id: int, sequence: int, epoch: int,
                                              now_ms: int) -> VerificationStateEntry:
        """The producer's verification in progress, made if there is none; its lowest
        sequence and epoch updated with this batch's."""
        entry = self._verification_states.get(producer_id)
        if entry is None:
            entry = self._verification_states[producer_id] = VerificationStateEntry(now_ms, sequence, epoch)
        else:
            entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry

    def verification_state_entry(self, producer_id: int) -> Optional[VerificationStateEntry]:
        return self._verification_states.get(producer_id)

    def clear_verification_state_entry(self, producer_id: int) -> None:
        if self._verification_states:
            self._verification_states.pop(producer_id, None)

    def update(self, append_info: ProducerAppendInfo) -> None:
        """Make a validated append's producer state current."""
        if append_info.producer_id == NO_PRODUCER_ID:
            raise ValueError(
                f"Invalid producer id {append_info.producer_id} passed to update for partition {self.topic_partition}"
            )
        updated_entry = append_info.to_entry()
        current_entry = self._producers.get(append_info.producer_id)
        if current_entry is not None:
            current_entry.update(updated_entry)
        else:
            self._producers[append_info.producer_id] = updated_entry
        for txn in append_info.started_transactions:
            self._ongoing_txns.put(txn.first_offset.message_offset, txn)

    def update_map_end_offset(self, last_offset: int) -> None:
        self._last_map_offset = last_offset

    @property
    def map_end_offset(self) -> int:
        """The offset up to which (exclusive) the map reflects the log."""
        return self._last_map_offset

    def last_entry(self, producer_id: int) -> Optional[ProducerStateEntry]:
        return self._producers.get(producer_id)

    @property
    def active_producers(self) -> dict[int, ProducerStateEntry]:
        """A copy of the producer id -> entry map (the entries themselves are live)."""
        return dict(self._producers)

    @property
    def is_empty(self) -> bool:
        return not self._producers and not len(self._unreplicated_txns)

    def _is_producer_expired(self, current_time_ms: int, entry: ProducerStateEntry) -> bool:
        return (
            entry.current_txn_first_offset is None
            and current_time_ms - entry.last_timestamp >= self.max_producer_id_expiration_ms
        )

    def remove_expired_producers(self, current_time_ms: int) -> None:
        """Forget producers idle for max_producer_id_expiration_ms without an open transaction."""
        expired = [pid for pid, entry in self._producers.items() if self._is_producer_expired(current_time_ms, entry)]
        for pid in expired:
            del self._producers[pid]
        # verifications never completed (refused, or their produce never came back) go as well
        stale = [pid for pid, entry in self._verification_states.items()
                 if current_time_ms - entry.timestamp >= self.max_producer_id_expiration_ms]
        for pid in stale:
            del self._verification_states[pid]

    # -- transactions ----------------------------------------------------------------------

    @property
    def first_unstable_offset(self) -> Optional[LogOffsetMetadata]:
        """The earliest offset of a transaction that is open or whose marker is above the high watermark."""
        if not (self._unreplicated_txns._keys or self._ongoing_txns._keys):
            return None  # no transaction open or unreplicated: what every non-transactional append finds
        unreplicated = self._unreplicated_txns.first_value()
        undecided = self._ongoing_txns.first_value()
        if unreplicated is None:
            return None if undecided is None else undecided.first_offset
        if undecided is None:
            return unreplicated.first_offset
        if undecided.first_offset.message_offset < unreplicated.first_offset.message_offset:
            return undecided.first_offset
        return unreplicated.first_offset

    @property
    def first_undecided_offset(self) -> Optional[int]:
        """The first offset of the earliest open transaction, regardless of replication."""
        undecided = self._ongoing_txns.first_value()
        return None if undecided is None else undecided.first_offset.message_offset

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        self._remove_unreplicated_transactions(high_watermark)

    def _remove_unreplicated_transactions(self, offset: int) -> None:
        if not self._unreplicated_txns._keys:
            return  # called at every high watermark move: most logs have no transactions
        for first_offset in self._unreplicated_txns:
            txn = self._unreplicated_txns.get(first_offset)
            if txn is not None and txn.last_offset is not None and txn.last_offset < offset:
                self._unreplicated_txns.remove(first_offset)

    def last_stable_offset(self, completed_txn: CompletedTxn) -> int:
        """The LSO once ``completed_txn`` completes (it is not marked complete here)."""
        for txn in self._ongoing_txns.values():
            if txn.producer_id != completed_txn.producer_id:
                return txn.first_offset.message_offset
        return completed_txn.last_offset + 1

    def complete_txn(self, completed_txn: CompletedTxn) -> None:
        """Close a transaction; it stays unstable until the high watermark passes its marker."""
        txn = self._ongoing_txns.remove(completed_txn.first_offset)
        if txn is None:
            raise ValueError(
                f"Attempted to complete transaction {completed_txn} on partition {self.topic_partition} "
                "which was not started"
            )
        txn.last_offset = completed_txn.last_offset
        self._unreplicated_txns.put(completed_txn.first_offset, txn)

    def __repr__(self) -> str:
        return (
            f"ProducerStateManager({self.topic_partition}, producers={len(self._producers)}, "
            f"mapEndOffset={self._last_map_offset})"
        )
