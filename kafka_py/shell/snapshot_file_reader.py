"""Port of shell/src/main/java/org/apache/kafka/shell/SnapshotFileReader.java.

Reads metadata record batches from files and hands them to the MetadataNodeManager's
listener: each data batch's records (MetadataRecordSerde) with the batch's last offset,
and each LEADER_CHANGE control record as the new leader with the batch's epoch.

Kafka 2.8.2's ``--snapshot`` takes one file of record batches, a segment of the metadata
log or a snapshot. Here the path may be:

* a segment, ``@metadata-0/00000000000000000000.log``;
* a snapshot, ``<end offset>-<epoch>.checkpoint`` (kafka_py.raft.snapshot's files, Kafka 3.0's
  format: record batches, as in a segment, between a header and a footer control batch;
  those carry 3.0's control type ids, which in 2.8.2's numbering a segment uses for
  LEADER_CHANGE, so a snapshot's control batches are skipped rather than read as leaders);
* the metadata log's directory ``@metadata-0`` (or the log dir holding it): its newest
  snapshot, if it has one, then every segment in offset order, from the snapshot's end
  offset on;
* any other file, read as record batches, as Kafka reads whatever it is given.

Differences from Kafka, on purpose: the reading is done on the caller's thread (the shell
reads the whole log before its first command, so Kafka's event queue has nothing to
order); a file that ends in a torn batch (a crash mid-append) or in bytes that are not a
batch loads up to there with a warning instead of failing the shell; a zero-filled tail (a
preallocated segment) is silently the end. A record that does not decode is logged and
skipped, as in Kafka.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Iterator

from kafka_py.metadata.metadata_record_serde import MetadataRecordSerde
from kafka_py.raft.control_record_utils import LeaderChangeMessage
from kafka_py.clients.common.record.control_record_type import ControlRecordType
from kafka_py.clients.common.record.file_records import FileRecords
from kafka_py.shell.metadata_node_manager import LogListener

logger = logging.getLogger(__name__)

METADATA_PARTITION_DIR = "@metadata-0"
_SEGMENT = re.compile(r"^(\d{20})\.log$")
_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


class SnapshotReaderError(Exception):
    """A path the reader cannot use; the shell prints it as ``Error: ...``."""


def metadata_files(path: str | os.PathLike[str]) -> list[tuple[Path, int]]:
    """The files to read for ``path``, each with the first offset to take from it (records
    below it are already in the snapshot read before)."""
    p = Path(path)
    if not p.exists():
        raise SnapshotReaderError(f"{p}: no such file or directory")
    if p.is_file():
        return [(p, 0)]
    if not p.is_dir():
        raise SnapshotReaderError(f"{p}: not a file or directory")
    if not any(_SEGMENT.match(n) or _SNAPSHOT.match(n) for n in os.listdir(p)) \
            and (p / METADATA_PARTITION_DIR).is_dir():
        p = p / METADATA_PARTITION_DIR  # the log dir that holds the metadata partition
    names = sorted(os.listdir(p))
    segments = sorted((int(m.group(1)), n) for n in names if (m := _SEGMENT.match(n)))
    snapshots = sorted((int(m.group(1)), int(m.group(2)), n) for n in names if (m := _SNAPSHOT.match(n)))
    if not segments and not snapshots:
        raise SnapshotReaderError(f"{p} holds no metadata log segment (*.log) or snapshot (*.checkpoint)")
    files: list[tuple[Path, int]] = []
    start = 0
    if snapshots:
        end_offset, _epoch, name = snapshots[-1]
        files.append((p / name, 0))
        start = end_offset
    # A segment whose next segment starts at or below ``start`` holds nothing past the snapshot.
    for i, (base, name) in enumerate(segments):
        next_base = segments[i + 1][0] if i + 1 < len(segments) else None
        if next_base is not None and next_base <= start:
            continue
        files.append((p / name, start))
    return files


class SnapshotFileReader:
    """Reads the metadata files of ``snapshot_path`` into ``listener``."""

    def __init__(self, snapshot_path: str, listener: LogListener) -> None:
        self.snapshot_path = snapshot_path
        self.listener = listener
        self.serde = MetadataRecordSerde()
        self._files = metadata_files(snapshot_path)
        self.caught_up = False

    def files(self) -> list[Path]:
        return [f for f, _ in self._files]

    def startup(self) -> None:
        """Read everything (Kafka's startup plus the batches its queue then handles)."""
        for file, start_offset in self._files:
            self._read_file(file, start_offset)
        self.caught_up = True
        self.listener.begin_shutdown()

    def _read_file(self, file: Path, start_offset: int) -> None:
        try:
            file_records = FileRecords.open(file, file_already_exists=True, mutable=False)
        except OSError as e:
            raise SnapshotReaderError(f"{file}: {e.strerror or e}") from None
        try:
            for batch in self._batches(file, file_records):
                if batch.last_offset < start_offset:
                    continue
                if batch.is_control_batch:
                    if _SNAPSHOT.match(file.name):
                        continue  # the snapshot's header and footer: nothing for the tree
                    self.handle_control_batch(batch)
                else:
                    self.handle_metadata_batch(batch, start_offset)
        finally:
            file_records.close_handlers()

    def _batches(self, file: Path, file_records: FileRecords) -> Iterator:
        position = 0
        iterator = file_records.batches()
        while True:
            try:
                batch = next(iterator, None)
                if batch is None:
                    break
                loaded = batch.load()
            except Exception as e:
                self._warn_stopped(file, file_records, position, f"{type(e).__name__}: {e}")
                return
            yield loaded
            position += loaded.size_in_bytes
        trailing = file_records.size_in_bytes() - position
        if trailing > 0 and not file_records.is_zero_filled_from(position):
            self._warn_stopped(file, file_records, position,
                               f"{trailing} bytes there do not form a complete record batch")

    @staticmethod
    def _warn_stopped(file: Path, file_records: FileRecords, position: int, why: str) -> None:
        if file_records.is_zero_filled_from(position):
            return
        logger.warning("Stopped reading %s at position %d: %s; the records before it are loaded",
                       file, position, why)

    def handle_control_batch(self, batch) -> None:
        for record in batch.records():
            try:
                record_type = ControlRecordType.parse(record.key)
                if record_type is ControlRecordType.LEADER_CHANGE:
                    message = LeaderChangeMessage.deserialize(bytes(record.value))
                    self.listener.handle_new_leader(message.leader_id, batch.partition_leader_epoch)
                else:
                    logger.error("Ignoring control record with type %s at offset %d",
                                 record_type.name, record.offset)
            except Exception as e:
                logger.error("unable to read control record at offset %d: %s", record.offset, e)

    def handle_metadata_batch(self, batch, start_offset: int = 0) -> None:
        messages = []
        for record in batch.records():
            if record.offset < start_offset:
                continue
            try:
                if record.value is None:
                    raise ValueError("the record has no value")
                messages.append(self.serde.read(record.value).message)
            except Exception as e:
                logger.error("unable to read metadata record at offset %d: %s", record.offset, e)
        self.listener.handle_commits(batch.last_offset, messages)

    def close(self) -> None:
        pass

