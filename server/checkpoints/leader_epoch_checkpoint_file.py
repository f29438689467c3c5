"""Port of core/src/main/scala/kafka/server/checkpoints/LeaderEpochCheckpointFile.scala.

A partition's ``leader-epoch-checkpoint``: one ``epoch startOffset`` line per
leader epoch, oldest first::

    0
    2
    0 0
    1 250
"""
from __future__ import annotations

import os
from typing import Iterable, Protocol

from kafka_py.server.checkpoints.checkpoint_file import (
    CheckpointFile,
    LogDirFailureChannelLike,
    parse_int32,
    parse_int64,
    split_whitespace,
)
from kafka_py.server.epoch.leader_epoch_file_cache import EpochEntry

LEADER_EPOCH_CHECKPOINT_FILENAME = "leader-epoch-checkpoint"
CURRENT_VERSION = 0

__all__ = [
    "CURRENT_VERSION",
    "EpochEntry",
    "LEADER_EPOCH_CHECKPOINT_FILENAME",
    "LeaderEpochCheckpoint",
    "LeaderEpochCheckpointFile",
]


class LeaderEpochCheckpoint(Protocol):
    def write(self, epochs: Iterable[EpochEntry]) -> None: ...

    def read(self) -> list[EpochEntry]: ...


class _EpochFormatter:
    def to_line(self, entry: EpochEntry) -> str:
        return f"{entry.epoch} {entry.start_offset}"

    def from_line(self, line: str) -> EpochEntry | None:
        fields = split_whitespace(line)
        if len(fields) != 2:
            return None
        return EpochEntry(parse_int32(fields[0]), parse_int64(fields[1]))


class LeaderEpochCheckpointFile:
    """Persists a partition's leader epoch -> start offset entries."""

    Formatter = _EpochFormatter()

    def __init__(
        self,
        path: str | os.PathLike[str],
        log_dir_failure_channel: LogDirFailureChannelLike | None = None,
    ):
        self.file = os.fspath(path)
        # The file sits in <log dir>/<topic-partition>/, and failures take the log dir offline.
        log_dir = os.path.dirname(os.path.dirname(os.path.abspath(self.file)))
        # Not created until written (a partition's first leader epoch): see CheckpointFile.
        self.checkpoint: CheckpointFile[EpochEntry] = CheckpointFile(
            self.file, CURRENT_VERSION, self.Formatter, log_dir_failure_channel, log_dir, create_missing=False
        )

    @staticmethod
    def new_file(dir: str | os.PathLike[str]) -> str:
        return os.path.join(os.fspath(dir), LEADER_EPOCH_CHECKPOINT_FILENAME)

    def write(self, epochs: Iterable[EpochEntry]) -> None:
        self.checkpoint.write(epochs)

    def read(self) -> list[EpochEntry]:
        return self.checkpoint.read()
