"""Port of raft/src/main/java/org/apache/kafka/snapshot/SnapshotWriter.java (Kafka 3.0.0).

Writes a state machine's records into a snapshot in the log's own batch format: a
BatchAccumulator (the leader's write buffer) encodes them into batches of at most
``max_batch_size``, offsets counted from 0 within the snapshot and every batch stamped with
the snapshot's epoch. The first batch is a control batch with one SnapshotHeaderRecord (the
append time of the last log record the snapshot covers); ``freeze`` appends a
SnapshotFooterRecord control batch, writes what is pending and freezes the raw snapshot.
The records passed to one ``append`` stay in one batch where they fit.
"""
from __future__ import annotations

import logging
from typing import Callable, Generic, Optional, Sequence, TypeVar

from kafka_py.raft.control_record_utils import (
    SNAPSHOT_FOOTER_HIGHEST_VERSION,
    SNAPSHOT_HEADER_HIGHEST_VERSION,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
)
from kafka_py.raft.internals.batch_accumulator import BatchAccumulator, CompletedBatch
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.record_serde import RecordSerde
from kafka_py.clients.common.record.compression import CompressionType
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter
from kafka_py.core.utils.java_limits import INT_MAX
from kafka_py.clients.common.utils.time import Time

logger = logging.getLogger(__name__)

T = TypeVar("T")


class SnapshotWriter(Generic[T]):
    def __init__(self, snapshot: RawSnapshotWriter, max_batch_size: int, time: Time,
                 last_contained_log_timestamp: int, compression_type: CompressionType,
                 serde: RecordSerde[T]) -> None:
        self._snapshot = snapshot
        self._time = time
        self._last_contained_log_timestamp = last_contained_log_timestamp
        # Never lingers: batches are written when full, and the rest at freeze.
        self._accumulator: BatchAccumulator[T] = BatchAccumulator(
            snapshot.snapshot_id().epoch, 0, INT_MAX, max_batch_size, time, compression_type, serde)

    @classmethod
    def create_with_header(cls, supplier: Callable[[], Optional[RawSnapshotWriter]], max_batch_size: int,
                           snapshot_time: Time, last_contained_log_timestamp: int,
                           compression_type: CompressionType, serde: RecordSerde[T]) -> Optional["SnapshotWriter[T]"]:
        """A writer over the raw snapshot ``supplier`` creates (None when it creates none: the
        snapshot exists already), its header already written. Kafka 3.0 writes snapshots
        uncompressed whatever is asked, and so does this."""
        snapshot = supplier()
        if snapshot is None:
            return None
        writer = cls(snapshot, max_batch_size, snapshot_time, last_contained_log_timestamp, CompressionType.NONE,
                     serde)
        writer._initialize_snapshot_with_header()
        return writer

    def _initialize_snapshot_with_header(self) -> None:
        if self._snapshot.size_in_bytes() != 0:
            raise RuntimeError(f"Initializing writer with a non-empty snapshot: id = '{self._snapshot.snapshot_id()}'.")
        header = SnapshotHeaderRecord(SNAPSHOT_HEADER_HIGHEST_VERSION, self._last_contained_log_timestamp)
        self._accumulator.append_snapshot_header_message(header, self._time.milliseconds())
        self._accumulator.force_drain()

    def _finalize_snapshot_with_footer(self) -> None:
        footer = SnapshotFooterRecord(SNAPSHOT_FOOTER_HIGHEST_VERSION)
        self._accumulator.append_snapshot_footer_message(footer, self._time.milliseconds())
        self._accumulator.force_drain()

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot.snapshot_id()

    def last_contained_log_offset(self) -> int:
        """The last log offset the snapshot covers (its end offset is one past it)."""
        return self._snapshot.snapshot_id().offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot.snapshot_id().epoch

    def is_frozen(self) -> bool:
        return self._snapshot.is_frozen()

    def append(self, records: Sequence[T]) -> None:
        if self._snapshot.is_frozen():
            raise RuntimeError(f"Append not supported. Snapshot is already frozen: id = '{self._snapshot.snapshot_id()}'.")
        self._accumulator.append(self._snapshot.snapshot_id().epoch, records)
        # Only the force-drained header makes a drain due before the freeze: full batches wait
        # in the accumulator, as in Kafka, and the freeze writes them all.
        if self._accumulator.needs_drain(self._time.milliseconds()):
            self._append_batches(self._accumulator.drain())

    def freeze(self) -> None:
        self._finalize_snapshot_with_footer()
        self._append_batches(self._accumulator.drain())
        self._snapshot.freeze()
        self._accumulator.close()

    def close(self) -> None:
        """Release the writer; a snapshot not frozen is discarded."""
        self._snapshot.close()
        self._accumulator.close()

    def _append_batches(self, batches: list[CompletedBatch[T]]) -> None:
        try:
            for batch in batches:
                self._snapshot.append(batch.data)
        finally:
            for batch in batches:
                batch.release()

    def __enter__(self) -> "SnapshotWriter[T]":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
