"""Port of core/src/main/scala/kafka/server/checkpoints/CheckpointFile.scala.

A checkpoint is a small text file in Kafka's format::

    0          <- format version
    2          <- number of entries that follow
    <entry>    <- one entry per line, rendered by a CheckpointFileFormatter
    <entry>

Writes go to ``<file>.tmp``, are fsynced, renamed over the file and the
directory is fsynced, so a crash leaves either the old or the new checkpoint,
never a torn one. Read and write errors surface as KafkaStorageException (and
are reported to the LogDirFailureChannel when one is given), as in Kafka.
"""
from __future__ import annotations

import logging
import os
import re
import threading
from typing import Generic, Iterable, Protocol, TypeVar

from kafka_py.clients.common.errors import KafkaStorageException
from kafka_py.core.utils import crash_points
from kafka_py.core.utils.java_limits import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN
from kafka_py.clients.common.utils.utils import write_fully

logger = logging.getLogger(__name__)

T = TypeVar("T")


# Java's Integer.parseInt / Long.parseLong accept an optional sign and ASCII
# digits only; Python's int() would also take spaces, underscores and
# non-ASCII digits, which Kafka rejects as malformed.
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
# java.util.regex "\s": the six ASCII whitespace characters.
_JAVA_WHITESPACES = re.compile(r"[ \t\n\x0b\f\r]+")
# BufferedReader.readLine line terminators.
_LINE_TERMINATORS = re.compile(r"\r\n|\r|\n")


def parse_int32(text: str) -> int:
    """Parse like Java's Integer.parseInt; ValueError when Java would throw."""
    return _parse_java_integer(text, INT_MIN, INT_MAX)


def parse_int64(text: str) -> int:
    """Parse like Java's Long.parseLong; ValueError when Java would throw."""
    return _parse_java_integer(text, LONG_MIN, LONG_MAX)


def _parse_java_integer(text: str, low: int, high: int) -> int:
    if not _JAVA_INTEGER.match(text):
        raise ValueError(f"not an integer: {text!r}")
    value = int(text)
    if value < low or value > high:
        raise ValueError(f"integer out of range: {text!r}")
    return value


def split_whitespace(line: str) -> list[str]:
    """Split like Java's ``Pattern.compile("\\\\s+").split(line)``.

    Leading whitespace yields a leading empty field and trailing empty fields
    are dropped, so ``" a b"`` has three fields but ``"a b "`` has two; the
    formatters rely on the field count to spot malformed lines exactly as
    Kafka does.
    """
    parts = _JAVA_WHITESPACES.split(line)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


class CheckpointFileFormatter(Protocol[T]):
    def to_line(self, entry: T) -> str: ...

    def from_line(self, line: str) -> T | None:
        """The entry on ``line``, or None when the line is malformed.

        May also raise ValueError for unparsable numbers; both count as a
        malformed line.
        """
        ...


class LogDirFailureChannelLike(Protocol):
    def maybe_add_offline_log_dir(self, log_dir: str, msg: str, e: BaseException) -> None: ...


class CheckpointReadBuffer(Generic[T]):
    """Parses the text of a checkpoint file; errors are OSError like Kafka's IOException."""

    def __init__(self, location: str, text: str, version: int, formatter: CheckpointFileFormatter[T]):
        self._location = location
        self._text = text
        self._version = version
        self._formatter = formatter

    def _malformed(self, line_number: int, line: str | None) -> OSError:
        return OSError(
            f"Malformed line in checkpoint file ({self._location}) at line {line_number}: '{line}'"
        )

    def read(self) -> list[T]:
        lines = _LINE_TERMINATORS.split(self._text)
        # A terminator after the last line does not start another line.
        if lines and lines[-1] == "":
            lines.pop()
        if not lines:
            return []
        try:
            file_version = parse_int32(lines[0])
        except ValueError:
            raise self._malformed(1, lines[0]) from None
        if file_version != self._version:
            raise OSError(
                f"Unrecognized version of the checkpoint file ({self._location}): {file_version}"
                f" (expected {self._version})"
            )
        if len(lines) < 2:
            return []
        try:
            expected_size = parse_int32(lines[1])
        except ValueError:
            raise self._malformed(2, lines[1]) from None
        entries: list[T] = []
        for index in range(2, len(lines)):
            line = lines[index]
            try:
                entry = self._formatter.from_line(line)
            except ValueError:
                entry = None
            if entry is None:
                raise self._malformed(index + 1, line)
            entries.append(entry)
        if len(entries) != expected_size:
            raise OSError(
                f"Expected {expected_size} entries in checkpoint file ({self._location}), "
                f"but found only {len(entries)}"
            )
        return entries


