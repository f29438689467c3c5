"""An in-memory ReplicatedLog for the raft tests (Kafka 3.0.0's test MockLog,
MockRawSnapshotWriter and MockRawSnapshotReader; test-only code).

Batches are kept as lists of entries with their epoch; every entry gets a unique id used as
its offset metadata, so the high watermark's metadata can be checked against the entry it
points at. ``reopen`` models a crash: everything after the last flush is lost. Snapshots
are byte strings in a map by id; they survive ``reopen``, as snapshot files survive a
crash once frozen.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Optional, Union

from kafka_py.clients.common.errors import OffsetOutOfRangeException
from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.raft.isolation import Isolation
from kafka_py.raft.log_append_info import LogAppendInfo
from kafka_py.raft.log_fetch_info import LogFetchInfo
from kafka_py.raft.log_offset_metadata import LogOffsetMetadata, OffsetMetadata
from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.replicated_log import ReplicatedLog
from kafka_py.raft.valid_offset_and_epoch import ValidOffsetAndEpochType
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter
from kafka_py.clients.common.record.default_record_batch import SimpleRecord, build_batch
from kafka_py.clients.common.record.memory_records import MemoryRecords

_ids = itertools.count()


@dataclass(frozen=True)
class MockOffsetMetadata(OffsetMetadata):
    id: int


@dataclass(frozen=True)
class LogEntry:
    metadata: MockOffsetMetadata
    offset: int
    record: SimpleRecord


@dataclass
class LogBatch:
    epoch: int
    is_control_batch: bool
    entries: list[LogEntry]

    def first_offset(self) -> int:
        return self.entries[0].offset

    def last_offset(self) -> int:
        return self.entries[-1].offset

    def to_bytes(self) -> bytes:
        # A batch never changes once appended, so its encoding is computed once.
        cached = getattr(self, "_bytes", None)
        if cached is not None:
            return cached
        self._bytes = build_batch([e.record for e in self.entries], base_offset=self.first_offset(),
                           offsets=[e.offset for e in self.entries], is_control_batch=self.is_control_batch,
                           partition_leader_epoch=self.epoch)
        return self._bytes


class MockRawSnapshotWriter(RawSnapshotWriter):
    def __init__(self, snapshot_id: OffsetAndEpoch, on_frozen: Callable[[bytes], None]) -> None:
        self._snapshot_id = snapshot_id
        self._on_frozen = on_frozen
        self._data = bytearray()
        self._frozen = False

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def append(self, records: Union[MemoryRecords, bytes, bytearray, memoryview]) -> None:
        if self._frozen:
            raise RuntimeError("Append not supported. Snapshot is already frozen")
        self._data += records.buffer if isinstance(records, MemoryRecords) else records

    def is_frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        if self._frozen:
            raise RuntimeError("Freeze not supported. Snapshot is already frozen")
        self._frozen = True
        self._on_frozen(bytes(self._data))

    def close(self) -> None:
        pass


class MockRawSnapshotReader(RawSnapshotReader):
    def __init__(self, snapshot_id: OffsetAndEpoch, data: bytes) -> None:
        self._snapshot_id = snapshot_id
        self._data = data

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return len(self._data)

    def slice(self, position: int, size: int) -> bytes:
        return self._data[position:position + size]

    def records(self) -> MemoryRecords:
        return MemoryRecords(bytearray(self._data))


@dataclass
class EpochStartOffset:
    epoch: int
    start_offset: int


class MockLog(ReplicatedLog):
    def __init__(self, topic_partition: TopicPartition) -> None:
        self._topic_partition = topic_partition
        self.batches: list[LogBatch] = []
        self.epoch_start_offsets: list[EpochStartOffset] = []
        self._next_id = next(_ids)
        self._high_watermark = LogOffsetMetadata(0)
        self._last_flushed_offset = 0
        self.snapshots: dict[OffsetAndEpoch, MockRawSnapshotReader] = {}
        # Bumped on every change of the log's content, so checkers can skip unchanged logs.
        self.version = 0
        self._entries_cache: tuple[int, list] = (-1, [])

    def truncate_to(self, offset: int) -> None:
        if offset < self._high_watermark.offset:
            raise ValueError(f"Illegal attempt to truncate to offset {offset} which is below the current high "
                             f"watermark {self._high_watermark}")
        self.version += 1
        self.batches = [b for b in self.batches if b.last_offset() < offset]
        self.epoch_start_offsets = [e for e in self.epoch_start_offsets if e.start_offset < offset]
        self._last_flushed_offset = min(self._last_flushed_offset, offset)

    def truncate_to_latest_snapshot(self) -> bool:
        snapshot_id = self.latest_snapshot_id()
        log_last_fetched_epoch = self.epoch_start_offsets[-1].epoch if self.epoch_start_offsets else 0
        if snapshot_id is None or not (snapshot_id.epoch > log_last_fetched_epoch or (
                snapshot_id.epoch == log_last_fetched_epoch and snapshot_id.offset > self.end_offset().offset)):
            return False
        self.version += 1
        self.batches = []
        self.epoch_start_offsets = []
        self.snapshots = {k: v for k, v in self.snapshots.items() if _order(k) >= _order(snapshot_id)}
        self._high_watermark = LogOffsetMetadata(snapshot_id.offset, MockOffsetMetadata(self._next_id))
        self.flush()
        return True

    def update_high_watermark(self, offset_metadata: LogOffsetMetadata) -> None:
        if self._high_watermark.offset > offset_metadata.offset:
            raise ValueError(f"Non-monotonic update of current high watermark {self._high_watermark} to new value "
                             f"{offset_metadata}")
        if offset_metadata.offset > self.end_offset().offset:
            raise ValueError(f"Attempt to update high watermark to {offset_metadata} which is larger than the "
                             f"current end offset {self.end_offset()}")
        if offset_metadata.offset < self.start_offset():
            raise ValueError(f"Attempt to update high watermark to {offset_metadata} which is smaller than the "
                             f"current start offset {self.start_offset()}")
        if offset_metadata.metadata is not None:
            expected = self._metadata_for_offset(offset_metadata.offset)
            if expected is not None and expected != offset_metadata.metadata:
                raise ValueError(f"High watermark {offset_metadata} metadata does not match the log's entry")
        self._high_watermark = offset_metadata

    def high_watermark(self) -> LogOffsetMetadata:
        return self._high_watermark

    def topic_partition(self) -> TopicPartition:
        return self._topic_partition

    def _metadata_for_offset(self, offset: int) -> Optional[OffsetMetadata]:
        if offset == self.end_offset().offset:
            return self.end_offset().metadata
        for batch in self.batches:
            if batch.last_offset() < offset:
                continue
            for entry in batch.entries:
                if entry.offset == offset:
                    return entry.metadata
        return None

    def last_fetched_epoch(self) -> int:
        if not self.epoch_start_offsets:
            snapshot_id = self.latest_snapshot_id()
            return 0 if snapshot_id is None else snapshot_id.epoch
        return self.epoch_start_offsets[-1].epoch

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        earliest = self.earliest_snapshot_id()
        epoch_lower_bound = 0 if earliest is None else earliest.epoch
        for epoch_start in self.epoch_start_offsets:
            if epoch_start.epoch > epoch:
                return OffsetAndEpoch(epoch_start.start_offset, epoch_lower_bound)
            epoch_lower_bound = epoch_start.epoch
        return OffsetAndEpoch(self.end_offset().offset, self.last_fetched_epoch())

    def end_offset(self) -> LogOffsetMetadata:
        if self.batches:
            next_offset = self.batches[-1].last_offset() + 1
        else:
            latest = self.latest_snapshot_id()
            next_offset = 0 if latest is None else latest.offset
        return LogOffsetMetadata(next_offset, MockOffsetMetadata(self._next_id))

    def start_offset(self) -> int:
        if self.batches:
            return self.batches[0].first_offset()
        earliest = self.earliest_snapshot_id()
        return 0 if earliest is None else earliest.offset

    def _build_entries(self, batch) -> list[LogEntry]:
        entries = []
        for record in batch.records():
            entry_id = self._next_id
            self._next_id = next(_ids)
            entries.append(LogEntry(MockOffsetMetadata(entry_id), record.offset,
                                    SimpleRecord(record.key, record.value, record.timestamp, record.headers)))
        return entries

    def _append_batch(self, batch: LogBatch) -> None:
        if batch.epoch > self.last_fetched_epoch():
            self.epoch_start_offsets.append(EpochStartOffset(batch.epoch, batch.first_offset()))
        self.batches.append(batch)
        self.version += 1
        cached_version, cached = self._entries_cache
        if cached_version == self.version - 1:
            # Appends extend the cached listing instead of rebuilding it.
            cached.extend((e.offset, batch.epoch, e.record.value, batch.is_control_batch) for e in batch.entries)
            self._entries_cache = (self.version, cached)

    def append_as_leader(self, records: MemoryRecords, epoch: int) -> LogAppendInfo:
        return self._append(records, epoch)

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        return self._append(records, None)

    def _append(self, records: MemoryRecords, epoch: Optional[int]) -> LogAppendInfo:
        if records.size_in_bytes == 0:
            raise ValueError("Attempt to append an empty record set")
        base_offset = self.end_offset().offset
        last_offset = base_offset
        for batch in records.batches():
            batch.ensure_valid()
            if batch.base_offset != self.end_offset().offset:
                raise RuntimeError(f"Illegal append at offset {batch.base_offset} with current end offset of "
                                   f"{self.end_offset().offset}")
            entries = self._build_entries(batch)
            self._append_batch(LogBatch(batch.partition_leader_epoch if epoch is None else epoch,
                                        batch.is_control_batch, entries))
            last_offset = entries[-1].offset
        return LogAppendInfo(base_offset, last_offset)

    def flush(self) -> None:
        self._last_flushed_offset = self.end_offset().offset

    def last_flushed_offset(self) -> int:
        return self._last_flushed_offset

    def reopen(self) -> None:
        """A crash: what was not flushed is gone, and the high watermark is forgotten."""
        self.version += 1
        self.batches = [b for b in self.batches if b.first_offset() < self._last_flushed_offset]
        self.epoch_start_offsets = [e for e in self.epoch_start_offsets
                                    if e.start_offset < self._last_flushed_offset]
        self._high_watermark = LogOffsetMetadata(0)

    def read_batches(self, start_offset: int, max_offset: Optional[int]) -> list[LogBatch]:
        self._verify_offset_in_range(start_offset)
        max_offset = self.end_offset().offset if max_offset is None else max_offset
        if start_offset == max_offset:
            return []
        return [b for b in self.batches if start_offset <= b.last_offset() < max_offset]

    def _verify_offset_in_range(self, offset: int) -> None:
        if offset > self.end_offset().offset:
            raise OffsetOutOfRangeException(f"Requested offset {offset} is larger than then log end offset "
                                            f"{self.end_offset().offset}")
        if offset < self.start_offset():
            raise OffsetOutOfRangeException(f"Requested offset {offset} is smaller than then log start offset "
                                            f"{self.start_offset()}")

    def read(self, start_offset_inclusive: int, isolation: Isolation) -> LogFetchInfo:
        start = start_offset_inclusive
        self._verify_offset_in_range(start)
        max_offset = self._high_watermark.offset if isolation is Isolation.COMMITTED else self.end_offset().offset
        if start >= max_offset:
            return LogFetchInfo(MemoryRecords.EMPTY, LogOffsetMetadata(start, self._metadata_for_offset(start)))
        data = bytearray()
        first_entry: Optional[LogEntry] = None
        for batch in self.batches:
            # Only whole batches below the bound, as a fetch drops an incomplete one.
            if batch.last_offset() >= start:
                if batch.last_offset() < max_offset:
                    data += batch.to_bytes()
                if first_entry is None:
                    first_entry = batch.entries[0]
        if first_entry is None:
            raise RuntimeError(f"Expected to find at least one entry starting from offset {start} but found none")
        return LogFetchInfo(MemoryRecords(data), LogOffsetMetadata(first_entry.offset, first_entry.metadata))

    def initialize_leader_epoch(self, epoch: int) -> None:
        start_offset = self.end_offset().offset
        self.epoch_start_offsets = [e for e in self.epoch_start_offsets
                                    if e.start_offset < start_offset and e.epoch < epoch]
        self.epoch_start_offsets.append(EpochStartOffset(epoch, start_offset))

    # ---- snapshots ----
    def create_new_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        if snapshot_id.offset < self.start_offset():
            return None
        if snapshot_id.offset > self._high_watermark.offset:
            raise ValueError(f"Cannot create a snapshot with an id ({snapshot_id}) greater than the high-watermark "
                             f"({self._high_watermark.offset})")
        valid = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if valid.type is not ValidOffsetAndEpochType.VALID:
            raise ValueError(f"Snapshot id ({snapshot_id}) is not valid according to the log: {valid}")
        return self.store_snapshot(snapshot_id)

    def store_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotWriter]:
        if snapshot_id in self.snapshots:
            return None

        def on_frozen(data: bytes) -> None:
            self.snapshots.setdefault(snapshot_id, MockRawSnapshotReader(snapshot_id, data))
        return MockRawSnapshotWriter(snapshot_id, on_frozen)

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> Optional[RawSnapshotReader]:
        return self.snapshots.get(snapshot_id)

    def latest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        return max(self.snapshots, key=_order, default=None)

    def earliest_snapshot_id(self) -> Optional[OffsetAndEpoch]:
        return min(self.snapshots, key=_order, default=None)

    def on_snapshot_frozen(self, snapshot_id: OffsetAndEpoch) -> None:
        pass

    def delete_before_snapshot(self, snapshot_id: OffsetAndEpoch) -> bool:
        if self.start_offset() > snapshot_id.offset:
            raise OffsetOutOfRangeException(f"New log start ({snapshot_id}) is less than the current log start "
                                            f"offset ({self.start_offset()})")
        if self._high_watermark.offset < snapshot_id.offset:
            raise OffsetOutOfRangeException(f"New log start ({snapshot_id}) is greater than the high watermark "
                                            f"({self._high_watermark.offset})")
        if snapshot_id not in self.snapshots:
            return False
        self.version += 1
        self.snapshots = {k: v for k, v in self.snapshots.items() if _order(k) >= _order(snapshot_id)}
        # Whole batches go, as whole segments do; one reaching past the snapshot stays.
        self.batches = [b for b in self.batches if b.last_offset() >= snapshot_id.offset]
        kept = [e for e in self.epoch_start_offsets if e.start_offset >= snapshot_id.offset]
        before = [e for e in self.epoch_start_offsets if e.start_offset < snapshot_id.offset]
        if before and self.batches and (not kept or kept[0].start_offset > self.batches[0].first_offset()):
            kept.insert(0, EpochStartOffset(before[-1].epoch, self.batches[0].first_offset()))
        self.epoch_start_offsets = kept
        return True

    def maybe_clean(self) -> bool:
        return False

    # test helpers
    def append_simple(self, epoch: int, values: list[bytes]) -> None:
        """Append a data batch of ``values`` in ``epoch`` (as if written by that epoch's leader)."""
        records = MemoryRecords(bytearray(build_batch([SimpleRecord(None, v, 0) for v in values],
                                                      base_offset=self.end_offset().offset,
                                                      partition_leader_epoch=epoch)))
        self.append_as_leader(records, epoch)

    def entries(self) -> list[tuple[int, int, Optional[bytes], bool]]:
        """(offset, epoch, value, is_control) of every record, for comparing logs."""
        return list(self._entries_listing())

    def _entries_listing(self) -> list[tuple[int, int, Optional[bytes], bool]]:
        """``entries()`` without the copy, for checkers that only read it."""
        if self._entries_cache[0] != self.version:
            self._entries_cache = (self.version, [(e.offset, b.epoch, e.record.value, b.is_control_batch)
                                                  for b in self.batches for e in b.entries])
        return self._entries_cache[1]


def _order(snapshot_id: OffsetAndEpoch) -> tuple[int, int]:
    return (snapshot_id.offset, snapshot_id.epoch)
