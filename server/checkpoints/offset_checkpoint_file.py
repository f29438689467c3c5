"""Port of core/src/main/scala/kafka/server/checkpoints/OffsetCheckpointFile.scala.

Per-log-dir checkpoints of one offset per partition (recovery points, log start
offsets, high watermarks), one ``topic partition offset`` line each::

    0
    2
    my-topic 0 42
    my-topic 1 17
"""
from __future__ import annotations

import os
from typing import Mapping

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.checkpoints.checkpoint_file import (
    CheckpointFile,
    LogDirFailureChannelLike,
    parse_int32,
    parse_int64,
    split_whitespace,
)

CURRENT_VERSION = 0


class _OffsetFormatter:
    def to_line(self, entry: tuple[TopicPartition, int]) -> str:
        tp, offset = entry
        return f"{tp.topic} {tp.partition} {offset}"

    def from_line(self, line: str) -> tuple[TopicPartition, int] | None:
        fields = split_whitespace(line)
        if len(fields) != 3:
            return None
        topic, partition, offset = fields
        return TopicPartition(topic, parse_int32(partition)), parse_int64(offset)


class OffsetCheckpointFile:
    """Persists a map of partition -> offset for one log directory."""

    Formatter = _OffsetFormatter()

    def __init__(
        self,
        path: str | os.PathLike[str],
        log_dir_failure_channel: LogDirFailureChannelLike | None = None,
    ):
        self.file = os.fspath(path)
        self.checkpoint: CheckpointFile[tuple[TopicPartition, int]] = CheckpointFile(
            self.file,
            CURRENT_VERSION,
            self.Formatter,
            log_dir_failure_channel,
            os.path.dirname(os.path.abspath(self.file)),
        )

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.checkpoint.write(offsets.items())

    def read(self) -> dict[TopicPartition, int]:
        return dict(self.checkpoint.read())


class LazyOffsetCheckpointMap:
    """Reads its checkpoint file on first lookup and keeps the result."""

    def __init__(self, checkpoint: OffsetCheckpointFile):
        self._checkpoint = checkpoint
        self._offsets: dict[TopicPartition, int] | None = None

    def fetch(self, topic_partition: TopicPartition) -> int | None:
        if self._offsets is None:
            self._offsets = self._checkpoint.read()
        return self._offsets.get(topic_partition)


class LazyOffsetCheckpoints:
    """Offsets from several log dirs' checkpoint files, each loaded on demand."""

    def __init__(self, checkpoints_by_log_dir: Mapping[str, OffsetCheckpointFile]):
        self._lazy = {d: LazyOffsetCheckpointMap(c) for d, c in checkpoints_by_log_dir.items()}

    def fetch(self, log_dir: str, topic_partition: TopicPartition) -> int | None:
        try:
            lazy = self._lazy[log_dir]
        except KeyError:
            raise ValueError(f"No checkpoint file for log dir {log_dir}") from None
        return lazy.fetch(topic_partition)