def fsync_dir(path: str) -> None:
    """fsync a directory so a rename inside it survives a crash."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``path + ".tmp"``: write, fsync, rename, fsync dir."""
    tmp_path = path + ".tmp"
    fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_fully(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _remove_quietly(tmp_path)
        raise
    os.close(fd)
    if crash_points.armed():
        crash_points.crash_point("checkpoint", os.path.basename(path), "before_rename")
    try:
        os.replace(tmp_path, path)
    except BaseException:
        _remove_quietly(tmp_path)
        raise
    fsync_dir(os.path.dirname(path) or ".")


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


class CheckpointFile(Generic[T]):
    """A versioned text checkpoint of entries of type T, written atomically.

    One instance per file: the instance lock orders concurrent writers and
    keeps readers from seeing the temporary file being swapped in. As in
    Kafka, the file is created empty if missing, and an empty (or missing)
    file reads as no entries.

    ``create_missing=False`` leaves a missing file missing until the first write,
    whose temporary file then becomes it: one file created instead of two, and none
    freed by the rename. The leader-epoch-checkpoint of every partition created is such
    a file. An ext4 inode allocation skips every inode of its group freed in the last
    seconds (minutes while their table block is dirty), one block lookup each, so
    replacing a freshly created empty file in each of thousands of new partitions made
    each next file creation slower than the last.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        version: int,
        formatter: CheckpointFileFormatter[T],
        log_dir_failure_channel: LogDirFailureChannelLike | None = None,
        log_dir: str | None = None,
        create_missing: bool = True,
    ):
        self.file = os.fspath(path)
        self._path = os.path.abspath(self.file)
        self._temp_path = self._path + ".tmp"
        self.version = version
        self._formatter = formatter
        self._log_dir_failure_channel = log_dir_failure_channel
        self._log_dir = log_dir if log_dir is not None else os.path.dirname(self._path)
        self._lock = threading.Lock()
        # Created empty here and not written since: a read needs no file (a partition created
        # with its log reads its new leader-epoch-checkpoint at once).
        self._created_empty = False
        if not create_missing:
            return
        try:
            # O_EXCL: create only when absent, never truncate an existing checkpoint.
            os.close(os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            self._created_empty = True
        except FileExistsError:
            pass

    def encode(self, entries: Iterable[T]) -> bytes:
        """The file's bytes for ``entries``."""
        entries = list(entries)
        lines = [str(self.version), str(len(entries))]
        lines.extend(self._formatter.to_line(entry) for entry in entries)
        return ("\n".join(lines) + "\n").encode("utf-8")

    def write(self, entries: Iterable[T]) -> None:
        self.write_bytes(self.encode(entries))

    def write_bytes(self, data: bytes) -> None:
        """Write ``encode``d entries atomically and durably."""
        with self._lock:
            self._created_empty = False
            try:
                atomic_write_bytes(self._path, data)
            except OSError as e:
                msg = f"Error while writing to checkpoint file {self._path}"
                self._fail(msg, e)
                raise KafkaStorageException(f"{msg}: {e}") from e

    def read(self) -> list[T]:
        with self._lock:
            if self._created_empty:
                return []
            try:
                try:
                    with open(self._path, "rb") as f:
                        raw = f.read()
                except FileNotFoundError:
                    return []
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise OSError(f"Checkpoint file ({self._path}) is not valid UTF-8: {e}") from e
                return CheckpointReadBuffer(self._path, text, self.version, self._formatter).read()
            except OSError as e:
                msg = f"Error while reading checkpoint file {self._path}"
                self._fail(msg, e)
                raise KafkaStorageException(f"{msg}: {e}") from e

    def _fail(self, msg: str, e: BaseException) -> None:
        if self._log_dir_failure_channel is not None:
            self._log_dir_failure_channel.maybe_add_offline_log_dir(self._log_dir, msg, e)
        else:
            logger.error("%s", msg, exc_info=e)

    def __repr__(self) -> str:
        return f"CheckpointFile({self._path!r}, version={self.version})"


# Below this many files, write_checkpoints_together writes each on its own (fsync per file).
SYNCFS_MIN_FILES = 32
_libc = None


def _syncfs(directory: str) -> None:
    """syncfs(2) of the file system holding ``directory``: every dirty page of that file
    system is written and the call returns once it is durable."""
    global _libc
    if _libc is None:
        import ctypes
        import ctypes.util

        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        if _libc.syncfs(fd) != 0:
            import ctypes

            code = ctypes.get_errno()
            raise OSError(code, f"syncfs of {directory} failed: {os.strerror(code)}")
    finally:
        os.close(fd)


def write_checkpoints_together(writes: list[tuple[CheckpointFile, bytes]]) -> None:
    """Write many checkpoint files, each atomically, and make them durable together.

    Each file on its own costs two fsyncs (the file, then its directory after the rename):
    for the leader epoch checkpoints of thousands of partitions becoming leaders at once
    that is most of the time a LeaderAndIsr takes. Together: every temporary file is
    written, one syncfs per file system makes them durable, all are renamed over their
    files, and a second syncfs makes the renames durable. A crash at any point leaves each
    file whole, old or new, as the one-by-one write does. The price is that syncfs also
    writes out whatever else is dirty on those file systems, which is why small batches
    (fewer than SYNCFS_MIN_FILES) are written one by one, as is everything should a step of
    the batch fail (so that errors reach each file's log dir failure channel).
    """
    if len(writes) < SYNCFS_MIN_FILES or not hasattr(os, "O_DIRECTORY"):
        for checkpoint, data in writes:
            checkpoint.write_bytes(data)
        return
    # Each file's lock, in list order, for the whole batch: no other writer of these files
    # can slip in between its temporary file and its rename. Other threads take one at a time.
    locks = [checkpoint._lock for checkpoint, _ in writes]
    acquired = []
    written: list[str] = []
    try:
        for lock in locks:
            lock.acquire()
            acquired.append(lock)
        try:
            file_systems: dict[int, str] = {}
            for checkpoint, data in writes:
                fd = os.open(checkpoint._temp_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                written.append(checkpoint._temp_path)
                try:
                    write_fully(fd, data)
                    file_systems.setdefault(os.fstat(fd).st_dev, os.path.dirname(checkpoint._path))
                finally:
                    os.close(fd)
            for directory in file_systems.values():
                _syncfs(directory)
            for checkpoint, _ in writes:
                checkpoint._created_empty = False
                os.replace(checkpoint._temp_path, checkpoint._path)
            written.clear()
            for directory in file_systems.values():
                _syncfs(directory)
            return
        except OSError as e:
            logger.warning("Writing %d checkpoint files together failed (%s); writing them one by one", len(writes), e)
            for path in written:
                _remove_quietly(path)
    finally:
        for lock in acquired:
            lock.release()
    first_error = None
    for checkpoint, data in writes:
        try:
            checkpoint.write_bytes(data)
        except KafkaStorageException as e:  # reported to its log dir; the others are still written
            first_error = first_error or e
    if first_error is not None:
        raise first_error
