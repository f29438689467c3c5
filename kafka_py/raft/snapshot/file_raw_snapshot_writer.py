"""Port of raft/src/main/java/org/apache/kafka/snapshot/FileRawSnapshotWriter.java (Kafka 3.0.0).

A snapshot written to ``<id>-<random>.checkpoint.part`` in the log directory. ``freeze``
fsyncs the file, makes it read-only and renames it atomically to ``<id>.checkpoint`` (then
fsyncs the directory), so a crash leaves either no snapshot or a whole one: a ``.part`` file
found at startup is a snapshot that never finished and is deleted. The log is told of the
new snapshot (``on_snapshot_frozen``) once it is in place.
"""
from __future__ import annotations

import logging
import os
import stat
from typing import TYPE_CHECKING, Optional, Union

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.clients.common.record.memory_records import MemoryRecords
from kafka_py.raft.snapshot import snapshots
from kafka_py.raft.snapshot.raw_snapshot_writer import RawSnapshotWriter, UnalignedMemoryRecords

if TYPE_CHECKING:
    from kafka_py.raft.replicated_log import ReplicatedLog

logger = logging.getLogger(__name__)


class FileRawSnapshotWriter(RawSnapshotWriter):
    def __init__(self, temp_snapshot_path: str, fd: int, snapshot_id: OffsetAndEpoch,
                 replicated_log: Optional["ReplicatedLog"]) -> None:
        self._temp_snapshot_path = temp_snapshot_path
        self._fd: Optional[int] = fd
        self._snapshot_id = snapshot_id
        self._replicated_log = replicated_log
        self._frozen = False
        self._size = os.fstat(fd).st_size

    @classmethod
    def create(cls, log_dir: str, snapshot_id: OffsetAndEpoch,
               replicated_log: Optional["ReplicatedLog"] = None) -> "FileRawSnapshotWriter":
        path = snapshots.create_temp_file(log_dir, snapshot_id)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        return cls(path, fd, snapshot_id, replicated_log)

    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    def size_in_bytes(self) -> int:
        return self._size

    def append(self, records: Union[MemoryRecords, UnalignedMemoryRecords]) -> None:
        self._check_if_frozen("Append")
        data = memoryview(records.buffer if isinstance(records, MemoryRecords) else records)
        assert self._fd is not None
        written = 0
        while written < len(data):
            written += os.write(self._fd, data[written:])
        self._size += written

    def is_frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        self._check_if_frozen("Freeze")
        assert self._fd is not None
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        self._frozen = True
        mode = os.stat(self._temp_snapshot_path).st_mode
        os.chmod(self._temp_snapshot_path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        destination = snapshots.move_rename(self._temp_snapshot_path, self._snapshot_id)
        os.replace(self._temp_snapshot_path, destination)
        snapshots._fsync_dir(os.path.dirname(destination))
        if self._replicated_log is not None:
            self._replicated_log.on_snapshot_frozen(self._snapshot_id)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        # After a freeze the temporary name is gone; otherwise this abandons the snapshot.
        try:
            os.remove(self._temp_snapshot_path)
        except FileNotFoundError:
            pass

    def _check_if_frozen(self, operation: str) -> None:
        if self._frozen:
            raise RuntimeError(f"{operation} is not supported. Snapshot is already frozen: id = {self._snapshot_id}; "
                               f"temp path = {self._temp_snapshot_path}")

    def __repr__(self) -> str:
        return (f"FileRawSnapshotWriter(path={self._temp_snapshot_path}, snapshotId={self._snapshot_id}, "
                f"frozen={self._frozen})")
