"""Port of raft/src/main/java/org/apache/kafka/snapshot/SnapshotPath.java (Kafka 3.0.0).

A snapshot file found in a log directory, as ``Snapshots.parse`` reads its name: the path,
the snapshot id (the end offset, one past the last record it covers, and that record's
epoch) and whether the file is still being written (``.checkpoint.part``) or marked for
deletion (``.checkpoint.deleted``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SnapshotPath:
    path: str
    snapshot_id: OffsetAndEpoch
    partial: bool
    deleted: bool

    def __str__(self) -> str:
        return f"SnapshotPath(path={self.path}, snapshotId={self.snapshot_id}, partial={self.partial})"
