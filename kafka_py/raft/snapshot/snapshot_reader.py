"""Port of raft/src/main/java/org/apache/kafka/snapshot/SnapshotReader.java (Kafka 3.0.0).

Reads a snapshot back as the batches of records a state machine replays: an iterator of
Batch, control batches (the header and footer) skipped. ``last_contained_log_timestamp`` is
the append time of the first batch, the header, which is when the last log record the
snapshot covers was appended (the controller resumes its committed timestamp from it).
Records are decoded with the log's RecordSerde, and checked as the log's are (CRC, no keys,
no headers, no null values).
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Generic, Optional, TypeVar

from kafka_py.raft.batch_reader import Batch
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.record_serde import RecordSerde
from kafka_py.clients.common.record.default_record_batch import DefaultRecordBatch
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader

logger = logging.getLogger(__name__)

T = TypeVar("T")


class SnapshotReader(Generic[T], Iterator[Batch[T]]):
    def __init__(self, snapshot_id: OffsetAndEpoch, batches: Iterator[DefaultRecordBatch], serde: RecordSerde[T],
                 max_batch_size: int) -> None:
        self._snapshot_id = snapshot_id
        self._batches = batches
        self._serde = serde
        self._max_batch_size = max_batch_size
        self._next_batch: Optional[Batch[T]] = None
        self._last_contained_log_timestamp: Optional[int] = None

    @classmethod
    def of(cls, snapshot: RawSnapshotReader, serde: RecordSerde[T], max_batch_size: int) -> "SnapshotReader[T]":
        # strict: a frozen snapshot ends on a batch boundary, so a torn batch is corruption.
        return cls(snapshot.snapshot_id(), iter(snapshot.records().batches(strict=True)), serde, max_batch_size)

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def last_contained_log_offset(self) -> int:
        return self._snapshot_id.offset - 1

    def last_contained_log_epoch(self) -> int:
        return self._snapshot_id.epoch

    def last_contained_log_timestamp(self) -> int:
        if self._last_contained_log_timestamp is None:
            if self._next_batch is not None:
                raise RuntimeError("nextBatch was present when last contained log timestamp was not present")
            self._next_batch = self._read_next_batch()
        if self._last_contained_log_timestamp is None:
            raise RuntimeError(f"Snapshot {self._snapshot_id} has no batches")
        return self._last_contained_log_timestamp

    def has_next(self) -> bool:
        if self._next_batch is None:
            self._next_batch = self._read_next_batch()
        return self._next_batch is not None

    def next(self) -> Batch[T]:
        if not self.has_next():
            raise StopIteration
        batch = self._next_batch
        assert batch is not None
        self._next_batch = None
        return batch

    def __iter__(self) -> "SnapshotReader[T]":
        return self

    def __next__(self) -> Batch[T]:
        return self.next()

    def close(self) -> None:
        """Nothing to release: the raw snapshot's reader belongs to the log, which closes it."""

    def __enter__(self) -> "SnapshotReader[T]":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read_next_batch(self) -> Optional[Batch[T]]:
        """The next batch holding records, or None at the end."""
        for batch in self._batches:
            if self._last_contained_log_timestamp is None:
                # As Kafka 3.0: the first batch's append time (the header's) stands for the
                # last contained record's.
                self._last_contained_log_timestamp = batch.max_timestamp
            if batch.is_control_batch:
                continue
            # A fetched snapshot crossed the network in unaligned chunks: check every batch.
            batch.ensure_valid()
            if batch.size_in_bytes > self._max_batch_size:
                raise ValueError(f"Snapshot {self._snapshot_id} has a batch of {batch.size_in_bytes} bytes, more "
                                 f"than the {self._max_batch_size} allowed")
            records = []
            for record in batch.records():
                if record.key is not None or record.headers or record.value is None:
                    raise ValueError(f"Unexpected key, headers or null value in snapshot record at offset "
                                     f"{record.offset} of snapshot {self._snapshot_id}")
                value = memoryview(record.value)
                records.append(self._serde.read(value, len(value)))
            if records:
                return Batch(batch.base_offset, batch.partition_leader_epoch, records, batch.max_timestamp,
                             batch.size_in_bytes)
        return None
