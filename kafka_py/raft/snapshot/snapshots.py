"""Port of raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java (Kafka 3.0.0).

Where a replicated log keeps its snapshots and what they are called. A snapshot lives in the
partition's own directory beside the segments, named by its id: the end offset in 20 digits,
a dash, the epoch in 10 digits, and ``.checkpoint``, e.g.
``00000000000000000042-0000000003.checkpoint``. While it is written the file is a temporary
``<id>-<random>.checkpoint.part``; freezing renames it to the final name, so a final name
always holds a complete snapshot. Deleting first renames it to ``.checkpoint.deleted`` (the
log start may already have moved past it) and removes the file later, after readers that
still hold it are done.
"""
from __future__ import annotations

import logging
import os
import tempfile
from typing import Optional

from kafka_py.raft.offset_and_epoch import OffsetAndEpoch
from kafka_py.raft.snapshot.snapshot_path import SnapshotPath

logger = logging.getLogger(__name__)

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = f"{SUFFIX}.part"
DELETE_SUFFIX = f"{SUFFIX}.deleted"

OFFSET_WIDTH = 20
EPOCH_WIDTH = 10


def snapshot_dir(log_dir: str) -> str:
    return os.fspath(log_dir)


def filename_from_snapshot_id(snapshot_id: OffsetAndEpoch) -> str:
    return f"{snapshot_id.offset:0{OFFSET_WIDTH}d}-{snapshot_id.epoch:0{EPOCH_WIDTH}d}"


def move_rename(source: str, snapshot_id: OffsetAndEpoch) -> str:
    """The final name of a snapshot being written at ``source``."""
    return os.path.join(os.path.dirname(source), filename_from_snapshot_id(snapshot_id) + SUFFIX)


def delete_rename(source: str, snapshot_id: OffsetAndEpoch) -> str:
    return os.path.join(os.path.dirname(source), filename_from_snapshot_id(snapshot_id) + DELETE_SUFFIX)


def snapshot_path(log_dir: str, snapshot_id: OffsetAndEpoch) -> str:
    return os.path.join(snapshot_dir(log_dir), filename_from_snapshot_id(snapshot_id) + SUFFIX)


def create_temp_file(log_dir: str, snapshot_id: OffsetAndEpoch) -> str:
    """A new, empty ``.checkpoint.part`` file for ``snapshot_id``; its name is unique, so two
    writers of one id (a retried fetch) never share a file."""
    directory = snapshot_dir(log_dir)
    os.makedirs(directory, exist_ok=True)
    fd, path = tempfile.mkstemp(suffix=PARTIAL_SUFFIX, prefix=f"{filename_from_snapshot_id(snapshot_id)}-",
                                dir=directory)
    os.close(fd)
    return path


def parse(path: str) -> Optional[SnapshotPath]:
    """The snapshot a file name stands for, or None for any other file."""
    name = os.path.basename(os.fspath(path))
    if not name:
        return None
    partial = deleted = False
    if name.endswith(PARTIAL_SUFFIX):
        partial = True
    elif name.endswith(DELETE_SUFFIX):
        deleted = True
    elif not name.endswith(SUFFIX):
        return None
    offset_text = name[:OFFSET_WIDTH]
    epoch_text = name[OFFSET_WIDTH + 1:OFFSET_WIDTH + EPOCH_WIDTH + 1]
    # Kafka's parse throws on a malformed name; a stray file here is skipped instead, so a
    # file someone dropped into the directory cannot stop the log from opening.
    if (len(name) < OFFSET_WIDTH + EPOCH_WIDTH + 1 or name[OFFSET_WIDTH] != "-"
            or not offset_text.isdigit() or not epoch_text.isdigit()):
        logger.warning("Ignoring file %s: its name is not a snapshot id", path)
        return None
    return SnapshotPath(os.fspath(path), OffsetAndEpoch(int(offset_text), int(epoch_text)), partial, deleted)


def delete_if_exists(log_dir: str, snapshot_id: OffsetAndEpoch) -> bool:
    """Remove the snapshot's file, under its final or its ``.deleted`` name."""
    immutable_path = snapshot_path(log_dir, snapshot_id)
    deleted_path = delete_rename(immutable_path, snapshot_id)
    deleted = False
    try:
        for path in (immutable_path, deleted_path):
            try:
                os.remove(path)
                deleted = True
            except FileNotFoundError:
                pass
    except OSError:
        logger.exception("Error deleting snapshot files %s and %s", immutable_path, deleted_path)
        return False
    if deleted:
        logger.info("Deleted snapshot files for snapshot %s.", snapshot_id)
    else:
        logger.info("Did not delete snapshot files for snapshot %s since they did not exist.", snapshot_id)
    return deleted


def mark_for_delete(log_dir: str, snapshot_id: OffsetAndEpoch) -> None:
    """Rename the snapshot to ``.checkpoint.deleted``: from now on it is not a snapshot of the log,
    whether or not the file itself is removed before a crash."""
    immutable_path = snapshot_path(log_dir, snapshot_id)
    deleted_path = delete_rename(immutable_path, snapshot_id)
    os.replace(immutable_path, deleted_path)
    _fsync_dir(os.path.dirname(immutable_path))


def _fsync_dir(directory: str) -> None:
    # A rename is durable only once the directory entry is; Kafka's atomicMoveWithFallback
    # flushes the parent directory too.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
