"""Port of raft/src/main/java/org/apache/kafka/snapshot/FileRawSnapshotReader.java (Kafka 3.0.0).

A frozen snapshot file opened read-only as FileRecords: slices are read with ``pread`` (for
FetchSnapshot answers), and ``records`` reads the file's batches into memory for loading.
"""
from __future__ import annotations

import logging

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot import snapshots
from kafka_py.raft.snapshot.raw_snapshot_reader import RawSnapshotReader

logger = logging.getLogger(__name__)


class FileRawSnapshotReader(RawSnapshotReader):
    def __init__(self, file_records: FileRecords, snapshot_id: OffsetAndEpoch) -> None:
        self._file_records = file_records
        self._snapshot_id = snapshot_id

    @classmethod
    def open(cls, log_dir: str, snapshot_id: OffsetAndEpoch) -> "FileRawSnapshotReader":
        """Raises FileNotFoundError when the snapshot's file is not there."""
        path = snapshots.snapshot_path(log_dir, snapshot_id)
        return cls(FileRecords.open(path, file_already_exists=True, mutable=False), snapshot_id)

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return self._file_records.size_in_bytes()

    def slice(self, position: int, size: int) -> bytes:
        size = max(0, min(size, self.size_in_bytes() - position))
        return self._file_records.read_bytes(position, size)

    def records(self) -> MemoryRecords:
        size = self.size_in_bytes()
        if size == 0:
            return MemoryRecords.EMPTY
        return self._file_records.read_into(bytearray(size), 0)

    def close(self) -> None:
        # Read-only: nothing to flush or trim, only the descriptor to release.
        self._file_records.close_handlers()

    def __repr__(self) -> str:
        return f"FileRawSnapshotReader(snapshotId={self._snapshot_id}, file={self._file_records.file})"
